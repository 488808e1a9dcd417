//! Unit tests of latency, beside its module and apart from it.
use wirespeed::latency::result::*;

use wirespeed::latency::analysis::{phase_of, rpm};

#[test]
fn statistics_of_round_trips() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    let s = LatencyStats::of(&v, 3);
    assert_eq!((s.probes, s.lost), (103, 3));
    assert_eq!((s.min_ms, s.max_ms), (1.0, 100.0));
    assert!((s.p50_ms - 50.5).abs() < 1e-9);
    assert!((s.p99_ms - 99.01).abs() < 1e-9);
    // Trimmed at the 95th percentile (95.05): the mean of 1..=95.
    assert!((s.trimmed_mean_ms - 48.0).abs() < 1e-9);
    assert!(LatencyStats::of(&[], 2).p50_ms.is_nan());
}

#[test]
fn rpm_is_sixty_seconds_over_the_weighted_trimmed_means() {
    let k = |kind, tm| KindReport {
        kind,
        idle: LatencyStats {
            trimmed_mean_ms: tm,
            ..LatencyStats::default()
        },
        loaded: LatencyStats::default(),
        increase_p50_ms: 0.0,
        network_round_trip: None,
    };
    let kinds = vec![
        k(ProbeKind::TcpConnect, 10.0),
        k(ProbeKind::RrNewConnection, 10.0),
        k(ProbeKind::RrKeptConnection, 20.0),
    ];
    // 0.25 x 10 + 0.25 x 10 + 0.5 x 20 = 15 ms: 4000 round trips per minute.
    assert!((rpm(&kinds, |k| &k.idle) - 4000.0).abs() < 1e-9);
    assert!(rpm(&kinds[..1], |k| &k.idle).is_nan());
}

#[test]
fn phases_split_the_timeline() {
    let load = Some((2.0, 10.0));
    assert_eq!(phase_of(1.0, 2.0, load, 1.0), Phase::Idle);
    assert_eq!(phase_of(2.5, 2.0, load, 1.0), Phase::Settling);
    assert_eq!(phase_of(5.0, 2.0, load, 1.0), Phase::Loaded);
    assert_eq!(phase_of(10.5, 2.0, load, 1.0), Phase::After);
}
