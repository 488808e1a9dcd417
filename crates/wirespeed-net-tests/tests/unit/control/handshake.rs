use std::collections::VecDeque;
use std::time::Duration;
use wirespeed_net::auth::{AuthKey, Role, Seal, hex, unhex};
use wirespeed_net::control::message::{Message, PROTOCOL_VERSION};

use wirespeed_net::control::handshake::*;

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
