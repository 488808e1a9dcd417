use std::io::{self};
use wirespeed_net::pmqos::*;

#[test]
fn a_hold_is_taken_as_root_and_refused_with_the_reason_otherwise() {
    match hold(0) {
        Ok(h) => assert_eq!(h.max_latency_us, 0),
        Err(e) => assert!(
            matches!(
                e.kind(),
                io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound
            ),
            "{e}"
        ),
    }
}
