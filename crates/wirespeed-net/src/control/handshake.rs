//! The client's half of the handshake, the same for every kind of session (a throughput test,
//! a UDP echo, a load test): hello, the key challenge if the agent asks for one, and the
//! welcome, whose protocol version must be this client's.
//!
//! It runs over any [`Channel`] (the session layer's control connection in practice), so that
//! the protocol's order and checks live here, with its messages, and nowhere else.

use std::time::Duration;

use super::message::{Message, PROTOCOL_VERSION, QUEUE_FEATURE};
use crate::auth::{AuthKey, HANDSHAKE_NONCE_BYTES, Role, Seal, hex, random_bytes, unhex};

/// A control connection as the handshake needs it.
pub trait Channel {
    /// Why a message could not be read.
    type Error;
    /// Sends one message.
    fn send_message(&mut self, m: &Message) -> std::io::Result<()>;
    /// Waits up to `wait` for the next message; `what` names the wait in a timeout error.
    fn recv_message(&mut self, wait: Duration, what: &'static str) -> Result<Message, Self::Error>;
    /// Tags and checks every frame from now on (a keyed handshake's last step).
    fn secure(&mut self, seal: Seal);
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
    /// The agent sent a challenge that is not 64 hex digits.
    #[error("the agent sent a malformed key challenge")]
    MalformedChallenge,
    /// A keyed client met an agent that did not prove the key: an older release, an agent
    /// without a key, or an impostor. The client never runs a test on an unproven agent.
    #[error(
        "the agent did not prove that it holds the key ({0}); this client has --auth-key-file and talks only to an agent that proves it: start the agent with the same key file and run the same wirespeed release at both ends"
    )]
    AgentUnproven(&'static str),
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
    let client_nonce = match key {
        Some(_) => {
            let mut n = [0u8; HANDSHAKE_NONCE_BYTES];
            random_bytes(&mut n)?;
            Some(n)
        }
        None => None,
    };
    ctl.send_message(&Message::Hello {
        protocol_version: PROTOCOL_VERSION,
        software: software.to_string(),
        nonce: client_nonce.map(|n| hex(&n)),
    })?;
    let mut proven = false;
    loop {
        match ctl
            .recv_message(idle, "waiting for the agent's welcome")
            .map_err(HandshakeError::Channel)?
        {
            Message::Challenge { nonce, proof } => {
                let (key, client_nonce) =
                    key.zip(client_nonce).ok_or(HandshakeError::KeyRequired)?;
                let agent_nonce = unhex(&nonce)
                    .filter(|n| n.len() == HANDSHAKE_NONCE_BYTES)
                    .ok_or(HandshakeError::MalformedChallenge)?;
                let proof = proof.ok_or(HandshakeError::AgentUnproven(
                    "its challenge carries no proof, as an older release's does",
                ))?;
                let session =
                    key.handshake(PROTOCOL_VERSION, software, &client_nonce, &agent_nonce);
                if !unhex(&proof).is_some_and(|p| session.verify(Role::Agent, &p)) {
                    return Err(HandshakeError::AgentUnproven(
                        "its proof does not match this client's key",
                    ));
                }
                ctl.send_message(&Message::AuthResponse {
                    mac: hex(&session.proof(Role::Client)),
                })?;
                ctl.secure(session.seal(Role::Client));
                proven = true;
            }
            Message::Welcome { .. } if key.is_some() && !proven => {
                return Err(HandshakeError::AgentUnproven(
                    "it welcomed this client without a challenge",
                ));
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
        secured: bool,
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
        fn secure(&mut self, _: Seal) {
            self.secured = true;
        }
    }

    fn script(answers: Vec<Message>) -> Script {
        Script {
            answers: answers.into(),
            sent: Vec::new(),
            secured: false,
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

    /// What a real agent with `key` would challenge the client's hello with.
    fn challenge_for(key: &AuthKey, hello: &Message, agent_nonce: [u8; 32]) -> Message {
        let Message::Hello {
            protocol_version,
            software,
            nonce: Some(nonce),
        } = hello
        else {
            panic!("a keyed hello carries a nonce: {hello:?}")
        };
        let h = key.handshake(
            *protocol_version,
            software,
            &unhex(nonce).unwrap(),
            &agent_nonce,
        );
        Message::Challenge {
            nonce: hex(&agent_nonce),
            proof: Some(hex(&h.proof(Role::Agent))),
        }
    }

    /// A channel that answers the hello as an agent holding `key` would, then welcomes.
    struct KeyedAgent {
        key: AuthKey,
        inner: Script,
    }

    impl Channel for KeyedAgent {
        type Error = Closed;
        fn send_message(&mut self, m: &Message) -> std::io::Result<()> {
            if matches!(m, Message::Hello { .. }) {
                let c = challenge_for(&self.key, m, [5; 32]);
                self.inner.answers.push_front(c);
            }
            self.inner.send_message(m)
        }
        fn recv_message(&mut self, w: Duration, what: &'static str) -> Result<Message, Closed> {
            self.inner.recv_message(w, what)
        }
        fn secure(&mut self, s: Seal) {
            self.inner.secure(s);
        }
    }

    #[test]
    fn a_keyed_client_answers_only_an_agent_that_proved_the_key() {
        let key = AuthKey::from_bytes(b"0123456789abcdef");
        let mut agent = KeyedAgent {
            key: key.clone(),
            inner: script(vec![welcome(PROTOCOL_VERSION)]),
        };
        greet(&mut agent, Some(&key), Duration::from_secs(1)).unwrap();
        assert!(agent.inner.secured, "frames after the handshake are sealed");
        assert!(matches!(agent.inner.sent[1], Message::AuthResponse { .. }));
        // An impostor without the key: its proof fails and the client says nothing more.
        let mut impostor = KeyedAgent {
            key: AuthKey::from_bytes(b"not-the-fleet-key"),
            inner: script(vec![welcome(PROTOCOL_VERSION)]),
        };
        let e = greet(&mut impostor, Some(&key), Duration::from_secs(1)).unwrap_err();
        assert!(matches!(e, HandshakeError::AgentUnproven(_)), "{e}");
        assert_eq!(
            impostor.inner.sent.len(),
            1,
            "no answer to an unproven agent"
        );
        // A bare welcome, and an old release's challenge without a proof, are refused.
        let mut s = script(vec![welcome(PROTOCOL_VERSION)]);
        let e = greet(&mut s, Some(&key), Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("without a challenge"), "{e}");
        let mut s = script(vec![Message::Challenge {
            nonce: hex(&[7u8; 32]),
            proof: None,
        }]);
        let e = greet(&mut s, Some(&key), Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("no proof"), "{e}");
        assert_eq!(s.sent.len(), 1);
        // Without a key: the hello carries no nonce (the bytes of every earlier release).
        let mut s = script(vec![Message::Challenge {
            nonce: hex(&[7u8; 32]),
            proof: None,
        }]);
        assert!(matches!(
            greet(&mut s, None, Duration::from_secs(1)),
            Err(HandshakeError::KeyRequired)
        ));
        assert!(matches!(s.sent[0], Message::Hello { nonce: None, .. }));
        let mut s = script(vec![Message::Challenge {
            nonce: "zz".into(),
            proof: None,
        }]);
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
