//! Sweeps: many (length mix, host count) points, each replicated with independent seeds, run
//! on every core.
//!
//! The seed ran "a test run for each of about 200 combinations of parameter values" overnight
//! (§3.3); here they are independent jobs handed out to worker threads through one atomic
//! counter. A job's seed is derived from the sweep's seed, the point and the replication, never
//! from the thread that ran it, so the results are the same on one core or on many and a point
//! gives the same figures whatever else is in the sweep. Threads are not I/O: the crate stays
//! pure; the caller's progress callback decides whether anything is printed.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::SimError;
use crate::network::{Scenario, run_stoppable};
use crate::run_stats::{PointSummary, RunStats};
use crate::traffic::LengthMix;

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Packet lengths.
    pub lengths: LengthMix,
    /// Transmitting hosts.
    pub hosts: usize,
}

/// The grid of a sweep: every mix at every host count, mixes outermost.
pub fn grid(mixes: &[LengthMix], hosts: &[usize]) -> Vec<Point> {
    mixes
        .iter()
        .flat_map(|m| {
            hosts.iter().map(|&h| Point {
                lengths: m.clone(),
                hosts: h,
            })
        })
        .collect()
}

/// SplitMix64's finaliser: a good 64-bit mix, used to derive independent job seeds.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of replication `rep` of `point` in a sweep seeded `seed`.
pub fn job_seed(seed: u64, point: &Point, rep: usize) -> u64 {
    // FNV-1a of the mix's label: stable across runs and platforms.
    let label = point.lengths.to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    mix64(seed ^ mix64(h ^ mix64(point.hosts as u64 ^ mix64(rep as u64))))
}

/// Runs every point `replications` times on `threads` threads (at least one), calling
/// `progress(done, total)` after each job. Results come back in the order of `points`.
pub fn run_sweep(
    base: &Scenario,
    points: &[Point],
    replications: usize,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<PointSummary>, SimError> {
    let summaries = run_sweep_stoppable(base, points, replications, threads, progress, &|| false)?;
    Ok(summaries
        .into_iter()
        .map(|s| s.expect("a sweep never asked to stop finishes every point"))
        .collect())
}

/// [`run_sweep`] that ends early when `stop()` says so (Ctrl-C): no job starts after it, the
/// jobs running end within 10 ms of simulated time, and a point comes back `None` unless all
/// its replications finished. Finished points have the same figures as in a whole sweep.
pub fn run_sweep_stoppable(
    base: &Scenario,
    points: &[Point],
    replications: usize,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<Option<PointSummary>>, SimError> {
    let replications = replications.max(1);
    let scenarios: Vec<Scenario> = points
        .iter()
        .map(|p| Scenario {
            hosts: p.hosts,
            lengths: p.lengths.clone(),
            ..base.clone()
        })
        .collect();
    for s in &scenarios {
        s.validate()?;
    }
    let total = points.len() * replications;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<RunStats>>> = Mutex::new(vec![None; total]);
    let first_error: Mutex<Option<SimError>> = Mutex::new(None);
    let workers = threads.clamp(1, total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    if stop() {
                        break;
                    }
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= total {
                        break;
                    }
                    let (i, rep) = (job / replications, job % replications);
                    let scenario = Scenario {
                        seed: job_seed(base.seed, &points[i], rep),
                        ..scenarios[i].clone()
                    };
                    match run_stoppable(&scenario, stop) {
                        Ok(Some(stats)) => {
                            results.lock().expect("a worker panicked")[job] = Some(stats);
                        }
                        Ok(None) => break,
                        Err(e) => {
                            first_error
                                .lock()
                                .expect("a worker panicked")
                                .get_or_insert(e);
                        }
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("a worker panicked") {
        return Err(e);
    }
    let results = results.into_inner().expect("a worker panicked");
    Ok(points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let runs: Option<Vec<RunStats>> = results[i * replications..(i + 1) * replications]
                .iter()
                .cloned()
                .collect();
            runs.map(|runs| PointSummary::new(p.lengths.to_string(), &runs))
        })
        .collect())
}
