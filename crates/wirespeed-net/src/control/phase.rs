//! The order of a session, as one enum with explicit transitions.
//!
//! Both ends walk the same phases: `AwaitHello -> (AwaitAuth) -> AwaitRequest -> CreateStreams ->
//! Running -> ExchangeResults -> Closed`. [`Phase::on_client`] is the agent's check of what a
//! client sends; [`Phase::on_agent`] the client's check of what the agent sends. A message that
//! does not fit the phase is a [`ProtocolError`] and ends the session.

use super::message::Message;

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the client's hello.
    AwaitHello,
    /// The agent sent a challenge; waiting for the response.
    AwaitAuth,
    /// Waiting for the test request (agent), or for the answer to it (client).
    AwaitRequest,
    /// The test is accepted; data connections are being opened.
    CreateStreams,
    /// Data flows.
    Running,
    /// The client sent its view and waits for the agent's.
    ExchangeResults,
    /// The session is over.
    Closed,
}

/// A message that does not fit the session's phase.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected control message '{got}' while {phase}")]
pub struct ProtocolError {
    /// The message type received.
    pub got: &'static str,
    /// What the session was doing.
    pub phase: &'static str,
}

impl Phase {
    fn doing(self) -> &'static str {
        match self {
            Phase::AwaitHello => "waiting for hello",
            Phase::AwaitAuth => "waiting for the authentication response",
            Phase::AwaitRequest => "waiting for the test request",
            Phase::CreateStreams => "opening data streams",
            Phase::Running => "the test is running",
            Phase::ExchangeResults => "exchanging results",
            Phase::Closed => "the session is closed",
        }
    }

    fn unexpected(self, m: &Message) -> ProtocolError {
        ProtocolError {
            got: m.kind(),
            phase: self.doing(),
        }
    }

    /// The agent's transition on a message from the client. `auth_required` says whether a
    /// hello leads to a challenge.
    pub fn on_client(self, m: &Message, auth_required: bool) -> Result<Phase, ProtocolError> {
        use Message as M;
        use Phase as P;
        Ok(match (self, m) {
            (_, M::Error { .. }) => P::Closed,
            (P::AwaitHello, M::Hello { .. }) if auth_required => P::AwaitAuth,
            (P::AwaitHello, M::Hello { .. }) => P::AwaitRequest,
            (P::AwaitAuth, M::AuthResponse { .. }) => P::AwaitRequest,
            (P::AwaitRequest, M::Request { .. }) => P::CreateStreams,
            (P::Running, M::SendDone) => P::Running,
            (P::AwaitRequest | P::Running, M::Load(_) | M::Echo(_) | M::Rr(_) | M::Mesh(_)) => {
                P::Running
            }
            (P::Running, M::Finished { .. }) => P::ExchangeResults,
            _ => return Err(self.unexpected(m)),
        })
    }

    /// The client's transition on a message from the agent.
    pub fn on_agent(self, m: &Message) -> Result<Phase, ProtocolError> {
        use Message as M;
        use Phase as P;
        Ok(match (self, m) {
            (_, M::Error { .. }) => P::Closed,
            (P::AwaitHello, M::Challenge { .. }) => P::AwaitAuth,
            (P::AwaitHello | P::AwaitAuth, M::Welcome { .. }) => P::AwaitRequest,
            (P::AwaitHello | P::AwaitAuth | P::AwaitRequest, M::Refused { .. }) => P::Closed,
            (P::AwaitRequest, M::Accepted { .. }) => P::CreateStreams,
            // `--exclusive`: the test waits for another to end (clients that asked for it).
            (P::AwaitRequest, M::Queued { .. }) => P::AwaitRequest,
            (P::CreateStreams, M::Start) => P::Running,
            (P::AwaitRequest | P::Running, M::Load(_) | M::Echo(_) | M::Rr(_) | M::Mesh(_)) => {
                P::Running
            }
            (P::Running, M::Refused { .. }) => P::Closed,
            (P::Running | P::ExchangeResults, M::SendDone) => self,
            (P::ExchangeResults, M::Results { .. }) => P::Closed,
            _ => return Err(self.unexpected(m)),
        })
    }
}
