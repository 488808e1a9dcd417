//! The rule set: each rule reads the evidence and may add one finding.

use super::{Confidence, Counters, Diagnosis, Evidence, Finding, FindingKind, Rates, Severity};
use crate::autoneg::{Duplex, Technology};

/// Damage (FCS + alignment + runts) below this many frames in total is noise, not a signature.
const DAMAGE_THRESHOLD: u64 = 10;

/// Diagnoses one interface.
pub fn diagnose(ev: &Evidence) -> Diagnosis {
    let delta = ev.second.since(&ev.first);
    let secs = ev.interval_seconds.max(f64::MIN_POSITIVE);
    let rates = Rates {
        rx_packets_per_second: delta.rx_packets as f64 / secs,
        tx_packets_per_second: delta.tx_packets as f64 / secs,
        rx_bits_per_second: delta.rx_bytes as f64 * 8.0 / secs,
        tx_bits_per_second: delta.tx_bytes as f64 * 8.0 / secs,
        errors_per_second: delta.errors() as f64 / secs,
        overflows_per_second: delta.overflows() as f64 / secs,
    };
    let mut findings = Vec::new();
    if !ev.kind.has_phy() {
        findings.push(Finding {
            kind: FindingKind::NoPhysicalLayer,
            severity: Severity::Info,
            title: format!(
                "{}: no physical layer, so speed, duplex and collisions do not apply",
                ev.kind.describe()
            ),
            evidence: vec![format!("interface kind: {}", ev.kind.describe())],
            cause: "a software interface: frames are handed over in memory, never put on a wire"
                .into(),
            fix: "nothing to fix here; diagnose the NIC that carries the traffic".into(),
            confidence: Confidence::High,
        });
    } else {
        phy_rules(ev, &mut findings);
    }
    growth_rules(ev, &delta, secs, &mut findings);
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(b.confidence.cmp(&a.confidence))
    });
    Diagnosis {
        healthy: !findings.iter().any(|f| f.severity == Severity::Fault),
        rates,
        delta,
        findings,
    }
}

fn phy_rules(ev: &Evidence, out: &mut Vec<Finding>) {
    let c = &ev.second;
    if ev.link.carrier == Some(false) {
        out.push(Finding {
            kind: FindingKind::NoLink,
            severity: Severity::Fault,
            title: "no link (no carrier)".into(),
            evidence: vec!["carrier: 0".into()],
            cause: "cable unplugged or broken, port disabled, or both ends forced to different speeds (seed 003 Appendix A: \"neither side will establish link due to speed mismatch\")".into(),
            fix: "check the cable and the partner port; set both ends to auto-negotiate".into(),
            confidence: Confidence::Medium,
        });
        return;
    }
    match ev.link.duplex {
        Some(Duplex::Half) => half_duplex_rules(c, out),
        Some(Duplex::Full) => full_duplex_rules(c, out),
        None => {
            if c.damaged() >= DAMAGE_THRESHOLD {
                out.push(damaged_frames(c));
            }
        }
    }
    below_advertised(ev, out);
    negotiation_rules(&ev.link, out);
}

/// Where the late-collision figure comes from.
fn late_source(c: &Counters) -> &'static str {
    if c.late_collisions.is_some() {
        "802.3 LateCollisions"
    } else {
        "tx_window_errors"
    }
}

/// The half-duplex end: late collisions are the mismatch, the rest is CSMA/CD at work.
fn half_duplex_rules(c: &Counters, out: &mut Vec<Finding>) {
    let late = c.late();
    let late_source = late_source(c);
    let collisions = c.all_collisions();
    if late > 0 {
        let all_late = collisions == 0 || late * 2 >= collisions;
        out.push(Finding {
            kind: FindingKind::DuplexMismatchHalfSide,
            severity: Severity::Fault,
            title: "late collisions on a half-duplex end: duplex mismatch, the partner runs full duplex".into(),
            evidence: vec![
                "duplex: half".into(),
                format!("{late} late collisions ({late_source}) of {collisions} collisions"),
                format!("{} frames sent", c.tx_packets),
            ],
            cause: "the full-duplex partner sends without listening, so its frames hit ours after the slot time (seed 003 Table 7: 6,088 late collisions of 6,087 on the half-duplex end); Appendix B also names faulty hardware or a cable beyond 100 m".into(),
            fix: "configure both ends the same way, preferably both auto-negotiating; a partner forced to full duplex against an auto port is Appendix A's mismatch".into(),
            confidence: if all_late || late >= 100 { Confidence::High } else { Confidence::Medium },
        });
    } else if collisions > 0 || c.damaged() > 0 {
        out.push(Finding {
            kind: FindingKind::HalfDuplex,
            severity: Severity::Info,
            title: "half duplex: collisions and collision fragments are normal here".into(),
            evidence: vec![
                "duplex: half".into(),
                format!("{collisions} collisions, none late"),
                format!("{} runts, {} alignment errors, {} FCS errors", c.runts(), c.alignment_errors, c.fcs_errors),
            ],
            cause: "CSMA/CD at work (seed 003 Table 6: 12,967 collisions and no other errors; Table 9 test 6: runts and alignment errors from collision fragments)".into(),
            fix: "none needed; full duplex on a switch port doubles the capacity and removes collisions".into(),
            confidence: Confidence::High,
        });
    }
}

/// The full-duplex end: no collision may be counted, and damaged frames are the mismatch.
fn full_duplex_rules(c: &Counters, out: &mut Vec<Finding>) {
    let late = c.late();
    let late_source = late_source(c);
    let collisions = c.all_collisions();
    if collisions > 0 || late > 0 {
        out.push(Finding {
            kind: FindingKind::CollisionsOnFullDuplex,
            severity: Severity::Fault,
            title: "collisions on a full-duplex link".into(),
            evidence: vec![
                "duplex: full".into(),
                format!("{collisions} collisions, {late} late ({late_source})"),
            ],
            cause: "a full-duplex MAC ignores collisions and never counts them (seed 003: \"In Full Duplex Mode Collisions are ignored in the MAC layer and not recorded\"), so the MAC has been running half duplex: a driver/PHY disagreement or an earlier half-duplex period".into(),
            fix: "compare `ethtool IFACE` with the partner port, set both ends alike, and watch whether the counter still grows".into(),
            confidence: Confidence::Medium,
        });
    }
    let damaged = c.damaged();
    if damaged >= DAMAGE_THRESHOLD && collisions == 0 {
        let runts = c.runts() + c.alignment_errors;
        let both = c.fcs_errors > 0 && runts > 0;
        out.push(Finding {
            kind: FindingKind::DuplexMismatchFullSide,
            severity: Severity::Fault,
            title: "FCS errors and runts on a full-duplex end: duplex mismatch, the partner runs half duplex".into(),
            evidence: vec![
                "duplex: full, no collisions counted".into(),
                format!("{} FCS errors, {} runts, {} alignment errors", c.fcs_errors, c.runts(), c.alignment_errors),
                format!("{} frames received", c.rx_packets),
            ],
            cause: "the half-duplex partner stops and jams when our frames collide with its own, so we receive its truncated frames (seed 003 Table 7: 3,022 CRC errors and runts on the full-duplex end); Appendix B also names a bad cable, NIC or port".into(),
            fix: "configure both ends the same way, preferably both auto-negotiating; if errors remain with matching duplex, replace the cable".into(),
            confidence: if both { Confidence::High } else { Confidence::Medium },
        });
    }
}

/// Risks in how the link was negotiated (or not).
fn negotiation_rules(link: &super::LinkSettings, out: &mut Vec<Finding>) {
    if link.autoneg == Some(true)
        && link.partner_advertised.is_some_and(|p| p.is_empty())
        && link.duplex == Some(Duplex::Half)
    {
        out.push(Finding {
            kind: FindingKind::ParallelDetection,
            severity: Severity::Warning,
            title: "the partner does not auto-negotiate; this end chose half duplex by parallel detection".into(),
            evidence: vec![
                "auto-negotiation: on".into(),
                "link partner advertised: nothing (or the driver does not report it)".into(),
                "duplex: half".into(),
            ],
            cause: "parallel detection sees the partner's speed but not its duplex and always picks half (IEEE 802.3 28.2.3.1); if the partner is forced to full duplex this is seed 003 Appendix A's duplex mismatch".into(),
            fix: "set the partner to auto-negotiate, or force both ends to the same speed and duplex".into(),
            confidence: Confidence::Medium,
        });
    }
    if link.autoneg == Some(false) && link.duplex == Some(Duplex::Full) {
        out.push(Finding {
            kind: FindingKind::ForcedFullDuplex,
            severity: Severity::Warning,
            title: "auto-negotiation off with full duplex forced".into(),
            evidence: vec!["auto-negotiation: off".into(), "duplex: full".into()],
            cause: "a partner that auto-negotiates sees no link code words and falls back to half duplex (seed 003 Appendix A rows 2 and 3)".into(),
            fix: "make sure the partner is forced to the same mode, or let both ends auto-negotiate".into(),
            confidence: Confidence::Low,
        });
    }
}

fn damaged_frames(c: &Counters) -> Finding {
    Finding {
        kind: FindingKind::DamagedFrames,
        severity: Severity::Fault,
        title: "damaged frames received".into(),
        evidence: vec![format!(
            "{} FCS errors, {} runts, {} alignment errors (duplex unknown)",
            c.fcs_errors,
            c.runts(),
            c.alignment_errors
        )],
        cause: "collisions at half duplex, a duplex mismatch, or bad hardware (NIC, cable or port), as seed 003 Appendix B lists them".into(),
        fix: "find the duplex of both ends (`ethtool IFACE` here, the switch port there); if they match, replace the cable".into(),
        confidence: Confidence::Low,
    }
}

fn below_advertised(ev: &Evidence, out: &mut Vec<Finding>) {
    let link = &ev.link;
    let (Some(ours), Some(theirs), Some(speed), Some(duplex)) = (
        link.advertised,
        link.partner_advertised,
        link.speed_mbps,
        link.duplex,
    ) else {
        return;
    };
    if link.autoneg != Some(true) || theirs.is_empty() {
        return;
    }
    let Some(best) = ours.intersection(theirs).best() else {
        return;
    };
    let running = Technology::BY_PRIORITY.into_iter().find(|t| {
        t.speed_mbps() == speed
            && t.duplex() == duplex
            && t.pma() != crate::autoneg::Pma::Base100T4
            && t.pma() != crate::autoneg::Pma::Base100T2
    });
    let slower = match running {
        Some(r) => r.priority() > best.priority(),
        None => speed < best.speed_mbps(),
    };
    if slower {
        out.push(Finding {
            kind: FindingKind::BelowAdvertised,
            severity: Severity::Fault,
            title: format!(
                "link below what both ends advertise: {speed} Mbit/s {} where both offer {}",
                crate::autoneg::duplex_word(duplex),
                best.name()
            ),
            evidence: vec![
                format!("advertised here: {ours}"),
                format!("advertised by the partner: {theirs}"),
                format!("running: {speed} Mbit/s {}", crate::autoneg::duplex_word(duplex)),
            ],
            cause: "the PHY downshifted: 1000BASE-T needs all four pairs and 100BASE-TX two good ones, so a broken pair or a poor (Cat 3) cable brings the link down to a slower mode".into(),
            fix: "replace the patch cable, try another port, and check the cabling with `ethtool --cable-test` where the PHY supports it".into(),
            confidence: Confidence::High,
        });
    }
}

fn growth_rules(ev: &Evidence, delta: &Counters, secs: f64, out: &mut Vec<Finding>) {
    let packets = delta.rx_packets + delta.tx_packets;
    let pps = packets as f64 / secs;
    let load = format!("{packets} frames in {secs:.1} s ({pps:.0} frames/s)",);
    if ev.kind.has_phy() && delta.errors() > 0 {
        let ratio = delta.errors() as f64 / packets.max(1) as f64;
        out.push(Finding {
            kind: FindingKind::ErrorsGrowing,
            severity: Severity::Fault,
            title: format!("errors growing under load: {} in {secs:.1} s", delta.errors()),
            evidence: vec![
                load.clone(),
                format!(
                    "+{} FCS, +{} alignment, +{} runts, +{} late collisions, +{} aborted, +{} carrier",
                    delta.fcs_errors, delta.alignment_errors, delta.runts(), delta.late(), delta.tx_aborted_errors, delta.tx_carrier_errors
                ),
                format!("{:.3}% of frames", ratio * 100.0),
            ],
            cause: "the fault is happening now, not only in the counters' past: a duplex mismatch or a bad cable/port, and the more traffic the more errors (seed 003 Table 6: collisions grew 3.5 times when both ends sent)".into(),
            fix: "see the findings above for which; recheck after the fix with the same --interval under the same load".into(),
            confidence: if ratio > 1e-3 { Confidence::High } else { Confidence::Medium },
        });
    }
    if delta.overflows() > 0 {
        out.push(Finding {
            kind: FindingKind::OverflowsGrowing,
            severity: if ev.kind.has_phy() { Severity::Fault } else { Severity::Warning },
            title: format!("drops and overruns growing: {} in {secs:.1} s", delta.overflows()),
            evidence: vec![
                load,
                format!(
                    "+{} rx_dropped, +{} tx_dropped, +{} rx_fifo, +{} tx_fifo, +{} rx_missed, +{} rx_over",
                    delta.rx_dropped, delta.tx_dropped, delta.rx_fifo_errors, delta.tx_fifo_errors, delta.rx_missed_errors, delta.rx_over_errors
                ),
            ],
            cause: "buffers full: more traffic arrives or leaves than the interface or the host drains (seed 003 Appendix B, Xmit-Err and Rcv-Err: \"excessive collisions and 10Mb may cause the transmit buffer to become full\"); Linux also counts frames for unknown protocols in rx_dropped".into(),
            fix: "a faster or full-duplex link, larger rings (`ethtool -G`), flow control, or less traffic; check the CPU if rx_missed grows".into(),
            confidence: Confidence::Medium,
        });
    }
}
