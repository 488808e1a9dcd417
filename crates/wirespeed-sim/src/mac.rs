//! The CSMA/CD media access controller of one station, as a state machine that any driver can
//! run: the simulator in virtual time, the lab's emulator in real time.
//!
//! IEEE 802.3 clause 4 (the MAC), with the parameter values of seed 003's Table 2, which are
//! the same at 10 and 100 Mbit/s when counted in bit times: slotTime 512, interFrameGap 96,
//! attemptLimit 16, backoffLimit 10, jamSize 32. What the machine does (seed 000 §2.1, seed
//! 003 §4.3-4.4 and Figure 6):
//!
//! * **1-persistent deference.** A station with a frame waits while it senses carrier, then
//!   lets the gap (96 bit times) pass after the medium goes idle and transmits. If carrier
//!   returns during the first two thirds of the gap (`gap_part1`, 64 bit times, 802.3
//!   4.2.3.2.1) it defers again; after that it is committed and transmits anyway. Its own
//!   transmissions count as carrier, so it also leaves a gap after itself.
//! * **Collision detection.** A collision is detected when another station's signal reaches a
//!   station that is transmitting. It then sends a 32-bit jam and stops.
//! * **Preamble first.** A collision seen during the preamble is enforced after it: the
//!   preamble and delimiter (64 bits) go out whole, then the jam, so no fragment is shorter
//!   than 96 bits (802.3 4.2.3.2.4, 4.2.8). Two stations behind one multiport repeater that
//!   start together therefore hold the medium 9.6 us, not 3.2 (seed 000 §3.7, issue 21).
//! * **Truncated binary exponential backoff.** After the n-th collision of a frame the station
//!   waits `r x slotTime` with `r` uniform in `[0, 2^k)`, `k = min(n, backoffLimit)`.
//! * **Attempt limit.** After 16 attempts have collided the frame is dropped and counted.
//! * **Late collisions.** A collision detected more than one slot time after the preamble
//!   (512 bit times into the frame) is late; on a cable within the standard's round-trip budget
//!   it cannot happen. It is counted (seed 003 §9: "its detection is exactly the same as for a
//!   normal collision; it just happens late") and the frame is abandoned with a late-collision
//!   error, as most controllers do; `abort_on_late_collision: false` retries it instead.
//! * **Full duplex** (seed 003 §4.4): no carrier sense, no collision detection, no jam and no
//!   backoff; only the gap after its own last frame.
//!
//! The machine owns one timer. It asks its driver ([`MacIo`]) for the time, to arm the timer,
//! to start and stop its signal on the medium, and for random numbers; the driver feeds it
//! carrier changes and timer expiries. Cancelling the timer bumps a generation number, and an
//! expiry with an old generation is ignored (lazy cancellation).

use serde::Serialize;

use crate::time::{SimSpan, SimTime};

/// The timing and retry parameters of a CSMA/CD MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MacParams {
    /// Bit rate in bits per second.
    pub bits_per_second: u64,
    /// One bit time.
    pub bit_time: SimSpan,
    /// Collision window and backoff unit, in bit times (512).
    pub slot_bits: u64,
    /// Inter-frame gap, in bit times (96).
    pub gap_bits: u64,
    /// The part of the gap during which carrier still makes a station defer (64).
    pub gap_part1_bits: u64,
    /// Jam length, in bit times (32).
    pub jam_bits: u64,
    /// Preamble and start-frame delimiter, in bit times (64); not part of the slot count.
    pub preamble_bits: u64,
    /// Transmission attempts before a frame is dropped (16).
    pub attempt_limit: u32,
    /// Largest backoff exponent (10).
    pub backoff_limit: u32,
    /// Abandon a frame after a late collision instead of retrying it. 802.3 reports such a
    /// frame with a late-collision error status and most controllers do not retransmit it;
    /// on a network within the standard it never matters.
    pub abort_on_late_collision: bool,
    /// A collision detected while the preamble is still going out is enforced only after the
    /// preamble and start-frame delimiter: the jam follows them, so that every collision
    /// fragment is at least 96 bits (IEEE 802.3 4.2.3.2.4 and the `BitTransmitter` procedure
    /// of 4.2.8, which sends the whole preamble before it looks at `collisionDetect`; the
    /// Ethernet specification 1.0 that seed 000 cites, [8], does the same). `false` jams at
    /// the instant of detection, as this model did before issue 21.
    pub jam_after_preamble: bool,
}

impl MacParams {
    /// Seed 003 Table 2 at `mbps` megabits per second (10 or 100; the values in bit times are
    /// the same at both, so any rate works and scales the bit time).
    pub fn table_2(mbps: u64) -> MacParams {
        let bits_per_second = mbps * 1_000_000;
        MacParams {
            bits_per_second,
            bit_time: SimSpan::from_ps(crate::time::PS_PER_SECOND / bits_per_second),
            slot_bits: 512,
            gap_bits: 96,
            gap_part1_bits: 64,
            jam_bits: 32,
            preamble_bits: 64,
            attempt_limit: 16,
            backoff_limit: 10,
            abort_on_late_collision: true,
            jam_after_preamble: true,
        }
    }

    /// `bits` bit times.
    pub fn bits(&self, bits: u64) -> SimSpan {
        self.bit_time * bits
    }
}

/// Whether the MAC shares the medium (CSMA/CD) or owns its direction of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MacDuplex {
    /// Carrier sense, collision detection, jam and backoff.
    Half,
    /// Transmit whenever the gap after the last frame has passed; ignore carrier and
    /// collisions.
    Full,
}

/// How a station's signal ended, as the medium's receivers will see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalEnd {
    /// The whole frame went out.
    Complete,
    /// The frame was cut short by a collision and ended with a jam.
    Jammed,
}

/// What the MAC needs from whoever runs it.
pub trait MacIo {
    /// The current instant.
    fn now(&self) -> SimTime;
    /// Arms the MAC's timer to fire at `at`, tagged `generation`.
    fn set_timer(&mut self, at: SimTime, generation: u32);
    /// The station starts putting a frame on the medium.
    fn start_signal(&mut self);
    /// The station stops transmitting.
    fn end_signal(&mut self, how: SignalEnd);
    /// A uniform random integer in `[0, n)`.
    fn random_below(&mut self, n: u64) -> u64;
}

/// How a frame left the MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxOutcome {
    /// Transmitted without a collision on its last attempt.
    Sent,
    /// Given up after the attempt limit.
    Dropped,
    /// Abandoned after a late collision.
    LateCollision,
}

/// The story of one frame, reported when the MAC is done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxReport {
    /// Sent or dropped.
    pub outcome: TxOutcome,
    /// Transmissions started (1 if there was no collision).
    pub attempts: u32,
    /// Collisions the frame took part in.
    pub collisions: u32,
    /// Of which late.
    pub late_collisions: u32,
    /// When the MAC was handed the frame (the beginning of its first attempt, deferral
    /// included).
    pub first_attempt: SimTime,
    /// When the last bit (of the frame, or of the last jam) left.
    pub finished: SimTime,
}

/// The MAC refused a frame because it still holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the MAC is still busy with a frame")]
pub struct MacBusy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No frame.
    Idle,
    /// Waiting for the medium (and the gap after it); `armed` when the gap timer runs.
    Defer { armed: bool },
    /// Frame on the wire since `start`.
    Transmit { start: SimTime },
    /// Jamming after a collision.
    Jam,
    /// Waiting out the backoff.
    Backoff,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    bits: u64,
    attempts: u32,
    collisions: u32,
    late_collisions: u32,
    first_attempt: SimTime,
    /// The collision of the current attempt was late.
    late_now: bool,
}

/// One station's CSMA/CD MAC.
#[derive(Debug, Clone)]
pub struct Mac {
    params: MacParams,
    duplex: MacDuplex,
    phase: Phase,
    frame: Option<Frame>,
    /// Other stations' signals present at this station now.
    carrier: u32,
    /// When the medium (others' signals and our own) last went quiet here.
    idle_since: SimTime,
    /// True while our own signal is on the medium.
    transmitting: bool,
    generation: u32,
}

impl Mac {
    /// An idle MAC.
    pub fn new(params: MacParams, duplex: MacDuplex) -> Mac {
        Mac {
            params,
            duplex,
            phase: Phase::Idle,
            frame: None,
            carrier: 0,
            idle_since: SimTime::ZERO,
            transmitting: false,
            generation: 0,
        }
    }

    /// The parameters it runs with.
    pub fn params(&self) -> &MacParams {
        &self.params
    }

    /// True when it holds no frame.
    pub fn is_idle(&self) -> bool {
        self.frame.is_none()
    }

    /// True while its own signal is on the medium.
    pub fn is_transmitting(&self) -> bool {
        self.transmitting
    }

    /// Hands the MAC a frame occupying `carrier_bits` bit times on the medium (preamble,
    /// frame and FCS; not the gap).
    pub fn send(&mut self, io: &mut impl MacIo, carrier_bits: u64) -> Result<(), MacBusy> {
        if self.frame.is_some() {
            return Err(MacBusy);
        }
        self.frame = Some(Frame {
            bits: carrier_bits,
            attempts: 0,
            collisions: 0,
            late_collisions: 0,
            first_attempt: io.now(),
            late_now: false,
        });
        self.phase = Phase::Defer { armed: false };
        self.try_transmit(io);
        Ok(())
    }

    /// Another station's signal has reached this station.
    pub fn carrier_on(&mut self, io: &mut impl MacIo) {
        self.carrier += 1;
        if self.duplex == MacDuplex::Full {
            return;
        }
        match self.phase {
            Phase::Transmit { start } => self.collide(io, start),
            Phase::Defer { armed: true } => {
                let part1 = self.params.bits(self.params.gap_part1_bits);
                if io.now().since(self.idle_since) < part1 {
                    self.generation = self.generation.wrapping_add(1);
                    self.phase = Phase::Defer { armed: false };
                }
            }
            Phase::Idle | Phase::Defer { armed: false } | Phase::Jam | Phase::Backoff => {}
        }
    }

    /// Another station's signal has left this station.
    pub fn carrier_off(&mut self, io: &mut impl MacIo) {
        debug_assert!(self.carrier > 0, "carrier off without carrier on");
        self.carrier = self.carrier.saturating_sub(1);
        if self.carrier == 0 && !self.transmitting {
            self.idle_since = io.now();
            if self.duplex == MacDuplex::Half && self.phase == (Phase::Defer { armed: false }) {
                self.try_transmit(io);
            }
        }
    }

    /// The timer armed with `generation` has fired. Returns the report of a frame it finished.
    pub fn timer(&mut self, io: &mut impl MacIo, generation: u32) -> Option<TxReport> {
        if generation != self.generation {
            return None;
        }
        match self.phase {
            Phase::Defer { armed: true } => {
                self.start_transmission(io);
                None
            }
            Phase::Transmit { .. } => Some(self.finish_frame(io)),
            Phase::Jam => self.finish_jam(io),
            Phase::Backoff => {
                self.phase = Phase::Defer { armed: false };
                self.try_transmit(io);
                None
            }
            Phase::Idle | Phase::Defer { armed: false } => None,
        }
    }

    fn arm(&mut self, io: &mut impl MacIo, at: SimTime) {
        self.generation = self.generation.wrapping_add(1);
        io.set_timer(at, self.generation);
    }

    fn medium_busy(&self) -> bool {
        self.transmitting || (self.duplex == MacDuplex::Half && self.carrier > 0)
    }

    /// In Defer: transmit now if the medium has been idle for a gap, else wait for it.
    fn try_transmit(&mut self, io: &mut impl MacIo) {
        if self.medium_busy() {
            self.phase = Phase::Defer { armed: false };
            return;
        }
        let ready = self.idle_since + self.params.bits(self.params.gap_bits);
        if ready <= io.now() {
            self.start_transmission(io);
        } else {
            self.phase = Phase::Defer { armed: true };
            self.arm(io, ready);
        }
    }

    fn start_transmission(&mut self, io: &mut impl MacIo) {
        let now = io.now();
        let frame = self.frame.as_mut().expect("transmitting without a frame");
        frame.attempts += 1;
        let bits = frame.bits;
        self.transmitting = true;
        self.phase = Phase::Transmit { start: now };
        io.start_signal();
        self.arm(io, now + self.params.bits(bits));
        // Committed during the second part of the gap while carrier was already back.
        if self.duplex == MacDuplex::Half && self.carrier > 0 {
            self.collide(io, now);
        }
    }

    fn collide(&mut self, io: &mut impl MacIo, start: SimTime) {
        let now = io.now();
        let frame = self.frame.as_mut().expect("collision without a frame");
        frame.collisions += 1;
        let window = self
            .params
            .bits(self.params.preamble_bits + self.params.slot_bits);
        frame.late_now = now.since(start) > window;
        if frame.late_now {
            frame.late_collisions += 1;
        }
        self.phase = Phase::Jam;
        let preamble_end = start + self.params.bits(self.params.preamble_bits);
        let jam_from = if self.params.jam_after_preamble {
            now.max(preamble_end)
        } else {
            now
        };
        self.arm(io, jam_from + self.params.bits(self.params.jam_bits));
    }

    fn stop_signal(&mut self, io: &mut impl MacIo, how: SignalEnd) {
        self.transmitting = false;
        io.end_signal(how);
        if self.duplex == MacDuplex::Full || self.carrier == 0 {
            self.idle_since = io.now();
        }
    }

    fn finish_frame(&mut self, io: &mut impl MacIo) -> TxReport {
        self.stop_signal(io, SignalEnd::Complete);
        self.phase = Phase::Idle;
        let frame = self.frame.take().expect("finished without a frame");
        self.report(io, frame, TxOutcome::Sent)
    }

    fn finish_jam(&mut self, io: &mut impl MacIo) -> Option<TxReport> {
        self.stop_signal(io, SignalEnd::Jammed);
        let frame = self.frame.expect("jam without a frame");
        if frame.late_now && self.params.abort_on_late_collision {
            self.phase = Phase::Idle;
            self.frame = None;
            return Some(self.report(io, frame, TxOutcome::LateCollision));
        }
        if frame.attempts >= self.params.attempt_limit {
            self.phase = Phase::Idle;
            self.frame = None;
            return Some(self.report(io, frame, TxOutcome::Dropped));
        }
        let k = frame.collisions.min(self.params.backoff_limit);
        let r = io.random_below(1u64 << k);
        self.phase = Phase::Backoff;
        let at = io.now() + self.params.bits(self.params.slot_bits) * r;
        self.arm(io, at);
        None
    }

    fn report(&self, io: &impl MacIo, frame: Frame, outcome: TxOutcome) -> TxReport {
        TxReport {
            outcome,
            attempts: frame.attempts,
            collisions: frame.collisions,
            late_collisions: frame.late_collisions,
            first_attempt: frame.first_attempt,
            finished: io.now(),
        }
    }
}
