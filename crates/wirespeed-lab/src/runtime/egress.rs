//! A direction's egress thread: it holds each frame until its release instant (sleep, then
//! spin), charges the receiving host, writes the frame into the far TAP, records how late it
//! was and hands the buffer back to the ingress thread for reuse.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::emulator::clock::{Clock, Nanos, RealClock, SpinPolicy};
use crate::emulator::handoff::{Receiver, Sender};
use crate::emulator::host::HostCpu;
use crate::sys;

use super::POLL_INTERVAL;
use super::port::{PortShared, RELEASE_PRIORITY, Scheduled, late_cause, publish_cpu};

pub struct Egress {
    pub spin: SpinPolicy,
    pub fd: libc::c_int,
    pub host: Option<Arc<Mutex<HostCpu>>>,
    pub from_ingress: Receiver<Scheduled>,
    pub recycle: Sender<Vec<u8>>,
    pub shared: Arc<PortShared>,
    pub stop: Arc<AtomicBool>,
}

impl Egress {
    /// Takes each frame when its last bit reaches the far port, charges the receiving host's
    /// CPU there (at that instant, so that its transmit and receive work interleave in time
    /// order), and writes it when the CPU is done. Without a host model "done" is the
    /// arrival, and a frame is written at its scheduled instant.
    pub(super) fn run(self) {
        sys::tighten_timer_slack();
        // One above the ingress threads: on two cores the four threads of a link often want
        // both, and a release is due at an instant while a read is charged from the sender's
        // transmit stamp (at up to 1 Gbit/s, `ingress_stamp`) or waits in the TAP's queue.
        sys::realtime_priority_of(RELEASE_PRIORITY);
        let clock = RealClock::for_realtime_thread_with(self.spin);
        let mut next: Option<Scheduled> = None;
        let mut holding: VecDeque<(Nanos, Scheduled)> = VecDeque::new();
        let mut disconnected = false;
        let mut cpu_published = Nanos(0);
        let mut previous_write_end = Nanos(0);
        let mut slept_past_due = false;
        // When the thread turned to the next release, if it did so before the hand-off branch
        // below waited for that frame's arrival.
        let mut reached: Option<Nanos> = None;
        while !self.stop.load(Ordering::Relaxed) {
            if publish_cpu(&self.shared.cpu_ns[1], &mut cpu_published, clock.now()) {
                self.shared
                    .spin_ns
                    .store(clock.spun_ns(), Ordering::Relaxed);
            }
            if next.is_none() && !disconnected {
                // Sleep in the channel until shortly before the held frame is due; the last
                // stretch is spun in `wait_until`, as the pump does (a sleep wakes late).
                let now = clock.now();
                let wait = holding.front().map_or(POLL_INTERVAL, |(done, _)| {
                    let spin = i64::try_from(clock.spin_before(*done, now)).unwrap_or(i64::MAX);
                    Duration::from_nanos((done.minus(now) - spin).max(0) as u64).min(POLL_INTERVAL)
                });
                // With a frame due now, only a look (a zero `recv_timeout` goes through the
                // channel's waiting machinery: microseconds of every idle release, issue 17).
                let got = if wait.is_zero() {
                    self.from_ingress.try_recv().map_err(|e| match e {
                        TryRecvError::Empty => RecvTimeoutError::Timeout,
                        TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                    })
                } else {
                    self.from_ingress.recv_timeout(wait)
                };
                match got {
                    Ok(s) => next = Some(s),
                    Err(RecvTimeoutError::Timeout) => {
                        // A timed wait for a held frame: its wake-up error is the clock's too
                        // (a zero wait was only a look, not a sleep: no wake-up to learn from).
                        if !holding.is_empty() && !wait.is_zero() && wait < POLL_INTERVAL {
                            let woke = clock.now();
                            clock.record_wake(now.after(wait), woke);
                            slept_past_due |= holding.front().is_some_and(|(d, _)| woke > *d);
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => disconnected = true,
                }
            }
            let due = holding.front().map(|(done, _)| *done);
            match (due, next.as_ref().map(|s| s.at)) {
                (Some(done), arrival) if arrival.is_none_or(|a| done <= a) => {
                    // Never block longer than the poll interval: a stop must be seen at once,
                    // whatever the delay (frames in flight are dropped then).
                    if done.minus(clock.now()) > POLL_INTERVAL.as_nanos() as i64 {
                        if next.is_some() {
                            std::thread::sleep(POLL_INTERVAL);
                        }
                        continue;
                    }
                    let reached = reached.take().unwrap_or_else(|| clock.now());
                    let now = clock.wait_until(done);
                    let (_, s) = holding.pop_front().expect("a frame is held");
                    if let Some(cause) =
                        late_cause(done, reached, previous_write_end, slept_past_due, now)
                    {
                        self.shared.late[cause as usize].fetch_add(1, Ordering::Relaxed);
                    }
                    self.release(s, done, now);
                    previous_write_end = clock.now();
                    slept_past_due = false;
                }
                (_, Some(at)) => {
                    if at.minus(clock.now()) > POLL_INTERVAL.as_nanos() as i64 {
                        std::thread::sleep(POLL_INTERVAL);
                        continue;
                    }
                    // Without a host model this wait is the release's own (`done` is `at`):
                    // the thread turned to the release now.
                    if holding.is_empty() && self.host.is_none() {
                        reached = Some(clock.now());
                    }
                    clock.wait_until(at);
                    let s = next.take().expect("a frame is next");
                    let done = self.host.as_ref().map_or(at, |cpu| {
                        cpu.lock().expect("host lock").receive(at, s.len as u64)
                    });
                    holding.push_back((done, s));
                }
                (None, None) if disconnected => return,
                (_, None) => {}
            }
        }
    }
}

impl Egress {
    /// Writes `s`, due at `done`, into the receiving TAP at `now`; records its lateness and
    /// gives its buffer back to the ingress thread.
    pub fn release(&self, s: Scheduled, done: Nanos, now: Nanos) {
        // A full socket queue in the far namespace drops the frame, as a NIC would (the
        // receiving interface counts it); a failed write is counted here.
        if sys::write_frame(self.fd, &s.buffer[..s.len]).is_err() {
            self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
        }
        self.shared
            .lateness
            .lock()
            .expect("lateness lock")
            .record(now.minus(done));
        self.shared.in_flight.fetch_sub(s.frames, Ordering::AcqRel);
        let _ = self.recycle.send(s.buffer);
    }
}
