//! What `sim` concludes, typed: the simulated figures beside the seeds' (seed 000 section 3.5
//! on the CSMA/CD sweep, seed 003 Table 7 on a duplex mismatch) and the warnings about a run
//! out of specification or without confidence intervals. A script acts on the kind and its
//! figures; the sentence is the `Display`.

use std::fmt;

use serde::Serialize;
use wirespeed_model::units::{format_seconds, group_digits};

/// One finding of a simulation. Kinds are stable once released.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum SimFinding {
    /// Warning: a point counted late collisions, so the cable breaks 802.3's round-trip budget.
    LateCollisions,
    /// Warning: one run per point gives no confidence interval.
    SingleReplication,
    /// Seed 000's long net, 24 hosts of 1536 bytes: utilisation and mean delay per packet.
    LongNetUtilization {
        hosts: usize,
        frame_bytes: u64,
        utilization_share: f64,
        delay_seconds: f64,
    },
    /// Seed 000's two hosts of 64-byte packets: the packet rate without a collision.
    ShortPacketRate {
        hosts: usize,
        frame_bytes: u64,
        packets_per_second: f64,
    },
    /// `sim link`: each end's counters show the mismatch's signature (seed 003).
    DuplexMismatch {
        late_collisions_at_half: u64,
        errors_and_runts_at_full: u64,
    },
    /// `sim link`: the ends disagree about duplex but the run is too short to show it.
    DuplexMismatchUnseen {
        late_collisions_at_half: u64,
        errors_and_runts_at_full: u64,
    },
}

impl fmt::Display for SimFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimFinding::LateCollisions => f.write_str(
                "late collisions: the cable is longer than the 512-bit collision window allows \
                 (802.3's round-trip budget); such a network is out of specification",
            ),
            SimFinding::SingleReplication => f.write_str(
                "one run per point: add --replications 5 (or more) for 95% confidence intervals",
            ),
            SimFinding::LongNetUtilization {
                hosts,
                frame_bytes,
                utilization_share,
                delay_seconds,
            } => write!(
                f,
                "{hosts} hosts x {frame_bytes} bytes on the long net: {:.1}% utilisation and {} per packet \
                 (seed 000 §3.5 measured about 97% and 31 ms against an ideal of 30 ms)",
                utilization_share * 100.0,
                format_seconds(*delay_seconds),
            ),
            SimFinding::ShortPacketRate {
                hosts,
                frame_bytes,
                packets_per_second,
            } => write!(
                f,
                "{hosts} hosts x {frame_bytes} bytes: {} packets/s without a collision (seed 000 §3.5: about \
                 13,500, the peak; the theoretical maximum is 14,205)",
                group_digits(packets_per_second.round() as u64),
            ),
            SimFinding::DuplexMismatch {
                late_collisions_at_half,
                errors_and_runts_at_full,
            } => write!(
                f,
                "duplex mismatch: the half-duplex end counted {} late collisions, the full-duplex end \
                 {} FCS errors and runts (seed 003 Table 7: 15 KB/s one way, 67 KB/s the other)",
                group_digits(*late_collisions_at_half),
                group_digits(*errors_and_runts_at_full)
            ),
            SimFinding::DuplexMismatchUnseen {
                late_collisions_at_half,
                errors_and_runts_at_full,
            } => write!(
                f,
                "the ends disagree about duplex, but this run shows no mismatch signature ({} late \
                 collisions at the half end, {} FCS errors and runts at the full end): too little \
                 traffic to tell; run longer (-t) or with a larger --window",
                group_digits(*late_collisions_at_half),
                group_digits(*errors_and_runts_at_full)
            ),
        }
    }
}
