use wirespeed::lab::text::stages;

#[test]
fn a_one_thread_direction_shows_no_ingress_stage_rather_than_a_free_one() {
    let two = wirespeed_lab::EmulatorCost {
        ingress_cpu_seconds: 0.5,
        egress_cpu_seconds: 1.0,
        spin_cpu_seconds: 0.25,
        ..Default::default()
    };
    assert_eq!(stages(&two, 1_000_000), "0.50/1.00/0.25 us");
    let one = wirespeed_lab::EmulatorCost {
        one_thread: true,
        ingress_cpu_seconds: 0.0,
        ..two
    };
    assert_eq!(stages(&one, 1_000_000), "-/1.00/0.25 us");
    let medium = wirespeed_lab::EmulatorCost {
        shared_thread: true,
        ..two
    };
    assert_eq!(stages(&medium, 1_000_000), "-");
    assert_eq!(stages(&two, 0), "-");
}
