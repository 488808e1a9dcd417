use proptest::prelude::*;
use wirespeed_model::sockbuf::*;

const MAX: u64 = 4 << 20;

#[test]
fn the_measured_table() {
    for (req, snd, rcv) in [
        (1, 4608, 2304),
        (1000, 4608, 2304),
        (1460, 4608, 2920),
        (2048, 4608, 4096),
        (4096, 8192, 8192),
        (65536, 131072, 131072),
        (8 << 20, 8 << 20, 8 << 20),
    ] {
        assert_eq!(
            linux_granted(BufferKind::Send, req, MAX, false),
            snd,
            "send {req}"
        );
        assert_eq!(
            linux_granted(BufferKind::Receive, req, MAX, false),
            rcv,
            "receive {req}"
        );
    }
    assert_eq!(
        linux_granted(BufferKind::Send, 8 << 20, MAX, true),
        16 << 20
    );
    assert_eq!(clamped_by_max(8 << 20, MAX, false), Some(MAX));
}

proptest! {
    #[test]
    fn granted_is_monotone_and_at_least_the_floor(a in 0u64..1 << 30, b in 0u64..1 << 30) {
        let (lo, hi) = (a.min(b), a.max(b));
        for kind in [BufferKind::Send, BufferKind::Receive] {
            let (g_lo, g_hi) = (linux_granted(kind, lo, MAX, false), linux_granted(kind, hi, MAX, false));
            prop_assert!(g_lo <= g_hi);
            prop_assert!(g_lo >= kind.floor());
            prop_assert!(g_hi <= (2 * MAX).max(kind.floor()));
        }
    }
}
