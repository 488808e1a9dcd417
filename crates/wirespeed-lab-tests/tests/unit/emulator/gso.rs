use wirespeed_lab::emulator::gso::*;

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
