//! The schema of `wirespeed.mesh.v1` and of a mesh's results file (`wirespeed.mesh-runs.v1`):
//! the plan, each finished test, the second looks, and the result with its matrices and
//! judged faults. It imports none of its siblings, so that a reader of results needs nothing
//! that measures or prints.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::mesh::Analysis;
use wirespeed_model::mesh::faults::{Fault, HostEvidence};
use wirespeed_net::control::mesh::PairResult;

use crate::common::runs_file::RunsPlan;

/// The schema of a mesh results file's plan line.
#[doc(hidden)]
pub const RUNS_SCHEMA: &str = "wirespeed.mesh-runs.v1";

/// The sample a mesh measures: part of its plan, so a resumed mesh runs the same pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Ordered pairs asked for (`--pairs`).
    pub pairs: usize,
    /// The draw's seed (`--seed`, or drawn at random).
    pub seed: u64,
}

/// One agent of the mesh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEntry {
    /// A short name (the file's, or the address).
    pub name: String,
    /// Its control address.
    pub address: SocketAddr,
}

/// Everything that fixes a mesh: the results file's first line and the document's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeshPlan {
    pub schema: String,
    pub agents: Vec<AgentEntry>,
    pub tcp_seconds: f64,
    pub probes: u32,
    pub probe_gap_seconds: f64,
    pub concurrency: usize,
    /// The agents were in-process on loopback (`--local`).
    #[serde(default)]
    pub local: bool,
    /// The TCP tests' TOS byte (`-S`), at both ends of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
    /// A sample of the pairs (`--pairs`, `--seed`) instead of every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
}

impl RunsPlan for MeshPlan {
    const SCHEMA: &'static str = RUNS_SCHEMA;
    fn schema(&self) -> &str {
        &self.schema
    }
}

/// One finished test: a line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    /// Source agent index.
    pub source: usize,
    /// Destination agent index.
    pub destination: usize,
    /// The slot (round) it ran in, from 0, in this run of the command.
    pub slot: usize,
    /// When the schedule planned it, seconds from this run's start.
    pub planned_start_seconds: f64,
    pub planned_end_seconds: f64,
    /// When the controller asked the source and when the answer came, seconds from this
    /// run's start.
    pub start_seconds: f64,
    pub end_seconds: f64,
    /// The same two moments, seconds since the Unix epoch (the controller's clock).
    pub start_unix_seconds: f64,
    pub end_unix_seconds: f64,
    /// What the source agent measured.
    pub result: Option<PairResult>,
    /// Why it has no result (a refusal, an unreachable agent), verbatim.
    pub error: Option<String>,
}

impl PairRecord {
    pub(crate) fn rate(&self) -> Option<f64> {
        self.result.as_ref().and_then(|r| r.tcp_bits_per_second)
    }

    /// The pair's best round trip: the path's idle delay, to which queues and busy CPUs only
    /// add. The median of a few probes is not a property of the path: in a 16-host lab of
    /// identical links under its own load, 10 of 240 medians sat 1-1.8 ms above the others
    /// (probes waiting for a busy core) and were named "high round trip"; their minimums were
    /// within 0.9 ms of the fleet's.
    pub(crate) fn rtt(&self) -> Option<f64> {
        self.result
            .as_ref()
            .and_then(|r| r.latency.as_ref())
            .and_then(|l| l.min_seconds)
    }

    /// The destination's tail: how long the test's data still arrived after its counted time.
    pub(crate) fn tail(&self) -> Option<wirespeed_net::report::DrainReport> {
        self.result.as_ref().and_then(|r| r.tcp_drain)
    }

    /// The test's errors: the controller's, or the parts the source reported.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut p: Vec<String> = self.error.iter().cloned().collect();
        if let Some(r) = &self.result {
            p.extend(r.errors.iter().cloned());
        }
        p
    }
}

/// The most round trips the controller looks at a second time after the mesh.
pub(crate) const MAX_RECHECKS: usize = 32;

/// A second look at a figure the mesh would flag, after every test has ended, so that no
/// other test's traffic or load is beside it: a round trip's probes alone (no TCP test), or a
/// low rate's TCP test alone (no probes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recheck {
    pub source: usize,
    pub destination: usize,
    /// When the controller asked and when the answer came, seconds from this run's start.
    pub start_seconds: f64,
    pub end_seconds: f64,
    /// A rate's second look: the TCP test's rate at the destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bits_per_second: Option<f64>,
    /// A round trip's second look: the probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<wirespeed_net::control::mesh::PairLatency>,
    pub error: Option<String>,
    /// Whether it looked at the rate (else the round trip).
    pub rate: bool,
}

impl Recheck {
    pub(crate) fn is_of(&self, a: usize, b: usize) -> bool {
        (self.source, self.destination) == (a, b) || (self.source, self.destination) == (b, a)
    }

    pub(crate) fn best(&self) -> Option<f64> {
        self.latency.as_ref().and_then(|l| l.min_seconds)
    }
}

/// Both directions of one unordered pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFigures {
    pub a: usize,
    pub b: usize,
    pub a_to_b_bits_per_second: Option<f64>,
    pub b_to_a_bits_per_second: Option<f64>,
    /// (slower - faster) / faster: 0 equal, -1 one way carried nothing.
    pub asymmetry: Option<f64>,
    pub a_to_b_rtt_seconds: Option<f64>,
    pub b_to_a_rtt_seconds: Option<f64>,
}

/// The `mesh` document's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeshResult {
    pub agents: Vec<AgentEntry>,
    /// Tests planned in all (N(N-1)) and finished with figures.
    pub tests_planned: usize,
    #[serde(default)]
    pub tests_failed: usize,
    /// Slots (rounds) this run scheduled, and how long the schedule says they take: each
    /// test its plan and its tail as measured (the time its data still arrived after `-t` and
    /// the grace, which the test waited for).
    pub slots: usize,
    pub predicted_seconds: f64,
    /// The same before the run: each test its plan alone.
    #[serde(default)]
    pub planned_seconds: f64,
    /// Tests whose round trip is not judged: their probes started right after a test of one
    /// of their agents whose data was still arriving at its cap (`rtt_behind_queue`).
    #[serde(default)]
    pub rtt_not_judged: usize,
    /// How long this run took.
    pub elapsed_seconds: f64,
    /// `rate_matrix_bits_per_second[source][destination]`.
    pub rate_matrix_bits_per_second: Vec<Vec<Option<f64>>>,
    /// The probes' best round trip, same layout.
    pub rtt_matrix_seconds: Vec<Vec<Option<f64>>>,
    pub pairs: Vec<PairFigures>,
    /// The hosts' medians and the latency figures (`wirespeed_model::mesh::analyse`).
    pub analysis: Analysis,
    /// The fleet's verdicts (`wirespeed_model::mesh::faults::judge`): each host judged by
    /// the best rate it reaches against the fleet's best-connected quarter (or its own link's
    /// capacity where known), a duplex mismatch by its signature and counters, then pairs.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Each host's best test, bit/s (`None`: none finished).
    #[serde(default)]
    pub reach_bits_per_second: Vec<Option<f64>>,
    /// The fleet's yardstick: the upper quartile of the reaches (`None` under three hosts).
    #[serde(default)]
    pub yardstick_bits_per_second: Option<f64>,
    /// What was known of each host's own port beside its tests (link ceiling, collision and
    /// CRC counters over the mesh), and where it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_evidence: Vec<HostEvidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_evidence_source: Option<String>,
    /// Every test, in the order they finished.
    pub tests: Vec<PairRecord>,
    /// The second looks at the rates and round trips that the tests alone would have flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rechecks: Vec<Recheck>,
    pub results_file: Option<String>,
    #[serde(skip, default = "default_format")]
    pub rate_format: RateFormat,
    #[serde(skip)]
    pub csv: bool,
    /// The text view's line on a sample (`--pairs`); the JSON has the sample in its parameters.
    #[serde(skip)]
    pub sample_line: Option<String>,
}

fn default_format() -> RateFormat {
    RateFormat::Adaptive
}
