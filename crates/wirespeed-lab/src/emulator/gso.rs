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

#[cfg(test)]
mod tests {
    use super::*;

    const SRC4: [u8; 4] = [198, 18, 0, 1];
    const DST4: [u8; 4] = [198, 18, 0, 2];
    const SRC6: [u8; 16] = [0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST6: [u8; 16] = [0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// A super-packet as a stack with TSO hands it to a TAP: Ethernet, IPv4 or IPv6, TCP with
    /// 12 bytes of options (timestamps) or UDP, `payload` bytes of counting payload, the
    /// transport checksum field holding only the pseudo-header sum (as with NEEDS_CSUM).
    fn super_packet(ipv6: bool, tcp: bool, payload: usize, flags: u8) -> Vec<u8> {
        let l3 = 14;
        let ip = if ipv6 { 40 } else { 20 };
        let l4 = l3 + ip;
        let th = if tcp { 32 } else { 8 };
        let mut f = vec![0u8; l4 + th + payload];
        f[12..14].copy_from_slice(&(if ipv6 { 0x86ddu16 } else { 0x0800 }).to_be_bytes());
        let proto = if tcp { 6 } else { 17 };
        if ipv6 {
            f[l3] = 0x60;
            f[l3 + 4..l3 + 6].copy_from_slice(&((th + payload) as u16).to_be_bytes());
            f[l3 + 6] = proto;
            f[l3 + 7] = 64;
            f[l3 + 8..l3 + 24].copy_from_slice(&SRC6);
            f[l3 + 24..l3 + 40].copy_from_slice(&DST6);
        } else {
            f[l3] = 0x45;
            // A TSO super-packet's total length is that of the whole (or 0 above 64 KB).
            f[l3 + 2..l3 + 4].copy_from_slice(&((ip + th + payload) as u16).to_be_bytes());
            f[l3 + 4..l3 + 6].copy_from_slice(&0xfffeu16.to_be_bytes());
            f[l3 + 6] = 0x40;
            f[l3 + 8] = 64;
            f[l3 + 9] = proto;
            f[l3 + 12..l3 + 16].copy_from_slice(&SRC4);
            f[l3 + 16..l3 + 20].copy_from_slice(&DST4);
        }
        f[l4..l4 + 2].copy_from_slice(&40000u16.to_be_bytes());
        f[l4 + 2..l4 + 4].copy_from_slice(&5201u16.to_be_bytes());
        if tcp {
            f[l4 + 4..l4 + 8].copy_from_slice(&0xffff_f000u32.to_be_bytes());
            f[l4 + 8..l4 + 12].copy_from_slice(&77u32.to_be_bytes());
            f[l4 + 12] = 8 << 4;
            f[l4 + 13] = flags;
            f[l4 + 14..l4 + 16].copy_from_slice(&512u16.to_be_bytes());
            f[l4 + 20..l4 + 32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        } else {
            f[l4 + 4..l4 + 6].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        }
        for (k, b) in f[l4 + th..].iter_mut().enumerate() {
            *b = (k % 251) as u8;
        }
        // Garbage where the checksums go: the segmenter must not trust them.
        f[l4 + if tcp { 16 } else { 6 }] = 0xab;
        f
    }

    /// Independent check: the one's complement sum over the pseudo-header and the whole
    /// transport segment (checksum included) is all ones.
    fn transport_ok(seg: &[u8], ipv6: bool, tcp: bool) -> bool {
        let l3 = 14;
        let l4 = l3 + if ipv6 { 40 } else { 20 };
        let mut pseudo = Vec::new();
        if ipv6 {
            pseudo.extend_from_slice(&seg[l3 + 8..l3 + 40]);
            pseudo.extend_from_slice(&((seg.len() - l4) as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, if tcp { 6 } else { 17 }]);
        } else {
            pseudo.extend_from_slice(&seg[l3 + 12..l3 + 20]);
            pseudo.extend_from_slice(&[0, if tcp { 6 } else { 17 }]);
            pseudo.extend_from_slice(&((seg.len() - l4) as u16).to_be_bytes());
        }
        pseudo.extend_from_slice(&seg[l4..]);
        let mut sum: u32 = 0;
        for w in pseudo.chunks(2) {
            sum += u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    fn cut(hdr: &VnetHdr, frame: &[u8]) -> Vec<Vec<u8>> {
        let plan = Plan::new(hdr, frame).unwrap();
        (0..plan.segments())
            .map(|i| {
                let mut out = vec![0u8; plan.header + plan.mss];
                let n = segment(&plan, frame, i, &mut out);
                out.truncate(n);
                out
            })
            .collect()
    }

    #[test]
    fn a_tcp_v4_super_packet_is_cut_into_frames_a_nic_would_send() {
        // 10,000 bytes at MSS 1448: six full segments and one of 1,312; PSH|FIN|CWR set.
        let frame = super_packet(false, true, 10_000, 0x80 | 0x10 | 0x08 | 0x01);
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4 | GSO_ECN,
            hdr_len: 66,
            gso_size: 1448,
            csum_start: 34,
            csum_offset: 16,
        };
        let plan = Plan::new(&hdr, &frame).unwrap();
        assert_eq!((plan.header, plan.segments()), (66, 7));
        let lens: Vec<u64> = plan.segment_lens().collect();
        assert_eq!(lens, [1514, 1514, 1514, 1514, 1514, 1514, 66 + 1312]);
        let segs = cut(&hdr, &frame);
        let mut payload = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            assert_eq!(s.len() as u64, lens[i]);
            // IPv4 total length, id, header checksum by recomputation.
            assert_eq!(u16::from_be_bytes([s[16], s[17]]) as usize, s.len() - 14);
            assert_eq!(
                u16::from_be_bytes([s[18], s[19]]),
                0xfffeu16.wrapping_add(i as u16)
            );
            assert_eq!(fold(sum_words(0, &s[14..34])), 0, "IP checksum of {i}");
            // Sequence numbers advance by the payload, across the 2^32 wrap.
            let seq = u32::from_be_bytes(s[38..42].try_into().unwrap());
            assert_eq!(seq, 0xffff_f000u32.wrapping_add(1448 * i as u32));
            assert_eq!(u32::from_be_bytes(s[42..46].try_into().unwrap()), 77);
            let flags = s[47];
            assert_eq!(flags & 0x10, 0x10, "ACK on every segment");
            assert_eq!(flags & 0x80 != 0, i == 0, "CWR on the first only");
            assert_eq!(flags & 0x09 != 0, i == 6, "PSH/FIN on the last only");
            assert_eq!(flags & 0x09, if i == 6 { 0x09 } else { 0 });
            assert!(transport_ok(s, false, true), "TCP checksum of {i}");
            assert_eq!(s[54..66], frame[54..66], "options copied");
            payload.extend_from_slice(&s[66..]);
        }
        assert_eq!(payload, frame[66..]);
    }

    #[test]
    fn tcp_v6_and_udp_super_packets_are_cut_with_their_own_lengths_and_checksums() {
        for (ipv6, tcp, kind) in [
            (true, true, GSO_TCPV6),
            (false, false, GSO_UDP_L4),
            (true, false, GSO_UDP_L4),
        ] {
            let frame = super_packet(ipv6, tcp, 5_001, 0x18);
            let hdr = VnetHdr {
                gso_type: kind,
                gso_size: 1000,
                ..VnetHdr::default()
            };
            let segs = cut(&hdr, &frame);
            assert_eq!(segs.len(), 6, "{ipv6} {tcp}");
            let header = 14 + if ipv6 { 40 } else { 20 } + if tcp { 32 } else { 8 };
            let mut payload = Vec::new();
            for (i, s) in segs.iter().enumerate() {
                let chunk = if i == 5 { 1 } else { 1000 };
                assert_eq!(s.len(), header + chunk);
                let l4 = if ipv6 { 54 } else { 34 };
                if ipv6 {
                    assert_eq!(u16::from_be_bytes([s[18], s[19]]) as usize, s.len() - l4);
                } else {
                    assert_eq!(fold(sum_words(0, &s[14..34])), 0);
                }
                if !tcp {
                    assert_eq!(
                        u16::from_be_bytes([s[l4 + 4], s[l4 + 5]]) as usize,
                        s.len() - l4
                    );
                }
                assert!(transport_ok(s, ipv6, tcp), "{ipv6} {tcp} segment {i}");
                payload.extend_from_slice(&s[header..]);
            }
            assert_eq!(payload, frame[header..]);
        }
    }

    #[test]
    fn hostile_headers_are_refused() {
        let frame = super_packet(false, true, 3000, 0x10);
        let ok = VnetHdr {
            gso_type: GSO_TCPV4,
            gso_size: 1448,
            ..VnetHdr::default()
        };
        assert!(Plan::new(&ok, &frame).is_ok());
        let zero = VnetHdr { gso_size: 0, ..ok };
        assert_eq!(Plan::new(&zero, &frame), Err(GsoError::Size(0)));
        let tiny = VnetHdr { gso_size: 1, ..ok };
        assert_eq!(Plan::new(&tiny, &frame), Err(GsoError::Size(1)));
        let v6 = VnetHdr {
            gso_type: GSO_TCPV6,
            ..ok
        };
        assert_eq!(Plan::new(&v6, &frame), Err(GsoError::Headers));
        let ufo = VnetHdr { gso_type: 3, ..ok };
        assert_eq!(Plan::new(&ufo, &frame), Err(GsoError::Type(3)));
        for cut in [0, 13, 20, 40, 60] {
            assert_eq!(
                Plan::new(&ok, &frame[..cut]),
                Err(GsoError::Headers),
                "{cut}"
            );
        }
        let mut bad_offset = frame.clone();
        bad_offset[34 + 12] = 0x40;
        assert_eq!(Plan::new(&ok, &bad_offset), Err(GsoError::Headers));
    }

    #[test]
    fn a_partial_checksum_is_completed() {
        // A single TCP frame with NEEDS_CSUM: the field holds the pseudo-header sum.
        let mut frame = super_packet(false, true, 100, 0x18);
        let plan = Plan::new(
            &VnetHdr {
                gso_type: GSO_TCPV4,
                gso_size: 1448,
                ..VnetHdr::default()
            },
            &frame,
        )
        .unwrap();
        let mut pseudo = sum_words(0, &frame[26..34]) + 6 + (frame.len() - 34) as u64;
        pseudo = u64::from(!fold(pseudo));
        frame[50..52].copy_from_slice(&(pseudo as u16).to_be_bytes());
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: 34,
            csum_offset: 16,
            ..VnetHdr::default()
        };
        assert!(complete_checksum(&hdr, &mut frame));
        assert!(transport_ok(&frame, false, true));
        let _ = plan;
        let far = VnetHdr {
            csum_start: 2000,
            ..hdr
        };
        assert!(!complete_checksum(&far, &mut frame));
    }

    #[test]
    fn a_run_of_segments_is_the_super_packet_a_stack_would_have_sent_for_them() {
        // Segments 2..5 of seven: cut again by the kernel (here: by `segment` after completing
        // nothing, since the pseudo sum is recomputed per segment) they are segments 2..5 of
        // the original.
        let frame = super_packet(false, true, 10_000, 0x80 | 0x10 | 0x08 | 0x01);
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4 | GSO_ECN,
            gso_size: 1448,
            ..VnetHdr::default()
        };
        let plan = Plan::new(&hdr, &frame).unwrap();
        let whole = cut(&hdr, &frame);
        for (first, count) in [(2, 3), (0, 2), (5, 2), (0, 7)] {
            let mut out = vec![0u8; plan.header + count * plan.mss];
            let (len, sub) = cut_run(&plan, &frame, first, count, hdr.gso_type, &mut out);
            out.truncate(len);
            assert_eq!(
                (sub.flags, sub.gso_size, sub.csum_start, sub.csum_offset),
                (F_NEEDS_CSUM, 1448, 34, 16)
            );
            // The partial checksum field holds the pseudo-header sum for its own length.
            let mut done = out.clone();
            assert!(complete_checksum(&sub, &mut done));
            if count * 1448 >= 10_000 - first * 1448 || first + count == 7 {
                assert_eq!(done[47] & 0x09, 0x09);
            } else {
                assert_eq!(done[47] & 0x09, 0);
            }
            assert!(transport_ok(&done, false, true), "{first}+{count}");
            assert_eq!(fold(sum_words(0, &out[14..34])), 0);
            assert_eq!(u16::from_be_bytes([out[16], out[17]]) as usize, len - 14);
            let again = cut(&sub, &out);
            assert_eq!(again.len(), count);
            for (k, s) in again.iter().enumerate() {
                assert_eq!(s, &whole[first + k], "{first}+{count}: segment {k}");
            }
        }
        // One segment is a plain frame.
        let mut out = vec![0u8; plan.header + plan.mss];
        let (len, sub) = cut_run(&plan, &frame, 4, 1, hdr.gso_type, &mut out);
        assert_eq!(sub, VnetHdr::default());
        assert_eq!(out[..len], whole[4][..]);
    }

    #[test]
    fn the_vnet_header_round_trips() {
        let h = VnetHdr {
            flags: 1,
            gso_type: GSO_TCPV6 | GSO_ECN,
            hdr_len: 86,
            gso_size: 1428,
            csum_start: 54,
            csum_offset: 16,
        };
        let mut b = [0u8; VNET_HDR_LEN];
        h.write(&mut b);
        assert_eq!(VnetHdr::parse(&b), Some(h));
        assert!(h.is_gso());
        assert!(!VnetHdr::default().is_gso());
        assert_eq!(VnetHdr::parse(&b[..9]), None);
    }
}
