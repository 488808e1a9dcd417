//! The `wirespeed.deploy.v1` schema: the flags a set of manifests was made from and the
//! manifests themselves, with the mesh Job's planned length that sized its deadline.

use serde::Serialize;
use serde_json::Value;

/// The `deploy` document's parameters (in the order the document has always written them).
#[derive(Debug, Serialize)]
#[doc(hidden)]
pub struct Parameters {
    pub(crate) agents: Vec<String>,
    pub(crate) allow_destination: Vec<String>,
    pub(crate) image: String,
    pub(crate) max_memory_bytes: u64,
    pub(crate) metrics_port: u16,
    pub(crate) namespace: String,
    pub(crate) nodes: usize,
    pub(crate) pairs: Option<usize>,
    pub(crate) port: u16,
    pub(crate) probes: u32,
    pub(crate) secret: String,
    pub(crate) target: &'static str,
    pub(crate) tcp_seconds: f64,
}

/// The `deploy` document's result: the manifests, in apply order.
#[derive(Debug, Serialize)]
#[doc(hidden)]
pub struct Manifests {
    pub manifests: Vec<Value>,
    /// How long the Job's mesh should take over `nodes` agents, seconds, as the mesh plans it.
    pub predicted_mesh_seconds: f64,
    /// The longest it can take by its schedule: every test's tail (its data still arriving
    /// after `-t`) at the destination's cap. The Job's deadline is twice this and 5 minutes.
    pub longest_mesh_seconds: f64,
}
