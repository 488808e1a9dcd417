//! Fuzz target: any bytes into the metrics listener's request head reader (see
//! `wirespeed_net::fuzzing::http_head` for what it must hold to).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wirespeed_net::fuzzing::http_head(data));
