//! `diagnose --peer`: a transfer each way against an agent, read against the counters that grew
//! during it.
//!
//! Seed 003's Table 7 is the signature of a duplex mismatch seen end to end: the same transfer
//! ran at 67 KB/s from the full-duplex end to the half-duplex one and at 15 KB/s the other way
//! (4.5 times slower), with late collisions counted on the half-duplex end and FCS errors and
//! runts on the full-duplex end while it ran (Appendix B). NDT and Shalunov & Carlson (PAM 2005)
//! flag the same asymmetry. A slow direction alone does not prove the mismatch (asymmetric
//! routes, a shaper, a busy receiver do the same), so the verdict rests on both: the asymmetry
//! and damage counters that grew during the test.

use serde::Serialize;

use super::{Confidence, Diagnosis, Finding, FindingKind, Severity};

/// One direction is "much slower" when the other is at least this many times faster: seed 003
/// Table 7 has 67 / 15 = 4.5; a clean link differs by far less than 3.
pub const ASYMMETRY_RATIO: f64 = 3.0;

/// The asymmetry that suffices when FCS errors or runts (but no late collisions) grew during
/// the transfers: the full-duplex end's half of the signature, with a direction slowed.
pub const COUNTER_BACKED_RATIO: f64 = 1.5;

/// One direction of the peer test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transfer {
    /// "to the peer" or "from the peer".
    pub direction: String,
    /// What the receiver got, bits per second.
    pub bits_per_second: f64,
    /// Segments the sender retransmitted (`TCP_INFO`), if known.
    pub retransmits: Option<u64>,
}

/// The findings of a transfer each way, given the diagnoses of the local interfaces whose
/// counters were sampled across the transfers.
pub fn peer_findings(
    to_peer: &Transfer,
    from_peer: &Transfer,
    local: &[Diagnosis],
) -> Vec<Finding> {
    let (slow, fast) = if to_peer.bits_per_second <= from_peer.bits_per_second {
        (to_peer, from_peer)
    } else {
        (from_peer, to_peer)
    };
    if fast.bits_per_second <= 0.0 {
        return Vec::new();
    }
    // A direction that carried nothing at all is infinitely slower.
    let ratio = fast.bits_per_second / slow.bits_per_second.max(0.0);
    // Late collisions growing while a transfer runs each way are the half-duplex end's own
    // evidence of a mismatch (seed 003 Table 7: 6,088 late of 6,087 collisions), whatever the
    // rates: with a modern TCP (SACK, RACK, fast retransmit) the lab's mismatch moves the two
    // directions anywhere from 1.0 to 6.1 times apart from run to run (bench/RESULTS.md), so
    // the ratio alone reaches the seed's verdict in a few runs only. FCS errors and runts (the
    // full end's half of the signature) also come from noise on a wire, so they need a slowed
    // direction beside them; the ratio alone, the counterless threshold.
    let late_grew = local.iter().any(|d| d.delta.late() > 0);
    let damage_grew = local.iter().any(|d| d.delta.damaged() > 0);
    let threshold = if late_grew {
        1.0
    } else if damage_grew {
        COUNTER_BACKED_RATIO
    } else {
        ASYMMETRY_RATIO
    };
    if ratio < threshold {
        return Vec::new();
    }
    let mut evidence = vec![format!(
        "{} at {:.0} bit/s, {} at {:.0} bit/s: {ratio:.1} times slower",
        slow.direction, slow.bits_per_second, fast.direction, fast.bits_per_second
    )];
    if let (Some(s), Some(f)) = (slow.retransmits, fast.retransmits) {
        evidence.push(format!(
            "retransmitted segments: {s} {} against {f} {}",
            slow.direction, fast.direction
        ));
    }
    // Damage that grew while the transfers ran, and whether a local rule already named a side.
    let mut grew = Vec::new();
    let mut named_mismatch = false;
    for d in local {
        let late = d.delta.late();
        let damaged = d.delta.damaged();
        if late + damaged > 0 {
            grew.push(format!(
                "during the test: {late} late collisions, {damaged} FCS/alignment/runt errors"
            ));
        }
        named_mismatch |= d.findings.iter().any(|f| {
            matches!(
                f.kind,
                FindingKind::DuplexMismatchHalfSide | FindingKind::DuplexMismatchFullSide
            )
        });
    }
    let mismatch = named_mismatch || !grew.is_empty();
    evidence.extend(grew);
    let finding = if mismatch {
        Finding {
            kind: FindingKind::AsymmetricTransfer,
            severity: Severity::Fault,
            title: format!(
                "duplex mismatch: {} is {ratio:.1} times slower than {}, with late collisions or FCS errors growing during the test",
                slow.direction, fast.direction
            ),
            evidence,
            cause: "one end of a link is half duplex and the other full duplex (one end forced, the other auto-negotiating falls back to half duplex by parallel detection): the half-duplex end backs off and aborts on the full-duplex end's frames (late collisions), whose frames it damages (FCS errors, runts); seed 003 Table 7".into(),
            fix: "set both ends to auto-negotiate, or force both to the same speed and duplex".into(),
            confidence: Confidence::High,
        }
    } else {
        Finding {
            kind: FindingKind::AsymmetricTransfer,
            severity: Severity::Warning,
            title: format!(
                "{} is {ratio:.1} times slower than {}: the shape of a duplex mismatch, but no counter here grew",
                slow.direction, fast.direction
            ),
            evidence,
            cause: "a duplex mismatch on a link this host cannot see the counters of (further along the path, or an interface without a PHY), or another cause of asymmetry: an asymmetric route, a shaper or policer, a busy receiver".into(),
            fix: "run `wirespeed diagnose` on the hosts and switch ports along the path while the transfer runs; compare `ethtool` settings at both ends of each link".into(),
            confidence: Confidence::Medium,
        }
    };
    vec![finding]
}
