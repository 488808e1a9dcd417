//! The simulated sweep: every point of the grid run on every core (`--replications` times
//! each), stopped early by Ctrl-C with the points whose every replication finished, and the
//! document with its verdicts and warnings. It prints nothing: the progress bar it advances is
//! the caller's.

use std::time::Instant;

use wirespeed_model::csma_theory::MetcalfeBoggs;
use wirespeed_report::Document;
use wirespeed_sim::sweep::{Point, grid, run_sweep_stoppable};

use super::Config;
use super::analysis::{verdicts, warnings};
use super::result::{SimParams, SimPoint, SimReport};
use super::text::theory_lines;
use crate::common::progress::Progress;

/// Runs the config's grid around its base scenario and returns the typed document.
pub(crate) fn simulate(
    config: &Config,
    bar: &Progress,
) -> anyhow::Result<Document<SimParams, SimReport>> {
    let base = &config.base;
    let points = grid(&config.lengths, &config.hosts);
    let threads = config
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let started = Instant::now();
    let progress = |done: usize, _total: usize| bar.set_position(done as u64);
    let summaries = run_sweep_stoppable(
        base,
        &points,
        config.replications as usize,
        threads,
        &progress,
        &crate::common::interrupt::requested,
    )?;
    bar.finish();
    // After Ctrl-C: the points whose every replication finished, in grid order.
    let (points, summaries): (Vec<Point>, Vec<_>) = points
        .into_iter()
        .zip(summaries)
        .filter_map(|(p, s)| s.map(|s| (p, s)))
        .unzip();
    let wall = started.elapsed().as_secs_f64();
    let events: u64 = summaries.iter().map(|s| s.events).sum();
    let slot = base.mac.slot_bits as f64;
    let sim_points: Vec<SimPoint> = summaries
        .into_iter()
        .zip(&points)
        .map(|(summary, point)| SimPoint {
            metcalfe_boggs: config.theory.then(|| {
                MetcalfeBoggs::new(point.lengths.mean_bytes() * 8.0, slot, point.hosts as f64)
            }),
            summary,
        })
        .collect();
    let warnings = warnings(config.replications, &sim_points);
    let verdicts = verdicts(base, &points, &sim_points);
    let report = SimReport {
        points: sim_points,
        events,
        wall_seconds: wall,
        events_per_second: events as f64 / wall.max(1e-9),
        theory: config.theory.then(|| theory_lines(slot)),
        plots: Vec::new(),
        rate_format: config.rate_format,
        replications: config.replications,
    };
    let mut doc = Document::new("sim", parameters(config, threads), report);
    for verdict in &verdicts {
        doc.verdict(verdict);
    }
    for warning in &warnings {
        doc.warning(warning);
    }
    Ok(doc)
}

/// What was asked, as the document records it.
fn parameters(config: &Config, threads: usize) -> SimParams {
    let base = &config.base;
    SimParams {
        model: "csma",
        rate_bits_per_second: base.mac.bits_per_second,
        mac: base.mac,
        net: config.net,
        cable: base.cable.clone(),
        host: base.host,
        arrivals: base.arrivals,
        hosts: config.hosts.clone(),
        lengths: config.lengths.iter().map(ToString::to_string).collect(),
        warmup_seconds: base.warmup_ns as f64 * 1e-9,
        measured_seconds: base.measure_ns as f64 * 1e-9,
        replications: config.replications,
        seed: base.seed,
        threads,
    }
}
