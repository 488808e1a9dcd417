//! One direction of an emulated link: processing, drop-tail queue, serializer, loss, propagation.
//!
//! Given the moment a frame arrives, [`Direction::offer`] computes everything about it at once:
//! when a router's processing (Bellovin's fixed + per-byte cost, seed 001 section 2) is done,
//! whether the output queue has room (drop-tail), when serialization starts and ends at the
//! link rate, whether the frame is lost on the way (seeded), and when its last bit reaches the
//! far end (end of serialization + propagation delay). Because every quantity is FIFO and the
//! medium of a full-duplex direction is private, the answer does not depend on anything that
//! happens later, so no event loop is needed: the caller holds the frame until the returned
//! instant. Time is passed in ([`Nanos`]); the same code runs in virtual time in tests.
//!
//! Serialization charges what the medium really carries: on Ethernet the frame as a NIC counts
//! it (the TAP frame plus the 4-byte FCS, padded to 64 bytes) plus the 8-byte preamble and the
//! 12-byte inter-frame gap (IEEE 802.3 clauses 3 and 4), so a 1514-byte TAP frame holds a
//! 10 Mbit/s wire for 1538 x 8 / 10^7 = 1230.4 us; on a serial line only the IP packet.
//!
//! With active queue management (`aqm = "codel"` or `"fq_codel"`, [`super::aqm`]) the fate of
//! a frame is decided when it leaves the queue, by its sojourn time and by what arrived
//! meanwhile, so such a direction is an event model instead: [`Direction::enqueue`] takes each
//! arrival, [`Direction::advance`] runs the queue up to the present (each frame leaves at the
//! exact instant the wire frees, however late the caller comes), and [`Direction::next_event`]
//! says when to come back. The drop-tail path above is untouched by it.
//!
//! The medium is a trait ([`Medium`]) for media that can answer at arrival: [`FullDuplex`] is
//! the private wire. A shared CSMA/CD medium cannot (a frame another station starts later
//! still collides with this one), so half-duplex links, hubs and duplex mismatches are an
//! event model advanced with the clock instead: [`super::shared::SharedMedium`].

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use wirespeed_model::LinkLayer;

use super::aqm::{Aqm, Codel, CodelParams, FlowKey, FqCodel, FqCodelParams, Packet};
use super::clock::Nanos;
use super::occupancy::QueueDelaySampler;
use super::stats::{AqmStats, DelaySums};
use crate::topology::{AqmConfig, AqmKind, DirectionConfig, QueueLimit};

/// Bytes of Ethernet header on a TAP frame (no preamble, no FCS).
pub const TAP_ETHERNET_HEADER: u64 = 14;

/// What became of a frame offered to a medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transmission {
    /// It went: first bit at `start`, last bit (and gap) at `end`.
    Sent {
        /// Start of serialization.
        start: Nanos,
        /// End of serialization.
        end: Nanos,
    },
    /// The medium gave up on it at `at` (for a CSMA/CD MAC: excessive collisions).
    Lost {
        /// When it was given up.
        at: Nanos,
        /// Why.
        reason: MediumLoss,
    },
}

/// Why a medium gave up on a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediumLoss {
    /// 16 attempts, 16 collisions (IEEE 802.3 4.2.3.2.5).
    ExcessiveCollisions,
    /// The frame was corrupted by a collision the sender did not see (duplex mismatch).
    Corrupted,
}

/// When may a frame go, and did it get through, decided when the frame is ready.
///
/// `ready` is when the frame reached the head of the queue and `hold` how long it occupies the
/// medium once it goes. A full-duplex wire answers "as soon as the previous frame is done"; a
/// wire with a deterministic fault could answer "lost". A CSMA/CD medium's answer depends on
/// frames that arrive later, so it is not a `Medium` but [`super::shared::SharedMedium`].
pub trait Medium: Send {
    /// Decides the fate of one frame.
    fn transmit(&mut self, ready: Nanos, hold: Duration) -> Transmission;
}

impl Transmission {
    /// When the medium was done with the frame (end of serialization, or when it gave up).
    pub fn end(self) -> Nanos {
        match self {
            Transmission::Sent { end, .. } => end,
            Transmission::Lost { at, .. } => at,
        }
    }
}

/// A private full-duplex wire: one frame at a time, back to back, never a collision.
#[derive(Debug, Clone, Copy, Default)]
pub struct FullDuplex {
    busy_until: Nanos,
}

impl Medium for FullDuplex {
    fn transmit(&mut self, ready: Nanos, hold: Duration) -> Transmission {
        let start = ready.max(self.busy_until);
        let end = start.after(hold);
        self.busy_until = end;
        Transmission::Sent { start, end }
    }
}

/// The seeded generator of the Bernoulli loss process: the model's SplitMix64 (Steele, Lea and
/// Flood, OOPSLA 2014), so that a loss pattern repeats exactly from its seed.
pub use wirespeed_model::stats::SplitMix64;

/// What the direction decided for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Hand the frame to the far end at `at`.
    Deliver {
        /// When its last bit arrives at the far end.
        at: Nanos,
    },
    /// Do not deliver it.
    Drop(DropReason),
}

/// Why a frame was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full when it arrived (drop-tail).
    QueueFull,
    /// The configured random loss took it after it was serialized.
    Loss,
    /// The medium gave up on it.
    Medium(MediumLoss),
    /// Bigger than the link's MTU allows.
    TooBig,
    /// CoDel dropped it when it reached the head of the queue (active queue management).
    Aqm,
    /// The emulator's memory bound refused it ([`Direction::refuse_memory`]): the direction
    /// already held as many frames as its rate, delay and queue allow.
    Memory,
}

/// What a direction with active queue management did with the frame its caller tagged `tag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Hand the frame to the far end at `at`.
    Deliver {
        /// The caller's tag.
        tag: u64,
        /// When its last bit arrives at the far end.
        at: Nanos,
    },
    /// The frame will not be delivered: its buffer is free.
    Drop {
        /// The caller's tag.
        tag: u64,
        /// Why.
        reason: DropReason,
    },
}

/// Counters of one direction (what `lab status` shows per port). The collision and error
/// counters stay zero on a full-duplex direction; on a shared medium (half duplex, hub,
/// duplex mismatch) they are the MAC's, as seed 003 Table 7 lists them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DirectionCounters {
    /// Frames offered.
    pub frames_in: u64,
    /// Bytes offered (TAP frame bytes).
    pub bytes_in: u64,
    /// Frames delivered (scheduled for delivery).
    pub frames_out: u64,
    /// Bytes delivered.
    pub bytes_out: u64,
    /// Frames dropped because the queue was full.
    pub drops_queue: u64,
    /// Frames lost to the configured loss.
    pub drops_loss: u64,
    /// Frames the medium gave up on (collisions).
    pub drops_medium: u64,
    /// Frames larger than the MTU.
    pub drops_too_big: u64,
    /// Frames refused because the direction already held as many frames in flight as its
    /// rate, delay and queue allow (the emulator's memory bound, `Link::in_flight_frames`).
    pub drops_memory: u64,
    /// Frames waiting after the last arrival.
    pub queue_frames: u64,
    /// Bytes waiting after the last arrival.
    pub queue_bytes: u64,
    /// Most frames ever waiting.
    pub queue_frames_max: u64,
    /// Total time the medium was held, nanoseconds (utilization = this / elapsed).
    pub busy_ns: u64,
    /// Collisions this port's MAC took part in.
    pub collisions: u64,
    /// Of which late (after the first 512 bit times of the frame).
    pub late_collisions: u64,
    /// Frames dropped after 16 collisions (also in `drops_medium`).
    pub excessive_collisions: u64,
    /// Frames this port received with a bad FCS (truncated by a collision).
    pub fcs_errors: u64,
    /// Collision fragments shorter than 64 bytes this port received.
    pub runts: u64,
    /// Frames this port received intact (shared media only).
    pub frames_received: u64,
    /// Shared media only: per frame sent successfully, the time from the MAC's first attempt
    /// at it (the frame at the head of the station's queue, deferral included) to the end of
    /// its successful transmission. Seed 000 §3.3's transmission delay, measured where the
    /// seed measured it, not at the TAP hand-off.
    pub delay_access: DelaySums,
    /// Shared media only: per frame sent successfully, the time from its offer to the
    /// station's queue (read from the TAP, or released by the host's CPU model) to the end of
    /// its successful transmission: `delay_access` plus the wait in the station's queue.
    pub delay_queued: DelaySums,
    /// Shared media only: times the station's MAC finished a frame and found none waiting
    /// (its generator had fallen behind, or stopped).
    pub ran_dry: u64,
    /// What the active queue management did; absent on a drop-tail direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm: Option<AqmStats>,
    /// The queue's delay sampled every millisecond ([`super::occupancy`]): how many samples
    /// so far (full-duplex directions; zero on a shared medium).
    pub queue_delay_samples: u64,
    /// Their sum, nanoseconds: the mean over the time between two readings is the difference
    /// of this over the difference of `queue_delay_samples`.
    pub queue_delay_sum_ns: u64,
    /// The last sample, nanoseconds: what a frame arriving then waited before its first bit.
    pub queue_delay_ns: u64,
}

/// A frame in a router's processing, not yet at the AQM queue.
#[derive(Debug, Clone, Copy)]
struct Pending {
    ready: Nanos,
    len: u64,
    hash: u32,
    tag: u64,
}

/// The queue of a direction with active queue management, and its event state.
#[derive(Debug, Clone)]
struct AqmPath {
    aqm: Aqm<u64>,
    kind: AqmKind,
    /// The flow hash's perturbation (FQ-CoDel).
    perturbation: u64,
    /// Frames in processing, in order of the instant they reach the queue.
    pending: VecDeque<Pending>,
    last_ready: Nanos,
    /// When the wire finishes its current frame: the next dequeue, if anything is queued.
    wire_free: Nanos,
    /// Wire bytes queued (the unit of `queue_bytes`).
    queued_wire: u64,
    dropped: Vec<Packet<u64>>,
}

#[derive(Debug, Clone, Copy)]
struct InSystem {
    start: Nanos,
    end: Nanos,
    bytes: u64,
}

/// One direction of a link.
#[derive(Debug, Clone)]
pub struct Direction<M: Medium = FullDuplex> {
    config: DirectionConfig,
    layer: LinkLayer,
    max_frame: u64,
    medium: M,
    rng: SplitMix64,
    processor_free: Nanos,
    in_system: VecDeque<InSystem>,
    in_system_bytes: u64,
    hidden: Vec<FullDuplex>,
    carry: u128,
    counters: DirectionCounters,
    aqm: Option<Box<AqmPath>>,
    occupancy: QueueDelaySampler,
}

impl Direction<FullDuplex> {
    /// A full-duplex direction.
    pub fn new(config: DirectionConfig, layer: LinkLayer, mtu: u32) -> Self {
        Direction::with_medium(config, layer, mtu, FullDuplex::default())
    }
}

impl<M: Medium> Direction<M> {
    /// A direction whose medium access is decided by `medium`.
    pub fn with_medium(config: DirectionConfig, layer: LinkLayer, mtu: u32, medium: M) -> Self {
        Direction {
            config,
            layer,
            max_frame: u64::from(mtu) + TAP_ETHERNET_HEADER + 4,
            medium,
            rng: SplitMix64::new(config.seed),
            processor_free: Nanos(0),
            in_system: VecDeque::new(),
            in_system_bytes: 0,
            hidden: vec![FullDuplex::default(); usize::from(config.hidden_hops)],
            carry: 0,
            counters: DirectionCounters::default(),
            aqm: None,
            occupancy: QueueDelaySampler::default(),
        }
    }

    /// The same direction with active queue management: frames then go through
    /// [`Direction::enqueue`] and [`Direction::advance`] instead of [`Direction::offer`]. The
    /// direction's queue limit stays the hard limit; FQ-CoDel hashes flows with `perturbation`
    /// (the link's: `config.perturbation`, or one the lab drew at random when it started).
    /// CoDel's "one MTU" is an MTU-sized packet with its Ethernet header.
    pub fn with_aqm(mut self, config: &AqmConfig, perturbation: u64) -> Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let codel = CodelParams {
            target_ns: nanos(config.target),
            interval_ns: nanos(config.interval),
            mtu_bytes: self.max_frame - 4,
        };
        let aqm = match config.kind {
            AqmKind::Codel => Aqm::Codel(Codel::new(codel)),
            AqmKind::FqCodel => Aqm::FqCodel(FqCodel::new(FqCodelParams {
                codel,
                flows: config.flows,
                quantum: config.quantum,
                // A packet limit is FQ-CoDel's own limit (the fattest queue pays); a byte
                // limit is checked here, with the RFC's default packet limit beside it.
                limit: match self.config.queue {
                    QueueLimit::Packets(p) => p,
                    QueueLimit::Bytes(_) => super::aqm::DEFAULT_LIMIT,
                },
                drop_batch: super::aqm::DEFAULT_DROP_BATCH,
                perturbation,
            })),
        };
        self.counters.aqm = Some(AqmStats::default());
        self.aqm = Some(Box::new(AqmPath {
            aqm,
            kind: config.kind,
            perturbation,
            pending: VecDeque::new(),
            last_ready: Nanos(0),
            wire_free: Nanos(0),
            queued_wire: 0,
            // A whole overflow batch fits without a reallocation on the data path.
            dropped: Vec::with_capacity(super::aqm::DEFAULT_DROP_BATCH as usize + 1),
        }));
        self
    }

    /// True if this direction runs active queue management (the event path).
    pub fn has_aqm(&self) -> bool {
        self.aqm.is_some()
    }

    /// The event path: frame `frame` (tagged `tag` by the caller) arrived at `now`;
    /// `processing` is the router cost before it reaches the queue. Runs the queue up to `now`
    /// first, so arrivals and departures are taken in time order; what was decided is pushed
    /// onto `out`.
    pub fn enqueue(
        &mut self,
        now: Nanos,
        frame: &[u8],
        processing: Duration,
        tag: u64,
        out: &mut Vec<Event>,
    ) {
        let tap_len = frame.len() as u64;
        self.counters.frames_in += 1;
        self.counters.bytes_in += tap_len;
        if tap_len > self.max_frame {
            self.counters.drops_too_big += 1;
            out.push(Event::Drop {
                tag,
                reason: DropReason::TooBig,
            });
            return;
        }
        self.advance(now, out);
        let ready = if processing.is_zero() {
            now
        } else {
            let done = now.max(self.processor_free).after(processing);
            self.processor_free = done;
            done
        };
        let path = self
            .aqm
            .as_mut()
            .expect("enqueue is for a direction with AQM");
        // The queue is FIFO in arrival order: a frame that skipped processing does not
        // overtake one still in it.
        let ready = ready.max(path.last_ready);
        path.last_ready = ready;
        let hash = match path.kind {
            AqmKind::FqCodel => FlowKey::of_frame(frame).hash(path.perturbation),
            AqmKind::Codel => 0,
        };
        path.pending.push_back(Pending {
            ready,
            len: tap_len,
            hash,
            tag,
        });
        self.advance(now, out);
    }

    /// When the event path next has something to do (a frame reaching the queue, or the wire
    /// freeing with frames queued); `None` while idle.
    pub fn next_event(&self) -> Option<Nanos> {
        let path = self.aqm.as_ref()?;
        let arrival = path.pending.front().map(|p| p.ready);
        let departure = (!path.aqm.is_empty()).then_some(path.wire_free);
        match (arrival, departure) {
            (Some(a), Some(d)) => Some(a.min(d)),
            (a, d) => a.or(d),
        }
    }

    /// Runs the event path up to `now`: every arrival and departure due by then, each at its
    /// own instant (arrivals first on a tie, as the drop-tail path lets a frame arriving as
    /// the wire frees go next).
    pub fn advance(&mut self, now: Nanos, out: &mut Vec<Event>) {
        let Some(mut path) = self.aqm.take() else {
            return;
        };
        loop {
            let arrival = path.pending.front().map(|p| p.ready).filter(|&r| r <= now);
            let departure = (!path.aqm.is_empty())
                .then_some(path.wire_free)
                .filter(|&t| t <= now);
            let at = match (arrival, departure) {
                (Some(a), d) if d.is_none_or(|d| a <= d) => {
                    self.occupancy.advance(a, &mut self.counters);
                    self.admit(&mut path, out);
                    a
                }
                (_, Some(d)) => {
                    self.occupancy.advance(d, &mut self.counters);
                    self.serve(&mut path, d, out);
                    d
                }
                _ => break,
            };
            // The work left: the frame on the wire, then every byte queued.
            let queued = self.serialization_of(path.queued_wire);
            self.occupancy
                .set_work_end(path.wire_free.max(at).after(queued));
        }
        self.note_aqm(&path, false);
        self.aqm = Some(path);
    }

    /// Depth and AQM counters after an event. A frame just admitted to an idle wire (`idle`)
    /// is alone in the queue and leaves at once: it is not counted as waiting.
    fn note_aqm(&mut self, path: &AqmPath, idle: bool) {
        if idle {
            self.note_depth(path.aqm.len() as u64 - 1, 0);
        } else {
            self.note_depth(path.aqm.len() as u64, path.queued_wire);
        }
        let c = path.aqm.counters();
        let flows = path.aqm.active_flows() as u64;
        let stats = self.counters.aqm.get_or_insert_default();
        stats.drops = c.codel_drops;
        stats.overflow_drops = c.overflow_drops;
        stats.ecn_marks = c.ecn_marks;
        stats.flows = flows;
        stats.flows_max = stats.flows_max.max(flows);
    }

    /// The next pending frame reaches the queue.
    fn admit(&mut self, path: &mut AqmPath, out: &mut Vec<Event>) {
        let p = path.pending.pop_front().expect("a pending frame");
        let wire = self.wire_bytes(p.len);
        // A frame that finds the wire idle and nothing queued goes at once: the dequeue
        // happens at its arrival, and no limit can refuse it.
        let idle = path.aqm.is_empty() && path.wire_free <= p.ready;
        if idle {
            path.wire_free = p.ready;
        }
        let mut dropped = std::mem::take(&mut path.dropped);
        match (&mut path.aqm, self.config.queue) {
            (Aqm::Codel(_), limit) => {
                let full = match limit {
                    QueueLimit::Packets(l) => path.aqm.len() as u64 >= u64::from(l),
                    QueueLimit::Bytes(l) => path.queued_wire + wire > l,
                };
                if full && !idle {
                    // The hard limit: CoDel alone tail-drops, as the drop-tail queue would.
                    self.counters.drops_queue += 1;
                    out.push(Event::Drop {
                        tag: p.tag,
                        reason: DropReason::QueueFull,
                    });
                    path.dropped = dropped;
                    return;
                }
                path.aqm
                    .enqueue(p.ready.0, p.len, p.hash, p.tag, &mut dropped);
                path.queued_wire += wire;
            }
            (Aqm::FqCodel(fq), limit) => {
                // Over a packet limit FQ-CoDel drops the head of its fattest queue itself;
                // over a byte limit it is asked to here, until the frames fit.
                fq.enqueue(p.ready.0, p.len, p.hash, p.tag, &mut dropped);
                path.queued_wire += wire;
                if let QueueLimit::Bytes(l) = limit {
                    let mut over = path.queued_wire;
                    for d in &dropped {
                        over -= self.wire_bytes(d.len);
                    }
                    while over > l && !(idle && fq.len() == 1) {
                        let before = dropped.len();
                        if !fq.drop_fattest(&mut dropped) {
                            break;
                        }
                        for d in &dropped[before..] {
                            over -= self.wire_bytes(d.len);
                        }
                    }
                }
            }
        }
        for d in dropped.drain(..) {
            path.queued_wire -= self.wire_bytes(d.len);
            self.counters.drops_queue += 1;
            out.push(Event::Drop {
                tag: d.payload,
                reason: DropReason::QueueFull,
            });
        }
        path.dropped = dropped;
        self.note_aqm(path, idle);
    }

    /// The wire is free at `t` with frames queued: the AQM picks the next one (dropping what
    /// CoDel drops), and it is serialized from `t`.
    fn serve(&mut self, path: &mut AqmPath, t: Nanos, out: &mut Vec<Event>) {
        let mut dropped = std::mem::take(&mut path.dropped);
        let packet = path.aqm.dequeue(t.0, &mut dropped);
        for d in dropped.drain(..) {
            path.queued_wire -= self.wire_bytes(d.len);
            out.push(Event::Drop {
                tag: d.payload,
                reason: DropReason::Aqm,
            });
        }
        path.dropped = dropped;
        // Nothing left (CoDel dropped the rest): the wire stays free from `t`, and the next
        // arrival finds it idle.
        let Some(packet) = packet else {
            return;
        };
        let wire = self.wire_bytes(packet.len);
        path.queued_wire -= wire;
        let hold = self.serialization(wire);
        match self.medium.transmit(t, hold) {
            Transmission::Lost { at, reason } => {
                path.wire_free = at.max(t);
                self.counters.drops_medium += 1;
                out.push(Event::Drop {
                    tag: packet.payload,
                    reason: DropReason::Medium(reason),
                });
            }
            Transmission::Sent { start, end } => {
                path.wire_free = end;
                self.counters.busy_ns += end.minus(start) as u64;
                if self.config.loss > 0.0 && self.rng.next_f64() < self.config.loss {
                    self.counters.drops_loss += 1;
                    out.push(Event::Drop {
                        tag: packet.payload,
                        reason: DropReason::Loss,
                    });
                    return;
                }
                self.counters.frames_out += 1;
                self.counters.bytes_out += packet.len;
                let mut last_bit = end;
                for hop in &mut self.hidden {
                    last_bit = hop.transmit(last_bit, hold).end();
                }
                out.push(Event::Deliver {
                    tag: packet.payload,
                    at: last_bit.after(self.config.delay),
                });
            }
        }
    }

    /// Bytes a TAP frame of `tap_len` bytes holds the medium for.
    pub fn wire_bytes(&self, tap_len: u64) -> u64 {
        let packet = tap_len.saturating_sub(TAP_ETHERNET_HEADER);
        match self.layer {
            LinkLayer::Serial => packet.max(1),
            ethernet => ethernet.frame(packet).wire,
        }
    }

    /// Serialization time of `wire` bytes at the link's rate, without touching the carry (for
    /// the occupancy sampler).
    fn serialization_of(&self, wire: u64) -> Duration {
        let rate = u128::from(self.config.rate.bits_per_second().max(1));
        Duration::from_nanos(
            u64::try_from(u128::from(wire) * 8 * 1_000_000_000 / rate).unwrap_or(u64::MAX),
        )
    }

    /// Serialization time of `wire` bytes, with the sub-nanosecond remainder carried to the
    /// next frame so that a long run keeps the exact rate.
    fn serialization(&mut self, wire: u64) -> Duration {
        let numerator = u128::from(wire) * 8 * 1_000_000_000 + self.carry;
        let rate = u128::from(self.config.rate.bits_per_second());
        self.carry = numerator % rate;
        Duration::from_nanos(u64::try_from(numerator / rate).unwrap_or(u64::MAX))
    }

    /// A frame of `tap_len` bytes arrived while the direction already held its bound of frames
    /// in flight: it is dropped before it reaches the queue, and counted.
    pub fn refuse_memory(&mut self, tap_len: u64) {
        self.counters.frames_in += 1;
        self.counters.bytes_in += tap_len;
        self.counters.drops_memory += 1;
    }

    /// Counters so far.
    pub fn counters(&self) -> DirectionCounters {
        self.counters
    }

    /// A frame of `tap_len` bytes arrived at `now`; `processing` is the router cost to apply
    /// before it reaches the output queue (zero on a host's egress). Decides its fate.
    pub fn offer(&mut self, now: Nanos, tap_len: u64, processing: Duration) -> Verdict {
        self.counters.frames_in += 1;
        self.counters.bytes_in += tap_len;
        if tap_len > self.max_frame {
            self.counters.drops_too_big += 1;
            return Verdict::Drop(DropReason::TooBig);
        }
        // A router handles one packet at a time: processing queues behind the previous one.
        let ready = if processing.is_zero() {
            now
        } else {
            let done = now.max(self.processor_free).after(processing);
            self.processor_free = done;
            done
        };
        self.occupancy.advance(ready, &mut self.counters);
        let (waiting_frames, waiting_bytes) = self.waiting_at(ready);
        let wire = self.wire_bytes(tap_len);
        let full = match self.config.queue {
            QueueLimit::Packets(limit) => waiting_frames >= u64::from(limit),
            QueueLimit::Bytes(limit) => waiting_bytes + wire > limit,
        };
        // A frame that finds the wire idle goes at once and never waits in the queue.
        let wire_idle = self.in_system.is_empty();
        if full && !wire_idle {
            self.counters.drops_queue += 1;
            self.note_depth(waiting_frames, waiting_bytes);
            return Verdict::Drop(DropReason::QueueFull);
        }
        let hold = self.serialization(wire);
        match self.medium.transmit(ready, hold) {
            Transmission::Lost { reason, .. } => {
                self.counters.drops_medium += 1;
                Verdict::Drop(DropReason::Medium(reason))
            }
            Transmission::Sent { start, end } => {
                self.in_system.push_back(InSystem {
                    start,
                    end,
                    bytes: wire,
                });
                self.in_system_bytes += wire;
                self.occupancy.set_work_end(end);
                self.counters.busy_ns += end.minus(start) as u64;
                let waiting = u64::from(start > ready);
                self.note_depth(waiting_frames + waiting, waiting_bytes + waiting * wire);
                if self.config.loss > 0.0 && self.rng.next_f64() < self.config.loss {
                    self.counters.drops_loss += 1;
                    return Verdict::Drop(DropReason::Loss);
                }
                self.counters.frames_out += 1;
                self.counters.bytes_out += tap_len;
                // Each hidden store-and-forward hop receives the frame whole, then sends it
                // again at the same rate once it has finished the previous frame (its own
                // full-duplex wire, with room for any queue).
                let mut last_bit = end;
                for hop in &mut self.hidden {
                    last_bit = hop.transmit(last_bit, hold).end();
                }
                Verdict::Deliver {
                    at: last_bit.after(self.config.delay),
                }
            }
        }
    }

    /// A super-packet of segments of `lens` TAP bytes each arrived at `now`: each segment is
    /// offered as the frame it stands for, in order, at the same instant (a stack without
    /// offloads hands the segments of one send to its device back to back, as one burst), so
    /// the wire is charged header, FCS, preamble and gap per segment, a queue limit in frames
    /// counts every segment, and loss and drops fall on single segments: exactly what
    /// [`Direction::offer`] decides for the same frames offered one by one. The verdicts are
    /// pushed onto `out`, one per segment.
    pub fn offer_segments(
        &mut self,
        now: Nanos,
        lens: impl IntoIterator<Item = u64>,
        processing: Duration,
        out: &mut Vec<Verdict>,
    ) {
        for len in lens {
            out.push(self.offer(now, len, processing));
        }
    }

    fn note_depth(&mut self, frames: u64, bytes: u64) {
        self.counters.queue_frames = frames;
        self.counters.queue_bytes = bytes;
        self.counters.queue_frames_max = self.counters.queue_frames_max.max(frames);
    }

    /// Frames and wire bytes waiting (not yet started) at `t`, forgetting finished ones.
    fn waiting_at(&mut self, t: Nanos) -> (u64, u64) {
        while let Some(front) = self.in_system.front() {
            if front.end > t {
                break;
            }
            self.in_system_bytes -= front.bytes;
            self.in_system.pop_front();
        }
        match self.in_system.front() {
            None => (0, 0),
            Some(front) if front.start <= t => (
                self.in_system.len() as u64 - 1,
                self.in_system_bytes - front.bytes,
            ),
            Some(_) => (self.in_system.len() as u64, self.in_system_bytes),
        }
    }
}
