use wirespeed_model::sequence::Jitter;
use wirespeed_net::udp::*;

#[test]
fn header_round_trips() {
    let mut d = [0u8; 30];
    write_header(&mut d, 7, 8, 9);
    assert_eq!(read_header(&d), Some((7, 8, 9)));
    assert_eq!(read_header(&d[..23]), None);
}

/// A coalesced (GRO) buffer of `segment`-byte datagrams with these (tag, seq, sent) headers;
/// the last one `last` bytes long.
fn coalesced(segment: usize, last: usize, headers: &[(u64, u64, u64)]) -> Vec<u8> {
    let mut buf = Vec::new();
    for (i, &(tag, seq, sent)) in headers.iter().enumerate() {
        let mut d = vec![
            0u8;
            if i + 1 == headers.len() {
                last
            } else {
                segment
            }
        ];
        write_header(&mut d, tag, seq, sent);
        buf.extend_from_slice(&d);
    }
    buf
}

#[test]
fn a_coalesced_buffer_is_counted_per_datagram() {
    let mut t = Tally::new(7);
    // Datagrams 0 and 1 alone, then one GRO buffer with 3, 2 (late), 2 again, a foreign
    // tag, and a short 5; 4 never arrives.
    t.buffer(&coalesced(64, 64, &[(7, 0, 1_000)]), None, 11_000, true);
    t.buffer(&coalesced(64, 64, &[(7, 1, 2_000)]), Some(64), 12_000, true);
    let gro = coalesced(
        64,
        40,
        &[
            (7, 3, 3_000),
            (7, 2, 2_500),
            (7, 2, 2_500),
            (9, 4, 0),
            (7, 5, 4_000),
        ],
    );
    t.buffer(&gro, Some(64), 20_000, true);
    let r = t.report();
    assert_eq!(r.datagrams, 5, "{r:?}");
    assert_eq!(r.lost, Some(1));
    assert_eq!(r.duplicates, Some(1));
    assert_eq!(
        r.out_of_order,
        Some(1),
        "2 after 3 (its copy is a duplicate)"
    );
    assert_eq!(
        r.coalesced_datagrams,
        Some(4),
        "the foreign datagram is not counted"
    );
    assert_eq!(t.bytes, 64 * 5 + 40);
    assert!(r.clock.unwrap().starts_with("kernel"));
    // RFC 3550 over the per-datagram transits (10, 10, 17, 17.5, 17.5, 16 us), in order.
    let mut j = Jitter::default();
    for transit in [10_000.0, 10_000.0, 17_000.0, 17_500.0, 17_500.0, 16_000.0] {
        j.record(transit / 1e9);
    }
    assert_eq!(r.jitter_seconds, Some(j.seconds()));
}
