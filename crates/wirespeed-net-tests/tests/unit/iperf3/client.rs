use std::sync::atomic::Ordering;
use std::time::Duration;
use wirespeed_net::iperf3::client::*;
use wirespeed_net::iperf3::stream::Shared;
use wirespeed_net::spec::{Amount, Direction, TestSpec};

/// `tcp -b` is iperf3's own `-b` (`bandwidth`), which an iperf3 server's senders hold to;
/// without it a TCP test asks for no rate, as iperf3's client does.
#[test]
fn a_tcp_cap_is_iperf3s_bandwidth() {
    let capped = TestSpec {
        amount: Amount::Seconds(2.0),
        direction: Direction::Receive,
        max_pacing_rate_bits_per_second: Some(5_000_000),
        ..TestSpec::default()
    };
    assert_eq!(params_for(&capped).unwrap().bandwidth, Some(5_000_000));
    let plain = TestSpec {
        amount: Amount::Seconds(2.0),
        ..TestSpec::default()
    };
    assert_eq!(params_for(&plain).unwrap().bandwidth, None);
}

/// Each interval holds what the counters gained since the last one, at its own length.
#[test]
fn intervals_cut_the_shared_totals() {
    let shared = Shared::new(Duration::ZERO, 0);
    let spec = TestSpec {
        direction: Direction::Both,
        ..TestSpec::default()
    };
    let from = shared.counted_from;
    let mut t = Ticker::new(Duration::from_secs(1), from, &spec);
    assert!(t.tick(&shared, from + Duration::from_millis(500)).is_none());
    shared.sent.store(1_000_000, Ordering::Relaxed);
    shared.received.store(250_000, Ordering::Relaxed);
    let a = t.tick(&shared, from + Duration::from_millis(1001)).unwrap();
    assert_eq!((a.start_seconds, a.end_seconds), (0.0, 1.0));
    assert_eq!(a.sum_sent.as_ref().unwrap().bits_per_second, 8e6);
    assert_eq!(a.sum_received.as_ref().unwrap().bytes, 250_000);
    shared.sent.store(1_500_000, Ordering::Relaxed);
    let b = t.tick(&shared, from + Duration::from_millis(2003)).unwrap();
    assert_eq!((b.start_seconds, b.end_seconds), (1.0, 2.0));
    assert_eq!(b.sum_sent.unwrap().bytes, 500_000);
    assert_eq!(b.sum_received.unwrap().bytes, 0);
    let only_send = Ticker::new(Duration::from_secs(1), from, &TestSpec::default())
        .tick(&shared, from + Duration::from_secs(1))
        .unwrap();
    assert!(only_send.sum_received.is_none() && only_send.sum_sent.is_some());
}
