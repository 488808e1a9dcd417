use wirespeed::common::brief::Headline;
use wirespeed::latency::{KindReport, LatencyStats};
use wirespeed::latency::{LatencyResult, ProbeKind, RrResult};
use wirespeed_model::RateFormat;

fn stats(p50_ms: f64) -> LatencyStats {
    LatencyStats {
        probes: 100,
        p50_ms,
        ..LatencyStats::default()
    }
}

#[test]
fn the_headline_is_the_delay_the_load_added() {
    let r: LatencyResult = serde_json::from_value(serde_json::json!({
        "idle_seconds": 2.0, "loaded_seconds": 4.0, "settle_seconds": 1.0,
        "kinds": [], "rpm_idle": 60000.0, "rpm_loaded": 5003.4,
        "upload_bits_per_second": 9.4e6, "download_bits_per_second": null,
        "probe_bits_per_second": 0.0, "probe_share_percent": 0.0,
        "link_rate": {"source": "unknown", "reason": "loopback"}, "queue": null,
        "intervals": [], "samples": [], "partial": false, "partial_reason": null
    }))
    .unwrap();
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        ["latency: no probe answered"]
    );
    let r = LatencyResult {
        kinds: vec![KindReport {
            kind: ProbeKind::UdpEcho,
            idle: stats(0.05),
            loaded: stats(11.66),
            increase_p50_ms: 11.6,
            network_round_trip: None,
        }],
        ..r
    };
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        [
            "latency: udp echo median 0.050 ms idle, 11.7 ms loaded (+11.6 ms); 5003 RPM loaded; load 9.4 Mbit/s up"
        ]
    );
}

#[test]
fn rr_headline_is_transactions_and_their_round_trip() {
    let r = RrResult {
        request_bytes: 1,
        response_bytes: 1,
        new_connection: true,
        transactions: 1000,
        seconds: 1.0,
        transactions_per_second: 1000.4,
        round_trip: stats(0.9),
        connect: Some(stats(0.1)),
        agent_transactions: None,
        partial: false,
    };
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        [
            "latency --rr: 1000 transactions/s (a new connection each), median round trip 0.900 ms, handshake 0.100 ms"
        ]
    );
}
