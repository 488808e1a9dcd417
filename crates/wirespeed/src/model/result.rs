//! The schema of `wirespeed model` (`wirespeed.model.v1`): what was asked (predict, compare
//! or fit) and each job's result. It imports nothing of its siblings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use wirespeed_model::delay::{Component, Prediction, SegmentComparison, Tolerance};

/// What `model` was asked to do.
#[derive(Debug, Serialize)]
pub(crate) struct ModelParameters {
    pub(crate) action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) probe_file: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
pub(crate) struct PredictReport {
    pub(crate) file: String,
    pub(crate) path: String,
    pub(crate) description: String,
    pub(crate) velocity_factor: f64,
    pub(crate) prediction: Prediction,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompareReport {
    pub(crate) path: String,
    pub(crate) tolerance: Tolerance,
    pub(crate) segments: Vec<NamedSegment>,
}

/// A segment with the probe's name for where it ends.
#[derive(Debug, Serialize)]
pub(crate) struct NamedSegment {
    /// "hop 1 (ih1)", "hop 2 (ih2, destination)", or "HOST (destination)" for a probe of the
    /// destination alone.
    pub(crate) to: String,
    #[serde(flatten)]
    pub(crate) segment: SegmentComparison,
}

#[derive(Debug, Serialize)]
pub(crate) struct FitReport {
    pub(crate) components: BTreeMap<String, Component>,
    pub(crate) path: Vec<(String, u32)>,
    pub(crate) toml: String,
}
