//! iperf3's JSON, both ways: `json` writes a `tcp`/`udp` result in the layout `iperf3 -J`
//! prints (`--json-format iperf3`); `html` reads such a document back for `wirespeed report`.
//! And its wire protocol: `peer` runs `tcp`/`udp` against an iperf3 server (`--iperf3`).

#[doc(hidden)]
pub mod html;
#[doc(hidden)]
pub mod json;
#[doc(hidden)]
pub mod peer;
