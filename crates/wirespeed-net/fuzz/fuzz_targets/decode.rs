//! Fuzz target: any bytes into the control-message decoder. It must never panic, never claim
//! more bytes than it was given, and whatever it accepts must encode and decode to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_net::control::{decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((message, used))) = decode(data) {
        assert!(used <= data.len());
        let again = encode(&message);
        let (back, n) = decode(&again).expect("re-encoded").expect("complete");
        assert_eq!(n, again.len());
        assert_eq!(back, message);
    }
});
