//! Time for the emulator: one trait, a virtual clock for deterministic tests and a real one.
//!
//! The link logic never reads the wall clock; it is handed `now` (as smoltcp's devices are, and
//! as nexosim's simulators are handed a clock). The egress pump waits through a [`Clock`]: in
//! virtual time waiting is a jump, in real time it is a sleep until shortly before the release
//! followed by a spin on `CLOCK_MONOTONIC`, because a sleep alone wakes tens of microseconds late
//! (timer slack and scheduling), which at 100 Mbit/s is several minimum frames.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A point in time, nanoseconds since an arbitrary origin (the clock's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub u64);

impl Nanos {
    /// `self + d`, saturating.
    pub fn after(self, d: Duration) -> Nanos {
        Nanos(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }

    /// Signed `self - earlier` in nanoseconds.
    pub fn minus(self, earlier: Nanos) -> i64 {
        self.0 as i64 - earlier.0 as i64
    }
}

/// Something that tells the time and can wait for a moment.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Nanos;
    /// Returns at `at` or as soon after it as possible; returns the time it actually returned.
    fn wait_until(&self, at: Nanos) -> Nanos;
}

/// Virtual time: waiting moves the clock forward at once. Deterministic.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: AtomicU64,
}

impl VirtualClock {
    /// A clock at `start`.
    pub fn new(start: Nanos) -> VirtualClock {
        VirtualClock {
            now: AtomicU64::new(start.0),
        }
    }

    /// Moves the clock to `at` if that is later.
    pub fn advance_to(&self, at: Nanos) {
        self.now.fetch_max(at.0, Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Nanos {
        Nanos(self.now.load(Ordering::SeqCst))
    }

    fn wait_until(&self, at: Nanos) -> Nanos {
        self.advance_to(at);
        self.now()
    }
}

/// `CLOCK_MONOTONIC`, with sleep-then-spin waiting.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    /// How long before a release the thread stops sleeping and starts spinning.
    pub spin: Duration,
}

impl Default for RealClock {
    fn default() -> Self {
        RealClock {
            spin: Duration::from_micros(100),
        }
    }
}

/// `CLOCK_MONOTONIC` now.
pub fn monotonic_now() -> Nanos {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Nanos(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

impl Clock for RealClock {
    fn now(&self) -> Nanos {
        monotonic_now()
    }

    fn wait_until(&self, at: Nanos) -> Nanos {
        let mut now = monotonic_now();
        let spin = u64::try_from(self.spin.as_nanos()).unwrap_or(u64::MAX);
        if at.0 > now.0.saturating_add(spin) {
            std::thread::sleep(Duration::from_nanos(at.0 - now.0 - spin));
            now = monotonic_now();
        }
        while now < at {
            std::hint::spin_loop();
            now = monotonic_now();
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_time_jumps_and_never_goes_back() {
        let clock = VirtualClock::new(Nanos(10));
        assert_eq!(clock.wait_until(Nanos(1_000)), Nanos(1_000));
        assert_eq!(clock.wait_until(Nanos(500)), Nanos(1_000));
    }

    #[test]
    fn real_clock_never_returns_early() {
        let clock = RealClock::default();
        for step in [0u64, 50_000, 300_000] {
            let at = clock.now().after(Duration::from_nanos(step));
            let got = clock.wait_until(at);
            assert!(got >= at);
        }
    }
}
