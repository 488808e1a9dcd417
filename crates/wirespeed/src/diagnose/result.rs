//! The schema of `wirespeed diagnose` (`wirespeed.diagnose.v1`): each interface's evidence and
//! diagnosis, and with `--peer` the two transfers and what they show. It imports nothing of its
//! siblings.

use std::net::SocketAddr;

use serde::Serialize;
use wirespeed_model::diagnose::peer::Transfer;
use wirespeed_model::diagnose::{Diagnosis, Evidence, Finding};

#[derive(Debug, Serialize)]
pub(crate) struct Params {
    pub(crate) interfaces: Vec<String>,
    pub(crate) interval_seconds: f64,
    pub(crate) source: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct InterfaceReport {
    #[serde(flatten)]
    pub(crate) evidence: Evidence,
    pub(crate) diagnosis: Diagnosis,
}

#[derive(Debug, Serialize)]
pub(crate) struct DiagnoseReport {
    pub(crate) interfaces: Vec<InterfaceReport>,
    /// With --peer: the transfers and what they show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) peer: Option<PeerReport>,
}

#[derive(Debug, Serialize)]
pub(crate) struct PeerReport {
    pub(crate) agent: SocketAddr,
    pub(crate) seconds_each: f64,
    pub(crate) to_peer: Transfer,
    pub(crate) from_peer: Transfer,
    pub(crate) findings: Vec<Finding>,
}
