//! Series of runs: `wirespeed sweep` (Van Jacobson's buffer grid, seed 004) and `wirespeed
//! load` (Boggs, Mogul and Kent's host counts, seed 000), both as a finished document and as
//! the results file the command appends to while it runs (a plan line, then one line per run).
//!
//! For a results file the page computes only what the runs state directly: a cell's median
//! rate (bytes over seconds), and a load test's total bit rate (charged bits over the measured
//! window, as `wirespeed_sim::RunStats` defines it). The verdicts need the command itself:
//! `--resume FILE` finishes the series and prints them.

use serde_json::Value;
use wirespeed_model::ByteSize;
use wirespeed_model::stats::median;

use crate::plot::{Curve, Labels, Mark, Series};

use super::markup::{Cell, HtmlTable, Markup, number, rate, seconds};
use super::plots;
use super::sections::{list, num};

/// A buffer size on a sweep axis: `{"packets": N}` or `{"bytes": N}`.
fn buffer_label(v: &Value) -> String {
    if let Some(p) = num(v, &["packets"]) {
        format!("{}p", number(p))
    } else if let Some(b) = v.get("bytes").and_then(Value::as_u64) {
        ByteSize::from_bytes(b).to_string().replace(' ', "")
    } else {
        super::generic::scalar("", v)
    }
}

/// The buffer in packets of `mss` bytes, for the diagonal's x axis.
fn buffer_packets(v: &Value, mss: f64) -> Option<f64> {
    num(v, &["packets"]).or_else(|| Some(num(v, &["bytes"])? / mss.max(1.0)))
}

fn kib(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1024.0
}

/// Medians (KiB/s) as `values[send][receive]` from `(snd_index, rcv_index, bytes/s)`.
fn matrix(rows: usize, columns: usize, cells: &[(usize, usize, f64)]) -> Vec<Vec<Option<f64>>> {
    let mut values = vec![vec![None; columns]; rows];
    for &(s, r, v) in cells {
        if let Some(cell) = values.get_mut(s).and_then(|row| row.get_mut(r)) {
            *cell = Some(kib(v));
        }
    }
    values
}

fn sweep_plots(m: &mut Markup, plan: &Value, cells: &[(usize, usize, f64)], ceiling: Option<f64>) {
    let snd = list(plan, &["snd"]);
    let rcv = list(plan, &["rcv"]);
    let rows: Vec<String> = snd.iter().map(buffer_label).collect();
    let columns: Vec<String> = rcv.iter().map(buffer_label).collect();
    let svg = plots::heatmap(
        Labels {
            title: "task-to-task KiB/s (median)",
            x: "receive buffer",
            y: "send buffer",
        },
        &columns,
        &rows,
        &matrix(rows.len(), columns.len(), cells),
    );
    plots::figure(m, "median rate of every send x receive buffer pair", svg);
    let mss = num(plan, &["mss_bytes"]).unwrap_or(1.0);
    let diagonal: Vec<(f64, f64)> = cells
        .iter()
        .filter(|(s, r, _)| snd.get(*s).is_some() && snd.get(*s) == rcv.get(*r))
        .filter_map(|&(s, _, v)| Some((buffer_packets(&snd[s], mss)?, kib(v))))
        .collect();
    let mut curves = vec![Curve::new(
        Series {
            name: "measured (median)".into(),
            points: diagonal.clone(),
        },
        Mark::LineAndPoints,
    )];
    let xs = diagonal.iter().map(|p| p.0);
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    if let Some(c) = ceiling.filter(|_| lo.is_finite()) {
        curves.push(Curve::new(
            Series {
                name: "envelope ceiling".into(),
                points: vec![(lo, kib(c)), (hi, kib(c))],
            },
            Mark::Line,
        ));
    }
    let x_title = format!("socket buffer (packets of {} bytes)", number(mss));
    let svg = plots::chart(
        Labels {
            title: "send = receive buffer",
            x: &x_title,
            y: "KiB/s",
        },
        curves,
        false,
    );
    plots::figure(m, "the diagonal: equal send and receive buffers", svg);
}

/// A finished `wirespeed sweep` document: the diagonal table, the heatmap and the diagonal.
pub(crate) fn sweep(doc: &Value) -> Markup {
    let result = doc.get("result").unwrap_or(&Value::Null);
    let plan = result.get("plan").unwrap_or(&Value::Null);
    let mut m = Markup::new();
    if result.get("complete").and_then(Value::as_bool) == Some(false) {
        m.note(&format!(
            "incomplete: {} of {} runs finished",
            list(result, &["runs"]).len(),
            num(result, &["runs_planned"]).map_or_else(|| "?".into(), number)
        ));
    }
    let mss = num(plan, &["mss_bytes"]).unwrap_or(1.0);
    let mut t = HtmlTable::new(["buffer", "KiB/s task to task", "wire rate", "% of ceiling"]);
    for row in list(result, &["analysis", "diagonal"]) {
        let buffer = row.get("buffer").unwrap_or(&Value::Null);
        let bytes = buffer_packets(buffer, mss).map(|p| p * mss);
        t.row(vec![
            Cell::text(match bytes {
                Some(b) if b.fract() == 0.0 && (0.0..1e15).contains(&b) => format!(
                    "{} ({})",
                    buffer_label(buffer),
                    ByteSize::from_bytes(b as u64)
                ),
                _ => buffer_label(buffer),
            }),
            Cell::opt(num(row, &["task_to_task_kib_per_second"]).map(number)),
            Cell::opt(num(row, &["wire_mbit_per_second"]).map(|w| format!("{} Mbit/s", number(w)))),
            Cell::opt(num(row, &["percent_of_ceiling"]).map(|p| format!("{} %", number(p)))),
        ]);
    }
    if !t.is_empty() {
        m.heading("Send = receive buffer (the seed's table)");
        m.push(&t.markup());
    }
    let cells: Vec<(usize, usize, f64)> = list(result, &["analysis", "cells"])
        .iter()
        .filter_map(|c| {
            Some((
                index(c, "snd_index")?,
                index(c, "rcv_index")?,
                num(c, &["median_bytes_per_second"])?,
            ))
        })
        .collect();
    m.heading("Throughput against socket buffers");
    sweep_plots(
        &mut m,
        plan,
        &cells,
        num(result, &["ceiling_bytes_per_second"]),
    );
    m
}

fn index(v: &Value, key: &str) -> Option<usize> {
    v.get(key)?.as_u64().and_then(|i| usize::try_from(i).ok())
}

/// A sweep results file: the plan, and each cell's median of the runs that finished.
pub(crate) fn sweep_runs(plan: &Value) -> Markup {
    let runs = list(plan, &["runs"]);
    let reps = num(plan, &["reps"]).unwrap_or(1.0);
    let planned = list(plan, &["snd"]).len() as f64 * list(plan, &["rcv"]).len() as f64 * reps;
    let mut m = Markup::new();
    m.note(&format!(
        "a sweep results file: {} of {} planned runs finished; medians are computed here, \
         verdicts come from \"wirespeed sweep --resume FILE\"",
        runs.len(),
        number(planned)
    ));
    let mut groups: Vec<((usize, usize), Vec<f64>)> = Vec::new();
    for r in runs {
        let (Some(s), Some(c)) = (index(r, "snd_index"), index(r, "rcv_index")) else {
            continue;
        };
        let (Some(bytes), Some(secs)) = (num(r, &["bytes"]), num(r, &["seconds"])) else {
            continue;
        };
        let rate = if secs > 0.0 { bytes / secs } else { 0.0 };
        match groups.iter_mut().find(|g| g.0 == (s, c)) {
            Some(g) => g.1.push(rate),
            None => groups.push(((s, c), vec![rate])),
        }
    }
    let cells: Vec<(usize, usize, f64)> = groups
        .iter()
        .map(|((s, c), rates)| (*s, *c, median(rates)))
        .collect();
    if !cells.is_empty() {
        m.heading("Throughput against socket buffers");
        sweep_plots(&mut m, plan, &cells, None);
    }
    m
}

/// One load test's figures: lengths, hosts, and the measured (or computed) statistics.
struct LoadRow {
    lengths: String,
    hosts: f64,
    bits_per_second: Option<f64>,
    packets_per_second: Option<f64>,
    delay_mean_seconds: Option<f64>,
    excess_delay_seconds: Option<f64>,
    jain_fairness: Option<f64>,
    model_bits_per_second: Option<f64>,
    complete: bool,
}

fn load_section(rows: &[LoadRow]) -> Markup {
    let mut t = HtmlTable::new([
        "lengths",
        "hosts",
        "bit rate",
        "packets/s",
        "mean delay",
        "excess delay",
        "Jain fairness",
        "model: shared 10 Mbit/s",
        "complete",
    ]);
    let mut measured: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut model: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let push = |curves: &mut Vec<(String, Vec<(f64, f64)>)>, name: &str, p: (f64, f64)| match curves
        .iter_mut()
        .find(|c| c.0 == name)
    {
        Some(c) => c.1.push(p),
        None => curves.push((name.to_string(), vec![p])),
    };
    for r in rows {
        t.row(vec![
            Cell::text(r.lengths.clone()),
            Cell::num(number(r.hosts)),
            Cell::opt(r.bits_per_second.map(rate)),
            Cell::opt(r.packets_per_second.map(number)),
            Cell::opt(r.delay_mean_seconds.map(seconds)),
            Cell::opt(r.excess_delay_seconds.map(seconds)),
            Cell::opt(r.jain_fairness.map(number)),
            Cell::opt(r.model_bits_per_second.map(rate)),
            Cell::text(if r.complete { "yes" } else { "no" }),
        ]);
        if let Some(b) = r.bits_per_second {
            push(&mut measured, &r.lengths, (r.hosts, b / 1e6));
        }
        if let Some(b) = r.model_bits_per_second {
            push(&mut model, &r.lengths, (r.hosts, b / 1e6));
        }
    }
    let mut m = Markup::new();
    if t.is_empty() {
        return m;
    }
    m.heading("Tests");
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    let curves = measured
        .into_iter()
        .map(|(name, points)| (format!("{name} bytes"), points, Mark::LineAndPoints))
        .chain(
            model
                .into_iter()
                .map(|(name, points)| (format!("{name} bytes, model"), points, Mark::Line)),
        )
        .map(|(name, points, mark)| Curve::new(Series { name, points }, mark))
        .collect();
    let svg = plots::chart(
        Labels {
            title: "total bit rate against hosts",
            x: "hosts",
            y: "Mbit/s",
        },
        curves,
        true,
    );
    plots::figure(
        &mut m,
        "aggregate bit rate per packet length (lines alone: the shared-segment model)",
        svg,
    );
    m
}

/// A finished `wirespeed load` document.
pub(crate) fn load(doc: &Value) -> Markup {
    let result = doc.get("result").unwrap_or(&Value::Null);
    let rows: Vec<LoadRow> = list(result, &["rows"])
        .iter()
        .filter_map(|r| {
            let f = |k: &str| num(r, &["measured", k]);
            Some(LoadRow {
                lengths: r.get("lengths").map(|v| super::generic::scalar("", v))?,
                hosts: num(r, &["hosts"])?,
                bits_per_second: f("bits_per_second"),
                packets_per_second: f("packets_per_second"),
                delay_mean_seconds: f("delay_mean_seconds"),
                excess_delay_seconds: f("excess_delay_seconds"),
                jain_fairness: f("jain_fairness"),
                model_bits_per_second: num(r, &["model_shared_10mbit", "bits_per_second"]),
                complete: r.get("complete").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect();
    load_section(&rows)
}

/// A load results file: each finished test's totals from its hosts' raw counters.
pub(crate) fn load_runs(plan: &Value) -> Markup {
    let runs = list(plan, &["runs"]);
    let planned = list(plan, &["hosts"]).len() * list(plan, &["lengths"]).len();
    let mut m = Markup::new();
    m.note(&format!(
        "a load results file: {} of {planned} planned tests finished; totals are computed here \
         from the counters, the model and verdicts come from \"wirespeed load --resume FILE\"",
        runs.len()
    ));
    let window = num(plan, &["schedule", "measure_ns"]).map(|ns| ns * 1e-9);
    let rows: Vec<LoadRow> = runs
        .iter()
        .filter_map(|r| {
            let counters: Vec<&Value> = list(r, &["agents"])
                .iter()
                .filter_map(|a| at_counters(a))
                .collect();
            let sum = |k: &str| counters.iter().filter_map(|c| num(c, &[k])).sum::<f64>();
            let per_second = |total: f64| window.filter(|w| *w > 0.0).map(|w| total / w);
            let rates: Vec<f64> = counters
                .iter()
                .filter_map(|c| per_second(num(c, &["charged_bits"])?))
                .collect();
            let delays = sum("delay_count");
            Some(LoadRow {
                lengths: r.get("lengths").map(|v| super::generic::scalar("", v))?,
                hosts: num(r, &["hosts"])?,
                bits_per_second: per_second(sum("charged_bits")).filter(|_| !counters.is_empty()),
                packets_per_second: per_second(sum("packets")).filter(|_| !counters.is_empty()),
                delay_mean_seconds: (delays > 0.0).then(|| sum("delay_sum_s") / delays),
                excess_delay_seconds: None,
                jain_fairness: (!rates.is_empty())
                    .then(|| wirespeed_model::sample_stats::jain_fairness(&rates)),
                model_bits_per_second: None,
                complete: r.get("complete").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect();
    m.push(&load_section(&rows));
    if rows.is_empty() && !runs.is_empty() {
        m.note(&format!(
            "{} run line(s) without hosts and lengths: shown under every field",
            runs.len()
        ));
    }
    m
}

fn at_counters(agent: &Value) -> Option<&Value> {
    agent
        .get("report")?
        .get("counters")
        .filter(|c| c.is_object())
}
