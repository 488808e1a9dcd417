//! Fleet verdicts that hold when several hosts are bad.
//!
//! [`super::analyse`] judges each host against the median of the hosts' medians. That
//! yardstick is robust to one bad host in a large fleet, not to several in a small one: in a
//! star of four hosts with one on a 10 Mbit/s link and one on a mismatched link, half the
//! tests involve a bad host, the healthy hosts' own medians fall, and the slow host ended 2.97
//! robust SD below a yardstick of 27.4 Mbit/s, under the threshold (issue 31). Two changes
//! make the verdict hold:
//!
//! * **What a host can reach, not its median.** A fault at a host's own port (a slow link, a
//!   busy CPU, a lossy cable) lowers every test it takes part in; a fault elsewhere lowers only
//!   some of them. So a host's figure is its *reach*, the best rate of all its tests: a
//!   healthy host reaches the fleet's rate as soon as one of its partners is healthy, however
//!   many are not, and a host with a bad port never does. The fleet's yardstick is the upper
//!   quartile of the reaches (the best-connected quarter), which stays at the healthy rate
//!   while fewer than three hosts in four are bad. Where the hosts' link ceilings are known
//!   ([`HostEvidence`]), a pair is also judged against its own capacity, the lower of its two
//!   ends' ceilings, so a fleet of mixed speeds is not called slow for its slow links, and a
//!   host whose link runs far below the fleet's is named with its link as evidence.
//! * **A duplex mismatch by its signature.** The half-duplex end of a mismatched link defers
//!   to the full end's frames and sees late collisions; the full end receives the half end's
//!   frames cut short as CRC errors (seed 003, §8.4, Table 7). Every test of that host then
//!   runs slower in one direction than the other, against every healthy partner, in the same
//!   sense; a pair that is merely asymmetric does not. A host carries the signature when
//!   at least two partners and at least half of its partners show its slower direction below
//!   [`MISMATCH_RATIO`] of the faster, and its best test the slow way is below that share of
//!   its best test the fast way. Rates alone do not make it a mismatch: a port that loses
//!   frames at random can lose them unevenly (issue 31's fleet seed 32, a lossy host named a
//!   mismatch), and has no late collisions and no CRC errors. So where its agent read the
//!   port's counters the host is named a mismatch only with a late collision or a CRC error
//!   counted (and with a late collision counted a milder asymmetry suffices: a correctly
//!   wired port never has one); where nothing was read it is named what the rates show,
//!   [`Fault::AsymmetricHost`], "counters not readable". A mismatch at 100 Mbit/s often loses
//!   so many frames both ways that both directions collapse (measured in the lab: 8.4 and 21
//!   Mbit/s with one partner, 19 and 18 with another, healthy pairs at 94): rates alone then
//!   say only that the host's port loses frames (a slow host whose rates are erratic, not
//!   steady at a lower ceiling), and a slow host with late collisions counted is named a
//!   mismatch.
//! * **A partner's fault is not a host's signature.** Every pair with a mismatched host is
//!   asymmetric, seen from either end: a healthy host whose partners include a mismatched
//!   one and whose one other test ran slow on a loaded machine (the star of issue 31 at load
//!   15-17: 74% one way with 2 of 3 partners) looked mismatched itself. So a host is judged
//!   only by partners no host fault names and whose tests do not all retransmit, the strongest signature is named first and its
//!   pairs leave the others' evidence, and its best test each way must differ, which a
//!   healthy host with one healthy partner never does. A pair shows the signature only beyond
//!   the fleet's own spread: three robust SD of the asymmetry of the pairs between hosts whose
//!   best tests are alike both ways (where at least [`NOISE_PAIRS`] of them were measured),
//!   never more than [`NOISE_CEILING_RATIO`], so that noise can hide a mild mismatch but never
//!   a slow direction at half the other.
//!
//! Pairs are judged last, and a pair whose low rate a host's fault explains is not named
//! again.

use serde::{Deserialize, Serialize};

use super::{Analysis, Finding, PairMeasure, Thresholds, analyse};
use crate::stats::quantile;

/// Slower over faster direction below which a host's pairs carry a mismatch's signature.
pub const MISMATCH_RATIO: f64 = 0.8;
/// The same with a late collision counted at the host.
pub const MISMATCH_RATIO_WITH_COLLISIONS: f64 = 0.9;
/// The most the fleet's own spread may raise the asymmetry a pair must show: however noisy
/// the run, a direction at half the other is a signature.
pub const NOISE_CEILING_RATIO: f64 = 0.5;
/// Pairs between alike hosts needed before their spread sets the margin.
pub const NOISE_PAIRS: usize = 3;
/// Robust SD of the healthy pairs' asymmetry a pair must exceed.
pub const NOISE_SD: f64 = 3.0;
/// The share of hosts whose reach may be bad before the yardstick moves: the upper quartile.
pub const YARDSTICK_QUANTILE: f64 = 0.75;
/// A host whose cleanest test (the one with the fewest retransmissions) still retransmits this
/// share of its segments loses frames at its own port: a healthy host has at least one healthy
/// partner, and a drop-tail queue's overflow costs a test a few segments in a thousand. In the
/// lab a port losing 10% of its frames at 100 Mbit/s retransmitted 10-11% of the segments of
/// every test through it while still running at 83 Mbit/s (89% of the healthy pairs), and the
/// healthy pairs retransmitted none (issue 31's harness, fleet seed 3101).
pub const LOSSY_SHARE: f64 = 0.01;
/// A slow host whose median test reaches this share of its best holds steady: its port runs
/// at a lower rate; below it, its rates are erratic: its port loses frames.
pub const STEADY_SHARE: f64 = 0.85;

/// What is known of a host's own port beside its tests; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostEvidence {
    /// The most its own link carries of a TCP transfer (the envelope of its negotiated speed,
    /// or a lab's configured route), bit/s of payload.
    #[serde(default)]
    pub link_ceiling_bits_per_second: Option<f64>,
    /// Collisions its interface counted over the mesh.
    #[serde(default)]
    pub collisions: Option<u64>,
    /// Late collisions (after the first 64 bytes): never on a correctly wired port.
    #[serde(default)]
    pub late_collisions: Option<u64>,
    /// Frames received with a bad FCS (CRC) or alignment.
    #[serde(default)]
    pub crc_errors: Option<u64>,
}

/// Which of a host's directions is the slow one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowDirection {
    /// What it sends.
    Sending,
    /// What it receives.
    Receiving,
}

/// A fault and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// A host that reaches far less than the fleet in every test (its port, link or CPU).
    SlowHost {
        /// Agent index.
        host: usize,
        /// Its best test, bit/s.
        reach_bits_per_second: f64,
        /// The yardstick: the fleet's upper quartile of reaches, or the host's own best pair
        /// capacity where link ceilings are known, or (with a slow link) the fleet's median
        /// link ceiling, bit/s.
        yardstick_bits_per_second: f64,
        /// Its own link's ceiling, when known and far below the fleet's: the cause.
        slow_link_bits_per_second: Option<f64>,
        /// Its tests that finished.
        tests: usize,
        /// Whether its tests hold steady near its reach (the median at least
        /// [`STEADY_SHARE`] of it): a port or link at a lower rate. Erratic rates below its
        /// reach are a port that loses frames (a duplex mismatch or a bad cable: its
        /// collision and CRC counters tell them apart).
        steady: bool,
    },
    /// A host whose tests all run slower one way: a duplex mismatch on its link.
    DuplexMismatch {
        /// Agent index.
        host: usize,
        /// Its slow direction.
        slow: SlowDirection,
        /// Median over its partners of slower / faster direction.
        median_ratio: f64,
        /// Partners whose pair shows it, and partners with both directions measured.
        pairs_showing: usize,
        /// See `pairs_showing`.
        pairs: usize,
        /// The counters its agent read, when it read them.
        collisions: Option<u64>,
        /// See `collisions`.
        late_collisions: Option<u64>,
        /// See `collisions`.
        crc_errors: Option<u64>,
    },
    /// A host whose tests all run slower one way, where its port's counters could not be read:
    /// a duplex mismatch's rates, but also those of a port that loses frames unevenly.
    AsymmetricHost {
        /// Agent index.
        host: usize,
        /// Its slow direction.
        slow: SlowDirection,
        /// Median over its partners of slower / faster direction.
        median_ratio: f64,
        /// Partners whose pair shows it, and partners with both directions measured.
        pairs_showing: usize,
        /// See `pairs_showing`.
        pairs: usize,
    },
    /// A host every test of which retransmits: its port, cable or link loses frames.
    LossyHost {
        /// Agent index.
        host: usize,
        /// The smallest retransmitted share of its tests (its cleanest test).
        cleanest_retransmit_share: f64,
        /// The median share of its tests.
        median_retransmit_share: f64,
        /// Its tests with a share.
        tests: usize,
        /// Frames with a bad FCS (CRC) its port received, when read.
        crc_errors: Option<u64>,
    },
    /// A test far below what both its hosts reach with others (and below its capacity).
    BadPair {
        /// Source.
        source: usize,
        /// Destination.
        destination: usize,
        /// Its rate, bit/s.
        rate_bits_per_second: f64,
        /// The lower of the two hosts' reaches without this pair (and of the pair's capacity,
        /// where known), bit/s.
        expected_bits_per_second: f64,
    },
    /// One direction far below the other, on a pair no host's mismatch explains.
    AsymmetricPair {
        /// The faster direction's source.
        fast_source: usize,
        /// The faster direction's destination.
        fast_destination: usize,
        /// The faster direction's rate.
        fast_bits_per_second: f64,
        /// The other direction's rate.
        slow_bits_per_second: f64,
    },
    /// A latency finding of [`analyse`] (a slow-answering host, a high-latency pair).
    Latency {
        /// The finding (its own `kind` names which).
        finding: Finding,
    },
}

impl Fault {
    /// The agents the fault names.
    pub fn hosts(&self) -> Vec<usize> {
        match self {
            Fault::SlowHost { host, .. }
            | Fault::DuplexMismatch { host, .. }
            | Fault::AsymmetricHost { host, .. }
            | Fault::LossyHost { host, .. } => vec![*host],
            Fault::BadPair {
                source,
                destination,
                ..
            } => vec![*source, *destination],
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                ..
            } => vec![*fast_source, *fast_destination],
            Fault::Latency { finding } => finding.hosts(),
        }
    }
}

/// The fleet's figures and faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Each host's best test, bit/s (NaN: none finished).
    pub reach_bits_per_second: Vec<f64>,
    /// The fleet's yardstick: the upper quartile of the reaches (NaN under three hosts).
    pub yardstick_bits_per_second: f64,
    /// The faults, host faults first.
    pub faults: Vec<Fault>,
    /// The medians and latency figures of [`analyse`].
    pub analysis: Analysis,
}

fn rate_of(tests: &[PairMeasure], s: usize, d: usize) -> Option<f64> {
    tests
        .iter()
        .filter(|m| m.source == s && m.destination == d)
        .filter_map(|m| m.rate_bits_per_second)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .reduce(f64::max)
}

/// The best rate of `h`'s tests, leaving out its tests with `skip`.
fn reach(tests: &[PairMeasure], h: usize, skip: Option<usize>) -> f64 {
    tests
        .iter()
        .filter(|m| m.source == h || m.destination == h)
        .filter(|m| skip.is_none_or(|o| m.source != o && m.destination != o))
        .filter_map(|m| m.rate_bits_per_second)
        .filter(|v| v.is_finite())
        .fold(f64::NAN, f64::max)
}

/// The retransmitted shares of `h`'s tests (both directions).
fn retransmit_shares(tests: &[PairMeasure], h: usize) -> Vec<f64> {
    tests
        .iter()
        .filter(|m| m.source == h || m.destination == h)
        .filter_map(|m| m.retransmit_share)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect()
}

/// The share of `h`'s cleanest test, when at least two of its tests have one.
fn cleanest_share(tests: &[PairMeasure], h: usize) -> Option<f64> {
    let shares = retransmit_shares(tests, h);
    (shares.len() >= 2).then(|| shares.iter().copied().fold(f64::INFINITY, f64::min))
}

/// The median over `h`'s partners of its sending rate over its receiving rate.
fn direction_ratio(tests: &[PairMeasure], h: usize) -> f64 {
    let partners = tests
        .iter()
        .filter(|m| m.source == h)
        .map(|m| m.destination)
        .collect::<Vec<_>>();
    let logs: Vec<f64> = partners
        .into_iter()
        .filter_map(|p| Some((rate_of(tests, h, p)? / rate_of(tests, p, h)?).ln()))
        .filter(|l| l.is_finite())
        .collect();
    crate::stats::median(&logs).exp()
}

fn slow_direction(tests: &[PairMeasure], h: usize) -> SlowDirection {
    if direction_ratio(tests, h) < 1.0 {
        SlowDirection::Sending
    } else {
        SlowDirection::Receiving
    }
}

/// A host's mismatch signature against the partners not in `skip`.
struct Signature {
    /// Median over those partners of ln(sent / received).
    bias: f64,
    /// Partners showing the slow direction beyond the margin, and partners measured.
    showing: usize,
    pairs: usize,
}

/// The natural log of each pair's two directions, `h`'s sending over its receiving, against
/// every partner not in `skip`.
pub fn direction_logs(n: usize, tests: &[PairMeasure], h: usize, skip: &[usize]) -> Vec<f64> {
    (0..n)
        .filter(|&p| p != h && !skip.contains(&p))
        .filter_map(|p| Some((rate_of(tests, h, p)?, rate_of(tests, p, h)?)))
        .filter(|&(out, back)| out > 0.0 && back > 0.0)
        .map(|(out, back)| (out / back).ln())
        .filter(|l| l.is_finite())
        .collect()
}

/// The best test `h` sent and the best it received, against partners not in `skip`.
fn best_each_way(n: usize, tests: &[PairMeasure], h: usize, skip: &[usize]) -> (f64, f64) {
    let best = |pairs: &mut dyn Iterator<Item = (usize, usize)>| {
        pairs
            .filter_map(|(s, d)| rate_of(tests, s, d))
            .fold(f64::NAN, f64::max)
    };
    let partners = || (0..n).filter(move |&p| p != h && !skip.contains(&p));
    (
        best(&mut partners().map(|p| (h, p))),
        best(&mut partners().map(|p| (p, h))),
    )
}

/// The log asymmetry a pair must show: `base`'s, or the fleet's own spread where that is
/// wider, never beyond [`NOISE_CEILING_RATIO`]'s.
pub fn margin(base: f64, noise: Option<f64>) -> f64 {
    let base = -base.ln();
    noise.map_or(base, |sd| {
        base.max(NOISE_SD * sd).min(-NOISE_CEILING_RATIO.ln())
    })
}

/// The robust SD of the asymmetry of pairs between hosts that are alike both ways (their best
/// test sent and best received within [`MISMATCH_RATIO`] of each other) and not in `named`
/// (a host fault names them, or every test of theirs retransmits): the run's own noise, from at least [`NOISE_PAIRS`] pairs. For a normal law centred
/// on zero the median of |x| is 0.6745 SD.
pub fn asymmetry_noise(n: usize, tests: &[PairMeasure], named: &[usize]) -> Option<f64> {
    let alike: Vec<usize> = (0..n)
        .filter(|h| !named.contains(h))
        .filter(|&h| {
            let (sent, received) = best_each_way(n, tests, h, named);
            sent > 0.0 && received > 0.0 && (sent / received).ln().abs() < -MISMATCH_RATIO.ln()
        })
        .collect();
    let logs: Vec<f64> = alike
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| alike[i + 1..].iter().map(move |&b| (a, b)))
        .filter_map(|(a, b)| Some((rate_of(tests, a, b)?, rate_of(tests, b, a)?)))
        .filter(|&(x, y)| x > 0.0 && y > 0.0)
        .map(|(x, y)| (x / y).ln().abs())
        .filter(|l| l.is_finite())
        .collect();
    (logs.len() >= NOISE_PAIRS).then(|| crate::stats::median(&logs) / 0.6745)
}

/// `h`'s mismatch signature beyond `margin` (a log ratio), judged against the partners not
/// in `skip`: at least two partners and half of them slower the same way, the median too,
/// and its best test the slow way below its best the fast way.
fn signature(
    n: usize,
    tests: &[PairMeasure],
    h: usize,
    skip: &[usize],
    margin: f64,
) -> Option<Signature> {
    let logs = direction_logs(n, tests, h, skip);
    if logs.len() < 2 {
        return None;
    }
    let bias = crate::stats::median(&logs);
    let showing = logs
        .iter()
        .filter(|&&l| l.signum() == bias.signum() && l.abs() >= margin)
        .count();
    // A host with one healthy partner reaches the fleet's rate both ways with it.
    let (sent, received) = best_each_way(n, tests, h, skip);
    let best = (sent / received).ln();
    (bias.abs() >= margin
        && showing >= 2
        && 2 * showing >= logs.len()
        && best.signum() == bias.signum()
        && best.abs() >= margin)
        .then_some(Signature {
            bias,
            showing,
            pairs: logs.len(),
        })
}

/// Judges a mesh of `n` agents from its finished tests and what is known of each host's port
/// (`evidence[h]`, may be shorter than `n` or empty).
pub fn judge(
    n: usize,
    tests: &[PairMeasure],
    evidence: &[HostEvidence],
    t: &Thresholds,
) -> Judgement {
    let none = HostEvidence::default();
    let ev = |h: usize| evidence.get(h).unwrap_or(&none);
    let ceiling = |h: usize| {
        ev(h)
            .link_ceiling_bits_per_second
            .filter(|c| c.is_finite() && *c > 0.0)
    };
    let reaches: Vec<f64> = (0..n).map(|h| reach(tests, h, None)).collect();
    let finite: Vec<f64> = reaches.iter().copied().filter(|v| v.is_finite()).collect();
    let yardstick = if finite.len() >= 3 {
        quantile(&finite, YARDSTICK_QUANTILE)
    } else {
        f64::NAN
    };
    let ceilings: Vec<f64> = (0..n).filter_map(ceiling).collect();
    // Link speeds are configuration, not measurement: most ports of a fleet are alike, and a
    // port far below the typical one (the median) negotiated down or sits on the wrong
    // switch. A fleet of mixed speeds has several typical ones, so the median, not the upper
    // quartile, is the reference.
    let fleet_ceiling = (ceilings.len() >= 3).then(|| crate::stats::median(&ceilings));
    let mut faults = Vec::new();

    // Slow hosts.
    for (h, &r) in reaches.iter().enumerate().take(n) {
        if !r.is_finite() {
            continue;
        }
        let tests_done = tests
            .iter()
            .filter(|m| m.source == h || m.destination == h)
            .filter(|m| m.rate_bits_per_second.is_some_and(f64::is_finite))
            .count();
        // Its own link far below the fleet's: named with the link as the cause.
        let slow_link = match (ceiling(h), fleet_ceiling) {
            (Some(c), Some(f)) if c < t.low_ratio * f => Some(c),
            _ => None,
        };
        // What it could reach: with every partner's ceiling known, its best pair's capacity;
        // otherwise the fleet's yardstick.
        let capacity = ceiling(h).and_then(|mine| {
            (0..n)
                .filter(|&p| p != h)
                .map(|p| ceiling(p).map(|c| c.min(mine)))
                .collect::<Option<Vec<f64>>>()
                .and_then(|c| c.into_iter().reduce(f64::max))
        });
        let judged_by = capacity.unwrap_or(yardstick);
        let underperforms = judged_by.is_finite() && r < t.low_ratio * judged_by;
        let counted = ev(h).late_collisions.is_some_and(|c| c > 0);
        // A port that loses frames is named by its retransmissions below (after a mismatch,
        // which loses frames too, had its chance), unless its own link explains the rate.
        let lossy = cleanest_share(tests, h).is_some_and(|s| s >= LOSSY_SHARE);
        if (slow_link.is_some() || underperforms) && counted {
            // Late collisions at a port that is slow: the half end of a mismatched link.
            let e = ev(h);
            faults.push(Fault::DuplexMismatch {
                host: h,
                slow: slow_direction(tests, h),
                median_ratio: direction_ratio(tests, h),
                pairs_showing: 0,
                pairs: tests_done,
                collisions: e.collisions,
                late_collisions: e.late_collisions,
                crc_errors: e.crc_errors,
            });
        } else if slow_link.is_some() || (underperforms && !lossy) {
            let rates: Vec<f64> = tests
                .iter()
                .filter(|m| m.source == h || m.destination == h)
                .filter_map(|m| m.rate_bits_per_second)
                .filter(|v| v.is_finite())
                .collect();
            faults.push(Fault::SlowHost {
                steady: crate::stats::median(&rates) >= STEADY_SHARE * r,
                host: h,
                reach_bits_per_second: r,
                yardstick_bits_per_second: if slow_link.is_some() {
                    fleet_ceiling.unwrap_or(yardstick)
                } else {
                    judged_by
                },
                slow_link_bits_per_second: slow_link,
                tests: tests_done,
            });
        }
    }

    // Duplex mismatches: one direction slower against most partners, in the same sense,
    // strongest first, each named host leaving the others' evidence.
    let mut named: Vec<usize> = faults.iter().flat_map(Fault::hosts).collect();
    // A port that loses frames makes its pairs uneven too: no evidence about its partners,
    // nor about the fleet's noise.
    let lossy: Vec<usize> = (0..n)
        .filter(|&h| cleanest_share(tests, h).is_some_and(|s| s >= LOSSY_SHARE))
        .collect();
    let unsound: Vec<usize> = named.iter().chain(&lossy).copied().collect();
    let noise = asymmetry_noise(n, tests, &unsound);
    let mut candidates: Vec<usize> = (0..n).filter(|h| !named.contains(h)).collect();
    while let Some((i, sig)) = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, &h)| {
            let e = ev(h);
            let late = e.late_collisions.is_some_and(|c| c > 0);
            let base = if late {
                MISMATCH_RATIO_WITH_COLLISIONS
            } else {
                MISMATCH_RATIO
            };
            let skip: Vec<usize> = named.iter().chain(&lossy).copied().collect();
            let sig = signature(n, tests, h, &skip, margin(base, noise))?;
            // Counters read and clean: the rates' asymmetry is not a mismatch's.
            let read = e.late_collisions.is_some() || e.crc_errors.is_some();
            let counted = late || e.crc_errors.is_some_and(|c| c > 0);
            (!read || counted).then_some((i, sig))
        })
        .max_by(|a, b| a.1.bias.abs().total_cmp(&b.1.bias.abs()))
    {
        let h = candidates.remove(i);
        named.push(h);
        let e = ev(h);
        let slow = if sig.bias < 0.0 {
            SlowDirection::Sending
        } else {
            SlowDirection::Receiving
        };
        let median_ratio = (-sig.bias.abs()).exp();
        faults.push(if e.late_collisions.is_some() || e.crc_errors.is_some() {
            Fault::DuplexMismatch {
                host: h,
                slow,
                median_ratio,
                pairs_showing: sig.showing,
                pairs: sig.pairs,
                collisions: e.collisions,
                late_collisions: e.late_collisions,
                crc_errors: e.crc_errors,
            }
        } else {
            Fault::AsymmetricHost {
                host: h,
                slow,
                median_ratio,
                pairs_showing: sig.showing,
                pairs: sig.pairs,
            }
        });
    }
    // Lossy ports: every test through them retransmits.
    for h in 0..n {
        if faults.iter().any(|f| f.hosts() == [h]) {
            continue;
        }
        let Some(cleanest) = cleanest_share(tests, h).filter(|s| *s >= LOSSY_SHARE) else {
            continue;
        };
        let shares = retransmit_shares(tests, h);
        faults.push(Fault::LossyHost {
            host: h,
            cleanest_retransmit_share: cleanest,
            median_retransmit_share: crate::stats::median(&shares),
            tests: shares.len(),
            crc_errors: ev(h).crc_errors,
        });
    }
    let slow: Vec<usize> = faults
        .iter()
        .filter_map(|f| match f {
            Fault::SlowHost { host, .. } | Fault::LossyHost { host, .. } => Some(*host),
            _ => None,
        })
        .collect();
    let mismatched: Vec<usize> = faults
        .iter()
        .filter_map(|f| match f {
            Fault::DuplexMismatch { host, .. } | Fault::AsymmetricHost { host, .. } => Some(*host),
            _ => None,
        })
        .collect();
    let explained = |a: usize, b: usize| {
        slow.contains(&a) || slow.contains(&b) || mismatched.contains(&a) || mismatched.contains(&b)
    };

    // Bad pairs: below what both hosts reach with the others, and below the pair's capacity.
    for m in tests {
        let Some(rate) = m.rate_bits_per_second.filter(|v| v.is_finite()) else {
            continue;
        };
        if explained(m.source, m.destination) {
            continue;
        }
        let mut expected = reach(tests, m.source, Some(m.destination)).min(reach(
            tests,
            m.destination,
            Some(m.source),
        ));
        if let (Some(a), Some(b)) = (ceiling(m.source), ceiling(m.destination)) {
            expected = expected.min(a.min(b));
        }
        if expected.is_finite() && rate < t.low_ratio * expected {
            faults.push(Fault::BadPair {
                source: m.source,
                destination: m.destination,
                rate_bits_per_second: rate,
                expected_bits_per_second: expected,
            });
        }
    }
    // Asymmetric pairs no fault at an end explains (a port that loses frames loses them
    // unevenly between the directions).
    for a in 0..n {
        for b in a + 1..n {
            if explained(a, b) {
                continue;
            }
            let (Some(ab), Some(ba)) = (rate_of(tests, a, b), rate_of(tests, b, a)) else {
                continue;
            };
            let (fast, slow_rate, fs, fd) = if ab >= ba {
                (ab, ba, a, b)
            } else {
                (ba, ab, b, a)
            };
            if fast > 0.0 && slow_rate < t.asymmetry_ratio * fast {
                faults.push(Fault::AsymmetricPair {
                    fast_source: fs,
                    fast_destination: fd,
                    fast_bits_per_second: fast,
                    slow_bits_per_second: slow_rate,
                });
            }
        }
    }
    let analysis = analyse(n, tests, t);
    faults.extend(
        analysis
            .findings
            .iter()
            .filter(|f| {
                matches!(
                    f,
                    Finding::SlowLatencyHost { .. } | Finding::HighLatencyPair { .. }
                )
            })
            .cloned()
            .map(|finding| Fault::Latency { finding }),
    );
    Judgement {
        reach_bits_per_second: reaches,
        yardstick_bits_per_second: yardstick,
        faults,
        analysis,
    }
}
