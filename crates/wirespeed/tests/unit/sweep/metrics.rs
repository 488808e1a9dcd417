use wirespeed::sweep::SweepReport;

#[test]
fn cells_are_labelled_by_buffer_sizes_not_indexes() {
    let (_, text) = wirespeed::common::metrics::saved_exposition::<SweepReport>(include_str!(
        "../../../testdata/report/sweep.json"
    ));
    assert!(
        text.contains("wirespeed_sweep_throughput_bytes_per_second{send_buffer_bytes=\""),
        "{text}"
    );
    assert!(!text.contains("index"), "{text}");
}
