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
/// Cookie, sequence, residence and the follow-up ([`super::FOLLOW_UP_FEATURE`]): the sequence
/// of an earlier reply (8 bytes) and the time from just before that reply's `sendmsg` to its
/// kernel transmit stamp (8 bytes, signed, ns; both big-endian), which the agent learns only
/// once the reply has left (as PTP's two-step clocks send a follow-up).
pub const ECHO_FOLLOW_UP_LEN: usize = ECHO_STAMPED_LEN + 16;
/// What a client writes in the follow-up's time to ask for one; a reply that still carries it
/// brings none (the agent had no transmit stamp yet).
pub const FOLLOW_UP_ASKED: i64 = i64::MIN;

/// What a client writes after the residence field (bytes 32..40) to ask for a short reply
/// ([`super::SHORT_REPLY_FEATURE`]): the agent answers with the first [`ECHO_SHORT_LEN`] bytes
/// of the datagram (cookie, sequence, the residence it stamps there when asked, and this
/// field) instead of all of it, so the bytes returned stay constant whatever the size sent.
/// Differs from zero padding and from the values a follow-up request carries there, so
/// neither is ever read as it.
pub const SHORT_REPLY_ASKED: i64 = i64::MIN + 0x5352;
/// Cookie, sequence, residence and the short-reply field: the whole of a short reply, and the
/// smallest datagram that can ask for one (so a short reply is never larger than its request).
pub const ECHO_SHORT_LEN: usize = ECHO_STAMPED_LEN + 8;

/// Agent side: how many bytes of `datagram` go back. All of them, unless the session's client
/// named [`super::SHORT_REPLY_FEATURE`] (`short_allowed`) and the datagram asks for a short
/// reply: then its first [`ECHO_SHORT_LEN`]. Never more than the datagram.
pub(crate) fn reply_len(datagram: &[u8], short_allowed: bool) -> usize {
    if short_allowed && asks_short_reply(datagram) {
        ECHO_SHORT_LEN
    } else {
        datagram.len()
    }
}

/// Whether a datagram asks for a short reply (long enough to carry the field, holding
/// [`SHORT_REPLY_ASKED`]).
pub fn asks_short_reply(datagram: &[u8]) -> bool {
    datagram
        .get(ECHO_STAMPED_LEN..ECHO_SHORT_LEN)
        .is_some_and(|f| f == SHORT_REPLY_ASKED.to_be_bytes())
}

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
#[doc(hidden)]
#[inline]
pub fn carries_cookie(datagram: &[u8], cookie: &Cookie) -> bool {
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
#[doc(hidden)]
#[inline]
pub fn stamp_residence(datagram: &mut [u8], residence_ns: i64) -> bool {
    let Some(field) = datagram.get_mut(ECHO_HEADER_LEN..ECHO_STAMPED_LEN) else {
        return false;
    };
    if field != RESIDENCE_ASKED.to_be_bytes() || residence_ns == RESIDENCE_ASKED {
        return false;
    }
    field.copy_from_slice(&residence_ns.to_be_bytes());
    true
}

/// Agent side: writes the follow-up of reply `seq` (`send_path_ns`, from just before its
/// `sendmsg` to its kernel transmit stamp) into a datagram that asks for one (at least
/// [`ECHO_FOLLOW_UP_LEN`] bytes, the time holding [`FOLLOW_UP_ASKED`]); true if it did.
#[doc(hidden)]
#[inline]
pub fn stamp_follow_up(datagram: &mut [u8], seq: u64, send_path_ns: i64) -> bool {
    let Some(field) = datagram.get_mut(ECHO_STAMPED_LEN..ECHO_FOLLOW_UP_LEN) else {
        return false;
    };
    if field[8..] != FOLLOW_UP_ASKED.to_be_bytes() || send_path_ns == FOLLOW_UP_ASKED {
        return false;
    }
    field[..8].copy_from_slice(&seq.to_be_bytes());
    field[8..].copy_from_slice(&send_path_ns.to_be_bytes());
    true
}

/// Client side: the follow-up of a reply (the sequence of the earlier reply it is about, and
/// that reply's send path, ns), as sent (hostile: any values), `None` when it carries none.
pub fn echo_follow_up(datagram: &[u8]) -> Option<(u64, i64)> {
    let field = datagram.get(ECHO_STAMPED_LEN..ECHO_FOLLOW_UP_LEN)?;
    let seq = u64::from_be_bytes(field[..8].try_into().ok()?);
    let ns = i64::from_be_bytes(field[8..].try_into().ok()?);
    (ns != FOLLOW_UP_ASKED).then_some((seq, ns))
}

/// Client side: a reply's accepted residence (to just before the agent's `sendmsg`) carried on
/// to the agent's kernel transmit stamp by its follow-up, checked against the round trip
/// `rtt_ns` that contains both; anything else is returned unchanged (a follow-up that cannot
/// be true, negative or past the round trip, is ignored: the residence stays the shorter one).
pub fn follow_up(residence: Residence, send_path_ns: i64, rtt_ns: u64) -> Residence {
    match (residence, u64::try_from(send_path_ns)) {
        (Residence::Accepted(r), Ok(p)) => match r.checked_add(p) {
            Some(total) if total <= rtt_ns => Residence::ToTransmit(total),
            _ => residence,
        },
        (other, _) => other,
    }
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
    /// A residence within `0..=round trip`, ns: to just before the agent's `sendmsg`.
    Accepted(u64),
    /// A residence to the agent's kernel transmit stamp (the follow-up's send path added),
    /// within `0..=round trip`, ns: taken as the reply enters the agent's device queue, where
    /// the client's own transmit stamp is taken too.
    ToTransmit(u64),
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
