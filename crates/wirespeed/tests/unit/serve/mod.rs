use std::time::Duration;
use wirespeed::serve::*;
use wirespeed_net::control::DEFAULT_PORT;

fn parse(argv: &[&str]) -> Result<ServeArgs, clap::Error> {
    crate::unit::parse_flags("serve", argv)
}

#[test]
fn limits_parse_with_units() {
    let a = parse(&[
        "--max-duration",
        "30s",
        "--max-rate",
        "100M",
        "--max-window",
        "1MiB",
        "-1",
    ])
    .unwrap();
    assert_eq!(a.max_duration, Duration::from_secs(30));
    assert_eq!(a.max_rate.unwrap().bits_per_second(), 100_000_000);
    assert_eq!(a.max_window.unwrap().bytes(), 1 << 20);
    assert!(a.one_off);
    assert_eq!(parse(&[]).unwrap().port, DEFAULT_PORT);
    assert!(parse(&["--max-rate", "fast"]).is_err());
}

#[test]
fn iperf3_port_defaults_to_5201_when_bare() {
    assert_eq!(parse(&[]).unwrap().iperf3, None);
    assert_eq!(parse(&["--iperf3"]).unwrap().iperf3, Some(5201));
    assert_eq!(parse(&["--iperf3", "15201"]).unwrap().iperf3, Some(15201));
    assert!(parse(&["--iperf3", "x"]).is_err());
}

#[test]
fn hostile_peer_limits_parse_with_defaults() {
    let d = parse(&[]).unwrap();
    assert_eq!(d.handshake_timeout, Duration::from_secs(5));
    assert_eq!(d.max_pending, 256);
    assert_eq!(d.max_memory.bytes(), 1 << 30);
    let a = parse(&[
        "--handshake-timeout",
        "500ms",
        "--max-pending",
        "8",
        "--max-memory",
        "64MiB",
    ])
    .unwrap();
    assert_eq!(a.handshake_timeout, Duration::from_millis(500));
    assert_eq!(a.max_pending, 8);
    assert_eq!(a.max_memory.bytes(), 64 << 20);
    assert!(parse(&["--max-memory", "lots"]).is_err());
}

#[test]
fn allowed_destinations_parse_as_blocks() {
    let a = parse(&["--allow-destination", "198.18.0.0/15", "2001:2::/48", "-1"]).unwrap();
    let shown: Vec<String> = a
        .allow_destination
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(shown, ["198.18.0.0/15", "2001:2::/48"]);
    assert!(parse(&[]).unwrap().allow_destination.is_empty());
    let e = parse(&["--allow-destination", "198.18.0.0/99"]).unwrap_err();
    assert!(e.to_string().contains("examples: 198.18.0.0/15"), "{e}");
}
