use wirespeed_net::control::message::Message;
use wirespeed_net::control::phase::*;
use wirespeed_net::spec::TestSpec;

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
