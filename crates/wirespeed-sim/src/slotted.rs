//! The Metcalfe-Boggs (1976) model as a simulation: slotted time, `Q` stations always ready,
//! each transmitting in a contention slot with probability `1/Q`.
//!
//! This is the world in which "an Ethernet saturates at 1/e" is true (seed 000 §2.5), run on
//! the same engine as the real model so that the two can be set side by side: the formula of
//! [`wirespeed_model::csma_theory`] and this simulation agree, and both disagree with the
//! unslotted, 1-persistent, binary-exponential-backoff Ethernet of [`crate::network`], which
//! wastes a few microseconds on a collision rather than a whole slot and whose hosts are seldom
//! all ready at once.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use serde::Serialize;

use crate::engine::{EventQueue, Model, Simulation};
use crate::time::{SimSpan, SimTime};
use crate::traffic::unit;

/// The result of a slotted run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlottedResult {
    /// Stations always ready.
    pub q: u32,
    /// Packet length in bit times.
    pub packet_bits: u64,
    /// Slot in bit times.
    pub slot_bits: u64,
    /// Packets carried.
    pub packets: u64,
    /// Contention slots lost (idle or collided).
    pub wasted_slots: u64,
    /// Fraction of time spent carrying packets.
    pub efficiency: f64,
}

struct Slotted {
    q: u32,
    packet: SimSpan,
    slot: SimSpan,
    rng: ChaCha8Rng,
    packets: u64,
    wasted: u64,
}

impl Model for Slotted {
    type Event = ();

    fn handle(&mut self, _: (), queue: &mut EventQueue<()>) {
        let p = 1.0 / f64::from(self.q);
        let transmitters = (0..self.q).filter(|_| unit(&mut self.rng) < p).count();
        let next = if transmitters == 1 {
            self.packets += 1;
            self.packet
        } else {
            self.wasted += 1;
            self.slot
        };
        queue.schedule(queue.now() + next, ());
    }
}

/// Runs the slotted model until `packets` packets have been carried.
pub fn run_slotted(
    q: u32,
    packet_bits: u64,
    slot_bits: u64,
    packets: u64,
    seed: u64,
) -> SlottedResult {
    let q = q.max(1);
    let model = Slotted {
        q,
        packet: SimSpan::from_ps(packet_bits),
        slot: SimSpan::from_ps(slot_bits),
        rng: ChaCha8Rng::seed_from_u64(seed),
        packets: 0,
        wasted: 0,
    };
    let mut sim = Simulation::new(model);
    sim.schedule(SimTime::ZERO, ());
    while sim.model.packets < packets {
        sim.step();
    }
    let m = &sim.model;
    let busy = m.packets * packet_bits;
    SlottedResult {
        q,
        packet_bits,
        slot_bits,
        packets: m.packets,
        wasted_slots: m.wasted,
        efficiency: busy as f64 / (busy + m.wasted * slot_bits) as f64,
    }
}
