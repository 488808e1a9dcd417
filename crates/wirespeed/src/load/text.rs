//! `wirespeed load`'s text view: one table of the seed's seven statistics per length mix,
//! measured beside the shared-segment model, each host's part, and the seed's figures 3-3 to
//! 3-9 as plots (`--plot`).

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;
use wirespeed_model::load::DelaySource;
use wirespeed_model::units::{format_seconds, group_digits, significant};
use wirespeed_report::plot::{Labels, Series, line_plot_svg};
use wirespeed_report::{Render, Table};

use super::result::{LoadResult, Stats};

/// A time that may be negative (an excess delay) or absent; below a nanosecond is 0.
fn opt_seconds(s: Option<f64>) -> String {
    match s.filter(|v| v.is_finite()) {
        None => "-".into(),
        Some(v) if v.abs() < 1e-9 => "0".into(),
        Some(v) if v < 0.0 => format!("-{}", format_seconds(-v)),
        Some(v) => format_seconds(v),
    }
}

fn percent(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{}%", significant(f * 100.0, 3)))
}

impl Render for LoadResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut mixes: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !mixes.contains(&r.lengths.as_str()) {
                mixes.push(&r.lengths);
            }
        }
        for mix in mixes {
            writeln!(
                out,
                "Packet lengths {mix} (seed 000 §3.3 statistics per test)"
            )?;
            writeln!(out, "{}", self.mix_table(mix))?;
        }
        self.delay_sources(out)?;
        writeln!(
            out,
            "Model: the simulator's shared 10 Mbit/s CSMA/CD segment (seed 000 §3.5 long net, \
             Titan hosts) for the same hosts and lengths; loopback is not a shared segment."
        )?;
        writeln!(
            out,
            "Bit rates charge 24 byte times per packet (§3.3); excess = delay - hosts x the \
             1-host delay (measured) or the collision-free ideal (model)."
        )?;
        if let Some(file) = &self.results_file {
            writeln!(out, "Results: {file}")?;
        }
        Ok(())
    }
}

impl LoadResult {
    /// One length mix: a row per host count, measured beside the model.
    fn mix_table(&self, mix: &str) -> Table {
        let f = self.rate_format;
        let mut t = Table::new([
            "hosts",
            "bit rate",
            "sd",
            "pkt/s",
            "sd",
            "delay",
            "sd",
            "excess",
            "Jain",
            "loss",
            "| model: bit rate",
            "pkt/s",
            "delay",
            "excess",
            "status",
        ]);
        for r in self.rows.iter().filter(|r| r.lengths == mix) {
            let mut cells: Vec<String> = vec![r.hosts.to_string()];
            match &r.measured {
                Some(m) => cells.extend([
                    f.format(m.bits_per_second),
                    f.format(m.bits_per_second_std_dev),
                    group_digits(m.packets_per_second.round() as u64),
                    group_digits(m.packets_per_second_std_dev.round() as u64),
                    opt_seconds(Some(m.delay_mean_seconds)),
                    opt_seconds(Some(m.delay_std_dev_seconds)),
                    opt_seconds(m.excess_delay_seconds),
                    format!("{:.3}", m.jain_fairness),
                ]),
                None => cells.extend(std::iter::repeat_n("-".to_string(), 8)),
            }
            cells.push(percent(r.loss_at_sink));
            match &r.model_shared_10mbit {
                Some(p) => cells.extend([
                    format!("| {}", f.format(p.bits_per_second)),
                    group_digits(p.packets_per_second.round() as u64),
                    opt_seconds(Some(p.delay_mean_seconds)),
                    opt_seconds(p.excess_delay_seconds),
                ]),
                None => cells.extend(["|".into(), "-".into(), "-".into(), "-".into()]),
            }
            cells.push(if r.complete {
                "ok".into()
            } else {
                format!("INCOMPLETE {}/{}", r.reporting_hosts, r.hosts)
            });
            t.row(cells);
        }
        t
    }

    /// Per agent, which clock stamped its delays (the sources may differ between hosts).
    fn delay_sources(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut sources: Vec<(DelaySource, Option<String>, Vec<String>)> = Vec::new();
        for h in self.rows.iter().flat_map(|r| &r.per_host) {
            let Some(src) = h.delay_source else { continue };
            match sources
                .iter_mut()
                .find(|(s, why, _)| *s == src && why.as_deref() == h.timestamping.as_deref())
            {
                Some((_, _, agents)) if agents.contains(&h.agent) => {}
                Some((_, _, agents)) => agents.push(h.agent.clone()),
                None => sources.push((src, h.timestamping.clone(), vec![h.agent.clone()])),
            }
        }
        for (src, why, agents) in &sources {
            let whom = if sources.len() == 1 {
                String::new()
            } else {
                format!(" [{}]", agents.join(", "))
            };
            let why = why.as_ref().map_or(String::new(), |w| format!(" ({w})"));
            writeln!(out, "Delay: {}{why}{whom}.", src.describe())?;
        }
        Ok(())
    }
}

/// The seed's figures 3-3 to 3-9: x = hosts, one curve per length mix.
#[doc(hidden)]
pub fn write_plots(dir: &Path, result: &LoadResult) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("--plot {}", dir.display()))?;
    type Pick = fn(&Stats) -> Option<f64>;
    let figures: [(&str, &str, &str, Pick); 7] = [
        ("fig3-3-bit-rate", "Total bit rate", "Mbit/s", |s| {
            Some(s.bits_per_second / 1e6)
        }),
        (
            "fig3-4-bit-rate-std-dev",
            "Std. dev. of bit rate",
            "Mbit/s",
            |s| Some(s.bits_per_second_std_dev / 1e6),
        ),
        (
            "fig3-5-packet-rate",
            "Total packet rate",
            "packets/s",
            |s| Some(s.packets_per_second),
        ),
        (
            "fig3-6-packet-rate-std-dev",
            "Std. dev. of packet rate",
            "packets/s",
            |s| Some(s.packets_per_second_std_dev),
        ),
        ("fig3-7-delay", "Average transmission delay", "ms", |s| {
            Some(s.delay_mean_seconds * 1e3)
        }),
        (
            "fig3-8-delay-std-dev",
            "Std. dev. of transmission delay",
            "ms",
            |s| Some(s.delay_std_dev_seconds * 1e3),
        ),
        (
            "fig3-9-excess-delay",
            "Excess transmission delay",
            "ms",
            |s| s.excess_delay_seconds.map(|e| e * 1e3),
        ),
    ];
    let mut mixes: Vec<&str> = Vec::new();
    for r in &result.rows {
        if !mixes.contains(&r.lengths.as_str()) {
            mixes.push(&r.lengths);
        }
    }
    for (name, title, unit, pick) in figures {
        let series: Vec<Series> = mixes
            .iter()
            .map(|&mix| Series {
                name: format!("{mix} bytes"),
                points: result
                    .rows
                    .iter()
                    .filter(|r| r.lengths == mix)
                    .filter_map(|r| {
                        let y = pick(r.measured.as_ref()?)?;
                        y.is_finite().then_some((r.hosts as f64, y))
                    })
                    .collect(),
            })
            .collect();
        let svg = line_plot_svg(
            Labels {
                title,
                x: "hosts",
                y: unit,
            },
            &series,
        )?;
        let path = dir.join(format!("{name}.svg"));
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
