//! The control messages. Each is one JSON object whose `"type"` names it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::report::SideReport;
use crate::spec::TestSpec;

/// The protocol version in every hello. A peer with another version is refused with a message
/// that names both.
pub const PROTOCOL_VERSION: u32 = 1;

/// The word a client adds to its hello's `software` (`wirespeed 0.1.0 +queue`) when it
/// understands [`Message::Queued`]. A feature named in the free text of the hello keeps the
/// protocol version: an agent that knows nothing of it ignores the word, and an agent that
/// does sends `queued` only to clients that named it (others wait without the notice).
pub const QUEUE_FEATURE: &str = "+queue";

/// The word both ends add to their hello and welcome (`wirespeed 0.1.0 +residence`) when they
/// stamp UDP echo replies with the agent's residence time (RFC 8762's receive-to-send
/// interval): the client asks per datagram by writing [`crate::control::echo::RESIDENCE_ASKED`]
/// after the sequence, and an agent that named the word overwrites it
/// ([`crate::control::echo::stamp_residence`]). Neither end changes anything unless the other
/// named it, so old agents and old clients keep working byte for byte.
pub const RESIDENCE_FEATURE: &str = "+residence";

/// The word both ends add (beside [`RESIDENCE_FEATURE`]) when the agent also reports each
/// reply's send path, from just before its `sendmsg` to its kernel's transmit stamp, in a
/// later reply ([`crate::control::echo::ECHO_FOLLOW_UP_LEN`]), so that the residence the
/// client takes out ends at the agent's device (its queue's entry, just before the instant a
/// lab's emulator charges the link from), as the client's own transmit stamp is taken there.
pub const FOLLOW_UP_FEATURE: &str = "+followup";

/// The word both ends add when the agent answers a UDP echo datagram that asks for it
/// ([`crate::control::echo::SHORT_REPLY_ASKED`]) with a short reply of fixed size
/// ([`crate::control::echo::ECHO_SHORT_LEN`] bytes: cookie, sequence, the field) instead of
/// the whole datagram: `probe --hops --udp` times the destination's bytes sent on a line whose
/// returned bytes are constant. An agent answers short only in a session whose client named
/// the word, and a client asks only an agent whose welcome names it (an older agent is refused
/// by the client with the fix, before any probe).
pub const SHORT_REPLY_FEATURE: &str = "+shortreply";

/// The word an agent adds to its welcome when its TCP senders take the rate cap of
/// [`crate::spec::TestSpec::max_pacing_rate_bits_per_second`] (`tcp -b`). An agent without it
/// would refuse the field (or, sending, could not honour it), so a client does not send the cap
/// to such an agent: it refuses the test when the agent is to send, and caps only its own
/// senders otherwise.
pub const MAX_PACING_FEATURE: &str = "+maxpacing";

/// Whether a hello's `software` names `feature`.
pub fn names_feature(software: &str, feature: &str) -> bool {
    software.split_whitespace().any(|w| w == feature)
}

/// 16 random bytes that tie data connections (and UDP datagrams) to their session. Written as
/// 32 hex digits in JSON.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie(pub [u8; 16]);

impl Cookie {
    /// A fresh random cookie.
    pub fn random() -> std::io::Result<Cookie> {
        let mut c = [0u8; 16];
        crate::auth::random_bytes(&mut c)?;
        Ok(Cookie(c))
    }

    /// The first eight bytes as a number: the tag every UDP datagram of the session carries.
    pub fn tag(&self) -> u64 {
        u64::from_be_bytes(self.0[..8].try_into().expect("16 bytes"))
    }
}

impl fmt::Debug for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cookie({})", crate::auth::hex(&self.0))
    }
}

impl Serialize for Cookie {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::auth::hex(&self.0))
    }
}

impl<'de> Deserialize<'de> for Cookie {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cookie, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = crate::auth::unhex(&text)
            .filter(|b| b.len() == 16)
            .ok_or_else(|| serde::de::Error::custom("a cookie is 32 hex digits"))?;
        let mut c = [0u8; 16];
        c.copy_from_slice(&bytes);
        Ok(Cookie(c))
    }
}

/// One control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Message {
    /// Client -> agent, first: who is asking and in which protocol version.
    Hello {
        /// [`PROTOCOL_VERSION`] of the client.
        protocol_version: u32,
        /// `wirespeed 0.1.0`.
        software: String,
        /// A client with a key: its 32 random bytes of the handshake, hex ([`crate::auth`]).
        /// Absent (and not written) without a key, so keyless ends of any release agree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nonce: Option<String>,
    },
    /// Agent -> client when a key is required: the agent's nonce and its proof of the key.
    Challenge {
        /// 32 random bytes, hex.
        nonce: String,
        /// The agent's proof for this session ([`crate::auth::Handshake::proof`]), hex. An
        /// agent of an older release sends none, and a keyed client refuses it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof: Option<String>,
    },
    /// Client -> agent: the client's proof of the key for this session, hex. Every frame after
    /// it, both ways, carries its tag ([`crate::auth::Seal`]).
    AuthResponse {
        /// The proof, hex.
        mac: String,
    },
    /// Agent -> client: the hello (and the key, if asked) is accepted.
    Welcome {
        /// [`PROTOCOL_VERSION`] of the agent.
        protocol_version: u32,
        /// `wirespeed 0.1.0`.
        software: String,
    },
    /// Client -> agent: the test wanted.
    Request {
        /// Its parameters.
        spec: TestSpec,
        /// UDP only: the client's port for each stream, so that the agent's sockets talk to
        /// that peer alone.
        #[serde(default)]
        client_udp_ports: Vec<u16>,
    },
    /// Agent -> client: the test is accepted; open the data connections with this cookie.
    Accepted {
        /// The session cookie.
        cookie: Cookie,
        /// UDP only: the agent's port for each stream.
        #[serde(default)]
        agent_udp_ports: Vec<u16>,
    },
    /// Agent -> client, only to a client whose hello named [`QUEUE_FEATURE`]: the agent runs
    /// one test at a time (`--exclusive`) and this one waits; sent when it starts waiting and
    /// every second after, until `accepted` (or the session's own first answer) or a refusal.
    Queued {
        /// Tests ahead of this one (0: the next to run).
        position: u32,
        /// How long it has waited so far.
        waited_seconds: f64,
    },
    /// Agent -> client: the test is refused; `reason` is printed verbatim.
    Refused {
        /// Why, with the limit and the flag that would fit it.
        reason: String,
    },
    /// Agent -> client: every data stream is in place; go.
    Start,
    /// Either way: every stream this side sends on has finished sending.
    SendDone,
    /// Client -> agent: the client's streams are done; here is its view.
    Finished {
        /// The client's measurements.
        report: SideReport,
    },
    /// Agent -> client: the agent's view; the session ends.
    Results {
        /// The agent's measurements.
        report: SideReport,
    },
    /// A load test's message (seed 000's coordinated generators): see [`super::load`].
    Load(super::load::LoadMessage),
    /// A UDP echo session's message (probes against the agent): see [`super::echo`].
    Echo(super::echo::EchoMessage),
    /// A request/response session's message (TCP_RR, TCP_CRR): see [`super::rr`].
    Rr(super::rr::RrMessage),
    /// An agent-to-agent test's message (`wirespeed mesh`): see [`super::mesh`].
    Mesh(super::mesh::MeshMessage),
    /// Either way: something went wrong; the session ends.
    Error {
        /// One line, printed verbatim.
        message: String,
    },
}

impl Message {
    /// The message with every free-text field a peer wrote passed through
    /// [`wirespeed_model::peer::escape`], so that whatever shows or logs it shows one line of
    /// visible characters (issue 32: a forged `error` wrote lines and escape codes into the
    /// agent's log). Applied to every message read from a peer ([`crate::session`]); a
    /// report's figures about the peer's own schedule are checked on the way
    /// ([`SideReport::with_peer_figures_checked`](crate::report::SideReport::with_peer_figures_checked)).
    pub fn with_peer_text_escaped(self) -> Message {
        use wirespeed_model::peer::escape;
        match self {
            Message::Hello {
                protocol_version,
                software,
                nonce,
            } => Message::Hello {
                protocol_version,
                software: escape(&software),
                nonce,
            },
            Message::Welcome {
                protocol_version,
                software,
            } => Message::Welcome {
                protocol_version,
                software: escape(&software),
            },
            Message::Refused { reason } => Message::Refused {
                reason: escape(&reason),
            },
            Message::Error { message } => Message::Error {
                message: escape(&message),
            },
            Message::Results { report } => Message::Results {
                report: report.with_peer_text_escaped().with_peer_figures_checked(),
            },
            Message::Finished { report } => Message::Finished {
                report: report.with_peer_text_escaped().with_peer_figures_checked(),
            },
            Message::Mesh(super::mesh::MeshMessage::Result { mut result }) => {
                for e in &mut result.errors {
                    *e = escape(e);
                }
                Message::Mesh(super::mesh::MeshMessage::Result { result })
            }
            other => other,
        }
    }

    /// The `"type"` name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello { .. } => "hello",
            Message::Challenge { .. } => "challenge",
            Message::AuthResponse { .. } => "auth_response",
            Message::Welcome { .. } => "welcome",
            Message::Request { .. } => "request",
            Message::Accepted { .. } => "accepted",
            Message::Queued { .. } => "queued",
            Message::Refused { .. } => "refused",
            Message::Start => "start",
            Message::SendDone => "send_done",
            Message::Finished { .. } => "finished",
            Message::Results { .. } => "results",
            Message::Load(_) => "load",
            Message::Echo(_) => "echo",
            Message::Rr(_) => "rr",
            Message::Mesh(_) => "mesh",
            Message::Error { .. } => "error",
        }
    }
}
