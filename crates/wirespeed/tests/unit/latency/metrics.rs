use wirespeed::latency::LatencyResult;
use wirespeed::latency::metrics::*;

#[test]
fn round_trips_are_labelled_by_kind_phase_and_quantile_in_seconds() {
    let (doc, text) = wirespeed::common::metrics::saved_exposition::<LatencyResult>(include_str!(
        "../../../testdata/report/latency.json"
    ));
    let k = &doc.result.kinds[0];
    let name = kind_name(k.kind);
    let line = format!(
        "wirespeed_latency_round_trip_seconds{{kind=\"{name}\",phase=\"loaded\",quantile=\"0.99\"}} {}\n",
        k.loaded.p99_ms * MS
    );
    assert!(text.contains(&line), "{line} in {text}");
    assert!(
        text.contains("wirespeed_latency_responsiveness_round_trips_per_minute{phase=\"idle\"} ")
    );
}
