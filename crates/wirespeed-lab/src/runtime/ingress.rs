//! A direction's ingress thread: it reads frames (and super-packets) from the sending TAP,
//! stamps them, charges the sending host and router, asks the direction's [`Direction`] when
//! each must be delivered, and hands the survivors to the egress thread within the direction's
//! memory bound. Its buffers come from size-classed pools so the data path allocates nothing
//! once warm.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::emulator::clock::{Nanos, monotonic_now};
use crate::emulator::gso;
use crate::emulator::handoff::{Receiver, Sender};
use crate::emulator::host::HostCpu;
use crate::emulator::link::{Direction, Event, Verdict};
use crate::emulator::router::RouterEgress;
use crate::sys;

use super::POLL_INTERVAL;
use super::port::{PortShared, Scheduled, publish_cpu};

/// The most a super-packet may hold its first frame back after that frame's last bit reached
/// the far end, nanoseconds: a super-packet whose segments would span more is written as runs
/// of segments that each fit (single frames where one frame takes longer: at 10 Mbit/s every
/// frame leaves at its own instant; at 1 Gbit/s runs of 6 full segments; at 10 Gbit/s a whole
/// 64 KB super-packet, 44 segments in 53 us). So the timing error super-packets add is at most
/// this, and at most one super-packet's serialization time, never early.
pub const HOLD_BACK_MAX_NS: i64 = 64_000;

/// The memory bound of a direction whose bound without super-packets is `frames`
/// ([`crate::topology::Link::in_flight_frames`]): with super-packets (`vnet`) it also holds
/// the minimum-size frames (84 bytes on the wire at `bits_per_second`) that a run holds back
/// after their arrival ([`HOLD_BACK_MAX_NS`]) and 1 ms of them for the egress thread's release
/// lateness, so that the bound does not refuse frames the queue would take (measured: with
/// the bound at exactly queue + propagation + 2, 64-byte frames at 100 Mbit/s met it before
/// the queue was full). The slack is at most an eighth of `frames` (plus one), so the memory
/// a lab may hold stays within 1/8 of what `topology::check_memory` budgets.
pub fn with_super_packet_slack(frames: u64, bits_per_second: u64, vnet: bool) -> u64 {
    if !vnet {
        return frames;
    }
    const MIN_WIRE_BITS: u128 = 84 * 8;
    let ns = u128::try_from(HOLD_BACK_MAX_NS).unwrap_or(0) + 1_000_000;
    let slack = u64::try_from(u128::from(bits_per_second) * ns / (MIN_WIRE_BITS * 1_000_000_000))
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    frames.saturating_add(slack.min(frames / 8 + 1))
}

/// What a write of `frames` frames in a buffer of `capacity` bytes counts against its
/// direction's memory bound ([`crate::topology::Link::in_flight_frames`], which
/// `topology::check_memory` budgets at one frame buffer, `slot` bytes, each): the frame buffers
/// its memory fills, but never more than its frames. Counting frames alone made the bound
/// refuse minimum-size frames before the configured queue was full: a run of ten 64-byte
/// segments is one small buffer, yet it counted ten, so the frames a late release still held
/// (the emulator's own lateness, past the bound's 1 ms of slack) ate the queue's room
/// (bench/RESULTS.md, issue 20: 216 and 542 memory refusals of UDP GSO paced at 110% of
/// 100 Mbit/s line rate besides the queue's drops). Never more than its frames, so a queue of
/// N frames fits wherever it did; a buffer of a power-of-two size class holds at most twice
/// the frames' slots, as before.
pub fn memory_charge(frames: u64, capacity: usize, slot: usize) -> u64 {
    frames
        .min(u64::try_from(capacity.div_ceil(slot.max(1))).unwrap_or(u64::MAX))
        .max(1)
}

/// Bytes of the buffer a super-packet is read into: the vnet header, 64 KB of IP packet (the
/// kernel's default `gso_max_size`), an Ethernet header with a VLAN tag, and one byte more to
/// tell a truncated read.
pub const SUPER_READ_BUFFER: usize = gso::VNET_HDR_LEN + 65_536 + 18 + 1;

/// Free buffers in size classes (the smallest holds one frame with its vnet header, each next
/// twice the previous, the last [`SUPER_READ_BUFFER`]), so that a frame or a small super-packet
/// in flight holds at most twice its bytes, and the data path allocates nothing once warm.
pub struct BufferPools {
    pub sizes: Vec<usize>,
    pub free: Vec<Vec<Vec<u8>>>,
}

impl BufferPools {
    pub fn new(small: usize, largest: usize) -> BufferPools {
        let mut sizes = Vec::new();
        let mut size = small;
        while size < largest {
            sizes.push(size);
            size *= 2;
        }
        sizes.push(largest);
        BufferPools {
            free: vec![Vec::new(); sizes.len()],
            sizes,
        }
    }

    pub(super) fn class_of(&self, len: usize) -> usize {
        self.sizes
            .iter()
            .position(|&s| s >= len)
            .unwrap_or(self.sizes.len() - 1)
    }

    pub(super) fn largest(&self) -> usize {
        self.sizes.len() - 1
    }

    pub fn take(&mut self, len: usize) -> Vec<u8> {
        let c = self.class_of(len);
        self.free[c].pop().unwrap_or_else(|| vec![0; self.sizes[c]])
    }

    pub(super) fn put(&mut self, buffer: Vec<u8>) {
        if let Some(c) = self.sizes.iter().position(|&s| s == buffer.len()) {
            self.free[c].push(buffer);
        }
    }
}

pub struct Ingress {
    /// The sending kernel's transmit stamps, where this link uses them.
    pub stamps: Option<crate::ingress_stamp::IngressStamps>,
    pub fd: libc::c_int,
    /// Its TAP devices carry the vnet header: reads may be super-packets.
    pub vnet: bool,
    /// Bytes of each frame buffer (the link's largest frame, plus one).
    pub frame_buffer: usize,
    /// The most frames this direction may hold at once ([`crate::topology::Link::in_flight_frames`]).
    pub max_in_flight: u64,
    pub direction: Direction,
    pub router: Option<RouterEgress>,
    pub host: Option<Arc<Mutex<HostCpu>>>,
    pub to_egress: Sender<Scheduled>,
    pub recycled: Receiver<Vec<u8>>,
    pub shared: Arc<PortShared>,
    pub stop: Arc<AtomicBool>,
}

impl Ingress {
    /// The instant a frame just read entered the link: its transmit stamp where there is
    /// one, else now.
    pub(super) fn charged_from(&mut self, frame: &[u8]) -> Nanos {
        let now = monotonic_now();
        match &mut self.stamps {
            Some(stamps) => stamps.sent_at(frame, now),
            None => now,
        }
    }

    /// When a frame just read is ready for the link, and what a router on the way costs it:
    /// charged from `at` (a super-packet's instant) or its own arrival ([`Self::charged_from`]),
    /// plus the time a slow sending host's CPU takes to hand it over.
    pub(super) fn ready_for_link(&mut self, frame: &[u8], at: Option<Nanos>) -> (Nanos, Duration) {
        let now = match at {
            Some(t) => t,
            None => self.charged_from(frame),
        };
        let processing = self
            .router
            .as_ref()
            .map_or(Duration::ZERO, |r| r.charge(frame).duration());
        // A slow host's driver hands the frame to the link only when its CPU is done.
        let ready = self.host.as_ref().map_or(now, |cpu| {
            cpu.lock()
                .expect("host lock")
                .transmit(now, frame.len() as u64)
        });
        (ready, processing)
    }

    /// Publishes this thread's CPU time, then waits up to [`POLL_INTERVAL`] for the TAP to
    /// have a frame; false when it has none yet (the caller checks `stop` and waits again).
    pub(super) fn wait_readable(&self, cpu_published: &mut Nanos) -> bool {
        publish_cpu(&self.shared.cpu_ns[0], cpu_published, monotonic_now());
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        sys::poll(
            std::slice::from_mut(&mut pfd),
            POLL_INTERVAL.as_millis() as i32,
        ) > 0
    }

    pub(super) fn run(self) {
        if self.vnet {
            self.run_offloaded();
        } else if self.direction.has_aqm() {
            self.run_aqm();
        } else {
            self.run_drop_tail();
        }
    }

    /// The event path of a direction with active queue management: each frame read is
    /// enqueued with a tag, its buffer held here until the queue delivers or drops it; between
    /// reads the thread sleeps only until the queue's next event, so that every departure is
    /// decided at (or just after) its instant with every earlier arrival already known.
    pub(super) fn run_aqm(mut self) {
        sys::tighten_timer_slack();
        sys::realtime_priority();
        let mut st = AqmHeld::default();
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            let now = monotonic_now();
            publish_cpu(&self.shared.cpu_ns[0], &mut cpu_published, now);
            if !self.aqm_advance(now, &mut st) {
                return;
            }
            let wait = self
                .direction
                .next_event()
                .map_or(POLL_INTERVAL.as_nanos() as i64, |t| t.minus(now))
                .clamp(0, POLL_INTERVAL.as_nanos() as i64);
            let timeout = libc::timespec {
                tv_sec: 0,
                tv_nsec: wait as libc::c_long,
            };
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ready = sys::ppoll(std::slice::from_mut(&mut pfd), &timeout);
            if ready <= 0 {
                continue;
            }
            loop {
                match self.aqm_read_one(None, &mut st) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// Lets the queue of a direction with active queue management release (or drop) what is
    /// due at `now`; false if the egress thread is gone.
    pub fn aqm_advance(&mut self, now: Nanos, st: &mut AqmHeld) -> bool {
        self.direction.advance(now, &mut st.events);
        self.release(&mut st.events, &mut st.held, &mut st.pool)
    }

    /// One read of [`Ingress::run_aqm`]: reads a frame and enqueues it, charged from `at` if
    /// given (virtual time, for tests) or else from the clock. `None` if the TAP had nothing
    /// to read; `Some(false)` if the egress thread is gone.
    // `#[inline]`: public only for the tests, and a public function is exported, which kept
    // LLVM from inlining this one-caller function into the per-frame loop as it did while
    // it was private (nm and objdump of the library); an inline function stays local.
    #[inline]
    pub fn aqm_read_one(&mut self, at: Option<Nanos>, st: &mut AqmHeld) -> Option<bool> {
        let mut buffer = st
            .pool
            .pop()
            .or_else(|| self.recycled.try_recv().ok())
            .unwrap_or_else(|| vec![0; self.frame_buffer]);
        let len = match sys::read_frame(self.fd, &mut buffer) {
            Ok(len) if len > 0 => len,
            _ => {
                st.pool.push(buffer);
                return None;
            }
        };
        // The memory bound counts the frames queued here as well as those in flight.
        if self.shared.in_flight.load(Ordering::Acquire) + st.held.len() as u64
            >= self.max_in_flight
        {
            self.direction.refuse_memory(len as u64);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            st.pool.push(buffer);
            return Some(true);
        }
        let (ready, processing) = self.ready_for_link(&buffer[..len], at);
        let tag = st.next_tag;
        st.next_tag += 1;
        self.direction
            .enqueue(ready, &buffer[..len], processing, tag, &mut st.events);
        st.held.insert(tag, (buffer, len));
        Some(self.release(&mut st.events, &mut st.held, &mut st.pool))
    }

    /// Hands the delivered frames to the egress thread and takes the dropped ones' buffers
    /// back; publishes the counters. False if the egress thread is gone.
    pub(super) fn release(
        &mut self,
        events: &mut Vec<Event>,
        held: &mut std::collections::HashMap<u64, (Vec<u8>, usize)>,
        pool: &mut Vec<Vec<u8>>,
    ) -> bool {
        for event in events.drain(..) {
            match event {
                Event::Deliver { tag, at } => {
                    let (buffer, len) = held.remove(&tag).expect("a held frame");
                    self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
                    if self
                        .to_egress
                        .send(Scheduled {
                            at,
                            buffer,
                            len,
                            frames: 1,
                        })
                        .is_err()
                    {
                        return false;
                    }
                }
                Event::Drop { tag, .. } => {
                    if let Some((buffer, _)) = held.remove(&tag) {
                        pool.push(buffer);
                    }
                }
            }
        }
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        true
    }

    /// A drop-tail direction between TAP devices with the vnet header: a read is one frame or
    /// one super-packet (up to 64 KB of TCP or UDP payload that the sender's stack did not
    /// cut, [`gso`]). A super-packet's segments are offered to the direction one by one at
    /// the instant it was read ([`Direction::offer_segments`]: per segment the wire is charged
    /// header, FCS, preamble and gap, the queue counts a frame, loss draws once), exactly as
    /// the same frames from a device without offloads would be. If every segment is
    /// delivered, the super-packet is written whole into the far TAP when its last segment's
    /// last bit arrives, and the far stack takes it as a NIC's GRO would hand it over: its
    /// first segments arrive late by at most the serialization time of the segments after
    /// them, less than one super-packet's (`held_back_max_ns` in `lab status`), never early.
    /// If any segment is dropped (queue full, loss, memory bound), the super-packet is cut
    /// into real frames ([`gso::segment`]) and each survivor is released at its own instant,
    /// so drops and timing stay exact per frame.
    pub(super) fn run_offloaded(mut self) {
        sys::realtime_priority();
        let small = self.frame_buffer + gso::VNET_HDR_LEN;
        let mut pools = BufferPools::new(small, SUPER_READ_BUFFER);
        let mut scratch = pools.take(SUPER_READ_BUFFER);
        let mut verdicts = Vec::new();
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            if !self.wait_readable(&mut cpu_published) {
                continue;
            }
            loop {
                match self.read_and_offer(None, &mut scratch, &mut pools, &mut verdicts) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// One step of [`Ingress::run_offloaded`]: takes back the buffers the egress thread
    /// wrote, reads one frame or super-packet and decides its fate, charged from `at` if given
    /// (virtual time, for tests) or else from the clock. `None` if the TAP had nothing to
    /// read; `Some(false)` if the egress thread is gone.
    pub fn read_and_offer(
        &mut self,
        at: Option<Nanos>,
        scratch: &mut Vec<u8>,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> Option<bool> {
        while let Ok(b) = self.recycled.try_recv() {
            pools.put(b);
        }
        let n = match sys::read_frame(self.fd, scratch) {
            Ok(n) if n > 0 => n,
            _ => return None,
        };
        Some(match at {
            None => self.offer_read(scratch, n, pools, verdicts),
            Some(now) => match gso::VnetHdr::parse(&scratch[..n]) {
                Some(hdr) => self.offer_read_at(now, hdr, scratch, n, pools, verdicts),
                None => true,
            },
        })
    }

    /// Decides the fate of one read of `n` bytes (vnet header and frame) in `scratch`; false
    /// if the egress thread is gone.
    pub(super) fn offer_read(
        &mut self,
        scratch: &mut Vec<u8>,
        n: usize,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> bool {
        let Some(hdr) = gso::VnetHdr::parse(&scratch[..n]) else {
            return true;
        };
        // A super-packet has one copy at the packet socket, as a frame does: the stamp pairs
        // with the frame after the vnet header.
        let now = self.charged_from(&scratch[gso::VNET_HDR_LEN..n]);
        self.offer_read_at(now, hdr, scratch, n, pools, verdicts)
    }

    /// [`Ingress::offer_read`] of a read charged from `now` whose vnet header is `hdr`.
    pub(super) fn offer_read_at(
        &mut self,
        now: Nanos,
        hdr: gso::VnetHdr,
        scratch: &mut Vec<u8>,
        n: usize,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> bool {
        let frame_len = (n - gso::VNET_HDR_LEN) as u64;
        // A read that filled the buffer was truncated (a super-packet beyond 64 KB): it is
        // offered at its full size, which no link's MTU takes (counted as too big).
        let plan = (hdr.is_gso() && n < scratch.len())
            .then(|| gso::Plan::new(&hdr, &scratch[gso::VNET_HDR_LEN..n]).ok())
            .flatten()
            .filter(|p| p.segments() > 1);
        let Some(plan) = plan else {
            if self.shared.in_flight.load(Ordering::Acquire) >= self.max_in_flight {
                self.direction.refuse_memory(frame_len);
                *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
                return true;
            }
            let verdict = self.direction.offer(now, frame_len, Duration::ZERO);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            let Verdict::Deliver { at } = verdict else {
                return true;
            };
            let mut buffer = pools.take(n);
            buffer[..n].copy_from_slice(&scratch[..n]);
            return self.send(at, buffer, n, 1);
        };
        let k = plan.segments() as u64;
        verdicts.clear();
        self.offer_within_memory(now, &plan, verdicts);
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        let at = |v: &Verdict| match v {
            Verdict::Deliver { at } => Some(*at),
            Verdict::Drop(_) => None,
        };
        let whole = verdicts.iter().all(|v| at(v).is_some());
        if let (true, Some(Some(first)), Some(Some(last))) =
            (whole, verdicts.first().map(at), verdicts.last().map(at))
            && last.minus(first) <= HOLD_BACK_MAX_NS
        {
            self.note_super_packet(k, last.minus(first));
            // A large read leaves with the buffer it was read into; a small one is copied
            // into a buffer of its size, so that memory follows the bytes in flight.
            let buffer = if pools.class_of(n) == pools.largest() {
                std::mem::replace(scratch, pools.take(SUPER_READ_BUFFER))
            } else {
                let mut b = pools.take(n);
                b[..n].copy_from_slice(&scratch[..n]);
                b
            };
            return self.send(last, buffer, n, k);
        }
        // Cut: into runs of delivered segments that each leave within the bound of their first
        // (on a slow link, or where a segment was dropped, single frames).
        if !whole {
            self.shared.segmented.fetch_add(1, Ordering::Relaxed);
        }
        let frame = &scratch[gso::VNET_HDR_LEN..n];
        let mut i = 0;
        while i < verdicts.len() {
            let Some(first) = at(&verdicts[i]) else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            while j < verdicts.len()
                && at(&verdicts[j]).is_some_and(|t| t.minus(first) <= HOLD_BACK_MAX_NS)
            {
                j += 1;
            }
            let count = j - i;
            let last = at(&verdicts[j - 1]).expect("a delivered segment");
            if count > 1 {
                self.note_super_packet(count as u64, last.minus(first));
            }
            let mut buffer = pools.take(gso::VNET_HDR_LEN + plan.header + count * plan.mss);
            let (len, hdr) = gso::cut_run(
                &plan,
                frame,
                i,
                count,
                hdr.gso_type,
                &mut buffer[gso::VNET_HDR_LEN..],
            );
            hdr.write(&mut buffer);
            if !self.send(last, buffer, gso::VNET_HDR_LEN + len, count as u64) {
                return false;
            }
            i = j;
        }
        true
    }

    /// Offers a super-packet's segments to the direction, as many as the memory bound has room
    /// for; the rest are refused (`drops_memory`) one by one, so that the bound never takes
    /// more than the frames beyond it. (Refusing the whole super-packet when its last segment
    /// would not fit threw away up to 63 frames the queue had room for: a 64-segment UDP
    /// super-packet of 64-byte frames at 100 Mbit/s is 430 us of wire, and the refusals left
    /// the wire idle; bench/RESULTS.md, issue 20 part B.)
    pub(super) fn offer_within_memory(
        &mut self,
        now: Nanos,
        plan: &gso::Plan,
        verdicts: &mut Vec<Verdict>,
    ) {
        let in_flight = self.shared.in_flight.load(Ordering::Acquire);
        let room =
            usize::try_from(self.max_in_flight.saturating_sub(in_flight)).unwrap_or(usize::MAX);
        self.direction.offer_segments(
            now,
            plan.segment_lens().take(room),
            Duration::ZERO,
            verdicts,
        );
        for len in plan.segment_lens().skip(room) {
            self.direction.refuse_memory(len);
            verdicts.push(Verdict::Drop(crate::emulator::link::DropReason::Memory));
        }
    }

    /// Counts a super-packet of `frames` delivered whole, its first frame held back `held` ns.
    pub(super) fn note_super_packet(&self, frames: u64, held: i64) {
        self.shared.super_packets.fetch_add(1, Ordering::Relaxed);
        self.shared
            .super_packet_frames
            .fetch_add(frames, Ordering::Relaxed);
        self.shared
            .held_back_max_ns
            .fetch_max(held.max(0) as u64, Ordering::Relaxed);
    }

    /// Hands a write of `frames` frames to the egress thread; false if it is gone.
    pub(super) fn send(&self, at: Nanos, buffer: Vec<u8>, len: usize, frames: u64) -> bool {
        let charge = memory_charge(frames, buffer.len(), self.frame_buffer + gso::VNET_HDR_LEN);
        self.shared.in_flight.fetch_add(charge, Ordering::AcqRel);
        self.to_egress
            .send(Scheduled {
                at,
                buffer,
                len,
                frames: charge,
            })
            .is_ok()
    }

    pub(super) fn run_drop_tail(mut self) {
        sys::realtime_priority();
        let mut spare: Option<Vec<u8>> = None;
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            if !self.wait_readable(&mut cpu_published) {
                continue;
            }
            // Drain everything queued on the device before polling again: one poll per burst,
            // one read per frame.
            loop {
                match self.drop_tail_read_one(None, &mut spare) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// One read of [`Ingress::run_drop_tail`]: reads a frame and decides its fate, charged
    /// from `at` if given (virtual time, for tests) or else from the clock; `spare` keeps a
    /// buffer between reads. `None` if the TAP had nothing to read; `Some(false)` if the
    /// egress thread is gone.
    // `#[inline]`: public only for the tests, and a public function is exported, which kept
    // LLVM from inlining this one-caller function into the per-frame loop as it did while
    // it was private (nm and objdump of the library); an inline function stays local.
    #[inline]
    pub fn drop_tail_read_one(
        &mut self,
        at: Option<Nanos>,
        spare: &mut Option<Vec<u8>>,
    ) -> Option<bool> {
        let mut buffer = spare
            .take()
            .or_else(|| self.recycled.try_recv().ok())
            .unwrap_or_else(|| vec![0; self.frame_buffer]);
        let len = match sys::read_frame(self.fd, &mut buffer) {
            Ok(len) if len > 0 => len,
            _ => {
                *spare = Some(buffer);
                return None;
            }
        };
        // The memory bound: a direction never holds more frames than its rate, delay and
        // queue allow, whatever the sender or a slow receiving host does.
        if self.shared.in_flight.load(Ordering::Acquire) >= self.max_in_flight {
            self.direction.refuse_memory(len as u64);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            *spare = Some(buffer);
            return Some(true);
        }
        let (ready, processing) = self.ready_for_link(&buffer[..len], at);
        let verdict = self.direction.offer(ready, len as u64, processing);
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        match verdict {
            Verdict::Deliver { at } => {
                self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
                Some(
                    self.to_egress
                        .send(Scheduled {
                            at,
                            buffer,
                            len,
                            frames: 1,
                        })
                        .is_ok(),
                )
            }
            Verdict::Drop(_) => {
                *spare = Some(buffer);
                Some(true)
            }
        }
    }
}

/// The frames a direction with active queue management holds while they wait in its queue
/// ([`Ingress::run_aqm`]), by tag, with free buffers and the queue's events.
#[derive(Default)]
pub struct AqmHeld {
    pub held: std::collections::HashMap<u64, (Vec<u8>, usize)>,
    pub pool: Vec<Vec<u8>>,
    pub events: Vec<Event>,
    pub next_tag: u64,
}
