//! The client's half of the handshake, the same for every kind of session (a throughput test,
//! a UDP echo, a load test): hello, the key challenge if the agent asks for one, and the
//! welcome, whose protocol version must be this client's.
//!
//! It runs over any [`Channel`] (the session layer's control connection in practice), so that
//! the protocol's order and checks live here, with its messages, and nowhere else.

use std::time::Duration;

use super::message::{Message, PROTOCOL_VERSION, QUEUE_FEATURE};
use crate::auth::{AuthKey, hex, unhex};

/// A control connection as the handshake needs it.
pub trait Channel {
    /// Why a message could not be read.
    type Error;
    /// Sends one message.
    fn send_message(&mut self, m: &Message) -> std::io::Result<()>;
    /// Waits up to `wait` for the next message; `what` names the wait in a timeout error.
    fn recv_message(&mut self, wait: Duration, what: &'static str) -> Result<Message, Self::Error>;
}

/// What the agent said of itself in its welcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    /// Its protocol version (equal to [`PROTOCOL_VERSION`]: others are refused).
    pub protocol_version: u32,
    /// Its software, `wirespeed 0.1.0`.
    pub software: String,
}

/// Why a handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError<E: std::error::Error + 'static> {
    /// The connection failed while reading.
    #[error(transparent)]
    Channel(E),
    /// The connection failed while writing.
    #[error("the control connection failed: {0}")]
    Io(#[from] std::io::Error),
    /// The agent asks for a key and none was given.
    #[error("the agent requires authentication: pass --auth-key-file with the agent's key")]
    KeyRequired,
    /// The agent speaks another protocol version.
    #[error(
        "the agent speaks control protocol version {theirs} ({software}), this client version {PROTOCOL_VERSION}; run the same wirespeed release at both ends"
    )]
    Version {
        /// Its version.
        theirs: u32,
        /// Its software.
        software: String,
    },
    /// The agent refused the session (its sentence, verbatim).
    #[error("{0}")]
    Refused(String),
    /// The agent reported an error (its sentence, verbatim).
    #[error("the agent reported: {0}")]
    Agent(String),
    /// The agent sent a challenge that is not hex.
    #[error("the agent sent a malformed key challenge")]
    MalformedChallenge,
    /// The agent said something out of place.
    #[error("the agent answered '{0}' where its welcome was expected")]
    Unexpected(&'static str),
}

/// This end's software, as every hello names it.
pub fn software() -> String {
    format!("wirespeed {}", env!("CARGO_PKG_VERSION"))
}

/// Says hello, answers the key challenge if there is one, and returns the agent's welcome.
pub fn greet<C: Channel>(
    ctl: &mut C,
    key: Option<&AuthKey>,
    idle: Duration,
) -> Result<Welcome, HandshakeError<C::Error>>
where
    C::Error: std::error::Error + 'static,
{
    greet_as(ctl, key, idle, &software())
}

/// [`greet`] by a client that reads [`Message::Queued`] notices while its test waits for an
/// `--exclusive` agent (its hello names [`QUEUE_FEATURE`]).
pub fn greet_queued<C: Channel>(
    ctl: &mut C,
    key: Option<&AuthKey>,
    idle: Duration,
) -> Result<Welcome, HandshakeError<C::Error>>
where
    C::Error: std::error::Error + 'static,
{
    greet_as(ctl, key, idle, &format!("{} {QUEUE_FEATURE}", software()))
}

/// [`greet`] naming `features` (words such as [`super::RESIDENCE_FEATURE`]) after the software.
pub fn greet_with<C: Channel>(
    ctl: &mut C,
    key: Option<&AuthKey>,
    idle: Duration,
    features: &[&str],
) -> Result<Welcome, HandshakeError<C::Error>>
where
    C::Error: std::error::Error + 'static,
{
    let mut software = software();
    for f in features {
        software.push(' ');
        software.push_str(f);
    }
    greet_as(ctl, key, idle, &software)
}

fn greet_as<C: Channel>(
    ctl: &mut C,
    key: Option<&AuthKey>,
    idle: Duration,
    software: &str,
) -> Result<Welcome, HandshakeError<C::Error>>
where
    C::Error: std::error::Error + 'static,
{
    ctl.send_message(&Message::Hello {
        protocol_version: PROTOCOL_VERSION,
        software: software.to_string(),
    })?;
    loop {
        match ctl
            .recv_message(idle, "waiting for the agent's welcome")
            .map_err(HandshakeError::Channel)?
        {
            Message::Challenge { nonce } => {
                let key = key.ok_or(HandshakeError::KeyRequired)?;
                let nonce = unhex(&nonce).ok_or(HandshakeError::MalformedChallenge)?;
                ctl.send_message(&Message::AuthResponse {
                    mac: hex(&key.respond(&nonce)),
                })?;
            }
            Message::Welcome {
                protocol_version,
                software,
            } if protocol_version != PROTOCOL_VERSION => {
                return Err(HandshakeError::Version {
                    theirs: protocol_version,
                    software,
                });
            }
            Message::Welcome {
                protocol_version,
                software,
            } => {
                return Ok(Welcome {
                    protocol_version,
                    software,
                });
            }
            Message::Refused { reason } => return Err(HandshakeError::Refused(reason)),
            Message::Error { message } => return Err(HandshakeError::Agent(message)),
            other => return Err(HandshakeError::Unexpected(other.kind())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// A scripted agent: the messages it answers with, and what the client sent.
    struct Script {
        answers: VecDeque<Message>,
        sent: Vec<Message>,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("closed")]
    struct Closed;

    impl Channel for Script {
        type Error = Closed;
        fn send_message(&mut self, m: &Message) -> std::io::Result<()> {
            self.sent.push(m.clone());
            Ok(())
        }
        fn recv_message(&mut self, _: Duration, _: &'static str) -> Result<Message, Closed> {
            self.answers.pop_front().ok_or(Closed)
        }
    }

    fn script(answers: Vec<Message>) -> Script {
        Script {
            answers: answers.into(),
            sent: Vec::new(),
        }
    }

    fn welcome(version: u32) -> Message {
        Message::Welcome {
            protocol_version: version,
            software: "wirespeed 9.9.9".into(),
        }
    }

    #[test]
    fn a_welcome_of_this_version_completes_the_handshake() {
        let mut s = script(vec![welcome(PROTOCOL_VERSION)]);
        let w = greet(&mut s, None, Duration::from_secs(1)).unwrap();
        assert_eq!(w.protocol_version, PROTOCOL_VERSION);
        assert!(
            matches!(s.sent[0], Message::Hello { protocol_version, .. } if protocol_version == PROTOCOL_VERSION)
        );
    }

    #[test]
    fn another_version_is_refused_naming_both() {
        let mut s = script(vec![welcome(PROTOCOL_VERSION + 1)]);
        let err = greet(&mut s, None, Duration::from_secs(1)).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, HandshakeError::Version { .. }));
        assert!(
            text.contains(&format!("version {}", PROTOCOL_VERSION + 1))
                && text.contains(&format!("this client version {PROTOCOL_VERSION}")),
            "{text}"
        );
    }

    #[test]
    fn the_challenge_is_answered_with_the_key_and_refused_without_it() {
        let key = AuthKey::from_bytes(b"0123456789abcdef");
        let nonce = [7u8; 32];
        let challenge = Message::Challenge { nonce: hex(&nonce) };
        let mut s = script(vec![challenge.clone(), welcome(PROTOCOL_VERSION)]);
        greet(&mut s, Some(&key), Duration::from_secs(1)).unwrap();
        assert_eq!(
            s.sent[1],
            Message::AuthResponse {
                mac: hex(&key.respond(&nonce))
            }
        );
        let mut s = script(vec![challenge]);
        assert!(matches!(
            greet(&mut s, None, Duration::from_secs(1)),
            Err(HandshakeError::KeyRequired)
        ));
        let mut s = script(vec![Message::Challenge { nonce: "zz".into() }]);
        assert!(matches!(
            greet(&mut s, Some(&key), Duration::from_secs(1)),
            Err(HandshakeError::MalformedChallenge)
        ));
    }

    #[test]
    fn refusals_and_surprises_end_it() {
        let mut s = script(vec![Message::Refused {
            reason: "busy".into(),
        }]);
        assert_eq!(
            greet(&mut s, None, Duration::from_secs(1))
                .unwrap_err()
                .to_string(),
            "busy"
        );
        let mut s = script(vec![Message::Start]);
        assert!(matches!(
            greet(&mut s, None, Duration::from_secs(1)),
            Err(HandshakeError::Unexpected("start"))
        ));
    }
}
