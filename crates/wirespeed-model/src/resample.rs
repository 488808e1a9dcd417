//! Summaries of repeated measurements: median, extremes, and a bootstrap confidence interval
//! for the median.
//!
//! Throughput runs are few (3 to 10) and their distribution is skewed by interference, so a
//! mean and a normal-theory interval mislead. The percentile bootstrap (Efron, "Bootstrap
//! methods: another look at the jackknife", Annals of Statistics 7(1), 1979; Efron and
//! Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13) resamples the runs with
//! replacement, takes the median of each resample, and reads the interval from the 2.5th and
//! 97.5th percentiles of those medians. The resampling is seeded, so the same runs always give
//! the same interval.

use serde::{Deserialize, Serialize};

/// A set of repeated measurements, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The values, in run order.
    pub values: Vec<f64>,
    /// Their median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Lower end of the 95% bootstrap interval for the median.
    pub ci95_low: f64,
    /// Upper end.
    pub ci95_high: f64,
    /// `(max - min) / median`, percent.
    pub spread_percent: f64,
}

use crate::stats::SplitMix64;
pub use crate::stats::median;

/// Summarises `values` with `resamples` bootstrap resamples; `None` for no values.
pub fn summarize(values: &[f64], resamples: usize) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let med = median(values);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut rng = SplitMix64::new(0x5eed_0002);
    let mut medians: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            let sample: Vec<f64> = (0..values.len())
                .map(|_| values[rng.below(values.len())])
                .collect();
            median(&sample)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((medians.len() - 1) as f64 * q).round() as usize];
    Some(Summary {
        values: values.to_vec(),
        median: med,
        min,
        max,
        ci95_low: at(0.025),
        ci95_high: at(0.975),
        spread_percent: if med != 0.0 {
            (max - min) / med * 100.0
        } else {
            0.0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    proptest! {
        #[test]
        fn interval_lies_within_the_extremes(values in proptest::collection::vec(0.0f64..1e12, 1..12)) {
            let s = summarize(&values, 500).unwrap();
            prop_assert!(s.min <= s.ci95_low && s.ci95_low <= s.ci95_high && s.ci95_high <= s.max);
            prop_assert!(s.min <= s.median && s.median <= s.max);
        }
    }
}
