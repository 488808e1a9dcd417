//! The unit tests of `wirespeed_sim::slotted`.

use wirespeed_model::csma_theory::metcalfe_boggs_efficiency;
use wirespeed_sim::slotted::*;

#[test]
fn seed_000_slotted_simulation_agrees_with_metcalfe_boggs() {
    // Tolerance: 1.5% of the efficiency with 100,000 packets (the binomial spread of the
    // wasted-slot count is well under 1%).
    for (q, bits) in [(2, 512), (5, 512), (24, 512), (256, 512), (24, 12_288)] {
        let sim = run_slotted(q, bits, 512, 100_000, 11);
        let theory = metcalfe_boggs_efficiency(bits as f64, 512.0, f64::from(q));
        assert!(
            (sim.efficiency / theory - 1.0).abs() < 0.015,
            "Q={q} P={bits}: simulated {} vs theory {theory}",
            sim.efficiency
        );
    }
    // And for minimum packets and a large Q, that is 1/e.
    let sim = run_slotted(256, 512, 512, 100_000, 5);
    assert!(
        (sim.efficiency - (-1f64).exp()).abs() < 0.01,
        "{}",
        sim.efficiency
    );
}
