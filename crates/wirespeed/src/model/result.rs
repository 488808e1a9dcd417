//! The schema of `wirespeed model` (`wirespeed.model.v1`): what was asked (predict, compare
//! or fit) and each job's result. It imports nothing of its siblings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use wirespeed_model::delay::{Component, Prediction, SegmentComparison, Tolerance};

/// What `model` was asked to do.
#[derive(Debug, Serialize)]
pub struct ModelParameters {
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_file: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
pub struct PredictReport {
    pub file: String,
    pub path: String,
    pub description: String,
    pub velocity_factor: f64,
    pub prediction: Prediction,
}

#[derive(Debug, Serialize)]
pub struct CompareReport {
    pub path: String,
    pub tolerance: Tolerance,
    pub segments: Vec<NamedSegment>,
}

/// A segment with the probe's name for where it ends.
#[derive(Debug, Serialize)]
pub struct NamedSegment {
    /// "hop 1 (ih1)", "hop 2 (ih2, destination)", or "HOST (destination)" for a probe of the
    /// destination alone.
    pub to: String,
    #[serde(flatten)]
    pub segment: SegmentComparison,
}

#[derive(Debug, Serialize)]
pub struct FitReport {
    pub components: BTreeMap<String, Component>,
    pub path: Vec<(String, u32)>,
    pub toml: String,
}
