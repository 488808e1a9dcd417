//! The queue's occupancy over time, sampled by the emulator itself: the ground truth a latency
//! measurement across the lab is checked against.
//!
//! What a packet arriving at instant `t` waits before its first bit goes is the work the
//! direction still holds then: the bytes queued plus the rest of the frame on the wire, at the
//! link's rate (Takacs's virtual waiting time, `W(t)`). Between two changes of the queue (an
//! arrival admitted, a frame dropped from it) `W` only drains, one second per second, so it is
//! known exactly from one instant: when the work would be done if nothing else came
//! ([`QueueDelaySampler::set_work_end`]). The sampler takes `W` at fixed instants, one every
//! [`SAMPLE_PERIOD`], filled in lazily when the direction next changes: no timer, no thread,
//! and each sample exact, whenever the emulator's thread runs.
//!
//! It publishes running totals (samples, their sum, the last one) in the direction's counters,
//! so that a reader who takes `lab status` twice has the mean occupancy over the time between,
//! by difference: the figure a probe sent at arbitrary instants should see on average (a
//! periodic probe of a queue that does not keep its period sees time averages, as Poisson
//! arrivals do).

use super::clock::Nanos;
use super::link::DirectionCounters;

/// Time between two samples of the queue's delay.
pub const SAMPLE_PERIOD: std::time::Duration = std::time::Duration::from_millis(1);
const PERIOD_NS: i64 = SAMPLE_PERIOD.as_nanos() as i64;

/// Samples `W(t)` of one direction every [`SAMPLE_PERIOD`] into its counters
/// (`queue_delay_samples`, `queue_delay_sum_ns`, `queue_delay_ns`).
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueDelaySampler {
    /// The next sampling instant; `None` before the first event.
    next: Option<Nanos>,
    /// When the work held now would be done with no further arrival.
    work_end: Nanos,
}

impl QueueDelaySampler {
    /// Takes the samples due up to `now` (inclusive), with the work as it stood since the
    /// last change. Call it before changing the work at `now`. Amortised O(1) per sample;
    /// the samples after the work ran out are counted at once.
    pub fn advance(&mut self, now: Nanos, c: &mut DirectionCounters) {
        let mut next = *self.next.get_or_insert(now);
        while next <= now && next < self.work_end {
            let w = self.work_end.minus(next) as u64;
            c.queue_delay_samples += 1;
            c.queue_delay_sum_ns = c.queue_delay_sum_ns.saturating_add(w);
            c.queue_delay_ns = w;
            next = Nanos(next.0 + PERIOD_NS as u64);
        }
        if next <= now {
            // The queue was empty from `next` on: every sample up to `now` is zero.
            let n = now.minus(next) / PERIOD_NS + 1;
            c.queue_delay_samples += n as u64;
            c.queue_delay_ns = 0;
            next = Nanos(next.0 + (n * PERIOD_NS) as u64);
        }
        self.next = Some(next);
    }

    /// The work held from now on ends at `end` (the instant the wire would go idle).
    pub fn set_work_end(&mut self, end: Nanos) {
        self.work_end = end;
    }
}
