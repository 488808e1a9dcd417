//! The real-time driver of a shared medium: one thread holds the TAP descriptors of every
//! station of a half-duplex link, a duplex-mismatch link or a hub, and runs the simulator's
//! CSMA/CD MAC ([`SharedMedium`]) on `CLOCK_MONOTONIC`.
//!
//! The loop: advance the model to now and carry out what it decided (write each delivered
//! frame into the receiving station's TAP, recycle buffers of frames that are done); then wait
//! for the earlier of the model's next event and a frame from any station, sleeping with
//! `ppoll` until shortly before the event and polling without sleeping after that (a sleep
//! alone wakes tens of microseconds late); stamp each frame read with the clock and offer it.
//! One thread per medium keeps the model single-threaded, so its history is exactly the one a
//! virtual-time run with the same arrival instants gives (tested in [`crate::emulator::shared`]).
//!
//! A station whose queue in the model is full is not read: its frames wait in the TAP
//! device's ring (`txqueuelen` frames), and when that is full the kernel drops them and a
//! sender with `PACKET_QDISC_BYPASS` is told `ENOBUFS`, so a saturating generator is held back
//! at its own host as a real NIC holds it back. Reading every frame only to drop it at the
//! model's queue cost this thread most of a core at a few hundred thousand frames a second,
//! and told the generators that frames the medium never carried had gone (bench/RESULTS.md,
//! lab load).
//!
//! A station whose host has a processing model charges its [`HostCpu`] twice: when a frame is
//! read from its TAP (the frame is offered to the MAC when the CPU is done, so the MAC's queue
//! holds only frames the driver has finished), and when the medium delivers a frame to it (the
//! frame is held, copied out of the sender's buffer, until the CPU is done).
//!
//! A hub repeats every frame to every station; the kernel of a station whose address is not
//! the destination drops it. To spare those writes, the thread learns which station owns
//! each source MAC address and writes a unicast frame only to its owner once known (what the
//! receivers keep is the same).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use std::collections::VecDeque;

use crate::emulator::clock::{Nanos, monotonic_now};
use crate::emulator::host::{HostCounters, HostCpu};
use crate::emulator::link::DirectionCounters;
use crate::emulator::shared::{SharedAction, SharedMedium};
use crate::emulator::stats::LatenessHistogram;
use crate::sys;

/// Longest sleep, so that the stop flag is seen.
const POLL_INTERVAL_NS: u64 = 50_000_000;
/// Stop sleeping this long before the model's next event and poll without sleeping.
const SPIN_NS: u64 = 100_000;
/// How often the counters are published.
const PUBLISH_NS: u64 = 20_000_000;

/// Counters and lateness of one station's port, shared with `lab status`.
#[derive(Debug, Default)]
pub(crate) struct StationShared {
    pub(crate) counters: Mutex<DirectionCounters>,
    pub(crate) lateness: Mutex<LatenessHistogram>,
    pub(crate) host: Mutex<Option<HostCounters>>,
    /// Writes into this station's TAP that failed.
    pub(crate) write_errors: std::sync::atomic::AtomicU64,
    /// CPU time of the one thread serving the whole medium, nanoseconds.
    pub(crate) cpu_ns: std::sync::atomic::AtomicU64,
}

/// A frame delivered to a station whose CPU is still busy: written when it is done.
struct Held {
    done: Nanos,
    from: usize,
    buffer: Vec<u8>,
    len: usize,
}

/// The thread's state.
pub(crate) struct SharedPort {
    pub(crate) fds: Vec<libc::c_int>,
    /// Bytes of each frame buffer: the medium's largest frame plus one
    /// ([`crate::topology::frame_buffer`]).
    pub(crate) frame_buffer: usize,
    /// The most frames a station may hold for its host's CPU; a frame delivered beyond that is
    /// dropped and counted as the sender's `drops_memory` (the lab's memory bound).
    pub(crate) max_held: usize,
    /// Frames dropped so, per sending station.
    pub(crate) memory_drops: Vec<u64>,
    /// Each station's host CPU, if its host has a processing model.
    pub(crate) cpus: Vec<Option<HostCpu>>,
    pub(crate) medium: SharedMedium,
    pub(crate) shared: Vec<Arc<StationShared>>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl SharedPort {
    pub(crate) fn run(mut self) {
        sys::tighten_timer_slack();
        sys::realtime_priority();
        // Only for its spin budget (see `clock`): the waits here are ppoll's.
        let clock = crate::emulator::clock::RealClock::for_realtime_thread();
        let n = self.fds.len();
        let mut buffers: HashMap<u64, (Vec<u8>, usize)> = HashMap::new();
        let mut spare: Vec<Vec<u8>> = Vec::new();
        let mut owners: HashMap<[u8; 6], usize> = HashMap::new();
        let mut lateness = vec![LatenessHistogram::default(); n];
        let mut actions = Vec::new();
        let mut held: Vec<VecDeque<Held>> = (0..n).map(|_| VecDeque::new()).collect();
        let mut next_tag = 0u64;
        let mut published = Nanos(0);
        let mut pfds: Vec<libc::pollfd> = self
            .fds
            .iter()
            .map(|&fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while !self.stop.load(Ordering::Relaxed) {
            let now = monotonic_now();
            self.medium.advance(now, &mut actions);
            for action in actions.drain(..) {
                match action {
                    SharedAction::Deliver { tag, from, to, at } => {
                        let Some((buffer, len)) = buffers.get(&tag) else {
                            continue;
                        };
                        let frame = &buffer[..*len];
                        if !wanted_by(frame, to, &owners) {
                            continue;
                        }
                        if self.cpus[to].is_some() && held[to].len() >= self.max_held {
                            self.memory_drops[from] += 1;
                            continue;
                        }
                        if let Some(cpu) = self.cpus[to].as_mut() {
                            let done = cpu.receive(at, *len as u64);
                            let mut copy =
                                spare.pop().unwrap_or_else(|| vec![0; self.frame_buffer]);
                            copy[..*len].copy_from_slice(frame);
                            held[to].push_back(Held {
                                done,
                                from,
                                buffer: copy,
                                len: *len,
                            });
                            continue;
                        }
                        // Lateness is the release instant (the write's start) minus the
                        // schedule, as on a full-duplex port; the write itself may run the
                        // receiving stack synchronously.
                        lateness[from].record(monotonic_now().minus(at));
                        if sys::write_frame(self.fds[to], frame).is_err() {
                            self.shared[to].write_errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    SharedAction::Release { tag } => {
                        if let Some((buffer, _)) = buffers.remove(&tag) {
                            spare.push(buffer);
                        }
                    }
                }
            }
            for (to, queue) in held.iter_mut().enumerate() {
                while queue.front().is_some_and(|h| h.done <= monotonic_now()) {
                    let h = queue.pop_front().expect("a held frame");
                    lateness[h.from].record(monotonic_now().minus(h.done));
                    if sys::write_frame(self.fds[to], &h.buffer[..h.len]).is_err() {
                        self.shared[to].write_errors.fetch_add(1, Ordering::Relaxed);
                    }
                    spare.push(h.buffer);
                }
            }
            if now.minus(published) >= PUBLISH_NS as i64 {
                self.publish(&mut lateness);
                published = now;
            }
            let next_held = held.iter().filter_map(|q| q.front().map(|h| h.done)).min();
            let wait_ns = self
                .medium
                .next_event()
                .into_iter()
                .chain(next_held)
                .min()
                .map_or(POLL_INTERVAL_NS, |t| t.minus(now).max(0) as u64)
                .min(POLL_INTERVAL_NS);
            for (station, pfd) in pfds.iter_mut().enumerate() {
                pfd.events = if self.medium.full(station) {
                    0
                } else {
                    libc::POLLIN
                };
            }
            let spin_ns = if clock.may_spin(now) { SPIN_NS } else { 0 };
            let sleep_ns = wait_ns.saturating_sub(spin_ns);
            let timeout = libc::timespec {
                tv_sec: (sleep_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (sleep_ns % 1_000_000_000) as libc::c_long,
            };
            let ready = sys::ppoll(&mut pfds[..n], &timeout);
            if ready <= 0 {
                continue;
            }
            for (station, pfd) in pfds.iter().enumerate() {
                if pfd.revents & libc::POLLIN == 0 {
                    continue;
                }
                while !self.medium.full(station) {
                    let mut buffer = spare.pop().unwrap_or_else(|| vec![0; self.frame_buffer]);
                    let len = match sys::read_frame(pfd.fd, &mut buffer) {
                        Ok(len) if len > 0 => len,
                        _ => {
                            spare.push(buffer);
                            break;
                        }
                    };
                    if len >= 12 {
                        let mut source = [0u8; 6];
                        source.copy_from_slice(&buffer[6..12]);
                        owners.insert(source, station);
                    }
                    let tag = next_tag;
                    next_tag += 1;
                    let now = monotonic_now();
                    // A slow host's driver offers the frame to its MAC when its CPU is done.
                    let ready = self.cpus[station]
                        .as_mut()
                        .map_or(now, |cpu| cpu.transmit(now, len as u64));
                    if self.medium.offer(ready, station, len as u64, tag) {
                        buffers.insert(tag, (buffer, len));
                    } else {
                        spare.push(buffer);
                    }
                }
            }
        }
        self.publish(&mut lateness);
    }

    fn publish(&self, lateness: &mut [LatenessHistogram]) {
        let cpu = crate::emulator::clock::thread_cpu_ns();
        for s in &self.shared {
            s.cpu_ns.store(cpu, Ordering::Relaxed);
        }
        for (i, shared) in self.shared.iter().enumerate() {
            let mut counters = self.medium.counters(i);
            counters.drops_memory = self.memory_drops[i];
            *shared.counters.lock().expect("counters lock") = counters;
            *shared.host.lock().expect("host lock") = self.cpus[i].as_ref().map(HostCpu::counters);
            shared
                .lateness
                .lock()
                .expect("lateness lock")
                .merge(&lateness[i]);
            lateness[i] = LatenessHistogram::default();
        }
    }
}

/// Whether station `to` should be handed `frame`: broadcast, multicast and unknown unicast go
/// to everyone (as a hub repeats them); known unicast only to its owner.
pub fn wanted_by(frame: &[u8], to: usize, owners: &HashMap<[u8; 6], usize>) -> bool {
    if frame.len() < 6 || frame[0] & 1 == 1 {
        return true;
    }
    let mut dest = [0u8; 6];
    dest.copy_from_slice(&frame[..6]);
    owners.get(&dest).is_none_or(|&owner| owner == to)
}
