//! The unit tests of `wirespeed_sim::time`.

use wirespeed_sim::time::*;

#[test]
fn bit_times_are_exact() {
    assert_eq!(SimSpan::from_seconds(1.0 / 10e6).ps(), 100_000);
    assert_eq!(SimSpan::from_ns(96 * 100).ps(), 9_600_000);
    let t = SimTime::ZERO + SimSpan::from_us(51) + SimSpan::from_ns(200);
    assert_eq!(t.since(SimTime::ZERO), SimSpan::from_ns(51_200));
    assert_eq!(SimTime::ZERO.since(t), SimSpan::ZERO);
}
