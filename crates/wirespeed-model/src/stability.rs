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
