//! The request/response service's messages (netperf's TCP_RR and TCP_CRR; the latency probes of
//! `wirespeed latency`), as they cross the control connection inside
//! [`Message::Rr`](super::Message::Rr). The agent's side is `crate::agent::rr`, the client's
//! `crate::rr`.
//!
//! The transactions themselves run on TCP connections of their own to a port the agent opens
//! for the session: each connection starts with the session's 16-byte cookie, then carries
//! transactions back to back (the client writes `request_bytes`, the agent answers with
//! `response_bytes`) until the client closes it. One connection for many transactions is
//! TCP_RR; a new one per transaction is TCP_CRR.

use serde::{Deserialize, Serialize};

use super::Cookie;

/// The largest request or response: latency probes are small, and a peer must not make the
/// agent hold or send more than this per transaction.
pub const MAX_RR_BYTES: u32 = 64 * 1024;
/// Connections one session may have open at once (a CRR client closes each before the next).
pub const MAX_RR_CONNECTIONS: usize = 16;

/// The service's control messages, inside [`Message::Rr`](super::Message::Rr).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rr", rename_all = "snake_case", deny_unknown_fields)]
pub enum RrMessage {
    /// Client -> agent: answer `request_bytes` with `response_bytes` for this long.
    Open {
        /// Bytes the client writes per transaction (1 to [`MAX_RR_BYTES`]).
        request_bytes: u32,
        /// Bytes the agent writes back (1 to [`MAX_RR_BYTES`]).
        response_bytes: u32,
        /// How long the service may run, seconds (capped by the agent's `--max-duration`).
        seconds: f64,
    },
    /// Agent -> client: connect to this TCP port; start every connection with this cookie.
    Ready {
        /// The agent's TCP port.
        agent_port: u16,
        /// The session cookie.
        cookie: Cookie,
    },
    /// Client -> agent: done.
    Close,
    /// Agent -> client: the service has stopped.
    Closed {
        /// Transactions answered.
        transactions: u64,
        /// Connections accepted with the cookie.
        connections: u64,
        /// Connections refused: a wrong cookie, or over [`MAX_RR_CONNECTIONS`].
        refused: u64,
    },
}

/// Whether an `open` is within the protocol's bounds (the agent adds its own duration limit).
pub fn open_is_valid(request_bytes: u32, response_bytes: u32, seconds: f64) -> bool {
    (1..=MAX_RR_BYTES).contains(&request_bytes)
        && (1..=MAX_RR_BYTES).contains(&response_bytes)
        && seconds.is_finite()
        && seconds > 0.0
}
