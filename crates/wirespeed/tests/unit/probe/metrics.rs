use wirespeed::probe::ProbeReport;

#[test]
fn hops_are_labelled_by_ttl_and_responder_in_seconds() {
    let (_, text) = wirespeed::common::metrics::saved_exposition::<ProbeReport>(include_str!(
        "../../../testdata/report/probe.json"
    ));
    assert!(text.contains("wirespeed_probe_min_round_trip_seconds{ttl=\"64\",responder=\"127.0.0.1\",size_bytes=\"64\"} 0.000002915\n"), "{text}");
    assert!(text.contains("wirespeed_probe_loss_ratio{ttl=\"64\",responder=\"127.0.0.1\"} 0\n"));
}
