//! Timing error of the real-time emulator: how late each frame left against its schedule;
//! what a port's active queue management did ([`AqmStats`]); and the transmission delays a
//! shared medium's MAC measured ([`DelaySums`]).
//!
//! The lateness histogram is log-linear (as HdrHistogram is): 1 us bins up to 1,024 us, then
//! each doubling of time split into 64 bins (a bin is at most 1/64 = 1.6% of its value wide), up
//! to 2^30 us (18 minutes) and one overflow bin beyond. It costs one increment per frame and
//! no allocation on the data path, and gives percentiles to the microsecond where they matter
//! (next to a 6.7 us minimum frame at 100 Mbit/s) and to 1.6% for the millisecond stalls a busy
//! machine adds. A percentile is the upper edge of the bin holding the nearest-rank sample,
//! never above the largest lateness seen, so it is never below the true value and at most one
//! bin above it. The first version had 1 us bins up to 10 ms and reported the maximum for any
//! percentile that fell beyond: a p99 equal to the max whenever more than 1% of frames were
//! over 10 ms late (issue 20).

use serde::{Deserialize, Serialize};

/// Count, sum and sum of squares of per-frame delays, seconds: what each of seed 000's
/// generator hosts reported (§3.3), so that a reader takes the mean and standard deviation of
/// any window by subtracting two readings ([`DelaySums::since`]) and pools stations by adding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DelaySums {
    /// Frames measured.
    pub frames: u64,
    /// Sum of their delays, seconds.
    pub sum_seconds: f64,
    /// Sum of the squares of their delays, seconds squared.
    pub sum_squares_seconds2: f64,
}

impl DelaySums {
    /// Adds one frame's delay.
    pub fn add(&mut self, seconds: f64) {
        self.frames += 1;
        self.sum_seconds += seconds;
        self.sum_squares_seconds2 += seconds * seconds;
    }

    /// Pools another station's (or window's) frames into these.
    pub fn merge(&mut self, other: &DelaySums) {
        self.frames += other.frames;
        self.sum_seconds += other.sum_seconds;
        self.sum_squares_seconds2 += other.sum_squares_seconds2;
    }

    /// The frames measured since `earlier`, a previous reading of the same counters.
    pub fn since(&self, earlier: &DelaySums) -> DelaySums {
        DelaySums {
            frames: self.frames.saturating_sub(earlier.frames),
            sum_seconds: (self.sum_seconds - earlier.sum_seconds).max(0.0),
            sum_squares_seconds2: (self.sum_squares_seconds2 - earlier.sum_squares_seconds2)
                .max(0.0),
        }
    }

    /// Mean delay, seconds; `None` without frames.
    pub fn mean_seconds(&self) -> Option<f64> {
        (self.frames > 0).then(|| self.sum_seconds / self.frames as f64)
    }

    /// Population standard deviation of the delays, seconds (rounding below zero is 0);
    /// `None` without frames.
    pub fn std_dev_seconds(&self) -> Option<f64> {
        let mean = self.mean_seconds()?;
        let var = self.sum_squares_seconds2 / self.frames as f64 - mean * mean;
        Some(var.max(0.0).sqrt())
    }
}

/// Linear 1 us bins below this many microseconds.
const LINEAR_US: u64 = 1_024;
/// Sub-bins per doubling above the linear range (log2).
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Doublings covered above the linear range: 1,024 us x 2^20 = 2^30 us.
const OCTAVES: u64 = 20;
/// How many bins the histogram has.
#[doc(hidden)]
pub const BINS: usize = (LINEAR_US + OCTAVES * SUB) as usize;

/// The bin of a lateness of `us` microseconds, `None` past the last.
#[doc(hidden)]
pub fn bin_of(us: u64) -> Option<usize> {
    if us < LINEAR_US {
        return Some(us as usize);
    }
    // us >= 1024 = 2^10: octave k holds [2^(10+k), 2^(11+k)), split in SUB equal bins.
    let log = 63 - u64::from(us.leading_zeros());
    let octave = log - 10;
    if octave >= OCTAVES {
        return None;
    }
    let sub = (us >> (log - u64::from(SUB_BITS))) & (SUB - 1);
    Some((LINEAR_US + octave * SUB + sub) as usize)
}

/// The upper edge of bin `i`, microseconds (exclusive: every value in it is below).
#[doc(hidden)]
pub fn upper_edge_us(i: usize) -> u64 {
    let i = i as u64;
    if i < LINEAR_US {
        return i + 1;
    }
    let octave = (i - LINEAR_US) / SUB;
    let sub = (i - LINEAR_US) % SUB;
    let width = 1u64 << (10 + octave - u64::from(SUB_BITS));
    (1u64 << (10 + octave)) + (sub + 1) * width
}

/// Lateness of releases, in log-linear microsecond bins.
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
    /// Median lateness (upper edge of its bin, at most the max), microseconds.
    pub p50_us: f64,
    /// 99th percentile lateness (upper edge of its bin, at most the max), microseconds.
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
        match bin_of(late / 1_000).and_then(|b| self.bins.get_mut(b)) {
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

    /// The `p` quantile (0 < p <= 1) by nearest rank: the upper edge of the bin holding the
    /// ceil(p x n)-th smallest lateness, capped at the largest, in microseconds.
    pub fn percentile_us(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let max_us = self.max_ns as f64 / 1e3;
        let rank = ((p * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return (upper_edge_us(i) as f64).min(max_us);
            }
        }
        max_us
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
