//! What a full-duplex direction's two threads share: the hand-off record, the port's counters
//! and CPU figures, and the causes a late release is counted under. Both the ingress and the
//! egress thread (or the one thread that does both) write here, and `lab status` reads it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::emulator::clock::{Nanos, thread_cpu_ns};
use crate::emulator::link::DirectionCounters;
use crate::emulator::stats::LatenessHistogram;

pub struct Scheduled {
    pub at: Nanos,
    pub buffer: Vec<u8>,
    pub len: usize,
    /// What this write counts against the direction's memory bound, in frame buffers
    /// ([`memory_charge`]; 1 for a frame).
    pub frames: u64,
}

#[derive(Default)]
pub struct PortShared {
    pub counters: Mutex<DirectionCounters>,
    pub lateness: Mutex<LatenessHistogram>,
    /// Frame buffers' worth of memory handed to the egress thread and not yet written or
    /// dropped ([`memory_charge`]; one per frame where each frame has its own buffer).
    pub in_flight: AtomicU64,
    /// Writes into the receiving TAP that failed.
    pub write_errors: AtomicU64,
    /// CPU time of the ingress and egress threads, nanoseconds (published every ~10 ms).
    pub cpu_ns: [AtomicU64; 2],
    /// Of the egress thread's, the time it spun waiting for releases (published with it).
    pub spin_ns: AtomicU64,
    /// True if the port's TAP devices carry super-packets (vnet header and TSO).
    pub offloaded: AtomicBool,
    /// Reads that were super-packets of two or more segments.
    pub super_packets: AtomicU64,
    /// The segments (frames) those super-packets stood for.
    pub super_packet_frames: AtomicU64,
    /// Super-packets cut into frames in software because one of their segments was dropped.
    pub segmented: AtomicU64,
    /// The longest time a delivered super-packet held its first segment back: from the
    /// instant the first segment's last bit reached the far end to the release of the whole
    /// (the timing error super-packets add), nanoseconds.
    pub held_back_max_ns: AtomicU64,
    /// Releases later than [`LATE_RELEASE_NS`], by cause ([`LateCause`]).
    pub late: [AtomicU64; 3],
    /// One thread serves the direction (reads, releases and writes: [`run_one_thread`]); its
    /// CPU time is published as the egress thread's.
    pub one_thread: AtomicBool,
}

/// The SCHED_FIFO priority of the egress (release) threads: one above the ingress and
/// shared-medium threads' 10 (`sys::realtime_priority`).
pub(super) const RELEASE_PRIORITY: i32 = 11;

/// A release later than this is counted by its cause in `lab status` (the bound on
/// the 99th percentile at 1 Gbit/s), nanoseconds.
pub const LATE_RELEASE_NS: i64 = 50_000;

/// Why a release was late ([`LATE_RELEASE_NS`]), as the egress thread sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateCause {
    /// The thread came to the release already past due, and its previous write into the
    /// receiving TAP (which runs the receiving host's stack in this thread) ended after the
    /// release was due: the previous write's work delayed it.
    PreviousWrite,
    /// The thread came to the release already past due though its previous write ended in
    /// time and it had not slept past the instant: it was preempted (or busy with the
    /// hand-off).
    Behind,
    /// A sleep returned after the release was due: the thread's timed wait for the hand-off
    /// (which sleeps until shortly before the release) or its wait for the instant (sleep,
    /// then spin): a late wake-up, or preemption while it spun.
    Wait,
}

/// The cause of a release due at `due` that the thread turned to at `reached`, after a
/// previous write that ended at `previous_write_end` (and, if `slept_past_due`, a timed wait
/// for the hand-off that returned after `due`), and made at `released`; `None` if it was not
/// late ([`LATE_RELEASE_NS`]).
pub fn late_cause(
    due: Nanos,
    reached: Nanos,
    previous_write_end: Nanos,
    slept_past_due: bool,
    released: Nanos,
) -> Option<LateCause> {
    if released.minus(due) <= LATE_RELEASE_NS {
        None
    } else if reached <= due {
        Some(LateCause::Wait)
    } else if previous_write_end > due {
        Some(LateCause::PreviousWrite)
    } else if slept_past_due {
        Some(LateCause::Wait)
    } else {
        Some(LateCause::Behind)
    }
}

/// How often a thread publishes its CPU time.
pub(super) const CPU_PUBLISH_NS: i64 = 10_000_000;

/// Publishes the calling thread's CPU time into `slot` if `CPU_PUBLISH_NS` passed since `last`;
/// true if it did.
pub(super) fn publish_cpu(slot: &AtomicU64, last: &mut Nanos, now: Nanos) -> bool {
    if now.minus(*last) >= CPU_PUBLISH_NS {
        slot.store(thread_cpu_ns(), Ordering::Relaxed);
        *last = now;
        return true;
    }
    false
}
