use proptest::prelude::*;
use wirespeed_model::resample::*;
use wirespeed_model::stats::median;

#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
}

#[test]
fn identical_runs_have_a_zero_width_interval() {
    let s = summarize(&[5.0; 5], 1000).unwrap();
    assert_eq!(
        (s.ci95_low, s.median, s.ci95_high, s.spread_percent),
        (5.0, 5.0, 5.0, 0.0)
    );
}

#[test]
fn the_interval_is_seeded_and_brackets_the_median() {
    let runs = [10.0, 11.0, 9.5, 14.0, 10.2];
    let a = summarize(&runs, 2000).unwrap();
    assert_eq!(a, summarize(&runs, 2000).unwrap());
    assert_eq!(a.median, 10.2);
    assert!(a.ci95_low <= a.median && a.median <= a.ci95_high);
    assert!((a.spread_percent - 4.5 / 10.2 * 100.0).abs() < 1e-9);
}

#[test]
fn random_groups_centre_on_the_whole_estimate_with_t_over_root_k_and_the_bias_bound() {
    // Parts 1..=4: mean 2.5, sd sqrt(5/3); t(3, 0.95) = 3.182; the whole estimate 2.0 is
    // 0.5 off the parts' mean.
    let iv = random_group_interval(2.0, &[1.0, 2.0, 3.0, 4.0], 0.95).unwrap();
    let half = 3.182 * (5.0f64 / 3.0).sqrt() / 2.0 + 0.5;
    assert!((iv.low - (2.0 - half)).abs() < 1e-9 && (iv.high - (2.0 + half)).abs() < 1e-9);
    assert_eq!(
        random_group_interval(2.0, &[1.0, f64::NAN, 3.0], 0.95),
        None
    );
    assert_eq!(
        random_group_interval(f64::NAN, &[1.0, 2.0, 3.0], 0.95),
        None
    );
    assert_eq!(student_t_quantile(7, 0.95), 2.365);
    assert_eq!(student_t_quantile(100, 0.90), 1.645);
}

proptest! {
    #[test]
    fn interval_lies_within_the_extremes(values in proptest::collection::vec(0.0f64..1e12, 1..12)) {
        let s = summarize(&values, 500).unwrap();
        prop_assert!(s.min <= s.ci95_low && s.ci95_low <= s.ci95_high && s.ci95_high <= s.max);
        prop_assert!(s.min <= s.median && s.median <= s.max);
    }
}
