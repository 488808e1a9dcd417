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
