//! Agent-to-agent tests (`wirespeed mesh`, issue 19), as they cross the control connection
//! inside [`Message::Mesh`](super::Message::Mesh). What the agents do with them is
//! `crate::mesh`.
//!
//! ```text
//! controller             source agent                      destination agent
//!   run{destination,..} ->   (keyed? destination allowed?)
//!                            hello, key challenge        ->   (the source proves the key)
//!                            consent{nonce}              ->
//!                                                        <-   consented{proof}
//!                            (the proof checks: the destination holds the fleet's key)
//!                            UDP echo probes, then the TCP test, each its own session
//!                       <-   result{...}
//! ```
//!
//! Versioning: the messages ride on control protocol version 1 as a new message kind, so that
//! every other session between old and new releases works as before; an agent of an older
//! release answers `run` with an error naming the unknown variant `mesh`, which the controller
//! reports as "upgrade that agent". [`MESH_VERSION`] travels in `run` and `consent`, so that a
//! later change of these messages is refused with a sentence instead of misread.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// The version of the mesh messages. An agent refuses a `run` or `consent` of another.
pub const MESH_VERSION: u32 = 1;
/// The most latency probes one test may send.
pub const MAX_PROBES: u32 = 1000;
/// The shortest gap between latency probes, seconds (the echo's own rate limit is 2000/s).
pub const MIN_PROBE_GAP_SECONDS: f64 = 0.001;
/// The longest gap between latency probes, seconds.
pub const MAX_PROBE_GAP_SECONDS: f64 = 1.0;
/// The HMAC context of the destination's consent (apart from the handshake's, so that one
/// answer can never stand for the other).
pub const CONSENT_CONTEXT: &[u8] = b"wirespeed-mesh-consent-v1";

/// The test a controller asks of a source agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairTest {
    /// [`MESH_VERSION`].
    pub mesh_version: u32,
    /// The destination agent's control address.
    pub destination: SocketAddr,
    /// The TCP test's duration, seconds (bounded by both agents' `--max-duration`).
    pub tcp_seconds: f64,
    /// Latency probes (UDP echo) before the TCP test; 0 for none.
    pub probes: u32,
    /// Gap between probes, seconds.
    pub probe_gap_seconds: f64,
    /// The IP TOS byte (IPv6: traffic class) of the TCP test's data sockets at both ends
    /// (`mesh -S`). Left out when unset, so that an agent of the release before it still takes
    /// a test without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
}

impl PairTest {
    /// `None` if the request is within the protocol's bounds, else the refusal.
    pub fn check(&self) -> Option<String> {
        if self.mesh_version != MESH_VERSION {
            return Some(format!(
                "refused by the agent: mesh messages of version {} (this agent speaks {MESH_VERSION}); run the same wirespeed release at the controller and the agents",
                self.mesh_version
            ));
        }
        let timed =
            self.tcp_seconds.is_finite() && self.tcp_seconds >= crate::spec::MIN_TEST_SECONDS;
        if !(timed || self.probes_only()) {
            return Some(format!(
                "refused by the agent: a mesh test of {} s; ask for at least {} s (-t)",
                self.tcp_seconds,
                crate::spec::MIN_TEST_SECONDS
            ));
        }
        if self.probes > MAX_PROBES {
            return Some(format!(
                "refused by the agent: {} latency probes; at most {MAX_PROBES} per test (--probes)",
                self.probes
            ));
        }
        if !(MIN_PROBE_GAP_SECONDS..=MAX_PROBE_GAP_SECONDS).contains(&self.probe_gap_seconds) {
            return Some(format!(
                "refused by the agent: a probe gap of {} s; use {MIN_PROBE_GAP_SECONDS} to {MAX_PROBE_GAP_SECONDS} s",
                self.probe_gap_seconds
            ));
        }
        if self.destination.port() == 0 || self.destination.ip().is_unspecified() {
            return Some(format!(
                "refused by the agent: {} is not an agent's address",
                self.destination
            ));
        }
        None
    }

    /// A `-t` of exactly 0 with probes: the latency probes alone, no TCP test (the
    /// controller's second look at a round trip it would flag, taken when no other test runs).
    pub fn probes_only(&self) -> bool {
        self.tcp_seconds == 0.0 && self.probes > 0
    }

    /// How long the probes take at most, seconds.
    pub fn probe_seconds(&self) -> f64 {
        f64::from(self.probes) * self.probe_gap_seconds
    }
}

/// The latency probes' figures (round trips on the user clock around the system calls, the
/// kernel's where both software stamps came).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairLatency {
    /// Probes sent.
    pub sent: u32,
    /// Probes answered.
    pub answered: u32,
    /// Smallest round trip, seconds.
    pub min_seconds: Option<f64>,
    /// Median round trip, seconds.
    pub median_seconds: Option<f64>,
    /// 90th percentile, seconds.
    pub p90_seconds: Option<f64>,
    /// Largest, seconds.
    pub max_seconds: Option<f64>,
}

/// What the source agent measured toward the destination.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// TCP payload received by the destination per second, bit/s.
    pub tcp_bits_per_second: Option<f64>,
    /// Bytes the destination received.
    pub tcp_bytes: Option<u64>,
    /// The test's length at the destination, seconds.
    pub tcp_seconds: Option<f64>,
    /// Segments the source retransmitted.
    pub retransmits: Option<u64>,
    /// The source's smoothed round trip at the end of the test, seconds.
    pub tcp_rtt_seconds: Option<f64>,
    /// The latency probes.
    pub latency: Option<PairLatency>,
    /// Why a part failed (the other parts may have run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// With `-S`: the TOS byte (IPv6: traffic class) the TCP test's data socket carried at
    /// the source and at the destination, each read back from its kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_tos: Option<u8>,
    /// The destination's, from its report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_tos: Option<u8>,
    /// When the source started the TCP test's session (after the probes) and when it had
    /// both ends' views of it, seconds since the Unix epoch (its clock): between them the
    /// session's set-up, `-t`, and the end of the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_started_unix_seconds: Option<f64>,
    /// See `tcp_started_unix_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_ended_unix_seconds: Option<f64>,
    /// The destination's tail after its counted time (`-t` and the grace): how long the
    /// test's data still arrived, and what ended it. The test ended only then, so the path's
    /// queues no longer hold its data when the agents' next tests start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_drain: Option<crate::report::DrainReport>,
    /// When the source started and ended the test, seconds since the Unix epoch (its clock).
    pub started_unix_seconds: f64,
    /// When it ended.
    pub ended_unix_seconds: f64,
}

/// The mesh's control messages, inside [`Message::Mesh`](super::Message::Mesh).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mesh", rename_all = "snake_case", deny_unknown_fields)]
pub enum MeshMessage {
    /// Controller -> source agent: test this destination.
    Run {
        /// The test.
        test: PairTest,
    },
    /// Source agent -> controller: the test's figures; the session ends.
    Result {
        /// What it measured.
        result: PairResult,
    },
    /// Source -> destination agent: prove that you hold the fleet's key and take part.
    Consent {
        /// [`MESH_VERSION`].
        mesh_version: u32,
        /// 32 random bytes, hex, drawn by the source.
        nonce: String,
    },
    /// Destination -> source: HMAC-SHA256 under the key, context [`CONSENT_CONTEXT`], of the
    /// nonce and the source's address as the destination sees it, hex.
    Consented {
        /// The proof.
        proof: String,
    },
}

impl PairResult {
    /// Whether every figure a source agent reported can be true (finite, not negative, the
    /// rate consistent with its bytes and time, answers within probes sent, latency quantiles
    /// in order); the refusal names `peer` and the figure.
    pub fn check(&self, peer: &str) -> Result<(), wirespeed_model::peer::Impossible> {
        let f = wirespeed_model::peer::Figures::of(peer);
        f.maybe("rate", self.tcp_bits_per_second)?;
        f.maybe("duration", self.tcp_seconds)?;
        f.maybe("round-trip time", self.tcp_rtt_seconds)?;
        if let (Some(rate), Some(bytes), Some(seconds)) =
            (self.tcp_bits_per_second, self.tcp_bytes, self.tcp_seconds)
        {
            f.rate(rate, bytes, seconds)?;
        }
        if let Some(l) = &self.latency {
            f.answered(u64::from(l.sent), u64::from(l.answered))?;
            f.ordered(
                "latency",
                &[
                    l.min_seconds,
                    l.median_seconds,
                    l.p90_seconds,
                    l.max_seconds,
                ],
            )?;
        }
        Ok(())
    }
}

/// The bytes the consent proof covers: the nonce and the source's IP address as text, so that
/// a proof made for one source does not stand for another.
pub fn consent_bytes(nonce: &[u8], source: std::net::IpAddr) -> Vec<u8> {
    let mut b = nonce.to_vec();
    b.extend_from_slice(source.to_canonical().to_string().as_bytes());
    b
}
