use wirespeed::load::LoadResult;

#[test]
fn tests_are_labelled_by_hosts_lengths_and_source() {
    let (_, text) = wirespeed::common::metrics::saved_exposition::<LoadResult>(include_str!(
        "../../../testdata/report/load.json"
    ));
    assert!(text.contains("wirespeed_load_throughput_bytes_per_second{hosts=\"1\",lengths=\"64\",source=\"measured\"} 4936272\n"), "{text}");
    assert!(
        text.contains("wirespeed_load_host_packets{hosts=\"1\",lengths=\"64\",host=\"1\"} 28047\n")
    );
}
