//! The Metcalfe and Boggs (1976) efficiency of a contended Ethernet, and where the "1/e" figure
//! comes from.
//!
//! Metcalfe and Boggs, "Ethernet: Distributed Packet Switching for Local Computer Networks",
//! CACM 19(7), 1976, §6, as summarised by Boggs, Mogul and Kent (seed 000, §2.4.1 and §2.5).
//! Assumptions: time is slotted in slots of `T` (the round-trip collision window, 512 bit
//! times on the standard Ethernet); `Q` stations are always ready; each transmits in a slot with
//! probability `1/Q` (the best a backoff can do once it has estimated `Q`); a packet of `P` bits
//! holds the channel for `P / C` once a slot is won. Then
//!
//! * `A = (1 - 1/Q)^(Q-1)` is the probability that exactly one station transmits in a slot;
//! * `W = (1 - A) / A` is the mean number of slots lost to contention before one is won;
//! * the efficiency is `E = (P/C) / (P/C + W T)`.
//!
//! As `Q` grows, `A` falls to `1/e` and `W` rises to `e - 1`; for a minimum packet that lasts
//! exactly one slot (`P/C = T`), `E = 1 / (1 + e - 1) = 1/e`, about 37%. That is the whole
//! source of the myth that "an Ethernet saturates at 37%": it holds only for minimum packets,
//! a slotted system, a cable whose every pair of stations is a full slot apart, and an offered
//! load of infinitely many always-ready stations. Real networks have short cables (a collision
//! costs a few microseconds, not a slot), large packets (E is 97% for 1536-byte packets even at
//! Q = 256), and hosts that are seldom all ready at once.

use serde::Serialize;

/// Probability that exactly one of `q` always-ready stations transmits in a slot when each
/// transmits with probability `1/q`: `(1 - 1/q)^(q-1)`. 1 for a single station.
pub fn acquisition_probability(q: f64) -> f64 {
    if q <= 1.0 {
        1.0
    } else {
        (1.0 - 1.0 / q).powf(q - 1.0)
    }
}

/// Mean number of contention slots before a station acquires the channel: `(1 - A) / A`.
pub fn mean_contention_slots(q: f64) -> f64 {
    let a = acquisition_probability(q);
    (1.0 - a) / a
}

/// The Metcalfe-Boggs efficiency for packets of `packet_bits` on a channel whose slot is
/// `slot_bits` long (both in bit times), with `q` stations always ready.
pub fn metcalfe_boggs_efficiency(packet_bits: f64, slot_bits: f64, q: f64) -> f64 {
    packet_bits / (packet_bits + mean_contention_slots(q) * slot_bits)
}

/// One row of the theory beside a simulated point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct MetcalfeBoggs {
    /// Stations always ready (`Q`).
    pub q: f64,
    /// Packet length in bit times (`P/C`).
    pub packet_bits: f64,
    /// Slot time in bit times (`T`).
    pub slot_bits: f64,
    /// `A`: chance that a slot is won.
    pub acquisition_probability: f64,
    /// `W`: slots lost to contention per packet.
    pub mean_contention_slots: f64,
    /// `E`: fraction of the channel carrying packets.
    pub efficiency: f64,
}

impl MetcalfeBoggs {
    /// The model's figures for one packet length and `q`.
    pub fn new(packet_bits: f64, slot_bits: f64, q: f64) -> MetcalfeBoggs {
        MetcalfeBoggs {
            q,
            packet_bits,
            slot_bits,
            acquisition_probability: acquisition_probability(q),
            mean_contention_slots: mean_contention_slots(q),
            efficiency: metcalfe_boggs_efficiency(packet_bits, slot_bits, q),
        }
    }
}
