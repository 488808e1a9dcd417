//! The text view of `wirespeed diagnose`: each interface's settings, rates and findings, and
//! the transfers of `--peer`.

use std::io::{self, Write};
use std::time::Duration;

use wirespeed_model::RateFormat;
use wirespeed_model::autoneg::duplex_word;
use wirespeed_model::diagnose::{Counters, Severity};
use wirespeed_model::units::format_duration;
use wirespeed_report::Render;

use super::result::{DiagnoseReport, InterfaceReport};
use super::verdicts::confidence_word;

impl Render for DiagnoseReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        for (i, r) in self.interfaces.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            render_one(r, out)?;
        }
        if let Some(p) = &self.peer {
            writeln!(out)?;
            writeln!(
                out,
                "peer {}: a TCP transfer each way, {:.1} s each",
                p.agent, p.seconds_each
            )?;
            for t in [&p.to_peer, &p.from_peer] {
                let retrans = t
                    .retransmits
                    .map_or(String::new(), |r| format!(", {r} segments retransmitted"));
                writeln!(
                    out,
                    "  {:<14} {}{retrans}",
                    t.direction,
                    RateFormat::Adaptive.format(t.bits_per_second)
                )?;
            }
            for f in &p.findings {
                let sev = if f.severity == Severity::Fault {
                    "FAULT"
                } else {
                    "warning"
                };
                writeln!(
                    out,
                    "  {sev} ({} confidence): {}",
                    confidence_word(f.confidence),
                    f.title
                )?;
                writeln!(out, "    evidence: {}", f.evidence.join("; "))?;
                writeln!(out, "    cause:    {}", f.cause)?;
                writeln!(out, "    fix:      {}", f.fix)?;
            }
        }
        Ok(())
    }
}

fn render_one(r: &InterfaceReport, out: &mut dyn Write) -> io::Result<()> {
    let e = &r.evidence;
    let d = &r.diagnosis;
    let carrier = match e.link.carrier {
        Some(true) => "link up",
        Some(false) => "NO LINK",
        None => "link unknown",
    };
    writeln!(out, "{}: {}, {carrier}", e.name, e.kind.describe())?;
    if e.kind.has_phy() || e.link.speed_mbps.is_some() {
        let speed = e
            .link
            .speed_mbps
            .map_or("speed unknown".to_string(), |s| format!("{s} Mbit/s"));
        let duplex = e.link.duplex.map_or("duplex unknown", duplex_word);
        let autoneg = match e.link.autoneg {
            Some(true) => ", auto-negotiation on",
            Some(false) => ", auto-negotiation off",
            None => "",
        };
        writeln!(
            out,
            "  settings   {speed} {duplex}{autoneg} (from {})",
            e.link.source
        )?;
        if let Some(adv) = e.link.advertised.filter(|a| !a.is_empty()) {
            let partner = e
                .link
                .partner_advertised
                .map_or("unknown".to_string(), |p| {
                    if p.is_empty() {
                        "nothing (not negotiating)".to_string()
                    } else {
                        p.to_string()
                    }
                });
            writeln!(out, "  advertised {adv}; partner {partner}")?;
        }
    }
    writeln!(
        out,
        "  traffic    rx {:.0} frames/s {}, tx {:.0} frames/s {} over {}",
        d.rates.rx_packets_per_second,
        RateFormat::Adaptive.format(d.rates.rx_bits_per_second),
        d.rates.tx_packets_per_second,
        RateFormat::Adaptive.format(d.rates.tx_bits_per_second),
        format_duration(Duration::from_secs_f64(e.interval_seconds)),
    )?;
    writeln!(out, "  counters   {}", counter_line(&e.second))?;
    if d.delta.errors() + d.delta.overflows() > 0 {
        writeln!(out, "  growth     {}", counter_line(&d.delta))?;
    }
    for f in &d.findings {
        let sev = match f.severity {
            Severity::Fault => "FAULT",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        if f.severity == Severity::Info {
            writeln!(out, "  {sev}: {}", f.title)?;
            continue;
        }
        let confidence = confidence_word(f.confidence);
        writeln!(out, "  {sev} ({confidence} confidence): {}", f.title)?;
        writeln!(out, "    evidence: {}", f.evidence.join("; "))?;
        writeln!(out, "    cause:    {}", f.cause)?;
        writeln!(out, "    fix:      {}", f.fix)?;
    }
    Ok(())
}

fn counter_line(c: &Counters) -> String {
    format!(
        "rx {} tx {} frames; collisions {}, late {}, FCS {}, alignment {}, runts {}, aborted {}, drops {}/{}, fifo {}/{}, missed {}",
        c.rx_packets,
        c.tx_packets,
        c.all_collisions(),
        c.late(),
        c.fcs_errors,
        c.alignment_errors,
        c.runts(),
        c.tx_aborted_errors,
        c.rx_dropped,
        c.tx_dropped,
        c.rx_fifo_errors,
        c.tx_fifo_errors,
        c.rx_missed_errors,
    )
}
