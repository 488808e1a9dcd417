//! Timing error of the real-time emulator: how late each frame left against its schedule; and
//! what a port's active queue management did ([`AqmStats`]).
//!
//! A histogram with 1 us bins up to 10 ms (and one overflow bin) costs one increment per frame
//! and no allocation on the data path, and gives percentiles to the microsecond, which is the
//! resolution that matters next to a 6.7 us minimum frame at 100 Mbit/s.

use serde::{Deserialize, Serialize};

const BINS: usize = 10_000;

/// Lateness of releases, in 1 us bins.
#[derive(Debug, Clone)]
pub struct LatenessHistogram {
    bins: Vec<u64>,
    overflow: u64,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        LatenessHistogram {
            bins: vec![0; BINS],
            overflow: 0,
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

/// Percentiles of a histogram.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LatenessSummary {
    /// Frames measured.
    pub frames: u64,
    /// Median lateness (upper edge of its bin), microseconds.
    pub p50_us: f64,
    /// 99th percentile lateness, microseconds.
    pub p99_us: f64,
    /// Largest lateness seen, microseconds.
    pub max_us: f64,
    /// Mean lateness, microseconds.
    pub mean_us: f64,
}

impl LatenessHistogram {
    /// Records one release `late_ns` nanoseconds after its schedule (negative counts as 0).
    pub fn record(&mut self, late_ns: i64) {
        let late = late_ns.max(0) as u64;
        let bin = (late / 1_000) as usize;
        match self.bins.get_mut(bin) {
            Some(b) => *b += 1,
            None => self.overflow += 1,
        }
        self.count += 1;
        self.sum_ns += u128::from(late);
        self.max_ns = self.max_ns.max(late);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &LatenessHistogram) {
        for (a, b) in self.bins.iter_mut().zip(&other.bins) {
            *a += b;
        }
        self.overflow += other.overflow;
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    fn percentile_us(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((p * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return (i + 1) as f64;
            }
        }
        self.max_ns as f64 / 1e3
    }

    /// p50, p99, max and mean.
    pub fn summary(&self) -> LatenessSummary {
        LatenessSummary {
            frames: self.count,
            p50_us: self.percentile_us(0.50),
            p99_us: self.percentile_us(0.99),
            max_us: self.max_ns as f64 / 1e3,
            mean_us: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64 / 1e3
            },
        }
    }
}

/// What the active queue management of one direction did (`aqm = "codel"` or `"fq_codel"`);
/// absent on a drop-tail direction. ECN marking is not implemented: `ecn_marks` is always 0,
/// and every packet CoDel picks is dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AqmStats {
    /// Frames CoDel dropped at dequeue (sojourn time above target for an interval).
    pub drops: u64,
    /// Frames FQ-CoDel dropped from the head of its fattest flow queue because the direction's
    /// queue limit was exceeded (also counted in `drops_queue`); CoDel alone tail-drops there.
    pub overflow_drops: u64,
    /// Frames marked ECN CE instead of dropped: always 0 (not implemented).
    pub ecn_marks: u64,
    /// Flow queues served now (FQ-CoDel's new and old lists; CoDel's one FIFO counts as one
    /// while it holds frames).
    pub flows: u64,
    /// Most flow queues ever served at once.
    pub flows_max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_bins() {
        let mut h = LatenessHistogram::default();
        for i in 0..100 {
            h.record(i * 1_000 + 500);
        }
        h.record(-5);
        let s = h.summary();
        assert_eq!(s.frames, 101);
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 99.5);
        let mut other = LatenessHistogram::default();
        other.record(20_000_000);
        h.merge(&other);
        assert_eq!(h.summary().max_us, 20_000.0);
        assert_eq!(h.summary().frames, 102);
    }
}
