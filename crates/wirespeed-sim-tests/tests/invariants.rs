//! Invariants of any simulated shared Ethernet, over random scenarios.

use proptest::prelude::*;
use wirespeed_sim::{Cable, HostModel, LengthMix, Placement, Scenario, run};

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_channel_is_never_oversubscribed_and_a_legal_cable_has_no_late_collisions(
        hosts in 1usize..12,
        bytes in 64u64..1600,
        long in 0u32..3,
        length_m in 0.0f64..2500.0,
        clusters in 1usize..5,
        latency_us in 0u64..200,
        seed in any::<u64>(),
    ) {
        let lengths = if long == 0 {
            LengthMix::Fixed { bytes }
        } else {
            LengthMix::Ratio { short: 64, long: bytes, short_count: 3, long_count: long }
        };
        let s = Scenario {
            cable: Cable {
                length_m,
                placement: Placement::Clusters { clusters },
                ..Cable::seed_long_net()
            },
            host: HostModel {
                interrupt_min_ns: latency_us * 1000,
                interrupt_max_ns: latency_us * 1000 + 5_000,
                ..HostModel::TITAN
            },
            lengths,
            allow_oversize: true,
            warmup_ns: 5_000_000,
            measure_ns: 30_000_000,
            seed,
            ..Scenario::seed_long_net(hosts, bytes)
        };
        let r = run(&s).unwrap();
        // Packets finishing in the window can have started just before it: one packet of
        // slack per host.
        let slack = hosts as f64 * Scenario::charged_bits(1600) as f64 / 0.03;
        prop_assert!(r.bits_per_second <= 10e6 + slack, "{}", r.bits_per_second);
        prop_assert!(r.packets_per_second > 0.0);
        // 2500 m at 0.77c is 10.8 us each way: within the 51.2 us slot.
        prop_assert_eq!(r.late_collisions, 0);
        if hosts == 1 {
            prop_assert_eq!(r.collisions, 0);
        }
        let j = r.jain_fairness;
        prop_assert!(j <= 1.0 + 1e-9 && j >= 1.0 / hosts as f64 - 1e-9, "{}", j);
        prop_assert!(r.delay_mean_seconds >= (64.0 + 12.0) * 8.0 * 1e-7 - 1e-12);
    }
}
