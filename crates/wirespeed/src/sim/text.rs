//! The text view of `wirespeed sim csma`: one table per packet-length mix, the run's totals,
//! the 1976 formula's story (`--theory`) and the seed's figures as plots (`--plot`).

use std::io::{self, Write};

use anyhow::Context;
use wirespeed_model::RateFormat;
use wirespeed_model::csma_theory::MetcalfeBoggs;
use wirespeed_model::units::{format_seconds, group_digits, significant};
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Render, Table};
use wirespeed_sim::PointSummary;

use super::result::{SimPoint, SimReport};

/// The seed's figures 3-3 to 3-9: one plot per statistic, one curve per packet size.
pub(crate) fn write_plots(
    dir: &std::path::Path,
    points: &[SimPoint],
) -> anyhow::Result<Vec<String>> {
    type Stat = fn(&PointSummary) -> f64;
    let figures: [(&str, &str, &str, Stat); 7] = [
        (
            "bit-rate",
            "Total bit rate (seed 000 fig. 3-3)",
            "Mbit/s",
            |s| s.bits_per_second.mean / 1e6,
        ),
        (
            "bit-rate-sd",
            "Std. dev. of bit rate (fig. 3-4)",
            "Mbit/s",
            |s| s.bits_per_second_std_dev.mean / 1e6,
        ),
        (
            "packet-rate",
            "Total packet rate (fig. 3-5)",
            "packets/s",
            |s| s.packets_per_second.mean,
        ),
        (
            "packet-rate-sd",
            "Std. dev. of packet rate (fig. 3-6)",
            "packets/s",
            |s| s.packets_per_second_std_dev.mean,
        ),
        (
            "delay",
            "Average transmission delay (fig. 3-7)",
            "ms",
            |s| s.delay_mean_seconds.mean * 1e3,
        ),
        (
            "delay-sd",
            "Std. dev. of transmission delay (fig. 3-8)",
            "ms",
            |s| s.delay_std_dev_seconds.mean * 1e3,
        ),
        (
            "excess-delay",
            "Excess transmission delay (fig. 3-9)",
            "ms",
            |s| s.excess_delay_seconds.mean * 1e3,
        ),
    ];
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut lengths: Vec<&str> = Vec::new();
    for p in points {
        if !lengths.contains(&p.summary.lengths.as_str()) {
            lengths.push(&p.summary.lengths);
        }
    }
    let mut written = Vec::new();
    for (file, title, unit, stat) in figures {
        let labels = Labels {
            title,
            x: "number of hosts",
            y: unit,
        };
        let plot = lengths.iter().fold(Plot::new(labels), |plot, name| {
            let points = points
                .iter()
                .filter(|p| p.summary.lengths == *name)
                .map(|p| (p.summary.hosts as f64, stat(&p.summary)))
                .collect();
            let series = Series {
                name: format!("{name} bytes"),
                points,
            };
            plot.curve(Curve::new(series, Mark::Line))
        });
        let path = dir.join(format!("{file}.svg"));
        std::fs::write(&path, plot.svg()?)
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// The 1976 formula's story beside the simulated columns (`--theory`).
pub(crate) fn theory_lines(slot_bits: f64) -> Vec<String> {
    let e = std::f64::consts::E;
    let min = MetcalfeBoggs::new(512.0, slot_bits, 1e9);
    let big = MetcalfeBoggs::new(1536.0 * 8.0, slot_bits, 256.0);
    vec![
        "Metcalfe & Boggs (CACM 1976): Q stations always ready, slotted time (slot T = 512 bit \
         times), each transmitting in a slot with probability 1/Q."
            .to_string(),
        "  A = (1 - 1/Q)^(Q-1), the chance that a slot is won; W = (1 - A)/A, slots lost per \
         packet; E = P / (P + W T)."
            .to_string(),
        format!(
            "  As Q grows, A -> 1/e = {:.4} and W -> e - 1 = {:.4}; a 64-byte packet lasts one \
             slot (P = T), so E -> 1/(1 + e - 1) = 1/e = {:.1}%: the '37%' of the myth.",
            1.0 / e,
            e - 1.0,
            min.efficiency * 100.0
        ),
        format!(
            "  For 1536-byte packets the same formula gives {:.1}% even at Q = 256.",
            big.efficiency * 100.0
        ),
        "Why a real Ethernet does not sit at 1/e (seed 000 §2.5): it is unslotted and \
         1-persistent, a collision on a short cable costs the 64-bit preamble and a 32-bit jam \
         or a round trip and the jam (about 10 microseconds), not a whole slot; packets are mostly long; binary exponential \
         backoff adapts to Q; and Q is the number of hosts actually ready, seldom large."
            .to_string(),
        "The simulated columns run that real protocol; the M-B column is the 1976 formula for \
         the same packet size with Q = hosts."
            .to_string(),
    ]
}

impl Render for SimReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut labels: Vec<&str> = Vec::new();
        for p in &self.points {
            if labels.last() != Some(&p.summary.lengths.as_str()) {
                labels.push(&p.summary.lengths);
            }
        }
        for (i, label) in labels.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "packets: {}", describe(label))?;
            write!(out, "{}", self.mix_table(label))?;
        }
        self.totals(out)
    }
}

impl SimReport {
    /// One packet-length mix: a row per host count, with the 95% interval when there are
    /// replications and the 1976 formula when asked for.
    fn mix_table(&self, label: &str) -> Table {
        let ci = self.replications > 1;
        let rate_unit = |bps: f64| {
            if self.rate_format == RateFormat::Adaptive {
                RateFormat::Megabits.value(bps)
            } else {
                self.rate_format.value(bps)
            }
        };
        let unit = if self.rate_format == RateFormat::Adaptive {
            "Mbit/s"
        } else {
            self.rate_format.unit(1e6)
        };
        let mut header = vec![
            "hosts".to_string(),
            unit.to_string(),
            "sd".to_string(),
            "pkt/s".to_string(),
            "sd".to_string(),
            "delay".to_string(),
            "sd".to_string(),
            "excess".to_string(),
            "Jain".to_string(),
            "util".to_string(),
            "coll/pkt".to_string(),
        ];
        if ci {
            header.insert(2, "+-95%".to_string());
        }
        let theory = self.points.iter().any(|p| p.metcalfe_boggs.is_some());
        if theory {
            header.push("M-B".to_string());
        }
        let mut t = Table::new(header);
        for p in self.points.iter().filter(|p| p.summary.lengths == label) {
            let s = &p.summary;
            let mut row = vec![
                s.hosts.to_string(),
                format!("{:.3}", rate_unit(s.bits_per_second.mean)),
                format!("{:.3}", rate_unit(s.bits_per_second_std_dev.mean)),
                group_digits(s.packets_per_second.mean.round() as u64),
                group_digits(s.packets_per_second_std_dev.mean.round() as u64),
                format_seconds(s.delay_mean_seconds.mean),
                format_seconds(s.delay_std_dev_seconds.mean),
                signed_seconds(s.excess_delay_seconds.mean),
                format!("{:.3}", s.jain_fairness.mean),
                format!("{:.1}%", s.utilization.mean * 100.0),
                format!("{:.3}", s.collisions_per_packet.mean),
            ];
            if ci {
                row.insert(
                    2,
                    format!("{:.3}", rate_unit(s.bits_per_second.ci_half_width)),
                );
            }
            if let Some(mb) = &p.metcalfe_boggs {
                row.push(format!("{:.1}%", mb.efficiency * 100.0));
            }
            t.row(row);
        }
        t
    }

    /// What the statistics mean, the simulator's own work, what was dropped, the plots and the
    /// theory.
    fn totals(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "bit rate charges 24 byte times per packet (seed 000 §3.3); sd = standard deviation \
             across hosts (rates) or packets (delay); delay = first attempt to end of success"
        )?;
        let late: u64 = self.points.iter().map(|p| p.summary.late_collisions).sum();
        let dropped: u64 = self.points.iter().map(|p| p.summary.dropped).sum();
        writeln!(
            out,
            "{} events simulated in {} ({} million events/s); {} frames hit 16 collisions; {} \
             late collisions",
            group_digits(self.events),
            format_seconds(self.wall_seconds),
            significant(self.events_per_second / 1e6, 3),
            group_digits(dropped),
            group_digits(late),
        )?;
        let discarded: u64 = self.points.iter().map(|p| p.summary.discarded).sum();
        if discarded > 0 {
            writeln!(
                out,
                "{} packets offered by the generators were discarded for want of a free buffer \
                 (seed 000 figure 2-1: G counts them, the throughput does not)",
                group_digits(discarded)
            )?;
        }
        if !self.plots.is_empty() {
            writeln!(out, "plots: {}", self.plots.join(", "))?;
        }
        if let Some(lines) = &self.theory {
            writeln!(out)?;
            for line in lines {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

fn describe(label: &str) -> String {
    if label.contains('/') && !label.contains('x') {
        format!("{label} (short 64-byte to long 1536-byte)")
    } else if label.contains(':') {
        format!("mix {label} (bytes:weight)")
    } else {
        format!("{label} bytes")
    }
}

fn signed_seconds(s: f64) -> String {
    if s.abs() < 1e-9 {
        "0".to_string()
    } else if s < 0.0 {
        format!("-{}", format_seconds(-s))
    } else {
        format_seconds(s)
    }
}
