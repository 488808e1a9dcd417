use proptest::prelude::*;
use wirespeed_model::bestcase::HopAnalysis;
use wirespeed_model::bestcase::{Increment, OwnCostIntervals};
use wirespeed_model::delay::Cost;
use wirespeed_model::stability::*;
use wirespeed_model::stats::Interval;

fn iv(mid: f64, half: f64) -> Interval {
    Interval {
        low: mid - half,
        high: mid + half,
    }
}

/// A hop whose own costs are `fixed_ms`, `per_byte_ms` and `answer_ms`, each with the half
/// width given, probed at 46..1500 bytes sent and 74..576 returned (IPv4 time exceeded).
fn hop(ttl: u8, own: [(f64, f64); 3], separated: bool, mixes: bool) -> HopAnalysis {
    let json = serde_json::json!({
        "ttl": ttl,
        "sizes": [
            {"sent_bytes": 46, "returned_bytes": 74, "sent": 32, "lost": 0,
             "min_rtt_ms": 1.0, "median_rtt_ms": 1.0, "residual_ms": 0.0},
            {"sent_bytes": 1500, "returned_bytes": 576, "sent": 32, "lost": 0,
             "min_rtt_ms": 1.0, "median_rtt_ms": 1.0, "residual_ms": 0.0},
            {"sent_bytes": 900, "returned_bytes": 576, "sent": 32, "lost": 32,
             "min_rtt_ms": 1.0, "median_rtt_ms": 1.0, "residual_ms": 0.0}
        ],
        "loss_fraction": 0.0,
        "fit": {
            "rtt_intercept_ms": 1.0, "rtt_slope_ms_per_byte": 0.0,
            "one_way": {"fixed_ms": 0.5, "per_byte_ms": 0.0},
            "r_squared": 1.0, "residual_std_ms": 0.0,
            "separation": if separated { "separated" } else { "echo" }
        },
        "no_fit_reason": null, "rate_limit": null, "increment": null
    });
    let mut h: HopAnalysis = serde_json::from_value(json).unwrap();
    h.increment = Some(Increment {
        from_ttl: ttl - 1,
        cost: Cost::new(own[0].0, own[1].0),
        answer_per_byte_ms: own[2].0,
        implied_bits_per_second: None,
        caveat: None,
        intervals: Some(OwnCostIntervals {
            blocks: 8,
            confidence: 0.95,
            fixed_ms: iv(own[0].0, own[0].1),
            per_byte_ms: iv(own[1].0, own[1].1),
            answer_per_byte_ms: iv(own[2].0, own[2].1),
        }),
        per_byte_mixes_directions: mixes,
        per_byte_from: Default::default(),
    });
    h
}

const T: Tolerances = Tolerances::ISSUE_31;

#[test]
fn a_hop_inside_every_tolerance_is_settled() {
    // 1 ms fixed +- 10 us; 800 ns/B +- 10 (1.25%); answer 2 us/B +- 50 ns (2.5%).
    let h = hop(1, [(1.0, 0.010), (8e-4, 1e-5), (2e-3, 5e-5)], true, false);
    assert!(unsettled(&[h], &T).is_empty());
}

#[test]
fn each_figure_wider_than_its_tolerance_is_named() {
    // Fixed +- 40 us; per byte 4000 ns/B +- 100 (2.5%); answer 2 us/B +- 120 ns (6%).
    let h = hop(2, [(1.0, 0.040), (4e-3, 1e-4), (2e-3, 1.2e-4)], true, false);
    let u = unsettled(&[h], &T);
    let figures: Vec<Figure> = u.iter().map(|u| u.figure).collect();
    assert_eq!(
        figures,
        [Figure::Fixed, Figure::PerByte, Figure::AnswerPerByte]
    );
    assert!(u.iter().all(|u| u.ttl == 2));
    assert!((u[1].tolerance_ms - 8e-5).abs() < 1e-15, "{:?}", u[1]);
}

#[test]
fn the_floor_spreads_30_us_over_the_span_of_bytes() {
    // 8 ns/B (1 Gbit/s) +- 15 ns/B: far over 2% of itself, but 30 us over the 1454 bytes
    // sent is 20.6 ns/B, so the run resolves all it can.
    let h = hop(1, [(1.0, 0.010), (8e-6, 1.5e-5), (0.0, 5e-5)], true, false);
    let u = unsettled(std::slice::from_ref(&h), &T);
    assert!(u.iter().all(|u| u.figure != Figure::PerByte), "{u:?}");
    // The answer (configured as none) is floored over the 502 bytes returned: 59.8 ns/B.
    assert!(u.is_empty(), "{u:?}");
    let wide = hop(1, [(1.0, 0.010), (8e-6, 2.2e-5), (0.0, 7e-5)], true, false);
    let u = unsettled(&[wide], &T);
    assert_eq!(u.len(), 2, "{u:?}");
}

#[test]
fn what_more_probes_cannot_settle_is_not_waited_for() {
    // Per byte mixes directions; an echo has no answer cost to separate.
    let h = hop(3, [(1.0, 0.010), (4e-3, 1e-3), (2e-3, 1e-3)], false, true);
    assert!(unsettled(&[h], &T).is_empty());
    // A hop without a fit has nothing to settle; a fitted one without intervals does.
    let mut silent = hop(1, [(1.0, 0.010), (8e-4, 1e-5), (2e-3, 5e-5)], true, false);
    silent.fit = None;
    assert!(unsettled(&[silent], &T).is_empty());
    let mut blockless = hop(1, [(1.0, 0.010), (8e-4, 1e-5), (2e-3, 5e-5)], true, false);
    blockless.increment.as_mut().unwrap().intervals = None;
    let u = unsettled(&[blockless], &T);
    assert_eq!(u.len(), 3);
    assert!(u.iter().all(|u| u.half_width_ms.is_none()));
    // An interval that did not compute is not settled.
    let nan = hop(
        1,
        [(1.0, f64::NAN), (8e-4, 1e-5), (2e-3, 5e-5)],
        true,
        false,
    );
    assert_eq!(unsettled(&[nan], &T)[0].figure, Figure::Fixed);
}

#[test]
fn another_round_must_end_within_the_budget() {
    assert!(another_round_fits(20.0, 20.0, 60.0));
    assert!(!another_round_fits(45.0, 20.0, 60.0));
    assert!(!another_round_fits(0.5, 0.0, 0.0));
}

proptest! {
    /// Narrowing every interval never unsettles a figure, and a settled run stays settled.
    #[test]
    fn narrower_intervals_never_unsettle(
        fixed in 0.0f64..5.0, per_byte in 1e-6f64..1e-2, answer in -1e-3f64..1e-2,
        widths in proptest::array::uniform3(0.0f64..2e-2),
        shrink in 0.0f64..1.0,
    ) {
        let wide = hop(1, [(fixed, widths[0]), (per_byte, widths[1]), (answer, widths[2])], true, false);
        let narrow = hop(1, [(fixed, widths[0] * shrink), (per_byte, widths[1] * shrink), (answer, widths[2] * shrink)], true, false);
        let (w, n) = (unsettled(&[wide], &T), unsettled(&[narrow], &T));
        prop_assert!(n.len() <= w.len());
        for u in &n {
            prop_assert!(w.iter().any(|x| x.figure == u.figure));
        }
    }

    /// The floored tolerance is never below the share of the figure nor below the floor.
    #[test]
    fn the_floored_tolerance_bounds(value in -1.0f64..1.0, span in 1.0f64..2000.0) {
        let t = floored_tolerance_ms(value, value, 0.02, 0.030, span);
        prop_assert!(t >= 0.02 * value.abs() - 1e-18);
        prop_assert!(t >= 0.030 / span - 1e-18);
    }
}

fn unsettled_at(ttl: u8, half: Option<f64>, tol: f64) -> Unsettled {
    Unsettled {
        ttl,
        figure: Figure::PerByte,
        half_width_ms: half,
        tolerance_ms: tol,
    }
}

/// A round probes each unsettled hop and the one it is differenced from, nothing else;
/// the rounds to settle follow one over the root of the probes.
#[test]
fn the_next_round_is_planned_from_the_unsettled_hops() {
    let hops: Vec<HopAnalysis> = (1..=4)
        .map(|t| hop(t, [(0.1, 0.001); 3], true, false))
        .collect();
    // Hop 3's per byte twice its tolerance after 1 round: 3 more rounds of hops 2 and 3.
    let u = [unsettled_at(3, Some(0.002), 0.001)];
    assert_eq!(hops_to_probe(&hops, &u), vec![2, 3]);
    assert_eq!(rounds_to_settle(&u, 1), Some(3));
    assert_eq!(rounds_to_settle(&u, 2), Some(6));
    let plan = plan_round(&hops, &u, 1, 0.01, 512.0, None);
    assert_eq!(plan.ttls, vec![2, 3]);
    assert!((plan.round_seconds - 10.24).abs() < 1e-9, "{plan:?}");
    assert_eq!(plan.rounds_to_settle, Some(3));
    assert!((plan.seconds_to_settle.unwrap() - 30.72).abs() < 1e-9);
    // The destination's agent series go with it.
    let plan = plan_round(&hops, &u, 1, 0.01, 512.0, Some((3, 1024.0)));
    assert!((plan.round_seconds - 20.48).abs() < 1e-9, "{plan:?}");
    // Hop 1 is differenced from this host: only itself.
    let u1 = [unsettled_at(1, Some(0.0015), 0.001)];
    assert_eq!(hops_to_probe(&hops, &u1), vec![1]);
    assert_eq!(rounds_to_settle(&u1, 4), Some(5));
    // Without an interval the plan cannot say; nothing unsettled needs nothing.
    assert_eq!(rounds_to_settle(&[unsettled_at(2, None, 0.001)], 1), None);
    assert_eq!(
        rounds_to_settle(&[unsettled_at(2, Some(f64::NAN), 0.001)], 1),
        None
    );
    assert_eq!(rounds_to_settle(&[], 3), Some(0));
    assert!(hops_to_probe(&hops, &[]).is_empty());
}

/// The budget after round 1: with the bare flag what the path asks (at least one more round),
/// capped; with the flag's budget that budget, and what the path asked beside it.
#[test]
fn the_budget_is_planned_from_the_first_round() {
    let widest = Unsettled {
        ttl: 4,
        figure: Figure::PerByte,
        half_width_ms: Some(3e-5),
        tolerance_ms: 1e-5,
    };
    let plan = RoundPlan {
        ttls: vec![3, 4],
        round_seconds: 20.0,
        rounds_to_settle: Some(8),
        seconds_to_settle: Some(160.0),
        widest: Some(widest),
    };
    let b = plan_budget(40.0, Some(&plan), 600.0, true);
    assert_eq!((b.seconds, b.path_seconds), (200.0, Some(200.0)));
    assert_eq!(plan_budget(40.0, Some(&plan), 120.0, true).seconds, 120.0);
    let given = plan_budget(40.0, Some(&plan), 60.0, false);
    assert_eq!((given.seconds, given.path_seconds), (60.0, Some(200.0)));
    // Settling projected at 0 rounds still allows the round planned.
    let near = RoundPlan {
        rounds_to_settle: Some(0),
        seconds_to_settle: Some(0.0),
        ..plan.clone()
    };
    assert_eq!(plan_budget(40.0, Some(&near), 600.0, true).seconds, 60.0);
    // No interval yet: nothing to plan from, the cap.
    let blind = RoundPlan {
        rounds_to_settle: None,
        seconds_to_settle: None,
        ..plan.clone()
    };
    let b = plan_budget(40.0, Some(&blind), 600.0, true);
    assert_eq!((b.seconds, b.path_seconds), (600.0, None));
    // The widest figure is the one furthest past its tolerance, one without an interval first.
    let narrow = unsettled_at(2, Some(1.5e-5), 1e-5);
    assert_eq!(widest_of(&[narrow, widest]), Some(widest));
    let none = unsettled_at(3, None, 1e-5);
    assert_eq!(widest_of(&[narrow, none, widest]), Some(none));
    assert_eq!(widest_of(&[]), None);
}

fn widest_of(u: &[Unsettled]) -> Option<Unsettled> {
    wirespeed_model::stability::widest(u)
}
