//! The link emulator's logic, free of devices: what happens to each frame and when.
//!
//! [`link::Direction`] decides a full-duplex frame's fate the moment it arrives; [`pump`] holds
//! frames until their release instants on any [`clock::Clock`]. [`shared::SharedMedium`] runs
//! the simulator's CSMA/CD MAC for half-duplex links, hubs and duplex mismatches, advanced
//! with the same clocks. [`host::HostCpu`] is a slow host's stack and driver at its port,
//! charged before a frame reaches the medium and after the medium delivers it. Tests run both in virtual time, exactly; the
//! lab runs the same code on the real clock and measures how late each release was
//! ([`stats::LatenessHistogram`]).

pub mod aqm;
pub mod clock;
pub mod gso;
pub mod handoff;
pub mod host;
pub mod link;
pub mod occupancy;
pub mod router;
pub mod shared;
pub mod stats;

use clock::{Clock, Nanos};

/// Releases each `(at, frame)` from `source` to `sink` at its instant, in order; the sink is
/// told the scheduled and the actual instant, so that it can record the lateness. Returns when
/// the source ends.
pub fn pump<C: Clock, F>(
    clock: &C,
    source: impl IntoIterator<Item = (Nanos, F)>,
    mut sink: impl FnMut(F, Nanos, Nanos),
) {
    for (at, frame) in source {
        let now = clock.wait_until(at);
        sink(frame, at, now);
    }
}
