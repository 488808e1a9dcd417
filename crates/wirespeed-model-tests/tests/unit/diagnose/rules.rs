use wirespeed_model::autoneg::Abilities;
use wirespeed_model::autoneg::Duplex;
use wirespeed_model::diagnose::rules::*;
use wirespeed_model::diagnose::{Confidence, Counters, Diagnosis, Evidence, FindingKind, Severity};
use wirespeed_model::diagnose::{InterfaceKind, LinkSettings};

fn nic(duplex: Duplex, counters: Counters) -> Evidence {
    Evidence {
        name: "eth0".into(),
        kind: InterfaceKind::Physical("iprb".into()),
        link: LinkSettings {
            carrier: Some(true),
            speed_mbps: Some(10),
            duplex: Some(duplex),
            autoneg: Some(false),
            source: "test".into(),
            ..LinkSettings::default()
        },
        first: Counters::default(),
        second: counters,
        interval_seconds: 1.0,
    }
}

fn kinds(d: &Diagnosis) -> Vec<FindingKind> {
    d.findings.iter().map(|f| f.kind).collect()
}

fn steady(mut ev: Evidence) -> Evidence {
    // The counters are totals from before the sampling interval: nothing grows during it.
    ev.first = ev.second;
    ev
}

#[test]
fn seed_003_table5_clean_full_duplex_is_healthy() {
    // Table 5 test 1, DUT01: 37,658 in, 4,733 out, no collisions, no CRC errors, no runts.
    let c = Counters {
        rx_packets: 37_658,
        tx_packets: 4_733,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Full, c)));
    assert!(d.healthy, "{d:?}");
    assert_eq!(
        kinds(&d),
        [FindingKind::ForcedFullDuplex],
        "only the forced-mode risk"
    );
}

#[test]
fn seed_003_table6_clean_half_duplex_is_healthy() {
    // Table 6 test 1: 12,967 collisions, none late, no CRC errors, no runts.
    let c = Counters {
        rx_packets: 37_717,
        tx_packets: 5_581,
        collisions: 12_967,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Half, c)));
    assert!(d.healthy, "{d:?}");
    assert_eq!(kinds(&d), [FindingKind::HalfDuplex]);
    assert_eq!(d.findings[0].severity, Severity::Info);
}

#[test]
fn seed_003_table7_mismatch_half_side() {
    // Table 7 test 1, DUT01 (10-HALF): 6,087 collisions, 6,088 late collisions.
    let c = Counters {
        rx_packets: 24_987,
        tx_packets: 49_888,
        collisions: 6_087,
        tx_window_errors: 6_088,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Half, c)));
    assert!(!d.healthy);
    let f = &d.findings[0];
    assert_eq!(f.kind, FindingKind::DuplexMismatchHalfSide);
    assert_eq!(f.confidence, Confidence::High);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("6088 late collisions (tx_window_errors) of 6087")),
        "{f:?}"
    );
    assert!(f.cause.contains("Table 7"));
}

#[test]
fn seed_003_table7_mismatch_full_side() {
    // Table 7 test 1, DUT02 (10-FULL): no collisions, 3,022 CRC errors, 1 short packet.
    let c = Counters {
        rx_packets: 43_830,
        tx_packets: 31_106,
        fcs_errors: 3_022,
        length_errors: 1,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Full, c)));
    let f = &d.findings[0];
    assert_eq!(f.kind, FindingKind::DuplexMismatchFullSide);
    assert_eq!(f.confidence, Confidence::High);
    // Test 2, DUT02: only 6 CRC errors but 40 short packets.
    let c = Counters {
        fcs_errors: 6,
        length_errors: 40,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Full, c)));
    assert_eq!(d.findings[0].kind, FindingKind::DuplexMismatchFullSide);
}

#[test]
fn seed_003_table7_test2_half_side_looks_like_plain_half_duplex() {
    // Table 7 test 2, DUT01 (half, receiving the bulk): 3,742 collisions, none late. Its
    // counters alone cannot tell the mismatch; only the full-duplex end's can.
    let c = Counters {
        collisions: 3_742,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Half, c)));
    assert_eq!(kinds(&d), [FindingKind::HalfDuplex]);
}

#[test]
fn seed_003_table9_test6_half_duplex_fragments_are_normal() {
    // 100-HALF both ends: "Align: 559 Runts: 899 Late Collisions: 0".
    let c = Counters {
        alignment_errors: 559,
        length_errors: 899,
        collisions: 1_000,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Half, c)));
    assert!(d.healthy);
    assert_eq!(kinds(&d), [FindingKind::HalfDuplex]);
}

#[test]
fn collisions_on_full_duplex_are_a_fault() {
    let c = Counters {
        collisions: 5,
        ..Counters::default()
    };
    let d = diagnose(&steady(nic(Duplex::Full, c)));
    assert_eq!(d.findings[0].kind, FindingKind::CollisionsOnFullDuplex);
}

#[test]
fn a_few_crc_errors_are_not_a_signature() {
    let c = Counters {
        fcs_errors: 3,
        rx_packets: 1_000_000,
        ..Counters::default()
    };
    assert!(diagnose(&steady(nic(Duplex::Full, c))).healthy);
}

#[test]
fn downshift_below_both_advertisements() {
    let mut ev = nic(Duplex::Full, Counters::default());
    ev.link.speed_mbps = Some(100);
    ev.link.autoneg = Some(true);
    ev.link.advertised = Some(Abilities::gigabit());
    ev.link.partner_advertised = Some(Abilities::gigabit());
    let d = diagnose(&ev);
    assert_eq!(kinds(&d), [FindingKind::BelowAdvertised]);
    assert!(d.findings[0].title.contains("1000BASE-T full duplex"));
    ev.link.speed_mbps = Some(1000);
    assert!(diagnose(&ev).findings.is_empty());
}

#[test]
fn parallel_detection_is_a_warning() {
    let mut ev = nic(Duplex::Half, Counters::default());
    ev.link.autoneg = Some(true);
    ev.link.advertised = Some(Abilities::fast_ethernet());
    ev.link.partner_advertised = Some(Abilities::NONE);
    let d = diagnose(&ev);
    assert!(d.healthy);
    assert_eq!(kinds(&d), [FindingKind::ParallelDetection]);
}

#[test]
fn errors_growing_during_the_interval() {
    let mut ev = nic(Duplex::Half, Counters::default());
    ev.first = Counters {
        tx_packets: 1_000,
        tx_window_errors: 10,
        collisions: 10,
        ..Counters::default()
    };
    ev.second = Counters {
        tx_packets: 3_000,
        tx_window_errors: 60,
        collisions: 60,
        ..Counters::default()
    };
    ev.interval_seconds = 2.0;
    let d = diagnose(&ev);
    assert_eq!(d.delta.tx_window_errors, 50);
    assert_eq!(d.rates.errors_per_second, 25.0);
    assert_eq!(d.rates.tx_packets_per_second, 1_000.0);
    assert!(kinds(&d).contains(&FindingKind::ErrorsGrowing));
    assert!(kinds(&d).contains(&FindingKind::DuplexMismatchHalfSide));
}

#[test]
fn no_phy_is_reported_not_faulted() {
    let mut ev = nic(
        Duplex::Full,
        Counters {
            collisions: 7,
            fcs_errors: 100,
            ..Counters::default()
        },
    );
    ev.kind = InterfaceKind::Veth;
    let d = diagnose(&ev);
    assert!(d.healthy);
    assert_eq!(kinds(&d), [FindingKind::NoPhysicalLayer]);
    ev.second.rx_dropped = 5;
    let d = diagnose(&ev);
    assert!(d.healthy, "drops on a veth are a warning");
    assert!(kinds(&d).contains(&FindingKind::OverflowsGrowing));
}

/// A lab's TAP device whose MAC the emulator runs has the emulator's counters: the PHY
/// rules read them (the mismatch is found) and "collisions do not apply" is not said.
#[test]
fn an_emulated_mac_is_diagnosed_by_its_counters() {
    let mut ev = steady(nic(
        Duplex::Half,
        Counters {
            tx_packets: 5_000,
            collisions: 1_817,
            late_collisions: Some(387),
            ..Counters::default()
        },
    ));
    ev.kind = InterfaceKind::EmulatedMac("lab ws-x's emulator, half duplex medium".into());
    let d = diagnose(&ev);
    assert!(!d.healthy);
    assert_eq!(d.findings[0].kind, FindingKind::DuplexMismatchHalfSide);
    assert!(!kinds(&d).contains(&FindingKind::NoPhysicalLayer));
    assert!(
        d.findings[0]
            .evidence
            .iter()
            .any(|e| e.contains("387 late collisions (802.3 LateCollisions) of 1817")),
        "{:?}",
        d.findings[0]
    );
    ev.kind = InterfaceKind::Tap;
    assert_eq!(kinds(&diagnose(&ev)), [FindingKind::NoPhysicalLayer]);
}

#[test]
fn no_carrier_is_no_link() {
    let mut ev = nic(Duplex::Full, Counters::default());
    ev.link.carrier = Some(false);
    assert_eq!(kinds(&diagnose(&ev)), [FindingKind::NoLink]);
}

#[test]
fn counters_that_go_backwards_restart_from_zero() {
    let before = Counters {
        rx_packets: 100,
        ..Counters::default()
    };
    let after = Counters {
        rx_packets: 7,
        ..Counters::default()
    };
    assert_eq!(after.since(&before).rx_packets, 7);
}

use proptest::prelude::*;

proptest! {
    #[test]
    fn software_interfaces_are_never_faulted(collisions: u32, fcs: u32, late: u32, rx: u32) {
        let mut ev = nic(Duplex::Full, Counters {
            collisions: collisions.into(), fcs_errors: fcs.into(),
            tx_window_errors: late.into(), rx_packets: rx.into(), ..Counters::default()
        });
        ev.kind = InterfaceKind::Loopback;
        prop_assert!(diagnose(&ev).healthy);
    }

    #[test]
    fn clean_counters_are_healthy(rx: u32, tx: u32, half: bool) {
        let duplex = if half { Duplex::Half } else { Duplex::Full };
        let c = Counters { rx_packets: rx.into(), tx_packets: tx.into(), ..Counters::default() };
        prop_assert!(diagnose(&nic(duplex, c)).healthy);
    }
}
