//! The verdicts and warnings of a simulated sweep: the seed's own figures (seed 000 §3.3) held
//! against the points that repeat them, and what makes the figures less trustworthy.

use wirespeed_sim::sweep::Point;
use wirespeed_sim::{Arrivals, Cable, LengthMix, Scenario};

use super::result::SimPoint;
use super::verdicts::SimFinding;

/// Late collisions (a cable longer than the standard's) and a single replication (no
/// interval).
pub(crate) fn warnings(replications: u32, points: &[SimPoint]) -> Vec<SimFinding> {
    let mut w = Vec::new();
    if points.iter().any(|p| p.summary.late_collisions > 0) {
        w.push(SimFinding::LateCollisions);
    }
    if replications == 1 {
        w.push(SimFinding::SingleReplication);
    }
    w
}

/// Compares the points the seed measured with what it reported.
pub(crate) fn verdicts(base: &Scenario, points: &[Point], sim: &[SimPoint]) -> Vec<SimFinding> {
    let mut v = Vec::new();
    if base.mac.bits_per_second != 10_000_000 || base.arrivals != Arrivals::Saturated {
        return v;
    }
    for (p, s) in points.iter().zip(sim) {
        let fixed = |b: u64| p.lengths == LengthMix::Fixed { bytes: b };
        if fixed(1536) && p.hosts == 24 && base.cable == Cable::seed_long_net() {
            v.push(SimFinding::LongNetUtilization {
                hosts: p.hosts,
                frame_bytes: 1536,
                utilization_share: s.summary.utilization.mean,
                delay_seconds: s.summary.delay_mean_seconds.mean,
            });
        }
        if fixed(64) && p.hosts == 2 {
            v.push(SimFinding::ShortPacketRate {
                hosts: p.hosts,
                frame_bytes: 64,
                packets_per_second: s.summary.packets_per_second.mean,
            });
        }
    }
    v
}
