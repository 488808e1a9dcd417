//! Summaries of samples: mean, spread, Jain's fairness index and Student-t confidence intervals.
//!
//! Boggs, Mogul and Kent (seed 000, §3.3) judge unfairness by the standard deviation of the
//! per-host bit and packet rates, and predictability by the standard deviation of the
//! per-packet delay, which each host keeps as a count, a sum and a sum of squares
//! ([`Moments`]). Jain's index (Jain, Chiu and Hawe, DEC-TR-301, 1984) puts fairness on one
//! scale: `(sum x)^2 / (n * sum x^2)`, 1 when every host gets the same, `1/n` when one host gets
//! everything. Replicated simulations are summarised by a two-sided Student-t interval on the
//! mean of the replications (any statistics text; the quantiles below are to four figures).

use serde::Serialize;

/// Count, sum and sum of squares: what each of the seed's generator hosts reported, and enough
/// to give the mean and standard deviation of everything it saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Moments {
    /// Number of samples.
    pub count: u64,
    /// Sum of the samples.
    pub sum: f64,
    /// Sum of their squares.
    pub sum_of_squares: f64,
}

impl Moments {
    /// Adds one sample.
    pub fn add(&mut self, x: f64) {
        self.count += 1;
        self.sum += x;
        self.sum_of_squares += x * x;
    }

    /// Pools another set of samples into this one.
    pub fn merge(&mut self, other: &Moments) {
        self.count += other.count;
        self.sum += other.sum;
        self.sum_of_squares += other.sum_of_squares;
    }

    /// The mean, or NaN with no samples.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }

    /// The population standard deviation (divide by n), 0 for one sample, NaN for none.
    /// Rounding can make the variance a hair below zero when every sample is equal; that is 0.
    pub fn std_dev(&self) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let n = self.count as f64;
        let mean = self.sum / n;
        (self.sum_of_squares / n - mean * mean).max(0.0).sqrt()
    }
}

/// The arithmetic mean, NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// The population standard deviation (divide by n): the spread of the per-host rates of one
/// test, as the seed plots it. NaN for an empty slice.
pub fn std_dev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// The sample standard deviation (divide by n - 1), for estimating a spread from replications.
/// NaN for fewer than two samples.
pub fn sample_std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Jain's fairness index of non-negative shares: 1 when all are equal, `1/n` when one host has
/// everything. NaN when the slice is empty or every share is zero.
pub fn jain_fairness(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sum_sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (xs.len() as f64 * sum_sq)
    }
}

/// A mean and the half-width of its two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Estimate {
    /// The mean over the samples.
    #[serde(deserialize_with = "null_as_nan")]
    pub mean: f64,
    /// Half the width of the interval: the truth lies in `mean +- ci_half_width` at the stated
    /// confidence. NaN with one sample (no spread to judge by).
    #[serde(deserialize_with = "null_as_nan")]
    pub ci_half_width: f64,
}

/// Reads the `null` a writer prints for a float that is not finite back as NaN. Needed on
/// fields that a `#[serde(flatten)]` parent buffers, where a lenient reader of the whole
/// document cannot reach them.
pub fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Estimate {
    /// The 95% Student-t interval for the mean of independent samples (replications).
    pub fn from_samples_95(xs: &[f64]) -> Estimate {
        let n = xs.len();
        let mean = mean(xs);
        let ci_half_width = if n < 2 {
            f64::NAN
        } else {
            student_t_975(n - 1) * sample_std_dev(xs) / (n as f64).sqrt()
        };
        Estimate {
            mean,
            ci_half_width,
        }
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (the factor of a two-sided
/// 95% interval). Exact to four figures for df <= 30, then the normal-limit series
/// `z + (z^3 + z) / (4 df)`, within 0.1% of the true value.
pub fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z = 1.959_964;
            z + (z * z * z + z) / (4.0 * df as f64)
        }
    }
}
