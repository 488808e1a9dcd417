//! The schema of `wirespeed sim csma` (`wirespeed.sim.v1`): the scenario as asked and each
//! point's statistics with the 1976 formula beside them. It imports nothing of its siblings.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::csma_theory::MetcalfeBoggs;
use wirespeed_sim::{Arrivals, Cable, HostModel, MacParams, PointSummary};

/// `--net`: which of the seed's cables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Net {
    Long4,
    Long2,
    Short,
}

/// What was asked, as the document records it.
#[derive(Debug, Serialize)]
pub(crate) struct SimParams {
    pub(crate) model: &'static str,
    pub(crate) rate_bits_per_second: u64,
    pub(crate) mac: MacParams,
    pub(crate) net: Net,
    pub(crate) cable: Cable,
    pub(crate) host: HostModel,
    pub(crate) arrivals: Arrivals,
    pub(crate) hosts: Vec<usize>,
    pub(crate) lengths: Vec<String>,
    pub(crate) warmup_seconds: f64,
    pub(crate) measured_seconds: f64,
    pub(crate) replications: u32,
    pub(crate) seed: u64,
    pub(crate) threads: usize,
}

/// One point with its theory.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SimPoint {
    #[serde(flatten)]
    pub(crate) summary: PointSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) metcalfe_boggs: Option<MetcalfeBoggs>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SimReport {
    pub(crate) points: Vec<SimPoint>,
    pub(crate) events: u64,
    pub(crate) wall_seconds: f64,
    pub(crate) events_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) theory: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) plots: Vec<String>,
    #[serde(skip)]
    pub(crate) rate_format: RateFormat,
    #[serde(skip)]
    pub(crate) replications: u32,
}
