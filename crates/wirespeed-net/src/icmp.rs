//! ICMP and ICMPv6 messages as the probe engine sends and reads them: echo requests out, echo
//! replies and the errors that quote a probe (time exceeded, destination unreachable) in.
//!
//! Field layouts: RFC 792 (ICMP: echo type 8/0, time exceeded 11, unreachable 3; the error
//! quotes the IP header and at least 8 bytes of the datagram) and RFC 4443 (ICMPv6: echo
//! 128/129, time exceeded 3, unreachable 1). Parsing checks every length before it reads, so no
//! accessor can panic on a short or hostile packet.

use std::fmt;

/// ICMP header length (type, code, checksum, identifier, sequence).
pub const HEADER_LEN: usize = 8;

/// Which ICMP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// ICMP over IPv4.
    V4,
    /// ICMPv6.
    V6,
}

impl Family {
    fn echo_request(self) -> u8 {
        match self {
            Family::V4 => 8,
            Family::V6 => 128,
        }
    }
    fn echo_reply(self) -> u8 {
        match self {
            Family::V4 => 0,
            Family::V6 => 129,
        }
    }
    fn time_exceeded(self) -> u8 {
        match self {
            Family::V4 => 11,
            Family::V6 => 3,
        }
    }
    fn unreachable(self) -> u8 {
        match self {
            Family::V4 => 3,
            Family::V6 => 1,
        }
    }

    /// Whether (type, code) says "too big": fragmentation needed (ICMPv4 3/4) or packet too big
    /// (ICMPv6 type 2).
    pub fn is_too_big(self, kind: u8, code: u8) -> bool {
        match self {
            Family::V4 => kind == 3 && code == 4,
            Family::V6 => kind == 2,
        }
    }

    /// Bytes of the IP header this family's packets carry (without options or extensions).
    pub fn ip_header_len(self) -> usize {
        match self {
            Family::V4 => 20,
            Family::V6 => 40,
        }
    }
}

/// A packet that is not a well-formed ICMP message of the kind expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Fewer bytes than the header needs.
    #[error("truncated: {got} bytes, need {need}")]
    Truncated {
        /// Bytes present.
        got: usize,
        /// Bytes needed.
        need: usize,
    },
    /// An IPv4 header with a version or length that is not IPv4.
    #[error("not an IPv4 header")]
    NotIpv4,
}

/// What an ICMP message says about a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// An echo request (our own, looped back to a raw socket, or someone else's).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
    },
    /// The far end answered.
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
    },
    /// A router dropped the probe at TTL 0 and quoted it.
    TimeExceeded {
        /// The quoted probe's identifier.
        ident: u16,
        /// The quoted probe's sequence number.
        seq: u16,
        /// Bytes of the probe quoted (from its IP header on).
        quoted: usize,
    },
    /// A node could not deliver the probe and quoted it.
    Unreachable {
        /// The ICMP code (for example 13 = administratively prohibited on IPv4).
        code: u8,
        /// The quoted probe's identifier.
        ident: u16,
        /// The quoted probe's sequence number.
        seq: u16,
        /// Bytes quoted.
        quoted: usize,
    },
    /// The probe was larger than a link on the way carries (ICMPv4 unreachable code 4,
    /// fragmentation needed, RFC 1191; ICMPv6 packet too big, RFC 4443 §3.2).
    TooBig {
        /// The next-hop MTU the node reported (0 when it did not say).
        mtu: u32,
        /// The quoted probe's identifier.
        ident: u16,
        /// The quoted probe's sequence number.
        seq: u16,
    },
    /// Anything else (router advertisements, neighbour discovery, ...).
    Other {
        /// Its type.
        kind: u8,
    },
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::EchoRequest { .. } => f.write_str("echo request"),
            Message::EchoReply { .. } => f.write_str("echo reply"),
            Message::TimeExceeded { .. } => f.write_str("time exceeded"),
            Message::Unreachable { code, .. } => write!(f, "unreachable (code {code})"),
            Message::TooBig { mtu, .. } => write!(f, "too big (MTU {mtu})"),
            Message::Other { kind } => write!(f, "ICMP type {kind}"),
        }
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The RFC 1071 Internet checksum of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for chunk in data.chunks(2) {
        let word = if chunk.len() == 2 {
            u16::from_be_bytes([chunk[0], chunk[1]])
        } else {
            u16::from_be_bytes([chunk[0], 0])
        };
        sum += u32::from(word);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes an echo request of `total` bytes of ICMP (header plus payload) into `buf`.
///
/// The ICMPv4 checksum is filled in; the ICMPv6 one is left 0 for the kernel, which computes it
/// over the pseudo-header (RFC 4443 §2.3) on both datagram and raw ICMPv6 sockets.
pub fn emit_echo_request(family: Family, ident: u16, seq: u16, total: usize, buf: &mut Vec<u8>) {
    buf.clear();
    buf.resize(total.max(HEADER_LEN), 0);
    buf[0] = family.echo_request();
    buf[4..6].copy_from_slice(&ident.to_be_bytes());
    buf[6..8].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in buf[HEADER_LEN..].iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    if family == Family::V4 {
        let c = checksum(buf);
        buf[2..4].copy_from_slice(&c.to_be_bytes());
    }
}

/// The length of the IPv4 header at the start of `packet` (raw IPv4 sockets deliver it).
pub fn ipv4_header_len(packet: &[u8]) -> Result<usize, WireError> {
    if packet.is_empty() {
        return Err(WireError::Truncated { got: 0, need: 20 });
    }
    if packet[0] >> 4 != 4 {
        return Err(WireError::NotIpv4);
    }
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    if ihl < 20 {
        return Err(WireError::NotIpv4);
    }
    if packet.len() < ihl {
        return Err(WireError::Truncated {
            got: packet.len(),
            need: ihl,
        });
    }
    Ok(ihl)
}

/// Reads the echo header a quoted packet starts with (an error's quote, after its IP header).
fn quoted_echo(family: Family, quote: &[u8]) -> Option<(u16, u16)> {
    let ip = match family {
        Family::V4 => ipv4_header_len(quote).ok()?,
        Family::V6 => {
            // A quoted IPv6 header whose next header is ICMPv6 (58); extension headers are not
            // followed (probes carry none).
            if quote.len() < 40 || quote[0] >> 4 != 6 || quote[6] != 58 {
                return None;
            }
            40
        }
    };
    let icmp = quote.get(ip..ip + HEADER_LEN)?;
    (icmp[0] == family.echo_request()).then(|| (be16(icmp, 4), be16(icmp, 6)))
}

/// Parses an ICMP message (starting at the ICMP header, as datagram and ICMPv6 sockets deliver
/// it; strip an IPv4 header first with [`ipv4_header_len`]).
pub fn parse(family: Family, msg: &[u8]) -> Result<Message, WireError> {
    if msg.len() < HEADER_LEN {
        return Err(WireError::Truncated {
            got: msg.len(),
            need: HEADER_LEN,
        });
    }
    let kind = msg[0];
    let quote = &msg[HEADER_LEN..];
    Ok(if kind == family.echo_reply() {
        Message::EchoReply {
            ident: be16(msg, 4),
            seq: be16(msg, 6),
        }
    } else if kind == family.echo_request() {
        Message::EchoRequest {
            ident: be16(msg, 4),
            seq: be16(msg, 6),
        }
    } else if family.is_too_big(kind, msg[1]) {
        let mtu = match family {
            Family::V4 => u32::from(be16(msg, 6)),
            Family::V6 => u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]),
        };
        match quoted_echo(family, quote) {
            Some((ident, seq)) => Message::TooBig { mtu, ident, seq },
            None => Message::Other { kind },
        }
    } else if kind == family.time_exceeded() || kind == family.unreachable() {
        match quoted_echo(family, quote) {
            Some((ident, seq)) if kind == family.time_exceeded() => Message::TimeExceeded {
                ident,
                seq,
                quoted: quote.len(),
            },
            Some((ident, seq)) => Message::Unreachable {
                code: msg[1],
                ident,
                seq,
                quoted: quote.len(),
            },
            None => Message::Other { kind },
        }
    } else {
        Message::Other { kind }
    })
}

/// Parses the quoted echo header an IP_RECVERR error-queue message carries (the bytes of our
/// probe from its ICMP header on, as the kernel returns them to an ICMP datagram socket).
pub fn parse_errqueue_payload(payload: &[u8]) -> Option<(u16, u16)> {
    (payload.len() >= HEADER_LEN).then(|| (be16(payload, 4), be16(payload, 6)))
}
