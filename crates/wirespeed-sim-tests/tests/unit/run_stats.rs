//! The unit tests of `wirespeed_sim::run_stats`.

use wirespeed_model::moments::Estimate;
use wirespeed_sim::network::{Scenario, run, run_batched};

fn short(hosts: usize, bytes: u64, ms: u64) -> Scenario {
    Scenario {
        warmup_ns: 50_000_000,
        measure_ns: ms * 1_000_000,
        seed: 3,
        ..Scenario::seed_long_net(hosts, bytes)
    }
}

#[test]
fn batches_leave_the_runs_figures_alone_and_add_up_to_its_window() {
    let s = short(5, 512, 200);
    let (stats, batches) = run_batched(&s, 10).unwrap();
    assert_eq!(stats, run(&s).unwrap());
    let pooled = batches.pooled(None);
    let packets: u64 = pooled.iter().map(|c| c.packets).sum();
    assert_eq!(
        packets as f64,
        (stats.packets_per_second * stats.measured_seconds).round()
    );
    assert!((batches.utilization().value - stats.utilization).abs() < 1e-12);
    assert!(run_batched(&s, 1).is_err());
    assert!(run_batched(&s, 101).is_err());
}

#[test]
fn the_jackknife_of_a_rate_is_the_batch_means_interval() {
    let (_, batches) = run_batched(&short(10, 64, 200), 8).unwrap();
    let per_batch: Vec<f64> = batches
        .counters
        .iter()
        .map(|b| {
            b.iter().map(|h| h.charged_bits as f64).sum::<f64>()
                / batches.batch_seconds
                / batches.link_bits_per_second
        })
        .collect();
    let classical = Estimate::from_samples_95(&per_batch);
    let jack = batches.utilization();
    assert!((jack.value - classical.mean).abs() < 1e-12);
    assert!(
        (jack.half_width_95 / classical.ci_half_width - 1.0).abs() < 1e-9,
        "{jack:?} against {classical:?}"
    );
    assert!(jack.half_width_95 > 0.0);
}

#[test]
fn a_short_window_has_a_wider_interval_than_a_long_one() {
    // 24 hosts of 1536-byte packets: the delay's deep-backoff tail makes a short window's
    // mean uncertain. Sixteen times the window: about a quarter of the half-width.
    let (_, a) = run_batched(&short(24, 1536, 200), 10).unwrap();
    let (_, b) = run_batched(&short(24, 1536, 3200), 10).unwrap();
    let (ha, hb) = (
        a.delay_mean_seconds().half_width_95,
        b.delay_mean_seconds().half_width_95,
    );
    assert!(ha > 2.0 * hb, "0.2 s: +-{ha}, 3.2 s: +-{hb}");
    assert!(a.per_host_rate_spread().half_width_95 > b.per_host_rate_spread().half_width_95);
}
