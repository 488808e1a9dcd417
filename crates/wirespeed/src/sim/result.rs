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
pub enum Net {
    Long4,
    Long2,
    Short,
}

/// What was asked, as the document records it.
#[derive(Debug, Serialize)]
pub struct SimParams {
    pub model: &'static str,
    pub rate_bits_per_second: u64,
    pub mac: MacParams,
    pub net: Net,
    pub cable: Cable,
    pub host: HostModel,
    pub arrivals: Arrivals,
    pub hosts: Vec<usize>,
    pub lengths: Vec<String>,
    pub warmup_seconds: f64,
    pub measured_seconds: f64,
    pub replications: u32,
    pub seed: u64,
    pub threads: usize,
}

/// One point with its theory.
#[derive(Debug, Serialize, Deserialize)]
pub struct SimPoint {
    #[serde(flatten)]
    pub summary: PointSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metcalfe_boggs: Option<MetcalfeBoggs>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SimReport {
    pub points: Vec<SimPoint>,
    pub events: u64,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theory: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plots: Vec<String>,
    #[serde(skip)]
    pub(crate) rate_format: RateFormat,
    #[serde(skip)]
    pub(crate) replications: u32,
}
