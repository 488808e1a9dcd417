//! iperf3's JSON, both ways: `json` writes a `tcp`/`udp` result in the layout `iperf3 -J`
//! prints (`--json-format iperf3`); `html` reads such a document back for `wirespeed report`.

pub(crate) mod html;
pub(crate) mod json;
