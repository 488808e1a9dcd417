//! The medium of a half-duplex link, a duplex-mismatch link or a hub: the simulator's CSMA/CD
//! MAC decides when each frame goes, when frames collide, and when one is lost.
//!
//! A full-duplex direction can decide a frame's fate the moment it arrives ([`super::link`]),
//! because nothing that happens later can change it. On a shared medium it can: a frame that
//! another station starts a few hundred nanoseconds later still collides with it. So this
//! medium is an event model, wirespeed-sim's [`Segment`], that the caller advances with the
//! clock: it offers each frame at its arrival instant, asks when the next event is due, and
//! advances the model to the present. In virtual time (tests) the present jumps; in the lab it
//! is `CLOCK_MONOTONIC`, so the same MAC, with the same seed and the same arrival instants,
//! gives the same collisions and deliveries in both.
//!
//! Each station's frame holds the medium for its preamble, frame and FCS (padded to 64
//! bytes); the MAC adds the 96-bit gap itself (IEEE 802.3 clause 4, seed 003 Table 2).
//!
//! The MAC knows the instant a frame's transmission ended successfully, so the medium measures
//! each station's transmission delays there, as seed 000 §3.3's hosts did ("first attempt to
//! the end of the successful transmission"), rather than where a sender's socket stamps it
//! (the TAP hand-off, before the station's queue and the MAC): `delay_access` from the MAC's
//! first attempt, `delay_queued` from the frame's offer to the station's queue, both in model
//! time, so a late thread does not stretch them.

use wirespeed_model::BitRate;
use wirespeed_sim::bus::{Cable, Placement};
use wirespeed_sim::mac::{MacDuplex, MacParams};
use wirespeed_sim::segment::{Segment, SegmentOutput, SegmentSetup};
use wirespeed_sim::time::{PS_PER_SECOND, SimTime};

use super::clock::Nanos;
use super::link::{DirectionCounters, TAP_ETHERNET_HEADER};
use super::stats::DelaySums;

/// How a shared medium is built.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedConfig {
    /// Bit rate of the medium.
    pub rate: BitRate,
    /// Duplex of each station's MAC (half, or full at one end of a mismatch).
    pub duplex: Vec<MacDuplex>,
    /// Cable length end to end, metres; stations are spread evenly along it.
    pub length_m: f64,
    /// Signal velocity as a fraction of the speed of light.
    pub velocity_factor: f64,
    /// Frames each station holds for its MAC.
    pub queue: u32,
    /// Seed of the backoff.
    pub seed: u64,
    /// MTU of the stations' interfaces.
    pub mtu: u32,
}

/// What the caller must do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedAction {
    /// Hand frame `tag` to station `to`: its last bit arrived at `at`.
    Deliver {
        /// The caller's tag.
        tag: u64,
        /// Sending station.
        from: usize,
        /// Receiving station.
        to: usize,
        /// When it was due.
        at: Nanos,
    },
    /// Nothing will read frame `tag` any more: its buffer may be reused.
    Release {
        /// The caller's tag.
        tag: u64,
    },
}

/// A shared medium with its stations.
pub struct SharedMedium {
    segment: Segment,
    max_frame: u64,
    bytes_in: Vec<u64>,
    bytes_out: Vec<u64>,
    too_big: Vec<u64>,
    /// Lengths and offer instants of frames in flight, by tag, so that delivered bytes and
    /// delays can be counted.
    lengths: std::collections::HashMap<u64, (u64, SimTime)>,
    /// Per station: delays from the MAC's first attempt to the successful end.
    delay_access: Vec<DelaySums>,
    /// Per station: delays from the offer to the successful end.
    delay_queued: Vec<DelaySums>,
    /// Frames sent whose deliveries are all out once the model passes the instant.
    releasing: std::collections::VecDeque<(SimTime, u64)>,
    /// Frames each station may hold waiting.
    queue_limit: u64,
    /// Offers since the last advance, per station (the model queues them when it runs).
    unprocessed: Vec<u64>,
}

/// The simulator's instant of a lab instant.
#[doc(hidden)]
pub fn to_sim(t: Nanos) -> SimTime {
    SimTime::from_ps(t.0.saturating_mul(1000))
}

/// The lab instant of a simulator instant, rounded up to the next nanosecond.
#[doc(hidden)]
pub fn to_nanos(t: SimTime) -> Nanos {
    Nanos(t.ps().div_ceil(1000))
}

/// Bit times a TAP frame of `tap_len` bytes occupies: preamble and SFD, the frame padded to
/// the 60-byte minimum, and the FCS.
pub fn carrier_bits(tap_len: u64) -> u64 {
    (tap_len.max(60) + 4 + 8) * 8
}

impl SharedMedium {
    /// A quiet medium; its clock starts at `start`.
    pub fn new(config: &SharedConfig, start: Nanos) -> SharedMedium {
        let bps = config.rate.bits_per_second().max(1);
        let mut mac = MacParams::table_2(10);
        mac.bits_per_second = bps;
        mac.bit_time = wirespeed_sim::time::SimSpan::from_ps(PS_PER_SECOND / bps);
        let setup = SegmentSetup {
            mac,
            duplex: config.duplex.clone(),
            cable: Cable {
                length_m: config.length_m,
                velocity_factor: config.velocity_factor,
                attach_delay_ns: 0.0,
                tap_delay_ns: 0.0,
                placement: Placement::Even,
            },
            queue_frames: config.queue as usize,
            seed: config.seed,
        };
        let mut segment = Segment::new(&setup);
        segment.advance(to_sim(start));
        let n = config.duplex.len();
        SharedMedium {
            segment,
            max_frame: u64::from(config.mtu) + TAP_ETHERNET_HEADER,
            bytes_in: vec![0; n],
            bytes_out: vec![0; n],
            too_big: vec![0; n],
            lengths: std::collections::HashMap::new(),
            delay_access: vec![DelaySums::default(); n],
            delay_queued: vec![DelaySums::default(); n],
            releasing: std::collections::VecDeque::new(),
            queue_limit: u64::from(config.queue),
            unprocessed: vec![0; n],
        }
    }

    /// Whether station `i`'s queue is full, counting the frames offered since the last
    /// advance: the driver then leaves the station's frames in its device, as a NIC whose
    /// transmit ring is full stops taking frames from its host (and the host's own queue
    /// backs up or drops) rather than taking them to throw them away.
    pub fn full(&self, i: usize) -> bool {
        self.segment.counters(i).queue_frames + self.unprocessed[i] >= self.queue_limit
    }

    /// Station `station` sent a TAP frame of `tap_len` bytes at `now`. Returns false (and
    /// counts it) if the frame is too big for the MTU; the caller then keeps its buffer.
    pub fn offer(&mut self, now: Nanos, station: usize, tap_len: u64, tag: u64) -> bool {
        self.bytes_in[station] += tap_len;
        if tap_len > self.max_frame {
            self.too_big[station] += 1;
            return false;
        }
        // The model queues it at this instant, or at its present if `now` is behind it.
        let offered = to_sim(now).max(self.segment.now());
        self.lengths.insert(tag, (tap_len, offered));
        self.unprocessed[station] += 1;
        self.segment
            .offer(to_sim(now), station, tag, carrier_bits(tap_len));
        true
    }

    /// When the model next has something to do.
    pub fn next_event(&self) -> Option<Nanos> {
        self.segment.next_event().map(to_nanos)
    }

    /// Runs the model up to `now` and returns what to deliver and which buffers are free.
    pub fn advance(&mut self, now: Nanos, actions: &mut Vec<SharedAction>) {
        self.segment.advance(to_sim(now));
        self.unprocessed.iter_mut().for_each(|u| *u = 0);
        for output in self.segment.drain() {
            match output {
                SegmentOutput::Delivered { tag, from, to, at } => {
                    actions.push(SharedAction::Deliver {
                        tag,
                        from,
                        to,
                        at: to_nanos(at),
                    });
                }
                SegmentOutput::Sent {
                    tag,
                    from,
                    at,
                    first_attempt,
                } => {
                    if let Some(&(len, offered)) = self.lengths.get(&tag) {
                        self.bytes_out[from] += len;
                        self.delay_queued[from].add(at.since(offered).seconds());
                    }
                    self.delay_access[from].add(at.since(first_attempt).seconds());
                    // The last delivery of this frame is the one to the farthest station.
                    self.releasing
                        .push_back((at + self.segment.farthest(from), tag));
                }
                SegmentOutput::Lost { tag, .. } => {
                    self.lengths.remove(&tag);
                    actions.push(SharedAction::Release { tag });
                }
            }
        }
        let model_now = self.segment.now();
        while let Some(&(at, tag)) = self.releasing.front() {
            if at > model_now {
                break;
            }
            self.releasing.pop_front();
            self.lengths.remove(&tag);
            actions.push(SharedAction::Release { tag });
        }
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.segment.stations()
    }

    /// Counters of station `i`'s port, in the terms `lab status` shows.
    pub fn counters(&self, i: usize) -> DirectionCounters {
        let c = self.segment.counters(i);
        DirectionCounters {
            frames_in: c.offered + self.too_big[i],
            bytes_in: self.bytes_in[i],
            frames_out: c.sent,
            bytes_out: self.bytes_out[i],
            drops_queue: c.queue_drops,
            drops_loss: 0,
            drops_medium: c.excessive_collisions + c.late_aborts,
            drops_too_big: self.too_big[i],
            drops_memory: 0,
            queue_frames: c.queue_frames,
            queue_bytes: 0,
            queue_frames_max: c.queue_frames_max,
            busy_ns: c.busy_ps / 1000,
            collisions: c.collisions,
            late_collisions: c.late_collisions,
            excessive_collisions: c.excessive_collisions,
            fcs_errors: c.fcs_errors,
            runts: c.runts,
            frames_received: c.received,
            delay_access: self.delay_access[i],
            delay_queued: self.delay_queued[i],
            ran_dry: c.ran_dry,
            aqm: None,
            ..DirectionCounters::default()
        }
    }
}
