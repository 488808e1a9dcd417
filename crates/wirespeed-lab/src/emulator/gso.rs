//! Super-packets: what one TAP read with `IFF_VNET_HDR` carries, and how it is cut back into
//! the Ethernet frames it stands for.
//!
//! With offloads on (`TUNSETOFFLOAD`: checksum, TSO4/TSO6, USO), a namespace's stack hands its
//! TAP device TCP (or UDP) packets of up to 64 KB, each preceded by a `struct virtio_net_hdr`
//! (include/uapi/linux/virtio_net.h) that says how a NIC would cut it: `gso_type` (TCPv4,
//! TCPv6, UDP_L4), `gso_size` (the payload bytes per segment: the MSS), `hdr_len`, and, with
//! `VIRTIO_NET_HDR_F_NEEDS_CSUM`, where the transport checksum is to be completed
//! (`csum_start`, `csum_offset`; the field holds only the pseudo-header sum). The emulator
//! charges the wire for every segment ([`Plan::segment_lens`]) exactly as it charges a frame,
//! and either writes the super-packet whole into the far TAP (whose stack accepts it as a NIC's
//! GRO would deliver it) or, where one of its segments was dropped or lost, cuts it here into
//! real frames ([`segment`]) as the kernel's `tcp_gso_segment` / `__udp_gso_segment` would:
//! the same headers on every segment, IPv4 total length and a consecutive IP id, IPv6 payload
//! length, TCP sequence numbers advancing by the payload, FIN and PSH only on the last
//! segment, CWR only on the first, and complete checksums (RFC 1071; RFC 793 and RFC 768
//! pseudo-headers; RFC 8200 section 8.1 for IPv6).
//!
//! Pure: no I/O, everything from the wire checked before it is used (a header that does not
//! parse, a `gso_size` of 0, more than [`MAX_SEGMENTS`] segments are refused with a
//! [`GsoError`]).

use thiserror::Error;

/// Bytes of `struct virtio_net_hdr` (without `num_buffers`): the TAP's default
/// `TUNSETVNETHDRSZ`.
pub const VNET_HDR_LEN: usize = 10;
/// `flags`: the transport checksum must be completed from `csum_start`.
pub const F_NEEDS_CSUM: u8 = 1;
/// `gso_type`: not a super-packet.
pub const GSO_NONE: u8 = 0;
/// `gso_type`: TCP over IPv4.
pub const GSO_TCPV4: u8 = 1;
/// `gso_type`: TCP over IPv6.
pub const GSO_TCPV6: u8 = 4;
/// `gso_type`: UDP segmentation offload (USO), IPv4 or IPv6.
pub const GSO_UDP_L4: u8 = 5;
/// `gso_type` bit: the sender set ECN's CWR on this super-packet (only the first segment
/// carries it).
pub const GSO_ECN: u8 = 0x80;
/// The most segments one super-packet may stand for: 64 KB of payload at the smallest MSS a
/// lab link allows would be more than this, and no stack sends that; refused as malformed.
pub const MAX_SEGMENTS: u64 = 1024;

/// `struct virtio_net_hdr`, in the host's byte order (a TAP without `TUNSETVNETLE`/`BE`
/// speaks the legacy native-endian format).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VnetHdr {
    /// `F_NEEDS_CSUM` and friends.
    pub flags: u8,
    /// `GSO_*`, with `GSO_ECN` possibly or-ed in.
    pub gso_type: u8,
    /// Length of the headers (a hint: [`Plan`] parses its own).
    pub hdr_len: u16,
    /// Payload bytes per segment.
    pub gso_size: u16,
    /// Where the checksummed region starts (from the Ethernet header).
    pub csum_start: u16,
    /// Where the checksum field is, from `csum_start`.
    pub csum_offset: u16,
}

impl VnetHdr {
    /// The header at the start of `buf`, if it is long enough.
    pub fn parse(buf: &[u8]) -> Option<VnetHdr> {
        let b = buf.get(..VNET_HDR_LEN)?;
        let u = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        Some(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        })
    }

    /// Writes the header into the first [`VNET_HDR_LEN`] bytes of `buf`.
    pub fn write(&self, buf: &mut [u8]) {
        buf[0] = self.flags;
        buf[1] = self.gso_type;
        buf[2..4].copy_from_slice(&self.hdr_len.to_ne_bytes());
        buf[4..6].copy_from_slice(&self.gso_size.to_ne_bytes());
        buf[6..8].copy_from_slice(&self.csum_start.to_ne_bytes());
        buf[8..10].copy_from_slice(&self.csum_offset.to_ne_bytes());
    }

    /// True if this header describes a super-packet to be cut into segments.
    pub fn is_gso(&self) -> bool {
        self.gso_type & !GSO_ECN != GSO_NONE
    }
}

/// Why a super-packet cannot be cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum GsoError {
    /// Its headers are not Ethernet + IPv4/IPv6 (no extension headers) + TCP/UDP, or are
    /// truncated.
    #[error("super-packet headers do not parse (Ethernet, IPv4/IPv6, TCP/UDP expected)")]
    Headers,
    /// Its `gso_type` is not one this emulator cuts (legacy UFO, SCTP, ...).
    #[error("super-packet gso_type {0} is not supported")]
    Type(u8),
    /// `gso_size` is 0, or the super-packet would stand for more than [`MAX_SEGMENTS`].
    #[error("super-packet gso_size {0} is out of range")]
    Size(u16),
}

/// Where the headers of a super-packet are, and how it is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Offset of the IP header (14, or 18 behind one 802.1Q tag).
    pub l3: usize,
    /// Offset of the TCP/UDP header.
    pub l4: usize,
    /// Bytes of all headers (Ethernet, IP, TCP with options or UDP): each segment's headers.
    pub header: usize,
    /// True for IPv6.
    pub ipv6: bool,
    /// True for TCP, false for UDP.
    pub tcp: bool,
    /// Payload bytes per segment.
    pub mss: usize,
    /// Payload bytes in all.
    pub payload: usize,
    /// Whether the sender set CWR (ECN): kept on the first segment only.
    pub ecn: bool,
}

impl Plan {
    /// Parses the super-packet `frame` (Ethernet frame, without the vnet header) that `hdr`
    /// describes.
    pub fn new(hdr: &VnetHdr, frame: &[u8]) -> Result<Plan, GsoError> {
        let kind = hdr.gso_type & !GSO_ECN;
        let want_tcp = match kind {
            GSO_TCPV4 | GSO_TCPV6 => true,
            GSO_UDP_L4 => false,
            other => return Err(GsoError::Type(other)),
        };
        let be = |i: usize| -> Result<u16, GsoError> {
            frame
                .get(i..i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .ok_or(GsoError::Headers)
        };
        let mut l3 = 14;
        let mut ethertype = be(12)?;
        if ethertype == 0x8100 {
            l3 = 18;
            ethertype = be(16)?;
        }
        let (ipv6, l4, proto) = match ethertype {
            0x0800 => {
                let vihl = *frame.get(l3).ok_or(GsoError::Headers)?;
                let ihl = usize::from(vihl & 0x0f) * 4;
                if vihl >> 4 != 4 || ihl < 20 {
                    return Err(GsoError::Headers);
                }
                (
                    false,
                    l3 + ihl,
                    *frame.get(l3 + 9).ok_or(GsoError::Headers)?,
                )
            }
            0x86dd => (true, l3 + 40, *frame.get(l3 + 6).ok_or(GsoError::Headers)?),
            _ => return Err(GsoError::Headers),
        };
        let tcp = match proto {
            6 => true,
            17 => false,
            _ => return Err(GsoError::Headers),
        };
        if tcp != want_tcp || (kind == GSO_TCPV4 && ipv6) || (kind == GSO_TCPV6 && !ipv6) {
            return Err(GsoError::Headers);
        }
        let header = if tcp {
            let offset = *frame.get(l4 + 12).ok_or(GsoError::Headers)?;
            let len = usize::from(offset >> 4) * 4;
            if len < 20 {
                return Err(GsoError::Headers);
            }
            l4 + len
        } else {
            l4 + 8
        };
        if frame.len() < header {
            return Err(GsoError::Headers);
        }
        let mss = usize::from(hdr.gso_size);
        let payload = frame.len() - header;
        if mss == 0 || payload.div_ceil(mss) as u64 > MAX_SEGMENTS {
            return Err(GsoError::Size(hdr.gso_size));
        }
        Ok(Plan {
            l3,
            l4,
            header,
            ipv6,
            tcp,
            mss,
            payload,
            ecn: hdr.gso_type & GSO_ECN != 0,
        })
    }

    /// How many segments (frames) the super-packet stands for (at least one).
    pub fn segments(&self) -> usize {
        self.payload.div_ceil(self.mss).max(1)
    }

    /// The TAP length of each segment (headers + its share of the payload), in order: what
    /// the wire is charged for, one frame each.
    pub fn segment_lens(&self) -> impl Iterator<Item = u64> + '_ {
        let n = self.segments();
        (0..n).map(move |i| (self.header + self.chunk(i)) as u64)
    }

    /// Payload bytes of segment `i`.
    fn chunk(&self, i: usize) -> usize {
        self.mss.min(self.payload.saturating_sub(i * self.mss))
    }
}

/// RFC 1071's sum of `data` (as big-endian 16-bit words, an odd last byte padded) added to
/// `sum`, not folded.
pub fn sum_words(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for w in &mut chunks {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// The one's complement of the folded sum: the value a checksum field takes.
pub fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The transport checksum of `segment` (a whole Ethernet frame with `plan`'s headers) over its
/// pseudo-header, with the checksum field taken as zero.
fn transport_checksum(plan: &Plan, segment: &[u8]) -> u16 {
    let l4_len = segment.len() - plan.l4;
    let proto: u64 = if plan.tcp { 6 } else { 17 };
    let mut sum = if plan.ipv6 {
        sum_words(0, &segment[plan.l3 + 8..plan.l3 + 40])
    } else {
        sum_words(0, &segment[plan.l3 + 12..plan.l3 + 20])
    };
    sum += proto + l4_len as u64;
    let field = plan.l4 + if plan.tcp { 16 } else { 6 };
    sum = sum_words(sum, &segment[plan.l4..field]);
    sum = sum_words(sum, &segment[field + 2..]);
    let c = fold(sum);
    // UDP sends a computed 0 as all ones (RFC 768); TCP has no such rule but 0 and 0xffff are
    // the same sum.
    if !plan.tcp && c == 0 { 0xffff } else { c }
}

fn set16(out: &mut [u8], at: usize, v: u16) {
    out[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes segments `first..first + count` of the super-packet `frame` into `out` with the
/// headers a stack would give them as one packet: IPv4 total length, the IP id of the first
/// segment and a complete IPv4 header checksum, IPv6 payload length, the first segment's TCP
/// sequence number, FIN and PSH only if the last segment is among them, CWR only if the first
/// is, the UDP length. Returns the length written and the offset of the transport checksum
/// field, which is left for the caller (complete for a frame, pseudo-header for GSO).
fn write_segments(
    plan: &Plan,
    frame: &[u8],
    first: usize,
    count: usize,
    out: &mut [u8],
) -> (usize, usize) {
    let n = plan.segments();
    let start = plan.header + first * plan.mss;
    let end = (plan.header + (first + count) * plan.mss).min(frame.len());
    let len = plan.header + (end - start);
    out[..plan.header].copy_from_slice(&frame[..plan.header]);
    out[plan.header..len].copy_from_slice(&frame[start..end]);
    let l4_len = len - plan.l4;
    if plan.ipv6 {
        set16(out, plan.l3 + 4, l4_len as u16);
    } else {
        set16(out, plan.l3 + 2, (len - plan.l3) as u16);
        let id = u16::from_be_bytes([frame[plan.l3 + 4], frame[plan.l3 + 5]]);
        set16(out, plan.l3 + 4, id.wrapping_add(first as u16));
        set16(out, plan.l3 + 10, 0);
        let c = fold(sum_words(0, &out[plan.l3..plan.l4]));
        set16(out, plan.l3 + 10, c);
    }
    let field = if plan.tcp {
        const FIN: u8 = 0x01;
        const PSH: u8 = 0x08;
        const CWR: u8 = 0x80;
        let seq = u32::from_be_bytes(frame[plan.l4 + 4..plan.l4 + 8].try_into().expect("4 bytes"));
        let seq = seq.wrapping_add((first * plan.mss) as u32);
        out[plan.l4 + 4..plan.l4 + 8].copy_from_slice(&seq.to_be_bytes());
        if first + count < n {
            out[plan.l4 + 13] &= !(FIN | PSH);
        }
        if first != 0 {
            out[plan.l4 + 13] &= !CWR;
        }
        plan.l4 + 16
    } else {
        set16(out, plan.l4 + 4, l4_len as u16);
        plan.l4 + 6
    };
    (len, field)
}

/// Writes segment `i` of the super-packet `frame` (cut by `plan`) into `out`, and returns its
/// length; `out` must hold the segment (`plan.header + plan.mss` bytes suffice). Every header
/// field a segment changes is set and every checksum is complete, so the segment is a frame
/// as a NIC without offloads would have sent it.
pub fn segment(plan: &Plan, frame: &[u8], i: usize, out: &mut [u8]) -> usize {
    let (len, field) = write_segments(plan, frame, i, 1, out);
    let c = transport_checksum(plan, &out[..len]);
    set16(out, field, c);
    len
}

/// Writes segments `first..first + count` of the super-packet `frame` (cut by `plan`) into
/// `out` as one smaller super-packet, and returns its length and the vnet header to write it
/// with; a single segment is a plain frame ([`segment`], complete checksums, no GSO). The
/// smaller super-packet has the headers a stack with TSO would have given it (see
/// `write_segments`), and in the transport checksum field the pseudo-header sum (the receiving
/// stack takes it as `CHECKSUM_PARTIAL`, as from a NIC; a router segmenting it again adjusts
/// that sum, as `tcp_gso_segment` does). `out` must hold `plan.header + count * plan.mss`.
pub fn cut_run(
    plan: &Plan,
    frame: &[u8],
    first: usize,
    count: usize,
    gso_type: u8,
    out: &mut [u8],
) -> (usize, VnetHdr) {
    if count <= 1 {
        return (segment(plan, frame, first, out), VnetHdr::default());
    }
    let (len, field) = write_segments(plan, frame, first, count, out);
    let l4_len = len - plan.l4;
    let pseudo = if plan.ipv6 {
        sum_words(0, &out[plan.l3 + 8..plan.l3 + 40])
    } else {
        sum_words(0, &out[plan.l3 + 12..plan.l3 + 20])
    } + if plan.tcp { 6 } else { 17 }
        + l4_len as u64;
    set16(out, field, !fold(pseudo));
    let hdr = VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type,
        hdr_len: plan.header as u16,
        gso_size: plan.mss as u16,
        csum_start: plan.l4 as u16,
        csum_offset: (field - plan.l4) as u16,
    };
    (len, hdr)
}

/// Completes the partial checksum of a frame that is not a super-packet but carries
/// `F_NEEDS_CSUM` (checksum offload): the sum from `csum_start` to the end, added to the
/// pseudo-header sum the field already holds, is written at `csum_start + csum_offset`. For a
/// frame that must leave without its vnet header. False if the offsets do not fit the frame.
pub fn complete_checksum(hdr: &VnetHdr, frame: &mut [u8]) -> bool {
    let start = usize::from(hdr.csum_start);
    let at = start + usize::from(hdr.csum_offset);
    if hdr.flags & F_NEEDS_CSUM == 0 {
        return true;
    }
    if start > frame.len() || at + 2 > frame.len() {
        return false;
    }
    let c = fold(sum_words(0, &frame[start..]));
    frame[at..at + 2].copy_from_slice(&c.to_be_bytes());
    true
}
