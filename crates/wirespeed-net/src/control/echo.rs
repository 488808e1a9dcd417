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

/// Cookie, sequence and the agent's residence time (8 bytes, signed, big-endian, ns): the
/// smallest echo payload that can carry a residence ([`super::RESIDENCE_FEATURE`]).
pub const ECHO_STAMPED_LEN: usize = ECHO_HEADER_LEN + 8;
/// What a client writes in the residence field to ask for it: the agent replaces it with the
/// time from its kernel's receive stamp of the datagram to just before its `sendmsg` of the
/// reply. A reply that still carries it was not stamped (the agent had no receive stamp).
pub const RESIDENCE_ASKED: i64 = i64::MIN;

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

/// Agent side: writes `residence_ns` into a datagram that asks for it (at least
/// [`ECHO_STAMPED_LEN`] bytes, the field holding [`RESIDENCE_ASKED`]); true if it did. The
/// datagram keeps its length, so the reply is never larger than the request.
pub(crate) fn stamp_residence(datagram: &mut [u8], residence_ns: i64) -> bool {
    let Some(field) = datagram.get_mut(ECHO_HEADER_LEN..ECHO_STAMPED_LEN) else {
        return false;
    };
    if field != RESIDENCE_ASKED.to_be_bytes() || residence_ns == RESIDENCE_ASKED {
        return false;
    }
    field.copy_from_slice(&residence_ns.to_be_bytes());
    true
}

/// Client side: the residence field of a reply, as sent (hostile: any value), `None` when the
/// reply is too short to carry one or was not stamped.
pub fn echo_residence(datagram: &[u8]) -> Option<i64> {
    let field = datagram.get(ECHO_HEADER_LEN..ECHO_STAMPED_LEN)?;
    let value = i64::from_be_bytes(field.try_into().ok()?);
    (value != RESIDENCE_ASKED).then_some(value)
}

/// What a client makes of a reply's residence against the round trip it measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residence {
    /// No residence in the reply (an agent without the feature, or no receive stamp).
    Absent,
    /// A residence within `0..=round trip`, ns.
    Accepted(u64),
    /// A residence that cannot be true (negative, or longer than the whole round trip): the
    /// reply is kept as a raw round trip and the residence is counted as rejected.
    Rejected,
}

/// Checks a reply's residence (`echo_residence`) against the round trip `rtt_ns` that
/// contains it.
pub fn check_residence(residence_ns: Option<i64>, rtt_ns: u64) -> Residence {
    match residence_ns {
        None => Residence::Absent,
        Some(r) => match u64::try_from(r) {
            Ok(r) if r <= rtt_ns => Residence::Accepted(r),
            _ => Residence::Rejected,
        },
    }
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
    fn a_residence_is_written_only_where_asked_and_checked_against_the_round_trip() {
        let c = Cookie([9; 16]);
        let mut d = c.0.to_vec();
        d.extend_from_slice(&7u64.to_be_bytes());
        // Too short to carry one: untouched.
        let mut short = d.clone();
        assert!(!stamp_residence(&mut short, 5));
        assert_eq!(short, d);
        assert_eq!(echo_residence(&short), None);
        // Long enough but not asked (zero padding, as `probe --udp` sends): untouched.
        let mut padded = d.clone();
        padded.resize(64, 0);
        let before = padded.clone();
        assert!(!stamp_residence(&mut padded, 5));
        assert_eq!(padded, before);
        assert_eq!(echo_residence(&padded), Some(0));
        // Asked: stamped in place, same length, cookie and sequence intact.
        let mut asked = d.clone();
        asked.extend_from_slice(&RESIDENCE_ASKED.to_be_bytes());
        asked.resize(40, 1);
        assert_eq!(echo_residence(&asked), None, "asked but not stamped");
        assert!(stamp_residence(&mut asked, 12_345));
        assert_eq!(asked.len(), 40);
        assert_eq!(echo_sequence(&asked, &c), Some(7));
        assert_eq!(echo_residence(&asked), Some(12_345));
        // A hostile reply.
        assert_eq!(check_residence(Some(-1), 1_000), Residence::Rejected);
        assert_eq!(check_residence(Some(1_001), 1_000), Residence::Rejected);
        assert_eq!(
            check_residence(Some(i64::MAX), u64::MAX),
            Residence::Accepted(i64::MAX as u64)
        );
        assert_eq!(
            check_residence(Some(1_000), 1_000),
            Residence::Accepted(1_000)
        );
        assert_eq!(check_residence(Some(0), 1_000), Residence::Accepted(0));
        assert_eq!(check_residence(None, 1_000), Residence::Absent);
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
