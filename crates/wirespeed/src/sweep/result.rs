//! The schema of `wirespeed sweep` (`wirespeed.sweep.v1`) and of its results file
//! (`wirespeed.sweep-runs.v1`): the plan that fixes every run and its order, and the report made
//! of the runs. It imports nothing of its siblings, so that `report` and `reproduce` read saved
//! sweeps without what measures or prints.

use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::sweep::{Axis, PlanEstimate, RunRecord, SweepAnalysis};

use crate::common::runs_file::RunsPlan;

/// The schema of a sweep results file's first line.
#[doc(hidden)]
pub const RUNS_SCHEMA: &str = "wirespeed.sweep-runs.v1";

/// Everything that fixes which runs a sweep consists of and in which order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    pub schema: String,
    /// The agent, or "loopback" for the in-process one.
    pub target: String,
    pub snd: Axis,
    pub rcv: Axis,
    pub reps: u32,
    pub seed: u64,
    /// Bytes of one "packet" on the axes.
    pub mss_bytes: u64,
    /// Whether runs set TCP_MAXSEG to `mss_bytes` (`-M`), or leave the path's own MSS.
    #[serde(default)]
    pub set_mss: bool,
    /// Bytes per run, when the runs are fixed-size.
    pub transfer_bytes: Option<u64>,
    /// Seconds per run, when the runs are timed.
    pub transfer_seconds: Option<f64>,
}

impl RunsPlan for SweepPlan {
    const SCHEMA: &'static str = RUNS_SCHEMA;
    fn schema(&self) -> &str {
        &self.schema
    }
}

/// The sweep's result document body.
#[derive(Debug, Serialize, Deserialize)]
pub struct SweepReport {
    pub plan: SweepPlan,
    /// Where the runs are kept.
    pub results_file: String,
    /// True when every planned run finished.
    pub complete: bool,
    pub runs_planned: usize,
    pub runs: Vec<RunRecord>,
    pub ceiling_bytes_per_second: Option<f64>,
    /// Where the ceiling comes from (`--link-rate`, or a lab's configured route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling_source: Option<String>,
    /// The plan's duration as estimated before its first run (a new sweep only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<PlanEstimate>,
    pub analysis: SweepAnalysis,
    #[serde(skip)]
    pub rate_format: RateFormat,
}
