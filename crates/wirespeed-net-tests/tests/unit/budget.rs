use proptest::prelude::*;
use wirespeed_net::budget::*;
use wirespeed_net::spec::TestSpec;

const MIB: u64 = 1024 * 1024;

#[test]
fn eight_64_mib_streams_fit_a_gibibyte_and_thirty_two_do_not() {
    let spec = TestSpec {
        streams: 8,
        length_bytes: 64 << 20,
        ..TestSpec::default()
    };
    let eight = streams_cost(&spec, 8);
    assert!(eight > 8 * 64 * MIB && eight < 520 * MIB, "{eight}");
    let b = Budget::new(1024 * MIB);
    let held = b.reserve(eight).unwrap();
    assert_eq!(b.used(), eight);
    // A second such session does not fit beside the first.
    let e = b.reserve(eight).unwrap_err();
    assert_eq!(e.free, 1024 * MIB - eight);
    assert!(e.refusal("this test").contains("--max-memory"));
    drop(held);
    assert_eq!(b.used(), 0);
    assert!(b.reserve(streams_cost(&spec, 32)).is_err());
}

#[test]
fn socket_buffers_count_twice_as_the_kernel_charges_them() {
    let plain = TestSpec::default();
    let windowed = TestSpec {
        window_bytes: Some(4 * MIB),
        ..TestSpec::default()
    };
    assert_eq!(
        streams_cost(&windowed, 1) - streams_cost(&plain, 1),
        2 * 2 * 4 * MIB
    );
    assert_eq!(streams_cost(&plain, 0), 0);
}

proptest! {
    #[test]
    fn reservations_never_exceed_the_limit_and_all_come_back(
        limit in 0u64..1_000_000,
        asks in proptest::collection::vec(0u64..400_000, 0..20),
    ) {
        let b = Budget::new(limit);
        let mut held = Vec::new();
        for a in asks {
            if let Ok(r) = b.reserve(a) {
                held.push(r);
            }
            prop_assert!(b.used() <= limit);
            prop_assert_eq!(b.used(), held.iter().map(Reservation::bytes).sum::<u64>());
        }
        drop(held);
        prop_assert_eq!(b.used(), 0);
    }
}
