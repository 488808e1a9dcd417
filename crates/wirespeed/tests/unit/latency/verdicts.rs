use wirespeed::latency::result::{
    LatencyParams, LatencyResult, LoadDirection, ProbeKind, QueueKind,
};
use wirespeed::latency::verdicts::*;
use wirespeed_model::RateFormat;
use wirespeed_report::Severity;

/// Issue 31: under `--udp-load` the header said "4 TCP flow(s)".
#[test]
fn the_header_names_the_loads_kind() {
    let udp = load_words(4, Some(12_000_000), LoadDirection::Up);
    assert!(!udp.contains("TCP"), "{udp}");
    assert!(udp.starts_with("4 UDP flow(s) of 12"), "{udp}");
    assert_eq!(
        load_words(4, None, LoadDirection::Both),
        "4 TCP flow(s) each way"
    );
}

/// Issue 31: with load both ways, 60 ms of rise at 9.8 Mbit/s each way was printed as
/// one "147 kB standing in a queue" (60 ms at 19.6 Mbit/s would be twice that; at one
/// way's rate it is 73.5 kB). Now the sum is said to be both queues', each way's figure
/// given on its own.
#[test]
fn load_both_ways_reports_each_directions_queue_not_one_sum() {
    let rise = |direction, rates: (Option<f64>, Option<f64>)| {
        LatencyFinding::LoadAddedDelay(LoadAddedDelay {
            added_delay_seconds: 0.060,
            idle_round_trip_seconds: 0.0301,
            loaded_round_trip_seconds: 0.0901,
            loaded_p99_round_trip_seconds: 0.095,
            direction,
            upload_bits_per_second: rates.0,
            download_bits_per_second: rates.1,
            location: "the link".into(),
            remedy: "an AQM".into(),
            format: RateFormat::Adaptive,
        })
    };
    let both = rise(LoadDirection::Both, (Some(9.8e6), Some(9.8e6))).to_string();
    assert!(!both.contains("standing in a queue"), "{both}");
    assert!(both.contains("crosses both directions' queues"), "{both}");
    assert!(
        both.contains("upload's") && both.contains("download's"),
        "{both}"
    );
    assert_eq!(both.matches("73.5 kB").count(), 2, "{both}");
    assert!(both.starts_with("the load added 60.00 ms to the median UDP round trip (30.10 ms idle, 90.10 ms loaded, p99 95.00 ms)"), "{both}");
    let up = rise(LoadDirection::Up, (Some(9.8e6), None));
    assert_eq!(up.severity(), Severity::Verdict);
    let up = up.to_string();
    assert!(up.contains("73.5 kB standing in its queue"), "{up}");
    assert!(!up.contains("download"), "{up}");
    // A direction whose rate was not measured gets no bytes.
    let down = rise(LoadDirection::Down, (Some(9.8e6), None)).to_string();
    assert!(down.contains("not measured"), "{down}");
    // The finding a script reads: the kind and the figures in base units.
    let typed = wirespeed_report::Finding::of(
        Severity::Verdict,
        &rise(LoadDirection::Both, (Some(9.8e6), Some(9.8e6))),
    );
    assert_eq!(typed.kind, "load_added_delay");
    assert_eq!(typed.evidence["added_delay_seconds"], 0.060);
    assert_eq!(typed.evidence["direction"], "both");
    assert_eq!(typed.evidence["upload_bits_per_second"], 9.8e6);
    assert!(!typed.evidence.contains_key("format"));
}

/// A loaded run as its document reads back: the UDP echo rose 20 ms over a 0.2 ms idle
/// spread, a qdisc held 25 kB the probes wait in, a tenth and more of the TCP handshakes
/// were lost, and the probes were 2.5% of the link.
fn loaded_run() -> (LatencyParams, LatencyResult) {
    let stats = |p50: f64, p90: f64, probes: usize, lost: usize| {
        serde_json::json!({"probes": probes, "lost": lost, "min_ms": p50, "p50_ms": p50,
            "p90_ms": p90, "p99_ms": p90 + 1.0, "max_ms": p90 + 2.0, "trimmed_mean_ms": p50})
    };
    let kind = |kind: &str, lost: usize| {
        serde_json::json!({"kind": kind, "idle": stats(1.0, 1.2, 100, 0),
            "loaded": stats(21.0, 22.0, 100, lost), "increase_p50_ms": 20.0})
    };
    let result = serde_json::json!({
        "idle_seconds": 1.0, "loaded_seconds": 2.0, "settle_seconds": 0.5,
        "kinds": [kind("udp_echo", 0), kind("tcp_connect", 11)],
        "rpm_idle": 3000.0, "rpm_loaded": 2800.4,
        "upload_bits_per_second": 10e6, "download_bits_per_second": null,
        "probe_bits_per_second": 250e3, "probe_share_percent": 2.5,
        "probe_share_of_link_percent": 2.5,
        "link_rate": {"source": "given", "bits_per_second": 10_000_000},
        "queue": {"delay_ms": 20.0, "bytes": 25e3, "location": "the qdisc", "remedy": "fq_codel"},
        "queues": [{"queue": "qdisc", "location": "the qdisc of eth0", "mean_bytes": 25e3,
            "max_bytes": 30e3, "mean_ms": 20.0, "probes_wait_here": true,
            "source": "tc", "remedy": "fq_codel on eth0"}],
        "intervals": [], "samples": [], "partial": false, "partial_reason": null,
    });
    let params = serde_json::json!({"agent": "198.19.0.2:5201", "in_process_agent": false,
        "streams": 1, "direction": "up", "probe_interval_seconds": 0.01});
    (
        serde_json::from_value(params).unwrap(),
        serde_json::from_value(result).unwrap(),
    )
}

#[test]
fn a_loaded_run_is_judged_into_typed_findings() {
    let (params, result) = loaded_run();
    let found = judge(&params, &result);
    let kinds: Vec<String> = found
        .iter()
        .map(|f| wirespeed_report::Finding::of(f.severity(), f).kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "probes_lost_under_load",
            "load_added_delay",
            "queues_waited",
            "queue_standing",
            "responsiveness",
            "probe_load_heavy"
        ]
    );
    assert_eq!(
        found[0],
        LatencyFinding::ProbesLostUnderLoad {
            probe: ProbeKind::TcpConnect,
            lost: 11,
            probes: 100
        }
    );
    assert_eq!(found[0].severity(), Severity::Warning);
    assert_eq!(
        found[0].to_string(),
        "TCP connect: 11 of 100 probes unanswered under load"
    );
    let LatencyFinding::LoadAddedDelay(LoadAddedDelay {
        added_delay_seconds,
        direction,
        ..
    }) = &found[1]
    else {
        panic!("{:?}", found[1]);
    };
    assert!((added_delay_seconds - 0.020).abs() < 1e-12);
    assert_eq!(*direction, LoadDirection::Up);
    assert!(found[1].to_string().contains("25 kB standing in its queue"));
    let LatencyFinding::QueueStanding(QueueStanding {
        queue,
        max_bytes,
        probes_wait_here,
        ..
    }) = &found[3]
    else {
        panic!("{:?}", found[3]);
    };
    assert_eq!(
        (*queue, *max_bytes, *probes_wait_here),
        (QueueKind::Qdisc, Some(30e3), true)
    );
    assert_eq!(
        found[3].to_string(),
        "queue: the qdisc of eth0 held 25 kB on average (20.00 ms at the load's rate; at most 30 kB); every packet that leaves this way waits in it, the probes included; shrink it: fq_codel on eth0"
    );
    assert_eq!(
        found[4],
        LatencyFinding::Responsiveness {
            loaded_rpm: 2800.4,
            idle_rpm: 3000.0
        }
    );
    assert_eq!(
        found[5],
        LatencyFinding::ProbeLoadHeavy {
            share: 0.025,
            share_of: ShareOf::Link
        }
    );
    assert_eq!(
        found[5].to_string(),
        "the probes' own load is 2.5% of the link: lengthen --probe-interval"
    );
}

#[test]
fn a_partial_or_unanswered_run_gets_one_warning_and_no_verdict() {
    let (params, mut result) = loaded_run();
    result.partial_reason = Some("interrupted".into());
    assert_eq!(
        judge(&params, &result),
        [LatencyFinding::PartialResult {
            reason: "interrupted".into()
        }]
    );
    result.partial_reason = None;
    result.kinds[0].loaded.p50_ms = f64::NAN;
    let found = judge(&params, &result);
    assert_eq!(found, [LatencyFinding::UdpEchoUnanswered]);
    assert_eq!(found[0].severity(), Severity::Warning);
    // Within the idle spread: no added delay, with the spread as its evidence.
    let (params, mut result) = loaded_run();
    result.queue.as_mut().unwrap().delay_ms = 0.1;
    let found = judge(&params, &result);
    assert_eq!(
        found[1],
        LatencyFinding::NoAddedDelay(NoAddedDelay {
            idle_round_trip_seconds: 0.001,
            loaded_round_trip_seconds: 0.021,
            loaded_p99_round_trip_seconds: 0.023,
            idle_spread_seconds: (1.2f64 - 1.0).max(0.05) / 1e3,
        })
    );
}

/// Issue 31: under fq_codel the link's queue held 30.75 ms while the probes rose 0.7 ms;
/// the verdict said the probes wait in it, "held near its target".
#[test]
fn under_fq_codel_the_probes_own_rise_says_whether_they_wait() {
    let fq = Some("fq_codel");
    assert!(!probes_wait_in(fq, 30.75, 0.7));
    let remedy = link_queue_remedy(fq, 30.75, 0.7);
    assert!(!remedy.contains("near its"), "{remedy}");
    assert!(
        remedy.contains("30.75 ms") || remedy.contains("30.8 ms"),
        "{remedy}"
    );
    assert!(remedy.contains("only the load waits"), "{remedy}");
    // A drop-tail queue of 30.76 ms, probes risen by as much: they wait in it.
    assert!(probes_wait_in(None, 30.76, 30.6));
    // CoDel is one queue: the probes wait in it whatever they rose.
    assert!(probes_wait_in(Some("codel"), 30.75, 0.7));
    // fq_codel holding 4 ms: near its target, said so.
    assert!(link_queue_remedy(fq, 4.0, 3.8).contains("near its 5 ms target"));
    // No measured rise: assumed to wait, as before.
    assert!(probes_wait_in(fq, 30.75, f64::NAN));
}
