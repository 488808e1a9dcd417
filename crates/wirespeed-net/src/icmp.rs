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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An ICMPv4 time exceeded from 198.18.0.1, quoting an echo request id 0x1234 seq 7.
    static TIME_EXCEEDED_V4: [u8; 36] = [
        11, 0, 0, 0, 0, 0, 0, 0, // ICMP: time exceeded, unused
        0x45, 0, 0, 64, 0, 0, 0x40, 0, 1, 1, 0, 0, 198, 18, 0, 2, 198, 18, 1,
        2, // quoted IPv4
        8, 0, 0, 0, 0x12, 0x34, 0, 7, // quoted echo request
    ];

    #[test]
    fn echo_request_bytes() {
        let mut buf = Vec::new();
        emit_echo_request(Family::V4, 0x1234, 7, 12, &mut buf);
        assert_eq!(buf.len(), 12);
        assert_eq!(&buf[..2], &[8, 0]);
        assert_eq!(&buf[4..8], &[0x12, 0x34, 0, 7]);
        // A correct checksum makes the sum over the message come out zero.
        assert_eq!(checksum(&buf), 0);
        emit_echo_request(Family::V6, 1, 2, 8, &mut buf);
        assert_eq!(buf, [128, 0, 0, 0, 0, 1, 0, 2]);
    }

    #[test]
    fn time_exceeded_quotes_the_probe() {
        assert_eq!(
            parse(Family::V4, &TIME_EXCEEDED_V4),
            Ok(Message::TimeExceeded {
                ident: 0x1234,
                seq: 7,
                quoted: 28
            })
        );
        let mut unreachable = TIME_EXCEEDED_V4;
        unreachable[0] = 3;
        unreachable[1] = 13;
        assert!(matches!(
            parse(Family::V4, &unreachable),
            Ok(Message::Unreachable {
                code: 13,
                seq: 7,
                ..
            })
        ));
    }

    #[test]
    fn fragmentation_needed_and_packet_too_big_carry_the_mtu() {
        let mut frag = TIME_EXCEEDED_V4;
        frag[0] = 3;
        frag[1] = 4;
        frag[6..8].copy_from_slice(&1280u16.to_be_bytes());
        assert_eq!(
            parse(Family::V4, &frag),
            Ok(Message::TooBig {
                mtu: 1280,
                ident: 0x1234,
                seq: 7
            })
        );
        let mut big = vec![2, 0, 0, 0, 0, 0, 0x05, 0x00];
        big.extend([0x60, 0, 0, 0, 0, 16, 58, 1]);
        big.extend([0; 32]);
        big.extend([128, 0, 0, 0, 0, 5, 0, 6]);
        assert_eq!(
            parse(Family::V6, &big),
            Ok(Message::TooBig {
                mtu: 1280,
                ident: 5,
                seq: 6
            })
        );
    }

    #[test]
    fn echo_reply_and_short_packets() {
        assert_eq!(
            parse(Family::V6, &[129, 0, 0, 0, 0, 9, 1, 0]),
            Ok(Message::EchoReply { ident: 9, seq: 256 })
        );
        assert_eq!(
            parse(Family::V4, &[0, 0, 0]),
            Err(WireError::Truncated { got: 3, need: 8 })
        );
        // A time exceeded whose quote is cut short is "other", not a panic.
        assert_eq!(
            parse(Family::V4, &TIME_EXCEEDED_V4[..20]),
            Ok(Message::Other { kind: 11 })
        );
        assert_eq!(ipv4_header_len(&[0x60]), Err(WireError::NotIpv4));
    }

    /// The fuzz target's committed corpus, replayed: known packets decode as expected and
    /// none panics.
    #[test]
    fn corpus_replays() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/icmp_parse");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let v4 = parse(Family::V4, &bytes);
            let v6 = parse(Family::V6, &bytes);
            let name = path.file_name().unwrap().to_str().unwrap();
            match name {
                "time-exceeded-v4" => {
                    assert!(matches!(v4, Ok(Message::TimeExceeded { seq: 7, .. })))
                }
                "time-exceeded-v6" => {
                    assert!(matches!(v6, Ok(Message::TimeExceeded { seq: 9, .. })))
                }
                "echo-reply-v4" => {
                    assert!(matches!(v4, Ok(Message::EchoReply { ident: 1, seq: 2 })))
                }
                "ipv4-echo-reply-raw" => {
                    let ihl = ipv4_header_len(&bytes).unwrap();
                    assert!(matches!(
                        parse(Family::V4, &bytes[ihl..]),
                        Ok(Message::EchoReply { .. })
                    ));
                }
                _ => {}
            }
            seen += 1;
        }
        assert!(seen >= 6, "corpus at {dir}");
    }

    proptest! {
        #[test]
        fn parsing_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(Family::V4, &bytes);
            let _ = parse(Family::V6, &bytes);
            let _ = ipv4_header_len(&bytes);
            let _ = parse_errqueue_payload(&bytes);
        }

        #[test]
        fn emitted_requests_parse_back(ident in any::<u16>(), seq in any::<u16>(), len in 8usize..1500) {
            for family in [Family::V4, Family::V6] {
                let mut buf = Vec::new();
                emit_echo_request(family, ident, seq, len, &mut buf);
                prop_assert_eq!(parse(family, &buf), Ok(Message::EchoRequest { ident, seq }));
            }
        }
    }
}
