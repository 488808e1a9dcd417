//! What `probe` concludes, typed: the warnings that say which figures to trust less (a silent
//! hop, a route that changed, probes too big for a link, fits left out, user-space clocks) and
//! the verdict on a step in a hop's minimums (the seed's mbuf-to-cluster hump). A script acts on
//! the kind and its figures; the sentence is the `Display`.

use std::fmt;
use std::net::IpAddr;

use serde::Serialize;
use wirespeed_model::stability::{Budget, Figure, RoundPlan, StopReason, Unsettled};
use wirespeed_model::units::format_seconds;
use wirespeed_net::probe::{ReplyKind, Sample};
use wirespeed_report::Severity;

/// One finding of a probe run. Kinds are stable once released.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum ProbeFinding {
    /// Warning: no ICMP time exceeded came back at this TTL; the next hop's cost includes it.
    HopSilent { ttl: u8 },
    /// Warning: `--hops` ended at `--max-ttl` with routers still answering.
    TargetNotReached { target: IpAddr, max_ttl: u8 },
    /// Warning: probes from `smallest_bytes` up drew "packet too big"; they are left out.
    ProbesTooBig {
        probes: usize,
        smallest_bytes: usize,
        mtu_bytes: u32,
        reported_by: Vec<IpAddr>,
    },
    /// Warning: one TTL answered from several addresses: the route changed or is balanced.
    MixedResponders {
        hop: String,
        responders: Vec<IpAddr>,
    },
    /// Warning: the hop rate-limits its ICMP answers (the model's reason, as a sentence).
    HopRateLimited { hop: String, reason: String },
    /// Warning: the hop has no fit (the model's reason).
    HopNotFitted { hop: String, reason: String },
    /// Warning: `--max-time` ended the run before every probe was sent.
    StoppedAtMaxTime { max_time_seconds: f64 },
    /// Warning: the kernel did not stamp every answer, so the user-space clock was used.
    UserSpaceTimestamps {
        kernel_stamped_answers: usize,
        answers: usize,
    },
    /// Warning: `--until-width` rounds ran out with intervals still too wide.
    IntervalsNotConverged { rounds: u32 },
    /// `--until-stable`: what ended the rounds; a verdict when every own cost the probe
    /// separates was within its tolerance, else a warning naming those that were not.
    RoundsStopped {
        rounds: u32,
        elapsed_seconds: f64,
        budget_seconds: f64,
        stopped_by: StopReason,
        unsettled: Vec<Unsettled>,
        /// How the rounds were planned from the path (absent in a run cut before a plan).
        plan: Option<RoundPlan>,
        /// The budget, planned after the first round (absent in a run cut before it); boxed,
        /// as the largest of the findings.
        budget: Option<Box<Budget>>,
    },
    /// The hop's minimums step between two sizes: a change of buffering strategy.
    BufferingStep {
        hop: String,
        jump_seconds: f64,
        between_bytes: [f64; 2],
        f_statistic: f64,
    },
}

impl ProbeFinding {
    /// Whether this is a verdict on the result or a warning about trusting it.
    #[doc(hidden)]
    pub fn severity(&self) -> Severity {
        match self {
            ProbeFinding::BufferingStep { .. } => Severity::Verdict,
            ProbeFinding::RoundsStopped {
                stopped_by: StopReason::Settled,
                ..
            } => Severity::Verdict,
            _ => Severity::Warning,
        }
    }
}

/// How the budget was used: "rounds planned from the path: the next would probe hops 2, 3
/// (about 12.4 s at the last round's pace); settling would take about 3 more (37 s)".
fn plan_text(p: &RoundPlan) -> String {
    let hops: Vec<String> = p.ttls.iter().map(u8::to_string).collect();
    let settle = match (p.rounds_to_settle, p.seconds_to_settle) {
        (Some(n), Some(s)) => format!(
            "settling them would take about {n} more such round(s), {}, if the intervals narrow as one over the root of the probes",
            format_seconds(s)
        ),
        _ => "a figure has no interval yet, so no estimate of what settling takes".to_string(),
    };
    format!(
        "rounds planned from the path: the next would probe hop(s) {} only (about {} at the last round's pace); {settle}",
        hops.join(", "),
        format_seconds(p.round_seconds)
    )
}

/// What the budget was and why: "budget planned from the path after round 1: 160 s (its
/// widest figure, hop 3 per byte +-56.0 ns/B (tolerance 21.2 ns/B), projects about 7 more
/// round(s) of 20 s ...)".
#[doc(hidden)]
pub fn budget_text(b: &Budget, stopped_short: bool) -> String {
    let why = b.first_plan.as_ref().and_then(|p| {
        let widest = p.widest.as_ref()?;
        let rounds = p.rounds_to_settle?;
        Some(format!(
            "its widest figure, {}, projects about {rounds} more round(s) of {} if the intervals narrow as one over the root of the probes",
            unsettled_text(std::slice::from_ref(widest)),
            format_seconds(p.round_seconds)
        ))
    });
    let why = why.unwrap_or_else(|| {
        match b.first_plan.as_ref().and_then(|p| p.rounds_to_settle) {
            Some(0) => "nothing was unsettled after it",
            _ => "a figure had no interval yet",
        }
        .to_string()
    });
    match (b.from_path, b.path_seconds) {
        (true, Some(path)) if path > b.cap_seconds => format!(
            "budget planned from the path after round 1: {} asked for ({why}), capped by --max-time {}",
            format_seconds(path),
            format_seconds(b.cap_seconds)
        ),
        (true, Some(path)) => format!(
            "budget planned from the path after round 1: {} ({why})",
            format_seconds(path)
        ),
        (true, None) => format!(
            "no budget could be planned from the path after round 1 ({why}): --max-time {}",
            format_seconds(b.cap_seconds)
        ),
        (false, Some(path)) => format!(
            "the path asked for about {} after round 1 ({why}); the budget given was {}{}",
            format_seconds(path),
            format_seconds(b.cap_seconds),
            if stopped_short && path > b.cap_seconds {
                ", which stopped short of it"
            } else {
                ""
            }
        ),
        (false, None) => format!("the budget given was {}", format_seconds(b.cap_seconds)),
    }
}

/// At most this many unsettled figures are named; the rest are counted.
const UNSETTLED_NAMED: usize = 6;

/// "hop 3 answer per byte +-41.2 ns/B (tolerance 12.1 ns/B), ...".
fn unsettled_text(unsettled: &[Unsettled]) -> String {
    let named: Vec<String> = unsettled
        .iter()
        .take(UNSETTLED_NAMED)
        .map(|u| {
            let (scale, unit) = match u.figure {
                Figure::Fixed => (1e3, "us"),
                Figure::PerByte | Figure::AnswerPerByte => (1e6, "ns/B"),
            };
            let width = u.half_width_ms.map_or("no interval".to_string(), |w| {
                format!("+-{:.1} {unit}", w * scale)
            });
            format!(
                "hop {} {} {width} (tolerance {:.1} {unit})",
                u.ttl,
                u.figure,
                u.tolerance_ms * scale
            )
        })
        .collect();
    let more = unsettled.len().saturating_sub(UNSETTLED_NAMED);
    if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    }
}

fn list(addresses: &[IpAddr]) -> String {
    addresses
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for ProbeFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeFinding::HopSilent { ttl } => write!(
                f,
                "hop {ttl} did not answer (no ICMP time exceeded: the router filters or rate-limits it); it is skipped and the next hop's cost includes it"
            ),
            ProbeFinding::TargetNotReached { target, max_ttl } => write!(
                f,
                "{target} was not reached within --max-ttl {max_ttl}: routers still answer there, so the hops before it are measured; raise --max-ttl to reach it"
            ),
            ProbeFinding::ProbesTooBig {
                probes,
                smallest_bytes,
                mtu_bytes,
                reported_by,
            } => write!(
                f,
                "{probes} probes of {smallest_bytes} bytes and more were too big for a link on the way ({} reported MTU {mtu_bytes}): they are left out of the fits; keep --sizes at or below {mtu_bytes}",
                list(reported_by)
            ),
            ProbeFinding::MixedResponders { hop, responders } => write!(
                f,
                "{hop} answered from {} addresses ({}): the route changed or is load-balanced during the run, so this hop's fit and its difference from the previous hop mix paths",
                responders.len(),
                list(responders)
            ),
            ProbeFinding::HopRateLimited { hop, reason }
            | ProbeFinding::HopNotFitted { hop, reason } => write!(f, "{hop}: {reason}"),
            ProbeFinding::StoppedAtMaxTime { max_time_seconds } => write!(
                f,
                "stopped after --max-time {}: not every probe was sent",
                format_seconds(*max_time_seconds)
            ),
            ProbeFinding::UserSpaceTimestamps {
                kernel_stamped_answers,
                answers,
            } => write!(
                f,
                "kernel timestamps arrived for {kernel_stamped_answers} of {answers} answers; every fit uses CLOCK_MONOTONIC around the syscalls instead, which adds the host's system-call cost to the fixed part"
            ),
            ProbeFinding::IntervalsNotConverged { rounds } => write!(
                f,
                "--until-width: the intervals were still wider than asked after {rounds} round(s); the result is what was measured"
            ),
            ProbeFinding::RoundsStopped {
                rounds,
                elapsed_seconds,
                budget_seconds,
                stopped_by,
                unsettled,
                plan,
                budget,
            } => {
                write!(
                    f,
                    "--until-stable: stopped after {rounds} round(s), {}: ",
                    format_seconds(*elapsed_seconds)
                )?;
                // A run settled by its first round spent no budget: nothing to say of it.
                let spent = *rounds > 1 || *stopped_by != StopReason::Settled;
                let budget = budget
                    .as_ref()
                    .filter(|_| spent)
                    .map_or(String::new(), |b| {
                        format!("; {}", budget_text(b, *stopped_by == StopReason::Budget))
                    });
                match stopped_by {
                    StopReason::Settled => {
                        return write!(
                            f,
                            "every own cost the probe separates is known within its tolerance (fixed 30 us, per byte 2%, answer per byte 5%) across independent stretches of the run{budget}"
                        );
                    }
                    StopReason::Budget => write!(
                        f,
                        "the next round would not end within the budget of {}",
                        format_seconds(*budget_seconds)
                    )?,
                    StopReason::Rounds => write!(f, "the most rounds a run sends")?,
                    StopReason::Cut => write!(
                        f,
                        "the probes stopped (--max-time, an interrupt or no answers)"
                    )?,
                }
                write!(
                    f,
                    "; not measured precisely enough to judge by its tolerance: {}",
                    unsettled_text(unsettled)
                )?;
                if let Some(p) = plan {
                    write!(f, "; {}", plan_text(p))?;
                }
                f.write_str(&budget)
            }
            ProbeFinding::BufferingStep {
                hop,
                jump_seconds,
                between_bytes,
                f_statistic,
            } => write!(
                f,
                "{hop}: the minimums step by {:+.4} ms between {} and {} bytes crossed (F = {f_statistic:.1}, beyond the largest a path without a step gives at any size of any hop, and again in the second half of the probes): a change of buffering strategy, like the seed's mbuf-to-cluster hump; the single line averages over it",
                jump_seconds * 1e3,
                between_bytes[0],
                between_bytes[1],
            ),
        }
    }
}

/// The probes a link on the way refused as too big, if any: they are left out of the fits.
#[doc(hidden)]
pub fn too_big(samples: &[Sample]) -> Option<ProbeFinding> {
    let big: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.reply == ReplyKind::TooBig)
        .collect();
    let smallest = big.iter().map(|s| s.sent_bytes).min()?;
    let mtu = big.iter().filter_map(|s| s.too_big_mtu).min().unwrap_or(0);
    let mut by: Vec<IpAddr> = big.iter().filter_map(|s| s.responder).collect();
    by.sort_unstable();
    by.dedup();
    Some(ProbeFinding::ProbesTooBig {
        probes: big.len(),
        smallest_bytes: smallest,
        mtu_bytes: mtu,
        reported_by: by,
    })
}

/// A warning when the probes of one TTL were answered by more than one address.
#[doc(hidden)]
pub fn mixed_responders(samples: &[Sample], ttl: u8, name: &str) -> Option<ProbeFinding> {
    let mut seen: Vec<IpAddr> = samples
        .iter()
        .filter(|s| s.ttl == ttl && s.reply != ReplyKind::Lost)
        .filter_map(|s| s.responder)
        .collect();
    seen.sort_unstable();
    seen.dedup();
    (seen.len() > 1).then(|| ProbeFinding::MixedResponders {
        hop: name.to_string(),
        responders: seen,
    })
}
