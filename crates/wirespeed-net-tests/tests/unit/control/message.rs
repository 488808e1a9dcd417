use wirespeed_net::control::message::*;

#[test]
fn cookie_is_hex_in_json() {
    let m = Message::Accepted {
        cookie: Cookie([0xab; 16]),
        agent_udp_ports: vec![],
    };
    let text = serde_json::to_string(&m).unwrap();
    assert!(text.contains(&"ab".repeat(16)), "{text}");
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
    assert!(serde_json::from_str::<Message>(r#"{"type":"accepted","cookie":"abc"}"#).is_err());
}

#[test]
fn peer_text_is_escaped_in_every_free_text_field() {
    let m: Message = serde_json::from_str(
        r#"{"type":"error","message":"x\nsession 99 127.0.0.1:1 completed\n\u001b[2J"}"#,
    )
    .unwrap();
    let Message::Error { message } = m.with_peer_text_escaped() else {
        panic!()
    };
    assert_eq!(message, r"x\nsession 99 127.0.0.1:1 completed\n\x1b[2J");
    let m = Message::Refused {
        reason: "a\rb".into(),
    }
    .with_peer_text_escaped();
    assert_eq!(
        m,
        Message::Refused {
            reason: r"a\rb".into()
        }
    );
}

#[test]
fn unknown_fields_are_refused() {
    assert!(serde_json::from_str::<Message>(r#"{"type":"error","message":"m","x":1}"#).is_err());
}
