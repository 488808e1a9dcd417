/// Issue 15 item 4: a loopback sweep's packet is the same size in every run.
#[test]
fn the_loopback_packet_is_fixed_by_the_largest_ip_packet() {
    let v4 = wirespeed::sweep::agent_runner::loopback_packet_bytes(false);
    assert_eq!(
        v4,
        wirespeed::sweep::agent_runner::loopback_packet_bytes(false)
    );
    assert!(v4 <= 65483, "{v4}");
    assert_eq!(
        v4 - wirespeed::sweep::agent_runner::loopback_packet_bytes(true),
        20
    );
}
