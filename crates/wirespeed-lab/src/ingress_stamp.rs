//! The instant the sending host's kernel transmitted each frame into its TAP device, so that
//! the emulator charges the link from then and not from when its ingress thread woke up and
//! read the frame (issue 17: that wake-up cost 130-150 us per idle round trip, two crossings).
//!
//! An `AF_PACKET` socket bound to the host side of the TAP, in the host's namespace
//! ([`crate::sys::packet`]: outgoing frames only, cut to 96 bytes in the kernel, `SO_TIMESTAMPNS`),
//! receives a copy of every frame the stack transmits there, stamped just before the frame
//! enters the TAP's queue, in the same order. The ingress thread never waits on it: after each
//! TAP read it drains what the socket holds (without blocking) and pairs the frame with its
//! copy by a hash of the length and the first 96 bytes ([`frame_key`]). Pairs normally match
//! head to head; when they do not (the TAP's ring dropped a frame the socket saw, the socket's
//! buffer dropped a copy, two CPUs transmitting at once), [`Pairer`] looks further down its
//! pending copies, discards the ones it passes over and counts a resynchronisation, and a frame
//! with no copy is charged from its read as before and counted as unpaired.
//!
//! The stamp is `CLOCK_REALTIME`; it is moved to `CLOCK_MONOTONIC` by the offset between the
//! two clocks ([`measure_offset`]: the narrowest of three monotonic-realtime-monotonic
//! brackets, read again every [`OFFSET_REFRESH_NS`]), never later than the TAP read and never
//! earlier than the previous frame's charged instant (the link's schedule stays in order; the wire itself is
//! never started before the previous frame's end, [`crate::emulator::link::Direction::offer`]).
//!
//! The cost is one non-blocking `recvmsg` per frame in the ingress thread and a clone of each
//! frame in the sender's kernel, so the lab opens these sockets only on links of at most
//! [`MAX_STAMPED_RATE_BITS`] (where the wake-up is a sizeable share of a frame's time; above,
//! frames arrive in bursts that one wake-up serves anyway).

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::emulator::clock::Nanos;
use crate::sys;

/// The fastest link whose ingress is charged from the kernel's transmit stamps, bit/s.
pub const MAX_STAMPED_RATE_BITS: u64 = 1_000_000_000;

/// The environment variable that moves the cut-off, to measure the stamps' cost: `0` stamps no
/// link, `all` every link whatever its rate; unset, links of at most [`MAX_STAMPED_RATE_BITS`]
/// (another value is refused when the lab is built, `LabError::BadStampsSetting`).
pub const STAMPS_ENV: &str = "WIRESPEED_LAB_INGRESS_STAMPS";

/// Whether a link of `rate_bits` is charged from transmit stamps, given [`STAMPS_ENV`]'s value.
pub fn stamped(rate_bits: u64, env: Option<&str>) -> bool {
    match env {
        Some("0") => false,
        Some("all") => true,
        _ => rate_bits <= MAX_STAMPED_RATE_BITS,
    }
}

/// [`stamped`] with this process's environment (the emulator inherits `lab up`'s).
pub fn stamped_here(rate_bits: u64) -> bool {
    stamped(rate_bits, std::env::var(STAMPS_ENV).ok().as_deref())
}

/// Copies held while waiting for their frames; older ones are dropped first.
pub const MAX_PENDING: usize = 256;

/// A port whose frames mostly fail to pair stops using the stamps: past this many unpaired
/// frames, if they are more than ten times the paired ones. A pairing that keeps failing scans
/// every pending copy for every frame (measured: that doubled the ingress thread's CPU per
/// frame, 6.0 to 11.8 us at 100 Mbit/s of small datagrams).
const GIVE_UP_AFTER: u64 = 1000;

/// The key a frame and its copy share: FNV-1a over its first [`sys::packet::SNAP_LEN`] bytes
/// (all the copy holds: the kernel cuts it there, and its length with it; the IP header's
/// own length field is among those bytes).
pub fn frame_key(frame: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &frame[..frame.len().min(sys::packet::SNAP_LEN)] {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// How long a measured offset between `CLOCK_REALTIME` and `CLOCK_MONOTONIC` is used before it
/// is measured again, ns. The kernel slews both clocks alike, so they part only when the wall
/// clock is stepped (`settimeofday`, a leap second); a step is followed within this, and a
/// stamp moved by a stale offset meanwhile is still held within `[previous, read]`.
pub const OFFSET_REFRESH_NS: i64 = 100_000_000;

/// `CLOCK_REALTIME` less `CLOCK_MONOTONIC`, ns, from `tries` readings of monotonic, realtime,
/// monotonic (`read`): each realtime reading belongs to the middle of its bracket, within half
/// its width, and the narrowest bracket counts. A single pair of readings is off by however
/// long the thread was away between them (an interrupt, a preempted vCPU), and a frame
/// charged by that offset would be released that much late.
pub fn measure_offset(mut read: impl FnMut() -> (u64, i128, u64), tries: usize) -> i128 {
    let mut best: Option<(u64, i128)> = None;
    for _ in 0..tries.max(1) {
        let (before, real, after) = read();
        let width = after.saturating_sub(before);
        let middle = i128::from(before / 2 + after / 2 + (before % 2 + after % 2) / 2);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, real - middle));
        }
    }
    best.map_or(0, |(_, offset)| offset)
}

/// How the pairing went, for `lab status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StampCounters {
    /// Frames charged from the kernel's transmit stamp.
    pub paired: u64,
    /// Frames with no copy to pair (charged from their read).
    pub unpaired: u64,
    /// Times a frame's copy was not the first pending (copies passed over were discarded).
    pub resynced: u64,
    /// The port stopped using the stamps: its frames mostly failed to pair.
    pub gave_up: bool,
}

/// The pairing of frames with their stamped copies, free of sockets.
#[derive(Debug, Default)]
pub struct Pairer {
    pending: VecDeque<(u64, i128)>,
    /// What happened so far.
    pub counters: StampCounters,
}

impl Pairer {
    /// How many stamped copies wait for their frames: a test seam (at most [`MAX_PENDING`]).
    #[doc(hidden)]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// A stamped copy arrived.
    pub fn push(&mut self, key: u64, stamp_ns: i128) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back((key, stamp_ns));
    }

    /// The stamp of the frame with `key`, taking its copy and every copy before it.
    pub fn take(&mut self, key: u64) -> Option<i128> {
        match self.pending.iter().position(|&(k, _)| k == key) {
            Some(i) => {
                if i > 0 {
                    self.counters.resynced += 1;
                }
                self.counters.paired += 1;
                let stamp = self.pending[i].1;
                self.pending.drain(..=i);
                Some(stamp)
            }
            None => {
                self.counters.unpaired += 1;
                None
            }
        }
    }
}

/// One TAP's transmit stamps, as the ingress thread uses them.
#[derive(Debug)]
pub struct IngressStamps {
    fd: OwnedFd,
    pairer: Pairer,
    buf: [u8; sys::packet::SNAP_LEN],
    last: Nanos,
    /// The clocks' offset ([`measure_offset`]) and when it was measured (monotonic).
    offset: Option<(i128, Nanos)>,
    published: Arc<SharedCounters>,
}

/// The counters as other threads read them.
#[derive(Debug, Default)]
pub struct SharedCounters([AtomicU64; 4]);

impl SharedCounters {
    /// A copy of the counters now.
    pub fn read(&self) -> StampCounters {
        StampCounters {
            paired: self.0[0].load(Ordering::Relaxed),
            unpaired: self.0[1].load(Ordering::Relaxed),
            resynced: self.0[2].load(Ordering::Relaxed),
            gave_up: self.0[3].load(Ordering::Relaxed) != 0,
        }
    }
}

impl IngressStamps {
    /// Opens the stamps of interface `name` (a TAP's host side) in namespace `ns`.
    pub fn open(ns: &str, name: &str) -> Result<IngressStamps, LabError> {
        let owned = name.to_string();
        let fd = sys::in_namespace(ns, move || sys::packet::open_outgoing(&owned))?.map_err(
            |source| LabError::Io {
                what: format!("open a packet socket on {name} in {ns}"),
                source,
            },
        )?;
        Ok(IngressStamps {
            fd,
            pairer: Pairer::default(),
            buf: [0; sys::packet::SNAP_LEN],
            last: Nanos(0),
            offset: None,
            published: Arc::default(),
        })
    }

    /// The counters, for `lab status`.
    pub fn counters(&self) -> Arc<SharedCounters> {
        Arc::clone(&self.published)
    }

    /// When the kernel transmitted `frame`, read at `read_at` (monotonic): its stamp moved to
    /// the monotonic clock, within `[previous answer, read_at]`; `read_at` if it has no copy.
    pub fn sent_at(&mut self, frame: &[u8], read_at: Nanos) -> Nanos {
        if self.pairer.counters.gave_up {
            return read_at.max(self.last);
        }
        while let Some((head, stamp)) = sys::packet::recv_stamped(&self.fd, &mut self.buf) {
            self.pairer.push(frame_key(&self.buf[..head]), stamp);
        }
        let at = match self.pairer.take(frame_key(frame)) {
            Some(stamp) => {
                let offset = match self.offset {
                    Some((offset, at)) if read_at.minus(at) < OFFSET_REFRESH_NS => offset,
                    _ => {
                        let now = crate::emulator::clock::monotonic_now;
                        let offset = measure_offset(|| (now().0, realtime_ns(), now().0), 3);
                        self.offset = Some((offset, read_at));
                        offset
                    }
                };
                let mono = stamp - offset;
                Nanos(u64::try_from(mono.clamp(0, i128::from(read_at.0))).unwrap_or(read_at.0))
            }
            None => read_at,
        };
        let at = at.max(self.last);
        self.last = at;
        let c = &mut self.pairer.counters;
        if c.unpaired > GIVE_UP_AFTER && c.unpaired > 10 * c.paired {
            c.gave_up = true;
        }
        let c = *c;
        let values = [c.paired, c.unpaired, c.resynced, u64::from(c.gave_up)];
        for (slot, v) in self.published.0.iter().zip(values) {
            slot.store(v, Ordering::Relaxed);
        }
        at
    }
}

fn realtime_ns() -> i128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}
