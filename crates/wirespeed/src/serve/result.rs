//! The `wirespeed.serve.v1` schema of `serve --json`: one line when the agent listens, then
//! one line per finished session. Fields in the order the lines have always had them.

use serde::Serialize;
use wirespeed_net::agent::SessionRecord;

pub(crate) const SCHEMA: &str = "wirespeed.serve.v1";

/// The first line: where the agent listens (and, from the command that started a daemon, the
/// daemon's pid and its metrics address).
#[derive(Debug, Serialize)]
pub(crate) struct Listening {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) daemon_pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) iperf3_listening: Option<String>,
    pub(crate) listening: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) metrics_listening: Option<String>,
    pub(crate) schema: &'static str,
    pub(crate) wirespeed_version: &'static str,
}

/// A finished session's line.
#[derive(Debug, Serialize)]
pub(crate) struct SessionLine<'a> {
    pub(crate) schema: &'static str,
    pub(crate) session: &'a SessionRecord,
    pub(crate) wirespeed_version: &'static str,
}
