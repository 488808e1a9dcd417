//! Simulated time: integer picoseconds, never the wall clock.
//!
//! Integer time makes a run bit-for-bit reproducible and lets equal times compare equal (two
//! signals that reach a station in the same picosecond are simultaneous, not 1e-17 apart).
//! A picosecond divides every bit time of interest exactly (10 Mbit/s: 100,000 ps; 100 Mbit/s:
//! 10,000 ps; 1 Gbit/s: 1,000 ps) and resolves the propagation over a few centimetres of cable;
//! a `u64` of them lasts 213 days. The types follow smoltcp's `time.rs`: an instant and a
//! span are distinct, and models are handed `now` rather than reading a clock.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

use serde::Serialize;

/// Picoseconds in one second.
pub const PS_PER_SECOND: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SimTime(u64);

/// A length of simulated time, in picoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SimSpan(u64);

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any event (for "run to the end").
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `ps` picoseconds after the start.
    pub const fn from_ps(ps: u64) -> SimTime {
        SimTime(ps)
    }

    /// Picoseconds since the start.
    pub const fn ps(self) -> u64 {
        self.0
    }

    /// Seconds since the start.
    pub fn seconds(self) -> f64 {
        self.0 as f64 / PS_PER_SECOND as f64
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimSpan {
        SimSpan(self.0.saturating_sub(earlier.0))
    }
}

impl SimSpan {
    /// No time.
    pub const ZERO: SimSpan = SimSpan(0);

    /// A span of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> SimSpan {
        SimSpan(ps)
    }

    /// A span of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> SimSpan {
        SimSpan(ns * 1_000)
    }

    /// A span of `us` microseconds.
    pub const fn from_us(us: u64) -> SimSpan {
        SimSpan(us * 1_000_000)
    }

    /// The span closest to `seconds` (negative and NaN become zero).
    pub fn from_seconds(seconds: f64) -> SimSpan {
        SimSpan((seconds * PS_PER_SECOND as f64).round().max(0.0) as u64)
    }

    /// The span of a `std::time::Duration`.
    pub fn from_duration(d: std::time::Duration) -> SimSpan {
        SimSpan(u64::try_from(d.as_nanos() * 1_000).unwrap_or(u64::MAX))
    }

    /// Picoseconds.
    pub const fn ps(self) -> u64 {
        self.0
    }

    /// Seconds.
    pub fn seconds(self) -> f64 {
        self.0 as f64 / PS_PER_SECOND as f64
    }
}

impl Add<SimSpan> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimSpan) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimSpan> for SimTime {
    fn add_assign(&mut self, rhs: SimSpan) {
        *self = *self + rhs;
    }
}

impl Sub<SimSpan> for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimSpan) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}

impl Add for SimSpan {
    type Output = SimSpan;
    fn add(self, rhs: SimSpan) -> SimSpan {
        SimSpan(self.0.saturating_add(rhs.0))
    }
}

impl Mul<u64> for SimSpan {
    type Output = SimSpan;
    fn mul(self, rhs: u64) -> SimSpan {
        SimSpan(self.0.saturating_mul(rhs))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.seconds())
    }
}
