use Technology::*;
use wirespeed_model::autoneg::resolve::*;
use wirespeed_model::autoneg::{Abilities, Technology};

fn auto() -> Partner {
    Partner::auto(Abilities::fast_ethernet())
}

fn forced(t: Technology) -> Partner {
    Partner::forced(t)
}

/// Asserts one row of the seed's Appendix A (NIC = A, Catalyst switch = B).
fn row(
    nic: Partner,
    switch: Partner,
    want_nic: Option<Technology>,
    want_switch: Option<Technology>,
) -> Resolution {
    let r = resolve(nic, switch);
    assert_eq!(r.a.technology, want_nic, "NIC: {r:?}");
    assert_eq!(r.b.technology, want_switch, "switch: {r:?}");
    r
}

#[test]
fn seed_003_appendix_a_row1_auto_auto() {
    let r = row(auto(), auto(), Some(Base100TxFull), Some(Base100TxFull));
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(r.a.how, HowResolved::Negotiated);
}

#[test]
fn seed_003_appendix_a_row2_forced_full_against_auto() {
    let r = row(
        forced(Base100TxFull),
        auto(),
        Some(Base100TxFull),
        Some(Base100TxHalf),
    );
    assert_eq!(
        r.outcome,
        Outcome::DuplexMismatch {
            half_duplex_end: End::B
        }
    );
    assert_eq!(r.b.how, HowResolved::ParallelDetection);
}

#[test]
fn seed_003_appendix_a_row3_auto_against_forced_full() {
    let r = row(
        auto(),
        forced(Base100TxFull),
        Some(Base100TxHalf),
        Some(Base100TxFull),
    );
    assert_eq!(
        r.outcome,
        Outcome::DuplexMismatch {
            half_duplex_end: End::A
        }
    );
}

#[test]
fn seed_003_appendix_a_row4_both_forced_full() {
    let r = row(
        forced(Base100TxFull),
        forced(Base100TxFull),
        Some(Base100TxFull),
        Some(Base100TxFull),
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(r.a.how, HowResolved::Forced);
}

#[test]
fn seed_003_appendix_a_row5_forced_half_against_auto() {
    let r = row(
        forced(Base100TxHalf),
        auto(),
        Some(Base100TxHalf),
        Some(Base100TxHalf),
    );
    assert_eq!(r.outcome, Outcome::Ok, "no mismatch, as the table says");
    // With the table's assumption that both could do 100 full, the link is slower than it
    // could be.
    let nic = forced(Base100TxHalf).capable_of(Abilities::fast_ethernet());
    let r = resolve(nic, auto());
    assert_eq!(
        r.outcome,
        Outcome::SlowerThanPossible {
            running: Base100TxHalf,
            possible: Base100TxFull
        }
    );
}

#[test]
fn seed_003_appendix_a_row6_forced_10_half_against_auto() {
    let r = row(
        forced(Base10THalf),
        auto(),
        Some(Base10THalf),
        Some(Base10THalf),
    );
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(r.b.how, HowResolved::ParallelDetection);
}

#[test]
fn seed_003_appendix_a_row7_speed_mismatch_no_link() {
    let r = row(forced(Base10THalf), forced(Base100TxHalf), None, None);
    assert!(matches!(&r.outcome, Outcome::NoLink { reason } if reason.contains("speed mismatch")));
    assert_eq!(r.a.describe(), "no link");
}

#[test]
fn seed_003_appendix_a_row8_auto_against_forced_10_half() {
    let r = row(
        auto(),
        forced(Base10THalf),
        Some(Base10THalf),
        Some(Base10THalf),
    );
    assert_eq!(r.outcome, Outcome::Ok);
}

#[test]
fn seed_003_table9_auto_nic_on_a_10_half_hub_is_no_mismatch() {
    // Table 9 test 1: hub (no auto-negotiation, 10 half) and an auto NIC: "Expected
    // Mismatch: No". Test 2: the NIC forced to 10-full: "Yes".
    let hub = forced(Base10THalf);
    assert_eq!(resolve(auto(), hub).outcome, Outcome::Ok);
    assert_eq!(
        resolve(forced(Base10TFull), hub).outcome,
        Outcome::DuplexMismatch {
            half_duplex_end: End::B
        }
    );
}

#[test]
fn gigabit_ports_negotiate_gigabit_and_detect_fast_ethernet() {
    let g = Partner::auto(Abilities::gigabit());
    assert_eq!(resolve(g, g).a.technology, Some(Base1000TFull));
    assert_eq!(resolve(g, auto()).a.technology, Some(Base100TxFull));
    let r = resolve(g, forced(Base100TxFull));
    assert_eq!(r.a.technology, Some(Base100TxHalf));
    assert_eq!(
        r.outcome,
        Outcome::DuplexMismatch {
            half_duplex_end: End::A
        }
    );
}

#[test]
fn forced_gigabit_negotiates_alone() {
    let r = resolve(forced(Base1000TFull), Partner::auto(Abilities::gigabit()));
    assert_eq!(r.a.technology, Some(Base1000TFull));
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(r.notes[0].contains("40.5.1"));
    let r = resolve(forced(Base1000TFull), auto());
    assert!(matches!(r.outcome, Outcome::NoLink { .. }), "{r:?}");
}

#[test]
fn partners_parse() {
    assert_eq!("auto".parse::<Partner>(), Ok(auto()));
    assert_eq!("AUTO:10/100".parse::<Partner>(), Ok(auto()));
    assert_eq!("auto:0x01E1".parse::<Partner>(), Ok(auto()));
    assert_eq!("100-full".parse::<Partner>(), Ok(forced(Base100TxFull)));
    assert_eq!(
        "auto:10-half,100-full".parse::<Partner>(),
        Ok(Partner::auto("100-full,10-half".parse().unwrap()))
    );
    assert!(matches!(
        "auto:0x0002".parse::<Partner>(),
        Err(PartnerError::NoTechnology { .. })
    ));
    assert!(matches!(
        "fast".parse::<Partner>(),
        Err(PartnerError::Unknown { .. })
    ));
    assert!(matches!(
        "auto:fast".parse::<Partner>(),
        Err(PartnerError::Unknown { .. })
    ));
}

#[test]
fn nothing_in_common_is_no_link() {
    let tens = Partner::auto("10-half,10-full".parse().unwrap());
    let hundreds = Partner::auto("100-full".parse().unwrap());
    assert!(matches!(
        resolve(tens, hundreds).outcome,
        Outcome::NoLink { .. }
    ));
    // A negotiating end that advertises no 100 Mbit/s mode cannot detect a forced one.
    assert!(matches!(
        resolve(tens, forced(Base100TxHalf)).outcome,
        Outcome::NoLink { .. }
    ));
    // Same speed, different signalling.
    let r = resolve(forced(Base100T4), forced(Base100TxHalf));
    assert!(matches!(&r.outcome, Outcome::NoLink { reason } if reason.contains("signalling")));
}

#[test]
fn a_restricted_advertisement_is_slower_than_possible() {
    let limited =
        Partner::auto("10-full,10-half".parse().unwrap()).capable_of(Abilities::fast_ethernet());
    let r = resolve(limited, auto());
    assert_eq!(
        r.outcome,
        Outcome::SlowerThanPossible {
            running: Base10TFull,
            possible: Base100TxFull
        }
    );
}

use proptest::prelude::*;

fn any_partner() -> impl Strategy<Value = Partner> {
    prop_oneof![
        (1u16..512).prop_map(|m| Partner::auto(
            Technology::BY_PRIORITY
                .into_iter()
                .filter(|t| m & (1 << (*t as u16)) != 0)
                .collect()
        )),
        proptest::sample::select(Technology::BY_PRIORITY.to_vec()).prop_map(Partner::forced),
    ]
}

proptest! {
    #[test]
    fn links_are_symmetric_and_never_mix_speeds(a in any_partner(), b in any_partner()) {
        let ab = resolve(a, b);
        let ba = resolve(b, a);
        prop_assert_eq!(ab.a, ba.b);
        prop_assert_eq!(ab.b, ba.a);
        prop_assert_eq!(ab.a.speed_mbps, ab.b.speed_mbps, "a link never runs two speeds");
        prop_assert_eq!(ab.a.technology.is_some(), ab.b.technology.is_some());
        if let (Some(ta), Some(tb), Some(best)) = (ab.a.technology, ab.b.technology, ab.best_possible)
            && ta == tb
        {
            // Nobody runs better than both can do.
            prop_assert!(best.priority() <= ta.priority());
        }
        if let (Config::Auto { .. }, Config::Auto { .. }) = (a.effective(), b.effective()) {
            prop_assert!(!matches!(ab.outcome, Outcome::DuplexMismatch { .. }),
                "two negotiating ends never mismatch");
        }
    }
}
