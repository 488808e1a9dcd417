use proptest::prelude::*;
use wirespeed_model::csma_theory::*;

const E: f64 = std::f64::consts::E;

#[test]
fn seed_000_minimum_packets_approach_one_over_e() {
    // 64-byte packets last exactly one 512-bit slot.
    let e = metcalfe_boggs_efficiency(512.0, 512.0, 1e6);
    assert!((e - 1.0 / E).abs() < 1e-5, "{e}");
    assert!((acquisition_probability(1e6) - 1.0 / E).abs() < 1e-5);
    assert!((mean_contention_slots(1e6) - (E - 1.0)).abs() < 1e-4);
}

#[test]
fn seed_000_large_packets_stay_near_full_even_at_q_256() {
    // §2.4.1: "The throughput remains near 100% for large packets (512 bytes in this case),
    // even with Q as large as 256".
    let e = metcalfe_boggs_efficiency(512.0 * 8.0, 512.0, 256.0);
    assert!(e > 0.8, "{e}");
    let e = metcalfe_boggs_efficiency(1536.0 * 8.0, 512.0, 256.0);
    assert!(e > 0.93, "{e}");
}

#[test]
fn one_station_never_contends() {
    assert_eq!(acquisition_probability(1.0), 1.0);
    assert_eq!(metcalfe_boggs_efficiency(512.0, 512.0, 1.0), 1.0);
    // Two stations: A = 1/2, W = 1.
    assert!((mean_contention_slots(2.0) - 1.0).abs() < 1e-12);
}

proptest! {
    #[test]
    fn efficiency_falls_with_q_and_rises_with_packet_length(
        p in 64.0f64..100_000.0, q in 1.0f64..1000.0, dq in 0.5f64..100.0, dp in 1.0f64..1000.0
    ) {
        let e = metcalfe_boggs_efficiency(p, 512.0, q);
        prop_assert!(e > 0.0 && e <= 1.0);
        prop_assert!(metcalfe_boggs_efficiency(p, 512.0, q + dq) <= e + 1e-12);
        prop_assert!(metcalfe_boggs_efficiency(p + dp, 512.0, q) >= e - 1e-12);
        // Never below the infinite-population limit.
        prop_assert!(e >= p / (p + (E - 1.0) * 512.0) - 1e-9);
    }
}
