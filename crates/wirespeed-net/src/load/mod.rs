//! The coordinated load test of Boggs, Mogul and Kent (seed 000 §3.3) over the agent's control
//! protocol.
//!
//! The seed's control machine broadcast a packet announcing a test; each generator waited,
//! transmitted, measured the middle of its transmission, waited again and reported four
//! numbers. Here the controller ([`controller`]) opens one control session per agent and, inside
//! the ordinary hello/welcome handshake, speaks the load messages of [`LoadMessage`] (carried
//! by one [`Message::Load`](crate::control::Message::Load) variant):
//!
//! ```text
//! controller                         agent
//!   clock_query          ->                       (several: the fastest exchange sets the offset)
//!                        <-  clock_reply{agent_ns}
//!   announce{test}       ->                       (binds its sink, validates, refuses or:)
//!                        <-  ready{sink_port}
//! when the generators send to one agent's counting sink (consent, [`consent`]):
//!   target{destination}  ->  each generator       (the traffic rule, or a refusal; then it
//!                        <-  nonce_sent            sends its secret nonce to the destination)
//!   nonce_query{host}    ->  the sink's agent     (what its sink received from that host)
//!                        <-  nonce_seen{nonce}
//!   nonce{nonce}         ->  the generator        (relayed; a mismatch is refused)
//!                        <-  consented
//! then:
//!   go{start_at_ns, destination}  ->              (start_at in the agent's own clock)
//!                                  ... settle, transmit (window counted), cool down ...
//!                        <-  report{report}
//! ```
//!
//! A generator sends UDP datagrams ([`generator`]), or as root raw Ethernet frames to its own
//! address ([`raw`]), to a sink: its own socket that it never
//! reads (the seed's hosts "addressed [their] packets to [themselves], and disabled [their]
//! receiver"), or one agent's counting sink, which reports how many of each host's in-window
//! packets arrived (loss at the sink). A generator sends nowhere else but to an address the
//! traffic rule allows and whose agent proved, with the generator's own secret nonce relayed
//! through its control connection, that it is the sink of the same test ([`consent`]; the
//! design's rule against reflection). The sink believes nothing a datagram says before it is
//! checked against the announcement ([`sink`]). The agent side is [`serve`].

mod agent;
pub mod consent;
pub mod controller;
pub mod generator;
pub mod raw;
pub mod sink;
pub mod tstamp;

pub(crate) use agent::serve;

use rustix::time::ClockId;

// The load test's wire records belong to the control protocol; they are re-exported here
// under the names the load test has always used.
pub use crate::control::load::{LoadMessage, LoadReport, LoadTest, RawEthernet, SinkCounts};

/// `CLOCK_MONOTONIC` in nanoseconds: the clock every schedule runs on.
pub fn monotonic_ns() -> u64 {
    clock_ns(ClockId::Monotonic)
}

#[doc(hidden)]
#[inline]
pub fn clock_ns(clock: ClockId) -> u64 {
    let ts = rustix::time::clock_gettime(clock);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `deadline_ns` of `CLOCK_MONOTONIC` (in slices, so `stop` is seen).
/// The send schedule of a paced generator: one frame every `length x 8 / rate`, and no burst to
/// catch up after the thread was descheduled (more than 10 ms behind: the schedule restarts
/// from now), so an offered load is never exceeded. What such a restart skips of the
/// measurement window is counted, so that a machine too busy to offer the load is told from a
/// network that did not carry it.
#[doc(hidden)]
pub struct Pacer {
    next_ns: f64,
    window_ns: (u64, u64),
    #[doc(hidden)]
    pub skipped_in_window_ns: u64,
}

/// How far behind its schedule a generator may fall before the owed frames are given up.
const CATCH_UP_LIMIT_NS: f64 = 10e6;

impl Pacer {
    /// The first frame is due at `first_ns`; the measurement window is `[w0, w1)` (all
    /// `CLOCK_MONOTONIC`).
    #[doc(hidden)]
    #[inline]
    pub fn new(first_ns: u64, window_ns: (u64, u64)) -> Pacer {
        Pacer {
            next_ns: first_ns as f64,
            window_ns,
            skipped_in_window_ns: 0,
        }
    }

    /// Waits for the next frame's slot; the time then, or `None` if `end_ns` came first.
    #[doc(hidden)]
    #[inline]
    pub fn wait(&mut self, now: u64, end_ns: u64, stop: &dyn Fn() -> bool) -> Option<u64> {
        if (now as f64) < self.next_ns {
            sleep_until(self.next_ns as u64, stop);
            let now = monotonic_ns();
            return (now < end_ns).then_some(now);
        }
        if (now as f64) - self.next_ns > CATCH_UP_LIMIT_NS {
            self.skip_to(now);
        }
        Some(now)
    }

    /// Gives up the frames owed from the schedule's slot to `now`, counting the window's part.
    fn skip_to(&mut self, now: u64) {
        let (w0, w1) = self.window_ns;
        let from = (self.next_ns as u64).max(w0);
        let to = now.min(w1);
        self.skipped_in_window_ns += to.saturating_sub(from);
        self.next_ns = now as f64;
    }

    /// Books a frame of `length` bytes at `rate` bit/s into the schedule.
    #[doc(hidden)]
    #[inline]
    pub fn book(&mut self, length: u32, rate: f64) -> std::io::Result<()> {
        self.next_ns += wirespeed_model::load::pacing_interval_ns(u64::from(length), rate)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(())
    }

    /// The window's time whose frames were never offered, seconds: restarts of the schedule,
    /// and the slots still owed when the transmission ended at `end_ns`.
    #[doc(hidden)]
    #[inline]
    pub fn skipped_in_window_s(&self, end_ns: u64) -> f64 {
        let (w0, w1) = self.window_ns;
        let owed_at_end = if (end_ns as f64) - self.next_ns > CATCH_UP_LIMIT_NS {
            end_ns.min(w1).saturating_sub((self.next_ns as u64).max(w0))
        } else {
            0
        };
        (self.skipped_in_window_ns + owed_at_end) as f64 * 1e-9
    }
}

#[doc(hidden)]
#[inline]
pub fn sleep_until(deadline_ns: u64, stop: &dyn Fn() -> bool) {
    loop {
        let now = monotonic_ns();
        if now >= deadline_ns || stop() {
            return;
        }
        let left = deadline_ns - now;
        std::thread::sleep(std::time::Duration::from_nanos(left.min(50_000_000)));
    }
}
