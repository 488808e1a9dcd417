use wirespeed_net::iface::netlink::*;
use wirespeed_net::iface::nlwire::{self, Request};

#[test]
fn a_link_modes_reply_parses() {
    // A reply as the kernel writes it for a 1000/full link that advertises 10/100/1000 and
    // whose partner advertises 10/100 (compact bitsets).
    let reply = Request::genl(20, 0, 1, 4, 1)
        .begin(ETHTOOL_A_LINKMODES_HEADER)
        .string(ETHTOOL_A_HEADER_DEV_NAME, "eth0")
        .end()
        .bytes(ETHTOOL_A_LINKMODES_AUTONEG, &[1])
        .begin(ETHTOOL_A_LINKMODES_OURS)
        .u32(ETHTOOL_A_BITSET_SIZE, 64)
        .bytes(
            ETHTOOL_A_BITSET_VALUE,
            &[0x3Fu32.to_ne_bytes(), 0u32.to_ne_bytes()].concat(),
        )
        .bytes(
            ETHTOOL_A_BITSET_MASK,
            &[0x7Fu32.to_ne_bytes(), 0u32.to_ne_bytes()].concat(),
        )
        .end()
        .begin(ETHTOOL_A_LINKMODES_PEER)
        .flag(ETHTOOL_A_BITSET_NOMASK)
        .u32(ETHTOOL_A_BITSET_SIZE, 64)
        .bytes(
            ETHTOOL_A_BITSET_VALUE,
            &[0x0Fu32.to_ne_bytes(), 0u32.to_ne_bytes()].concat(),
        )
        .end()
        .u32(ETHTOOL_A_LINKMODES_SPEED, 100)
        .bytes(ETHTOOL_A_LINKMODES_DUPLEX, &[1])
        .finish();
    let msg = nlwire::messages(&reply).next().unwrap().unwrap();
    let m = parse_link_modes(msg.genl_attrs().unwrap());
    assert_eq!(m.autoneg, Some(1));
    assert_eq!(m.speed, Some(100));
    assert_eq!(m.duplex, Some(1));
    assert_eq!(m.advertised, Some(vec![0x3F, 0]));
    assert_eq!(m.supported, Some(vec![0x7F, 0]));
    assert_eq!(m.partner, Some(vec![0x0F, 0]));
}

/// ETHTOOL_MSG_LINKMODES_GET replies captured from Linux 6.18 (compact bitsets): a veth
/// (10000 Mbit/s full duplex, auto-negotiation off, no link modes) and a virtio_net NIC
/// (speed and duplex unknown).
static VETH_REPLY: &str = "80000000150000000200000029210000040100001800018008000100030000000900020077732d61000000000500020000000000340003800800020079000000140004000000000000000000000000000000000014000500000000000000000000000000000000000800050010270000050006000100000005000a0000000000";
static VIRTIO_REPLY: &str = "800000001500000002000000532100000401000018000180080001000400000009000200657468300000000005000200000000003400038008000200790000001400040000000000000000000000000000000000140005000000000000000000000000000000000008000500ffffffff05000600ff00000005000a0000000000";

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn real_kernel_replies_parse() {
    let bytes = unhex(VETH_REPLY);
    let msg = nlwire::messages(&bytes).next().unwrap().unwrap();
    assert_eq!(
        msg.kind, 0x15,
        "the family id the kernel gave ethtool that day"
    );
    let m = parse_link_modes(msg.genl_attrs().unwrap());
    assert_eq!(
        (m.speed, m.duplex, m.autoneg),
        (Some(10_000), Some(1), Some(0))
    );
    assert_eq!(m.advertised, Some(vec![0; 4]));
    assert_eq!(m.supported, Some(vec![0; 4]));
    assert_eq!(m.partner, None, "the kernel leaves an empty peer set out");
    let bytes = unhex(VIRTIO_REPLY);
    let msg = nlwire::messages(&bytes).next().unwrap().unwrap();
    let m = parse_link_modes(msg.genl_attrs().unwrap());
    assert_eq!((m.speed, m.duplex), (Some(u32::MAX), Some(0xFF)));
}

#[test]
fn a_stats_reply_parses_and_skips_pads() {
    let reply = Request::genl(20, 0, 1, 33, 1)
        .begin(ETHTOOL_A_STATS_GRP)
        .u32(ETHTOOL_A_STATS_GRP_ID, STATS_GROUP_ETH_MAC)
        .begin(ETHTOOL_A_STATS_GRP_STAT)
        .flag(1) // a pad
        .bytes(8, &6088u64.to_ne_bytes()) // LateCollisions
        .bytes(4, &3022u64.to_ne_bytes()) // FrameCheckSequenceErrors
        .end()
        .end()
        .finish();
    let msg = nlwire::messages(&reply).next().unwrap().unwrap();
    let s = parse_stats(msg.genl_attrs().unwrap());
    assert_eq!(s.get(STATS_GROUP_ETH_MAC, 8), Some(6088));
    assert_eq!(s.get(STATS_GROUP_ETH_MAC, 4), Some(3022));
    assert_eq!(s.get(STATS_GROUP_ETH_MAC, 1), None);
}
