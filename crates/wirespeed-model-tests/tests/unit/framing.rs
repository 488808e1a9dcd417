use wirespeed_model::framing::*;

const ETH: LinkLayer = LinkLayer::Ethernet { vlan_tags: 0 };

#[test]
fn a_full_size_frame_is_1538_bytes_on_the_wire() {
    // Seed 004: "1538 bytes on the wire or 1460 bytes of user data per packet".
    let f = ETH.frame(1500);
    assert_eq!(f.frame, 1518);
    assert_eq!(f.wire, 1538);
    let mss = 1500
        - IpVersion::V4_PLAIN.header_bytes()
        - Transport::Tcp { timestamps: false }.header_bytes();
    assert_eq!(mss, 1460);
}

#[test]
fn short_packets_are_padded_to_64_bytes() {
    let ack = ETH.frame(40);
    assert_eq!(ack.pad, 6);
    assert_eq!(ack.frame, 64);
    assert_eq!(ack.wire, 84);
    assert_eq!(ETH.min_wire(), 84);
}

#[test]
fn a_vlan_tag_adds_four_bytes_but_not_to_the_minimum() {
    let tagged = LinkLayer::Ethernet { vlan_tags: 1 };
    assert_eq!(tagged.frame(1500).frame, 1522);
    assert_eq!(tagged.frame(40).frame, 64);
    assert_eq!(tagged.frame(40).pad, 2);
}

#[test]
fn boggs_charge_24_byte_times_outside_the_header() {
    assert_eq!(BOGGS_OVERHEAD_BYTES, 24);
    // A 64-byte packet (header and CRC included) occupies 64 - 4 + 24 = 84 byte times.
    assert_eq!(
        ETH.frame(46).wire,
        64 + ETHERNET_PREAMBLE_BYTES + ETHERNET_GAP_BYTES
    );
}

/// Seed 000 §3.3: charging 24 byte times per packet makes back-to-back packets exactly
/// 10.0 Mbit/s, whatever their length; 64-byte packets then give about 14,200 packets/s.
#[test]
fn seed_000_back_to_back_packets_are_exactly_the_link_rate() {
    let rate = wirespeed_model::units::BitRate::from_bits_per_second(10_000_000);
    for len in [64, 128, 512, 1024, 1536, 4000] {
        let bits_per_second = boggs_packets_per_second(rate, len) * boggs_wire_bits(len) as f64;
        assert!(
            (bits_per_second - 10e6).abs() < 1e-6,
            "{len}: {bits_per_second}"
        );
    }
    let small = boggs_packets_per_second(rate, 64);
    assert!((small - 14_200.0).abs() / 14_200.0 < 0.001, "{small}");
}

#[test]
fn a_serial_line_carries_the_packet_alone() {
    let f = LinkLayer::Serial.frame(1000);
    assert_eq!((f.frame, f.wire, f.pad), (1000, 1000, 0));
}

#[test]
fn header_sizes() {
    assert_eq!(IpVersion::V6.header_bytes(), 40);
    assert_eq!(IpVersion::V4 { options_bytes: 8 }.header_bytes(), 28);
    assert_eq!(Transport::Tcp { timestamps: true }.header_bytes(), 32);
    assert_eq!(Transport::Udp.header_bytes(), 8);
}
