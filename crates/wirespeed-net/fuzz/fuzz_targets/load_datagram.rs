//! Fuzz target: any bytes into the load test's counting sink (issue 13, finding 1); the checks
//! are [`wirespeed_net::fuzzing::load_datagram`], which CI replays over the committed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wirespeed_net::fuzzing::load_datagram(data));
