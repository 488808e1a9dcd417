//! The UDP echo's messages (probes against the agent), as they cross the control connection
//! inside [`Message::Echo`](super::Message::Echo). The echo itself is `crate::echo`.

use serde::{Deserialize, Serialize};

use super::Cookie;

/// The most datagrams a session's echo answers per second (a token bucket with a burst of
/// [`ECHO_BURST`]); the client paces its probes to it.
pub const MAX_ECHO_PER_SECOND: f64 = 2000.0;
/// Datagrams answered back to back before the rate limit applies.
pub const ECHO_BURST: f64 = 64.0;
/// Cookie (16) and sequence number (8): the smallest echo payload.
pub const ECHO_HEADER_LEN: usize = 24;

/// What the agent's echo did in one session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EchoTotals {
    /// Datagrams answered.
    pub answered: u64,
    /// Datagrams dropped (no cookie, or over the rate limit).
    pub dropped: u64,
}

/// The echo's control messages, inside [`Message::Echo`](super::Message::Echo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "echo", rename_all = "snake_case", deny_unknown_fields)]
pub enum EchoMessage {
    /// Client -> agent: echo datagrams from this UDP port of my address for this long.
    Open {
        /// The client's UDP port (its IP is the control connection's).
        client_port: u16,
        /// How long the echo may run, seconds (capped by the agent's `--max-duration`).
        seconds: f64,
    },
    /// Agent -> client: send to this port; start every datagram with this cookie.
    Ready {
        /// The agent's UDP port.
        agent_port: u16,
        /// The session cookie.
        cookie: Cookie,
    },
    /// Client -> agent: done.
    Close,
    /// Agent -> client: the echo has stopped.
    Closed {
        /// Datagrams answered.
        answered: u64,
        /// Datagrams dropped: without the cookie, or over the rate limit.
        dropped: u64,
    },
}

/// Whether a datagram is one of this session's probes.
pub(crate) fn carries_cookie(datagram: &[u8], cookie: &Cookie) -> bool {
    datagram.len() >= ECHO_HEADER_LEN && datagram[..16] == cookie.0
}

/// The sequence number of an echo datagram of the session with `cookie`, `None` for anything
/// else: how the client reads a reply (and the fuzz target `datagrams` reads any bytes).
pub fn echo_sequence(datagram: &[u8], cookie: &Cookie) -> Option<u64> {
    if !carries_cookie(datagram, cookie) {
        return None;
    }
    Some(u64::from_be_bytes(
        datagram.get(16..ECHO_HEADER_LEN)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::Message;

    #[test]
    fn only_datagrams_with_the_cookie_are_echoed() {
        let c = Cookie([9; 16]);
        let mut d = vec![9u8; 24];
        assert!(carries_cookie(&d, &c));
        d[3] = 0;
        assert!(!carries_cookie(&d, &c));
        assert!(
            !carries_cookie(&[9u8; 23], &c),
            "too short to carry a sequence"
        );
    }

    #[test]
    fn the_committed_corpus_frames_decode_to_echo_messages() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/decode");
        for i in 0..4 {
            let bytes = std::fs::read(format!("{dir}/echo-{i}")).unwrap();
            let (m, _) = crate::control::decode(&bytes).unwrap().unwrap();
            assert_eq!(m.kind(), "echo");
        }
    }

    #[test]
    fn echo_messages_round_trip_in_json() {
        let m = Message::Echo(EchoMessage::Open {
            client_port: 4000,
            seconds: 5.0,
        });
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
        assert!(text.contains("\"echo\":\"open\""), "{text}");
    }
}
