use wirespeed_model::load::*;

const NS: u64 = 1_000_000_000;
use proptest::prelude::*;

#[test]
fn the_seed_schedule_measures_the_middle_ten_seconds() {
    let s = Schedule::SEED;
    s.validate().unwrap();
    assert_eq!(s.transmit_span_ns(), (5 * NS, 25 * NS));
    assert_eq!(s.window_ns(), (10 * NS, 20 * NS));
    assert_eq!(s.report_at_ns(), 30 * NS);
    assert_eq!(s.phase_at(0), SchedulePhase::Settle);
    assert_eq!(s.phase_at(5 * NS), SchedulePhase::Lead);
    assert_eq!(s.phase_at(10 * NS - 1), SchedulePhase::Lead);
    assert_eq!(s.phase_at(10 * NS), SchedulePhase::Measure);
    assert_eq!(s.phase_at(20 * NS - 1), SchedulePhase::Measure);
    assert_eq!(s.phase_at(20 * NS), SchedulePhase::Trail);
    assert_eq!(s.phase_at(25 * NS), SchedulePhase::Cooldown);
    assert_eq!(s.phase_at(30 * NS), SchedulePhase::Report);
}

#[test]
fn short_schedules_and_bad_windows() {
    let s = Schedule {
        settle_ns: 200_000_000,
        transmit_ns: NS,
        measure_ns: 500_000_000,
        cooldown_ns: 100_000_000,
    };
    assert_eq!(s.window_ns(), (450_000_000, 950_000_000));
    assert_eq!(s.report_at_ns(), 1_300_000_000);
    let bad = Schedule {
        measure_ns: 2 * NS,
        ..s
    };
    assert!(matches!(
        bad.validate(),
        Err(LoadError::WindowTooLong { .. })
    ));
    let empty = Schedule { measure_ns: 0, ..s };
    assert_eq!(empty.validate(), Err(LoadError::EmptyWindow));
}

#[test]
fn schedules_that_add_past_2_64_are_refused_not_wrapped() {
    // Finding 7 of issue 13: these times wrapped to 1 ns and passed any limit.
    let wraps = Schedule {
        settle_ns: u64::MAX - 1,
        transmit_ns: 2,
        measure_ns: 1,
        cooldown_ns: 0,
    };
    assert_eq!(wraps.validate(), Err(LoadError::Overflow));
    assert_eq!(
        wraps.validate_within(std::time::Duration::from_secs(3600)),
        Err(LoadError::Overflow)
    );
    assert_eq!(wraps.report_at_ns(), u64::MAX, "saturates, never wraps");
    let (tx0, tx1) = wraps.transmit_span_ns();
    assert!(tx1 >= tx0);
    let cool = Schedule {
        cooldown_ns: u64::MAX,
        ..Schedule::SEED
    };
    assert_eq!(cool.validate(), Err(LoadError::Overflow));
    assert!(cool.validate().unwrap_err().to_string().contains("2^64"));
}

#[test]
fn a_schedule_is_held_to_the_limit_passed_in() {
    let limit = std::time::Duration::from_secs(30);
    assert_eq!(Schedule::SEED.validate_within(limit), Ok(()));
    let e = Schedule::SEED
        .validate_within(std::time::Duration::from_secs(29))
        .unwrap_err();
    assert_eq!(
        e,
        LoadError::TooLong {
            total_s: 30.0,
            limit_s: 29.0
        }
    );
    assert!(e.to_string().contains("--max-duration"), "{e}");
}

#[test]
fn the_seed_ratio_deck_keeps_its_ratio_in_every_deal() {
    let deck = LengthDeck::from_counts(&[(64, 6), (1536, 2)]).unwrap();
    let mut d = Dealer::new(&deck, 9);
    for _ in 0..20 {
        let hand: Vec<u32> = (0..8).map(|_| d.deal()).collect();
        assert_eq!(hand.iter().filter(|&&b| b == 64).count(), 6);
        assert_eq!(hand.iter().filter(|&&b| b == 1536).count(), 2);
    }
    assert_eq!(deck.mean_bytes(), (6.0 * 64.0 + 2.0 * 1536.0) / 8.0);
}

#[test]
fn weighted_decks_follow_the_weights() {
    let deck = LengthDeck::from_weights(&[(64, 1.0), (576, 1.0), (1536, 1.0)]).unwrap();
    assert_eq!(deck.cards.len(), WEIGHTED_DECK_CARDS as usize);
    let n = |b| deck.cards.iter().filter(|&&c| c == b).count();
    assert_eq!(n(64) + n(576) + n(1536), 1000);
    assert!((333..=334).contains(&n(64)) && (333..=334).contains(&n(1536)));
    assert_eq!(
        LengthDeck::from_weights(&[(64, 0.0)]),
        Err(LoadError::EmptyMix)
    );
    assert_eq!(
        LengthDeck::from_counts(&[(63, 1)]),
        Err(LoadError::Length { bytes: 63 })
    );
}

#[test]
fn payloads_make_the_seed_packet_lengths() {
    assert_eq!(udp_payload_bytes(64, false), 64 - 14 - 28);
    assert_eq!(udp_payload_bytes(1536, true), 1536 - 14 - 48);
    assert_eq!(udp_payload_bytes(64, true), GENERATOR_HEADER_BYTES);
    assert_eq!(charged_bits(1536), (1536 + 24) * 8);
}

#[test]
fn pacing_offers_the_rate_asked_for() {
    // 10 Mbit/s of back-to-back 1536-byte packets: one every 1.248 ms.
    let gap = pacing_interval_ns(1536, 10e6).unwrap();
    assert!((gap - 1_248_000.0).abs() < 1e-6);
    assert!(pacing_interval_ns(64, 0.0).is_err());
}

#[test]
fn clock_offset_rests_on_the_fastest_exchange() {
    // Agent clock runs 1 s ahead; the second exchange is the fast one.
    let samples = [
        ClockSample {
            sent_ns: 0,
            agent_ns: NS + 900,
            received_ns: 1000,
        },
        ClockSample {
            sent_ns: 2000,
            agent_ns: NS + 2050,
            received_ns: 2100,
        },
    ];
    let e = ClockEstimate::from_samples(&samples).unwrap();
    assert_eq!(e.rtt_ns, 100);
    assert_eq!(e.offset_ns, NS as i64);
    assert_eq!(e.error_bound_ns, 50);
    assert_eq!(e.to_agent(5000), NS + 5000);
    assert!(ClockEstimate::from_samples(&[]).is_none());
}

#[test]
fn counters_hold_the_seed_four_numbers() {
    let mut c = LoadCounters::default();
    c.add_packet(64);
    c.add_packet(1536);
    c.add_delay(0.001);
    c.add_delay(0.003);
    assert_eq!(c.packets, 2);
    assert_eq!(c.charged_bits, (88 + 1560) * 8);
    assert!((c.delay_mean_s() - 0.002).abs() < 1e-15);
    assert!((c.delay_sum_sq_s2 - 1e-5).abs() < 1e-18);
    assert_eq!(loss_fraction(100, 90), Some(0.1));
    assert_eq!(loss_fraction(0, 0), None);
}

proptest! {
    #[test]
    fn the_window_is_centred_inside_the_transmission(
        settle in 0u64..10 * NS, transmit in 1u64..30 * NS, frac in 0.0f64..=1.0, cool in 0u64..NS,
    ) {
        let measure = ((transmit as f64 * frac) as u64).max(1).min(transmit);
        let s = Schedule { settle_ns: settle, transmit_ns: transmit, measure_ns: measure, cooldown_ns: cool };
        prop_assert!(s.validate().is_ok());
        let (t0, t1) = s.transmit_span_ns();
        let (w0, w1) = s.window_ns();
        prop_assert!(t0 <= w0 && w1 <= t1 && w1 - w0 == measure);
        // Centred to the nanosecond: the lead and the trail differ by at most one.
        prop_assert!(((w0 - t0) as i64 - (t1 - w1) as i64).abs() <= 1);
        prop_assert_eq!(s.phase_at(w0), SchedulePhase::Measure);
        prop_assert_ne!(s.phase_at(w1), SchedulePhase::Measure);
    }

    #[test]
    fn weighted_decks_have_every_count_within_one_card_of_its_share(
        ws in prop::collection::vec(0.01f64..100.0, 1..8),
    ) {
        let weights: Vec<(u64, f64)> = ws.iter().enumerate().map(|(i, &w)| (64 + i as u64, w)).collect();
        let deck = LengthDeck::from_weights(&weights).unwrap();
        prop_assert_eq!(deck.cards.len(), WEIGHTED_DECK_CARDS as usize);
        let total: f64 = ws.iter().sum();
        for &(b, w) in &weights {
            let n = deck.cards.iter().filter(|&&c| u64::from(c) == b).count() as f64;
            prop_assert!((n - w / total * 1000.0).abs() <= 1.0);
        }
    }
}
