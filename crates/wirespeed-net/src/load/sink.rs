//! The counting sink's book: what it believes of a datagram, and why (issue 13, finding 1).
//!
//! The sink's socket is unconnected, so anyone can send to it; nothing read from a datagram
//! sizes anything or is used before it is checked against what the test announced. The book
//! is sized once, from the announced host count (bounded by [`MAX_HOSTS`]); a datagram counts
//! only if it carries this test's tag, a host of the test, known flags and one of the lengths
//! the deck deals, and comes from the address that host's consent nonce came from
//! ([`super::consent`]). Everything else is counted, as a stray (not of this test) or as
//! foreign (this test's format from an address that is not part of it), and dropped.

use std::net::SocketAddr;

use wirespeed_model::load::udp_payload_bytes;

use super::consent::{NONCE_BYTES, read_nonce};
use super::generator::{CONSENT, IN_WINDOW, read_header_flags};
use super::{LoadTest, SinkCounts};

/// The most hosts one test may announce: bounds the sink's book.
pub const MAX_HOSTS: u32 = 1024;

#[derive(Debug, Clone, Copy)]
struct Sender {
    addr: SocketAddr,
    nonce: [u8; NONCE_BYTES],
}

/// One test's counting sink: its counts and the address of each host of the test.
#[derive(Debug, Clone)]
pub struct SinkBook {
    tag: u64,
    /// UDP payload lengths the deck deals, sorted.
    lengths: Vec<usize>,
    senders: Vec<Option<Sender>>,
    counts: SinkCounts,
}

impl SinkBook {
    /// The book of `test` for a sink of this address family. `test.hosts` must already be
    /// checked (at most [`MAX_HOSTS`]); it is clamped here all the same.
    pub fn new(test: &LoadTest, ipv6: bool) -> SinkBook {
        let hosts = test.hosts.min(MAX_HOSTS) as usize;
        let mut lengths: Vec<usize> = test
            .deck
            .cards
            .iter()
            .map(|&c| udp_payload_bytes(u64::from(c), ipv6))
            .collect();
        lengths.sort_unstable();
        lengths.dedup();
        SinkBook {
            tag: test.tag,
            lengths,
            senders: vec![None; hosts],
            counts: SinkCounts {
                received: vec![0; hosts],
                strays: 0,
                foreign: 0,
            },
        }
    }

    /// Takes in one datagram of `bytes` from `from`.
    pub fn accept(&mut self, bytes: &[u8], from: SocketAddr) {
        let Some((tag, host, flags)) = read_header_flags(bytes) else {
            self.counts.strays += 1;
            return;
        };
        let h = host as usize;
        if tag != self.tag || h >= self.senders.len() {
            self.counts.strays += 1;
            return;
        }
        if flags == CONSENT {
            let Some(nonce) = read_nonce(bytes) else {
                self.counts.strays += 1;
                return;
            };
            match &mut self.senders[h] {
                slot @ None => *slot = Some(Sender { addr: from, nonce }),
                Some(s) if s.addr == from => s.nonce = nonce,
                Some(_) => self.counts.foreign += 1,
            }
            return;
        }
        if flags & !IN_WINDOW != 0 || self.lengths.binary_search(&bytes.len()).is_err() {
            self.counts.strays += 1;
            return;
        }
        if self.senders[h].is_none_or(|s| s.addr != from) {
            self.counts.foreign += 1;
            return;
        }
        if flags & IN_WINDOW != 0 {
            self.counts.received[h] = self.counts.received[h].saturating_add(1);
        }
    }

    /// Admits `addr` as host `host`'s address without a nonce: the agent's own generator
    /// sending to its own sink (the address is the agent's own socket, not read from the wire).
    pub(crate) fn admit(&mut self, host: u32, addr: SocketAddr) {
        if let Some(slot) = self.senders.get_mut(host as usize) {
            *slot = Some(Sender {
                addr,
                nonce: [0; NONCE_BYTES],
            });
        }
    }

    /// The nonce host `host` sent, if one came.
    pub fn nonce_of(&self, host: u32) -> Option<[u8; NONCE_BYTES]> {
        self.senders.get(host as usize)?.map(|s| s.nonce)
    }

    /// What was counted.
    pub fn counts(&self) -> &SinkCounts {
        &self.counts
    }

    /// The counts, the book closed.
    pub fn into_counts(self) -> SinkCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::consent::nonce_datagram;
    use crate::load::generator::write_header;
    use proptest::prelude::*;
    use wirespeed_model::load::{LengthDeck, Schedule};

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
}
