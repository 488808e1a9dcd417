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

/// The mean of the lower half of `values` (the smallest `max(1, n / 2)` of them); NaN for an
/// empty slice.
///
/// A size's round trips lie above a floor by queueing that does not depend on the size (the
/// machine's load, the emulator's wake-ups). The minimum rests on one lucky probe, a different
/// one for every size, and on an occasional answer stamped below the floor; the lower half
/// averages the probes nearest it, so a slope fitted across sizes to these means moves less
/// from run to run than one fitted to minimums (on 50 fresh random labs: a hop's own per byte
/// within its tolerance with an interval inside it for 106 of 171 hops against 95 for minimums;
/// `bench/results/incoming-probe-hops.md`). The floor itself is a minimum's job: the lower half
/// lies above it by a share of the queueing.
pub fn lower_half_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let half = (v.len() / 2).max(1);
    v[..half].iter().sum::<f64>() / half as f64
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

/// The probes of one size at one hop: what the step rule splits into two independent halves.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeProbes {
    /// IP bytes sent.
    pub sent_bytes: f64,
    /// IP bytes returned (a time exceeded quotes at most 548 bytes of an IPv4 probe plus 28,
    /// RFC 1812 §4.3.2.3, or 1280 bytes of IPv6 in all, RFC 4443 §2.4(c); an echo returns all).
    pub returned_bytes: f64,
    /// The answered round trips, ms, in the order they were sent.
    pub rtts_ms: Vec<f64>,
}

/// How sure the step rule must be before it names a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRule {
    /// The chance of naming a step anywhere on a path that has none: family-wise over every
    /// breakpoint (the bootstrap of the largest F) and every hop (`hops` share it).
    pub family_alpha: f64,
    /// Hops tested on the path; each is tested at `family_alpha / hops` (Bonferroni).
    pub hops: usize,
    /// Level of the confirmation in the second half of the probes.
    pub confirm_alpha: f64,
    /// Steps smaller than this are not named in either half, ms (a few timer ticks).
    pub min_jump_ms: f64,
    /// Seed of the bootstraps, so that a run's verdict repeats.
    pub seed: u64,
}

/// The family-wise false-alarm rate of [`step_with_evidence`] on a path without a step. Issue
/// 31 asks for fewer than 2% of runs with a step named where none is configured; half of that
/// leaves room for noise the bootstrap does not model.
pub const STEP_FAMILY_ALPHA: f64 = 0.01;

/// The level at which the second half must show the step again (one located test, so no
/// correction beyond the few neighbouring breakpoints, which its bootstrap covers).
pub const STEP_CONFIRM_ALPHA: f64 = 0.05;

/// How far the second half's step may lie from the first's, in breakpoints (sizes).
pub const STEP_CONFIRM_REACH: usize = 2;

/// A step named with its evidence: found in the first half of the probes beyond what the
/// largest F of a path without a step reaches, then again in the second half.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepEvidence {
    /// The last bytes crossed (sent + returned) before the step, first half.
    pub after_bytes: f64,
    /// The first bytes crossed after it.
    pub before_bytes: f64,
    /// The shift in the first half's minimums, round trip, ms.
    pub jump_ms: f64,
    /// The largest F over the first half's breakpoints (one extra parameter against the fit
    /// without a step).
    pub f_statistic: f64,
    /// The bootstrap p-value of that largest F under the fit without a step.
    pub p_value: f64,
    /// The level it had to be below: `family_alpha / hops`.
    pub level: f64,
    /// Breakpoints tested (the maximum is over these).
    pub breakpoints: usize,
    /// The shift the second half shows within [`STEP_CONFIRM_REACH`] sizes of it, ms.
    pub second_jump_ms: f64,
    /// Its bootstrap p-value.
    pub second_p_value: f64,
}

/// The scan of every breakpoint for a shift under one fixed design: the residual maker `M0` of
/// the fit without a step and, for each breakpoint, `M0 d` (d = 1 from the breakpoint on) and
/// `d' M0 d`. With these an F statistic is two dot products, so a bootstrap of the largest F
/// costs a matrix-vector product a replicate.
struct ShiftScan {
    m0: Vec<Vec<f64>>,
    /// (index of the first point after the break, M0 d, d' M0 d).
    breaks: Vec<(usize, Vec<f64>, f64)>,
    dof: f64,
}

/// Inverse of a small symmetric positive matrix (Gauss-Jordan with partial pivoting).
fn small_inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = a.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..k).map(|j| f64::from(u8::from(i == j))));
            r
        })
        .collect();
    let scale = a
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |s, v| s.max(v.abs()));
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col].abs() <= 1e-12 * scale.max(f64::MIN_POSITIVE) {
            return None;
        }
        m.swap(col, pivot);
        let p = m[col][col];
        m[col].iter_mut().for_each(|v| *v /= p);
        let pivot_row = m[col].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let f = row[col];
                row.iter_mut()
                    .zip(&pivot_row)
                    .for_each(|(v, p)| *v -= f * p);
            }
        }
    }
    Some(m.into_iter().map(|r| r[k..].to_vec()).collect())
}

impl ShiftScan {
    /// `design`: one row a point (the fit without a step); `breaks`: indices k where the shift
    /// starts (points k.. shifted). Breakpoints the design cannot tell from its own columns
    /// (`d' M0 d` near 0) are left out.
    fn new(design: &[Vec<f64>], breaks: &[usize]) -> Option<ShiftScan> {
        let n = design.len();
        let p = design.first()?.len();
        if n < p + 2 {
            return None;
        }
        // Columns scaled to unit size so that bytes (10^3) and the constant (1) pivot alike.
        let norms: Vec<f64> = (0..p)
            .map(|j| {
                design
                    .iter()
                    .map(|r| r[j] * r[j])
                    .sum::<f64>()
                    .sqrt()
                    .max(1e-300)
            })
            .collect();
        let x: Vec<Vec<f64>> = design
            .iter()
            .map(|r| r.iter().zip(&norms).map(|(v, s)| v / s).collect())
            .collect();
        let gram: Vec<Vec<f64>> = (0..p)
            .map(|i| {
                (0..p)
                    .map(|j| x.iter().map(|r| r[i] * r[j]).sum())
                    .collect()
            })
            .collect();
        let inv = small_inverse(&gram)?;
        let m0: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let h: f64 = (0..p)
                            .map(|a| (0..p).map(|b| x[i][a] * inv[a][b] * x[j][b]).sum::<f64>())
                            .sum();
                        f64::from(u8::from(i == j)) - h
                    })
                    .collect()
            })
            .collect();
        let breaks = breaks
            .iter()
            .filter_map(|&k| {
                let md: Vec<f64> = m0.iter().map(|row| row[k..].iter().sum()).collect();
                let s: f64 = md[k..].iter().sum();
                (s > 1e-6 * (n - k) as f64).then_some((k, md, s))
            })
            .collect();
        Some(ShiftScan {
            m0,
            breaks,
            dof: (n - p - 1) as f64,
        })
    }

    fn residuals(&self, y: &[f64]) -> Vec<f64> {
        self.m0
            .iter()
            .map(|row| row.iter().zip(y).map(|(a, b)| a * b).sum())
            .collect()
    }

    /// (F, shift) at every breakpoint for the data `y`.
    fn scan(&self, y: &[f64]) -> Vec<(f64, f64)> {
        let e = self.residuals(y);
        let sse0: f64 = e.iter().map(|v| v * v).sum();
        self.breaks
            .iter()
            .map(|(_, md, s)| {
                let c: f64 = md.iter().zip(&e).map(|(a, b)| a * b).sum();
                let explained = c * c / s;
                let left = sse0 - explained;
                let f = if left > 1e-18 * sse0.max(f64::MIN_POSITIVE) {
                    explained / (left / self.dof)
                } else if explained > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                };
                (f, c / s)
            })
            .collect()
    }

    /// The largest F over the breakpoints in `which` whose shift has the sign `sign` (any sign
    /// when 0), with its index into `breaks`.
    fn best(&self, y: &[f64], which: &[usize], sign: f64) -> Option<(usize, f64, f64)> {
        let all = self.scan(y);
        which
            .iter()
            .map(|&i| (i, all[i].0, all[i].1))
            .filter(|(_, _, jump)| sign == 0.0 || jump * sign > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Bootstrap p-value of the largest F over `which` (same sign rule) under the fit without
    /// a step: residuals drawn with replacement onto that fit (F does not change when a
    /// multiple of the design is added, so the residuals alone are drawn). The residuals are
    /// those of the fit with the shift found (at `found`, index into `breaks`), which are the
    /// noise whether or not the step is real, while the fit without it would count a real
    /// step as noise and lose power. Stops once the p-value is surely above `stop_above` (then
    /// it is a lower bound above that level).
    #[allow(clippy::too_many_arguments)]
    fn p_value(
        &self,
        y: &[f64],
        found: usize,
        which: &[usize],
        sign: f64,
        observed: f64,
        replicates: usize,
        stop_above: f64,
        rng: &mut SplitMix64,
    ) -> f64 {
        let (_, md, s) = &self.breaks[found];
        let e0 = self.residuals(y);
        let shift = md.iter().zip(&e0).map(|(a, b)| a * b).sum::<f64>() / s;
        let e: Vec<f64> = e0.iter().zip(md).map(|(r, m)| r - shift * m).collect();
        let n = e.len();
        let mut drawn = vec![0.0; n];
        let mut beyond = 0usize;
        for r in 0..replicates {
            for d in &mut drawn {
                *d = e[rng.below(n)];
            }
            if self
                .best(&drawn, which, sign)
                .is_some_and(|(_, f, _)| f >= observed)
            {
                beyond += 1;
                if (beyond + 1) as f64 / (replicates + 1) as f64 > stop_above {
                    return (beyond + 1) as f64 / (r + 2) as f64;
                }
            }
        }
        (beyond + 1) as f64 / (replicates + 1) as f64
    }
}

/// The step rule of issue 31, over one hop's probes.
///
/// The probes of each size are split in time into two halves (the first and the second half of
/// the rounds), each reduced to its minimum (seed 001 §1). On the first half, every breakpoint
/// between sizes (at least three sizes each side) is tested for a shift against the fit
/// without one, and the largest F is kept. The fit without a step is the plane in bytes sent
/// and returned where they vary apart (a time exceeded quotes at most 548 + 28 bytes of IPv4,
/// so past that limit its answer stops growing: the plane bends there by construction), else
/// the line in bytes crossed. The breakpoint at the quote limit itself is not tested: there the
/// answering router changes what it copies, and a shift there is its answer cost, not a
/// change of buffering.
///
/// The largest F over breakpoints is not F-distributed, so its null distribution comes from a
/// residual bootstrap of the fit without a step (Efron & Tibshirani 1993, §9.5), and the step
/// must have a p-value below `family_alpha / hops`: the false alarms of every breakpoint of
/// every hop together stay under `family_alpha`. Then the second half must show it again
/// within [`STEP_CONFIRM_REACH`] sizes, with the same sign, a jump within a factor of 2 and a
/// bootstrap p-value below `confirm_alpha`. Both jumps must exceed `min_jump_ms`.
pub fn step_with_evidence(sizes: &[SizeProbes], rule: &StepRule) -> Option<StepEvidence> {
    let mut sizes: Vec<&SizeProbes> = sizes
        .iter()
        .filter(|s| {
            s.rtts_ms.len() >= 2
                && s.rtts_ms.iter().all(|v| v.is_finite())
                && (s.sent_bytes + s.returned_bytes).is_finite()
        })
        .collect();
    sizes.sort_by(|a, b| {
        (a.sent_bytes + a.returned_bytes).total_cmp(&(b.sent_bytes + b.returned_bytes))
    });
    let n = sizes.len();
    if n < 7 || rule.hops == 0 || rule.family_alpha.is_nan() || rule.family_alpha <= 0.0 {
        return None;
    }
    let half = |first: bool| -> Vec<f64> {
        sizes
            .iter()
            .map(|s| {
                let cut = s.rtts_ms.len().div_ceil(2);
                let part = if first {
                    &s.rtts_ms[..cut]
                } else {
                    &s.rtts_ms[cut..]
                };
                part.iter().copied().fold(f64::INFINITY, f64::min)
            })
            .collect()
    };
    let (first, second) = (half(true), half(false));
    let echo = sizes.iter().all(|s| s.returned_bytes == s.sent_bytes);
    let plane: Vec<Vec<f64>> = sizes
        .iter()
        .map(|s| vec![1.0, s.sent_bytes, s.returned_bytes])
        .collect();
    let crossed: Vec<Vec<f64>> = sizes
        .iter()
        .map(|s| vec![1.0, s.sent_bytes + s.returned_bytes])
        .collect();
    // Where the answer stops following the probe: the quote limit, not tested.
    let overhead = |s: &SizeProbes| s.returned_bytes - s.sent_bytes;
    let quote_limit = (1..n).find(|&k| overhead(sizes[k]) != overhead(sizes[0]));
    let candidates: Vec<usize> = (3..=n - 3)
        .filter(|&k| {
            let (a, b) = (sizes[k - 1], sizes[k]);
            a.sent_bytes + a.returned_bytes < b.sent_bytes + b.returned_bytes
                && (echo || quote_limit != Some(k))
        })
        .collect();
    let scan = (!echo)
        .then(|| ShiftScan::new(&plane, &candidates))
        .flatten()
        .or_else(|| ShiftScan::new(&crossed, &candidates))?;
    let all: Vec<usize> = (0..scan.breaks.len()).collect();
    let (at, f, jump) = scan.best(&first, &all, 0.0)?;
    let level = rule.family_alpha / rule.hops as f64;
    if f.is_nan() || jump.abs() <= rule.min_jump_ms {
        return None;
    }
    let mut rng = SplitMix64::new(rule.seed ^ 0x5eed_57e9);
    // Enough replicates that a p-value at the level is resolved (20 beyond it at least).
    let replicates = ((20.0 / level).ceil() as usize).clamp(999, 200_000);
    let p = scan.p_value(&first, at, &all, 0.0, f, replicates, level, &mut rng);
    if p > level {
        return None;
    }
    // The second half, near the same place and with the same sign.
    let near: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| scan.breaks[i].0.abs_diff(scan.breaks[at].0) <= STEP_CONFIRM_REACH)
        .collect();
    let (at2, f2, jump2) = scan.best(&second, &near, jump.signum())?;
    let ratio = jump2 / jump;
    if !(0.5..=2.0).contains(&ratio) || jump2.abs() <= rule.min_jump_ms {
        return None;
    }
    let confirm_replicates = ((20.0 / rule.confirm_alpha).ceil() as usize).clamp(999, 200_000);
    let p2 = scan.p_value(
        &second,
        at2,
        &near,
        jump.signum(),
        f2,
        confirm_replicates,
        rule.confirm_alpha,
        &mut rng,
    );
    if p2 > rule.confirm_alpha {
        return None;
    }
    let k = scan.breaks[at].0;
    let x = |s: &SizeProbes| s.sent_bytes + s.returned_bytes;
    Some(StepEvidence {
        after_bytes: x(sizes[k - 1]),
        before_bytes: x(sizes[k]),
        jump_ms: jump,
        f_statistic: f,
        p_value: p,
        level,
        breakpoints: scan.breaks.len(),
        second_jump_ms: jump2,
        second_p_value: p2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn heavy_tailed(
        seed: u64,
        echo: bool,
        jump: f64,
        step_at: f64,
        probes: usize,
    ) -> Vec<SizeProbes> {
        let mut rng = SplitMix64::new(seed);
        (0..16)
            .map(|i| {
                let sent = 46.0 + f64::from(i) * (1500.0 - 46.0) / 15.0;
                let sent = sent.floor();
                let returned = if echo { sent } else { sent.min(548.0) + 28.0 };
                let base =
                    0.7 + 0.00076 * (sent + returned) + if sent >= step_at { jump } else { 0.0 };
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
}
