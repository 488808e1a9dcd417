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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn short(hosts: usize) -> Scenario {
        Scenario {
            measure_ns: 200_000_000,
            warmup_ns: 10_000_000,
            ..Scenario::seed_long_net(hosts, 64)
        }
    }

    #[test]
    fn a_stopped_sweep_keeps_whole_points_with_the_figures_of_a_whole_sweep() {
        let mixes = [LengthMix::Fixed { bytes: 64 }];
        let points = grid(&mixes, &[1, 2, 3, 4]);
        let whole = run_sweep(&short(1), &points, 2, 1, &|_, _| {}).unwrap();
        // Stop after three jobs (one thread: jobs run in order), in the middle of point 2.
        let stopped = AtomicBool::new(false);
        let progress = |done: usize, _: usize| {
            if done >= 3 {
                stopped.store(true, Ordering::SeqCst);
            }
        };
        let part = run_sweep_stoppable(&short(1), &points, 2, 1, &progress, &|| {
            stopped.load(Ordering::SeqCst)
        })
        .unwrap();
        assert_eq!(part.len(), 4);
        assert_eq!(
            part[0].as_ref(),
            Some(&whole[0]),
            "point 1 is whole and identical"
        );
        assert!(part[1].is_none(), "point 2 had one of its two replications");
        assert!(part[2].is_none() && part[3].is_none());
    }

    #[test]
    fn a_stop_ends_a_long_run_within_a_slice() {
        let long = Scenario {
            measure_ns: 3_600_000_000_000,
            ..Scenario::seed_long_net(24, 64)
        };
        let asked = AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, Ordering::SeqCst) >= 2;
        assert!(run_stoppable(&long, &stop).unwrap().is_none());
        // Asked once per 10 ms slice: three slices, not the hour's 360,000.
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }
}
