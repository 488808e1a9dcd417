use wirespeed::sim::SimReport;

#[test]
fn points_are_labelled_by_hosts_and_lengths() {
    let text = wirespeed::common::metrics::of_result::<SimReport>(
        "sim",
        include_str!("../../../testdata/report/sim.json"),
    );
    assert!(
        text.contains(
            "wirespeed_sim_throughput_bytes_per_second{hosts=\"1\",lengths=\"64\"} 593120\n"
        ),
        "{text}"
    );
    assert!(text.contains("wirespeed_sim_utilization_ratio{hosts=\"1\",lengths=\"64\"} "));
    assert!(
        !text.contains("throughput_ci_half_width_bytes_per_second{hosts=\"1\""),
        "one replication has no interval (null): no sample"
    );
}
