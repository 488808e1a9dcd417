use wirespeed_net::control::Message;
use wirespeed_net::control::mesh::*;

fn test() -> PairTest {
    PairTest {
        mesh_version: MESH_VERSION,
        destination: "127.0.0.1:5210".parse().unwrap(),
        tcp_seconds: 1.0,
        probes: 10,
        probe_gap_seconds: 0.01,
        tos: None,
    }
}

#[test]
fn messages_round_trip_and_unknown_fields_are_refused() {
    let m = Message::Mesh(MeshMessage::Run { test: test() });
    let text = serde_json::to_string(&m).unwrap();
    assert!(text.contains("\"mesh\":\"run\""), "{text}");
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
    let bad = text.replace("\"probes\"", "\"x\":1,\"probes\"");
    assert!(serde_json::from_str::<Message>(&bad).is_err());
    // Without -S the request is what the release before `tos` sent and read.
    assert!(!text.contains("tos"), "{text}");
    let marked = Message::Mesh(MeshMessage::Run {
        test: PairTest {
            tos: Some(0xb8),
            ..test()
        },
    });
    let text = serde_json::to_string(&marked).unwrap();
    assert!(text.contains("\"tos\":184"), "{text}");
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), marked);
    let r = Message::Mesh(MeshMessage::Result {
        result: PairResult::default(),
    });
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), r);
}

#[test]
fn requests_out_of_bounds_are_refused_naming_the_bound() {
    assert_eq!(test().check(), None);
    type Spoil = fn(&mut PairTest);
    let cases: [(Spoil, &str); 6] = [
        (|t| t.mesh_version = 2, "version 2"),
        (|t| t.tcp_seconds = 0.01, "at least"),
        (|t| t.tcp_seconds = f64::NAN, "at least"),
        (|t| t.probes = MAX_PROBES + 1, "at most"),
        (|t| t.probe_gap_seconds = 0.0, "probe gap"),
        (|t| t.destination.set_port(0), "not an agent"),
    ];
    for (spoil, needle) in cases {
        let mut t = test();
        spoil(&mut t);
        let e = t.check().unwrap();
        assert!(
            e.contains(needle) && e.starts_with("refused by the agent"),
            "{e}"
        );
    }
}

#[test]
fn the_consent_covers_the_source() {
    let a = consent_bytes(&[1; 32], "127.0.0.1".parse().unwrap());
    let b = consent_bytes(&[1; 32], "::ffff:127.0.0.1".parse().unwrap());
    let c = consent_bytes(&[1; 32], "127.0.0.2".parse().unwrap());
    assert_eq!(a, b);
    assert_ne!(a, c);
}
