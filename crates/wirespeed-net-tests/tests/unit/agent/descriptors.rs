use proptest::prelude::*;
use wirespeed_net::agent::descriptors::*;

/// The default limit of 1,024 leaves the default `--max-pending` alone; issue 32's 256
/// leaves 14 handshakes beside 64 sessions; a limit below what the sessions need leaves
/// the least.
#[test]
fn the_limits_of_issue_32() {
    assert_eq!(handshake_cap(256, 64, Some(1024), 4), 256);
    assert_eq!(handshake_cap(256, 64, None, 4), 256);
    // 256 - 4 - 192 - 32 = 28 descriptors, 14 handshakes.
    assert_eq!(handshake_cap(256, 64, Some(256), 4), 14);
    assert_eq!(handshake_cap(256, 64, Some(32), 4), LEAST_HANDSHAKES);
    assert_eq!(handshake_cap(1, 64, Some(32), 4), 1);
    assert_eq!(short_of_headroom(10, Some(256)), 0);
    assert_eq!(short_of_headroom(223, Some(256)), 0);
    assert_eq!(short_of_headroom(230, Some(256)), 7);
    assert_eq!(short_of_headroom(300, Some(256)), HEADROOM);
    assert_eq!(short_of_headroom(300, None), 0);
}

proptest! {
    /// Whatever the limit: the cap never exceeds `--max-pending`, and when it is above
    /// the least, every session idle and every handshake open still leave the headroom.
    #[test]
    fn the_cap_leaves_the_headroom(
        max_pending in 1usize..4096,
        max_sessions in 1usize..1024,
        limit in 8u64..100_000,
        open in 3u64..64,
    ) {
        let cap = handshake_cap(max_pending, max_sessions, Some(limit), open);
        prop_assert!(cap <= max_pending);
        prop_assert!(cap >= LEAST_HANDSHAKES.min(max_pending));
        if cap > LEAST_HANDSHAKES {
            let held = open + max_sessions as u64 * PER_IDLE_SESSION + cap as u64 * PER_HANDSHAKE;
            prop_assert!(held + HEADROOM <= limit, "{held} + {HEADROOM} > {limit}");
        }
    }
}
