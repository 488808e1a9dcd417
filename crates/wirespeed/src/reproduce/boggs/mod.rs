//! `reproduce boggs` (seed 000, Boggs, Mogul and Kent, "Measured Capacity of an Ethernet"):
//! the simulated 3000-foot, four-cluster Ethernet of §3.5 with N hosts sending flat out,
//! beside the figures the seed states in its text (§3.3, §3.5, §3.6), and the bit rate vs N
//! for the seed's packet lengths (figure 3-3, which the seed only plots).
//!
//! The seed's numbers are taken from its text as `crates/wirespeed-sim/tests/seed_000.rs`
//! takes them, with the same tolerances; the simulator runs in process (library
//! `wirespeed_sim::run`).
//!
//! A run shorter than the seed's 10 s is judged as what it is (issue 21): each stated figure
//! comes from a run cut into [`BATCHES`] batches (`wirespeed_sim::run_batched`), and its
//! tolerance is the seed's plus the run's own 95% sampling half-width from those batches
//! (jackknife), printed beside the figure. The per-host spread of figure 3-4 is not a figure
//! that settles with time but the window's sampling noise itself (the batches' per-host
//! sampling error accounts for it at every length: bench/RESULTS.md), so it shrinks as
//! 1/sqrt(window): its 10..35% band at the seed's 10 s is scaled by sqrt(10 s / window).

use std::time::Duration;

use wirespeed_sim::network::TITAN_CYCLE_PS;
use wirespeed_sim::{Batches, Cable, HostModel, MacParams, RunStats, Sampled, Scenario};

use super::{Comparison, Name, Options, Reproduction, Row, Verdict, setting};

#[doc(hidden)]
pub mod lab;

#[doc(hidden)]
pub fn seed_net(hosts: usize, bytes: u64, time: Duration, seed: u64) -> Scenario {
    Scenario {
        measure_ns: time.as_nanos() as u64,
        seed,
        ..Scenario::seed_long_net(hosts, bytes)
    }
}

fn sim(s: &Scenario) -> anyhow::Result<RunStats> {
    Ok(wirespeed_sim::run(s)?)
}

/// Batches a stated figure's run is cut into for its sampling error.
pub(crate) const BATCHES: usize = 10;

#[doc(hidden)]
pub fn sim_batched(s: &Scenario) -> anyhow::Result<(RunStats, Batches)> {
    Ok(wirespeed_sim::run_batched(s, BATCHES)?)
}

/// The seed's window, seconds (§3.3: 10 s measured in the middle of 20).
const SEED_WINDOW_S: f64 = 10.0;

/// A figure within `tol` of the seed's, widened by the run's 95% sampling half-width
/// (`scale` turns the sampled value's unit into the row's). Returns the verdict, the
/// tolerance in words and what the interval says for the reason.
#[doc(hidden)]
pub fn judged(
    ours: f64,
    paper: f64,
    tol: f64,
    unit: &str,
    sampled: &Sampled,
    scale: f64,
    batch_seconds: f64,
) -> (Verdict, String, String) {
    let hw = sampled.half_width_95 * scale;
    let hw = if hw.is_finite() { hw } else { 0.0 };
    let off = (ours - paper).abs();
    let verdict = Verdict::of(off <= tol + hw);
    let sep = if unit.is_empty() { "" } else { " " };
    let tolerance = format!("+-{tol}{sep}{unit} + sampling +-{hw:.2}");
    let mut why = format!(
        "; this run's sampling error +-{hw:.2}{sep}{unit} (95%, jackknife over {} batches of {batch_seconds} s)",
        sampled.batches
    );
    if off > tol && off <= tol + hw {
        why.push_str(": within only by it, a longer -t decides");
    }
    (verdict, tolerance, why)
}

/// Figure 3-4's band (10..35% of the mean at the seed's 10 s window) for a window of
/// `window_s`: the spread is the window's sampling noise, so it scales as 1/sqrt(window).
#[doc(hidden)]
pub fn spread_band(window_s: f64) -> (f64, f64) {
    let k = (SEED_WINDOW_S / window_s).sqrt();
    (0.10 * k, 0.35 * k)
}

/// The per-host rates' sampling error from the batches (the root mean square over hosts of
/// each host's batch-means standard error), over the mean rate: how much spread sampling
/// alone puts between symmetric hosts in this window.
#[doc(hidden)]
pub fn per_host_sampling(batches: &Batches) -> f64 {
    let b = batches.counters.len();
    let hosts = batches.counters.first().map_or(0, Vec::len);
    if b < 2 || hosts == 0 {
        return f64::NAN;
    }
    let (mut var, mut total) = (0.0, 0.0);
    for h in 0..hosts {
        let xs: Vec<f64> = batches
            .counters
            .iter()
            .map(|c| c[h].charged_bits as f64 / batches.batch_seconds)
            .collect();
        let m = xs.iter().sum::<f64>() / b as f64;
        var += xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / ((b - 1) * b) as f64;
        total += m;
    }
    (var / hosts as f64).sqrt() / (total / hosts as f64)
}

/// Host counts of the bit-rate-vs-N table (the seed ran 1..24).
const HOSTS: [usize; 8] = [1, 2, 3, 5, 10, 15, 20, 24];
/// The seed's lengths shown (of its nine, 64 to 4000 bytes).
const LENGTHS: [u64; 4] = [64, 512, 1536, 4000];

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let time = options.time.unwrap_or(Duration::from_secs(10));
    let mut truth = ground_truth(time.as_secs_f64());
    let mut comparisons = vec![stated(time)?, bit_rate_vs_n(time)?];
    let mut notes = Vec::new();
    if options.lab {
        let window = options.time.unwrap_or(Duration::from_secs(2));
        let (lab, lab_truth) = lab::run(&options.lab_hosts, window)?;
        comparisons.push(lab);
        truth.extend(lab_truth);
        notes.push("lab rows: the seed prints no numbers for figure 3-3, so the lab is compared with the simulator for the same segment (no paper column)".into());
    } else {
        notes.push("--lab adds the lab form (root): wirespeed load --raw on labs/boggs-24.toml beside the simulator".into());
    }
    Ok(Reproduction::new(Name::Boggs, truth, comparisons, notes))
}

/// The segment and hosts every point of this reproduction configures.
fn ground_truth(t: f64) -> Vec<super::Setting> {
    vec![
        setting(
            "medium",
            "10 Mbit/s CSMA/CD, IEEE 802.3 / seed 003 Table 2 timing",
        ),
        setting(
            "cable",
            "3000 ft at 0.77 c, hosts in 4 clusters (seed §3.5 long net)",
        ),
        setting(
            "hosts",
            "Titan model: 15 buffers, transmitter restarted 87 us after each packet (1,289 instructions of one or two 45-ns cycles: +-0.8 us)",
        ),
        setting(
            "measured time per point",
            format!("{t} s (the seed: 10 s of 20)"),
        ),
    ]
}

/// The windows of a run: the one asked for (the stated figures), and at most 2 s for the
/// runs that measure the causes printed beside rows on the spot.
#[derive(Clone, Copy)]
struct Windows {
    time: Duration,
    short: Duration,
}

/// The figures the seed states in its text, each judged against its tolerance.
fn stated(time: Duration) -> anyhow::Result<Comparison> {
    let w = Windows {
        time,
        short: time.min(Duration::from_secs(2)),
    };
    let mut rows = vec![back_to_back(time)?];
    rows.extend(packet_rate_peak(time)?);
    rows.extend(small_packets(w)?);
    rows.extend(large_packets(w)?);
    rows.push(per_host_spread(time)?);
    Ok(Comparison {
        title: "Figures the seed states in its text".into(),
        source: "seed 000 §3.3, §3.5 (figures 3-3 to 3-5, 3-8), §3.6, §3.7".into(),
        method: format!(
            "library: wirespeed_sim::run(Scenario::seed_long_net(N, bytes)), one replication per point; a row with a sampling error: run_batched, the same run cut into {BATCHES} batches"
        ),
        rows,
    })
}

/// §3.3/§3.5: back-to-back 64-byte packets, 24 byte times of overhead each.
fn back_to_back(time: Duration) -> anyhow::Result<Row> {
    let b2b = Scenario {
        host: HostModel {
            interrupt_min_ns: 0,
            interrupt_max_ns: 0,
            ..HostModel::TITAN
        },
        ..seed_net(1, 64, time, 1)
    };
    let r = sim(&b2b)?;
    let ideal = 1e7 / ((64.0 + 24.0) * 8.0);
    Ok(Row {
        quantity: "1 host, 64 B back to back".into(),
        unit: "packets/s".into(),
        configured: Some(ideal),
        paper: Some(14_200.0),
        ours: Some(r.packets_per_second),
        tolerance: "1% of paper".into(),
        verdict: Verdict::of((r.packets_per_second / 14_200.0 - 1.0).abs() <= 0.01),
        why: "§3.5 \"about 14,200\"; configured = 10 Mbit/s / (88 x 8 bits)".into(),
    })
}

/// §3.5, figure 3-5: the packet rate peaks at two hosts near 13,500/s.
fn packet_rate_peak(time: Duration) -> anyhow::Result<[Row; 2]> {
    let small: Vec<RunStats> = (1..=5)
        .map(|n| sim(&seed_net(n, 64, time, 7)))
        .collect::<anyhow::Result<_>>()?;
    let peak = (0..small.len())
        .max_by(|&a, &b| {
            small[a]
                .packets_per_second
                .total_cmp(&small[b].packets_per_second)
        })
        .map_or(0, |i| i + 1);
    let two = small[1].packets_per_second;
    Ok([
        Row {
            quantity: "2 hosts, 64 B".into(),
            unit: "packets/s".into(),
            configured: None,
            paper: Some(13_500.0),
            ours: Some(two),
            tolerance: "5%".into(),
            verdict: Verdict::of((two / 13_500.0 - 1.0).abs() <= 0.05),
            why: format!(
                "§3.5 \"about 13,500 packets per second\"; {:+.1}%, {} collisions (the seed: two hosts synchronise)",
                (two / 13_500.0 - 1.0) * 100.0,
                small[1].collisions
            ),
        },
        Row {
            quantity: "64 B: host count of the packet-rate peak".into(),
            unit: "hosts".into(),
            configured: None,
            paper: Some(2.0),
            ours: Some(peak as f64),
            tolerance: "exact".into(),
            verdict: Verdict::of(peak == 2),
            why: "figure 3-5 \"the packet rate peaks at two hosts\" (searched over 1..5)".into(),
        },
    ])
}

/// The Titan's transmitter restart replaced by a uniform `lo_us`..`hi_us` (instructions of
/// `cycle_ps`, 0 for none), to measure a cause beside a row.
fn restart(s: Scenario, lo_us: u64, hi_us: u64, cycle_ps: u64) -> Scenario {
    Scenario {
        host: HostModel {
            interrupt_min_ns: lo_us * 1000,
            interrupt_max_ns: hi_us * 1000,
            cycle_ps,
            ..HostModel::TITAN
        },
        ..s
    }
}

/// 64-byte packets from 24 hosts: §3.6's efficiency and §3.7's two clusters against four,
/// both from the same four-cluster run.
fn small_packets(w: Windows) -> anyhow::Result<[Row; 2]> {
    let Windows { time, short } = w;
    // §3.6: 64-byte packets on the long net, 24 hosts: 85% efficiency.
    let (four64, four64_b) = sim_batched(&seed_net(24, 64, time, 0))?;
    let u64b = four64.utilization;
    let bs = four64_b.batch_seconds;
    let before = sim(&Scenario {
        mac: MacParams {
            jam_after_preamble: false,
            ..MacParams::table_2(10)
        },
        ..restart(seed_net(24, 64, short, 0), 75, 100, 0)
    })?
    .utilization;
    let spread = sim(&restart(seed_net(24, 64, short, 0), 75, 100, 0))?.utilization;
    let (verdict, tolerance, sampling) = judged(
        u64b * 100.0,
        85.0,
        2.0,
        "points",
        &four64_b.utilization(),
        100.0,
        bs,
    );
    let efficiency = Row {
        quantity: "24 hosts, 64 B utilisation".into(),
        unit: "%".into(),
        configured: None,
        paper: Some(85.0),
        ours: Some(u64b * 100.0),
        tolerance,
        verdict,
        why: format!(
            "§3.6 \"the efficiency drops to only 85%\"; the cause modelled: the Titan's transmitter restart, 87 us of 45-ns instructions of one or two cycles (+-0.8 us), where a 75-100 us uniform restart gives {:.1}% (measured now, {} s) and the model before issue 21 (that spread, jam at once) {:.1}%{sampling}",
            spread * 100.0,
            short.as_secs_f64(),
            before * 100.0
        ),
    };

    // §3.7: two clusters at the ends against four, 64-byte packets, 24 hosts.
    let two_clusters = |s: Scenario| Scenario {
        cable: Cable::seed_two_clusters(),
        ..s
    };
    let relative = |four: &Scenario| -> anyhow::Result<f64> {
        let a = sim(four)?.utilization;
        let b = sim(&two_clusters(four.clone()))?.utilization;
        Ok((b / a - 1.0) * 100.0)
    };
    let (two64, two64_b) = sim_batched(&two_clusters(seed_net(24, 64, time, 0)))?;
    let ours_rel = (two64.utilization / u64b - 1.0) * 100.0;
    // The difference of two runs: their relative sampling errors add in quadrature.
    let (ua, ub) = (four64_b.utilization(), two64_b.utilization());
    let rel = Sampled {
        value: ours_rel,
        half_width_95: (two64.utilization / u64b)
            * ((ua.half_width_95 / ua.value).powi(2) + (ub.half_width_95 / ub.value).powi(2))
                .sqrt(),
        batches: BATCHES,
    };
    let (verdict, tolerance, sampling) = judged(ours_rel, -1.1, 1.0, "points", &rel, 100.0, bs);
    let ready = relative(&restart(seed_net(24, 64, short, 0), 0, 0, 0))?;
    let early = relative(&restart(seed_net(24, 64, short, 0), 80, 80, TITAN_CYCLE_PS))?;
    let clusters = Row {
        quantity: "24 hosts, 64 B: 2 clusters vs 4, utilisation".into(),
        unit: "%".into(),
        configured: None,
        paper: Some(-1.1),
        ours: Some(ours_rel),
        tolerance,
        verdict,
        why: format!(
            "§3.7 \"about 1.1% lower, in the two-cluster configuration\"; the measured cause: the sign follows the phase of the 87-us restart against the 87.9 us at which a host 3000 ft away sees the next packet end and its gap pass (2 x 3.96 us of coax + 80 us): with the restart at 80 us it is {early:+.1}%, with hosts always ready {ready:+.1}% (the seed's direction over 6 runs of 2 s: -0.5 +-0.3%; bench/RESULTS.md) ({} s runs){sampling}",
            short.as_secs_f64()
        ),
    };
    Ok([efficiency, clusters])
}

/// 1536-byte packets from 24 hosts (§3.5, figure 3-8): efficiency, delay per packet and the
/// delay's spread, with the cause of its tail measured on the spot.
fn large_packets(w: Windows) -> anyhow::Result<Vec<Row>> {
    let Windows { time, short } = w;
    let mut rows = Vec::new();
    // §3.5: 24 hosts, 1536-byte packets: 97%, 31 ms per packet per host (30 ideal).
    let (big, big_b) = sim_batched(&seed_net(24, 1536, time, 3))?;
    // The same window as every stated figure's: the same batch length.
    let bs = big_b.batch_seconds;
    let (verdict, tolerance, sampling) = judged(
        big.utilization * 100.0,
        97.0,
        1.0,
        "points",
        &big_b.utilization(),
        100.0,
        bs,
    );
    rows.push(Row {
        quantity: "24 hosts, 1536 B utilisation".into(),
        unit: "%".into(),
        configured: None,
        paper: Some(97.0),
        ours: Some(big.utilization * 100.0),
        tolerance,
        verdict,
        why: format!("§3.5 \"a measured efficiency of about 97%\"{sampling}"),
    });
    let (verdict, tolerance, sampling) = judged(
        big.delay_mean_seconds * 1e3,
        31.0,
        1.5,
        "ms",
        &big_b.delay_mean_seconds(),
        1e3,
        bs,
    );
    rows.push(Row {
        quantity: "24 hosts, 1536 B delay per packet".into(),
        unit: "ms".into(),
        configured: Some(big.ideal_delay_seconds * 1e3),
        paper: Some(31.0),
        ours: Some(big.delay_mean_seconds * 1e3),
        tolerance,
        verdict,
        why: format!("§3.5 \"about 31 milliseconds ... theoretically about 30\"; configured = the collision-free ideal{sampling}"),
    });

    // §3.5, figure 3-8: the delay's standard deviation about twice its mean at worst.
    let ratio = big.delay_std_dev_seconds / big.delay_mean_seconds;
    let discard = sim(&Scenario {
        host: HostModel {
            retry_excessive_collisions: false,
            ..HostModel::TITAN
        },
        ..seed_net(24, 1536, short, 3)
    })?;
    let dropped_share = discard.dropped as f64
        / (discard.dropped as f64 + discard.packets_per_second * short.as_secs_f64());
    let capped = sim(&Scenario {
        mac: MacParams {
            backoff_limit: 6,
            ..MacParams::table_2(10)
        },
        ..seed_net(24, 1536, short, 3)
    })?;
    let (ratio_verdict, ratio_tolerance, ratio_sampling) = judged(
        ratio,
        2.0,
        0.5,
        "",
        &big_b.delay_sd_over_mean(),
        1.0,
        big_b.batch_seconds,
    );
    rows.push(Row {
        quantity: "24 hosts, 1536 B: delay sd / mean".into(),
        unit: "ratio".into(),
        configured: None,
        paper: Some(2.0),
        ours: Some(ratio),
        tolerance: ratio_tolerance,
        verdict: ratio_verdict,
        why: format!(
            "§3.5 \"the standard deviation is about twice the mean\"; the measured cause: the tail of packets in deep backoff (exponent 7 to 10: waits of 3 to 52 ms): {:.1}% of packets meet 16 collisions (discarded instead of retried, sd/mean {:.2}), and with the exponent capped at 6 (not the standard; to show the cause) sd/mean is {:.2}; nothing the seed says of its hosts shortens that tail ({} s runs; bench/RESULTS.md){ratio_sampling}",
            dropped_share * 100.0,
            discard.delay_std_dev_seconds / discard.delay_mean_seconds,
            capped.delay_std_dev_seconds / capped.delay_mean_seconds,
            short.as_secs_f64()
        ),
    });

    Ok(rows)
}

/// §3.5, figure 3-4: per-host spread about 20% of the mean at 20 hosts, its band scaled to
/// this run's window.
fn per_host_spread(time: Duration) -> anyhow::Result<Row> {
    let t = time.as_secs_f64();
    let (fair, fair_b) = sim_batched(&seed_net(20, 512, time, 0))?;
    let spread = fair.bits_per_second_std_dev / (fair.bits_per_second / 20.0);
    let (lo, hi) = spread_band(t);
    let noise = per_host_sampling(&fair_b);
    Ok(Row {
        quantity: "20 hosts, 512 B: std dev of per-host rate".into(),
        unit: "% of mean".into(),
        configured: None,
        paper: Some(20.0),
        ours: Some(spread * 100.0),
        tolerance: format!(
            "{:.0}..{:.0}% (10..35% x sqrt(10 s / {t} s))",
            lo * 100.0,
            hi * 100.0
        ),
        verdict: Verdict::of((lo..hi).contains(&spread)),
        why: format!(
            "figure 3-4 \"about 20% of mean\" over the seed's 10 s; the spread is the window's sampling noise: sampling alone puts {:.0}% of the mean between symmetric hosts in this {t} s run (each host's batch-means standard error), so the seed's band scales as 1/sqrt(window); at 10 s this run's spread would be about {:.0}%",
            noise * 100.0,
            spread * (t / SEED_WINDOW_S).sqrt() * 100.0
        ),
    })
}

/// Figure 3-3: bit rate vs N for the seed's lengths (plotted only: no paper column).
fn bit_rate_vs_n(time: Duration) -> anyhow::Result<Comparison> {
    let mut curve = Vec::new();
    for bytes in LENGTHS {
        let mut rates = Vec::new();
        for n in HOSTS {
            let r = sim(&seed_net(n, bytes, time, 1))?;
            rates.push(r.bits_per_second);
            curve.push(Row {
                quantity: format!("{bytes} B, {n} host{}", if n == 1 { "" } else { "s" }),
                unit: "Mbit/s".into(),
                configured: None,
                paper: None,
                ours: Some(r.bits_per_second / 1e6),
                tolerance: "-".into(),
                verdict: Verdict::NotCompared,
                why: String::new(),
            });
        }
        let (at3, at24) = (rates[2], rates[HOSTS.len() - 1]);
        curve.push(Row {
            quantity: format!("{bytes} B: falls from 3 to 24 hosts"),
            unit: "Mbit/s".into(),
            configured: Some(at3 / 1e6),
            paper: None,
            ours: Some(at24 / 1e6),
            tolerance: "ours < configured".into(),
            verdict: Verdict::of(at24 < at3),
            why: "§3.5 \"the bit rate decreases with increasing number of hosts\" (configured column: 3 hosts)".into(),
        });
    }
    Ok(Comparison {
        title: "Bit rate vs N (figure 3-3; the seed plots it and prints no numbers)".into(),
        source: "seed 000 figure 3-3, long net, lengths 64/512/1536/4000".into(),
        method: "library: wirespeed_sim::run, seed 1 per point".into(),
        rows: curve,
    })
}
