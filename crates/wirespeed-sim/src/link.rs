//! A point-to-point link whose two ends may disagree about duplex: the duplex mismatch of
//! Erickson (seed 003, §4.3-4.4 and §8.4).
//!
//! Each end has the MAC of [`crate::mac`]. A full-duplex end transmits whenever it has a frame
//! and ignores what it receives meanwhile. A half-duplex end defers to the other end's signal,
//! and when the other end's signal reaches it while it is transmitting it takes that as a
//! collision: it jams, backs off and retries its frame, and the frame it was receiving is lost
//! (a collision fragment, discarded). On a short cable the other end's signal arrives long
//! after the first 512 bit times of a long frame, so nearly every such collision is *late*.
//! The full-duplex end then receives the half-duplex end's truncated frame plus jam: a runt if
//! fewer than 64 bytes of frame got through, otherwise a frame with a bad FCS. Those are the
//! counters of seed 003's Table 7: late collisions on the half end, CRC errors and runts on the
//! full end.
//!
//! Traffic is a bulk transfer one way with acknowledgements the other, a sketch of TCP's
//! window: the sender keeps at most `window` unacknowledged frames in flight; the receiver
//! sends a 64-byte cumulative acknowledgement for every `ack_every` frames received in order
//! and discards frames out of order; a sender that hears nothing for `rto` goes back to its
//! oldest unacknowledged frame (go-back-N). There is no fast retransmit. That is enough to show the asymmetry the seed
//! measured: data from the half-duplex end collides with every acknowledgement, data from the
//! full-duplex end only with the acknowledgements that the half end manages to start.

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use serde::Serialize;

use crate::SimError;
use crate::bus::SPEED_OF_LIGHT;
use crate::engine::{EventQueue, Model, Simulation};
use crate::mac::{Mac, MacDuplex, MacIo, MacParams, SignalEnd, TxOutcome};
use crate::time::{SimSpan, SimTime};
use crate::traffic::below;

/// Bytes of an acknowledgement frame (the minimum).
const ACK_BYTES: u64 = 64;
/// Preamble and CRC around each frame's bytes on the wire (as in [`crate::traffic`]).
const CARRIER_OVERHEAD: u64 = crate::traffic::CARRIER_OVERHEAD_BYTES;

/// A point-to-point link and a bulk transfer across it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkScenario {
    /// MAC timing.
    pub mac: MacParams,
    /// Duplex of end A (the data sender).
    pub sender: MacDuplex,
    /// Duplex of end B (the data receiver, which sends the acknowledgements).
    pub receiver: MacDuplex,
    /// Cable length, metres.
    pub cable_m: f64,
    /// Data frame length, bytes (the seed's accounting: without the CRC).
    pub frame_bytes: u64,
    /// Frames in flight at most.
    pub window: u32,
    /// Frames per acknowledgement.
    pub ack_every: u32,
    /// Retransmission timeout, nanoseconds.
    pub rto_ns: u64,
    /// Time the receiving host takes to turn a received frame into an acknowledgement,
    /// nanoseconds (interrupt and protocol processing).
    pub ack_delay_ns: u64,
    /// Simulated time before measuring, nanoseconds.
    pub warmup_ns: u64,
    /// Simulated time measured, nanoseconds.
    pub measure_ns: u64,
    /// Seed of the random numbers.
    pub seed: u64,
}

impl LinkScenario {
    /// A 10 Mbit/s link of 100 m carrying 1500-byte frames, a 16-frame window, an
    /// acknowledgement per 2 frames and a 200 ms timeout.
    pub fn new(sender: MacDuplex, receiver: MacDuplex) -> LinkScenario {
        LinkScenario {
            mac: MacParams::table_2(10),
            sender,
            receiver,
            cable_m: 100.0,
            frame_bytes: 1514,
            window: 16,
            ack_every: 2,
            rto_ns: 200_000_000,
            ack_delay_ns: 100_000,
            warmup_ns: 500_000_000,
            measure_ns: 10_000_000_000,
            seed: 1,
        }
    }

    /// The quickest an acknowledgement can come back on an idle link: one data frame and one
    /// acknowledgement on the wire, each with its gap, the receiver's ack delay and the cable
    /// both ways. A timeout below it fires before any frame can be acknowledged, so the sender
    /// only ever retransmits (and the event count grows as 1/rto).
    pub fn shortest_round_trip_ns(&self) -> u64 {
        let bits =
            (self.frame_bytes + ACK_BYTES + 2 * CARRIER_OVERHEAD) * 8 + 2 * self.mac.gap_bits;
        let wire_ps = bits.saturating_mul(self.mac.bit_time.ps());
        let cable_ps = SimSpan::from_seconds(2.0 * self.cable_m / (0.66 * SPEED_OF_LIGHT)).ps();
        (wire_ps.saturating_add(cable_ps) / 1_000).saturating_add(self.ack_delay_ns)
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.frame_bytes < crate::traffic::MIN_LENGTH || self.frame_bytes > 65_535 {
            return Err(SimError::Length {
                bytes: self.frame_bytes,
                min: crate::traffic::MIN_LENGTH,
                max: 65_535,
            });
        }
        if self.window == 0 || self.ack_every == 0 || self.rto_ns == 0 {
            return Err(SimError::Transfer(
                "--window, --ack-every and --rto must each be more than 0",
            ));
        }
        if !(self.cable_m.is_finite() && self.cable_m >= 0.0) {
            return Err(SimError::Cable);
        }
        let floor = self.shortest_round_trip_ns();
        if self.rto_ns < floor {
            return Err(SimError::Rto {
                rto_ns: self.rto_ns,
                floor_ns: floor,
            });
        }
        if self.measure_ns == 0
            || self.measure_ns > crate::MAX_SIMULATED_NS
            || self.warmup_ns > crate::MAX_SIMULATED_NS
        {
            return Err(SimError::Duration);
        }
        Ok(())
    }
}

/// What each end counted in the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EndCounters {
    /// Frames this end sent to the end (its MAC reported success).
    pub frames_sent: u64,
    /// Collisions its MAC took part in.
    pub collisions: u64,
    /// Of which late.
    pub late_collisions: u64,
    /// Frames its MAC gave up after 16 attempts.
    pub excessive_collisions: u64,
    /// Frames its MAC abandoned after a late collision.
    pub aborted_late: u64,
    /// Frames received intact.
    pub frames_received: u64,
    /// Frames received with a bad FCS (cut short by a jam, 64 bytes or more).
    pub fcs_errors: u64,
    /// Fragments shorter than 64 bytes.
    pub runts: u64,
    /// Frames lost because this half-duplex end was transmitting while they arrived.
    pub lost_to_collision: u64,
}

/// The result of a link run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkStats {
    /// Data delivered in order to the receiving application, bytes per second.
    pub goodput_bytes_per_second: f64,
    /// The same as a fraction of the line rate.
    pub goodput_fraction: f64,
    /// Go-back-N timeouts at the sender.
    pub timeouts: u64,
    /// The data sender (end A).
    pub sender: EndCounters,
    /// The data receiver (end B).
    pub receiver: EndCounters,
    /// Simulation events handled.
    pub events: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Data(u64),
    Ack(u64),
}

impl Frame {
    fn bytes(self, data_bytes: u64) -> u64 {
        match self {
            Frame::Data(_) => data_bytes,
            Frame::Ack(_) => ACK_BYTES,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// The far end's signal starts (`on`) or ends at `end`.
    Edge {
        end: usize,
        on: bool,
        frame: Frame,
        how: Option<SignalEnd>,
    },
    Timer {
        end: usize,
        generation: u32,
    },
    Rto {
        generation: u64,
    },
    /// The transfer begins.
    Start,
    /// The receiver's acknowledgement is ready to send.
    SendAck {
        next: u64,
    },
}

struct End {
    mac: Mac,
    duplex: MacDuplex,
    queue: VecDeque<Frame>,
    in_flight: Option<Frame>,
    /// Start of the far end's signal being received, and whether it is already spoiled.
    rx: Option<(SimTime, bool)>,
    counters: EndCounters,
}

struct Link {
    s: LinkScenario,
    ends: [End; 2],
    delay: SimSpan,
    rng: ChaCha8Rng,
    window: (SimTime, SimTime),
    // Sender (end 0) transport state.
    next_seq: u64,
    acked: u64,
    rto_generation: u64,
    timeouts: u64,
    // Receiver (end 1) transport state.
    expected: u64,
    unacked_in_order: u32,
    delivered_bytes: u64,
}

struct EndIo<'a> {
    end: usize,
    frame: Frame,
    queue: &'a mut EventQueue<Event>,
    delay: SimSpan,
    rng: &'a mut ChaCha8Rng,
}

impl MacIo for EndIo<'_> {
    fn now(&self) -> SimTime {
        self.queue.now()
    }
    fn set_timer(&mut self, at: SimTime, generation: u32) {
        self.queue.schedule(
            at,
            Event::Timer {
                end: self.end,
                generation,
            },
        );
    }
    fn start_signal(&mut self) {
        let at = self.queue.now() + self.delay;
        self.queue.schedule(
            at,
            Event::Edge {
                end: 1 - self.end,
                on: true,
                frame: self.frame,
                how: None,
            },
        );
    }
    fn end_signal(&mut self, how: SignalEnd) {
        let at = self.queue.now() + self.delay;
        self.queue.schedule(
            at,
            Event::Edge {
                end: 1 - self.end,
                on: false,
                frame: self.frame,
                how: Some(how),
            },
        );
    }
    fn random_below(&mut self, n: u64) -> u64 {
        below(self.rng, n)
    }
}

impl Link {
    fn in_window(&self, t: SimTime) -> bool {
        t >= self.window.0 && t < self.window.1
    }

    fn io<'a>(
        end: usize,
        frame: Frame,
        queue: &'a mut EventQueue<Event>,
        delay: SimSpan,
        rng: &'a mut ChaCha8Rng,
    ) -> EndIo<'a> {
        EndIo {
            end,
            frame,
            queue,
            delay,
            rng,
        }
    }

    /// Hands the next queued frame of `end` to its MAC if it is free.
    fn kick(&mut self, end: usize, queue: &mut EventQueue<Event>) {
        let e = &mut self.ends[end];
        if e.in_flight.is_some() {
            return;
        }
        let Some(frame) = e.queue.pop_front() else {
            return;
        };
        e.in_flight = Some(frame);
        let bits = (frame.bytes(self.s.frame_bytes) + CARRIER_OVERHEAD) * 8;
        let mut io = Self::io(end, frame, queue, self.delay, &mut self.rng);
        e.mac.send(&mut io, bits).expect("the MAC was free");
        // A half-duplex end that starts transmitting spoils what it is receiving.
        if e.duplex == MacDuplex::Half
            && e.mac.is_transmitting()
            && let Some((_, spoiled)) = e.rx.as_mut()
        {
            *spoiled = true;
        }
    }

    /// The sender fills its window.
    fn fill_window(&mut self, queue: &mut EventQueue<Event>) {
        while self.next_seq < self.acked + u64::from(self.s.window) {
            self.ends[0].queue.push_back(Frame::Data(self.next_seq));
            self.next_seq += 1;
        }
        self.kick(0, queue);
    }

    /// Go back N: forget what is queued and resend from the oldest unacknowledged frame.
    fn go_back(&mut self, queue: &mut EventQueue<Event>) {
        self.ends[0].queue.retain(|f| !matches!(f, Frame::Data(_)));
        self.next_seq = self.acked;
        self.arm_rto(queue);
        self.fill_window(queue);
    }

    fn arm_rto(&mut self, queue: &mut EventQueue<Event>) {
        self.rto_generation += 1;
        queue.schedule(
            queue.now() + SimSpan::from_ns(self.s.rto_ns),
            Event::Rto {
                generation: self.rto_generation,
            },
        );
    }

    fn receive(&mut self, end: usize, frame: Frame, queue: &mut EventQueue<Event>) {
        let now = queue.now();
        match (end, frame) {
            (1, Frame::Data(seq)) if seq == self.expected => {
                self.expected += 1;
                if self.in_window(now) {
                    self.delivered_bytes += self.s.frame_bytes;
                }
                self.unacked_in_order += 1;
                if self.unacked_in_order >= self.s.ack_every {
                    self.unacked_in_order = 0;
                    queue.schedule(
                        now + SimSpan::from_ns(self.s.ack_delay_ns),
                        Event::SendAck {
                            next: self.expected,
                        },
                    );
                }
            }
            (0, Frame::Ack(next)) if next > self.acked => {
                self.acked = next;
                self.arm_rto(queue);
                self.fill_window(queue);
            }
            _ => {}
        }
    }

    fn edge(
        &mut self,
        end: usize,
        on: bool,
        frame: Frame,
        how: Option<SignalEnd>,
        queue: &mut EventQueue<Event>,
    ) {
        let now = queue.now();
        let counting = self.in_window(now);
        let e = &mut self.ends[end];
        let mut io = Self::io(end, frame, queue, self.delay, &mut self.rng);
        if on {
            let spoiled = e.duplex == MacDuplex::Half && e.mac.is_transmitting();
            e.rx = Some((now, spoiled));
            e.mac.carrier_on(&mut io);
            return;
        }
        e.mac.carrier_off(&mut io);
        let Some((start, spoiled)) = e.rx.take() else {
            return;
        };
        let frame_bits = now
            .since(start)
            .ps()
            .saturating_sub(self.s.mac.bits(self.s.mac.preamble_bits).ps())
            / self.s.mac.bit_time.ps();
        let kicked;
        if spoiled {
            if counting {
                e.counters.lost_to_collision += 1;
            }
            kicked = true;
        } else if how == Some(SignalEnd::Jammed) {
            if counting {
                if frame_bits < crate::traffic::MIN_LENGTH * 8 {
                    e.counters.runts += 1;
                } else {
                    e.counters.fcs_errors += 1;
                }
            }
            kicked = true;
        } else {
            if counting {
                e.counters.frames_received += 1;
            }
            self.receive(end, frame, queue);
            kicked = false;
        }
        if kicked {
            self.kick(end, queue);
        }
    }
}

impl Model for Link {
    type Event = Event;

    fn handle(&mut self, event: Event, queue: &mut EventQueue<Event>) {
        match event {
            Event::Edge {
                end,
                on,
                frame,
                how,
            } => self.edge(end, on, frame, how, queue),
            Event::Timer { end, generation } => {
                let now = queue.now();
                let counting = self.in_window(now);
                let e = &mut self.ends[end];
                let frame = e.in_flight.unwrap_or(Frame::Ack(0));
                let mut io = Self::io(end, frame, queue, self.delay, &mut self.rng);
                let was_transmitting = e.mac.is_transmitting();
                let report = e.mac.timer(&mut io, generation);
                // Starting a transmission while receiving spoils the reception (half duplex).
                if !was_transmitting
                    && e.mac.is_transmitting()
                    && e.duplex == MacDuplex::Half
                    && let Some((_, spoiled)) = e.rx.as_mut()
                {
                    *spoiled = true;
                }
                if let Some(r) = report {
                    e.in_flight = None;
                    if counting {
                        e.counters.collisions += u64::from(r.collisions);
                        e.counters.late_collisions += u64::from(r.late_collisions);
                        match r.outcome {
                            TxOutcome::Sent => e.counters.frames_sent += 1,
                            TxOutcome::Dropped => e.counters.excessive_collisions += 1,
                            TxOutcome::LateCollision => e.counters.aborted_late += 1,
                        }
                    }
                    self.kick(end, queue);
                }
            }
            Event::SendAck { next } => {
                self.ends[1].queue.push_back(Frame::Ack(next));
                self.kick(1, queue);
            }
            Event::Start => {
                self.arm_rto(queue);
                self.fill_window(queue);
            }
            Event::Rto { generation } => {
                if generation == self.rto_generation && self.acked < self.next_seq {
                    if self.in_window(queue.now()) {
                        self.timeouts += 1;
                    }
                    self.go_back(queue);
                }
            }
        }
    }
}

/// Runs a bulk transfer across the link.
pub fn run_link(s: &LinkScenario) -> Result<LinkStats, SimError> {
    s.validate()?;
    let end = |duplex| End {
        mac: Mac::new(s.mac, duplex),
        duplex,
        queue: VecDeque::new(),
        in_flight: None,
        rx: None,
        counters: EndCounters::default(),
    };
    let start = SimTime::ZERO + SimSpan::from_ns(s.warmup_ns);
    let stop = start + SimSpan::from_ns(s.measure_ns);
    let link = Link {
        s: s.clone(),
        ends: [end(s.sender), end(s.receiver)],
        delay: SimSpan::from_seconds(s.cable_m / (0.66 * SPEED_OF_LIGHT)),
        rng: ChaCha8Rng::seed_from_u64(s.seed),
        window: (start, stop),
        next_seq: 0,
        acked: 0,
        rto_generation: 0,
        timeouts: 0,
        expected: 0,
        unacked_in_order: 0,
        delivered_bytes: 0,
    };
    let mut sim = Simulation::new(link);
    sim.schedule(SimTime::ZERO, Event::Start);
    sim.step_until(stop);
    let m = &sim.model;
    let goodput = m.delivered_bytes as f64 / (s.measure_ns as f64 * 1e-9);
    Ok(LinkStats {
        goodput_bytes_per_second: goodput,
        goodput_fraction: goodput * 8.0 / s.mac.bits_per_second as f64,
        timeouts: m.timeouts,
        sender: m.ends[0].counters,
        receiver: m.ends[1].counters,
        events: sim.events_handled(),
    })
}
