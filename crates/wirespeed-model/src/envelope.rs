//! The back-of-the-envelope ceiling of a link: the most payload it can carry per second once
//! every header, pad, gap and acknowledgement has been paid for.
//!
//! Atwood (seed 002) checks every measurement against such a figure; Van Jacobson (seed 004)
//! quotes one: "the theoretical maximum data throughput, after you take into account all the
//! protocol overheads, is 1,104 KB/s" on 10 Mbit/s Ethernet with 1538-byte frames carrying 1460
//! bytes. This model reproduces that figure (to 0.5%) under these assumptions, which the
//! article leaves implicit and which `--explain` repeats:
//!
//! * the ACKs share the wire with the data (a shared, half-duplex 1988 Ethernet), one
//!   minimum-size ACK frame (84 bytes on the wire) per data segment: with 1-to-17-packet
//!   socket buffers the receiver's window updates as the reader drains add to the delayed
//!   ACKs until there is about one ACK per segment;
//! * no TCP options (timestamps came with RFC 1323 in 1992);
//! * a KB is 1024 bytes.
//!
//! 1,250,000 B/s x 1460 / (1538 + 84) = 1,125,154 B/s = 1,098.8 KiB/s (-0.47%). With one ACK
//! per two segments the same sum gives 1,128 KiB/s (+2.2%), and with no ACKs at all
//! 1,159 KiB/s (+5%), so the figure fits only the first set.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::framing::{FrameBytes, IpVersion, JUMBO_MTU_MAX, LinkLayer, Transport};
use crate::units::{BitRate, format_seconds, group_digits, significant};

/// Whether the two directions of a link share the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Duplex {
    /// Each direction has the full rate; ACKs do not slow the data.
    Full,
    /// One medium for both directions (half duplex, a hub, a shared segment): ACK frames take
    /// wire time from the data.
    Half,
}

/// The stack and link to compute a ceiling for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeParams {
    /// Link rate.
    #[serde(rename = "rate_bits_per_second")]
    pub rate: BitRate,
    /// Framing.
    pub link: LinkLayer,
    /// Largest IP packet.
    #[serde(rename = "mtu_bytes")]
    pub mtu: u64,
    /// Network layer.
    pub ip: IpVersion,
    /// Transport layer.
    pub transport: Transport,
    /// Medium sharing between the directions.
    pub duplex: Duplex,
    /// TCP: data segments per ACK (RFC 9293 delayed ACK: 2). Zero leaves ACKs out.
    pub ack_every: u32,
    /// UDP: payload bytes per datagram; `None` is the largest that fits one packet.
    #[serde(rename = "udp_payload_bytes")]
    pub udp_payload: Option<u64>,
    /// Round-trip time, for the bandwidth-delay product.
    #[serde(rename = "rtt_seconds", with = "crate::units::optional_seconds")]
    pub rtt: Option<Duration>,
}

/// Why a set of parameters describes no real link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// The MTU cannot hold the headers, or is outside what the protocol allows.
    #[error(
        "MTU {mtu} is out of range for {what}: use {min} to {max} bytes (for example --mtu 1500)"
    )]
    Mtu {
        /// The MTU given.
        mtu: u64,
        /// Which limit it broke.
        what: &'static str,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// The UDP payload is larger than an IP datagram can carry.
    #[error(
        "UDP payload {payload} is too large: at most {max} bytes fit one IP datagram (for example -l 1472)"
    )]
    UdpPayload {
        /// The payload given.
        payload: u64,
        /// Largest possible.
        max: u64,
    },
    /// IPv4 options must be whole 32-bit words, at most 40 bytes.
    #[error("IPv4 options of {0} bytes are impossible: use a multiple of 4 up to 40")]
    Ipv4Options(u8),
}

/// One frame kind in a cycle of the traffic pattern.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrameShare {
    /// How many of these frames per cycle.
    pub count: u64,
    /// Their bytes.
    pub bytes: FrameBytes,
}

/// The ACK stream of a TCP transfer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AckStream {
    /// Data segments acknowledged by each ACK.
    pub every: u32,
    /// Bytes of one ACK frame.
    pub frame: FrameBytes,
    /// Whether ACKs take wire time from the data (half duplex / shared medium).
    pub shares_medium: bool,
    /// Wire load of the ACKs in the reverse direction, at the data ceiling (bit/s).
    pub wire_bits_per_second: f64,
}

/// Bandwidth-delay figures for a given round-trip time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pipe {
    /// The round-trip time, in seconds.
    pub rtt_seconds: f64,
    /// Payload bytes in flight at the ceiling: the window TCP needs to fill the pipe.
    pub bdp_payload_bytes: f64,
    /// Bytes the wire holds in one round trip at the link rate.
    pub bdp_wire_bytes: f64,
    /// The `-w` (SO_SNDBUF / SO_RCVBUF) request that yields that window on Linux: the kernel
    /// doubles a request and spends about half on bookkeeping, so the request is the window.
    pub socket_buffer_bytes: u64,
    /// What the kernel then grants (reported by getsockopt): twice the request.
    pub socket_buffer_granted_bytes: u64,
}

/// The ceiling and everything on the way to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The inputs.
    pub params: EnvelopeParams,
    /// Payload bytes of one data unit (a TCP segment or a UDP datagram).
    pub payload_bytes: u64,
    /// The data frames of one data unit: one for TCP, one or more (IP fragments) for UDP.
    pub data_frames: Vec<FrameShare>,
    /// The ACKs of TCP, if counted.
    pub acks: Option<AckStream>,
    /// Payload bytes carried per cycle (ACK interval for TCP, datagram for UDP).
    pub cycle_payload_bytes: u64,
    /// Wire bytes of a cycle that hold the data direction's medium.
    pub cycle_wire_bytes: u64,
    /// Payload / wire bytes: in (0, 1].
    pub efficiency: f64,
    /// The ceiling in payload bytes per second.
    pub goodput_bytes_per_second: f64,
    /// The ceiling in payload bits per second.
    pub goodput_bits_per_second: f64,
    /// Data frames per second at the ceiling.
    pub frames_per_second: f64,
    /// Frames per second of back-to-back minimum-size frames.
    pub min_frames_per_second: f64,
    /// Serialization time of one byte.
    pub seconds_per_byte: f64,
    /// Serialization time of one full data frame, including preamble and gap.
    pub seconds_per_frame: f64,
    /// Bandwidth-delay product, if an RTT was given.
    pub pipe: Option<Pipe>,
}

/// One step of the arithmetic, as `--explain` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplainLine {
    /// What the step computes.
    pub label: String,
    /// The arithmetic, with the result.
    pub work: String,
}

impl EnvelopeParams {
    /// The common case: full-duplex Ethernet at `rate`, no VLAN tag, a 1500-byte MTU, IPv4
    /// without options, TCP with timestamps, a delayed ACK every 2 segments (RFC 9293), no
    /// round-trip time. `wirespeed envelope --rate RATE` computes this link.
    pub fn ethernet_tcp(rate: BitRate) -> EnvelopeParams {
        EnvelopeParams {
            rate,
            link: LinkLayer::Ethernet { vlan_tags: 0 },
            mtu: 1500,
            ip: IpVersion::V4_PLAIN,
            transport: Transport::Tcp { timestamps: true },
            duplex: Duplex::Full,
            ack_every: 2,
            udp_payload: None,
            rtt: None,
        }
    }

    /// Bytes on the wire of the smallest frame this link carries: the smallest IP packet (a
    /// bare header) in the smallest frame. On Ethernet the 64-byte minimum frame sets it (84
    /// with preamble and gap); a serial line adds nothing, so the IP header does.
    pub fn min_wire(&self) -> u64 {
        self.link.frame(self.ip.header_bytes()).wire
    }

    /// Largest payload a single transport unit can carry in one IP packet.
    fn max_payload(&self) -> u64 {
        self.mtu - self.ip.header_bytes() - self.transport.header_bytes()
    }

    fn validate(&self) -> Result<(), EnvelopeError> {
        if let IpVersion::V4 { options_bytes } = self.ip
            && (!options_bytes.is_multiple_of(4) || options_bytes > 40)
        {
            return Err(EnvelopeError::Ipv4Options(options_bytes));
        }
        let min = self
            .ip
            .min_mtu()
            .max(self.ip.header_bytes() + self.transport.header_bytes() + 8);
        let max = match self.link {
            LinkLayer::Ethernet { .. } => JUMBO_MTU_MAX,
            LinkLayer::Serial => 65_535,
        };
        if self.mtu < min || self.mtu > max {
            let what = match self.ip {
                IpVersion::V4 { .. } => "IPv4",
                IpVersion::V6 => "IPv6",
            };
            return Err(EnvelopeError::Mtu {
                mtu: self.mtu,
                what,
                min,
                max,
            });
        }
        if let (Transport::Udp, Some(payload)) = (self.transport, self.udp_payload) {
            let max = 65_535
                - 8
                - if self.ip == IpVersion::V6 {
                    0
                } else {
                    self.ip.header_bytes()
                };
            if payload > max {
                return Err(EnvelopeError::UdpPayload { payload, max });
            }
        }
        Ok(())
    }

    /// The IP packets that carry one UDP datagram of `payload` bytes: one, or fragments
    /// (RFC 791 §2.3: every fragment but the last carries a multiple of 8 data bytes).
    fn udp_packets(&self, payload: u64) -> Vec<u64> {
        let header = self.ip.header_bytes();
        let datagram = payload + Transport::Udp.header_bytes();
        if header + datagram <= self.mtu {
            return vec![header + datagram];
        }
        let per_fragment = (self.mtu - header - self.ip.fragment_header_bytes()) / 8 * 8;
        let fragment_header = header + self.ip.fragment_header_bytes();
        let mut packets = Vec::new();
        let mut left = datagram;
        while left > 0 {
            let data = left.min(per_fragment);
            packets.push(fragment_header + data);
            left -= data;
        }
        packets
    }

    /// Computes the ceiling.
    pub fn compute(&self) -> Result<Envelope, EnvelopeError> {
        self.validate()?;
        let rate_bytes = self.rate.bytes_per_second();
        let (payload_bytes, data_frames, acks) = match self.transport {
            Transport::Tcp { .. } => {
                let mss = self.max_payload();
                let frame = self.link.frame(self.mtu);
                let acks = (self.ack_every > 0).then(|| AckStream {
                    every: self.ack_every,
                    frame: self
                        .link
                        .frame(self.ip.header_bytes() + self.transport.header_bytes()),
                    shares_medium: self.duplex == Duplex::Half,
                    wire_bits_per_second: 0.0,
                });
                (
                    mss,
                    vec![FrameShare {
                        count: 1,
                        bytes: frame,
                    }],
                    acks,
                )
            }
            Transport::Udp => {
                let payload = self.udp_payload.unwrap_or_else(|| self.max_payload());
                let mut shares: Vec<FrameShare> = Vec::new();
                for packet in self.udp_packets(payload) {
                    let bytes = self.link.frame(packet);
                    match shares.iter_mut().find(|s| s.bytes == bytes) {
                        Some(share) => share.count += 1,
                        None => shares.push(FrameShare { count: 1, bytes }),
                    }
                }
                (payload, shares, None)
            }
        };
        let units_per_cycle = acks.map_or(1, |a| u64::from(a.every));
        let unit_wire: u64 = data_frames.iter().map(|s| s.count * s.bytes.wire).sum();
        let unit_frames: u64 = data_frames.iter().map(|s| s.count).sum();
        let ack_wire_on_medium = acks.filter(|a| a.shares_medium).map_or(0, |a| a.frame.wire);
        let cycle_payload_bytes = units_per_cycle * payload_bytes;
        let cycle_wire_bytes = units_per_cycle * unit_wire + ack_wire_on_medium;
        let efficiency = cycle_payload_bytes as f64 / cycle_wire_bytes as f64;
        let goodput_bytes_per_second = rate_bytes * efficiency;
        let cycles_per_second = rate_bytes / cycle_wire_bytes as f64;
        let acks = acks.map(|a| AckStream {
            wire_bits_per_second: cycles_per_second * a.frame.wire as f64 * 8.0,
            ..a
        });
        let full_frame = data_frames[0].bytes;
        let pipe = self.rtt.map(|rtt| {
            let rtt_seconds = rtt.as_secs_f64();
            let bdp_payload_bytes = goodput_bytes_per_second * rtt_seconds;
            let socket_buffer_bytes = bdp_payload_bytes.ceil() as u64;
            Pipe {
                rtt_seconds,
                bdp_payload_bytes,
                bdp_wire_bytes: rate_bytes * rtt_seconds,
                socket_buffer_bytes,
                socket_buffer_granted_bytes: socket_buffer_bytes * 2,
            }
        });
        Ok(Envelope {
            params: *self,
            payload_bytes,
            data_frames,
            acks,
            cycle_payload_bytes,
            cycle_wire_bytes,
            efficiency,
            goodput_bytes_per_second,
            goodput_bits_per_second: goodput_bytes_per_second * 8.0,
            frames_per_second: cycles_per_second * (units_per_cycle * unit_frames) as f64,
            min_frames_per_second: rate_bytes / self.min_wire() as f64,
            seconds_per_byte: self.rate.seconds_per_byte(),
            seconds_per_frame: full_frame.wire as f64 * self.rate.seconds_per_byte(),
            pipe,
        })
    }
}

impl Envelope {
    /// The arithmetic, one step a line, in an order a reader can check by hand.
    pub fn explain(&self) -> Vec<ExplainLine> {
        let p = &self.params;
        let mut lines = Vec::new();
        let mut line = |label: &str, work: String| {
            lines.push(ExplainLine {
                label: label.to_string(),
                work,
            });
        };
        let rate = p.rate.bits_per_second();
        line(
            "link rate",
            format!(
                "{} = {} bit/s / 8 = {} bytes/s",
                p.rate,
                group_digits(rate),
                group_f(p.rate.bytes_per_second())
            ),
        );
        let ip_name = match p.ip {
            IpVersion::V4 { options_bytes: 0 } => "IPv4".to_string(),
            IpVersion::V4 { options_bytes } => format!("IPv4 with {options_bytes} option bytes"),
            IpVersion::V6 => "IPv6".to_string(),
        };
        let transport_name = match p.transport {
            Transport::Tcp { timestamps: true } => "TCP with timestamps",
            Transport::Tcp { timestamps: false } => "TCP without options",
            Transport::Udp => "UDP",
        };
        match p.transport {
            Transport::Tcp { .. } => line(
                "payload per segment (MSS)",
                format!(
                    "{} MTU - {} {ip_name} - {} {transport_name} = {} bytes",
                    p.mtu,
                    p.ip.header_bytes(),
                    p.transport.header_bytes(),
                    self.payload_bytes
                ),
            ),
            Transport::Udp => {
                let packets: u64 = self.data_frames.iter().map(|s| s.count).sum();
                let how = if packets == 1 {
                    "one packet".to_string()
                } else {
                    format!("{packets} IP fragments (MTU {})", p.mtu)
                };
                line(
                    "payload per datagram",
                    format!(
                        "{} bytes + {} UDP + {} {ip_name} per packet, in {how}",
                        self.payload_bytes,
                        Transport::Udp.header_bytes(),
                        p.ip.header_bytes()
                    ),
                );
            }
        }
        for share in &self.data_frames {
            line(
                "data frame",
                frame_arithmetic(p.link, &share.bytes, share.count),
            );
        }
        if let Some(ack) = &self.acks {
            let medium = if ack.shares_medium {
                "half duplex: ACKs take wire time from the data"
            } else {
                "full duplex: ACKs use the other direction and cost the data nothing"
            };
            line(
                "ACK frame",
                format!(
                    "one per {} segment(s): {} {ip_name} + {} TCP = {} bytes; {}; {medium}",
                    ack.every,
                    p.ip.header_bytes(),
                    p.transport.header_bytes(),
                    ack.frame.packet,
                    frame_arithmetic(p.link, &ack.frame, 1)
                ),
            );
        }
        let units = self.acks.map_or(1, |a| u64::from(a.every));
        let unit_wire: u64 = self
            .data_frames
            .iter()
            .map(|s| s.count * s.bytes.wire)
            .sum();
        let ack_part = match self.acks {
            Some(a) if a.shares_medium => format!(" + {} ACK", a.frame.wire),
            _ => String::new(),
        };
        line(
            "one cycle",
            format!(
                "{units} x {} payload = {} bytes ride on {units} x {unit_wire}{ack_part} = {} wire bytes",
                self.payload_bytes, self.cycle_payload_bytes, self.cycle_wire_bytes
            ),
        );
        line(
            "efficiency",
            format!(
                "{} / {} = {:.4} ({:.2}%)",
                self.cycle_payload_bytes,
                self.cycle_wire_bytes,
                self.efficiency,
                self.efficiency * 100.0
            ),
        );
        line(
            "goodput ceiling",
            format!(
                "{} bytes/s x {:.4} = {} bytes/s = {} KiB/s = {} Mbit/s",
                group_f(p.rate.bytes_per_second()),
                self.efficiency,
                group_f(self.goodput_bytes_per_second),
                significant(self.goodput_bytes_per_second / 1024.0, 5),
                significant(self.goodput_bits_per_second / 1e6, 5)
            ),
        );
        line(
            "data frames per second",
            format!(
                "{} bytes/s / {} wire bytes per cycle x {} frames per cycle = {} frames/s",
                group_f(p.rate.bytes_per_second()),
                self.cycle_wire_bytes,
                units * self.data_frames.iter().map(|s| s.count).sum::<u64>(),
                significant(self.frames_per_second, 6)
            ),
        );
        line(
            "minimum frames per second",
            format!(
                "{} bytes/s / {} wire bytes = {} frames/s",
                group_f(p.rate.bytes_per_second()),
                p.min_wire(),
                significant(self.min_frames_per_second, 6)
            ),
        );
        line(
            "serialization per byte",
            format!(
                "8 bits / {} bit/s = {}",
                group_digits(rate),
                format_seconds(self.seconds_per_byte)
            ),
        );
        line(
            "serialization per frame",
            format!(
                "{} wire bytes x {} = {}",
                self.data_frames[0].bytes.wire,
                format_seconds(self.seconds_per_byte),
                format_seconds(self.seconds_per_frame)
            ),
        );
        if let Some(pipe) = &self.pipe {
            line(
                "bandwidth-delay product",
                format!(
                    "{} bytes/s x {} RTT = {} payload bytes in flight ({} wire bytes)",
                    group_f(self.goodput_bytes_per_second),
                    format_seconds(pipe.rtt_seconds),
                    group_f(pipe.bdp_payload_bytes),
                    group_f(pipe.bdp_wire_bytes)
                ),
            );
            line(
                "socket buffer to fill it",
                format!(
                    "request -w {} at both ends; Linux doubles the request (granted {}) and spends \
                     about half on bookkeeping, leaving a window of about the BDP",
                    pipe.socket_buffer_bytes, pipe.socket_buffer_granted_bytes
                ),
            );
        }
        if matches!(p.transport, Transport::Tcp { .. })
            && matches!(p.link, LinkLayer::Ethernet { .. })
        {
            line(
                "cross-check (seed 004)",
                "Van Jacobson's 1,104 KB/s on 10 Mbit/s is this sum with --duplex half \
                 --ack-every 1 --no-timestamps and KB = 1024 bytes: 1,250,000 x 1460 / (1538 + 84) \
                 = 1,098.8 KiB/s"
                    .to_string(),
            );
        }
        lines
    }
}

/// `14 header + 1500 packet + 4 FCS = 1518 frame + 8 preamble + 12 gap = 1538 wire bytes`.
fn frame_arithmetic(link: LinkLayer, f: &FrameBytes, count: u64) -> String {
    let times = if count > 1 {
        format!("{count} x ")
    } else {
        String::new()
    };
    match link {
        LinkLayer::Ethernet { vlan_tags } => {
            let tags = if vlan_tags > 0 {
                format!(" + {} 802.1Q", 4 * vlan_tags)
            } else {
                String::new()
            };
            let pad = if f.pad > 0 {
                format!(" + {} pad", f.pad)
            } else {
                String::new()
            };
            format!(
                "{times}(14 header{tags} + {} packet{pad} + 4 FCS = {} frame + 8 preamble + 12 gap = {} wire bytes)",
                f.packet, f.frame, f.wire
            )
        }
        LinkLayer::Serial => format!("{times}{} bytes, serialized as they are", f.wire),
    }
}

fn group_f(value: f64) -> String {
    if value >= 1000.0 {
        group_digits(value.round() as u64)
    } else {
        significant(value, 5)
    }
}
