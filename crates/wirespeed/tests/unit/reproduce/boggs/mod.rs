mod lab;

use std::time::Duration;
use wirespeed::reproduce::Verdict;
use wirespeed::reproduce::boggs::*;
use wirespeed_sim::{Batches, RunStats, Sampled};

fn at(hosts: usize, bytes: u64, ms: u64, seed: u64) -> (RunStats, Batches) {
    sim_batched(&seed_net(hosts, bytes, Duration::from_millis(ms), seed)).unwrap()
}

/// Issue 21: a 0.5 s run's mean delay (24 hosts, 1536 B) falls outside the seed's
/// +-1.5 ms on its own, and within once the run's own sampling error is counted; at the
/// seed's 10 s the interval is narrow (under 2 ms) so a long run is still judged tightly.
#[test]
fn a_short_run_is_judged_with_its_own_sampling_error() {
    let (r, b) = at(24, 1536, 500, 3);
    let ours = r.delay_mean_seconds * 1e3;
    assert!(
        (ours - 31.0).abs() > 1.5,
        "{ours} ms: pick a case the seed's tolerance alone fails"
    );
    let sampled = b.delay_mean_seconds();
    let (v, tol, why) = judged(ours, 31.0, 1.5, "ms", &sampled, 1e3, b.batch_seconds);
    assert_eq!(v, Verdict::Within, "{ours} {tol} {why}");
    assert!(why.contains("within only by it"), "{why}");
    let no_sampling = Sampled {
        half_width_95: 0.0,
        ..sampled
    };
    assert_eq!(
        judged(ours, 31.0, 1.5, "ms", &no_sampling, 1e3, b.batch_seconds).0,
        Verdict::Outside
    );
    let (_, long) = at(24, 1536, 10_000, 3);
    assert!(long.delay_mean_seconds().half_width_95 * 1e3 < 2.0);
    // The sd/mean row stays outside at a long run: its interval does not hide the cause.
    let (rl, _) = at(24, 1536, 10_000, 3);
    let ratio = rl.delay_std_dev_seconds / rl.delay_mean_seconds;
    let (v, _, _) = judged(ratio, 2.0, 0.5, "", &long.delay_sd_over_mean(), 1.0, 1.0);
    assert_eq!(v, Verdict::Outside, "{ratio}");
}

/// Figure 3-4's spread shrinks as 1/sqrt(window): half-second runs fall outside the seed's
/// 10..35% (taken at 10 s) and inside the band scaled to their window, and the batches'
/// per-host sampling error is of the spread's own size (it is the spread's cause).
#[test]
fn the_per_host_spread_is_judged_against_the_band_for_its_window() {
    let (lo, hi) = spread_band(0.5);
    for seed in 0..3 {
        let (r, b) = at(20, 512, 500, seed);
        let spread = r.bits_per_second_std_dev / (r.bits_per_second / 20.0);
        assert!(!(0.10..0.35).contains(&spread), "seed {seed}: {spread}");
        assert!(
            (lo..hi).contains(&spread),
            "seed {seed}: {spread} not in {lo}..{hi}"
        );
        let noise = per_host_sampling(&b);
        assert!(
            noise > 0.5 * spread && noise < 1.5 * spread,
            "{noise} against {spread}"
        );
    }
    assert_eq!(spread_band(10.0), (0.10, 0.35));
}
