//! The mesh's verdicts and warnings as typed values (issue 30): a script acts on
//! `{"kind": "duplex_mismatch", "host": "node-3", ...}` instead of matching the sentence.
//!
//! The verdicts are the fleet judge's faults (`wirespeed_model::mesh::faults`, whose kinds they
//! keep) with the hosts named and the counters their ports read; the warnings are what makes a
//! mesh's figures less trustworthy. Each value's sentence is its `Display` with rates in bit/s
//! prefixes, or [`Worded`] in the unit `-f` chose: the unit is the reader's, not evidence, so
//! the figures stay in base units whatever `-f` says.

use std::fmt;

use serde::{Serialize, Serializer};
use wirespeed_model::RateFormat;
use wirespeed_model::mesh::Finding;
use wirespeed_model::mesh::faults::{Fault, SlowDirection};
use wirespeed_model::units::format_seconds;

use super::result::{MeshResult, PairRecord, Recheck};

/// One conclusion about the fleet, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum MeshVerdict {
    SlowHost(SlowHost),
    DuplexMismatch(DuplexMismatch),
    AsymmetricHost(AsymmetricHost),
    LossyHost(LossyHost),
    BadPair(BadPair),
    AsymmetricPair(AsymmetricPair),
    SlowLatencyHost(SlowLatencyHost),
    HighLatencyPair(HighLatencyPair),
    SlowHostByMedian(SlowHostByMedian),
    BadPairByMedian(BadPairByMedian),
    NoOutlier(NoOutlier),
}

/// A host far below the fleet in every test.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct SlowHost {
    pub(crate) host: String,
    /// Its best test.
    pub(crate) reach_bits_per_second: f64,
    /// What the fleet's best-connected quarter reaches (or its own link's capacity).
    pub(crate) yardstick_bits_per_second: f64,
    /// Its own link's TCP ceiling, when known and far below the fleet's: the cause.
    pub(crate) slow_link_bits_per_second: Option<f64>,
    pub(crate) tests: usize,
    /// Its tests hold steady near its best (a port at a lower rate), or are erratic (a
    /// port that loses frames).
    pub(crate) steady: bool,
    pub(crate) collisions: Option<u64>,
    pub(crate) late_collisions: Option<u64>,
    pub(crate) crc_errors: Option<u64>,
}

/// A host whose tests all run slower one way (seed 003).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct DuplexMismatch {
    pub host: String,
    pub slow: SlowDirection,
    /// Median over its partners of the slower direction's rate over the faster one's.
    pub median_ratio: f64,
    pub pairs_showing: usize,
    pub pairs: usize,
    pub collisions: Option<u64>,
    pub late_collisions: Option<u64>,
    pub crc_errors: Option<u64>,
}

/// A host whose tests all run slower one way, its port's counters not read: a mismatch's
/// rates, or a port that loses frames unevenly.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct AsymmetricHost {
    pub(crate) host: String,
    pub(crate) slow: SlowDirection,
    pub(crate) median_ratio: f64,
    pub(crate) pairs_showing: usize,
    pub(crate) pairs: usize,
}

/// A host every test of which retransmitted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct LossyHost {
    pub(crate) host: String,
    pub(crate) cleanest_retransmit_share: f64,
    pub(crate) median_retransmit_share: f64,
    pub(crate) tests: usize,
    pub(crate) crc_errors: Option<u64>,
}

/// A test far below what both its hosts reach with the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct BadPair {
    pub source: String,
    pub destination: String,
    pub rate_bits_per_second: f64,
    pub expected_bits_per_second: f64,
    /// Its rate is the better of its test and a second look when no other test ran.
    pub rechecked: bool,
}

/// One direction of a pair far below the other.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct AsymmetricPair {
    pub fast_source: String,
    pub fast_destination: String,
    pub fast_bits_per_second: f64,
    pub slow_bits_per_second: f64,
}

/// A host whose round trips are far above the fleet's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct SlowLatencyHost {
    pub(crate) host: String,
    pub(crate) median_rtt_seconds: f64,
    pub(crate) fleet_rtt_seconds: f64,
}

/// A pair whose best round trip is far above its hosts' others.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct HighLatencyPair {
    pub(crate) source: String,
    pub(crate) destination: String,
    pub(crate) rtt_seconds: f64,
    pub(crate) expected_rtt_seconds: f64,
    /// A second look when no other test ran agreed.
    pub(crate) rechecked: bool,
}

/// The outlier analysis's slow host (by robust spread of the medians), if the judge ever
/// passes one on as it passes on the latency findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct SlowHostByMedian {
    pub(crate) host: String,
    pub(crate) median_bits_per_second: f64,
    pub(crate) fleet_bits_per_second: f64,
    /// Robust standard deviations below the fleet (negative).
    pub(crate) robust_z: f64,
    pub(crate) tests: usize,
}

/// The outlier analysis's bad pair, likewise.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct BadPairByMedian {
    pub(crate) source: String,
    pub(crate) destination: String,
    pub(crate) rate_bits_per_second: f64,
    pub(crate) expected_bits_per_second: f64,
    pub(crate) robust_z: f64,
    pub(crate) rechecked: bool,
}

/// No fault among at least two finished tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct NoOutlier {
    pub hosts: usize,
    pub tests: usize,
    pub lowest_bits_per_second: f64,
    pub highest_bits_per_second: f64,
}

/// A figure a second look found ordinary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct Cleared<T> {
    pub source: String,
    pub destination: String,
    #[serde(flatten)]
    pub figure: T,
}

/// A rate's second look.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct RateLook {
    pub rate_bits_per_second: Option<f64>,
}

/// A round trip's second look.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct RoundTripLook {
    pub(crate) rtt_seconds: Option<f64>,
}

/// What may make a mesh's figures less trustworthy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum MeshWarning {
    /// Every agent on this host's loopback: the tests share its CPUs, not links.
    AgentsOnLoopback { agents: usize },
    /// The mesh took over 10% longer than its schedule predicted.
    ScheduleOverran {
        elapsed_seconds: f64,
        predicted_seconds: f64,
    },
    /// Low rates that a second look alone on the fleet found ordinary (not flagged).
    LowRatesCleared { cleared: Vec<Cleared<RateLook>> },
    /// High round trips that a second look alone on the fleet found ordinary (not flagged).
    HighRoundTripsCleared {
        cleared: Vec<Cleared<RoundTripLook>>,
    },
    /// A second look that failed.
    SecondLookFailed {
        source: String,
        destination: String,
        error: String,
    },
    /// Tests whose probes may have waited behind a queue longer than the drain cap.
    RoundTripsNotJudged { tests: usize, cap_seconds: f64 },
    /// A test's error.
    TestFailed {
        source: String,
        destination: String,
        error: String,
    },
    /// `--wait-for-agents` ran out with agents still silent.
    AgentsNotAnswering {
        /// The silent agents' names.
        silent: Vec<String>,
        agents: usize,
        wait_seconds: f64,
    },
}

/// A mesh finding and the unit its sentence prints rates in (`-f`).
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct Worded<T> {
    pub judged: T,
    pub rate_format: RateFormat,
}

impl<T: Serialize> Serialize for Worded<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.judged.serialize(serializer)
    }
}

impl fmt::Display for Worded<MeshVerdict> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.judged.write(f, self.rate_format)
    }
}

impl fmt::Display for Worded<MeshWarning> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.judged.write(f, self.rate_format)
    }
}

impl fmt::Display for MeshVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, RateFormat::Adaptive)
    }
}

impl fmt::Display for MeshWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, RateFormat::Adaptive)
    }
}

/// The words of the counters a host's port read over the mesh, if it read any.
fn counted(collisions: Option<u64>, late: Option<u64>, crc: Option<u64>) -> String {
    let parts: Vec<String> = [
        (late, "late collision(s)"),
        (collisions, "collision(s) in all"),
        (crc, "CRC error(s) received"),
    ]
    .iter()
    .filter_map(|(c, what)| c.map(|c| format!("{c} {what}")))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; its port counted {} over the mesh", parts.join(", "))
    }
}

impl MeshVerdict {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        match self {
            MeshVerdict::SlowHost(v) => v.write(f, unit),
            MeshVerdict::DuplexMismatch(v) => fmt::Display::fmt(v, f),
            MeshVerdict::AsymmetricHost(v) => fmt::Display::fmt(v, f),
            MeshVerdict::LossyHost(v) => fmt::Display::fmt(v, f),
            MeshVerdict::BadPair(v) => v.write(f, unit),
            MeshVerdict::AsymmetricPair(v) => v.write(f, unit),
            MeshVerdict::SlowLatencyHost(v) => fmt::Display::fmt(v, f),
            MeshVerdict::HighLatencyPair(v) => fmt::Display::fmt(v, f),
            MeshVerdict::SlowHostByMedian(v) => v.write(f, unit),
            MeshVerdict::BadPairByMedian(v) => v.write(f, unit),
            MeshVerdict::NoOutlier(v) => v.write(f, unit),
        }
    }
}

impl SlowHost {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let SlowHost {
            host,
            reach_bits_per_second,
            yardstick_bits_per_second,
            slow_link_bits_per_second,
            tests,
            steady,
            collisions,
            late_collisions,
            crc_errors,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        let cause = match (slow_link_bits_per_second, steady) {
            (Some(link), _) => format!(
                ": its own link carries at most {} of TCP against the fleet's typical {} (the link is the cause: a port that negotiated down or a slow line)",
                rate(*link),
                rate(*yardstick_bits_per_second)
            ),
            (None, true) => ": its tests hold steady near that rate, a port, link or CPU at a lower rate; run `wirespeed diagnose` on it".into(),
            (None, false) => ": its tests are erratic below that best, a port that loses frames (a duplex mismatch or a bad cable: its collision and CRC counters tell them apart); run `wirespeed diagnose` on it".into(),
        };
        write!(
            f,
            "host {host} is slow in every pair: its best test of {tests} reached {} against {} for the fleet's best-connected quarter{cause}{}",
            rate(*reach_bits_per_second),
            rate(*yardstick_bits_per_second),
            counted(*collisions, *late_collisions, *crc_errors)
        )
    }
}

impl fmt::Display for DuplexMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DuplexMismatch {
            host,
            slow,
            median_ratio,
            pairs_showing,
            pairs,
            collisions,
            late_collisions,
            crc_errors,
        } = self;
        let rates = if *pairs_showing > 0 {
            format!(
                "what it {} runs at {:.0}% of the other way with {pairs_showing} of its {pairs} partners",
                match slow {
                    SlowDirection::Sending => "sends",
                    SlowDirection::Receiving => "receives",
                },
                median_ratio * 100.0
            )
        } else {
            format!("it is slow with all {pairs} of its tests")
        };
        write!(
            f,
            "host {host} has a duplex mismatch on its link: {rates}{} (seed 003: late collisions at the half-duplex end, CRC errors at the full one); configure both ends the same way, preferably both auto",
            counted(*collisions, *late_collisions, *crc_errors)
        )
    }
}

impl fmt::Display for AsymmetricHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let AsymmetricHost {
            host,
            slow,
            median_ratio,
            pairs_showing,
            pairs,
        } = self;
        write!(
            f,
            "host {host} is asymmetric, counters not readable: what it {} runs at {:.0}% of the other way with {pairs_showing} of its {pairs} partners; a duplex mismatch (seed 003) would count late collisions or CRC errors at its port, a port that loses frames unevenly neither: run `wirespeed diagnose` on it",
            match slow {
                SlowDirection::Sending => "sends",
                SlowDirection::Receiving => "receives",
            },
            median_ratio * 100.0
        )
    }
}

impl fmt::Display for LossyHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LossyHost {
            host,
            cleanest_retransmit_share,
            median_retransmit_share,
            tests,
            crc_errors,
        } = self;
        write!(
            f,
            "host {host} loses frames at its own port: every one of its {tests} tests retransmitted, at least {:.1}% of its segments (median {:.1}%), while its partners' other tests did not{}: a bad cable, port or link; run `wirespeed diagnose` on it",
            cleanest_retransmit_share * 100.0,
            median_retransmit_share * 100.0,
            crc_errors.map_or(String::new(), |c| format!(
                "; its port received {c} frame(s) with a bad CRC over the mesh"
            ))
        )
    }
}

impl BadPair {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let BadPair {
            source,
            destination,
            rate_bits_per_second,
            expected_bits_per_second,
            rechecked,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        write!(
            f,
            "pair {source} -> {destination} is far below what both its hosts reach with the others: {} against {}{}: a bad link or port between them",
            rate(*rate_bits_per_second),
            rate(*expected_bits_per_second),
            if *rechecked {
                " (the better of its test and a second look when no other test ran)"
            } else {
                ""
            }
        )
    }
}

impl AsymmetricPair {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let AsymmetricPair {
            fast_source,
            fast_destination,
            fast_bits_per_second,
            slow_bits_per_second,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        write!(
            f,
            "pair {fast_source} <-> {fast_destination} is asymmetric: {} from {fast_source} to {fast_destination} but {} back ({:.0}% of it): the signature of a duplex mismatch (seed 003); check both ends with `wirespeed diagnose`",
            rate(*fast_bits_per_second),
            rate(*slow_bits_per_second),
            100.0 * slow_bits_per_second / fast_bits_per_second
        )
    }
}

impl fmt::Display for SlowLatencyHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let SlowLatencyHost {
            host,
            median_rtt_seconds,
            fleet_rtt_seconds,
        } = self;
        write!(
            f,
            "host {host} answers slowly in every pair: median best round trip {} against {} for the fleet",
            format_seconds(*median_rtt_seconds),
            format_seconds(*fleet_rtt_seconds)
        )
    }
}

impl fmt::Display for HighLatencyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let HighLatencyPair {
            source,
            destination,
            rtt_seconds,
            expected_rtt_seconds,
            rechecked,
        } = self;
        write!(
            f,
            "pair {source} <-> {destination} has a high round trip: {} against {} for the other tests of its hosts (the best probe of both directions' tests{})",
            format_seconds(*rtt_seconds),
            format_seconds(*expected_rtt_seconds),
            if *rechecked {
                ", and again of a second look when no other test ran"
            } else {
                ""
            }
        )
    }
}

impl SlowHostByMedian {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let SlowHostByMedian {
            host,
            median_bits_per_second,
            fleet_bits_per_second,
            robust_z,
            tests,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        write!(
            f,
            "host {host} is slow in every pair: median {} over its {tests} tests against {} for the fleet ({:.1} robust SD below): a host problem (CPU, NIC settings, its own port); run `wirespeed diagnose` on it",
            rate(*median_bits_per_second),
            rate(*fleet_bits_per_second),
            -robust_z
        )
    }
}

impl BadPairByMedian {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let BadPairByMedian {
            source,
            destination,
            rate_bits_per_second,
            expected_bits_per_second,
            robust_z,
            rechecked,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        write!(
            f,
            "pair {source} -> {destination} is far below the other tests of its hosts: {} against {} ({:.1} robust SD below{}): a bad link or port between them",
            rate(*rate_bits_per_second),
            rate(*expected_bits_per_second),
            -robust_z,
            if *rechecked {
                "; the better of its test and a second look when no other test ran"
            } else {
                ""
            }
        )
    }
}

impl NoOutlier {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        let NoOutlier {
            hosts,
            tests,
            lowest_bits_per_second,
            highest_bits_per_second,
        } = self;
        let rate = |bps: f64| unit.format(bps);
        write!(
            f,
            "no outlier among {hosts} hosts and {tests} tests (rates {} to {})",
            rate(*lowest_bits_per_second),
            rate(*highest_bits_per_second)
        )
    }
}

impl MeshWarning {
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: RateFormat) -> fmt::Result {
        match self {
            MeshWarning::AgentsOnLoopback { .. } => write!(
                f,
                "every agent is on this host's loopback: the tests share its CPUs, not links, so rates and outliers here measure the host's scheduling"
            ),
            MeshWarning::ScheduleOverran {
                elapsed_seconds,
                predicted_seconds,
            } => write!(
                f,
                "the mesh took {}, {:.0}% over the schedule's {} (its plan and each test's tail as measured): a busy host was slow to set tests up and answer",
                format_seconds(*elapsed_seconds),
                100.0 * (elapsed_seconds / predicted_seconds - 1.0),
                format_seconds(*predicted_seconds)
            ),
            MeshWarning::LowRatesCleared { cleared } => {
                let list: Vec<String> = cleared
                    .iter()
                    .map(|c| {
                        format!(
                            "{} -> {} {}",
                            c.source,
                            c.destination,
                            c.figure
                                .rate_bits_per_second
                                .map_or("(no figure)".into(), |v| unit.format(v))
                        )
                    })
                    .collect();
                write!(
                    f,
                    "{} test(s) with a low rate were run again when no other test ran and were as their hosts' others (not flagged; a busy host or another test's traffic, not the link): {}",
                    list.len(),
                    list.join(", ")
                )
            }
            MeshWarning::HighRoundTripsCleared { cleared } => {
                let list: Vec<String> = cleared
                    .iter()
                    .map(|c| {
                        format!(
                            "{} -> {} {}",
                            c.source,
                            c.destination,
                            c.figure
                                .rtt_seconds
                                .map_or("(no answer)".into(), format_seconds)
                        )
                    })
                    .collect();
                write!(
                    f,
                    "{} pair(s) whose tests' probes all came back late were probed again when no other test ran, and their round trip was as their hosts' others (not flagged): {}",
                    list.len(),
                    list.join(", ")
                )
            }
            MeshWarning::SecondLookFailed {
                source,
                destination,
                error,
            } => write!(f, "second look at {source} <-> {destination}: {error}"),
            MeshWarning::RoundTripsNotJudged { tests, cap_seconds } => write!(
                f,
                "{tests} test(s) have round trips that were not judged: their probes started right after a test of one of their agents whose data was still arriving when its tail reached the {cap_seconds} s cap (a queue longer than that), so they may have waited behind it"
            ),
            MeshWarning::TestFailed {
                source,
                destination,
                error,
            } => write!(f, "test {source} -> {destination}: {error}"),
            MeshWarning::AgentsNotAnswering {
                silent,
                agents,
                wait_seconds,
            } => write!(
                f,
                "{} of {agents} agents did not answer within --wait-for-agents {}: {}",
                silent.len(),
                format_seconds(*wait_seconds),
                silent.join(", ")
            ),
        }
    }
}

/// The judge's faults and the mesh's doubts as typed findings, the hosts named.
impl MeshResult {
    /// The named hosts of one of the judge's faults, with its evidence and the counters its
    /// port read.
    pub(crate) fn fault_verdict(&self, f: &Fault) -> MeshVerdict {
        let name = |i: usize| self.name(i).to_string();
        let rechecked_rate = |s: usize, d: usize| {
            self.rechecks
                .iter()
                .any(|c| c.rate && (c.source, c.destination) == (s, d))
        };
        match *f {
            Fault::SlowHost {
                host,
                reach_bits_per_second,
                yardstick_bits_per_second,
                slow_link_bits_per_second,
                tests,
                steady,
            } => {
                let e = self.host_evidence.get(host);
                MeshVerdict::SlowHost(SlowHost {
                    host: name(host),
                    reach_bits_per_second,
                    yardstick_bits_per_second,
                    slow_link_bits_per_second,
                    tests,
                    steady,
                    collisions: e.and_then(|e| e.collisions),
                    late_collisions: e.and_then(|e| e.late_collisions),
                    crc_errors: e.and_then(|e| e.crc_errors),
                })
            }
            Fault::DuplexMismatch {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
                collisions,
                late_collisions,
                crc_errors,
            } => MeshVerdict::DuplexMismatch(DuplexMismatch {
                host: name(host),
                slow,
                median_ratio,
                pairs_showing,
                pairs,
                collisions,
                late_collisions,
                crc_errors,
            }),
            Fault::AsymmetricHost {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
            } => MeshVerdict::AsymmetricHost(AsymmetricHost {
                host: name(host),
                slow,
                median_ratio,
                pairs_showing,
                pairs,
            }),
            Fault::LossyHost {
                host,
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            } => MeshVerdict::LossyHost(LossyHost {
                host: name(host),
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            }),
            Fault::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
            } => MeshVerdict::BadPair(BadPair {
                source: name(source),
                destination: name(destination),
                rate_bits_per_second,
                expected_bits_per_second,
                rechecked: rechecked_rate(source, destination),
            }),
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => MeshVerdict::AsymmetricPair(AsymmetricPair {
                fast_source: name(fast_source),
                fast_destination: name(fast_destination),
                fast_bits_per_second,
                slow_bits_per_second,
            }),
            Fault::Latency { ref finding } => self.finding_verdict(finding),
        }
    }

    /// The named hosts of an [`analyse`](wirespeed_model::mesh::analyse) finding (the latency ones reach the
    /// verdicts through the judge).
    fn finding_verdict(&self, f: &Finding) -> MeshVerdict {
        let name = |i: usize| self.name(i).to_string();
        match *f {
            Finding::SlowHost {
                host,
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            } => MeshVerdict::SlowHostByMedian(SlowHostByMedian {
                host: name(host),
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            }),
            Finding::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
            } => MeshVerdict::BadPairByMedian(BadPairByMedian {
                source: name(source),
                destination: name(destination),
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
                rechecked: self
                    .rechecks
                    .iter()
                    .any(|c| c.rate && (c.source, c.destination) == (source, destination)),
            }),
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => MeshVerdict::AsymmetricPair(AsymmetricPair {
                fast_source: name(fast_source),
                fast_destination: name(fast_destination),
                fast_bits_per_second,
                slow_bits_per_second,
            }),
            Finding::SlowLatencyHost {
                host,
                median_rtt_seconds,
                fleet_rtt_seconds,
            } => MeshVerdict::SlowLatencyHost(SlowLatencyHost {
                host: name(host),
                median_rtt_seconds,
                fleet_rtt_seconds,
            }),
            Finding::HighLatencyPair {
                source,
                destination,
                rtt_seconds,
                expected_rtt_seconds,
            } => MeshVerdict::HighLatencyPair(HighLatencyPair {
                source: name(source),
                destination: name(destination),
                rtt_seconds,
                expected_rtt_seconds,
                rechecked: self
                    .rechecks
                    .iter()
                    .any(|c| !c.rate && c.is_of(source, destination)),
            }),
        }
    }

    /// One verdict per fault, with its evidence; one saying so when there is none.
    #[doc(hidden)]
    pub fn verdicts(&self) -> Vec<MeshVerdict> {
        let mut out: Vec<MeshVerdict> = self.faults.iter().map(|f| self.fault_verdict(f)).collect();
        let finished: Vec<f64> = self.tests.iter().filter_map(PairRecord::rate).collect();
        if out.is_empty() && finished.len() >= 2 {
            out.push(MeshVerdict::NoOutlier(NoOutlier {
                hosts: self.agents.len(),
                tests: finished.len(),
                lowest_bits_per_second: finished.iter().copied().fold(f64::INFINITY, f64::min),
                highest_bits_per_second: finished.iter().copied().fold(0.0, f64::max),
            }));
        }
        out
    }

    /// Failed tests, agents that share one host, and a schedule that overran its prediction.
    #[doc(hidden)]
    pub fn warnings(&self) -> Vec<MeshWarning> {
        let mut out = Vec::new();
        if self.agents.len() >= 2 && self.agents.iter().all(|a| a.address.ip().is_loopback()) {
            out.push(MeshWarning::AgentsOnLoopback {
                agents: self.agents.len(),
            });
        }
        if self.slots > 0
            && self.predicted_seconds > 0.0
            && self.elapsed_seconds > 1.1 * self.predicted_seconds
        {
            out.push(MeshWarning::ScheduleOverran {
                elapsed_seconds: self.elapsed_seconds,
                predicted_seconds: self.predicted_seconds,
            });
        }
        // Second looks that cleared what the tests alone would have flagged.
        let stands = |c: &Recheck| {
            self.analysis.findings.iter().any(|f| {
                let h = f.hosts();
                f.is_pair()
                    && c.is_of(h[0], h[1])
                    && matches!(f, Finding::HighLatencyPair { .. }) != c.rate
            })
        };
        let cleared = |rate: bool| {
            self.rechecks
                .iter()
                .filter(move |c| c.rate == rate && c.error.is_none() && !stands(c))
        };
        let named = |c: &Recheck| -> (String, String) {
            (self.name(c.source).into(), self.name(c.destination).into())
        };
        let rates: Vec<Cleared<RateLook>> = cleared(true)
            .map(|c| {
                let (source, destination) = named(c);
                Cleared {
                    source,
                    destination,
                    figure: RateLook {
                        rate_bits_per_second: c.rate_bits_per_second,
                    },
                }
            })
            .collect();
        if !rates.is_empty() {
            out.push(MeshWarning::LowRatesCleared { cleared: rates });
        }
        let round_trips: Vec<Cleared<RoundTripLook>> = cleared(false)
            .map(|c| {
                let (source, destination) = named(c);
                Cleared {
                    source,
                    destination,
                    figure: RoundTripLook {
                        rtt_seconds: c.best(),
                    },
                }
            })
            .collect();
        if !round_trips.is_empty() {
            out.push(MeshWarning::HighRoundTripsCleared {
                cleared: round_trips,
            });
        }
        for c in &self.rechecks {
            if let Some(e) = &c.error {
                let (source, destination) = named(c);
                out.push(MeshWarning::SecondLookFailed {
                    source,
                    destination,
                    error: e.clone(),
                });
            }
        }
        if self.rtt_not_judged > 0 {
            out.push(MeshWarning::RoundTripsNotJudged {
                tests: self.rtt_not_judged,
                cap_seconds: wirespeed_net::spec::NO_DRAIN_CAP.as_secs_f64(),
            });
        }
        for r in &self.tests {
            for p in r.problems() {
                out.push(MeshWarning::TestFailed {
                    source: self.name(r.source).into(),
                    destination: self.name(r.destination).into(),
                    error: p,
                });
            }
        }
        out.truncate(64);
        out
    }
}
