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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TestSpec;

    fn hello() -> Message {
        Message::Hello {
            protocol_version: 1,
            software: String::new(),
            nonce: None,
        }
    }

    #[test]
    fn the_agent_walks_the_happy_path() {
        let p = Phase::AwaitHello.on_client(&hello(), false).unwrap();
        assert_eq!(p, Phase::AwaitRequest);
        let p = Phase::AwaitHello.on_client(&hello(), true).unwrap();
        assert_eq!(p, Phase::AwaitAuth);
        let p = p
            .on_client(&Message::AuthResponse { mac: String::new() }, true)
            .unwrap();
        let request = Message::Request {
            spec: TestSpec::default(),
            client_udp_ports: vec![],
        };
        assert_eq!(p.on_client(&request, true).unwrap(), Phase::CreateStreams);
    }

    #[test]
    fn out_of_order_messages_are_errors() {
        let request = Message::Request {
            spec: TestSpec::default(),
            client_udp_ports: vec![],
        };
        let e = Phase::AwaitHello.on_client(&request, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected control message 'request' while waiting for hello"
        );
        assert!(Phase::AwaitAuth.on_client(&request, true).is_err());
        assert!(Phase::AwaitRequest.on_client(&hello(), false).is_err());
        assert!(
            Phase::CreateStreams
                .on_client(&Message::Start, false)
                .is_err()
        );
        assert!(Phase::AwaitHello.on_agent(&Message::Start).is_err());
        assert!(
            Phase::Running
                .on_agent(&Message::Results {
                    report: Default::default()
                })
                .is_err(),
            "results before the client's view is out of order"
        );
    }

    #[test]
    fn an_error_closes_from_any_phase() {
        let e = Message::Error {
            message: "x".into(),
        };
        for p in [Phase::AwaitHello, Phase::Running, Phase::ExchangeResults] {
            assert_eq!(p.on_client(&e, false).unwrap(), Phase::Closed);
            assert_eq!(p.on_agent(&e).unwrap(), Phase::Closed);
        }
    }
}
