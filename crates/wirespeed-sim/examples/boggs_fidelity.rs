//! Issue 21, items 1, 2 and 8: the sensitivity of seed 000's 24-host figures to each candidate
//! cause, one at a time from the model's default (each row changes one thing), with the mean
//! over replications and its 95% Student-t half-width. Prints the tables of bench/RESULTS.md
//! ("Seed 000 fidelity (issue 21)"); `bash bench/sim-fidelity.sh` runs it.
//!
//! `cargo run --release -p wirespeed-sim --example boggs_fidelity [SECONDS] [REPLICATIONS]`
//! (default 2 s measured, 5 replications, seeds 1..=REPLICATIONS; the same arguments give the
//! same table, bit for bit).

use wirespeed_model::moments::Estimate;
use wirespeed_sim::{Cable, HostModel, MacParams, Placement, RunStats, Scenario, run};

/// The figures of one row over its replications.
struct Row {
    util: Estimate,
    delay_ms: Estimate,
    sd_over_mean: Estimate,
    coll: Estimate,
}

/// Runs `s` with seeds 1..=reps on two threads; `charge` rescales the bit rate (for the
/// accounting variant, whose packets are charged more than they occupy).
fn point(s: &Scenario, reps: u64, charge: f64) -> Row {
    let runs: Vec<RunStats> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2u64)
            .map(|t| {
                scope.spawn(move || {
                    (1..=reps)
                        .filter(|seed| seed % 2 == t)
                        .map(|seed| {
                            (
                                seed,
                                run(&Scenario { seed, ..s.clone() }).expect("scenario runs"),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(u64, RunStats)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect();
        all.sort_by_key(|(seed, _)| *seed);
        all.into_iter().map(|(_, r)| r).collect()
    });
    let est = |f: &dyn Fn(&RunStats) -> f64| {
        Estimate::from_samples_95(&runs.iter().map(f).collect::<Vec<_>>())
    };
    Row {
        util: est(&|r| r.utilization * 100.0 * charge),
        delay_ms: est(&|r| r.delay_mean_seconds * 1e3),
        sd_over_mean: est(&|r| r.delay_std_dev_seconds / r.delay_mean_seconds),
        coll: est(&|r| r.collisions_per_packet),
    }
}

fn pm(e: &Estimate, digits: usize) -> String {
    format!("{:.*} +-{:.*}", digits, e.mean, digits, e.ci_half_width)
}

fn host(base: &Scenario, f: impl FnOnce(&mut HostModel)) -> Scenario {
    let mut s = base.clone();
    f(&mut s.host);
    s
}

fn mac(base: &Scenario, f: impl FnOnce(&mut MacParams)) -> Scenario {
    let mut s = base.clone();
    f(&mut s.mac);
    s
}

fn cable(base: &Scenario, f: impl FnOnce(&mut Cable)) -> Scenario {
    let mut s = base.clone();
    f(&mut s.cable);
    s
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let reps: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let measure_ns = (secs * 1e9) as u64;
    let net = |hosts, bytes| Scenario {
        measure_ns,
        ..Scenario::seed_long_net(hosts, bytes)
    };
    println!(
        "{secs} s measured per run, seeds 1..={reps}, mean +- 95% half-width over the {reps} runs\n"
    );

    println!("Item 1: 24 hosts, 64 B, long net, 4 clusters (seed §3.6: 85%)");
    println!(
        "{:<62} {:>13} {:>15} {:>13} {:>13}",
        "candidate (one change from the default)", "util %", "delay ms", "sd/mean", "coll/pkt"
    );
    let base = net(24, 64);
    let uniform = |s: &Scenario, lo: u64, hi: u64| {
        host(s, |h| {
            h.interrupt_min_ns = lo * 1000;
            h.interrupt_max_ns = hi * 1000;
            h.cycle_ps = 0;
        })
    };
    let mut rows: Vec<(String, Scenario, f64)> = vec![
        (
            "default: Titan 87 us of 45-ns instructions (1 or 2 cycles)".into(),
            base.clone(),
            1.0,
        ),
        (
            "the model before issue 21 (75-100 us uniform, jam at once)".into(),
            mac(&uniform(&base, 75, 100), |m| m.jam_after_preamble = false),
            1.0,
        ),
        (
            "jam at the instant of detection, not after the preamble".into(),
            mac(&base, |m| m.jam_after_preamble = false),
            1.0,
        ),
    ];
    for (lo, hi) in [(87, 87), (85, 90), (80, 95), (75, 100), (62, 112)] {
        rows.push((
            format!("restart {lo}-{hi} us uniform (no instruction stalls)"),
            uniform(&base, lo, hi),
            1.0,
        ));
    }
    rows.push((
        "restart 100 us of instructions (the seed's 'about 100')".into(),
        host(&base, |h| {
            h.interrupt_min_ns = 100_000;
            h.interrupt_max_ns = 100_000;
        }),
        1.0,
    ));
    rows.push((
        "discard after 16 collisions".into(),
        host(&base, |h| h.retry_excessive_collisions = false),
        1.0,
    ));
    rows.push((
        "retry after 16, delay counted from the retry".into(),
        host(&base, |h| h.delay_from_retry = true),
        1.0,
    ));
    rows.push((
        "jam 48 bits (seed §2.1: 32-48)".into(),
        mac(&base, |m| m.jam_bits = 48),
        1.0,
    ));
    rows.push((
        "gap restarted by carrier anywhere in it (part 1 = 96 bits)".into(),
        mac(&base, |m| m.gap_part1_bits = 96),
        1.0,
    ));
    rows.push((
        "gap never restarted once begun (part 1 = 0)".into(),
        mac(&base, |m| m.gap_part1_bits = 0),
        1.0,
    ));
    rows.push((
        "attachment 500 ns each end (seed §3.6: ~10 us round trip)".into(),
        cable(&base, |c| c.attach_delay_ns = 500.0),
        1.0,
    ));
    rows.push((
        "repeater-to-coax 500 ns each end (only between clusters)".into(),
        cable(&base, |c| c.tap_delay_ns = 500.0),
        1.0,
    ));
    for (name, s, charge) in &rows {
        let r = point(s, reps, *charge);
        println!(
            "{name:<62} {:>13} {:>15} {:>13} {:>13}",
            pm(&r.util, 2),
            pm(&r.delay_ms, 3),
            pm(&r.sd_over_mean, 2),
            pm(&r.coll, 3)
        );
    }

    println!(
        "\nItem 1: packet rate and collisions at 2 and 3 hosts, 64 B (figure 3-5: peak at 2, no collision until 3)"
    );
    for (lo, hi) in [(0, 0), (87, 87), (85, 90), (80, 95), (75, 100)] {
        let cells: Vec<String> = [2, 3, 24]
            .iter()
            .map(|&n| {
                let s = if lo == 0 {
                    net(n, 64)
                } else {
                    uniform(&net(n, 64), lo, hi)
                };
                let r = point(&s, reps, 1.0);
                format!("{}% ({:.3} coll/pkt)", pm(&r.util, 1), r.coll.mean)
            })
            .collect();
        let label = if lo == 0 {
            "default: 87 us of instructions".to_string()
        } else {
            format!("{lo}-{hi} us uniform")
        };
        println!(
            "restart {label:<28}: util at 2 / 3 / 24 hosts = {}",
            cells.join(" / ")
        );
    }

    println!(
        "\nItem 2: 24 hosts, 64 B, two clusters at the ends vs four at 1000 ft (seed §3.7: two ~1.1% lower utilisation, ~1.5% higher delay)"
    );
    println!(
        "{:<62} {:>13} {:>13} {:>8} {:>9}",
        "model", "util 4", "util 2", "du %", "ddelay %"
    );
    let two = |s: &Scenario| cable(s, |c| c.placement = Placement::Clusters { clusters: 2 });
    let mut pairs: Vec<(String, Scenario)> = vec![
        ("default (preamble then jam)".into(), base.clone()),
        (
            "jam at the instant of detection (the model before)".into(),
            mac(&base, |m| m.jam_after_preamble = false),
        ),
        ("restart 75-100 us uniform".into(), uniform(&base, 75, 100)),
        ("restart 87 us, no spread".into(), uniform(&base, 87, 87)),
        (
            "restart 0: hosts always ready (Gonsalves and Tobagi's model)".into(),
            uniform(&base, 0, 0),
        ),
        (
            "default + attachment 500 ns each end".into(),
            cable(&base, |c| c.attach_delay_ns = 500.0),
        ),
        (
            "default + repeater-to-coax 500 ns each end".into(),
            cable(&base, |c| c.tap_delay_ns = 500.0),
        ),
    ];
    for us in [80u64, 84, 90, 95, 100] {
        pairs.push((
            format!("restart {us} us of instructions"),
            host(&base, |h| {
                h.interrupt_min_ns = us * 1000;
                h.interrupt_max_ns = us * 1000;
            }),
        ));
    }
    for (name, four) in &pairs {
        let a = point(four, reps, 1.0);
        let b = point(&two(four), reps, 1.0);
        println!(
            "{name:<62} {:>13} {:>13} {:>+8.2} {:>+9.2}",
            pm(&a.util, 2),
            pm(&b.util, 2),
            (b.util.mean / a.util.mean - 1.0) * 100.0,
            (b.delay_ms.mean / a.delay_ms.mean - 1.0) * 100.0
        );
    }

    println!(
        "\nItem 8: delay sd / mean, 24 hosts (seed §3.5, figure 3-8: about 2 at worst, large packets and many hosts)"
    );
    for bytes in [64, 1536] {
        for (name, s) in [
            ("default".to_string(), net(24, bytes)),
            (
                "discard after 16 collisions".to_string(),
                host(&net(24, bytes), |h| h.retry_excessive_collisions = false),
            ),
            (
                "retry after 16, delay from the retry".to_string(),
                host(&net(24, bytes), |h| h.delay_from_retry = true),
            ),
            (
                "restart 75-100 us uniform".to_string(),
                uniform(&net(24, bytes), 75, 100),
            ),
            (
                "hosts always ready (restart 0)".to_string(),
                uniform(&net(24, bytes), 0, 0),
            ),
            (
                "backoff exponent capped at 6, not 10".to_string(),
                mac(&net(24, bytes), |m| m.backoff_limit = 6),
            ),
        ] {
            let r = point(&s, reps, 1.0);
            println!(
                "{bytes:>5} B {name:<40} util {:>13}%  delay {:>15} ms  sd/mean {:>12}",
                pm(&r.util, 2),
                pm(&r.delay_ms, 3),
                pm(&r.sd_over_mean, 2)
            );
        }
    }
}
