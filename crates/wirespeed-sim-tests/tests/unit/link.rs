//! The unit tests of `wirespeed_sim::link`.

use wirespeed_sim::SimError;
use wirespeed_sim::link::*;
use wirespeed_sim::mac::MacDuplex;

fn link(sender: MacDuplex, receiver: MacDuplex) -> LinkStats {
    let s = LinkScenario {
        measure_ns: 2_000_000_000,
        ..LinkScenario::new(sender, receiver)
    };
    run_link(&s).unwrap()
}

#[test]
fn a_timeout_shorter_than_the_quickest_ack_is_refused() {
    let base = LinkScenario::new(MacDuplex::Half, MacDuplex::Full);
    let floor = base.shortest_round_trip_ns();
    // 10 Mbit/s: 1514 + 64 + 2 x 8 bytes and two gaps are ~1.29 ms of wire time, plus the
    // 100 us ack delay and ~1 us of cable.
    assert!((1_300_000..1_500_000).contains(&floor), "{floor}");
    let short = LinkScenario {
        rto_ns: 1,
        ..base.clone()
    };
    assert!(matches!(short.validate(), Err(SimError::Rto { .. })));
    let at_floor = LinkScenario {
        rto_ns: floor,
        ..base
    };
    assert!(at_floor.validate().is_ok());
}

#[test]
fn matched_duplex_carries_the_line_rate_without_errors() {
    for d in [MacDuplex::Full, MacDuplex::Half] {
        let r = link(d, d);
        assert!(r.goodput_fraction > 0.7, "{d:?}: {r:?}");
        assert_eq!(r.sender.late_collisions + r.receiver.late_collisions, 0);
        assert_eq!(r.receiver.fcs_errors + r.receiver.runts, 0);
        assert_eq!(r.sender.fcs_errors + r.sender.runts, 0);
    }
    // Full duplex: no collisions at all.
    let r = link(MacDuplex::Full, MacDuplex::Full);
    assert_eq!(r.sender.collisions + r.receiver.collisions, 0);
}

#[test]
fn seed_003_mismatch_late_collisions_on_the_half_end_fcs_errors_on_the_full_end() {
    // §8.4, Table 7: data from the half-duplex end to the full-duplex end: "every
    // collision recorded was a late collision", the full end counts CRC errors, and the
    // transfer is many times slower than with matched duplex.
    let matched = link(MacDuplex::Half, MacDuplex::Half);
    let r = link(MacDuplex::Half, MacDuplex::Full);
    assert!(r.sender.late_collisions > 0, "{r:?}");
    assert!(
        r.sender.late_collisions as f64 >= 0.9 * r.sender.collisions as f64,
        "{r:?}"
    );
    assert!(r.receiver.fcs_errors > 0, "{r:?}");
    assert_eq!(r.receiver.collisions, 0, "the full end ignores collisions");
    assert!(r.goodput_fraction < 0.5 * matched.goodput_fraction, "{r:?}");
    // The other way, data from the full end: the half end loses frames it was receiving
    // when it started an acknowledgement.
    let back = link(MacDuplex::Full, MacDuplex::Half);
    assert!(back.receiver.lost_to_collision > 0, "{back:?}");
    assert!(back.sender.runts > 0, "{back:?}");
    assert!(back.goodput_fraction < matched.goodput_fraction, "{back:?}");
}
