//! Reproduction of Boggs, Mogul and Kent, "Measured Capacity of an Ethernet" (seed 000, §3),
//! by simulation. Each test names the figure or sentence it checks and states its tolerance.
//! Runs are shorter than the seed's 10 s where the statistic settles sooner (stated per test),
//! so that the suite stays fast.

use wirespeed_sim::sweep::{Point, grid, run_sweep};
use wirespeed_sim::{Arrivals, Cable, HostModel, LengthMix, RunStats, Scenario, run};

fn seed_net(hosts: usize, bytes: u64, seconds: f64, seed: u64) -> Scenario {
    Scenario {
        measure_ns: (seconds * 1e9) as u64,
        seed,
        ..Scenario::seed_long_net(hosts, bytes)
    }
}

fn sim(s: &Scenario) -> RunStats {
    run(s).expect("a valid scenario")
}

/// Mean of a statistic over `seeds` replications.
fn mean_over_seeds(s: &Scenario, seeds: u64, f: fn(&RunStats) -> f64) -> f64 {
    (0..seeds)
        .map(|seed| f(&sim(&Scenario { seed, ..s.clone() })))
        .sum::<f64>()
        / seeds as f64
}

#[test]
fn seed_000_back_to_back_64_byte_packets_are_14204_per_second() {
    // §3.3 and §3.5: 24 byte times of overhead make back-to-back packets exactly 10.0 Mbit/s,
    // and "the theoretical maximum rate for 64 byte packets is about 14,200 packets per
    // second". One host whose transmitter is restarted at once sends back to back, separated
    // only by the gap. Tolerance: 0.01% (one packet in the window).
    let s = Scenario {
        host: HostModel {
            interrupt_min_ns: 0,
            interrupt_max_ns: 0,
            ..HostModel::TITAN
        },
        ..seed_net(1, 64, 1.0, 1)
    };
    let r = sim(&s);
    assert!(
        (r.packets_per_second / (1e7 / 704.0) - 1.0).abs() < 1e-4,
        "{}",
        r.packets_per_second
    );
    assert!((r.bits_per_second / 1e7 - 1.0).abs() < 1e-4);
    assert_eq!(r.collisions, 0);
}

#[test]
fn seed_000_packet_rate_peaks_at_two_hosts_near_13500() {
    // §3.5, figure 3-5: "we were able to achieve about 13,500 packets per second. The packet
    // rate peaks at two hosts; no collisions occur until at least three hosts are
    // transmitting ... two hosts quickly synchronize". Tolerance: 5% on the peak; 2 s runs.
    let rates: Vec<(f64, u64)> = (1..=5)
        .map(|n| {
            let r = sim(&seed_net(n, 64, 2.0, 7));
            (r.packets_per_second, r.collisions)
        })
        .collect();
    let peak = (0..5)
        .max_by(|&a, &b| rates[a].0.total_cmp(&rates[b].0))
        .unwrap();
    assert_eq!(peak + 1, 2, "{rates:?}");
    assert!((rates[1].0 / 13_500.0 - 1.0).abs() < 0.05, "{rates:?}");
    assert_eq!(rates[1].1, 0, "two hosts synchronise without collisions");
    assert!(rates[2].1 > 0, "three hosts collide");
}

#[test]
fn seed_000_64_byte_packets_on_the_long_net_lose_about_15_percent() {
    // §3.6: on the long net "the efficiency drops to only 85%" for 64-byte packets (figure
    // 3-3, 24 hosts). Tolerance: 85% +- 2 points (the seed reads it off its figure). 2 s runs,
    // 2 seeds. The model's Titan restarts its transmitter after 87 us of 45-ns instructions
    // (seed §3.2); with the 75-100 us uniform restart it had before issue 21 the same net
    // carries about 77.5%, outside: the figure is the restart's spread (bench/RESULTS.md).
    let u = mean_over_seeds(&seed_net(24, 64, 2.0, 0), 2, |r| r.utilization);
    assert!((u - 0.85).abs() < 0.02, "{u}");
    let spread = Scenario {
        host: HostModel {
            interrupt_min_ns: 75_000,
            interrupt_max_ns: 100_000,
            cycle_ps: 0,
            ..HostModel::TITAN
        },
        ..seed_net(24, 64, 2.0, 0)
    };
    let wide = mean_over_seeds(&spread, 2, |r| r.utilization);
    assert!(
        wide < u - 0.04,
        "75-100 us uniform {wide} vs instructions {u}"
    );
}

#[test]
fn seed_000_the_titan_restart_is_87_us_and_varies_by_its_instruction_stalls() {
    // §3.2: "about 100 microseconds ... about 1500 machine instructions", 45-ns cycles, "one
    // instruction every 1.5 cycles"; the 2-host peak of 13,500 packets/s puts the restart at
    // 87 us: 1,289 instructions of one or two cycles, so 87 us +- 0.81 us (one sd).
    let titan = HostModel::TITAN;
    assert_eq!(titan.instructions_in(87_000), 1289);
    assert!((titan.mean_interrupt_seconds() - 87e-6).abs() < 1e-12);
    let mut rng = <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(5);
    let xs: Vec<f64> = (0..4000)
        .map(|_| titan.restart_ns(&mut rng) as f64 / 1000.0)
        .collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
    assert!((mean - 87.0).abs() < 0.1, "{mean}");
    assert!((sd - 0.81).abs() < 0.08, "{sd}");
    assert!(xs.iter().all(|&x| (58.0..=116.1).contains(&x)));
}

#[test]
fn seed_000_1536_byte_packets_24_hosts_97_percent_and_31_ms() {
    // §3.5: "When 24 hosts each send 1536-byte packets, it takes about 31 milliseconds for
    // each host to send one packet. Theoretically it should take about 30 mSec; the other
    // 1 mSec (about 3%) is collision overhead. Figure 3-3 agrees, showing a measured
    // efficiency of about 97%". The seed's 10 s window. Tolerances: utilisation 97% +- 1
    // point; delay 31 ms +- 1.5 ms; ideal 30 ms +- 0.5 ms; excess between 0 and 2 ms.
    let r = sim(&seed_net(24, 1536, 10.0, 3));
    assert!((r.utilization - 0.97).abs() < 0.01, "{}", r.utilization);
    assert!(
        (r.delay_mean_seconds - 0.031).abs() < 0.0015,
        "{}",
        r.delay_mean_seconds
    );
    assert!(
        (r.ideal_delay_seconds - 0.030).abs() < 0.0005,
        "{}",
        r.ideal_delay_seconds
    );
    assert!(
        r.excess_delay_seconds > 0.0 && r.excess_delay_seconds < 0.002,
        "{}",
        r.excess_delay_seconds
    );
}

#[test]
fn seed_000_bit_rate_falls_with_hosts_and_rises_with_packet_size() {
    // §3.5, figure 3-3: "the bit rate increases with increasing packet size ... the bit rate
    // decreases with increasing number of hosts ... (For small numbers of hosts and small
    // packet size, bit rate first increases until the offered load exceeds the network
    // capacity.)" Strict orderings; 2 s runs.
    let sizes = [64, 256, 1536, 4000];
    let mut at_24 = Vec::new();
    for bytes in sizes {
        let few = sim(&seed_net(3, bytes, 2.0, 1)).bits_per_second;
        let many = sim(&seed_net(24, bytes, 2.0, 1)).bits_per_second;
        assert!(
            many < few,
            "{bytes} bytes: 24 hosts {many} vs 3 hosts {few}"
        );
        at_24.push(many);
    }
    assert!(at_24.windows(2).all(|w| w[0] < w[1]), "{at_24:?}");
    let one = sim(&seed_net(1, 64, 1.0, 1)).bits_per_second;
    let two = sim(&seed_net(2, 64, 1.0, 1)).bits_per_second;
    assert!(
        two > one * 1.5,
        "64 bytes: rises from 1 to 2 hosts: {one} {two}"
    );
}

#[test]
fn seed_000_short_net_is_more_efficient_most_for_short_packets() {
    // §3.6, figures 3-3 and 3-10: "network efficiency increases as the collision resolution
    // time decreases. The effect is most pronounced with short packets". 24 hosts, 2 s runs,
    // 2 seeds; the gain for 64-byte packets must exceed 0.3 point and the gain for 1536. Over
    // 8 runs it is 0.8 +- 0.3 points (0.26 at 1536); it was 3 points before issue 21, when a
    // collision between neighbours cost 32 bits of jam instead of the 96 of preamble and jam
    // that 802.3 (and the seed's 20-ft net) cannot go below.
    let gain = |bytes| {
        let long = mean_over_seeds(&seed_net(24, bytes, 2.0, 0), 2, |r| r.utilization);
        let short = Scenario {
            cable: Cable::seed_short_net(),
            ..seed_net(24, bytes, 2.0, 0)
        };
        mean_over_seeds(&short, 2, |r| r.utilization) - long
    };
    let (g64, g1536) = (gain(64), gain(1536));
    assert!(g64 > 0.003, "{g64}");
    assert!(g64 > g1536, "{g64} vs {g1536}");
}

#[test]
fn seed_000_two_clusters_against_four_follow_the_phase_of_the_restart() {
    // §3.7, figure 3-12: two clusters at the ends are "about 1.1% lower" than four for
    // 64-byte packets and 24 hosts, with "no appreciable difference" for maximal-length
    // packets. Not reproduced, and why (issue 21, bench/RESULTS.md): a host comes back 87 us
    // after its packet, within a microsecond of the moment a host 3000 ft away sees the next
    // 64-byte packet end and its gap pass (9.6 + 60.8 + 9.6 us + 2 x 3.96 us = 87.9 us), so
    // which layout wins depends on that phase: with the restart at 80 us two clusters are
    // more than 2% lower, at 87 us (the seed's 2-host rate) they are higher. 2 s, 2 seeds.
    // For 1536-byte packets the two are within 0.5 point, as the seed says.
    let relative = |s: Scenario| {
        let four = mean_over_seeds(&s, 2, |r| r.utilization);
        let two = Scenario {
            cable: Cable::seed_two_clusters(),
            ..s
        };
        mean_over_seeds(&two, 2, |r| r.utilization) / four - 1.0
    };
    let restart = |us: u64| Scenario {
        host: HostModel {
            interrupt_min_ns: us * 1000,
            interrupt_max_ns: us * 1000,
            ..HostModel::TITAN
        },
        ..seed_net(24, 64, 2.0, 0)
    };
    let early = relative(restart(80));
    let titan = relative(restart(87));
    assert!(early < -0.02, "restart 80 us: two vs four {early}");
    assert!(titan > 0.0, "restart 87 us: two vs four {titan}");
    let big = relative(seed_net(24, 1536, 2.0, 0));
    assert!(big.abs() < 0.005, "1536: {big}");
}

#[test]
fn seed_000_unfairness_shrinks_with_hosts_to_about_20_percent() {
    // §3.5, figure 3-4 (the standard deviation of the per-host bit rates): "As the number of
    // hosts increases, the fairness increases ... For 20 hosts, the measured standard
    // deviation is about 20% of mean." The seed's 10 s window (the spread of per-host rates
    // depends on it); 512-byte packets; 2 seeds. Tolerance: 20% within [10%, 35%], and the
    // plotted standard deviation smaller at 20 hosts than at 3.
    let spread =
        |n: usize| mean_over_seeds(&seed_net(n, 512, 10.0, 0), 2, |r| r.bits_per_second_std_dev);
    let rate = |n: usize| mean_over_seeds(&seed_net(n, 512, 10.0, 0), 2, |r| r.bits_per_second);
    let (three, twenty) = (spread(3), spread(20));
    let relative = twenty / (rate(20) / 20.0);
    assert!((0.10..0.35).contains(&relative), "{relative}");
    assert!(three > twenty, "{three} vs {twenty}");
}

#[test]
fn seed_000_delay_and_its_spread_grow_linearly_with_hosts() {
    // §3.5, figures 3-7 and 3-8: "the average transmission delay increases linearly with
    // increasing number of hosts", and so does its standard deviation. Least-squares lines
    // through 4..24 hosts, 1536-byte packets, 10 s: the mean delay's R^2 > 0.99 with a slope
    // within 10% of one packet time (1.248 ms per host); the standard deviation's R^2 > 0.8
    // with a positive slope.
    let hosts = [4usize, 8, 12, 16, 20, 24];
    let runs: Vec<RunStats> = hosts
        .iter()
        .map(|&n| sim(&seed_net(n, 1536, 10.0, 2)))
        .collect();
    let x: Vec<f64> = hosts.iter().map(|&n| n as f64).collect();
    let fit = |y: &[f64]| {
        let n = x.len() as f64;
        let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
        let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
        let syy: f64 = y.iter().map(|b| (b - my) * (b - my)).sum();
        (sxy / sxx, sxy * sxy / (sxx * syy))
    };
    let mean: Vec<f64> = runs.iter().map(|r| r.delay_mean_seconds).collect();
    let (slope, r2) = fit(&mean);
    assert!(r2 > 0.99, "{mean:?}");
    assert!((slope / 1.248e-3 - 1.0).abs() < 0.1, "{slope}");
    let spread: Vec<f64> = runs.iter().map(|r| r.delay_std_dev_seconds).collect();
    let (slope, r2) = fit(&spread);
    assert!(slope > 0.0 && r2 > 0.8, "{spread:?}");
}

#[test]
fn seed_000_delay_spread_is_the_deep_backoff_tail_not_twice_the_mean() {
    // §3.5, figure 3-8: "In the worst case, for large packets and many hosts, the standard
    // deviation is about twice the mean." Not reproduced (issue 21 item 8): 24 hosts of 1536
    // bytes give more than 2.5 times the mean, and the measured reason is the tail of packets
    // whose backoff exponent climbs past 6 (waits of 3 to 52 ms, a 16-collision round about
    // 200 ms): capped at 6, the same net gives under 2. 2 s, one seed each.
    let ratio = |s: &Scenario| {
        let r = sim(s);
        r.delay_std_dev_seconds / r.delay_mean_seconds
    };
    let standard = ratio(&seed_net(24, 1536, 2.0, 5));
    let capped = ratio(&Scenario {
        mac: wirespeed_sim::MacParams {
            backoff_limit: 6,
            ..wirespeed_sim::MacParams::table_2(10)
        },
        ..seed_net(24, 1536, 2.0, 5)
    });
    assert!(standard > 2.5, "{standard}");
    assert!(capped < 2.0, "{capped}");
}

#[test]
fn seed_000_one_long_packet_in_eight_beats_all_short_packets() {
    // §3.7, figure 3-11: "when only one out of eight packets is long, the utilization is much
    // higher than when all the packets are short". 24 hosts, 2 s: at least 8 points higher.
    let short = sim(&seed_net(24, 64, 2.0, 4)).utilization;
    let mixed = Scenario {
        lengths: LengthMix::seed_ratio(7, 1),
        ..seed_net(24, 64, 2.0, 4)
    };
    let mixed = sim(&mixed).utilization;
    assert!(mixed > short + 0.08, "7/1 {mixed} vs 64 {short}");
}

#[test]
fn seed_000_a_real_ethernet_is_nowhere_near_one_over_e() {
    // §2.5: "Ethernets saturate at an offered load of 37%" is a myth. The Metcalfe-Boggs
    // formula gives 1/e for minimum packets as Q grows; the unslotted, 1-persistent simulated
    // Ethernet with 24 saturating hosts carries more than twice that.
    let u = sim(&seed_net(24, 64, 1.0, 6)).utilization;
    assert!(u > 2.0 * (-1f64).exp(), "{u}");
}

#[test]
fn runs_are_bit_for_bit_reproducible_from_the_seed() {
    let s = seed_net(6, 256, 0.2, 42);
    assert_eq!(sim(&s), sim(&s));
    assert_ne!(
        sim(&s),
        sim(&Scenario {
            seed: 43,
            ..s.clone()
        })
    );
    // A sweep gives the same figures on one thread or on two.
    let points = grid(&[LengthMix::Fixed { bytes: 64 }], &[3, 5]);
    let one = run_sweep(&s, &points, 2, 1, &|_, _| {}).unwrap();
    let two = run_sweep(&s, &points, 2, 2, &|_, _| {}).unwrap();
    assert_eq!(one, two);
    assert_eq!(one[0].replications, 2);
    assert!(one[1].bits_per_second.ci_half_width.is_finite());
    // And a point does not depend on what else is in the sweep.
    let alone = run_sweep(
        &s,
        &[Point {
            lengths: LengthMix::Fixed { bytes: 64 },
            hosts: 5,
        }],
        2,
        2,
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(alone[0], one[1]);
}

#[test]
fn late_collisions_only_on_a_cable_longer_than_the_standard_allows() {
    // Seed 003 §9: late collisions happen when the round trip exceeds the slot. At 100 Mbit/s
    // a 512-bit slot is 5.12 us, shorter than the 7.9 us round trip of 3000 ft of coax; at
    // 10 Mbit/s (51.2 us) it never is.
    let at = |mbps, cable: Cable| {
        let s = Scenario {
            mac: wirespeed_sim::MacParams::table_2(mbps),
            cable,
            ..seed_net(8, 1536, 0.5, 1)
        };
        sim(&s).late_collisions
    };
    assert!(at(100, Cable::seed_long_net()) > 0);
    assert_eq!(at(10, Cable::seed_long_net()), 0);
    let legal = Cable {
        length_m: 100.0,
        ..Cable::seed_long_net()
    };
    assert_eq!(at(100, legal), 0);
}

#[test]
fn an_offered_load_below_capacity_is_carried_and_above_it_is_discarded() {
    // Figure 2-1: G is measured at the generator, the throughput on the network; a packet
    // that finds every buffer full is discarded. 10 hosts, Poisson, 1 s: at G = 0.3 the
    // network carries 0.3 +- 0.02 and discards nothing; at G = 3 with 2 buffers it carries
    // less than 1 and discards.
    let offered = |load, buffers| Scenario {
        arrivals: Arrivals::Poisson { load },
        host: HostModel {
            buffers,
            ..HostModel::TITAN
        },
        ..seed_net(10, 512, 1.0, 8)
    };
    let light = sim(&offered(0.3, 15));
    assert!(
        (light.utilization - 0.3).abs() < 0.02,
        "{}",
        light.utilization
    );
    assert_eq!(light.discarded, 0);
    let heavy = sim(&offered(3.0, 2));
    assert!(heavy.utilization < 1.0 && heavy.discarded > 0);
    let bursty = Scenario {
        arrivals: Arrivals::Bursty {
            load: 0.3,
            mean_burst: 5.0,
        },
        ..offered(0.3, 15)
    };
    let bursty = sim(&bursty);
    assert!(
        (bursty.utilization - 0.3).abs() < 0.03,
        "{}",
        bursty.utilization
    );
    assert!(bursty.delay_mean_seconds > light.delay_mean_seconds);
}
