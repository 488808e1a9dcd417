//! A shared medium driven from outside: N stations, each a [`crate::mac`] CSMA/CD (or
//! full-duplex) MAC with a FIFO, on one cable, fed with frames that somebody else offers at
//! given instants. This is what the lab's emulator runs, in real time, for a half-duplex link,
//! a hub (shared segment) and a duplex-mismatch link; the simulator runs it in virtual time,
//! and because the model is the same code and its only inputs are the offered frames, their
//! instants and the seed, both give the same collisions and deliveries.
//!
//! Signals travel as in [`crate::network`]: a station's start and end of transmission reach
//! each other station after the propagation delay of [`crate::bus::Propagation`], and the
//! receiving MAC reacts (defers, detects a collision, or counts the gap). What each receiver
//! makes of a signal follows seed 003 §4.4 and §9 (Table 7):
//!
//! * A signal that ended normally, overlapped by nothing at the receiver, and (at a half-duplex
//!   receiver) not overlapped by the receiver's own transmission, is a frame received.
//! * A half-duplex receiver that transmits while a signal arrives treats the overlap as a
//!   collision (its MAC counts it, late if past the slot) and discards what it was receiving.
//! * A full-duplex receiver ignores its own transmission but receives the other end's jammed
//!   (truncated) frame: an FCS error, or a runt if fewer than 64 bytes got through.
//! * A bystander on a hub that sees a collision fragment counts it the same way.
//!
//! Time is [`SimTime`]; the caller advances the model with [`Segment::advance`] (all events up
//! to an instant) and collects what happened with [`Segment::drain`].

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::bus::{Cable, Propagation};
use crate::engine::{EventQueue, Model, Simulation};
use crate::mac::{Mac, MacDuplex, MacIo, MacParams, SignalEnd, TxOutcome};
use crate::time::{SimSpan, SimTime};
use crate::traffic::below;

/// How a segment is built.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentSetup {
    /// MAC timing (rate, slot, gap, attempt limit).
    pub mac: MacParams,
    /// Duplex of each station's MAC; the number of stations is its length.
    pub duplex: Vec<MacDuplex>,
    /// Where the stations sit on the cable.
    pub cable: Cable,
    /// Frames each station holds waiting for its MAC (drop-tail beyond).
    pub queue_frames: usize,
    /// Seed of the backoff random numbers.
    pub seed: u64,
}

/// Why a frame offered to the segment was not delivered by its sender's MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentLoss {
    /// The station's queue was full.
    QueueFull,
    /// 16 attempts, 16 collisions.
    ExcessiveCollisions,
    /// Abandoned after a late collision.
    LateCollision,
}

/// Something that happened on the segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentOutput {
    /// Station `to` received frame `tag` intact; its last bit arrived at `at`.
    Delivered {
        /// The caller's tag of the frame.
        tag: u64,
        /// Sending station.
        from: usize,
        /// Receiving station.
        to: usize,
        /// When the last bit arrived.
        at: SimTime,
    },
    /// The sender's MAC finished frame `tag` successfully at `at` (deliveries follow after the
    /// propagation delay).
    Sent {
        /// The caller's tag.
        tag: u64,
        /// Sending station.
        from: usize,
        /// When its last bit left.
        at: SimTime,
        /// When the MAC was handed the frame, the frame then at the head of the station's
        /// queue (its first attempt, deferral included): `at` less this is seed 000 §3.3's
        /// transmission delay.
        first_attempt: SimTime,
    },
    /// Frame `tag` is gone.
    Lost {
        /// The caller's tag.
        tag: u64,
        /// Sending station.
        from: usize,
        /// When.
        at: SimTime,
        /// Why.
        reason: SegmentLoss,
    },
}

/// What one station counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StationCounters {
    /// Frames offered to the station.
    pub offered: u64,
    /// Frames its MAC sent without a collision on the last attempt.
    pub sent: u64,
    /// Collisions its MAC took part in.
    pub collisions: u64,
    /// Of which late (past the first 512 bit times).
    pub late_collisions: u64,
    /// Frames dropped after 16 attempts.
    pub excessive_collisions: u64,
    /// Frames abandoned after a late collision.
    pub late_aborts: u64,
    /// Frames dropped because the queue was full.
    pub queue_drops: u64,
    /// Frames waiting now.
    pub queue_frames: u64,
    /// Most frames ever waiting.
    pub queue_frames_max: u64,
    /// Frames received intact.
    pub received: u64,
    /// Frames received with a bad FCS (64 bytes or more of a truncated frame).
    pub fcs_errors: u64,
    /// Collision fragments shorter than 64 bytes.
    pub runts: u64,
    /// Time its own signal was on the medium, picoseconds.
    pub busy_ps: u64,
    /// Times its MAC finished a frame (sent or given up) and found none waiting: the station
    /// stopped contending until its next offer. Always-full stations (seed 000's generators,
    /// the simulator's saturated hosts) never do; a lab station whose generator falls behind
    /// does, and re-enters contention with a fresh frame.
    #[serde(default)]
    pub ran_dry: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Offer {
        station: usize,
        tag: u64,
        bits: u64,
    },
    Edge {
        to: usize,
        from: usize,
        tag: u64,
        on: bool,
        how: SignalEnd,
    },
    Timer {
        station: usize,
        generation: u32,
    },
}

#[derive(Debug, Clone, Copy)]
struct Reception {
    start: SimTime,
    /// Another signal overlapped it at this receiver.
    overlapped: bool,
    /// This (half-duplex) receiver transmitted during it.
    own: bool,
}

struct Station {
    mac: Mac,
    duplex: MacDuplex,
    queue: VecDeque<(u64, u64)>,
    in_flight: Option<u64>,
    signal_since: SimTime,
    /// Receptions in progress, by sender.
    rx: Vec<Option<Reception>>,
    counters: StationCounters,
}

struct SegmentModel {
    stations: Vec<Station>,
    propagation: Propagation,
    params: MacParams,
    queue_frames: usize,
    rng: ChaCha8Rng,
    out: Vec<SegmentOutput>,
}

struct Io<'a> {
    station: usize,
    tag: u64,
    queue: &'a mut EventQueue<Event>,
    propagation: &'a Propagation,
    rng: &'a mut ChaCha8Rng,
}

impl Io<'_> {
    fn edge(&mut self, on: bool, how: SignalEnd) {
        let now = self.queue.now();
        for to in 0..self.propagation.stations() {
            if to != self.station {
                let at = now + self.propagation.delay(self.station, to);
                self.queue.schedule(
                    at,
                    Event::Edge {
                        to,
                        from: self.station,
                        tag: self.tag,
                        on,
                        how,
                    },
                );
            }
        }
    }
}

impl MacIo for Io<'_> {
    fn now(&self) -> SimTime {
        self.queue.now()
    }
    fn set_timer(&mut self, at: SimTime, generation: u32) {
        self.queue.schedule(
            at,
            Event::Timer {
                station: self.station,
                generation,
            },
        );
    }
    fn start_signal(&mut self) {
        self.edge(true, SignalEnd::Complete);
    }
    fn end_signal(&mut self, how: SignalEnd) {
        self.edge(false, how);
    }
    fn random_below(&mut self, n: u64) -> u64 {
        below(self.rng, n)
    }
}

impl SegmentModel {
    fn io<'a>(
        station: usize,
        tag: u64,
        queue: &'a mut EventQueue<Event>,
        propagation: &'a Propagation,
        rng: &'a mut ChaCha8Rng,
    ) -> Io<'a> {
        Io {
            station,
            tag,
            queue,
            propagation,
            rng,
        }
    }

    /// Hands the next waiting frame to the MAC if it is free.
    fn kick(&mut self, station: usize, queue: &mut EventQueue<Event>) {
        let s = &mut self.stations[station];
        if s.in_flight.is_some() {
            return;
        }
        let Some((tag, bits)) = s.queue.pop_front() else {
            return;
        };
        s.counters.queue_frames = s.queue.len() as u64;
        s.in_flight = Some(tag);
        let was = s.mac.is_transmitting();
        let mut io = Self::io(station, tag, queue, &self.propagation, &mut self.rng);
        s.mac.send(&mut io, bits).expect("the MAC was free");
        self.note_start(station, was, queue.now());
    }

    /// After a MAC call: if it started transmitting, a half-duplex station spoils what it was
    /// receiving (and a full-duplex one does not).
    fn note_start(&mut self, station: usize, was_transmitting: bool, now: SimTime) {
        let s = &mut self.stations[station];
        if !was_transmitting && s.mac.is_transmitting() {
            s.signal_since = now;
            if s.duplex == MacDuplex::Half {
                for r in s.rx.iter_mut().flatten() {
                    r.own = true;
                }
            }
        }
        if was_transmitting && !s.mac.is_transmitting() {
            s.counters.busy_ps += now.since(s.signal_since).ps();
        }
    }

    fn edge(
        &mut self,
        to: usize,
        from: usize,
        tag: u64,
        on: bool,
        how: SignalEnd,
        queue: &mut EventQueue<Event>,
    ) {
        let now = queue.now();
        let params = self.params;
        let s = &mut self.stations[to];
        let in_flight = s.in_flight.unwrap_or(u64::MAX);
        let mut io = Self::io(to, in_flight, queue, &self.propagation, &mut self.rng);
        if on {
            let busy = s.rx.iter().any(Option::is_some);
            for r in s.rx.iter_mut().flatten() {
                r.overlapped = true;
            }
            s.rx[from] = Some(Reception {
                start: now,
                overlapped: busy,
                own: s.duplex == MacDuplex::Half && s.mac.is_transmitting(),
            });
            let was = s.mac.is_transmitting();
            s.mac.carrier_on(&mut io);
            self.note_start(to, was, now);
            return;
        }
        let was = s.mac.is_transmitting();
        s.mac.carrier_off(&mut io);
        let reception = s.rx[from].take();
        self.note_start(to, was, now);
        let s = &mut self.stations[to];
        let Some(r) = reception else {
            return;
        };
        if how == SignalEnd::Complete && !r.overlapped && !r.own {
            s.counters.received += 1;
            self.out.push(SegmentOutput::Delivered {
                tag,
                from,
                to,
                at: now,
            });
        } else if !r.own {
            let frame_bits = now
                .since(r.start)
                .ps()
                .saturating_sub(params.bits(params.preamble_bits).ps())
                / params.bit_time.ps();
            if frame_bits < 64 * 8 {
                s.counters.runts += 1;
            } else {
                s.counters.fcs_errors += 1;
            }
        }
    }

    fn timer(&mut self, station: usize, generation: u32, queue: &mut EventQueue<Event>) {
        let now = queue.now();
        let s = &mut self.stations[station];
        let tag = s.in_flight.unwrap_or(u64::MAX);
        let was = s.mac.is_transmitting();
        let mut io = Self::io(station, tag, queue, &self.propagation, &mut self.rng);
        let report = s.mac.timer(&mut io, generation);
        self.note_start(station, was, now);
        let Some(report) = report else {
            return;
        };
        let s = &mut self.stations[station];
        s.in_flight = None;
        s.counters.collisions += u64::from(report.collisions);
        s.counters.late_collisions += u64::from(report.late_collisions);
        let output = match report.outcome {
            TxOutcome::Sent => {
                s.counters.sent += 1;
                SegmentOutput::Sent {
                    tag,
                    from: station,
                    at: now,
                    first_attempt: report.first_attempt,
                }
            }
            TxOutcome::Dropped => {
                s.counters.excessive_collisions += 1;
                SegmentOutput::Lost {
                    tag,
                    from: station,
                    at: now,
                    reason: SegmentLoss::ExcessiveCollisions,
                }
            }
            TxOutcome::LateCollision => {
                s.counters.late_aborts += 1;
                SegmentOutput::Lost {
                    tag,
                    from: station,
                    at: now,
                    reason: SegmentLoss::LateCollision,
                }
            }
        };
        self.out.push(output);
        self.kick(station, queue);
        let s = &mut self.stations[station];
        if s.in_flight.is_none() {
            s.counters.ran_dry += 1;
        }
    }

    fn offer(&mut self, station: usize, tag: u64, bits: u64, queue: &mut EventQueue<Event>) {
        let s = &mut self.stations[station];
        s.counters.offered += 1;
        if s.in_flight.is_some() && s.queue.len() >= self.queue_frames {
            s.counters.queue_drops += 1;
            self.out.push(SegmentOutput::Lost {
                tag,
                from: station,
                at: queue.now(),
                reason: SegmentLoss::QueueFull,
            });
            return;
        }
        s.queue.push_back((tag, bits));
        s.counters.queue_frames = s.queue.len() as u64;
        s.counters.queue_frames_max = s.counters.queue_frames_max.max(s.counters.queue_frames);
        self.kick(station, queue);
    }
}

impl Model for SegmentModel {
    type Event = Event;

    fn handle(&mut self, event: Event, queue: &mut EventQueue<Event>) {
        match event {
            Event::Offer { station, tag, bits } => self.offer(station, tag, bits, queue),
            Event::Edge {
                to,
                from,
                tag,
                on,
                how,
            } => self.edge(to, from, tag, on, how, queue),
            Event::Timer {
                station,
                generation,
            } => self.timer(station, generation, queue),
        }
    }
}

/// A shared medium and its stations.
pub struct Segment {
    sim: Simulation<SegmentModel>,
}

impl Segment {
    /// A quiet segment at time zero.
    pub fn new(setup: &SegmentSetup) -> Segment {
        let n = setup.duplex.len();
        let stations = setup
            .duplex
            .iter()
            .map(|&duplex| Station {
                mac: Mac::new(setup.mac, duplex),
                duplex,
                queue: VecDeque::new(),
                in_flight: None,
                signal_since: SimTime::ZERO,
                rx: vec![None; n],
                counters: StationCounters::default(),
            })
            .collect();
        Segment {
            sim: Simulation::new(SegmentModel {
                stations,
                propagation: Propagation::new(&setup.cable, n),
                params: setup.mac,
                queue_frames: setup.queue_frames,
                rng: ChaCha8Rng::seed_from_u64(setup.seed),
                out: Vec::new(),
            }),
        }
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.sim.model.stations.len()
    }

    /// Offers station `station` a frame occupying `carrier_bits` bit times (preamble, frame,
    /// FCS) at `at` (not before the model's present); `tag` comes back in the outputs.
    pub fn offer(&mut self, at: SimTime, station: usize, tag: u64, carrier_bits: u64) {
        self.sim.schedule(
            at.max(self.sim.now()),
            Event::Offer {
                station,
                tag,
                bits: carrier_bits,
            },
        );
    }

    /// Runs every event up to and including `until`.
    pub fn advance(&mut self, until: SimTime) {
        self.sim.step_until(until);
    }

    /// Runs until nothing is left to happen.
    pub fn run(&mut self) {
        self.sim.run();
    }

    /// The model's present.
    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// When the next event is due, if any.
    pub fn next_event(&self) -> Option<SimTime> {
        self.sim.next_event_time()
    }

    /// Takes what happened since the last call, in order.
    pub fn drain(&mut self) -> Vec<SegmentOutput> {
        std::mem::take(&mut self.sim.model.out)
    }

    /// Counters of station `i`.
    pub fn counters(&self, i: usize) -> StationCounters {
        self.sim.model.stations[i].counters
    }

    /// The one-way delay from `from` to the station farthest from it.
    pub fn farthest(&self, from: usize) -> SimSpan {
        let p = &self.sim.model.propagation;
        (0..p.stations())
            .map(|to| p.delay(from, to))
            .max()
            .unwrap_or(SimSpan::ZERO)
    }
}
