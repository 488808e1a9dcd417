use wirespeed::common::metrics::*;
use wirespeed_report::Document;

#[derive(serde::Serialize)]
struct Two;
impl Metrics for Two {
    fn metrics(&self, m: &mut Exposition) {
        for (stream, v) in [("1", 10.0), ("2", 9.0), ("1", 99.0)] {
            m.gauge(
                "received_bits_per_second",
                "what the receiver counted",
                &[("direction", "upload"), ("stream", stream)],
                v,
            );
        }
        m.gauge("rate_bits_per_second", "a rate over no time", &[], f64::NAN);
        m.maybe("missing_seconds", "absent", &[], None);
        m.flag("partial", "cut short", &[], false);
        m.gauge(
            "note",
            "labels are escaped and cut",
            &[("text", &format!("a\"b\\c\nd{}", "x".repeat(500)))],
            1.0,
        );
    }
}

#[test]
fn series_are_named_typed_and_labelled_by_meaning() {
    let mut doc = Document::new("tcp", (), Two);
    doc.started_at = "2026-11-23T10:00:00Z".into();
    doc.push(wirespeed_report::Finding::plain(
        wirespeed_report::Severity::Verdict,
        "link_bound",
        "a",
    ));
    let text = exposition(&doc).text();
    assert!(text.contains("# HELP wirespeed_tcp_received_bytes_per_second what the receiver counted\n# TYPE wirespeed_tcp_received_bytes_per_second gauge\nwirespeed_tcp_received_bytes_per_second{direction=\"upload\",stream=\"1\"} 1.25\nwirespeed_tcp_received_bytes_per_second{direction=\"upload\",stream=\"2\"} 1.125\n"), "bits per second are written in bytes per second: {text}");
    assert!(!text.contains("bits"), "{text}");
    assert!(
        !text.contains(" 12.375\n"),
        "the first of one label set stands"
    );
    assert!(!text.contains("rate_bytes_per_second"), "NaN is no figure");
    assert!(!text.contains("missing_seconds"));
    assert!(text.contains("wirespeed_tcp_partial 0\n"));
    assert!(text.contains("wirespeed_tcp_info{schema=\"wirespeed.tcp.v1\",version=\""));
    assert!(text.contains("wirespeed_tcp_started_timestamp_seconds 1795428000\n"));
    assert!(text.contains("wirespeed_tcp_verdicts 1\n"));
    assert!(
        text.contains("wirespeed_tcp_findings{severity=\"verdict\",kind=\"link_bound\"} 1\n"),
        "{text}"
    );
    assert!(text.contains("text=\"a\\\"b\\\\c\\nd"), "{text}");
    assert!(
        !text.contains(&"x".repeat(LABEL_VALUE_MAX)),
        "a long label is cut"
    );
}

#[test]
fn quantiles_are_a_summary_with_its_count() {
    let mut m = Exposition::new("latency");
    m.summary(
        "round_trip_seconds",
        "h",
        &[("phase", "idle")],
        &[("0.5", 0.001), ("0.99", 0.002)],
        40,
    );
    assert_eq!(
        m.text(),
        "# HELP wirespeed_latency_round_trip_seconds h\n# TYPE wirespeed_latency_round_trip_seconds summary\n\
         wirespeed_latency_round_trip_seconds{phase=\"idle\",quantile=\"0.5\"} 0.001\n\
         wirespeed_latency_round_trip_seconds{phase=\"idle\",quantile=\"0.99\"} 0.002\n\
         wirespeed_latency_round_trip_seconds_count{phase=\"idle\"} 40\n"
    );
}

#[test]
#[should_panic(expected = "belongs to a summary")]
fn a_quantile_on_a_gauge_is_a_bug() {
    Exposition::new("latency").gauge("x_seconds", "h", &[("quantile", "0.5")], 1.0);
}

#[test]
fn dotted_commands_name_their_prefix() {
    let mut m = Exposition::new("lab.status");
    m.gauge("labs", "h", &[], 2.0);
    m = {
        let mut n = Exposition::new("latency-rr");
        n.gauge("x_seconds", "h", &[], 1.0);
        assert!(n.text().contains("wirespeed_latency_rr_x_seconds 1\n"));
        m
    };
    assert!(m.text().contains("wirespeed_lab_status_labs 2\n"));
}

#[test]
#[should_panic(expected = "twice")]
fn a_label_named_twice_is_a_bug_caught_at_once() {
    Exposition::new("mesh").gauge("x", "h", &[("second", "0"), ("second", "1")], 1.0);
}

#[test]
fn samples_are_bounded() {
    let mut m = Exposition::new("sim");
    let labels: Vec<String> = (0..SAMPLES_MAX + 10).map(|i| i.to_string()).collect();
    for l in &labels {
        m.gauge("v", "h", &[("point", l)], 1.0);
    }
    assert_eq!(
        m.text().lines().filter(|l| !l.starts_with('#')).count(),
        SAMPLES_MAX
    );
}

#[test]
fn units_become_base_units() {
    assert_eq!(base_unit("ms"), Some(("seconds", 1e-3)));
    assert_eq!(base_unit("Mbit/s"), Some(("bits_per_second", 1e6)));
    assert_eq!(base_unit("KiB/s"), Some(("bytes_per_second", 1024.0)));
    assert_eq!(base_unit("%"), Some(("ratio", 0.01)));
    assert_eq!(base_unit("% of mean"), None);
}
