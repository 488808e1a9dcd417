use wirespeed::throughput::measure::*;
use wirespeed_net::TestOutcome;

/// A side with one stream of `bytes` in `role`.
fn side(role: wirespeed_net::report::Role, bytes: u64) -> wirespeed_net::SideReport {
    wirespeed_net::SideReport {
        streams: vec![wirespeed_net::StreamReport {
            id: 0,
            flow: wirespeed_net::spec::Flow::Upload,
            role,
            bytes,
            calls: 0,
            seconds: 1.0,
            cpu: Default::default(),
            socket: Default::default(),
            tcp_info: None,
            udp: None,
            zerocopy: None,
            longest_call_seconds: None,
            skipped_in_window_seconds: None,
            drain: None,
            error: None,
        }],
        ..Default::default()
    }
}

#[test]
fn a_test_that_moved_nothing_is_partial_not_a_rate_of_zero() {
    use wirespeed_net::report::Role;
    let outcome = |received: u64| TestOutcome {
        client: side(Role::Sender, received),
        agent: Some(side(Role::Receiver, received)),
        intervals: Vec::new(),
        error: None,
        local: "127.0.0.1:1".parse().unwrap(),
        remote: "127.0.0.1:2".parse().unwrap(),
        queued_seconds: 0.0,
    };
    let why = partial_reason(&outcome(0)).expect("0 bytes is no result");
    assert!(why.contains("moved nothing"), "{why}");
    assert_eq!(partial_reason(&outcome(1)), None);
}
