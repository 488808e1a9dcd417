use wirespeed::common::brief::Headline;
use wirespeed::throughput::ThroughputResult;
use wirespeed::throughput::analysis::LinkRate;
use wirespeed::throughput::result::Start;
use wirespeed_model::RateFormat;
use wirespeed_net::Protocol;
use wirespeed_net::TestSpec;
use wirespeed_net::spec::Direction;
use wirespeed_net::summary::End;
use wirespeed_net::summary::Sum;

fn result(spec: TestSpec, received: Sum, back: Option<Sum>, link: LinkRate) -> ThroughputResult {
    ThroughputResult {
        start: Start {
            local: "198.19.0.1:40000".into(),
            agent: "198.19.0.2:5210".into(),
            in_process_agent: false,
            agent_software: None,
            client_environment: None,
            agent_environment: None,
            timestamp_source: String::new(),
        },
        intervals: Vec::new(),
        agent_intervals: Vec::new(),
        end: End {
            streams: Vec::new(),
            sum_sent: Sum::default(),
            sum_received: received,
            sum_sent_bidir_reverse: None,
            sum_received_bidir_reverse: back,
            cpu_utilization_percent: Default::default(),
            ttcp: Vec::new(),
        },
        error: None,
        partial: false,
        partial_reason: None,
        link_rate: link,
        repeat: None,
        queued_seconds: 0.0,
        iperf3: None,
        rate_format: RateFormat::Adaptive,
        spec,
    }
}

fn rate(bits_per_second: f64) -> Sum {
    Sum {
        streams: 1,
        bits_per_second,
        ..Sum::default()
    }
}

#[test]
fn tcp_headline_is_the_rate_against_the_envelope_ceiling() {
    let ten_m = LinkRate::Given {
        bits_per_second: 10_000_000,
    };
    let r = result(TestSpec::default(), rate(9_408_000.0), None, ten_m);
    let lines = r.headline(RateFormat::Adaptive);
    assert_eq!(lines.len(), 1, "{lines:?}");
    // 10 Mbit/s Ethernet, MTU 1500, TCP with timestamps: 1448 of every 1538 bytes on the
    // wire are payload, 9.415 Mbit/s.
    assert!(
        lines[0].starts_with("tcp: 9.408 Mbit/s received, 99.9% of the 9.41"),
        "{lines:?}"
    );
    assert!(lines[0].ends_with("ceiling (--link-rate)"), "{lines:?}");
    let unknown = LinkRate::Unknown {
        reason: "loopback".into(),
    };
    let r = result(TestSpec::default(), rate(9_408_000.0), None, unknown);
    assert!(r.headline(RateFormat::Adaptive)[0].contains("no link rate"));
}

#[test]
fn udp_and_bidir_headlines_say_loss_and_both_directions() {
    let udp = TestSpec {
        protocol: Protocol::Udp,
        length_bytes: 1472,
        ..TestSpec::default()
    };
    let sum = Sum {
        datagrams: Some(1000),
        lost: Some(5),
        jitter_seconds: Some(0.000_25),
        ..rate(1_000_000.0)
    };
    let r = result(udp, sum, None, LinkRate::default());
    let line = &r.headline(RateFormat::Adaptive)[0];
    assert!(
        line.starts_with(
            "udp: 1 Mbit/s received, 5 of 1000 datagrams lost (0.5%), jitter 0.250 ms"
        ),
        "{line}"
    );
    let both = TestSpec {
        direction: Direction::Both,
        ..TestSpec::default()
    };
    let r = result(both, rate(2e6), Some(rate(3e6)), LinkRate::default());
    let line = &r.headline(RateFormat::Adaptive)[0];
    assert!(line.contains("; back: 3 Mbit/s received"), "{line}");
}
