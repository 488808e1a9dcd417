//! The unit tests of `wirespeed_sim::sweep`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wirespeed_sim::network::{Scenario, run_stoppable};
use wirespeed_sim::sweep::*;
use wirespeed_sim::traffic::LengthMix;

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
