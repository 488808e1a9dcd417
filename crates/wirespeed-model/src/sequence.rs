//! Counting what happened to numbered datagrams: loss, duplicates, reordering, and the RFC 3550
//! interarrival jitter estimator.
//!
//! A UDP throughput test numbers its datagrams; the receiver sees them in arrival order and must
//! tell a datagram that is late (reordered) from one that is a copy (duplicate) without keeping
//! every number it ever saw. [`SequenceTracker`] keeps a sliding bitmap of the last
//! [`SequenceTracker::WINDOW`] numbers behind the highest seen, which is exact for reordering
//! shallower than that and constant in memory and time per datagram.

/// Loss, duplicate and reordering counts over a stream of sequence numbers starting at 0.
#[derive(Debug, Clone)]
pub struct SequenceTracker {
    seen: [u64; SequenceTracker::WINDOW as usize / 64],
    highest: Option<u64>,
    unique: u64,
    duplicates: u64,
    out_of_order: u64,
}

impl Default for SequenceTracker {
    fn default() -> Self {
        SequenceTracker::new()
    }
}

impl SequenceTracker {
    /// How far behind the highest number a datagram can arrive and still be told apart from a
    /// duplicate.
    pub const WINDOW: u64 = 4096;

    /// A tracker that has seen nothing.
    pub fn new() -> SequenceTracker {
        SequenceTracker {
            seen: [0; Self::WINDOW as usize / 64],
            highest: None,
            unique: 0,
            duplicates: 0,
            out_of_order: 0,
        }
    }

    fn bit(seq: u64) -> (usize, u64) {
        let slot = seq % Self::WINDOW;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    fn clear(&mut self, seq: u64) {
        let (word, mask) = Self::bit(seq);
        self.seen[word] &= !mask;
    }

    /// Sets the bit for `seq`; returns whether it was already set.
    fn mark(&mut self, seq: u64) -> bool {
        let (word, mask) = Self::bit(seq);
        let was = self.seen[word] & mask != 0;
        self.seen[word] |= mask;
        was
    }

    /// Records one arrival.
    pub fn record(&mut self, seq: u64) {
        match self.highest {
            None => {
                self.mark(seq);
                self.highest = Some(seq);
                self.unique += 1;
            }
            Some(h) if seq > h => {
                if seq - h >= Self::WINDOW {
                    self.seen = [0; Self::WINDOW as usize / 64];
                } else {
                    for s in h + 1..seq {
                        self.clear(s);
                    }
                }
                self.mark(seq);
                self.highest = Some(seq);
                self.unique += 1;
            }
            Some(h) if h - seq < Self::WINDOW => {
                if self.mark(seq) {
                    self.duplicates += 1;
                } else {
                    self.unique += 1;
                    self.out_of_order += 1;
                }
            }
            Some(_) => {
                // Older than the window: late, and counted once (a copy this old is not told
                // apart from a late original).
                self.unique += 1;
                self.out_of_order += 1;
            }
        }
    }

    /// Distinct datagrams received.
    pub fn unique(&self) -> u64 {
        self.unique
    }

    /// Datagrams received more than once.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Datagrams that arrived after a higher-numbered one.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// The highest number seen.
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// Lost datagrams: `sent - unique` when the sender's count is known, else the gaps below
    /// the highest number seen (which cannot count datagrams lost after the last arrival).
    pub fn lost(&self, sent: Option<u64>) -> u64 {
        let expected = sent.unwrap_or(self.highest.map_or(0, |h| h + 1));
        expected.saturating_sub(self.unique)
    }
}

/// The interarrival jitter of RFC 3550 section 6.4.1 (algorithm in appendix A.8): the mean
/// deviation of the difference in transit time between consecutive arrivals, smoothed with gain
/// 1/16. Transit times may carry any constant clock offset between sender and receiver; it
/// cancels in the differences.
#[derive(Debug, Clone, Copy, Default)]
pub struct Jitter {
    last_transit: Option<f64>,
    jitter: f64,
}

impl Jitter {
    /// Records a datagram whose transit time (receive time minus send time) was `transit`
    /// seconds.
    pub fn record(&mut self, transit: f64) {
        if let Some(last) = self.last_transit {
            let d = (transit - last).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    /// The current estimate, in seconds.
    pub fn seconds(&self) -> f64 {
        self.jitter
    }
}
