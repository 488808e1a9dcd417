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
