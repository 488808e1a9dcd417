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
use wirespeed_model::mesh::faults::SlowDirection;
use wirespeed_model::units::format_seconds;

/// One conclusion about the fleet, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum MeshVerdict {
    /// A host far below the fleet in every test.
    SlowHost {
        host: String,
        /// Its best test.
        reach_bits_per_second: f64,
        /// What the fleet's best-connected quarter reaches (or its own link's capacity).
        yardstick_bits_per_second: f64,
        /// Its own link's TCP ceiling, when known and far below the fleet's: the cause.
        slow_link_bits_per_second: Option<f64>,
        tests: usize,
        /// Its tests hold steady near its best (a port at a lower rate), or are erratic (a
        /// port that loses frames).
        steady: bool,
        collisions: Option<u64>,
        late_collisions: Option<u64>,
        crc_errors: Option<u64>,
    },
    /// A host whose tests all run slower one way (seed 003).
    DuplexMismatch {
        host: String,
        slow: SlowDirection,
        /// Median over its partners of the slower direction's rate over the faster one's.
        median_ratio: f64,
        pairs_showing: usize,
        pairs: usize,
        collisions: Option<u64>,
        late_collisions: Option<u64>,
        crc_errors: Option<u64>,
    },
    /// A host whose tests all run slower one way, its port's counters not read: a mismatch's
    /// rates, or a port that loses frames unevenly.
    AsymmetricHost {
        host: String,
        slow: SlowDirection,
        median_ratio: f64,
        pairs_showing: usize,
        pairs: usize,
    },
    /// A host every test of which retransmitted.
    LossyHost {
        host: String,
        cleanest_retransmit_share: f64,
        median_retransmit_share: f64,
        tests: usize,
        crc_errors: Option<u64>,
    },
    /// A test far below what both its hosts reach with the others.
    BadPair {
        source: String,
        destination: String,
        rate_bits_per_second: f64,
        expected_bits_per_second: f64,
        /// Its rate is the better of its test and a second look when no other test ran.
        rechecked: bool,
    },
    /// One direction of a pair far below the other.
    AsymmetricPair {
        fast_source: String,
        fast_destination: String,
        fast_bits_per_second: f64,
        slow_bits_per_second: f64,
    },
    /// A host whose round trips are far above the fleet's.
    SlowLatencyHost {
        host: String,
        median_rtt_seconds: f64,
        fleet_rtt_seconds: f64,
    },
    /// A pair whose best round trip is far above its hosts' others.
    HighLatencyPair {
        source: String,
        destination: String,
        rtt_seconds: f64,
        expected_rtt_seconds: f64,
        /// A second look when no other test ran agreed.
        rechecked: bool,
    },
    /// The outlier analysis's slow host (by robust spread of the medians), if the judge ever
    /// passes one on as it passes on the latency findings.
    SlowHostByMedian {
        host: String,
        median_bits_per_second: f64,
        fleet_bits_per_second: f64,
        /// Robust standard deviations below the fleet (negative).
        robust_z: f64,
        tests: usize,
    },
    /// The outlier analysis's bad pair, likewise.
    BadPairByMedian {
        source: String,
        destination: String,
        rate_bits_per_second: f64,
        expected_bits_per_second: f64,
        robust_z: f64,
        rechecked: bool,
    },
    /// No fault among at least two finished tests.
    NoOutlier {
        hosts: usize,
        tests: usize,
        lowest_bits_per_second: f64,
        highest_bits_per_second: f64,
    },
}

/// A figure a second look found ordinary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Cleared<T> {
    pub(crate) source: String,
    pub(crate) destination: String,
    #[serde(flatten)]
    pub(crate) figure: T,
}

/// A rate's second look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RateLook {
    pub(crate) rate_bits_per_second: Option<f64>,
}

/// A round trip's second look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RoundTripLook {
    pub(crate) rtt_seconds: Option<f64>,
}

/// What may make a mesh's figures less trustworthy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum MeshWarning {
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
pub(crate) struct Worded<T> {
    pub(crate) judged: T,
    pub(crate) rate_format: RateFormat,
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
        let rate = |bps: f64| unit.format(bps);
        match self {
            MeshVerdict::SlowHost {
                host,
                reach_bits_per_second,
                yardstick_bits_per_second,
                slow_link_bits_per_second,
                tests,
                steady,
                collisions,
                late_collisions,
                crc_errors,
            } => {
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
            MeshVerdict::DuplexMismatch {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
                collisions,
                late_collisions,
                crc_errors,
            } => {
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
            MeshVerdict::AsymmetricHost {
                host,
                slow,
                median_ratio,
                pairs_showing,
                pairs,
            } => write!(
                f,
                "host {host} is asymmetric, counters not readable: what it {} runs at {:.0}% of the other way with {pairs_showing} of its {pairs} partners; a duplex mismatch (seed 003) would count late collisions or CRC errors at its port, a port that loses frames unevenly neither: run `wirespeed diagnose` on it",
                match slow {
                    SlowDirection::Sending => "sends",
                    SlowDirection::Receiving => "receives",
                },
                median_ratio * 100.0
            ),
            MeshVerdict::LossyHost {
                host,
                cleanest_retransmit_share,
                median_retransmit_share,
                tests,
                crc_errors,
            } => write!(
                f,
                "host {host} loses frames at its own port: every one of its {tests} tests retransmitted, at least {:.1}% of its segments (median {:.1}%), while its partners' other tests did not{}: a bad cable, port or link; run `wirespeed diagnose` on it",
                cleanest_retransmit_share * 100.0,
                median_retransmit_share * 100.0,
                crc_errors.map_or(String::new(), |c| format!(
                    "; its port received {c} frame(s) with a bad CRC over the mesh"
                ))
            ),
            MeshVerdict::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                rechecked,
            } => write!(
                f,
                "pair {source} -> {destination} is far below what both its hosts reach with the others: {} against {}{}: a bad link or port between them",
                rate(*rate_bits_per_second),
                rate(*expected_bits_per_second),
                if *rechecked {
                    " (the better of its test and a second look when no other test ran)"
                } else {
                    ""
                }
            ),
            MeshVerdict::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => write!(
                f,
                "pair {fast_source} <-> {fast_destination} is asymmetric: {} from {fast_source} to {fast_destination} but {} back ({:.0}% of it): the signature of a duplex mismatch (seed 003); check both ends with `wirespeed diagnose`",
                rate(*fast_bits_per_second),
                rate(*slow_bits_per_second),
                100.0 * slow_bits_per_second / fast_bits_per_second
            ),
            MeshVerdict::SlowLatencyHost {
                host,
                median_rtt_seconds,
                fleet_rtt_seconds,
            } => write!(
                f,
                "host {host} answers slowly in every pair: median best round trip {} against {} for the fleet",
                format_seconds(*median_rtt_seconds),
                format_seconds(*fleet_rtt_seconds)
            ),
            MeshVerdict::HighLatencyPair {
                source,
                destination,
                rtt_seconds,
                expected_rtt_seconds,
                rechecked,
            } => write!(
                f,
                "pair {source} <-> {destination} has a high round trip: {} against {} for the other tests of its hosts (the best probe of both directions' tests{})",
                format_seconds(*rtt_seconds),
                format_seconds(*expected_rtt_seconds),
                if *rechecked {
                    ", and again of a second look when no other test ran"
                } else {
                    ""
                }
            ),
            MeshVerdict::SlowHostByMedian {
                host,
                median_bits_per_second,
                fleet_bits_per_second,
                robust_z,
                tests,
            } => write!(
                f,
                "host {host} is slow in every pair: median {} over its {tests} tests against {} for the fleet ({:.1} robust SD below): a host problem (CPU, NIC settings, its own port); run `wirespeed diagnose` on it",
                rate(*median_bits_per_second),
                rate(*fleet_bits_per_second),
                -robust_z
            ),
            MeshVerdict::BadPairByMedian {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                robust_z,
                rechecked,
            } => write!(
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
            ),
            MeshVerdict::NoOutlier {
                hosts,
                tests,
                lowest_bits_per_second,
                highest_bits_per_second,
            } => write!(
                f,
                "no outlier among {hosts} hosts and {tests} tests (rates {} to {})",
                rate(*lowest_bits_per_second),
                rate(*highest_bits_per_second)
            ),
        }
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
