use wirespeed_net::report::*;
use wirespeed_net::spec::Flow;

fn sender(id: u32, bps: f64, cwnd: Option<u64>, rtt: Option<f64>) -> IntervalStream {
    IntervalStream {
        id,
        flow: Flow::Upload,
        role: Role::Sender,
        bytes: 0,
        bits_per_second: bps,
        datagrams: None,
        retransmits: Some(0),
        cwnd_bytes: cwnd,
        rtt_seconds: rtt,
    }
}

#[test]
fn window_use_is_the_rate_times_srtt_over_the_window() {
    // 8 Gbit/s at 2 ms is 2 MB in flight: a full 2 MB window, half of a 4 MB one.
    let full = sender(0, 8e9, Some(2_000_000), Some(0.002));
    assert!((full.window_use().unwrap() - 1.0).abs() < 1e-12);
    let half = sender(0, 8e9, Some(4_000_000), Some(0.002));
    assert!((half.window_use().unwrap() - 0.5).abs() < 1e-12);
    // No window or RTT, a zero window, a receiver: no figure.
    assert_eq!(sender(0, 8e9, None, Some(0.002)).window_use(), None);
    assert_eq!(sender(0, 8e9, Some(0), Some(0.002)).window_use(), None);
    assert_eq!(sender(0, 8e9, Some(1000), Some(0.0)).window_use(), None);
    let receiver = IntervalStream {
        role: Role::Receiver,
        ..full.clone()
    };
    assert_eq!(receiver.window_use(), None);
}

#[test]
fn the_median_window_use_leaves_the_warm_up_and_other_streams_out() {
    let iv = |omitted: bool, streams: Vec<IntervalStream>| Interval {
        start_seconds: 0.0,
        end_seconds: 1.0,
        omitted,
        streams,
        sum_sent: None,
        sum_received: None,
    };
    let at = |use_: f64| sender(0, 8e9 * use_, Some(2_000_000), Some(0.002));
    let intervals = vec![
        // Slow start, omitted: its full window must not count.
        iv(true, vec![at(1.0)]),
        iv(
            false,
            vec![at(0.3), sender(1, 8e9, Some(2_000_000), Some(0.002))],
        ),
        iv(false, vec![at(0.5)]),
        iv(false, vec![at(0.4), at(0.4)]),
    ];
    let (m, n) = median_window_use(&intervals, 0, Flow::Upload).unwrap();
    assert_eq!(n, 4);
    assert!((m - 0.4).abs() < 1e-12, "{m}");
    // Stream 1 on its own: its one counted interval.
    let (m1, n1) = median_window_use(&intervals, 1, Flow::Upload).unwrap();
    assert_eq!((n1, (m1 * 1e9).round() / 1e9), (1, 1.0));
    assert_eq!(median_window_use(&intervals, 0, Flow::Download), None);
    assert_eq!(median_window_use(&[], 0, Flow::Upload), None);
}

#[test]
fn a_short_tail_extends_the_interval_before_it_and_keeps_every_byte() {
    let stream = |bytes: u64, bps: f64| IntervalStream {
        id: 0,
        flow: Flow::Upload,
        role: Role::Sender,
        bytes,
        bits_per_second: bps,
        datagrams: None,
        retransmits: Some(1),
        cwnd_bytes: Some(10),
        rtt_seconds: Some(0.001),
    };
    let sum = |bytes: u64, secs: f64| {
        Some(IntervalSum {
            bytes,
            bits_per_second: bytes as f64 * 8.0 / secs,
            datagrams: None,
            retransmits: Some(1),
        })
    };
    let last = Interval {
        start_seconds: 0.4,
        end_seconds: 0.5,
        omitted: false,
        streams: vec![stream(1000, 80_000.0)],
        sum_sent: sum(1000, 0.1),
        sum_received: None,
    };
    let tail = Interval {
        start_seconds: 0.5,
        end_seconds: 0.5005,
        omitted: false,
        streams: vec![stream(250, 4e6)],
        sum_sent: sum(250, 0.0005),
        sum_received: None,
    };
    let e = last.extended(&tail);
    assert_eq!((e.start_seconds, e.end_seconds), (0.4, 0.5005));
    assert_eq!(e.streams[0].bytes, 1250);
    assert_eq!(e.streams[0].retransmits, Some(2));
    assert!((e.streams[0].bits_per_second - 1250.0 * 8.0 / 0.1005).abs() < 1e-6);
    assert_eq!(e.sum_sent.as_ref().unwrap().bytes, 1250);
    assert!(e.sum_received.is_none());
}

fn tick(start: f64, bytes: u64) -> Interval {
    Interval {
        start_seconds: start,
        end_seconds: start + 1.0,
        omitted: false,
        streams: Vec::new(),
        sum_sent: None,
        sum_received: Some(IntervalSum {
            bytes,
            bits_per_second: bytes as f64 * 8.0,
            datagrams: None,
            retransmits: None,
        }),
    }
}

#[test]
fn a_long_test_is_merged_pairwise_and_keeps_every_byte_and_second() {
    let mut kept = Vec::new();
    for i in 0..1000u32 {
        keep_interval(&mut kept, tick(f64::from(i), 1000 + u64::from(i)));
    }
    assert!(kept.len() <= MAX_SIDE_INTERVALS, "{}", kept.len());
    assert_eq!(kept[0].start_seconds, 0.0);
    assert_eq!(kept.last().unwrap().end_seconds, 1000.0);
    for w in kept.windows(2) {
        assert_eq!(w[0].end_seconds, w[1].start_seconds, "no gap, no overlap");
    }
    let total: u64 = kept
        .iter()
        .map(|i| i.sum_received.as_ref().unwrap().bytes)
        .sum();
    assert_eq!(total, (0..1000u64).map(|i| 1000 + i).sum::<u64>());
    let first = &kept[0];
    let r = first.sum_received.as_ref().unwrap();
    let secs = first.end_seconds - first.start_seconds;
    assert!((r.bits_per_second - r.bytes as f64 * 8.0 / secs).abs() < 1e-6);
    assert!(kept[0].sum_sent.is_none());
}
