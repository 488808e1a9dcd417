//! wirespeed-net's integration tests, compiled and linked as one test binary: each file below
//! was a binary of its own, linked at compile time and run one after another by cargo; as
//! modules of one binary they link once and run side by side, within libtest's threads.
//!
//! The tests that judge a rate or a loss on loopback take [`rates::judging`] (one at a time);
//! every other test that opens a socket takes [`rates::loading`] (side by side with each other,
//! never beside a judgement); rates.rs says why.

mod exclusive;
mod hostile_peers;
mod iperf3;
mod layers;
mod live_counters;
mod load;
mod loopback;
mod probe_endpoint;
mod prometheus;
mod rates;
mod rr;
