use std::time::Duration;
use wirespeed_net::spec::*;

#[test]
fn bidir_has_both_flows() {
    let spec = TestSpec {
        direction: Direction::Both,
        streams: 2,
        ..TestSpec::default()
    };
    assert_eq!(
        spec.flows(),
        vec![
            (0, Flow::Upload),
            (1, Flow::Upload),
            (2, Flow::Download),
            (3, Flow::Download)
        ]
    );
}

#[test]
fn validation_names_the_flag() {
    let bad = TestSpec {
        streams: 0,
        ..TestSpec::default()
    };
    assert!(bad.validate().unwrap_err().starts_with("-P 0"));
    let udp = TestSpec {
        protocol: Protocol::Udp,
        length_bytes: 8,
        ..TestSpec::default()
    };
    assert!(udp.validate().unwrap_err().starts_with("-l 8"));
    for i in [0.001, 1e9] {
        let tick = TestSpec {
            interval: Some(Duration::from_secs_f64(i)),
            ..TestSpec::default()
        };
        assert!(tick.validate().unwrap_err().starts_with("-i "), "{i}");
    }
    let tick = TestSpec {
        interval: Some(Duration::from_millis(500)),
        ..TestSpec::default()
    };
    assert!(tick.validate().is_ok());
    let cc = TestSpec {
        congestion: Some("x; rm".into()),
        ..TestSpec::default()
    };
    assert!(cc.validate().is_err());
    assert!(TestSpec::default().validate().is_ok());
}

#[test]
fn a_tcp_rate_cap_is_checked_and_sent_only_when_set() {
    let capped = |cap| TestSpec {
        max_pacing_rate_bits_per_second: Some(cap),
        ..TestSpec::default()
    };
    assert!(capped(5_000_000).validate().is_ok());
    let small_writes = TestSpec {
        length_bytes: 1024,
        ..capped(MIN_MAX_PACING_RATE_BITS_PER_SECOND)
    };
    assert!(small_writes.validate().is_ok());
    // 128 KiB at 500 kbit/s is 2.1 s per write: the test would end that late.
    let e = capped(500_000).validate().unwrap_err();
    assert!(
        e.starts_with("-b 500000 bit/s takes 2.1 s to send one -l 131072-byte write")
            && e.contains("-l 62500 or less"),
        "{e}"
    );
    for cap in [0, 9_999, MAX_MAX_PACING_RATE_BITS_PER_SECOND + 1] {
        let e = TestSpec {
            length_bytes: 1024,
            ..capped(cap)
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with(&format!("-b {cap} bit/s")), "{e}");
    }
    let udp = TestSpec {
        protocol: Protocol::Udp,
        length_bytes: 1024,
        ..capped(5_000_000)
    };
    assert!(udp.validate().unwrap_err().contains("TCP tests"));
    let unpaced = TestSpec {
        no_pacing: true,
        ..capped(5_000_000)
    };
    assert!(unpaced.validate().unwrap_err().contains("--no-pacing"));
    // Absent without a cap, so an agent that predates it takes every other test; an agent
    // that predates it refuses a capped spec instead of running it uncapped.
    let plain = serde_json::to_string(&TestSpec::default()).unwrap();
    assert!(!plain.contains("max_pacing"), "{plain}");
    let text = serde_json::to_string(&capped(5_000_000)).unwrap();
    assert!(
        text.contains(r#""max_pacing_rate_bits_per_second":5000000"#),
        "{text}"
    );
    assert_eq!(
        serde_json::from_str::<TestSpec>(&text).unwrap(),
        capped(5_000_000)
    );
    let old = text.replace("max_pacing_rate_bits_per_second", "some_later_field");
    assert!(serde_json::from_str::<TestSpec>(&old).is_err());
}

#[test]
fn spec_round_trips_through_json() {
    let spec = TestSpec {
        amount: Amount::Bytes(1 << 20),
        congestion: Some("cubic".into()),
        ..TestSpec::default()
    };
    let text = serde_json::to_string(&spec).unwrap();
    assert!(text.contains(r#""amount":{"bytes":1048576}"#), "{text}");
    assert_eq!(serde_json::from_str::<TestSpec>(&text).unwrap(), spec);
}

/// `-O` and `-i` are `Duration`s in memory and seconds on the wire, as before: a test asked
/// for by an older client reads the same, and a peer's negative or huge figure is refused
/// while decoding.
#[test]
fn warm_up_and_interval_travel_as_seconds() {
    let spec = TestSpec {
        amount: Amount::Seconds(3.0),
        omit: Duration::from_millis(1500),
        interval: Some(Duration::from_millis(250)),
        ..TestSpec::default()
    };
    let text = serde_json::to_string(&spec).unwrap();
    assert!(
        text.contains(r#""omit_seconds":1.5"#) && text.contains(r#""interval_seconds":0.25"#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<TestSpec>(&text).unwrap(), spec);
    let plain = serde_json::to_string(&TestSpec::default()).unwrap();
    assert!(plain.contains(r#""omit_seconds":0.0"#), "{plain}");
    assert!(!plain.contains("interval_seconds"), "{plain}");
    let without: serde_json::Value = serde_json::from_str(&plain).unwrap();
    let mut older = without.clone();
    older.as_object_mut().unwrap().remove("omit_seconds");
    let read: TestSpec = serde_json::from_value(older).unwrap();
    assert_eq!((read.omit, read.interval), (Duration::ZERO, None));
    for (field, bad) in [
        ("omit_seconds", -1.0),
        ("interval_seconds", -0.5),
        ("omit_seconds", 1e300),
    ] {
        let mut hostile = without.clone();
        hostile[field] = serde_json::json!(bad);
        let err = serde_json::from_value::<TestSpec>(hostile).unwrap_err();
        assert!(
            err.to_string().contains("is not a duration"),
            "{field} {bad}: {err}"
        );
    }
}
