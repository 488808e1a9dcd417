use wirespeed_lab::crossing::*;
use wirespeed_lab::topology::{NodeKind, Topology};

const PING: &str = "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.
64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=1.87 ms
64 bytes from 198.18.0.2: icmp_seq=3 ttl=64 time=1.06 ms
64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=1.08 ms

--- 198.18.0.2 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 20ms
rtt min/avg/max/mdev = 1.056/1.336/1.874/0.378 ms
";

#[test]
fn ping_output_is_read_in_sequence_with_the_summary_minimum() {
    let s = parse_ping(PING);
    assert_eq!(s.replies, vec![(1, 1.87), (2, 1.08), (3, 1.06)]);
    assert_eq!(s.min_ms, Some(1.056));
    // Hostile text: no number, negative, not finite, nothing at all.
    let s = parse_ping("icmp_seq=x time=1\nicmp_seq=1 time=-1\nicmp_seq=2 time=NaN\n");
    assert!(s.replies.is_empty() && s.min_ms.is_none());
    assert_eq!(parse_ping(""), EchoSeries::default());
    let flood = "64 bytes: icmp_seq=1 time=1.0 ms\n".repeat(1000);
    assert_eq!(parse_ping(&flood).replies.len(), 4 * ECHOES as usize);
}

#[test]
fn a_crossing_is_half_the_excess_over_the_configured_and_the_senders_own_round_trip() {
    let link = parse_ping(PING);
    let itself = EchoSeries {
        replies: vec![(1, 0.020)],
        min_ms: Some(0.016),
    };
    // Configured 1.0 ms: (1.056 - 1.0 - 0.016) / 2 = 20 us a crossing; the median 1.08
    // is 12 us a crossing above the best, the first 1.87 is 407 us above it.
    let [cost, spread, first] = judge(&link, &itself, 1.0).unwrap();
    assert!((cost - 20.0).abs() < 1e-9, "{cost}");
    assert!((spread - 12.0).abs() < 1e-9, "{spread}");
    assert!((first - 407.0).abs() < 1e-9, "{first}");
    assert_eq!(judge(&EchoSeries::default(), &itself, 1.0), None);
    assert_eq!(judge(&link, &EchoSeries::default(), 1.0), None);
}

#[test]
fn a_crossings_cost_per_byte_is_the_growth_of_its_excess_over_the_bytes_between_sizes() {
    let at = |ms: f64| EchoSeries {
        replies: vec![(1, ms + 0.005)],
        min_ms: Some(ms),
    };
    // Small: 1.100 ms best, 1.000 configured, 0.020 to itself: 80 us of excess. Large,
    // 1344 bytes more: 2.400 best, 2.000 configured, 0.030 to itself: 370 us. 290 us over
    // two crossings of 1344 bytes: 107.9 ns a byte a crossing.
    let got = per_byte_ns(
        [&at(1.100), &at(2.400)],
        [&at(0.020), &at(0.030)],
        [1.0, 2.0],
        [84, 1428],
    )
    .unwrap();
    assert!((got - 290e3 / 2.0 / 1344.0).abs() < 1e-9, "{got}");
    // Without a minimum it falls back on the replies; without any, none.
    let replies_only = EchoSeries {
        replies: vec![(1, 2.400), (2, 2.5)],
        min_ms: None,
    };
    let again = per_byte_ns(
        [&at(1.100), &replies_only],
        [&at(0.020), &at(0.030)],
        [1.0, 2.0],
        [84, 1428],
    );
    assert_eq!(again, Some(got));
    let none = EchoSeries::default();
    assert_eq!(
        per_byte_ns(
            [&at(1.1), &none],
            [&at(0.02), &at(0.03)],
            [1.0, 2.0],
            [84, 1428]
        ),
        None
    );
    assert_eq!(
        per_byte_ns(
            [&at(1.1), &at(2.4)],
            [&at(0.02), &at(0.03)],
            [1.0, 2.0],
            [84, 84]
        ),
        None
    );
    // The large size follows the MTU, and a small MTU gives none.
    assert_eq!(large_packet_bytes(1500), Some(1428));
    assert_eq!(large_packet_bytes(576), Some(576));
    assert_eq!(large_packet_bytes(300), None);
}

#[test]
fn the_configured_echo_counts_both_directions_and_a_routers_answer() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/seed-001-path.toml");
    let t = Topology::load(std::path::Path::new(path)).unwrap();
    // Link 0: roc -[10 Mbit/s Ethernet, 50 m]- ciscomci, whose answers cost .751 ms +
    // .00131 ms a byte (ciscoping); the echo is 84 + 38 bytes on the wire each way.
    let l = &t.links[0];
    let router = if matches!(t.nodes[l.a].kind, NodeKind::Router(_)) {
        l.a
    } else {
        l.b
    };
    let NodeKind::Router(r) = &t.nodes[router].kind else {
        panic!("link 0 has a router at one end");
    };
    let cable = 50.0 / (0.66 * 299_792_458.0) * 1e3;
    let want = 2.0 * (cable + 122.0 * 8.0 / 10e6 * 1e3)
        + r.answer.fixed.as_secs_f64() * 1e3
        + r.answer.per_byte.as_secs_f64() * 1e3 * 84.0;
    let got = configured_echo_ms(&t, 0, ECHO_PACKET_BYTES);
    // The cable delay is configured to whole nanoseconds.
    assert!((got - want).abs() < 1e-5, "{got} against {want}");
    assert!(got > 0.751, "{got}");
}
