use proptest::prelude::*;
use wirespeed_model::stats::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn lower_half_mean_averages_the_smallest_half() {
    assert!(lower_half_mean(&[]).is_nan());
    assert_eq!(lower_half_mean(&[7.0]), 7.0);
    assert_eq!(lower_half_mean(&[5.0, 1.0, 3.0]), 1.0);
    assert_eq!(lower_half_mean(&[9.0, 1.0, 3.0, 100.0]), 2.0);
    // One answer stamped far below the floor moves a minimum all the way, the lower half
    // of 32 by a sixteenth of it.
    let mut rtts: Vec<f64> = (0..32).map(|i| 1.0 + f64::from(i) * 0.01).collect();
    let clean = lower_half_mean(&rtts);
    rtts[5] = 0.0;
    assert!((clean - lower_half_mean(&rtts) - (1.0 + 0.05) / 16.0).abs() < 1e-12);
}

#[test]
fn median_and_quantile() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    assert!(median(&[]).is_nan());
    assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
    assert_eq!(quantile(&[0.0, 10.0], 0.5), 5.0);
}

#[test]
fn summarize_takes_the_minimum_per_size() {
    let groups = vec![
        Group {
            x: 100.0,
            ys: vec![3.0, 1.0, 2.0],
        },
        Group {
            x: 10.0,
            ys: vec![0.5],
        },
        Group {
            x: 50.0,
            ys: vec![],
        },
    ];
    let s = summarize(&groups);
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].size, s[0].min, s[0].count), (10.0, 0.5, 1));
    assert_eq!((s[1].min, s[1].median), (1.0, 2.0));
}

#[test]
fn least_squares_known_answer() {
    // y = 1 + 2x with residuals +-1 alternating: the textbook fit.
    let xs = [0.0, 1.0, 2.0, 3.0];
    let ys = [2.0, 2.0, 6.0, 6.0];
    let fit = least_squares(&xs, &ys).unwrap();
    assert!(close(fit.line.slope, 1.6, 1e-12));
    assert!(close(fit.line.intercept, 1.6, 1e-12));
    assert!(close(fit.r_squared, 0.8, 1e-12));
    assert_eq!(fit.residuals.len(), 4);
}

#[test]
fn fits_refuse_bad_input() {
    assert_eq!(
        least_squares(&[1.0, 1.0], &[1.0, 2.0]),
        Err(StatsError::TooFewPoints { needed: 2, got: 1 })
    );
    assert!(matches!(
        theil_sen(&[1.0], &[1.0, 2.0]),
        Err(StatsError::LengthMismatch { .. })
    ));
    assert_eq!(
        least_median_of_squares(&[1.0, f64::NAN], &[1.0, 2.0]),
        Err(StatsError::NotFinite)
    );
}

#[test]
fn robust_fits_ignore_a_third_of_outliers_least_squares_does_not() {
    let xs: Vec<f64> = (0..30).map(|i| f64::from(i) * 50.0).collect();
    let mut ys: Vec<f64> = xs.iter().map(|x| 0.7 + 0.00076 * x).collect();
    for (i, y) in ys.iter_mut().enumerate() {
        if i % 3 == 0 {
            *y += 5.0; // a queue on every third size
        }
    }
    let lms = least_median_of_squares(&xs, &ys).unwrap();
    let ts = theil_sen(&xs, &ys).unwrap();
    let ols = least_squares(&xs, &ys).unwrap().line;
    assert!(close(lms.slope, 0.00076, 1e-9), "{lms:?}");
    assert!(close(lms.intercept, 0.7, 1e-9), "{lms:?}");
    assert!((ts.slope - 0.00076).abs() < 2e-5, "{ts:?}");
    assert!((ols.intercept - 0.7).abs() > 1.0, "{ols:?}");
}

/// Probes whose noise only adds delay, as queues do: the minimum filter plus the fit must
/// find the line underneath.
fn synthetic(fixed: f64, per_byte: f64, seed: u64, probes: usize) -> Vec<Group> {
    let mut rng = SplitMix64::new(seed);
    (0..12)
        .map(|i| {
            let x = 64.0 + 128.0 * f64::from(i);
            let ys = (0..probes)
                .map(|_| {
                    // exponential queueing delay, mean 0.2, and a 30% chance of none
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let extra = if u < 0.3 {
                        0.0
                    } else {
                        -0.2 * (1.0 - (u - 0.3) / 0.7).max(1e-12).ln()
                    };
                    fixed + per_byte * x + extra
                })
                .collect();
            Group { x, ys }
        })
        .collect()
}

#[test]
fn min_filter_and_fit_recover_coefficients_under_additive_noise() {
    let groups = synthetic(0.696, 0.000757, 7, 32);
    let s = summarize(&groups);
    let xs: Vec<f64> = s.iter().map(|s| s.size).collect();
    let mins: Vec<f64> = s.iter().map(|s| s.min).collect();
    let fit = least_squares(&xs, &mins).unwrap();
    assert!((fit.line.intercept - 0.696).abs() < 1e-9, "{fit:?}");
    assert!((fit.line.slope - 0.000757).abs() < 1e-12, "{fit:?}");
    // The medians are biased upwards by the queueing: the reason to take minimums.
    let medians: Vec<f64> = s.iter().map(|s| s.median).collect();
    assert!(least_squares(&xs, &medians).unwrap().line.intercept > 0.75);
}

#[test]
fn bootstrap_interval_covers_the_truth_and_is_reproducible() {
    let groups = synthetic(1.447, 0.00287, 3, 8);
    let a = bootstrap(&groups, 300, 0.95, 42).unwrap();
    let b = bootstrap(&groups, 300, 0.95, 42).unwrap();
    assert_eq!(a, b);
    // Minimums of resamples are never below the true line, so the interval lies at or
    // above the truth and touches it.
    assert!(a.intercept.low >= 1.447 - 0.05, "{a:?}");
    assert!(a.intercept.width() > 0.0);
    assert!(a.slope.contains(0.00287) || (a.slope.low - 0.00287).abs() < 1e-4);
    // More probes per size: a narrower interval.
    let many = bootstrap(&synthetic(1.447, 0.00287, 3, 64), 300, 0.95, 42).unwrap();
    assert!(
        many.intercept.width() < a.intercept.width(),
        "{many:?} {a:?}"
    );
}

#[test]
fn split_half_agrees_on_clean_data_and_spreads_on_noisy() {
    let clean: Vec<Group> = (0..5)
        .map(|i| Group {
            x: f64::from(i) * 100.0,
            ys: vec![1.0 + 0.01 * f64::from(i) * 100.0; 4],
        })
        .collect();
    let s = split_half(&clean).unwrap();
    assert!(close(s.even.slope, s.odd.slope, 1e-12));
    let noisy = synthetic(1.0, 0.001, 11, 4);
    let iv = split_half(&noisy).unwrap().intervals();
    assert!(iv.intercept.width() > 0.0);
    assert!(iv.intercept.low <= iv.intercept.high);
}

/// Seed 001, figure 2: "the slight hump from 112 bytes to 512 bytes" (mbufs up to 112
/// bytes, a single cluster above 512). A step in the minimums is reported, not averaged.
#[test]
fn seed_001_figure_2_hump_is_reported_as_a_step() {
    let xs: Vec<f64> = (0..16).map(|i| 32.0 + 64.0 * f64::from(i)).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| 0.696 + 0.000757 * x + if x > 512.0 { -0.05 } else { 0.0 })
        .collect();
    let step = detect_step(&xs, &ys, 0.01).expect("a step");
    assert_eq!((step.after_size, step.before_size), (480.0, 544.0));
    assert!((step.jump + 0.05).abs() < 1e-9, "{step:?}");
    // A straight line has no step, and a tiny one below min_jump is not reported.
    let straight: Vec<f64> = xs.iter().map(|&x| 0.696 + 0.000757 * x).collect();
    assert_eq!(detect_step(&xs, &straight, 0.01), None);
    assert_eq!(detect_step(&xs, &ys, 0.1), None);
}

/// Probe sizes of a default run (16 from 46 bytes to 1500), each answered `probes` times:
/// an echo when `echo`, else a time exceeded quoting 548 + 28 bytes at most. The round
/// trip is `0.7 + 0.00076 x crossed`, plus `jump` ms from `step_at` bytes sent on, plus
/// heavy-tailed noise that only adds delay: timer jitter up to 2 us, a Pareto tail (shape
/// 1.2, from 3 us) on 70% of the probes, and, for a tenth of the halves of each size, a
/// burst of cross traffic that lifts every probe of that half by an exponential 10 us (the
/// seed's 50 us hump is 5 such means; F does not depend on the noise's scale, so the rate
/// of false steps does not either, only the power does).
fn heavy_tailed(seed: u64, echo: bool, jump: f64, step_at: f64, probes: usize) -> Vec<SizeProbes> {
    let mut rng = SplitMix64::new(seed);
    (0..16)
        .map(|i| {
            let sent = 46.0 + f64::from(i) * (1500.0 - 46.0) / 15.0;
            let sent = sent.floor();
            let returned = if echo { sent } else { sent.min(548.0) + 28.0 };
            let base = 0.7 + 0.00076 * (sent + returned) + if sent >= step_at { jump } else { 0.0 };
            let half = probes.div_ceil(2);
            let mut lift = [0.0; 2];
            for l in &mut lift {
                if rng.next_f64() < 0.1 {
                    *l = -0.010 * (1.0 - rng.next_f64()).ln();
                }
            }
            let rtts_ms = (0..probes)
                .map(|k| {
                    let mut y = base + 0.002 * rng.next_f64() + lift[usize::from(k >= half)];
                    if rng.next_f64() < 0.7 {
                        y += 0.003 * ((1.0 - rng.next_f64()).powf(-1.0 / 1.2) - 1.0);
                    }
                    y
                })
                .collect();
            SizeProbes {
                sent_bytes: sent,
                returned_bytes: returned,
                rtts_ms,
            }
        })
        .collect()
}

fn rule(seed: u64, hops: usize) -> StepRule {
    StepRule {
        family_alpha: STEP_FAMILY_ALPHA,
        hops,
        confirm_alpha: STEP_CONFIRM_ALPHA,
        min_jump_ms: 0.004,
        seed,
    }
}

/// Issue 31: on data without a step and with heavy-tailed noise, a step is named in fewer
/// than 2% of seeds, for an echo and for a time exceeded (whose quote limit bends the line
/// in bytes crossed), alone and as one of four hops.
#[test]
fn no_step_is_named_on_heavy_tailed_noise_in_98_percent_of_seeds() {
    for (echo, hops) in [(true, 1), (false, 1), (false, 4)] {
        let named: Vec<u64> = (0..300)
            .filter(|&seed| {
                step_with_evidence(&heavy_tailed(seed, echo, 0.0, 0.0, 32), &rule(seed, hops))
                    .is_some()
            })
            .collect();
        eprintln!(
            "no step, echo {echo}, {hops} hop(s): named on {} of 300 seeds",
            named.len()
        );
        assert!(
            named.len() <= 6,
            "echo {echo}, {hops} hops: named on seeds {named:?}"
        );
    }
}

/// Seed 001, figure 2: the mbuf-to-cluster hump, 0.05 ms down above 512 bytes, is found
/// in more than 90% of seeds through the same noise, at its place and with its sign and
/// size, in an echo and past a time exceeded's quote limit.
#[test]
fn seed_001_sized_step_is_found_in_90_percent_of_seeds() {
    for (echo, step_at) in [(true, 512.0), (false, 900.0)] {
        let mut found = 0;
        let mut misplaced = Vec::new();
        for seed in 0..300u64 {
            let sizes = heavy_tailed(seed, echo, -0.05, step_at, 32);
            let Some(s) = step_with_evidence(&sizes, &rule(seed, 4)) else {
                continue;
            };
            // At its place within one size (a burst of cross traffic on the size next to
            // it can move the best breakpoint), with its sign and about its size.
            let crossed = |z: &SizeProbes| z.sent_bytes + z.returned_bytes;
            let truth = sizes.iter().position(|z| z.sent_bytes >= step_at).unwrap();
            let named = sizes
                .iter()
                .position(|z| crossed(z) == s.before_bytes)
                .unwrap();
            assert!(s.p_value <= s.level && s.second_p_value <= STEP_CONFIRM_ALPHA);
            if named.abs_diff(truth) <= 1 && (s.jump_ms + 0.05).abs() < 0.02 {
                found += 1;
            } else {
                misplaced.push(seed);
            }
        }
        eprintln!(
            "0.05 ms step, echo {echo}: found in {found} of 300 seeds, elsewhere on {}",
            misplaced.len()
        );
        assert!(
            found > 270,
            "echo {echo}: found in {found} of 300 seeds; named elsewhere on {misplaced:?}"
        );
    }
}

/// The bend at the quote limit is the plane's, and the breakpoint at the limit is not
/// tested: a router that answers at 4 ns a byte more than it forwards shows no step,
/// however clean the data.
#[test]
fn the_quote_limit_is_no_step() {
    let sizes: Vec<SizeProbes> = heavy_tailed(7, false, 0.0, 0.0, 32)
        .into_iter()
        .map(|mut s| {
            let extra = 0.004 * s.returned_bytes;
            s.rtts_ms.iter_mut().for_each(|y| *y += extra);
            s
        })
        .collect();
    assert_eq!(step_with_evidence(&sizes, &rule(7, 1)), None);
    // Noise-free, with and without the extra answer cost.
    let clean: Vec<SizeProbes> = sizes
        .iter()
        .map(|s| SizeProbes {
            rtts_ms: vec![
                0.7 + 0.00076 * (s.sent_bytes + s.returned_bytes)
                    + 0.004 * s.returned_bytes;
                4
            ],
            ..s.clone()
        })
        .collect();
    assert_eq!(step_with_evidence(&clean, &rule(7, 1)), None);
}

/// A step in one half of the probes only (a transient, such as a queue that came and went)
/// is not named: the rule wants it in both.
#[test]
fn a_step_in_one_half_only_is_not_named() {
    let mut sizes = heavy_tailed(3, true, 0.0, 0.0, 32);
    for s in sizes.iter_mut().filter(|s| s.sent_bytes >= 700.0) {
        s.rtts_ms[..16].iter_mut().for_each(|y| *y += 0.08);
    }
    assert_eq!(step_with_evidence(&sizes, &rule(3, 1)), None);
    for s in sizes.iter_mut().filter(|s| s.sent_bytes >= 700.0) {
        s.rtts_ms[16..].iter_mut().for_each(|y| *y += 0.08);
    }
    let s = step_with_evidence(&sizes, &rule(3, 1)).expect("in both halves");
    assert!(
        (s.jump_ms - 0.08).abs() < 0.02 && (s.second_jump_ms - 0.08).abs() < 0.02,
        "{s:?}"
    );
}

proptest! {
    /// Any straight line (or plane past the quote limit) without noise has no step, and a
    /// clear step on it (10 timer ticks or more) is named at its place with its sign.
    #[test]
    fn a_clean_step_is_named_where_it_is_and_a_clean_line_has_none(
        fixed in 0.01f64..50.0,
        per_byte in 1e-6f64..0.01,
        echo in any::<bool>(),
        at in 3usize..13,
        jump in prop_oneof![-0.5f64..-0.04, 0.04f64..0.5],
        seed in any::<u64>(),
    ) {
        let sizes: Vec<SizeProbes> = heavy_tailed(seed, echo, 0.0, 0.0, 8)
            .into_iter()
            .map(|s| {
                let y = fixed + per_byte * (s.sent_bytes + s.returned_bytes);
                SizeProbes { rtts_ms: vec![y; 8], ..s }
            })
            .collect();
        prop_assert_eq!(step_with_evidence(&sizes, &rule(seed, 3)), None);
        let quote = (!echo).then(|| sizes.iter().position(|s| s.sent_bytes > 548.0)).flatten();
        prop_assume!(quote != Some(at));
        let mut stepped = sizes.clone();
        let mut rng = SplitMix64::new(seed);
        for (i, s) in stepped.iter_mut().enumerate() {
            for y in &mut s.rtts_ms {
                *y += 0.002 * rng.next_f64() + if i >= at { jump } else { 0.0 };
            }
        }
        let s = step_with_evidence(&stepped, &rule(seed, 3));
        prop_assert!(s.is_some(), "at {} jump {}", at, jump);
        let s = s.unwrap();
        let crossed = |z: &SizeProbes| z.sent_bytes + z.returned_bytes;
        prop_assert_eq!(s.before_bytes, crossed(&sizes[at]));
        prop_assert!(s.jump_ms * jump > 0.0 && (s.jump_ms - jump).abs() < 0.01, "{:?}", s);
    }
}

#[test]
fn shuffle_is_a_permutation_and_seeded() {
    let mut a: Vec<u32> = (0..100).collect();
    let mut b = a.clone();
    SplitMix64::new(9).shuffle(&mut a);
    SplitMix64::new(9).shuffle(&mut b);
    assert_eq!(a, b);
    assert_ne!(a, (0..100).collect::<Vec<_>>());
    a.sort_unstable();
    assert_eq!(a, (0..100).collect::<Vec<_>>());
}

proptest! {
    #[test]
    fn every_fit_recovers_an_exact_line(
        intercept in -100.0f64..100.0,
        slope in -1.0f64..1.0,
        n in 3usize..25,
    ) {
        let xs: Vec<f64> = (0..n).map(|i| 40.0 + 37.0 * i as f64).collect();
        let ys: Vec<f64> = xs.iter().map(|x| intercept + slope * x).collect();
        let ols = least_squares(&xs, &ys).unwrap();
        prop_assert!(close(ols.line.intercept, intercept, 1e-9));
        prop_assert!(close(ols.line.slope, slope, 1e-9));
        prop_assert!(ols.residuals.iter().all(|r| r.abs() < 1e-9 * (1.0 + intercept.abs())));
        for line in [theil_sen(&xs, &ys).unwrap(), least_median_of_squares(&xs, &ys).unwrap()] {
            prop_assert!(close(line.intercept, intercept, 1e-9));
            prop_assert!(close(line.slope, slope, 1e-9));
        }
    }

    #[test]
    fn fits_do_not_depend_on_point_order(
        ys in proptest::collection::vec(0.0f64..10.0, 4..20),
        seed in any::<u64>(),
    ) {
        let xs: Vec<f64> = (0..ys.len()).map(|i| i as f64 * 10.0).collect();
        let mut order: Vec<usize> = (0..xs.len()).collect();
        SplitMix64::new(seed).shuffle(&mut order);
        let px: Vec<f64> = order.iter().map(|&i| xs[i]).collect();
        let py: Vec<f64> = order.iter().map(|&i| ys[i]).collect();
        let a = least_squares(&xs, &ys).unwrap();
        let b = least_squares(&px, &py).unwrap();
        prop_assert!(close(a.line.slope, b.line.slope, 1e-9));
        prop_assert!(close(a.r_squared, b.r_squared, 1e-9));
        let a = theil_sen(&xs, &ys).unwrap();
        let b = theil_sen(&px, &py).unwrap();
        prop_assert!(close(a.slope, b.slope, 1e-12) && close(a.intercept, b.intercept, 1e-12));
        let a = least_median_of_squares(&xs, &ys).unwrap();
        let b = least_median_of_squares(&px, &py).unwrap();
        let score = |l: Line| median(&xs.iter().zip(&ys).map(|(x, y)| (y - l.at(*x)).powi(2)).collect::<Vec<_>>());
        prop_assert!(close(score(a), score(b), 1e-9));
    }

    #[test]
    fn shifting_y_shifts_only_the_intercept(
        ys in proptest::collection::vec(0.0f64..10.0, 3..15),
        shift in -50.0f64..50.0,
    ) {
        let xs: Vec<f64> = (0..ys.len()).map(|i| i as f64 * 64.0).collect();
        let up: Vec<f64> = ys.iter().map(|y| y + shift).collect();
        let a = least_squares(&xs, &ys).unwrap();
        let b = least_squares(&xs, &up).unwrap();
        prop_assert!(close(b.line.intercept, a.line.intercept + shift, 1e-9));
        prop_assert!(close(b.line.slope, a.line.slope, 1e-9));
        prop_assert!(a.r_squared <= 1.0 + 1e-12);
    }

    #[test]
    fn bootstrap_interval_is_ordered(seed in any::<u64>()) {
        let groups = synthetic(0.5, 0.001, seed, 5);
        let iv = bootstrap(&groups, 50, 0.9, seed).unwrap();
        prop_assert!(iv.intercept.low <= iv.intercept.high);
        prop_assert!(iv.slope.low <= iv.slope.high);
    }
}
