use proptest::prelude::*;
use wirespeed_model::moments::*;

#[test]
fn moments_give_the_mean_and_population_std_dev() {
    let mut m = Moments::default();
    for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
        m.add(x);
    }
    assert_eq!(m.mean(), 5.0);
    assert!((m.std_dev() - 2.0).abs() < 1e-12);
    assert!(Moments::default().mean().is_nan());
}

#[test]
fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
    assert!((jain_fairness(&[3.0, 3.0, 3.0]) - 1.0).abs() < 1e-12);
    assert!((jain_fairness(&[9.0, 0.0, 0.0]) - 1.0 / 3.0).abs() < 1e-12);
    assert!(jain_fairness(&[]).is_nan());
}

#[test]
fn t_quantiles_match_the_table_and_approach_the_normal() {
    assert_eq!(student_t_975(1), 12.706);
    assert_eq!(student_t_975(9), 2.262);
    assert!((student_t_975(40) - 2.021).abs() < 0.002);
    assert!((student_t_975(120) - 1.980).abs() < 0.002);
}

#[test]
fn interval_of_known_samples() {
    let e = Estimate::from_samples_95(&[10.0, 12.0, 14.0]);
    assert_eq!(e.mean, 12.0);
    // s = 2, t(2) = 4.303, half-width = 4.303 * 2 / sqrt(3)
    assert!((e.ci_half_width - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
    assert!(Estimate::from_samples_95(&[1.0]).ci_half_width.is_nan());
}

proptest! {
    #[test]
    fn jain_lies_between_one_over_n_and_one(xs in prop::collection::vec(0.0f64..1e6, 1..40)) {
        let j = jain_fairness(&xs);
        prop_assume!(!j.is_nan());
        let n = xs.len() as f64;
        prop_assert!(j <= 1.0 + 1e-9 && j >= 1.0 / n - 1e-9);
    }

    #[test]
    fn pooled_moments_equal_moments_of_the_union(
        a in prop::collection::vec(-1e3f64..1e3, 1..20),
        b in prop::collection::vec(-1e3f64..1e3, 1..20),
    ) {
        let mut ma = Moments::default();
        a.iter().for_each(|&x| ma.add(x));
        let mut mb = Moments::default();
        b.iter().for_each(|&x| mb.add(x));
        ma.merge(&mb);
        let all: Vec<f64> = a.iter().chain(&b).copied().collect();
        prop_assert!((ma.mean() - mean(&all)).abs() < 1e-6);
        prop_assert!((ma.std_dev() - std_dev(&all)).abs() < 1e-4);
    }
}
