//! Fuzz target: any bytes into iperf3's control decoders (cookie, state codes, parameters and
//! results JSON behind their length prefix, UDP headers); the promises are in
//! `wirespeed_net::fuzzing::iperf3_control`, which the committed corpus replays in `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wirespeed_net::fuzzing::iperf3_control(data));
