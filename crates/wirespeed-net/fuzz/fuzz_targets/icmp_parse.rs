#![no_main]
//! Every byte string must parse to a message or an error, never a panic.

use libfuzzer_sys::fuzz_target;
use wirespeed_net::icmp::{Family, ipv4_header_len, parse, parse_errqueue_payload};

fuzz_target!(|data: &[u8]| {
    let _ = parse(Family::V4, data);
    let _ = parse(Family::V6, data);
    if let Ok(ihl) = ipv4_header_len(data) {
        let _ = parse(Family::V4, &data[ihl..]);
    }
    let _ = parse_errqueue_payload(data);
});
