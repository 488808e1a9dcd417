//! One offloaded direction served by one thread that reads, releases and writes between its
//! waits in one `ppoll` (on request: [`super::THREADS_ENV`]). The decisions are the ingress's
//! and the writes the egress's, unchanged; only who waits, and where, differs.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use crate::emulator::clock::{Clock, Nanos, RealClock};
use crate::emulator::gso;
use crate::emulator::link::Verdict;
use crate::sys;

use super::POLL_INTERVAL;
use super::egress::Egress;
use super::ingress::{BufferPools, Ingress, SUPER_READ_BUFFER};
use super::port::{RELEASE_PRIORITY, Scheduled, late_cause, publish_cpu};

/// The most reads one wake-up of [`run_one_thread`] makes before it looks at the releases
/// again (it also stops as soon as a release comes due): a sender that keeps the TAP full
/// cannot hold a release back by more than one read.
pub(super) const READS_PER_WAKE: usize = 64;

/// One offloaded direction served by one thread (on request: [`THREADS_ENV`]): it releases
/// every write that is due (sleep, then spin: [`RealClock`]), then reads every frame and
/// super-packet the sending TAP holds (non-blocking, until the TAP is empty, a release comes
/// due, or [`READS_PER_WAKE`]), and then waits in one `ppoll` for the TAP to become readable
/// or until shortly before the next release (a nanosecond timeout, then the spin). With two
/// threads, each super-packet cost four wake-ups (the reader's poll, the releaser's hand-off
/// and its sleep to the instant, and the same for the acknowledgement coming back) and a
/// cross-thread wake-up; here a burst of reads and the releases due between them share one.
/// The decisions are [`Ingress`]'s and the writes [`Egress`]'s, unchanged: the hand-off FIFO
/// between them stays, uncontended (a lock each way, no wake-up), so the data path allocates
/// nothing once warm (`tests::the_data_path_allocates_nothing_per_frame_once_warm`).
///
/// Releases come before reads, so a frame's fate is never decided while writes that were due
/// before it still count against the memory bound. The risk of one thread: a write into the
/// receiving TAP runs the receiving host's stack in this thread, and a read is a copy of up to
/// 64 KB; a release due meanwhile waits for them (counted in `lab status`: `late_after_previous_write`,
/// and `late_behind` for a read that ran past it).
pub(super) fn run_one_thread(ingress: Ingress, egress: Egress) {
    sys::tighten_timer_slack();
    sys::realtime_priority_of(RELEASE_PRIORITY);
    let clock = RealClock::for_realtime_thread_with(egress.spin);
    let spin = |at: Nanos, now: Nanos| clock.spin_before(at, now);
    let mut one = OneThread::new(ingress, egress);
    let mut cpu_published = Nanos(0);
    // The TAP may hold more: the last read did not find it empty.
    let mut readable = false;
    while !one.egress.stop.load(Ordering::Relaxed) {
        if publish_cpu(
            &one.egress.shared.cpu_ns[1],
            &mut cpu_published,
            clock.now(),
        ) {
            one.egress
                .shared
                .spin_ns
                .store(clock.spun_ns(), Ordering::Relaxed);
        }
        // Releases first: everything due, and what is due within its spin.
        one.release_due(&clock, &spin);
        if readable {
            match one.read_batch(&clock, &spin, None) {
                Some(more) => readable = more,
                None => return,
            }
            if readable {
                // More to read, or a release due: no wait.
                continue;
            }
        }
        let now = clock.now();
        let target = one.holding.front().map(|s| {
            let spin = clock.spin_before(s.at, now);
            (s.at, Nanos(s.at.0.saturating_sub(spin)))
        });
        let wait = target.map_or(POLL_INTERVAL.as_nanos() as i64, |(_, t)| t.minus(now));
        let wait = wait.clamp(0, POLL_INTERVAL.as_nanos() as i64);
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: wait as libc::c_long,
        };
        let mut pfd = libc::pollfd {
            fd: one.ingress.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ready = sys::ppoll(std::slice::from_mut(&mut pfd), &timeout);
        if ready > 0 {
            readable = true;
        } else if let Some((due, target)) = target
            && wait > 0
            && ready == 0
        {
            // A timed wait for a held write: its wake-up error is the clock's (a zero wait was
            // only a look, not a sleep).
            let woke = clock.now();
            clock.record_wake(target, woke);
            one.slept_past_due |= woke > due;
        }
    }
}

/// The state of [`run_one_thread`] and its two steps, which the tests drive in virtual time.
pub struct OneThread {
    pub ingress: Ingress,
    pub egress: Egress,
    pub pools: BufferPools,
    pub scratch: Vec<u8>,
    pub verdicts: Vec<Verdict>,
    /// Writes handed over by the ingress code, in release order.
    pub holding: VecDeque<Scheduled>,
    pub previous_write_end: Nanos,
    pub slept_past_due: bool,
}

impl OneThread {
    pub fn new(ingress: Ingress, egress: Egress) -> OneThread {
        let small = ingress.frame_buffer + gso::VNET_HDR_LEN;
        let mut pools = BufferPools::new(small, SUPER_READ_BUFFER);
        let scratch = pools.take(SUPER_READ_BUFFER);
        OneThread {
            ingress,
            egress,
            pools,
            scratch,
            verdicts: Vec::new(),
            holding: VecDeque::new(),
            previous_write_end: Nanos(0),
            slept_past_due: false,
        }
    }

    /// True if the next release is due within its spin (`spin(at, now)`) at `now`.
    pub(super) fn due_soon(&self, now: Nanos, spin: &impl Fn(Nanos, Nanos) -> u64) -> bool {
        self.holding
            .front()
            .is_some_and(|s| s.at.minus(now) <= i64::try_from(spin(s.at, now)).unwrap_or(i64::MAX))
    }

    /// Releases every held write that is due within its spin, each at its instant on `clock`
    /// (sleep, then spin), counting the late ones by cause.
    pub fn release_due(&mut self, clock: &impl Clock, spin: &impl Fn(Nanos, Nanos) -> u64) {
        while self.due_soon(clock.now(), spin) {
            let reached = clock.now();
            let s = self.holding.pop_front().expect("a held write");
            let due = s.at;
            let now = clock.wait_until(due);
            if let Some(cause) = late_cause(
                due,
                reached,
                self.previous_write_end,
                self.slept_past_due,
                now,
            ) {
                self.egress.shared.late[cause as usize].fetch_add(1, Ordering::Relaxed);
            }
            self.egress.release(s, due, now);
            self.previous_write_end = clock.now();
            self.slept_past_due = false;
        }
    }

    /// Reads what the sending TAP holds, up to [`READS_PER_WAKE`], until it is empty or a
    /// release comes due, charged from `at` if given (virtual time) or else from the clock:
    /// `Some(true)` if the TAP may hold more, `Some(false)` if it was empty, `None` if the
    /// egress side is gone.
    pub fn read_batch(
        &mut self,
        clock: &impl Clock,
        spin: &impl Fn(Nanos, Nanos) -> u64,
        at: Option<Nanos>,
    ) -> Option<bool> {
        for _ in 0..READS_PER_WAKE {
            match self.ingress.read_and_offer(
                at,
                &mut self.scratch,
                &mut self.pools,
                &mut self.verdicts,
            ) {
                Some(true) => {}
                Some(false) => return None,
                None => return Some(false),
            }
            while let Ok(s) = self.egress.from_ingress.try_recv() {
                self.holding.push_back(s);
            }
            if self.due_soon(clock.now(), spin) {
                break;
            }
        }
        Some(true)
    }
}
