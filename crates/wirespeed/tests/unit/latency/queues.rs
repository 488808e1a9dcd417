use wirespeed::latency::queues::*;
use wirespeed_lab::emulator::link::DirectionCounters;
use wirespeed_lab::inside::InterfaceTruth;

fn counters(samples: u64, sum_ns: u64, drops: u64) -> DirectionCounters {
    DirectionCounters {
        queue_delay_samples: samples,
        queue_delay_sum_ns: sum_ns,
        drops_queue: drops,
        ..DirectionCounters::default()
    }
}

#[test]
fn bytes_read_as_three_figures() {
    assert_eq!(bytes_text(0.0), "0 B");
    assert_eq!(bytes_text(999.4), "999 B");
    assert_eq!(bytes_text(116_941.0), "117 kB");
    assert_eq!(bytes_text(1_204_000.0), "1.2 MB");
    assert_eq!(bytes_text(f64::NAN), "-");
}

#[test]
fn the_window_is_the_difference_of_two_readings() {
    let port = InterfaceTruth {
        lab: "l".into(),
        namespace: "ws-l-h1".into(),
        node: "h1".into(),
        interface: "eth0".into(),
        link: "h1-h2".into(),
        rate_bits_per_second: 10_000_000,
        receive_rate_bits_per_second: 10_000_000,
        layer: wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 },
        mtu: 1500,
        half_duplex: false,
        queue_packets: Some(100),
        queue_bytes: None,
        aqm: None,
    };
    let a = LinkSnapshot {
        at_seconds: 3.0,
        out: counters(1_000, 5_000_000_000, 7),
        back: Some(counters(1_000, 0, 0)),
    };
    // 4000 samples of 60 ms on the way out, 0.1 ms back.
    let b = LinkSnapshot {
        at_seconds: 7.0,
        out: counters(5_000, 5_000_000_000 + 4_000 * 60_000_000, 9),
        back: Some(counters(5_000, 4_000 * 100_000, 0)),
    };
    let udp = [(2.0, 20.0), (3.5, 80.0), (5.0, 82.0), (7.5, 90.0)];
    let w = window(&port, &a, &b, &udp, 20.0);
    assert_eq!(w.samples, 4_000);
    assert!((w.out_mean_ms - 60.0).abs() < 1e-9);
    assert!((w.back_mean_ms - 0.1).abs() < 1e-9);
    // 60 ms at 10 Mbit/s.
    assert!((w.out_mean_bytes - 75_000.0).abs() < 1e-6);
    assert_eq!((w.out_drops, w.probes), (2, 2));
    assert!((w.probe_mean_increase_ms - 61.0).abs() < 1e-9);
}
