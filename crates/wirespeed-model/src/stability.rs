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
//! truth; whole, 69 met it, with 349 of 355 within (bench/results/harness-random-labs.md).

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
    /// The figure that sets `rounds_to_settle`: the unsettled one widest against its
    /// tolerance (None when nothing is unsettled; older documents: none recorded).
    #[serde(default)]
    pub widest: Option<Unsettled>,
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
        widest: widest(unsettled),
    }
}

/// The unsettled figure widest against its tolerance (one without an interval first).
pub fn widest(unsettled: &[Unsettled]) -> Option<Unsettled> {
    let ratio = |u: &Unsettled| {
        u.half_width_ms
            .filter(|w| w.is_finite())
            .map_or(f64::INFINITY, |w| w / u.tolerance_ms)
    };
    unsettled
        .iter()
        .copied()
        .max_by(|a, b| ratio(a).total_cmp(&ratio(b)))
}

/// The budget of `--until-stable`: the flag's, or with the bare flag one planned from the path
/// after the first round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The seconds the rounds may take.
    pub seconds: f64,
    /// Whether `seconds` was planned from the path (the bare flag), not given.
    pub from_path: bool,
    /// What the path asked for after the first round: its seconds plus the plan's
    /// `seconds_to_settle` (None: a figure had no interval yet, or nothing was unsettled).
    pub path_seconds: Option<f64>,
    /// The most it could be: the flag's budget, or `--max-time` with the bare flag.
    pub cap_seconds: f64,
    /// The first round's plan, the reason for `path_seconds`.
    pub first_plan: Option<RoundPlan>,
}

/// The budget after the first round (`first_seconds` long, planned `plan`): with `from_path`,
/// what the path asks for (the first round plus the time its widest figure projects to
/// settle, at least one more round), at most `cap_seconds`; else `cap_seconds`, with what the
/// path asked for beside it.
pub fn plan_budget(
    first_seconds: f64,
    plan: Option<&RoundPlan>,
    cap_seconds: f64,
    from_path: bool,
) -> Budget {
    let path_seconds = plan.and_then(|p| {
        p.seconds_to_settle
            .map(|s| first_seconds + s.max(p.round_seconds))
    });
    let seconds = match (from_path, path_seconds) {
        (true, Some(path)) => path.min(cap_seconds),
        _ => cap_seconds,
    };
    Budget {
        seconds,
        from_path,
        path_seconds,
        cap_seconds,
        first_plan: plan.cloned(),
    }
}
