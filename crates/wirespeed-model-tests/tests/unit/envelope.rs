use proptest::prelude::*;
use std::time::Duration;
use wirespeed_model::envelope::*;
use wirespeed_model::framing::{IpVersion, LinkLayer, Transport};
use wirespeed_model::units::BitRate;

fn ethernet(rate: &str) -> EnvelopeParams {
    EnvelopeParams::ethernet_tcp(rate.parse().unwrap())
}

/// Seed 004: "The theoretical maximum data throughput, after you take into account all the
/// protocol overheads, is 1,104 KB/s". Tolerance 1%, under the module's stated assumptions.
#[test]
fn seed_004_theoretical_maximum_is_1104_kb_per_second() {
    let vj = EnvelopeParams {
        transport: Transport::Tcp { timestamps: false },
        duplex: Duplex::Half,
        ack_every: 1,
        ..ethernet("10M")
    };
    let e = vj.compute().unwrap();
    assert_eq!(e.data_frames[0].bytes.wire, 1538);
    assert_eq!(e.payload_bytes, 1460);
    let kib_per_second = e.goodput_bytes_per_second / 1024.0;
    assert!(
        (kib_per_second / 1104.0 - 1.0).abs() < 0.01,
        "{kib_per_second}"
    );
    // The other readings miss by more than 1%: the assumptions are not arbitrary.
    let every_two = EnvelopeParams { ack_every: 2, ..vj }.compute().unwrap();
    assert!(every_two.goodput_bytes_per_second / 1024.0 / 1104.0 > 1.01);
    let decimal_kb = e.goodput_bytes_per_second / 1000.0;
    assert!(decimal_kb / 1104.0 > 1.01);
}

/// Seed 000 §3.3: 64-byte packets (header and data, CRC charged separately) at most about
/// 14,200 packets/s; minimum frames (64 bytes with CRC) 14,880.
#[test]
fn seed_000_minimum_packet_rates() {
    let e = ethernet("10M").compute().unwrap();
    assert!((e.min_frames_per_second - 14_880.95).abs() < 0.01);
    let boggs = wirespeed_model::framing::boggs_packets_per_second(
        BitRate::from_bits_per_second(10_000_000),
        64,
    );
    assert!((boggs - 14_204.5).abs() < 0.1, "{boggs}");
}

/// Seed 001: 0.0008 ms per byte on 10 Mbit/s Ethernet, 0.14285 ms on a 56 kbit/s DS0, and a
/// 1000-byte packet on the DS0 takes about 143 ms.
#[test]
fn seed_001_serialization_costs() {
    let ten = ethernet("10M").compute().unwrap();
    assert!((ten.seconds_per_byte * 1e3 - 0.0008).abs() < 1e-12);
    let ds0 = EnvelopeParams {
        link: LinkLayer::Serial,
        transport: Transport::Udp,
        udp_payload: Some(1000 - 28),
        ..ethernet("56k")
    }
    .compute()
    .unwrap();
    assert!((ds0.seconds_per_byte * 1e3 - 0.14285).abs() < 1e-5);
    assert_eq!(ds0.data_frames[0].bytes.wire, 1000);
    assert!((ds0.seconds_per_frame * 1e3 - 142.857).abs() < 0.01);
}

#[test]
fn full_duplex_acks_load_the_reverse_direction_only() {
    let e = ethernet("1G").compute().unwrap();
    assert_eq!(e.payload_bytes, 1448);
    assert_eq!(e.cycle_wire_bytes, 2 * 1538);
    let ack = e.acks.unwrap();
    assert_eq!(ack.frame.wire, 14 + 52 + 4 + 20);
    assert!(ack.wire_bits_per_second > 0.0);
}

#[test]
fn udp_datagrams_larger_than_the_mtu_are_fragmented() {
    let e = EnvelopeParams {
        transport: Transport::Udp,
        udp_payload: Some(4000),
        ..ethernet("1G")
    }
    .compute()
    .unwrap();
    let frames: u64 = e.data_frames.iter().map(|s| s.count).sum();
    assert_eq!(frames, 3); // 4008 bytes of UDP in 1480-byte fragments.
    let ip_data: u64 = e
        .data_frames
        .iter()
        .map(|s| s.count * (s.bytes.packet - 20))
        .sum();
    assert_eq!(ip_data, 4008);
}

#[test]
fn bandwidth_delay_product() {
    let e = EnvelopeParams {
        rtt: Some(Duration::from_millis(10)),
        ..ethernet("1G")
    }
    .compute()
    .unwrap();
    let pipe = e.pipe.unwrap();
    assert!((pipe.bdp_wire_bytes - 1_250_000.0).abs() < 1e-6);
    assert!((pipe.bdp_payload_bytes - e.goodput_bytes_per_second * 0.01).abs() < 1e-6);
    assert_eq!(
        pipe.socket_buffer_granted_bytes,
        2 * pipe.socket_buffer_bytes
    );
}

#[test]
fn impossible_stacks_are_refused() {
    assert!(matches!(
        EnvelopeParams {
            mtu: 40,
            ..ethernet("10M")
        }
        .compute(),
        Err(EnvelopeError::Mtu { .. })
    ));
    let v6 = EnvelopeParams {
        ip: IpVersion::V6,
        mtu: 1000,
        ..ethernet("10M")
    };
    assert!(v6.compute().unwrap_err().to_string().contains("1280"));
    let opts = EnvelopeParams {
        ip: IpVersion::V4 { options_bytes: 3 },
        ..ethernet("10M")
    };
    assert_eq!(opts.compute().unwrap_err(), EnvelopeError::Ipv4Options(3));
}

#[test]
fn explain_shows_every_step() {
    let e = ethernet("10M").compute().unwrap();
    let text: Vec<String> = e
        .explain()
        .iter()
        .map(|l| format!("{}: {}", l.label, l.work))
        .collect();
    let all = text.join("\n");
    assert!(
        all.contains("1500 MTU - 20 IPv4 - 32 TCP with timestamps = 1448 bytes"),
        "{all}"
    );
    assert!(
        all.contains("1518 frame + 8 preamble + 12 gap = 1538 wire bytes"),
        "{all}"
    );
    assert!(all.contains("1,250,000 bytes/s"), "{all}");
}

fn arb_params() -> impl Strategy<Value = EnvelopeParams> {
    (
        1_000u64..100_000_000_000,
        prop_oneof![
            Just(LinkLayer::Ethernet { vlan_tags: 0 }),
            Just(LinkLayer::Ethernet { vlan_tags: 1 }),
            Just(LinkLayer::Serial)
        ],
        prop_oneof![
            Just(IpVersion::V4_PLAIN),
            Just(IpVersion::V6),
            Just(IpVersion::V4 { options_bytes: 12 })
        ],
        prop_oneof![
            Just(Transport::Tcp { timestamps: true }),
            Just(Transport::Tcp { timestamps: false }),
            Just(Transport::Udp)
        ],
        prop_oneof![Just(Duplex::Full), Just(Duplex::Half)],
        0u32..8,
        1280u64..=9000,
    )
        .prop_map(
            |(bps, link, ip, transport, duplex, ack_every, mtu)| EnvelopeParams {
                rate: BitRate::from_bits_per_second(bps),
                link,
                mtu,
                ip,
                transport,
                duplex,
                ack_every,
                udp_payload: None,
                rtt: None,
            },
        )
}

proptest! {
    #[test]
    fn efficiency_is_in_zero_one(p in arb_params()) {
        let e = p.compute().unwrap();
        prop_assert!(e.efficiency > 0.0 && e.efficiency <= 1.0);
        prop_assert!(e.goodput_bits_per_second <= p.rate.bps());
    }

    #[test]
    fn goodput_never_decreases_as_the_mtu_grows(p in arb_params(), extra in 1u64..2000) {
        let bigger = EnvelopeParams { mtu: (p.mtu + extra).min(9216), ..p };
        let (a, b) = (p.compute().unwrap(), bigger.compute().unwrap());
        prop_assert!(b.goodput_bytes_per_second >= a.goodput_bytes_per_second * (1.0 - 1e-12));
    }

    #[test]
    fn goodput_scales_linearly_with_rate(p in arb_params(), k in 1u64..100) {
        let faster = EnvelopeParams {
            rate: BitRate::from_bits_per_second(p.rate.bits_per_second() * k), ..p
        };
        let (a, b) = (p.compute().unwrap(), faster.compute().unwrap());
        let ratio = b.goodput_bytes_per_second / a.goodput_bytes_per_second;
        prop_assert!((ratio - k as f64).abs() < 1e-9 * k as f64);
        prop_assert_eq!(a.efficiency, b.efficiency);
    }

    #[test]
    fn udp_fragments_carry_the_whole_datagram(payload in 1u64..60_000, mtu in 1280u64..9000) {
        let p = EnvelopeParams {
            transport: Transport::Udp, udp_payload: Some(payload), mtu,
            ..ethernet("1G")
        };
        let e = p.compute().unwrap();
        let carried: u64 = e.data_frames.iter().map(|s| s.count * (s.bytes.packet - 20)).sum();
        prop_assert_eq!(carried, payload + 8);
    }
}
