//! Fuzz target: any bytes into the UDP test, echo and raw frame readers; the checks are
//! [`wirespeed_net::fuzzing::datagrams`], which CI replays over the committed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wirespeed_net::fuzzing::datagrams(data));
