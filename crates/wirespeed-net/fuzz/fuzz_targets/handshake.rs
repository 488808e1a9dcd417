//! Fuzz target: the keyed handshake's proofs and the sealed frames after it, as an attacker
//! without the key sends them (see `wirespeed_net::fuzzing::handshake`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wirespeed_net::fuzzing::handshake(data));
