//! Bellovin's router on the emulator: which cost a frame leaving a router pays.
//!
//! Seed 001 (section 2, Table 1) models a router as a fixed plus a per-byte cost, different for
//! packets it forwards (a Cisco MCI board: .525 ms + .00004 ms/byte) and for packets it answers
//! itself (`ciscoping`: .751 ms + .00131 ms/byte). The kernel in the router's namespace does the
//! forwarding and the answering at its own (tiny) cost; the emulator adds the modelled cost on
//! the router's egress. A frame whose IP source is one of the router's own addresses is an
//! answer (echo reply, time exceeded); any other IP frame is forwarded; non-IP frames (ARP) pay
//! nothing. The per-byte cost is charged on the IP packet, as Bellovin's `psize` counts it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use crate::topology::Cost;

/// A read-only view of an Ethernet II frame as a TAP device delivers it (no preamble, no FCS).
#[derive(Debug, Clone, Copy)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

mod field {
    use std::ops::Range;
    pub(super) const ETHERTYPE: Range<usize> = 12..14;
    pub(super) const PAYLOAD: usize = 14;
    pub(super) const IPV4_SOURCE: Range<usize> = 12..16;
    pub(super) const IPV6_SOURCE: Range<usize> = 8..24;
}

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// A view, if the buffer holds at least an Ethernet header.
    pub fn new_checked(buffer: T) -> Option<Self> {
        (buffer.as_ref().len() >= field::PAYLOAD).then_some(EthernetFrame { buffer })
    }

    /// The EtherType.
    pub fn ethertype(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }

    /// The IP source address, if this is an IPv4 or IPv6 packet long enough to carry one.
    pub fn ip_source(&self) -> Option<IpAddr> {
        let p = self.payload();
        match self.ethertype() {
            ETHERTYPE_IPV4 if p.len() >= 20 => {
                let s: [u8; 4] = p[field::IPV4_SOURCE].try_into().ok()?;
                Some(IpAddr::V4(Ipv4Addr::from(s)))
            }
            ETHERTYPE_IPV6 if p.len() >= 40 => {
                let s: [u8; 16] = p[field::IPV6_SOURCE].try_into().ok()?;
                Some(IpAddr::V6(Ipv6Addr::from(s)))
            }
            _ => None,
        }
    }
}

/// The costs a router's egress applies.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RouterEgress {
    /// Cost of a forwarded packet.
    pub forward: Cost,
    /// Cost of a packet the router answers itself.
    pub answer: Cost,
    /// The router's own addresses.
    pub own: Vec<IpAddr>,
}

/// How a frame leaving a router is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// Not IP: free.
    None,
    /// Forwarded.
    Forward(Duration),
    /// Answered by the router.
    Answer(Duration),
}

impl RouterEgress {
    /// The processing a frame pays before it reaches the output queue.
    pub fn charge(&self, frame: &[u8]) -> Charge {
        let Some(view) = EthernetFrame::new_checked(frame) else {
            return Charge::None;
        };
        let Some(source) = view.ip_source() else {
            return Charge::None;
        };
        let bytes = view.payload().len() as u64;
        if self.own.contains(&source) {
            Charge::Answer(self.answer.of(bytes))
        } else {
            Charge::Forward(self.forward.of(bytes))
        }
    }
}

impl Charge {
    /// The time it costs.
    pub fn duration(self) -> Duration {
        match self {
            Charge::None => Duration::ZERO,
            Charge::Forward(d) | Charge::Answer(d) => d,
        }
    }
}
