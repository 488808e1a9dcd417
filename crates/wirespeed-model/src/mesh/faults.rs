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
//!   sense; a pair that is merely asymmetric does not. A host is named when at least two
//!   partners and at least half of its partners show its slower direction below
//!   [`MISMATCH_RATIO`] of the faster, with the collision and CRC counters its agent read
//!   beside it (and with a late collision counted, a milder asymmetry suffices: a correctly
//!   wired port never has one). A mismatch at 100 Mbit/s often loses so many frames both
//!   ways that both directions collapse (measured in the lab: 8.4 and 21 Mbit/s with one
//!   partner, 19 and 18 with another, healthy pairs at 94): rates alone then say only that
//!   the host's port loses frames (a slow host whose rates are erratic, not steady at a
//!   lower ceiling), and a slow host with late collisions counted is named a mismatch.
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

    // Duplex mismatches: one direction slower against most partners, in the same sense.
    for h in 0..n {
        if faults
            .iter()
            .any(|f| matches!(f, Fault::DuplexMismatch { host, .. } if *host == h))
        {
            continue;
        }
        let mut logs = Vec::new();
        for p in (0..n).filter(|&p| p != h) {
            if let (Some(out), Some(back)) = (rate_of(tests, h, p), rate_of(tests, p, h))
                && out > 0.0
                && back > 0.0
            {
                logs.push((out / back).ln());
            }
        }
        if logs.len() < 2 {
            continue;
        }
        let e = ev(h);
        let late = e.late_collisions.is_some_and(|c| c > 0);
        let ratio = if late {
            MISMATCH_RATIO_WITH_COLLISIONS
        } else {
            MISMATCH_RATIO
        };
        let bias = crate::stats::median(&logs);
        let sign = bias.signum();
        let showing = logs
            .iter()
            .filter(|&&l| l.signum() == sign && l.abs() >= -ratio.ln())
            .count();
        if bias.abs() >= -ratio.ln() && showing >= 2 && 2 * showing >= logs.len() {
            faults.push(Fault::DuplexMismatch {
                host: h,
                slow: if bias < 0.0 {
                    SlowDirection::Sending
                } else {
                    SlowDirection::Receiving
                },
                median_ratio: (-bias.abs()).exp(),
                pairs_showing: showing,
                pairs: logs.len(),
                collisions: e.collisions,
                late_collisions: e.late_collisions,
                crc_errors: e.crc_errors,
            });
        }
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
            Fault::DuplexMismatch { host, .. } => Some(*host),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_that_loses_frames_is_named_by_its_retransmissions_not_its_rate() {
        // Issue 31's fleet seed 3101 (rates in Mbit/s, shares of segments retransmitted):
        // h5's port loses 10% of its frames and still runs at 83; h3 is on a 10 Mbit/s link.
        let rate = |s: usize, d: usize| match (s, d) {
            (2, _) | (_, 2) => 9.4e6,
            (4, _) | (_, 4) => 83e6,
            _ => 93.6e6,
        };
        let share = |s: usize, d: usize| if s == 4 || d == 4 { 0.11 } else { 0.0 };
        let tests: Vec<PairMeasure> = (0..5)
            .flat_map(|s| (0..5).filter(move |&d| d != s).map(move |d| (s, d)))
            .map(|(s, d)| PairMeasure {
                source: s,
                destination: d,
                rate_bits_per_second: Some(rate(s, d)),
                rtt_seconds: None,
                rtt_behind_queue: false,
                retransmit_share: Some(share(s, d)),
            })
            .collect();
        let j = judge(5, &tests, &[], &Thresholds::default());
        let named: Vec<(usize, &str)> = j
            .faults
            .iter()
            .map(|f| {
                let kind = match f {
                    Fault::SlowHost { .. } => "slow",
                    Fault::LossyHost { .. } => "lossy",
                    _ => "other",
                };
                (f.hosts()[0], kind)
            })
            .collect();
        assert_eq!(named, vec![(2, "slow"), (4, "lossy")], "{:?}", j.faults);
        // Without the retransmissions read, 83 of 93.6 is no fault.
        let blind: Vec<PairMeasure> = tests
            .iter()
            .map(|m| PairMeasure {
                retransmit_share: None,
                ..*m
            })
            .collect();
        let j = judge(5, &blind, &[], &Thresholds::default());
        assert!(j.faults.iter().all(|f| f.hosts() == [2]), "{:?}", j.faults);
    }

    #[test]
    fn a_fault_reads_back_as_written_with_one_kind_each() {
        let faults = vec![
            Fault::SlowHost {
                host: 2,
                reach_bits_per_second: 9.4e6,
                yardstick_bits_per_second: 9.4e7,
                slow_link_bits_per_second: None,
                tests: 6,
                steady: true,
            },
            Fault::Latency {
                finding: Finding::SlowLatencyHost {
                    host: 1,
                    median_rtt_seconds: 0.01,
                    fleet_rtt_seconds: 0.001,
                },
            },
        ];
        let text = serde_json::to_string(&faults).unwrap();
        assert!(text.contains(r#""kind":"slow_host""#), "{text}");
        assert!(
            text.contains(r#""kind":"latency","finding":{"kind":"slow_latency_host""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Vec<Fault>>(&text).unwrap(), faults);
    }
    use crate::mesh::tournament;
    use proptest::prelude::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Kind {
        /// Its link at a tenth of the rate.
        Slow,
        /// Its sends at `f` of the rate.
        Mismatch(f64),
        /// Tests between `f / 3` and `f` of the rate, erratic (a lossy cable).
        Lossy(f64),
    }

    /// A fleet of `n` hosts at `rate` with +-`jitter` per test, hosts' faults as given.
    fn fleet(n: usize, rate: f64, jitter: f64, faults: &[(usize, Kind)]) -> Vec<PairMeasure> {
        let kind = |h: usize| faults.iter().find(|f| f.0 == h).map(|f| f.1);
        // Each host's tests counted in order: a lossy host's k-th test runs at 1, 2/3 or 1/3
        // of its `f`, in turn.
        let mut taken = vec![0usize; n];
        tournament(n)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, (s, d))| {
                let mut r = rate;
                for (h, sending) in [(s, true), (d, false)] {
                    let k = taken[h];
                    taken[h] += 1;
                    r = match kind(h) {
                        Some(Kind::Slow) => r.min(rate / 10.0),
                        Some(Kind::Mismatch(f)) if sending => r.min(rate * f),
                        Some(Kind::Lossy(f)) => r.min(rate * f * (1.0 - (k % 3) as f64 / 3.0)),
                        _ => r,
                    };
                }
                let wobble = 1.0 + jitter * (((i * 7919) % 13) as f64 / 6.0 - 1.0);
                PairMeasure {
                    source: s,
                    destination: d,
                    rate_bits_per_second: Some(r * wobble),
                    rtt_seconds: Some(3e-4),
                    rtt_behind_queue: false,
                    retransmit_share: None,
                }
            })
            .collect()
    }

    /// Issue 31's star: h3 (index 2) on a 10 Mbit/s link, h2 (index 1) mismatched; healthy
    /// pairs at 92.7 Mbit/s, h3 at 9.38, h2's slow direction 37-42% below its fast one.
    #[test]
    fn the_two_fault_star_names_both_hosts_and_nothing_else() {
        let tests = fleet(
            4,
            92.7e6,
            0.01,
            &[(2, Kind::Slow), (1, Kind::Mismatch(0.6))],
        );
        let j = judge(4, &tests, &[], &Thresholds::default());
        assert!(
            matches!(j.faults[0], Fault::SlowHost { host: 2, .. }),
            "{:?}",
            j.faults
        );
        assert!(
            matches!(
                j.faults[1],
                Fault::DuplexMismatch {
                    host: 1,
                    slow: SlowDirection::Sending,
                    ..
                }
            ),
            "{:?}",
            j.faults
        );
        assert_eq!(j.faults.len(), 2, "{:?}", j.faults);
    }

    /// The rates `wirespeed mesh -t 1` measured on the lab of the issue's star (the root test
    /// `issue_31_lab_two_fault_star_...`): h2's mismatch at 100 Mbit/s collapses both of its
    /// directions, unevenly; h3 holds steady at its 10 Mbit/s link.
    #[test]
    fn a_mismatch_that_collapses_both_ways_is_named_by_its_late_collisions() {
        let m = [
            [0.0, 21.11e6, 9.399e6, 93.96e6],
            [8.36e6, 0.0, 9.365e6, 19.35e6],
            [9.372e6, 9.377e6, 0.0, 9.402e6],
            [93.90e6, 17.79e6, 9.396e6, 0.0],
        ];
        let tests: Vec<PairMeasure> = tournament(4)
            .into_iter()
            .flatten()
            .map(|(s, d)| PairMeasure {
                source: s,
                destination: d,
                rate_bits_per_second: Some(m[s][d]),
                rtt_seconds: None,
                rtt_behind_queue: false,
                retransmit_share: None,
            })
            .collect();
        // Rates alone: h3 slow and steady (its link), h2 slow and erratic (its port loses
        // frames), nothing else.
        let j = judge(4, &tests, &[], &Thresholds::default());
        assert!(
            matches!(
                j.faults[..],
                [
                    Fault::SlowHost {
                        host: 1,
                        steady: false,
                        ..
                    },
                    Fault::SlowHost {
                        host: 2,
                        steady: true,
                        ..
                    }
                ]
            ),
            "{:?}",
            j.faults
        );
        // With the late collisions h2's port counted, h2 is the half end of a mismatch.
        let mut evidence = vec![HostEvidence::default(); 4];
        evidence[1].late_collisions = Some(40);
        evidence[1].collisions = Some(900);
        let j = judge(4, &tests, &evidence, &Thresholds::default());
        assert!(
            matches!(
                j.faults[..],
                [
                    Fault::DuplexMismatch {
                        host: 1,
                        late_collisions: Some(40),
                        ..
                    },
                    Fault::SlowHost {
                        host: 2,
                        steady: true,
                        ..
                    }
                ]
            ),
            "{:?}",
            j.faults
        );
    }

    #[test]
    fn known_link_ceilings_judge_a_mixed_fleet_by_its_pairs() {
        // Two hosts on 1 Gbit/s, four on 100 Mbit/s, all healthy: nothing to report by
        // rates, though a gigabit pair runs ten times faster.
        let ceil = |h: usize| -> f64 { if h < 2 { 941e6 } else { 94.1e6 } };
        let tests: Vec<PairMeasure> = tournament(6)
            .into_iter()
            .flatten()
            .map(|(s, d)| PairMeasure {
                source: s,
                destination: d,
                rate_bits_per_second: Some(0.98 * ceil(s).min(ceil(d))),
                rtt_seconds: None,
                rtt_behind_queue: false,
                retransmit_share: None,
            })
            .collect();
        let evidence: Vec<HostEvidence> = (0..6)
            .map(|h| HostEvidence {
                link_ceiling_bits_per_second: Some(ceil(h)),
                ..HostEvidence::default()
            })
            .collect();
        let j = judge(6, &tests, &evidence, &Thresholds::default());
        assert!(j.faults.is_empty(), "{:?}", j.faults);
        // A host whose link negotiated 10 Mbit/s among 100 Mbit/s ones is named by its link.
        let mut evidence = evidence;
        evidence[5].link_ceiling_bits_per_second = Some(9.41e6);
        let mut tests = tests;
        for m in &mut tests {
            if m.source == 5 || m.destination == 5 {
                m.rate_bits_per_second = Some(9.3e6);
            }
        }
        let j = judge(6, &tests, &evidence, &Thresholds::default());
        assert_eq!(j.faults.len(), 1, "{:?}", j.faults);
        assert!(matches!(
            j.faults[0],
            Fault::SlowHost {
                host: 5,
                slow_link_bits_per_second: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn late_collisions_are_reported_with_the_mismatch() {
        let tests = fleet(5, 94e6, 0.01, &[(3, Kind::Mismatch(0.85))]);
        // 15% slower one way: not a mismatch on rates alone...
        assert!(
            judge(5, &tests, &[], &Thresholds::default())
                .faults
                .is_empty()
        );
        // ...but with late collisions counted at the host it is, and they are its evidence.
        let mut evidence = vec![HostEvidence::default(); 5];
        evidence[3].late_collisions = Some(112);
        evidence[3].crc_errors = Some(0);
        let j = judge(5, &tests, &evidence, &Thresholds::default());
        assert!(
            matches!(
                j.faults[..],
                [Fault::DuplexMismatch {
                    host: 3,
                    late_collisions: Some(112),
                    ..
                }]
            ),
            "{:?}",
            j.faults
        );
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::Slow),
            (0.2f64..0.65).prop_map(Kind::Mismatch),
            (0.05f64..0.4).prop_map(Kind::Lossy),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Fleets with 0 to 3 faults of any kinds on different hosts, with at least two
        /// more healthy hosts than faulty ones: every faulty host is named with its kind, and
        /// no fault names only healthy hosts.
        #[test]
        fn every_fault_is_named_and_no_healthy_host_is(
            k in 0usize..=3,
            extra in 0usize..6,
            rate in 1e6f64..1e10,
            jitter in 0.0f64..0.05,
            kinds in proptest::collection::vec(kind(), 3),
            seed in any::<u64>(),
        ) {
            let n = (2 * k + 2).max(4) + extra;
            // Faulty hosts: k distinct indexes drawn from the seed.
            let mut hosts: Vec<usize> = (0..n).collect();
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                hosts.swap(i, (s >> 33) as usize % (i + 1));
            }
            let faults: Vec<(usize, Kind)> = hosts.iter().take(k).copied().zip(kinds).collect();
            let tests = fleet(n, rate, jitter, &faults);
            let j = judge(n, &tests, &[], &Thresholds::default());
            let bad = |h: usize| faults.iter().any(|f| f.0 == h);
            for f in &j.faults {
                prop_assert!(f.hosts().into_iter().any(bad), "{f:?} names healthy hosts only; faults {faults:?}");
            }
            for &(h, kind) in &faults {
                let named = j.faults.iter().any(|f| match (f, kind) {
                    (Fault::SlowHost { host, steady: true, .. }, Kind::Slow) => *host == h,
                    (Fault::SlowHost { host, steady: false, .. }, Kind::Lossy(_)) => *host == h,
                    (Fault::DuplexMismatch { host, slow: SlowDirection::Sending, .. }, Kind::Mismatch(_)) => *host == h,
                    _ => false,
                });
                prop_assert!(named, "host {h} ({kind:?}) not named: {:?}", j.faults);
            }
        }
    }
}
