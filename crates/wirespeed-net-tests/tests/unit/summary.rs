use wirespeed_net::client::TestOutcome;
use wirespeed_net::report::CpuTime;
use wirespeed_net::report::{Role, SideReport, StreamReport};
use wirespeed_net::spec::{Direction, Flow};
use wirespeed_net::summary::*;

fn stream(id: u32, role: Role, bytes: u64, seconds: f64, calls: u64) -> StreamReport {
    StreamReport {
        id,
        flow: Flow::Upload,
        role,
        bytes,
        calls,
        seconds,
        cpu: CpuTime::default(),
        socket: Default::default(),
        tcp_info: None,
        udp: None,
        zerocopy: None,
        longest_call_seconds: None,
        skipped_in_window_seconds: None,
        drain: None,
        error: None,
    }
}

#[test]
fn seed_002_ttcp_line_from_pcattcp_figures() {
    // pcattcp -t: 16777216 bytes in 0.17 real seconds; numCalls 2048; msec/call 0.09;
    // calls/sec 11906.98. The seed's rate, 93.02 MB/sec, is MiB/s over the unrounded time.
    let seconds = 2048.0 / 11906.98;
    let s = sum(&[&stream(0, Role::Sender, 16_777_216, seconds, 2048)]);
    let t = ttcp(Flow::Upload, Role::Sender, &s);
    assert!(
        (t.bytes_per_second / 1_048_576.0 - 93.02).abs() < 0.01,
        "{}",
        t.bytes_per_second
    );
    assert!((t.ms_per_call - 0.084).abs() < 0.001);
    assert!((t.calls_per_second - 11906.98).abs() < 0.01);
    assert!((t.real_seconds - 0.17).abs() < 0.005);
}

#[test]
fn parallel_streams_sum_and_pair_up() {
    let o = TestOutcome {
        client: SideReport {
            streams: vec![
                stream(0, Role::Sender, 100, 1.0, 1),
                stream(1, Role::Sender, 300, 2.0, 3),
            ],
            wall_seconds: 2.0,
            cpu: CpuTime {
                user_seconds: 0.5,
                system_seconds: 1.5,
            },
            ..SideReport::default()
        },
        agent: Some(SideReport {
            streams: vec![
                stream(0, Role::Receiver, 100, 1.0, 5),
                stream(1, Role::Receiver, 300, 2.0, 7),
            ],
            wall_seconds: 2.0,
            ..SideReport::default()
        }),
        intervals: vec![],
        error: None,
        local: "127.0.0.1:1".parse().unwrap(),
        remote: "127.0.0.1:2".parse().unwrap(),
        queued_seconds: 0.0,
    };
    let e = end(&o, Direction::Send);
    assert_eq!(e.sum_sent.bytes, 400);
    assert_eq!(e.sum_received.calls, 12);
    assert_eq!(e.sum_sent.bits_per_second, 1600.0);
    assert_eq!(e.streams.len(), 2);
    assert!(
        e.streams
            .iter()
            .all(|p| p.sender.is_some() && p.receiver.is_some())
    );
    assert_eq!(e.cpu_utilization_percent.host_total, 100.0);
    assert!(e.sum_sent_bidir_reverse.is_none());
}
