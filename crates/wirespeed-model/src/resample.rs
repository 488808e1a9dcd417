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

pub use crate::stats::median;
use crate::stats::{Interval, SplitMix64};

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

/// The random-group interval of a figure estimated from all the data: centred on that
/// estimate, as wide as Student's t times the spread of the same figure estimated on `parts`,
/// independent parts of the data (each analysed whole), over the square root of their number,
/// plus the distance between the parts' mean and the whole estimate (the bias bound below).
///
/// Why not the bootstrap for a minimum-filtered figure: a minimum is an extreme value, and the
/// plain bootstrap of an extreme is not consistent (Bickel and Freedman, "Some asymptotic
/// theory for the bootstrap", Annals of Statistics 9(6), 1981, on the extremes: the resampled minimum
/// equals the sample's own minimum with probability about 1 - 1/e whatever n is), so its
/// intervals collapse to zero width however much the run moves. The random-group method
/// (Wolter, *Introduction to Variance Estimation*, 2nd ed., 2007, ch. 2; the batch means of
/// simulation output analysis) instead runs the whole analysis on K parts of the data taken
/// apart in time, and reads the figure's variance from how the K answers differ: it needs only
/// that the parts are independent and alike, not that the estimator be smooth.
///
/// Why the bias bound: the method also assumes the whole estimate is about the mean of the
/// parts' (true of a mean, or of a fit of means). A minimum is not: the minimum of n probes
/// lies nearer the floor than the minimums of n / K, and a figure read from minimums (a slope,
/// a difference of slopes) is off by whatever of that excess differs between sizes or hops:
/// a slow link's large probes queue behind more of the machine's noise than its small ones.
/// That excess shrinks as the probes grow (as 1/n where delays have a density at their floor,
/// as 1/sqrt(n) at worst), so the parts' mean is off the same way as the whole estimate, by K
/// (at worst sqrt(K)) times as much: `|mean(parts) - full|` is K - 1 (at worst sqrt(K) - 1,
/// 1.8 for the probe's K = 8) times the whole estimate's remaining bias, a bound of it, and is
/// added to the half width. Replayed on 60 saved runs of
/// random labs (bench/results/harness-random-labs.md), the t-interval alone covered the
/// configured own per byte in 72% of the hops the probe can separate and the answer per byte
/// in 75%; with the bound, 91% and 95%. `None` with fewer than 3 parts or a figure that is
/// not finite.
pub fn random_group_interval(full: f64, parts: &[f64], confidence: f64) -> Option<Interval> {
    let parts: Vec<f64> = parts.iter().copied().filter(|v| v.is_finite()).collect();
    let k = parts.len();
    if k < 3 || !full.is_finite() {
        return None;
    }
    let mean = parts.iter().sum::<f64>() / k as f64;
    let sd = (parts.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt();
    let half = student_t_quantile(k - 1, confidence) * sd / (k as f64).sqrt() + (mean - full).abs();
    Some(Interval {
        low: full - half,
        high: full + half,
    })
}

/// Student's t two-sided quantile with `df` degrees of freedom at `confidence` 0.90, 0.95 or
/// 0.99 (the nearest of them at or above it), from the usual tables; past 30 degrees of
/// freedom the normal's.
pub fn student_t_quantile(df: usize, confidence: f64) -> f64 {
    // Rows: df 1..=30; columns: 0.90, 0.95, 0.99.
    const TABLE: [[f64; 3]; 30] = [
        [6.314, 12.706, 63.657],
        [2.920, 4.303, 9.925],
        [2.353, 3.182, 5.841],
        [2.132, 2.776, 4.604],
        [2.015, 2.571, 4.032],
        [1.943, 2.447, 3.707],
        [1.895, 2.365, 3.499],
        [1.860, 2.306, 3.355],
        [1.833, 2.262, 3.250],
        [1.812, 2.228, 3.169],
        [1.796, 2.201, 3.106],
        [1.782, 2.179, 3.055],
        [1.771, 2.160, 3.012],
        [1.761, 2.145, 2.977],
        [1.753, 2.131, 2.947],
        [1.746, 2.120, 2.921],
        [1.740, 2.110, 2.898],
        [1.734, 2.101, 2.878],
        [1.729, 2.093, 2.861],
        [1.725, 2.086, 2.845],
        [1.721, 2.080, 2.831],
        [1.717, 2.074, 2.819],
        [1.714, 2.069, 2.807],
        [1.711, 2.064, 2.797],
        [1.708, 2.060, 2.787],
        [1.706, 2.056, 2.779],
        [1.703, 2.052, 2.771],
        [1.701, 2.048, 2.763],
        [1.699, 2.045, 2.756],
        [1.697, 2.042, 2.750],
    ];
    const NORMAL: [f64; 3] = [1.645, 1.960, 2.576];
    let column = if confidence <= 0.90 {
        0
    } else if confidence <= 0.95 {
        1
    } else {
        2
    };
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1][column],
        _ => NORMAL[column],
    }
}
