//! Statistics for best-case delay: the minimum per size, straight-line fits (least squares and
//! two robust ones), confidence intervals for the fitted coefficients, and a check for structure
//! the line hides.
//!
//! Bellovin (seed 001, §1-2) argues that for best-case behaviour "all that we care about is the
//! absolute minimum time": queueing and scheduling only ever *add* delay, so the minimum of many
//! probes of one size estimates the uncontended cost, and a least-squares line through the
//! minimums gives `fixed + per_byte x size`. The later per-hop tools refine the fit:
//! pathchar/pchar fit the minimums with least squares and pchar also with least median of
//! squares (Rousseeuw 1984), clink (Downey 1999, "Using pathchar to estimate Internet link
//! characteristics", SIGCOMM) reports even/odd split-half intervals. Here:
//!
//! * [`summarize`]: minimum, median, count per size (the seed's min filter);
//! * [`least_squares`]: ordinary least squares with R^2 and residuals;
//! * [`theil_sen`]: the median of pairwise slopes (Theil 1950, Sen 1968), robust to 29% outliers;
//! * [`least_median_of_squares`]: the line minimising the median squared residual
//!   (Rousseeuw 1984, JASA 79:871), robust to almost 50% outliers, computed exactly over all
//!   lines through two points;
//! * [`bootstrap`]: percentile bootstrap intervals (Efron & Tibshirani 1993, ch. 13) obtained by
//!   resampling the probes of each size, taking the minimum again, and refitting; seeded, so a
//!   run can be repeated;
//! * [`split_half`]: the even-numbered and the odd-numbered probes of each size fitted apart
//!   (clink's check: if the two halves disagree, the minimum has not converged);
//! * [`detect_step`]: a change-point test (Chow 1960, Econometrica 28:591) on the minimums, which
//!   reports a step such as the seed's mbuf-to-cluster hump between 112 and 512 bytes instead of
//!   letting the line average it away.

use serde::Serialize;

/// Why a fit could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// Fewer distinct x values than the method needs.
    #[error("a line needs at least {needed} distinct sizes, got {got}")]
    TooFewPoints {
        /// Distinct x values required.
        needed: usize,
        /// Distinct x values given.
        got: usize,
    },
    /// The x and y slices differ in length.
    #[error("{xs} sizes but {ys} delays")]
    LengthMismatch {
        /// Number of x values.
        xs: usize,
        /// Number of y values.
        ys: usize,
    },
    /// A value is NaN or infinite.
    #[error("a value is not finite")]
    NotFinite,
}

/// What the probes of one size gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeSummary {
    /// The x value (bytes).
    pub size: f64,
    /// Smallest observation: the seed's best case.
    pub min: f64,
    /// Median observation.
    pub median: f64,
    /// Number of observations.
    pub count: usize,
}

/// One x value and every observation made at it.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The x value (bytes).
    pub x: f64,
    /// The observations, in the order they were made.
    pub ys: Vec<f64>,
}

/// Minimum, median and count of each group, sorted by x; groups without observations are left
/// out.
pub fn summarize(groups: &[Group]) -> Vec<SizeSummary> {
    let mut out: Vec<SizeSummary> = groups
        .iter()
        .filter(|g| !g.ys.is_empty())
        .map(|g| SizeSummary {
            size: g.x,
            min: g.ys.iter().copied().fold(f64::INFINITY, f64::min),
            median: median(&g.ys),
            count: g.ys.len(),
        })
        .collect();
    out.sort_by(|a, b| a.size.total_cmp(&b.size));
    out
}

/// The median (mean of the two middle values for an even count); NaN for an empty slice.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) by linear interpolation between order statistics (Hyndman & Fan
/// type 7, the default of R and NumPy); NaN for an empty slice.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// A straight line `y = intercept + slope x`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Line {
    /// Value at x = 0 (the fixed cost).
    pub intercept: f64,
    /// Change of y per unit of x (the per-byte cost).
    pub slope: f64,
}

impl Line {
    /// The line's value at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// An ordinary least-squares fit and how well it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineFit {
    /// The fitted line.
    #[serde(flatten)]
    pub line: Line,
    /// Coefficient of determination, 1 - SS_res / SS_tot (1 when every y is equal and fitted).
    pub r_squared: f64,
    /// y - fitted, in input order.
    pub residuals: Vec<f64>,
    /// Residual standard error, sqrt(SS_res / (n - 2)); 0 for two points.
    pub residual_std: f64,
}

fn check(xs: &[f64], ys: &[f64], needed: usize) -> Result<(), StatsError> {
    if xs.len() != ys.len() {
        return Err(StatsError::LengthMismatch {
            xs: xs.len(),
            ys: ys.len(),
        });
    }
    if xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return Err(StatsError::NotFinite);
    }
    let mut distinct = xs.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < needed {
        return Err(StatsError::TooFewPoints {
            needed,
            got: distinct.len(),
        });
    }
    Ok(())
}

/// Ordinary least squares of `ys` on `xs` (the seed's fit, made there with the S system).
///
/// Computed on centred values, which keeps the sums well-conditioned when x is in the thousands
/// and y in milliseconds.
pub fn least_squares(xs: &[f64], ys: &[f64]) -> Result<LineFit, StatsError> {
    check(xs, ys, 2)?;
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (&x, &y) in xs.iter().zip(ys) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
        syy += (y - my) * (y - my);
    }
    let slope = sxy / sxx;
    let line = Line {
        intercept: my - slope * mx,
        slope,
    };
    let residuals: Vec<f64> = xs.iter().zip(ys).map(|(&x, &y)| y - line.at(x)).collect();
    let ss_res: f64 = residuals.iter().map(|r| r * r).sum();
    let r_squared = if syy > 0.0 { 1.0 - ss_res / syy } else { 1.0 };
    let residual_std = if xs.len() > 2 {
        (ss_res / (n - 2.0)).sqrt()
    } else {
        0.0
    };
    Ok(LineFit {
        line,
        r_squared,
        residuals,
        residual_std,
    })
}

/// Theil-Sen: the slope is the median of the slopes between all pairs of points with different
/// x; the intercept is the median of y - slope x.
pub fn theil_sen(xs: &[f64], ys: &[f64]) -> Result<Line, StatsError> {
    check(xs, ys, 2)?;
    let mut slopes = Vec::with_capacity(xs.len() * xs.len() / 2);
    for i in 0..xs.len() {
        for j in i + 1..xs.len() {
            if xs[i] != xs[j] {
                slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
            }
        }
    }
    let slope = median(&slopes);
    let intercepts: Vec<f64> = xs.iter().zip(ys).map(|(&x, &y)| y - slope * x).collect();
    Ok(Line {
        intercept: median(&intercepts),
        slope,
    })
}

/// Least median of squares: of the lines through every pair of points (with the intercept then
/// re-centred on the shortest half of the residuals), the one whose median squared residual is
/// smallest. Exact for the O(n^2) candidate slopes, O(n^3 log n) overall, which is fine for the
/// tens of sizes a probe uses.
pub fn least_median_of_squares(xs: &[f64], ys: &[f64]) -> Result<Line, StatsError> {
    check(xs, ys, 2)?;
    let n = xs.len();
    // Rousseeuw's h = floor(n/2) + 1 points must be covered.
    let h = n / 2 + 1;
    let mut best: Option<(f64, Line)> = None;
    let mut shifted = vec![0.0; n];
    for i in 0..n {
        for j in i + 1..n {
            if xs[i] == xs[j] {
                continue;
            }
            let slope = (ys[j] - ys[i]) / (xs[j] - xs[i]);
            for k in 0..n {
                shifted[k] = ys[k] - slope * xs[k];
            }
            shifted.sort_by(f64::total_cmp);
            // For a fixed slope the best intercept is the midpoint of the shortest window
            // holding h of the shifted values (Rousseeuw & Leroy 1987, §4.2).
            for start in 0..=n - h {
                let width = shifted[start + h - 1] - shifted[start];
                let intercept = (shifted[start + h - 1] + shifted[start]) / 2.0;
                let score = width / 2.0;
                if best.is_none_or(|(s, _)| score < s) {
                    best = Some((score, Line { intercept, slope }));
                }
            }
        }
    }
    best.map(|(_, line)| line)
        .ok_or(StatsError::TooFewPoints { needed: 2, got: 1 })
}

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// high - low.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }

    /// Whether `value` lies inside (bounds included).
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// Intervals for both coefficients of a line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct LineIntervals {
    /// For the intercept (fixed cost).
    pub intercept: Interval,
    /// For the slope (per-byte cost).
    pub slope: Interval,
}

/// SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators",
/// OOPSLA): a tiny, well-mixed generator, seeded so that bootstrap and probe orders repeat
/// exactly. Not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in [0, 1) (the top 53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for the n
    /// used here).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// Percentile bootstrap intervals for the least-squares line through the per-size minimums.
///
/// Each replicate draws, for every size, as many probes as were made at that size, with
/// replacement, takes their minimum, and refits. The interval holds the central `confidence`
/// share (for example 0.95) of the replicate coefficients. The minimum is a non-smooth
/// statistic, so these intervals are an honest indication of convergence (a size whose
/// minimum was seen once gives a wide interval), not an exact coverage guarantee.
pub fn bootstrap(
    groups: &[Group],
    replicates: usize,
    confidence: f64,
    seed: u64,
) -> Result<LineIntervals, StatsError> {
    let groups: Vec<&Group> = groups.iter().filter(|g| !g.ys.is_empty()).collect();
    let xs: Vec<f64> = groups.iter().map(|g| g.x).collect();
    check(&xs, &xs, 2)?;
    let mut rng = SplitMix64::new(seed);
    let mut intercepts = Vec::with_capacity(replicates);
    let mut slopes = Vec::with_capacity(replicates);
    let mut mins = vec![0.0; groups.len()];
    for _ in 0..replicates.max(1) {
        for (m, g) in mins.iter_mut().zip(&groups) {
            *m = (0..g.ys.len())
                .map(|_| g.ys[rng.below(g.ys.len())])
                .fold(f64::INFINITY, f64::min);
        }
        let fit = least_squares(&xs, &mins)?;
        intercepts.push(fit.line.intercept);
        slopes.push(fit.line.slope);
    }
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let interval = |v: &[f64]| Interval {
        low: quantile(v, tail),
        high: quantile(v, 1.0 - tail),
    };
    Ok(LineIntervals {
        intercept: interval(&intercepts),
        slope: interval(&slopes),
    })
}

/// The least-squares lines through the minimums of the even-numbered and of the odd-numbered
/// probes of each size (in the order they were sent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SplitHalf {
    /// Fit of probes 0, 2, 4, ...
    pub even: Line,
    /// Fit of probes 1, 3, 5, ...
    pub odd: Line,
}

impl SplitHalf {
    /// The two estimates of each coefficient as an interval (clink's spread).
    pub fn intervals(&self) -> LineIntervals {
        let span = |a: f64, b: f64| Interval {
            low: a.min(b),
            high: a.max(b),
        };
        LineIntervals {
            intercept: span(self.even.intercept, self.odd.intercept),
            slope: span(self.even.slope, self.odd.slope),
        }
    }
}

/// Splits every size's probes into even and odd positions and fits each half; needs two probes
/// at two sizes at least.
pub fn split_half(groups: &[Group]) -> Result<SplitHalf, StatsError> {
    let half = |parity: usize| -> Result<Line, StatsError> {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for g in groups {
            let min =
                g.ys.iter()
                    .skip(parity)
                    .step_by(2)
                    .copied()
                    .fold(f64::INFINITY, f64::min);
            if min.is_finite() {
                xs.push(g.x);
                ys.push(min);
            }
        }
        Ok(least_squares(&xs, &ys)?.line)
    };
    Ok(SplitHalf {
        even: half(0)?,
        odd: half(1)?,
    })
}

/// A change in the minimums that one straight line does not explain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    /// The last x of the lower segment.
    pub after_size: f64,
    /// The first x of the upper segment.
    pub before_size: f64,
    /// Upper-segment line minus lower-segment line, midway between the two sizes.
    pub jump: f64,
    /// Chow's F statistic for two lines against one (2 and n - 4 degrees of freedom).
    pub f_statistic: f64,
    /// The line fitted to the sizes up to `after_size`.
    pub lower: Line,
    /// The line fitted to the sizes from `before_size`.
    pub upper: Line,
}

/// The F statistic above which [`detect_step`] reports a step. F(2, 10) exceeds 7.56 with
/// probability 0.01 under one line with normal noise; a probe's minimums are far from normal,
/// so the threshold is set higher to keep false alarms rare.
pub const STEP_F_THRESHOLD: f64 = 10.0;

/// Looks for the split of the sorted points into two runs (at least three points each) whose two
/// separate lines fit much better than one (Chow's test). Returns the best split when its F
/// statistic exceeds [`STEP_F_THRESHOLD`] and the jump is larger than `min_jump` (for example
/// a few timer ticks), so that noise at the resolution of the clock is not called a step.
pub fn detect_step(xs: &[f64], ys: &[f64], min_jump: f64) -> Option<Step> {
    if check(xs, ys, 6).is_err() {
        return None;
    }
    let mut points: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = points.len();
    let sse = |p: &[(f64, f64)]| -> Option<(f64, Line)> {
        let (x, y): (Vec<f64>, Vec<f64>) = p.iter().copied().unzip();
        let fit = least_squares(&x, &y).ok()?;
        Some((fit.residuals.iter().map(|r| r * r).sum(), fit.line))
    };
    let (pooled, _) = sse(&points)?;
    let mut best: Option<Step> = None;
    for k in 3..=n - 3 {
        let (lo, hi) = points.split_at(k);
        if lo[k - 1].0 == hi[0].0 {
            continue;
        }
        let (Some((s1, lower)), Some((s2, upper))) = (sse(lo), sse(hi)) else {
            continue;
        };
        let within = s1 + s2;
        let dof = (n - 4) as f64;
        let f = if within > 0.0 {
            ((pooled - within) / 2.0) / (within / dof)
        } else if pooled > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let mid = (lo[k - 1].0 + hi[0].0) / 2.0;
        let step = Step {
            after_size: lo[k - 1].0,
            before_size: hi[0].0,
            jump: upper.at(mid) - lower.at(mid),
            f_statistic: f,
            lower,
            upper,
        };
        if best.is_none_or(|b| f > b.f_statistic) {
            best = Some(step);
        }
    }
    best.filter(|s| s.f_statistic > STEP_F_THRESHOLD && s.jump.abs() > min_jump)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
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
}
