//! The schema of `wirespeed diagnose` (`wirespeed.diagnose.v1`): each interface's evidence and
//! diagnosis, and with `--peer` the two transfers and what they show. It imports nothing of its
//! siblings.

use std::net::SocketAddr;

use serde::Serialize;
use wirespeed_model::diagnose::peer::Transfer;
use wirespeed_model::diagnose::{Diagnosis, Evidence, Finding};

#[derive(Debug, Serialize)]
pub struct Params {
    pub interfaces: Vec<String>,
    pub interval_seconds: f64,
    pub source: String,
}

#[derive(Debug, Serialize)]
pub struct InterfaceReport {
    #[serde(flatten)]
    pub evidence: Evidence,
    pub diagnosis: Diagnosis,
}

#[derive(Debug, Serialize)]
pub struct DiagnoseReport {
    pub interfaces: Vec<InterfaceReport>,
    /// With --peer: the transfers and what they show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerReport>,
}

#[derive(Debug, Serialize)]
pub struct PeerReport {
    pub agent: SocketAddr,
    pub seconds_each: f64,
    pub to_peer: Transfer,
    pub from_peer: Transfer,
    pub findings: Vec<Finding>,
}
