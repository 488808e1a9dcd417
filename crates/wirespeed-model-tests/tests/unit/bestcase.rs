use wirespeed_model::bestcase::*;
use wirespeed_model::delay::Cost;
use wirespeed_model::perhop::Separation;
use wirespeed_model::stats::SplitMix64;
use wirespeed_model::stats::{self};

const P: AnalysisParams = AnalysisParams {
    bootstrap_replicates: 200,
    confidence: 0.95,
    seed: 5,
    min_step_ms: 0.005,
};

/// A synthetic path: hop k adds `fixed[k]` one-way and `per_byte[k]` per byte each way;
/// routers quote 576 bytes at most, the last hop echoes. Noise only adds delay, and it is
/// the machine's at the time, whatever the size: the `r`-th probe of every size of a hop
/// waits alike (1 in 4 rounds not at all), so each size's minimum and lower half lie the
/// same distance above its floor and the slopes come out exact (`queued_path` draws noise
/// for every probe apart).
fn path(fixed: &[f64], per_byte: &[f64], seed: u64) -> Vec<Observation> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    let n = fixed.len();
    let mut t = 0.0;
    for (k, _) in fixed.iter().enumerate() {
        let f: f64 = fixed[..=k].iter().sum();
        let b: f64 = per_byte[..=k].iter().sum();
        let waits: Vec<f64> = (0..16)
            .map(|_| {
                if rng.below(4) == 0 {
                    0.0
                } else {
                    rng.below(1000) as f64 * 1e-3
                }
            })
            .collect();
        for size in (100..=1500).step_by(100) {
            for &noise in &waits {
                let returned = if k + 1 == n {
                    size
                } else {
                    (28 + size.min(548)).min(576)
                };
                t += 0.01;
                out.push(Observation {
                    ttl: (k + 1) as u8,
                    sent_bytes: size,
                    returned_bytes: returned,
                    rtt_ms: Some(2.0 * f + b * (size + returned) as f64 + noise),
                    sent_at_seconds: t,
                });
            }
        }
    }
    out
}

#[test]
fn per_hop_costs_are_recovered_by_differencing() {
    // Host+link 1: 0.1 ms + 10 Mbit/s; hop 2: 0.2 ms + 100 Mbit/s; hop 3: 0.05 + 1 Gbit/s.
    let fixed = [0.1, 0.2, 0.05];
    let per_byte = [0.0008, 0.00008, 0.000008];
    let hops = analyze(&path(&fixed, &per_byte, 1), &P, None);
    assert_eq!(hops.len(), 3);
    for (k, hop) in hops.iter().enumerate() {
        let inc = hop.increment.as_ref().unwrap();
        assert!((inc.cost.fixed_ms - fixed[k]).abs() < 1e-6, "{k}: {inc:?}");
        assert!(
            (inc.cost.per_byte_ms / per_byte[k] - 1.0).abs() < 1e-6,
            "{k}: {inc:?}"
        );
        let rate = inc.implied_bits_per_second.unwrap();
        assert!((rate / (8.0 / (per_byte[k] / 1e3)) - 1.0).abs() < 1e-5);
        assert!(hop.fit.as_ref().unwrap().r_squared > 0.999_999);
    }
    // The intermediate hops' x axis bends at the quote: their returned bytes stop at 576.
    assert_eq!(hops[0].sizes.last().unwrap().returned_bytes, 576);
    assert_eq!(hops[2].sizes.last().unwrap().returned_bytes, 1500);
}

/// Fitting against probe size alone would break: the quote makes a time-exceeded hop's
/// round trip flatten above 548 bytes.
#[test]
fn fitting_against_bytes_crossed_keeps_a_router_line_straight() {
    let hops = analyze(&path(&[0.3], &[0.0008], 2)[..0], &P, None);
    assert!(hops.is_empty());
    let obs: Vec<Observation> = path(&[0.3, 0.1], &[0.0008, 0.0], 2)
        .into_iter()
        .filter(|o| o.ttl == 1)
        .collect();
    let hop = &analyze(&obs, &P, None)[0];
    let fit = hop.fit.as_ref().unwrap();
    assert!(fit.step.is_none(), "{fit:?}");
    assert!((fit.one_way.per_byte_ms - 0.0008).abs() < 1e-9);
}

/// A router whose answer costs `v` per returned byte and the way out `u` per byte sent, with
/// a step of `jump` ms for probes of `step_at` bytes and more (none when `jump` is 0).
fn router(u: f64, v: f64, jump: f64, step_at: usize) -> Vec<Observation> {
    let mut out = Vec::new();
    let mut t = 0.0;
    for size in (100..=1500).step_by(100) {
        for k in 0..16 {
            let returned = (28 + size.min(548)).min(576);
            let step = if size >= step_at { jump } else { 0.0 };
            t += 0.01;
            out.push(Observation {
                ttl: 1,
                sent_bytes: size,
                returned_bytes: returned,
                rtt_ms: Some(0.3 + u * size as f64 + v * returned as f64 + step + k as f64 * 1e-4),
                sent_at_seconds: t,
            });
        }
    }
    out
}

/// Issue 15 item 5: a router that answers at another per-byte cost than it forwards bends
/// the line in bytes crossed at the quote limit. That bend is the plane's, not a change of
/// buffering strategy: no step is reported. A real step on top of it still is.
#[test]
fn the_quote_limit_bend_is_no_step_but_a_real_step_is() {
    let hop = &analyze(&router(0.0008, 0.004, 0.0, usize::MAX), &P, None)[0];
    let fit = hop.fit.as_ref().unwrap();
    assert_eq!(fit.separation, Separation::Separated);
    assert!(fit.step.is_none(), "{:?}", fit.step);
    // The same minimums against bytes crossed alone show the bend as a step: what the
    // probe used to call a change of buffering strategy.
    let xs: Vec<f64> = hop
        .sizes
        .iter()
        .map(|r| (r.sent_bytes + r.returned_bytes) as f64)
        .collect();
    let mins: Vec<f64> = hop.sizes.iter().map(|r| r.min_rtt_ms).collect();
    assert!(stats::detect_step(&xs, &mins, P.min_step_ms).is_some());
    let hop = &analyze(&router(0.0008, 0.004, 0.2, 1100), &P, None)[0];
    let step = hop
        .fit
        .as_ref()
        .unwrap()
        .step
        .as_ref()
        .expect("the real step");
    assert!((step.jump_ms - 0.2).abs() < 0.05, "{step:?}");
}

/// Seed 001 §2: ciscoping = keeper - (roc + ether): with the host's own line given, the
/// first hop's cost is what remains after it.
#[test]
fn seed_001_first_hop_minus_the_host_line() {
    let roc = Cost::new(0.696, 0.000757);
    let keeper = path(&[1.447], &[0.00287], 6);
    let hops = analyze(&keeper, &P, Some(roc));
    let inc = hops[0].increment.as_ref().unwrap();
    let ether = Cost::new(0.0, 0.0008);
    let ciscoping = inc.cost - ether;
    assert!((ciscoping.fixed_ms - 0.751).abs() < 1e-6, "{inc:?}");
    assert!(
        (ciscoping.per_byte_ms - 0.00131).abs() < 0.000005,
        "{inc:?}"
    );
    assert!(inc.caveat.as_ref().unwrap().contains("roc"));
}

#[test]
fn noisy_negative_increments_are_reported_not_clipped() {
    // Hop 2 costs nothing: its difference is noise around zero (every probe queues apart),
    // printed as it comes, with its interval reaching across zero.
    let obs = queued_path(&[0.5, 0.0], &[0.0008, 0.0], &[0.0, 0.0], 0.05, 16, 3);
    let hops = analyze(&obs, &P, None);
    let inc = hops[1].increment.as_ref().unwrap();
    let slope = |h: &HopAnalysis| h.fit.as_ref().unwrap().rtt_line.per_sent_byte_ms;
    assert_eq!(inc.cost.per_byte_ms, slope(&hops[1]) - slope(&hops[0]));
    assert!(inc.cost.per_byte_ms.abs() < 0.00008, "{inc:?}");
    assert!(inc.intervals.unwrap().per_byte_ms.contains(0.0), "{inc:?}");
    let caveat = inc.caveat.as_deref().unwrap_or("");
    assert!(caveat.contains("within the noise"), "{inc:?}");
    assert!(
        hops[0]
            .increment
            .as_ref()
            .unwrap()
            .caveat
            .as_ref()
            .unwrap()
            .contains("this host")
    );
}

#[test]
fn rate_limited_hop_is_detected() {
    // 150 probes in 3 s, of which only 7 answered: ICMP rate limiting.
    let obs: Vec<Observation> = (0..150)
        .map(|i| Observation {
            ttl: 1,
            sent_bytes: 100 + (i % 5) * 100,
            returned_bytes: 128,
            rtt_ms: (i % 23 == 0).then_some(1.0),
            sent_at_seconds: f64::from(i as u32) * 0.02,
        })
        .collect();
    let hop = &analyze(&obs, &P, None)[0];
    assert!(hop.rate_limit.as_ref().unwrap().contains("rate limited"));
    assert!(hop.fit.is_none());
    assert!(
        hop.no_fit_reason
            .as_ref()
            .unwrap()
            .contains("rate limiting")
    );
    // A healthy hop is not called rate limited.
    let hops = analyze(&path(&[0.1], &[0.0008], 4), &P, None);
    assert!(hops[0].rate_limit.is_none());
}

/// A path of `fixed.len()` hops probed as `probe --hops` does (rounds over every hop and
/// size, 16 sizes from 46 to 1500 bytes, `per_size` probes each): link `k` costs
/// `fixed[k]` one way and `per_byte[k]` a byte each way, router `k` answers with the IPv4
/// quote (576 bytes at most) at `answer[k]` a returned byte, the last hop echoes. Every
/// probe waits, above that floor, an exponential queueing delay of mean `queue_ms` (the
/// machine's and the path's), so the minimum of a size lies above its floor.
fn queued_path(
    fixed: &[f64],
    per_byte: &[f64],
    answer: &[f64],
    queue_ms: f64,
    per_size: usize,
    seed: u64,
) -> Vec<Observation> {
    let mut rng = SplitMix64::new(seed);
    let sizes: Vec<usize> = (0..16).map(|i| 46 + (1500 - 46) * i / 15).collect();
    let n = fixed.len();
    let mut out = Vec::new();
    let mut t = 0.0;
    for _ in 0..per_size {
        for k in 0..n {
            let mut order = sizes.clone();
            rng.shuffle(&mut order);
            for size in order {
                let returned = if k + 1 == n { size } else { size.min(548) + 28 };
                let alpha = if k + 1 == n { 0.0 } else { answer[k] };
                let f: f64 = fixed[..=k].iter().sum();
                let s: f64 = per_byte[..=k].iter().sum();
                let floor = 2.0 * f + s * (size + returned) as f64 + alpha * returned as f64;
                let queue = -queue_ms * (1.0 - rng.next_f64()).ln();
                t += 0.002;
                out.push(Observation {
                    ttl: (k + 1) as u8,
                    sent_bytes: size,
                    returned_bytes: returned,
                    rtt_ms: Some(floor + queue),
                    sent_at_seconds: t,
                });
            }
        }
    }
    out
}

/// Issue 31: every per-hop figure's interval covers the configured truth in at least 90%
/// of runs, on paths whose delays queue exponentially above their floor (the bootstrap of
/// the minimums covered the fixed cost in 0% of the lab runs). Paths, rates and queueing
/// drawn from each seed: 1-3 routers, 2 Mbit/s to 1 Gbit/s, 10-100 us of mean queueing.
#[test]
fn time_block_intervals_cover_the_truth_in_90_percent_of_seeds() {
    let p = AnalysisParams {
        bootstrap_replicates: 20,
        ..P
    };
    let (mut runs, mut covered, mut figures) = (0, [0usize; 3], [0usize; 3]);
    for seed in 0..120u64 {
        let mut rng = SplitMix64::new(1000 + seed);
        let hops = 2 + rng.below(3);
        let fixed: Vec<f64> = (0..hops).map(|_| 0.02 + rng.next_f64() * 1.0).collect();
        // 8 / rate in ms per byte, rates from 2 Mbit/s to 1 Gbit/s (log-uniform).
        let per_byte: Vec<f64> = (0..hops)
            .map(|_| 8.0 / (2e6 * 500f64.powf(rng.next_f64())) * 1e3)
            .collect();
        let answer: Vec<f64> = (0..hops).map(|_| rng.next_f64() * 0.0002).collect();
        let queue = 0.01 + rng.next_f64() * 0.09;
        let obs = queued_path(&fixed, &per_byte, &answer, queue, 32, seed);
        runs += 1;
        for (k, hop) in analyze(&obs, &p, None).iter().enumerate() {
            let inc = hop.increment.as_ref().unwrap();
            let iv = inc.intervals.expect("8 blocks of 4 probes a size");
            assert_eq!(iv.blocks, 8);
            let truth_answer = if k + 1 == hops { 0.0 } else { answer[k] };
            for (i, (interval, truth)) in [
                (iv.fixed_ms, fixed[k]),
                (iv.per_byte_ms, per_byte[k]),
                (iv.answer_per_byte_ms, truth_answer),
            ]
            .into_iter()
            .enumerate()
            {
                // The echo's answer per byte is 0 by construction: not a figure.
                if i == 2 && k + 1 == hops {
                    continue;
                }
                figures[i] += 1;
                covered[i] += usize::from(interval.contains(truth));
            }
        }
    }
    assert_eq!(runs, 120);
    for (i, name) in ["fixed", "per byte", "answer per byte"].iter().enumerate() {
        let share = covered[i] as f64 / figures[i] as f64;
        eprintln!(
            "{name}: covered {} of {} ({share:.3})",
            covered[i], figures[i]
        );
        assert!(
            share >= 0.90,
            "{name}: covered {} of {} ({share:.3})",
            covered[i],
            figures[i]
        );
    }
}

/// An echo's line has one slope for the bytes sent and returned; behind a first link that
/// returns bytes at half the rate it sends them, the router before it shows that as an
/// answer cost per byte, and the echo's own per byte (its mean of both directions less the
/// router's per byte sent) is 0.4 us a byte too high: said, with no link rate implied. The
/// same path with the same rate each way gives the echo's per byte right and unmarked.
#[test]
fn an_echo_behind_a_path_slower_back_than_out_is_not_separable() {
    let (fixed, per_byte) = ([0.3, 0.2], [0.0008, 0.0008]);
    let even = queued_path(&fixed, &per_byte, &[0.0, 0.0], 0.01, 32, 3);
    let slower_back: Vec<Observation> = even
        .iter()
        .map(|o| Observation {
            rtt_ms: o.rtt_ms.map(|r| r + 0.0008 * o.returned_bytes as f64),
            ..*o
        })
        .collect();
    let hops = analyze(&slower_back, &P, None);
    let echo = hops[1].increment.as_ref().unwrap();
    assert!(echo.per_byte_mixes_directions, "{echo:?}");
    assert!(echo.implied_bits_per_second.is_none());
    assert!(
        echo.caveat
            .as_deref()
            .is_some_and(|c| c.contains("not separable from one end")),
        "{echo:?}"
    );
    assert!((echo.cost.per_byte_ms - 0.0012).abs() < 0.0001, "{echo:?}");
    assert!(
        !hops[0]
            .increment
            .as_ref()
            .unwrap()
            .per_byte_mixes_directions
    );
    let hops = analyze(&even, &P, None);
    let echo = hops[1].increment.as_ref().unwrap();
    assert!(!echo.per_byte_mixes_directions, "{echo:?}");
    assert!(echo.implied_bits_per_second.is_some());
    assert!((echo.cost.per_byte_ms - 0.0008).abs() < 0.00005, "{echo:?}");
}

/// The blocks are consecutive stretches of each size's probes, as many as the sparsest
/// size allows, never fewer than 3.
#[test]
fn time_blocks_cut_each_size_in_order() {
    let obs = queued_path(&[0.1, 0.1], &[0.0008, 0.0008], &[0.0, 0.0], 0.01, 10, 1);
    let blocks = time_blocks(&obs);
    assert_eq!(blocks.len(), 8);
    assert_eq!(blocks.iter().map(Vec::len).sum::<usize>(), obs.len());
    // 10 probes a size in 8 blocks: 1 or 2 each, the earliest first.
    for b in &blocks {
        let of_one: Vec<&Observation> = b
            .iter()
            .filter(|o| o.ttl == 1 && o.sent_bytes == 46)
            .collect();
        assert!((1..=2).contains(&of_one.len()), "{}", of_one.len());
    }
    let first = blocks[0]
        .iter()
        .map(|o| o.sent_at_seconds)
        .fold(0.0, f64::max);
    let last = blocks[7]
        .iter()
        .map(|o| o.sent_at_seconds)
        .fold(f64::INFINITY, f64::min);
    assert!(first < last);
    let two = queued_path(&[0.1], &[0.0008], &[0.0], 0.01, 2, 1);
    assert!(time_blocks(&two).is_empty());
}
