//! Opening one of the agent's side services (the UDP echo of `probe --udp` and `latency`, the
//! request/response service of `latency`): connect, the one handshake, and the errors a
//! client of either can meet, so that the two clients do not each write them again.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::auth::AuthKey;
use crate::control::handshake::{self, HandshakeError};
use crate::session::{Control, SessionError};

/// Why a service session could not be opened or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The agent could not be reached.
    #[error(
        "cannot connect to the wirespeed agent at {addr}: {source} (start one with `wirespeed serve` on the host, or give its port with --port)"
    )]
    Connect {
        /// Where.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The agent refused; its sentence.
    #[error("{0}")]
    Refused(String),
    /// The agent needs a key.
    #[error("the agent requires authentication: pass --auth-key-file with the agent's key")]
    KeyRequired,
    /// The session broke.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The agent said something out of place.
    #[error("the agent answered '{0}' where the service's own message was expected")]
    Unexpected(&'static str),
    /// Asked for what no agent would take; nothing was sent.
    #[error("{0}")]
    Invalid(String),
}

/// Connects to the agent and greets it (hello, the key if asked, the version check): the
/// control connection a service's `open` message goes on.
pub(crate) fn open(
    agent: SocketAddr,
    auth: Option<&AuthKey>,
    timeout: Duration,
) -> Result<Control, ServiceError> {
    open_with(agent, auth, timeout, &[]).map(|(ctl, _)| ctl)
}

/// [`open`] naming `features` in the hello; also returns the agent's welcome (whose software
/// names the features it has).
pub(crate) fn open_with(
    agent: SocketAddr,
    auth: Option<&AuthKey>,
    timeout: Duration,
    features: &[&str],
) -> Result<(Control, handshake::Welcome), ServiceError> {
    let stream =
        TcpStream::connect_timeout(&agent, timeout).map_err(|source| ServiceError::Connect {
            addr: agent,
            source,
        })?;
    let _ = stream.set_nodelay(true);
    let mut ctl = Control::new(stream, &[], false, false);
    let welcome =
        handshake::greet_with(&mut ctl, auth, timeout, features).map_err(|e| match e {
            HandshakeError::Channel(e) => ServiceError::Session(e),
            HandshakeError::Io(e) => ServiceError::Session(SessionError::Io(e)),
            HandshakeError::KeyRequired => ServiceError::KeyRequired,
            HandshakeError::Refused(reason) | HandshakeError::Agent(reason) => {
                ServiceError::Refused(reason)
            }
            other => ServiceError::Refused(other.to_string()),
        })?;
    Ok((ctl, welcome))
}
