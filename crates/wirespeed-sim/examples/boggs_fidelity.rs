//! Issue 21, items 1, 2 and 8: the sensitivity of seed 000's 24-host figures to each candidate
//! cause, one at a time, from the default Titan long net. Prints the tables of bench/RESULTS.md
//! ("Seed 000 fidelity (issue 21)").
//!
//! `cargo run --release -p wirespeed-sim --example boggs_fidelity [SECONDS] [REPLICATIONS]`

use wirespeed_sim::bus::METRES_PER_FOOT;
use wirespeed_sim::{Cable, HostModel, Placement, Scenario, run};

/// Mean utilisation (%), delay (ms), delay sd / mean, collisions per packet over `reps` seeds.
fn point(s: &Scenario, reps: u64) -> (f64, f64, f64, f64) {
    let mut acc = (0.0, 0.0, 0.0, 0.0);
    for seed in 0..reps {
        let r = run(&Scenario {
            seed: seed + 1,
            ..s.clone()
        })
        .expect("scenario runs");
        acc.0 += r.utilization * 100.0;
        acc.1 += r.delay_mean_seconds * 1e3;
        acc.2 += r.delay_std_dev_seconds / r.delay_mean_seconds;
        acc.3 += r.collisions_per_packet;
    }
    let n = reps as f64;
    (acc.0 / n, acc.1 / n, acc.2 / n, acc.3 / n)
}

fn with_host(base: &Scenario, min_us: u64, max_us: u64, retry: bool) -> Scenario {
    Scenario {
        host: HostModel {
            interrupt_min_ns: min_us * 1000,
            interrupt_max_ns: max_us * 1000,
            retry_excessive_collisions: retry,
            ..HostModel::TITAN
        },
        ..base.clone()
    }
}

/// Hosts of each cluster spread `spread_ft` along the coax from the cluster's point (inward
/// at the ends), one every `spread_ft / (per - 1)`.
fn spread_clusters(clusters: usize, hosts: usize, spread_ft: f64) -> Cable {
    let base = Cable::seed_long_net();
    let per = hosts.div_ceil(clusters);
    let step = if per > 1 {
        spread_ft * METRES_PER_FOOT / (per - 1) as f64
    } else {
        0.0
    };
    let metres = (0..hosts)
        .map(|i| {
            let k = i % clusters;
            let j = (i / clusters) as f64;
            let x = base.length_m * k as f64 / (clusters - 1) as f64;
            if k + 1 == clusters {
                x - j * step
            } else {
                x + j * step
            }
        })
        .collect();
    Cable {
        placement: Placement::Positions { metres },
        ..base
    }
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
    println!("{secs} s measured, mean of {reps} seeds per row\n");

    println!("Item 1: 24 hosts, 64 B, long net, 4 clusters (paper: 85%)");
    println!(
        "{:<58} {:>7} {:>9} {:>8} {:>9}",
        "candidate", "util %", "delay ms", "sd/mean", "coll/pkt"
    );
    let base = net(24, 64);
    let mut rows: Vec<(String, Scenario)> = vec![(
        "default: Titan 75-100 us uniform, retry after 16".into(),
        base.clone(),
    )];
    for (lo, hi) in [
        (87, 87),
        (85, 90),
        (80, 95),
        (75, 100),
        (62, 112),
        (50, 125),
        (100, 100),
        (0, 0),
    ] {
        rows.push((
            format!("interrupt restart {lo}-{hi} us uniform"),
            with_host(&base, lo, hi, true),
        ));
    }
    rows.push((
        "discard after 16 collisions".into(),
        with_host(&base, 75, 100, false),
    ));
    for ns in [250.0, 500.0, 1000.0] {
        let mut s = base.clone();
        s.cable.attach_delay_ns = ns;
        rows.push((format!("attachment delay {ns} ns each end"), s));
    }
    for (name, s) in &rows {
        let (u, d, sd, c) = point(s, reps);
        println!("{name:<58} {u:>7.1} {d:>9.3} {sd:>8.2} {c:>9.3}");
    }

    println!(
        "\nItem 1: host counts 2, 3 and 24 at 64 B by interrupt spread (figure 3-5: peak at 2 hosts; 3 hosts collide)"
    );
    for (lo, hi) in [(87, 87), (85, 90), (75, 100)] {
        let us: Vec<String> = [2, 3, 24]
            .iter()
            .map(|&n| {
                format!(
                    "{:.1}",
                    point(&with_host(&net(n, 64), lo, hi, true), reps).0
                )
            })
            .collect();
        println!(
            "interrupt {lo}-{hi} us: util % at 2/3/24 hosts = {}",
            us.join(" / ")
        );
    }

    println!(
        "\nItem 2: 24 hosts, 64 B, two clusters vs four (paper: two clusters ~1.1% lower utilisation, ~1.5% higher delay)"
    );
    println!(
        "{:<58} {:>7} {:>7} {:>8} {:>8}",
        "candidate", "util 4", "util 2", "du %", "ddelay %"
    );
    let mut pairs: Vec<(String, Scenario, Scenario)> = Vec::new();
    let two = |s: &Scenario| Scenario {
        cable: Cable {
            placement: Placement::Clusters { clusters: 2 },
            ..s.cable.clone()
        },
        ..s.clone()
    };
    pairs.push((
        "default (hosts of a cluster at one point)".into(),
        base.clone(),
        two(&base),
    ));
    for ns in [250.0, 500.0] {
        let mut s = base.clone();
        s.cable.attach_delay_ns = ns;
        pairs.push((
            format!("attachment delay {ns} ns each end"),
            s.clone(),
            two(&s),
        ));
    }
    for ft in [50.0, 150.0, 300.0] {
        let four = Scenario {
            cable: spread_clusters(4, 24, ft),
            ..base.clone()
        };
        let twoc = Scenario {
            cable: spread_clusters(2, 24, ft),
            ..base.clone()
        };
        pairs.push((
            format!("hosts of a cluster spread over {ft} ft of coax"),
            four,
            twoc,
        ));
    }
    for (lo, hi) in [(87, 87), (85, 90)] {
        let s = with_host(&base, lo, hi, true);
        pairs.push((
            format!("interrupt restart {lo}-{hi} us"),
            s.clone(),
            two(&s),
        ));
    }
    for (name, four, twoc) in &pairs {
        let a = point(four, reps);
        let b = point(twoc, reps);
        println!(
            "{name:<58} {:>7.2} {:>7.2} {:>+8.2} {:>+8.2}",
            a.0,
            b.0,
            (b.0 / a.0 - 1.0) * 100.0,
            (b.1 / a.1 - 1.0) * 100.0
        );
    }

    println!(
        "\nItem 8: delay sd / mean, 24 hosts (paper: about 2 for large packets and many hosts)"
    );
    for bytes in [64, 1536] {
        for (name, s) in [
            ("default".to_string(), net(24, bytes)),
            (
                "discard after 16 collisions".to_string(),
                with_host(&net(24, bytes), 75, 100, false),
            ),
            (
                "interrupt restart 87 us fixed".to_string(),
                with_host(&net(24, bytes), 87, 87, true),
            ),
        ] {
            let (u, d, sd, _) = point(&s, reps);
            println!(
                "{bytes:>5} B {name:<40} util {u:>5.1}%  delay {d:>7.3} ms  sd/mean {sd:>5.2}"
            );
        }
    }
}
