//! What a packet costs on the wire: every header, trailer, pad and gap of a protocol stack.
//!
//! The numbers are the standards' own. Ethernet (IEEE 802.3 clause 3 and 4): 7 bytes of preamble
//! and a start-frame delimiter (8 in all), a 14-byte header (two addresses and the EtherType),
//! a 4-byte frame check sequence, a minimum frame of 64 bytes from destination address to FCS
//! (shorter payloads are padded), and an inter-frame gap of 96 bit times (12 byte times) that
//! nothing else may use. An 802.1Q tag adds 4 bytes. IPv4 (RFC 791) is 20 bytes plus options in
//! 4-byte words; IPv6 (RFC 8200) is 40. TCP (RFC 9293) is 20 bytes, 32 with the timestamp option
//! (RFC 7323: 10 bytes padded to 12); UDP (RFC 768) is 8.
//!
//! Boggs, Mogul and Kent (seed 000, §3.3) charge each Ethernet packet 24 byte times (gap,
//! preamble and CRC) on top of its header and data; that is the `wire_bytes` of this module.
//! A serial line (DS0, DS1) is modelled by its rate alone: only the packet's own bytes are
//! serialized, as Bellovin (seed 001) counts them.

use serde::{Deserialize, Serialize};

/// Preamble (7) and start-frame delimiter (1).
pub const ETHERNET_PREAMBLE_BYTES: u64 = 8;
/// Destination and source address and EtherType.
pub const ETHERNET_HEADER_BYTES: u64 = 14;
/// Frame check sequence (CRC-32).
pub const ETHERNET_FCS_BYTES: u64 = 4;
/// Inter-frame gap: 96 bit times.
pub const ETHERNET_GAP_BYTES: u64 = 12;
/// Minimum frame, destination address to FCS; shorter payloads are padded up to it.
pub const ETHERNET_MIN_FRAME_BYTES: u64 = 64;
/// Maximum untagged frame for a 1500-byte MTU.
pub const ETHERNET_MAX_FRAME_BYTES: u64 = 1518;
/// One IEEE 802.1Q VLAN tag.
pub const VLAN_TAG_BYTES: u64 = 4;
/// Per-packet overhead outside the frame that Boggs et al. charge: gap + preamble + CRC.
pub const BOGGS_OVERHEAD_BYTES: u64 =
    ETHERNET_GAP_BYTES + ETHERNET_PREAMBLE_BYTES + ETHERNET_FCS_BYTES;
/// The usual Ethernet MTU.
pub const ETHERNET_MTU: u64 = 1500;
/// The largest jumbo MTU this model accepts (common NIC limit).
pub const JUMBO_MTU_MAX: u64 = 9216;

/// The link layer a packet is framed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LinkLayer {
    /// Ethernet II with this many 802.1Q tags (0, 1 or 2 for Q-in-Q).
    Ethernet {
        /// Number of stacked 802.1Q tags.
        vlan_tags: u8,
    },
    /// A serial line modelled by its rate alone: the packet's bytes and nothing else.
    Serial,
}

/// Bytes of a frame at the link layer, given the network-layer packet inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameBytes {
    /// The network-layer packet (IP header and everything after it).
    pub packet: u64,
    /// Padding added to reach the minimum frame.
    pub pad: u64,
    /// The frame as a NIC counts it: header, tags, packet, pad, FCS.
    pub frame: u64,
    /// Everything that occupies the medium: frame plus preamble and inter-frame gap.
    pub wire: u64,
}

impl LinkLayer {
    /// Header and trailer bytes inside the frame (header, tags, FCS).
    pub fn frame_overhead(self) -> u64 {
        match self {
            LinkLayer::Ethernet { vlan_tags } => {
                ETHERNET_HEADER_BYTES + VLAN_TAG_BYTES * u64::from(vlan_tags) + ETHERNET_FCS_BYTES
            }
            LinkLayer::Serial => 0,
        }
    }

    /// Bytes outside the frame that still hold the medium (preamble and gap).
    pub fn medium_overhead(self) -> u64 {
        match self {
            LinkLayer::Ethernet { .. } => ETHERNET_PREAMBLE_BYTES + ETHERNET_GAP_BYTES,
            LinkLayer::Serial => 0,
        }
    }

    /// The smallest frame (padding included).
    pub fn min_frame(self) -> u64 {
        match self {
            // 802.1Q (2011, clause 9) keeps 64 bytes as the minimum: a tagged frame may carry
            // 4 bytes less pad, not 4 bytes more frame.
            LinkLayer::Ethernet { .. } => ETHERNET_MIN_FRAME_BYTES,
            LinkLayer::Serial => 0,
        }
    }

    /// How a network-layer packet of `packet` bytes is framed.
    pub fn frame(self, packet: u64) -> FrameBytes {
        let bare = packet + self.frame_overhead();
        let frame = bare.max(self.min_frame());
        FrameBytes {
            packet,
            pad: frame - bare,
            frame,
            wire: frame + self.medium_overhead(),
        }
    }

    /// Bytes on the wire of the smallest possible frame (84 on Ethernet: 64 + 8 + 12).
    pub fn min_wire(self) -> u64 {
        self.frame(0).wire.max(1)
    }
}

/// The network layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "version")]
pub enum IpVersion {
    /// IPv4 with this many bytes of options (a multiple of 4, at most 40).
    V4 {
        /// Option bytes after the 20-byte fixed header.
        options_bytes: u8,
    },
    /// IPv6 without extension headers.
    V6,
}

impl IpVersion {
    /// Plain IPv4.
    pub const V4_PLAIN: IpVersion = IpVersion::V4 { options_bytes: 0 };

    /// Header bytes.
    pub fn header_bytes(self) -> u64 {
        match self {
            IpVersion::V4 { options_bytes } => 20 + u64::from(options_bytes),
            IpVersion::V6 => 40,
        }
    }

    /// The smallest MTU the protocol allows (RFC 791: 68; RFC 8200: 1280).
    pub fn min_mtu(self) -> u64 {
        match self {
            IpVersion::V4 { .. } => 68,
            IpVersion::V6 => 1280,
        }
    }

    /// Bytes of a fragment header on top of the base header (IPv6 carries one: RFC 8200 §4.5).
    pub fn fragment_header_bytes(self) -> u64 {
        match self {
            IpVersion::V4 { .. } => 0,
            IpVersion::V6 => 8,
        }
    }
}

/// The transport layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "protocol")]
pub enum Transport {
    /// TCP, with or without the RFC 7323 timestamp option.
    Tcp {
        /// Whether every segment carries the 12-byte timestamp option (Linux default: yes).
        timestamps: bool,
    },
    /// UDP.
    Udp,
}

impl Transport {
    /// Header bytes of a data segment or datagram.
    pub fn header_bytes(self) -> u64 {
        match self {
            Transport::Tcp { timestamps } => 20 + if timestamps { 12 } else { 0 },
            Transport::Udp => 8,
        }
    }
}

/// Bits that Boggs, Mogul and Kent (seed 000, §3.3) charge for one packet of `packet_len`
/// bytes (header and data, CRC excluded): the packet plus 24 byte times of gap, preamble and
/// CRC. With this charge, back-to-back packets add up to exactly the link rate.
pub fn boggs_wire_bits(packet_len: u64) -> u64 {
    (packet_len + BOGGS_OVERHEAD_BYTES) * 8
}

/// The most packets per second of `packet_len` bytes (Boggs' convention) a link can carry.
pub fn boggs_packets_per_second(rate: crate::units::BitRate, packet_len: u64) -> f64 {
    rate.bps() / boggs_wire_bits(packet_len) as f64
}
