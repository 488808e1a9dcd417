//! When a per-hop probe has probed enough: the stopping rule of `probe --hops --until-stable`
//! (issue 31).
//!
//! A hop's own costs are judged against fixed tolerances: its one-way fixed cost within 30 us,
//! its cost per byte within 2%, a router's answer cost per returned byte within 5%. A run can
//! only show that a tolerance held if the figure is known more closely than the tolerance, so
//! more probes are worth sending exactly while some figure's interval is wider than its
//! tolerance. The interval is the one over independent time blocks of the run
//! ([`crate::bestcase::OwnCostIntervals`]: the same analysis on each stretch of probes, every
//! size probed in each), so it narrows only when separate stretches agree. A bootstrap of one
//! set of minimums resamples the minimums, not the run, and reads zero width when they repeat
//! (issue 31 saw "fixed [7.34, 7.34] ms" for figures that moved by several percent from run to
//! run): it never stops a run here.
//!
//! The tolerance is taken of the *measured* figure (the probe does not know the truth), and
//! floored as the harness floors it: a per-byte figure is resolved once its interval is within
//! 2% (5%) of itself or within the fixed cost's 30 us spread over the span of bytes the run
//! sent (returned), whichever is larger (a 1 Gbit/s link's 8 ns a byte is 11.6 us over 46-1500
//! bytes, below what a minimum resolves). A router configured to answer at no cost per byte
//! has no share to take: its answer is judged at 5% of the hop's per byte, the scale it is
//! read at.
//!
//! What more probes cannot settle is left out of the rule, not waited for: a per byte that
//! mixes the two directions (an echo behind a path that returns bytes at another cost than it
//! sends them, [`crate::bestcase::Increment::per_byte_mixes_directions`]) and the answer cost
//! of a hop whose sizes did not separate bytes sent from bytes returned. A hop with no fit (it
//! never answered) has nothing to settle; a fitted hop without intervals (fewer than three
//! blocks) is unsettled: nothing says its figures agree.
//!
//! The rounds are planned from the path ([`plan_round`]): a further round probes only the hops
//! whose figures are unsettled and the hops their own costs are differenced from, its length
//! is the last round's pace times the probes it plans, and the plan says how many rounds the
//! widest unsettled figure would need if its interval narrows as one over the root of its
//! probes, so that a run stopped by its budget says what settling would have cost.
//!
//! Checked on the saved corpora of bench/harness-probe.sh (110 random chains, `-c 32`): cut
//! after each run's first 16 probes a size, 50 runs met the rule, and 244 of the 250 separable
//! per-byte and answer figures of those runs lay within their tolerance of the configured
//! truth; whole, 69 met it, with 349 of 355 within (bench/results/incoming-probe-truth.md).

use serde::{Deserialize, Serialize};

use crate::bestcase::HopAnalysis;
use crate::perhop::Separation;

/// The tolerances a hop's own costs are judged by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// Of the one-way fixed cost, ms (also the floor of the per-byte figures over the span).
    pub fixed_ms: f64,
    /// Of the cost per byte, as a share of it.
    pub per_byte_share: f64,
    /// Of a router's answer cost per returned byte, as a share of it.
    pub answer_share: f64,
}

impl Tolerances {
    /// Issue 31's: 30 us, 2%, 5%.
    pub const ISSUE_31: Tolerances = Tolerances {
        fixed_ms: 0.030,
        per_byte_share: 0.02,
        answer_share: 0.05,
    };
}

/// One of a hop's own costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The one-way fixed cost.
    Fixed,
    /// The cost per byte sent.
    PerByte,
    /// A router's answer cost per byte returned.
    AnswerPerByte,
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Figure::Fixed => "fixed cost",
            Figure::PerByte => "per byte",
            Figure::AnswerPerByte => "answer per byte",
        })
    }
}

/// A figure whose interval is still wider than its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Unsettled {
    /// The hop's TTL.
    pub ttl: u8,
    /// Which of its own costs.
    pub figure: Figure,
    /// Half the interval's width, ms (ms per byte for the per-byte figures); None where the
    /// hop has no interval at all.
    pub half_width_ms: Option<f64>,
    /// The tolerance it has to be within, in the same unit.
    pub tolerance_ms: f64,
}

/// The tolerance of a per-byte figure: `share` of `value` (of `scale` when `value` is
/// configured as nothing, i.e. reads as 0), floored by `fixed_ms` over `span_bytes`.
pub fn floored_tolerance_ms(
    value_ms: f64,
    scale_ms: f64,
    share: f64,
    fixed_ms: f64,
    span_bytes: f64,
) -> f64 {
    let own = if value_ms.abs() > 0.0 {
        share * value_ms.abs()
    } else {
        share * scale_ms.abs()
    };
    if span_bytes > 0.0 {
        own.max(fixed_ms / span_bytes)
    } else {
        own
    }
}

/// Largest minus smallest of `values` (0 when empty).
fn span(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let hi = values.clone().fold(f64::NEG_INFINITY, f64::max);
    let lo = values.fold(f64::INFINITY, f64::min);
    if hi >= lo { hi - lo } else { 0.0 }
}

/// Every figure of `hops` that more probes could still settle and that is not settled yet, in
/// hop order: empty when the run may stop.
pub fn unsettled(hops: &[HopAnalysis], tol: &Tolerances) -> Vec<Unsettled> {
    let mut out = Vec::new();
    for h in hops {
        let Some(fit) = &h.fit else { continue };
        let answered = h.sizes.iter().filter(|r| r.lost < r.sent);
        let sent_span = span(answered.clone().map(|r| r.sent_bytes as f64));
        let returned_span = span(answered.map(|r| r.returned_bytes as f64));
        let Some(inc) = &h.increment else {
            out.push(Unsettled {
                ttl: h.ttl,
                figure: Figure::Fixed,
                half_width_ms: None,
                tolerance_ms: tol.fixed_ms,
            });
            continue;
        };
        let per_byte_tol = floored_tolerance_ms(
            inc.cost.per_byte_ms,
            inc.cost.per_byte_ms,
            tol.per_byte_share,
            tol.fixed_ms,
            sent_span,
        );
        let answer_tol = floored_tolerance_ms(
            inc.answer_per_byte_ms,
            inc.cost.per_byte_ms,
            tol.answer_share,
            tol.fixed_ms,
            returned_span,
        );
        let mut checks = vec![(Figure::Fixed, tol.fixed_ms)];
        if !inc.per_byte_mixes_directions {
            checks.push((Figure::PerByte, per_byte_tol));
        }
        if fit.separation == Separation::Separated {
            checks.push((Figure::AnswerPerByte, answer_tol));
        }
        for (figure, tolerance_ms) in checks {
            let half_width_ms = inc.intervals.map(|iv| {
                let i = match figure {
                    Figure::Fixed => iv.fixed_ms,
                    Figure::PerByte => iv.per_byte_ms,
                    Figure::AnswerPerByte => iv.answer_per_byte_ms,
                };
                i.width() / 2.0
            });
            // NaN (an interval that did not compute) is not settled either.
            if half_width_ms.is_none_or(|w| w.is_nan() || w > tolerance_ms) {
                out.push(Unsettled {
                    ttl: h.ttl,
                    figure,
                    half_width_ms,
                    tolerance_ms,
                });
            }
        }
    }
    out
}

/// Why an adaptive run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every figure more probes could settle was within its tolerance.
    Settled,
    /// The time budget would not hold another round as long as the last.
    Budget,
    /// The most rounds a run sends.
    Rounds,
    /// The probes stopped for another reason (interrupted, `--max-time`, nothing answered).
    Cut,
}

/// Whether another round fits the budget: the rounds so far took `elapsed_s` seconds, the
/// last one `last_round_s`; another is sent only if it would end within `budget_s`.
pub fn another_round_fits(elapsed_s: f64, last_round_s: f64, budget_s: f64) -> bool {
    elapsed_s + last_round_s.max(0.0) <= budget_s
}

/// The next round of `--until-stable`, planned from the path: which hops it probes, how long it
/// should take, and how many rounds settling everything would take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundPlan {
    /// The hops the next round probes: every hop with an unsettled figure and the hop its own
    /// cost is differenced from (settled hops elsewhere are not probed again).
    pub ttls: Vec<u8>,
    /// Its expected length, seconds: the last round's seconds a probe times the probes planned.
    pub round_seconds: f64,
    /// Rounds like it that the widest unsettled figure needs to come within its tolerance,
    /// were its interval to narrow as one over the root of its probes (None: a figure without
    /// an interval, which one more round must show first).
    pub rounds_to_settle: Option<u32>,
    /// `rounds_to_settle` x `round_seconds`: the time the path asks for beyond what was spent.
    pub seconds_to_settle: Option<f64>,
}

/// The hops a further round probes for `unsettled` figures of `hops`: each unsettled hop and
/// the hop its own cost is measured from (a difference of two lines narrows only when both
/// do), in TTL order.
pub fn hops_to_probe(hops: &[HopAnalysis], unsettled: &[Unsettled]) -> Vec<u8> {
    let mut ttls: Vec<u8> = Vec::new();
    for u in unsettled {
        ttls.push(u.ttl);
        let from = hops
            .iter()
            .find(|h| h.ttl == u.ttl)
            .and_then(|h| h.increment.as_ref())
            .map(|i| i.from_ttl);
        if let Some(from) = from.filter(|&t| t > 0) {
            ttls.push(from);
        }
    }
    ttls.sort_unstable();
    ttls.dedup();
    ttls
}

/// Further rounds (each as many probes of each unsettled hop as each of the `rounds` so far)
/// until every `unsettled` figure's half width is within its tolerance, if it narrows as one
/// over the root of its probes: `rounds x ((w / t)^2 - 1)`, rounded up, of the widest; None
/// when a figure has no interval yet (or a NaN one), and 0 when nothing is unsettled.
pub fn rounds_to_settle(unsettled: &[Unsettled], rounds: u32) -> Option<u32> {
    let mut most = 0.0f64;
    for u in unsettled {
        let w = u.half_width_ms.filter(|w| w.is_finite())?;
        if u.tolerance_ms <= 0.0 || !u.tolerance_ms.is_finite() {
            return None;
        }
        let ratio = w / u.tolerance_ms;
        most = most.max(f64::from(rounds.max(1)) * (ratio * ratio - 1.0));
    }
    // Past the most rounds a run sends it is "more than can be sent" whatever the figure.
    Some(most.max(0.0).ceil().min(1e6) as u32)
}

/// The plan of the next round: the hops [`hops_to_probe`] names, `probes_per_hop` probes each
/// (`extra_probes` more where the destination's agent series go with it, `destination`), at the
/// last round's `seconds_per_probe`.
pub fn plan_round(
    hops: &[HopAnalysis],
    unsettled: &[Unsettled],
    rounds: u32,
    seconds_per_probe: f64,
    probes_per_hop: f64,
    destination: Option<(u8, f64)>,
) -> RoundPlan {
    let ttls = hops_to_probe(hops, unsettled);
    let probes: f64 = ttls
        .iter()
        .map(|&t| {
            probes_per_hop
                + destination
                    .filter(|(d, _)| *d == t)
                    .map_or(0.0, |(_, extra)| extra)
        })
        .sum();
    let round_seconds = (seconds_per_probe * probes).max(0.0);
    let rounds_to_settle = rounds_to_settle(unsettled, rounds);
    RoundPlan {
        ttls,
        round_seconds,
        rounds_to_settle,
        seconds_to_settle: rounds_to_settle.map(|n| f64::from(n) * round_seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bestcase::{Increment, OwnCostIntervals};
    use crate::delay::Cost;
    use crate::stats::Interval;
    use proptest::prelude::*;

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
            per_byte_from: Default::default(),
            intervals: Some(OwnCostIntervals {
                blocks: 8,
                confidence: 0.95,
                fixed_ms: iv(own[0].0, own[0].1),
                per_byte_ms: iv(own[1].0, own[1].1),
                answer_per_byte_ms: iv(own[2].0, own[2].1),
            }),
            per_byte_mixes_directions: mixes,
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
}
