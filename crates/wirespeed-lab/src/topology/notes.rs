//! What a valid topology says that its author should hear before measuring it: the file is
//! accepted (an over-long CSMA/CD medium is a real experiment: seed 003's Appendix B names a
//! cable beyond its limits as a cause of late collisions), but a result read from it without
//! this would be misread.

use std::fmt;

use serde::Serialize;

use super::{DEFAULT_VELOCITY_FACTOR, LinkDuplex, SPEED_OF_LIGHT_M_PER_S, Topology};

/// The collision window of the lab's CSMA/CD MAC, in bit times at any rate (IEEE 802.3's slot
/// for 10 and 100 Mbit/s; the emulator uses seed 003's Table 2 values at every rate).
pub const SLOT_BITS: f64 = 512.0;

/// A note on a topology that checks out. Kinds are stable once released.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyNote {
    /// A half-duplex (or mismatched) link or a hub whose round trip of propagation is longer
    /// than its slot time: a collision reaches the sender after it has stopped listening for
    /// one, so collisions are late and frames are abandoned instead of retried, as on a cable
    /// far past any collision domain.
    PastTheSlotTime {
        /// `link A-B` or `segment NAME`.
        medium: String,
        /// One-way propagation across the medium, seconds.
        one_way_seconds: f64,
        /// The slot time at the medium's rate, seconds.
        slot_seconds: f64,
        /// The cable: a segment's length, or what a link's one-way delay stands for at the
        /// default velocity factor (0.66), metres.
        cable_metres: f64,
    },
}

impl fmt::Display for TopologyNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyNote::PastTheSlotTime {
                medium,
                one_way_seconds,
                slot_seconds,
                cable_metres,
            } => write!(
                f,
                "{medium} is a CSMA/CD medium whose round trip ({}) is longer than its slot time ({}, 512 bit times): \
                 about {} of cable, past any collision domain, so its collisions are late and their frames \
                 abandoned; for a working segment keep the one-way delay within {}, or make the link full duplex",
                micros(2.0 * one_way_seconds),
                micros(*slot_seconds),
                distance(*cable_metres),
                micros(slot_seconds / 2.0),
            ),
        }
    }
}

fn micros(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.1} us", seconds * 1e6)
    }
}

fn distance(metres: f64) -> String {
    if metres >= 1e3 {
        format!("{:.1} km", metres / 1e3)
    } else {
        format!("{metres:.0} m")
    }
}

impl Topology {
    /// The notes this topology earns, in file order (links, then segments).
    pub fn notes(&self) -> Vec<TopologyNote> {
        let mut notes = Vec::new();
        let shared_links = self
            .links
            .iter()
            .filter(|l| l.duplex_a == LinkDuplex::Half || l.duplex_b == LinkDuplex::Half);
        for link in shared_links {
            let medium = format!(
                "link {}-{}",
                self.nodes[link.a].name, self.nodes[link.b].name
            );
            // One medium, one rate and one delay (the file's check refuses per-direction ones).
            let one_way = link.ab.delay.as_secs_f64();
            let cable = one_way * DEFAULT_VELOCITY_FACTOR * SPEED_OF_LIGHT_M_PER_S;
            let bps = link.ab.rate.bits_per_second() as f64;
            notes.extend(past_the_slot(medium, one_way, bps, cable));
        }
        for segment in &self.segments {
            let one_way = segment.length_m / (segment.velocity_factor * SPEED_OF_LIGHT_M_PER_S);
            let medium = format!("segment {}", segment.name);
            let bps = segment.rate.bits_per_second() as f64;
            notes.extend(past_the_slot(medium, one_way, bps, segment.length_m));
        }
        notes
    }
}

fn past_the_slot(
    medium: String,
    one_way_seconds: f64,
    bits_per_second: f64,
    cable_metres: f64,
) -> Option<TopologyNote> {
    if bits_per_second <= 0.0 {
        return None;
    }
    let slot_seconds = SLOT_BITS / bits_per_second;
    (2.0 * one_way_seconds > slot_seconds).then_some(TopologyNote::PastTheSlotTime {
        medium,
        one_way_seconds,
        slot_seconds,
        cable_metres,
    })
}
