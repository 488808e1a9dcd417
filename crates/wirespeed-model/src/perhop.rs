//! Each hop's own cost from TTL-limited probes: what can be told apart, and how.
//!
//! Seed 001 finds a node's cost by subtracting the path *to* it from the path *through* it
//! (§2, `ciscoping = keeper - (roc + ether)`; §4, `transit = ih2 - (ih1 + ether)`), with echoes
//! answered by identical nodes. Per-hop tools (pathchar, pchar, clink) difference the lines of
//! consecutive TTLs instead, each answered by a router's ICMP time exceeded. What such a
//! difference contains follows from which bytes every cost acts on.
//!
//! # The model
//!
//! A probe of `S` IP bytes sent with TTL `k` crosses links `1..=k` and is forwarded by routers
//! `1..k`; router `k` answers with a packet of `Q` IP bytes (a time exceeded quotes at most 548
//! bytes of the probe, so `Q = min(S, 548) + 28` on IPv4, RFC 1812 §4.3.2.3; an echo reply has
//! `Q = S`), which crosses the same links and routers back. With, for link `i`, a fixed cost
//! `D_i` (propagation and per-frame framing) and a per-byte cost `s_i` (serialization), for
//! router `j` a forward cost `f_j + phi_j x bytes` and an answer cost `a_j + alpha_j x bytes`
//! applied to the packet it originates, the minimum round trip is
//!
//! ```text
//! RTT_k(S, Q) = c_k + u_k S + v_k Q
//!   c_k = sum_{i<=k} 2 D_i + sum_{j<k} 2 f_j + a_k
//!   u_k = sum_{i<=k} s_i + sum_{j<k} phi_j                  (every byte that goes out)
//!   v_k = sum_{i<=k} s_i + sum_{j<k} phi_j + alpha_k        (every byte that comes back)
//! ```
//!
//! (for a symmetric path; with different rates each way `u` and `v` hold each direction's).
//!
//! # What is identifiable
//!
//! * `u_k`, `v_k` and `c_k` separately, from one TTL, *if* `S` and `Q` are not collinear: the
//!   sizes must lie on both sides of the quote limit (below it `Q = S + 28`, above it `Q` is
//!   constant). Fitted against `S + Q` alone, the line bends at 548 bytes whenever
//!   `alpha_k != 0`, and its slope mixes the two ([`fit_rtt_line`] fits the plane instead).
//! * Hop `k`'s own per-byte cost, `u_k - u_{k-1} = s_k + phi_{k-1}`: the link into it plus the
//!   forwarding per byte of the router before it. These two act on the same bytes in the same
//!   direction, so no single-ended probe can separate them (pathchar's "bandwidth" of a hop is
//!   this sum, read as 8 / rate).
//! * Router `k`'s answer per byte, `alpha_k = v_k - u_k` (for a symmetric path), because it
//!   alone acts on the returned bytes only.
//! * Hop `k`'s own fixed cost, one way: `(c_k - c_{k-1}) / 2 = D_k + f_{k-1} + (a_k - a_{k-1}) / 2`.
//!   The answer's fixed cost `a_k` enters every probe answered at `k` exactly once, like the
//!   fixed costs of the path before it, so it cannot be separated from them: adding `t` to
//!   `a_k` and taking `t / 2` from `D_k + f_{k-1}` (and giving it back to hop `k + 1`) changes
//!   no observable. An echo to the router's own address (Bellovin's probe) has the same fixed
//!   part as its time exceeded and does not help. Only when consecutive routers answer alike
//!   (the seed's "identical pairs of nodes") does the difference reduce to `D_k + f_{k-1}`.
//!   The destination host answers in its kernel; the emulator charges it nothing.
//!
//! Differences are reported as they come, negative or not: the noise of two minimums, or a
//! previous hop that answers more slowly than this one, shows up as a negative difference
//! rather than being clipped to zero.
//!
//! # Calibration
//!
//! The lab adds a cost of its own to every link crossing (a thread wake-up to read each frame,
//! the write into the next namespace, the kernel's forwarding); [`calibrated`] subtracts it as
//! the seed subtracts its host's own loopback line (roc), using a run over a twin of the path
//! whose modelled costs are known: measured twin minus configured twin is the machinery.

use std::ops::{Add, Sub};

use serde::{Deserialize, Serialize};

use crate::delay::Cost;

/// The plane `RTT = fixed + per_sent_byte x S + per_returned_byte x Q`, ms.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RttLine {
    /// `c`: round trip of a probe of no bytes, ms.
    pub fixed_ms: f64,
    /// `u`: ms per IP byte sent.
    pub per_sent_byte_ms: f64,
    /// `v`: ms per IP byte returned.
    pub per_returned_byte_ms: f64,
}

impl RttLine {
    /// The round trip of an echo whose one-way cost is `c` (answered at no cost: a host).
    pub fn echo(c: Cost) -> RttLine {
        RttLine {
            fixed_ms: 2.0 * c.fixed_ms,
            per_sent_byte_ms: c.per_byte_ms,
            per_returned_byte_ms: c.per_byte_ms,
        }
    }

    /// Round trip of `sent` bytes answered with `returned`, ms.
    pub fn at(&self, sent: f64, returned: f64) -> f64 {
        self.fixed_ms + self.per_sent_byte_ms * sent + self.per_returned_byte_ms * returned
    }
}

impl Add for RttLine {
    type Output = RttLine;
    fn add(self, o: RttLine) -> RttLine {
        RttLine {
            fixed_ms: self.fixed_ms + o.fixed_ms,
            per_sent_byte_ms: self.per_sent_byte_ms + o.per_sent_byte_ms,
            per_returned_byte_ms: self.per_returned_byte_ms + o.per_returned_byte_ms,
        }
    }
}

impl Sub for RttLine {
    type Output = RttLine;
    fn sub(self, o: RttLine) -> RttLine {
        RttLine {
            fixed_ms: self.fixed_ms - o.fixed_ms,
            per_sent_byte_ms: self.per_sent_byte_ms - o.per_sent_byte_ms,
            per_returned_byte_ms: self.per_returned_byte_ms - o.per_returned_byte_ms,
        }
    }
}

/// How [`fit_rtt_line`] fitted a hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Separation {
    /// Sent and returned bytes varied independently: `u` and `v` are each measured.
    Separated,
    /// Every answer returned what was sent (an echo): one slope, `u = v`.
    Echo,
    /// Returned bytes followed sent bytes (all sizes on one side of the quote limit): one
    /// slope against bytes crossed, `u = v`; an answer cost per byte is folded into it.
    Collinear,
}

/// Least squares of the minimum round trips on sent and returned bytes.
///
/// `points` are `(sent, returned, min_rtt_ms)`. When the returned bytes are not an affine
/// function of the sent bytes, the plane `c + u S + v Q` is fitted (normal equations on centred
/// values); otherwise the line `c + b (S + Q)` with `u = v = b`. `None` with fewer than two
/// distinct sizes.
pub fn fit_rtt_line(points: &[(f64, f64, f64)]) -> Option<(RttLine, Separation)> {
    let n = points.len() as f64;
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 2 || points.iter().any(|p| !(p.0 + p.1 + p.2).is_finite()) {
        return None;
    }
    let mean = |f: fn(&(f64, f64, f64)) -> f64| points.iter().map(f).sum::<f64>() / n;
    let (ms, mq, my) = (mean(|p| p.0), mean(|p| p.1), mean(|p| p.2));
    let (mut sss, mut sqq, mut ssq, mut ssy, mut sqy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, q, y) in points {
        let (s, q, y) = (s - ms, q - mq, y - my);
        sss += s * s;
        sqq += q * q;
        ssq += s * q;
        ssy += s * y;
        sqy += q * y;
    }
    let det = sss * sqq - ssq * ssq;
    let echo = points.iter().all(|p| p.0 == p.1);
    // Collinear when the correlation of S and Q is 1 to within rounding, or Q never varies.
    if echo || sqq == 0.0 || det <= 1e-9 * sss * sqq || distinct.len() < 3 {
        let x = |p: &(f64, f64, f64)| p.0 + p.1;
        let mx = ms + mq;
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for p in points {
            sxx += (x(p) - mx) * (x(p) - mx);
            sxy += (x(p) - mx) * (p.2 - my);
        }
        let b = sxy / sxx;
        let line = RttLine {
            fixed_ms: my - b * mx,
            per_sent_byte_ms: b,
            per_returned_byte_ms: b,
        };
        let how = if echo {
            Separation::Echo
        } else {
            Separation::Collinear
        };
        return Some((line, how));
    }
    let u = (sqq * ssy - ssq * sqy) / det;
    let v = (sss * sqy - ssq * ssy) / det;
    Some((
        RttLine {
            fixed_ms: my - u * ms - v * mq,
            per_sent_byte_ms: u,
            per_returned_byte_ms: v,
        },
        Separation::Separated,
    ))
}

/// `line`'s slopes through the floor of `floor_points` (`(sent, returned, min_rtt_ms)`): its
/// fixed cost becomes the mean of `min_rtt - u S - v Q` over them. `probe` fits the slopes to
/// each size's lower half ([`crate::stats::lower_half_mean`], steadier across sizes than one
/// minimum each) and reads the fixed cost from the minimums, since queueing only ever adds
/// delay and the lower half lies above the floor by a share of it. `line` unchanged when
/// `floor_points` is empty or not finite.
pub fn through_floor(line: RttLine, floor_points: &[(f64, f64, f64)]) -> RttLine {
    let fixed: Vec<f64> = floor_points
        .iter()
        .map(|&(s, q, y)| y - line.per_sent_byte_ms * s - line.per_returned_byte_ms * q)
        .collect();
    let mean = fixed.iter().sum::<f64>() / fixed.len() as f64;
    if fixed.is_empty() || !mean.is_finite() {
        return line;
    }
    RttLine {
        fixed_ms: mean,
        ..line
    }
}

/// A hop's own cost: what its line adds to the previous hop's.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct OwnCost {
    /// One-way fixed cost, `(c_k - c_{k-1}) / 2`, ms: the link into the hop, the previous
    /// router's forwarding, and half the change in answer cost (see the module docs).
    pub fixed_ms: f64,
    /// Per byte going out, `u_k - u_{k-1}`, ms: the link into the hop and the previous
    /// router's forwarding per byte.
    pub per_byte_ms: f64,
    /// The answering node's own cost per returned byte, `v_k - u_k`, ms (0 for an echo).
    pub answer_per_byte_ms: f64,
}

impl OwnCost {
    /// The one-way line `fixed + per_byte x size` of the hop (the seed's form).
    pub fn cost(&self) -> Cost {
        Cost::new(self.fixed_ms, self.per_byte_ms)
    }
}

/// Each hop's own cost from consecutive round-trip lines (hop 0, the sending host, is the zero
/// line: its own cost is in hop 1, unless the caller subtracts a loopback line first).
pub fn own_costs(lines: &[RttLine]) -> Vec<OwnCost> {
    let mut before = RttLine::default();
    lines
        .iter()
        .map(|&line| {
            let own = OwnCost {
                fixed_ms: (line.fixed_ms - before.fixed_ms) / 2.0,
                per_byte_ms: line.per_sent_byte_ms - before.per_sent_byte_ms,
                answer_per_byte_ms: line.per_returned_byte_ms - line.per_sent_byte_ms,
            };
            before = line;
            own
        })
        .collect()
}

/// `measured` minus what the measuring machinery added, where the machinery is a twin of the
/// path with known costs: `twin_measured - twin_configured`. The seed's roc subtraction with a
/// whole path in place of the loopback.
pub fn calibrated(measured: RttLine, twin_measured: RttLine, twin_configured: RttLine) -> RttLine {
    measured - (twin_measured - twin_configured)
}

/// A level shift in a plane of round trips: from `after_x` to `before_x` bytes crossed the
/// round trip jumps by `jump_ms` beyond what `c + u x sent + v x returned` explains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaneStep {
    /// Bytes crossed (sent + returned) of the last point below the step.
    pub after_x: f64,
    /// Bytes crossed of the first point above it.
    pub before_x: f64,
    /// Its height, ms.
    pub jump_ms: f64,
    /// The F statistic of the shift against the plane alone (1 and n - 4 degrees of freedom).
    pub f_statistic: f64,
}

/// Least squares of `y` on `cols` (each row a point), by the normal equations solved with
/// partial pivoting: the coefficients and the sum of squared residuals, or None when singular.
fn least_squares_columns(rows: &[Vec<f64>], y: &[f64]) -> Option<(Vec<f64>, f64)> {
    let k = rows.first()?.len();
    let mut a = vec![vec![0.0; k + 1]; k];
    for (r, &yi) in rows.iter().zip(y) {
        for i in 0..k {
            for j in 0..k {
                a[i][j] += r[i] * r[j];
            }
            a[i][k] += r[i] * yi;
        }
    }
    let scale = a
        .iter()
        .map(|row| row[..k].iter().fold(0.0f64, |m, v| m.max(v.abs())))
        .fold(0.0f64, f64::max);
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() <= 1e-12 * scale.max(f64::MIN_POSITIVE) {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    let coef: Vec<f64> = (0..k).map(|i| a[i][k] / a[i][i]).collect();
    let sse = rows
        .iter()
        .zip(y)
        .map(|(r, yi)| {
            let fit: f64 = r.iter().zip(&coef).map(|(x, c)| x * c).sum();
            (yi - fit) * (yi - fit)
        })
        .sum();
    Some((coef, sse))
}

/// The strongest level shift in `points` (`(sent, returned, min_rtt_ms)`, sent and returned
/// separated) over the plane fitted to them, if its F statistic exceeds `f_threshold` and it is
/// larger than `min_jump` ms. The plane explains the bend that the quote limit puts in a line
/// drawn against bytes crossed, so only a real change of cost remains to be found.
pub fn plane_step(
    points: &[(f64, f64, f64)],
    min_jump: f64,
    f_threshold: f64,
) -> Option<PlaneStep> {
    let mut pts: Vec<(f64, f64, f64)> = points.to_vec();
    pts.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
    let n = pts.len();
    if n < 7 {
        return None;
    }
    let y: Vec<f64> = pts.iter().map(|p| p.2).collect();
    let plane: Vec<Vec<f64>> = pts.iter().map(|p| vec![1.0, p.0, p.1]).collect();
    let (_, pooled) = least_squares_columns(&plane, &y)?;
    let mut best: Option<PlaneStep> = None;
    for k in 3..=n - 3 {
        let (below, above) = (pts[k - 1].0 + pts[k - 1].1, pts[k].0 + pts[k].1);
        if below == above {
            continue;
        }
        let rows: Vec<Vec<f64>> = pts
            .iter()
            .enumerate()
            .map(|(i, p)| vec![1.0, p.0, p.1, f64::from(u8::from(i >= k))])
            .collect();
        let Some((coef, within)) = least_squares_columns(&rows, &y) else {
            continue;
        };
        let dof = (n - 4) as f64;
        let f = if within > 0.0 {
            (pooled - within).max(0.0) / (within / dof)
        } else if pooled > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        if best.is_none_or(|b| f > b.f_statistic) {
            best = Some(PlaneStep {
                after_x: below,
                before_x: above,
                jump_ms: coef[3],
                f_statistic: f,
            });
        }
    }
    best.filter(|s| s.f_statistic > f_threshold && s.jump_ms.abs() > min_jump)
}
