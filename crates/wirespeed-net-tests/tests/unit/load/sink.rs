use proptest::prelude::*;
use std::net::SocketAddr;
use wirespeed_model::load::udp_payload_bytes;
use wirespeed_model::load::{LengthDeck, Schedule};
use wirespeed_net::load::LoadTest;
use wirespeed_net::load::consent::NONCE_BYTES;
use wirespeed_net::load::consent::nonce_datagram;
use wirespeed_net::load::generator::IN_WINDOW;
use wirespeed_net::load::generator::write_header;
use wirespeed_net::load::sink::*;

fn test(hosts: u32) -> LoadTest {
    LoadTest {
        tag: 42,
        host: 0,
        hosts,
        schedule: Schedule::SEED,
        deck: LengthDeck::from_counts(&[(64, 1), (1536, 1)]).unwrap(),
        rate_bits_per_second: None,
        count_sink: true,
        seed: 1,
        raw: None,
        tos: None,
    }
}

fn datagram(tag: u64, host: u32, flags: u32, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len];
    write_header(&mut d, tag, host, flags);
    d
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[test]
fn host_0xffffffff_sizes_nothing_and_is_a_stray() {
    // Finding 1 of issue 13: this datagram once asked the sink for 32 GiB of counters.
    let mut book = SinkBook::new(&test(3), false);
    let len = udp_payload_bytes(64, false);
    book.accept(&datagram(42, u32::MAX, IN_WINDOW, len), addr(9));
    book.accept(&datagram(42, 3, IN_WINDOW, len), addr(9));
    book.accept(&nonce_datagram(42, u32::MAX, &[1; NONCE_BYTES]), addr(9));
    let c = book.into_counts();
    assert_eq!(c.received, vec![0, 0, 0], "sized by the announcement only");
    assert_eq!(c.strays, 3);
    assert_eq!(c.foreign, 0);
}

#[test]
fn only_the_consented_address_counts_with_announced_lengths_and_flags() {
    let mut book = SinkBook::new(&test(2), false);
    let short = udp_payload_bytes(64, false);
    let long = udp_payload_bytes(1536, false);
    // Before its nonce, host 1's packets are foreign.
    book.accept(&datagram(42, 1, IN_WINDOW, short), addr(5));
    assert_eq!(book.counts().foreign, 1);
    book.accept(&nonce_datagram(42, 1, &[3; NONCE_BYTES]), addr(5));
    assert_eq!(book.nonce_of(1), Some([3; NONCE_BYTES]));
    assert_eq!(book.nonce_of(0), None);
    assert_eq!(book.nonce_of(u32::MAX), None);
    // Someone else's nonce for host 1 neither replaces it nor counts.
    book.accept(&nonce_datagram(42, 1, &[4; NONCE_BYTES]), addr(6));
    assert_eq!(book.nonce_of(1), Some([3; NONCE_BYTES]));
    book.accept(&datagram(42, 1, IN_WINDOW, short), addr(5));
    book.accept(&datagram(42, 1, IN_WINDOW, long), addr(5));
    book.accept(&datagram(42, 1, 0, long), addr(5));
    book.accept(&datagram(42, 1, IN_WINDOW, long), addr(6));
    book.accept(&datagram(42, 1, IN_WINDOW, long - 1), addr(5));
    book.accept(&datagram(42, 1, IN_WINDOW | 8, long), addr(5));
    book.accept(&datagram(41, 1, IN_WINDOW, long), addr(5));
    book.accept(&[0u8; 15], addr(5));
    let c = book.into_counts();
    assert_eq!(c.received, vec![0, 2]);
    assert_eq!(c.foreign, 3);
    assert_eq!(c.strays, 4);
}

proptest! {
    #[test]
    fn any_datagram_leaves_the_book_its_announced_size(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        host in any::<u32>(),
        flags in any::<u32>(),
        hosts in 0u32..5000,
    ) {
        let mut book = SinkBook::new(&test(hosts), true);
        let mut d = bytes.clone();
        if d.len() >= 16 {
            write_header(&mut d, 42, host, flags);
        }
        book.accept(&d, addr(1));
        book.accept(&bytes, addr(2));
        let c = book.into_counts();
        prop_assert_eq!(c.received.len(), hosts.min(MAX_HOSTS) as usize);
        prop_assert!(c.received.iter().sum::<u64>() + c.strays + c.foreign <= 2);
    }
}
