use wirespeed::throughput::ThroughputResult;

#[test]
fn each_direction_and_stream_is_labelled_by_meaning() {
    let (doc, text) = wirespeed::common::metrics::saved_exposition::<ThroughputResult>(
        include_str!("../../../testdata/report/tcp.json"),
    );
    let up = doc.result.end.sum_received.bits_per_second;
    for needle in [
        format!(
            "wirespeed_tcp_received_bytes_per_second{{direction=\"upload\"}} {}\n",
            up / 8.0
        ),
        "wirespeed_tcp_stream_received_bytes_per_second{direction=\"upload\",stream=\"1\"} "
            .to_string(),
        "wirespeed_tcp_cpu_utilization_ratio{end=\"client\"} ".to_string(),
        "wirespeed_tcp_partial 0\n".to_string(),
    ] {
        assert!(text.contains(&needle), "{needle} in {text}");
    }
    assert!(
        !text.contains("download"),
        "no reverse direction without --bidir"
    );
}
