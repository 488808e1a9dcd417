//! From probes to best-case costs: the seed's analysis of a probe run, per hop.
//!
//! For every hop: the minimum, median and loss of each probe size; a least-squares line of the
//! minimum round trip against the bytes that crossed the path (sent plus returned); its one-way
//! form `fixed + per_byte x size` (half the round-trip fixed cost, as Bellovin halves his
//! round trips, seed 001 §2); bootstrap and split-half intervals; robust fits; a step check;
//! then each hop's own cost by differencing consecutive hops (seed §2's
//! `through - to`), with the implied link rate 8 / per-byte cost.
//!
//! Each hop's round trip is also fitted as a plane in bytes sent and bytes returned
//! ([`crate::perhop`]), which separates a router's answer cost per byte from the path's, and its
//! own cost is the difference of those planes; the module docs of `perhop` say what one end can
//! and cannot tell apart.
//!
//! Why bytes sent plus bytes returned: an echo reply carries the whole probe back, but an ICMP
//! time exceeded quotes at most 576 bytes of IPv4 (RFC 1812 §4.3.2.3; Linux's `icmp_send`
//! stops there) or 1280 of IPv6 (RFC 4443 §2.4(c)). Fitted against the probe size alone, every
//! router's line would bend where the quote stops growing.

use serde::{Deserialize, Serialize};

use crate::delay::Cost;
use crate::perhop::{self, RttLine, Separation};
use crate::resample::random_group_interval;
use crate::stats::{self, Group, Interval, LineIntervals, SizeProbes, StepRule};

/// One probe as the analysis sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// The hop's TTL.
    pub ttl: u8,
    /// IP bytes sent.
    pub sent_bytes: usize,
    /// IP bytes returned (any value when lost).
    pub returned_bytes: usize,
    /// Round trip, ms; `None` when lost.
    pub rtt_ms: Option<f64>,
    /// When it was sent, seconds after the start.
    pub sent_at_seconds: f64,
}

/// Settings of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnalysisParams {
    /// Bootstrap replicates.
    pub bootstrap_replicates: usize,
    /// Confidence of the bootstrap intervals (0.95).
    pub confidence: f64,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Steps smaller than this are not reported, ms (a few timer ticks).
    pub min_step_ms: f64,
}

/// One probe size at one hop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// IP bytes sent.
    pub sent_bytes: usize,
    /// IP bytes returned (the median of the answers).
    pub returned_bytes: usize,
    /// Probes sent.
    pub sent: usize,
    /// Probes lost.
    pub lost: usize,
    /// Minimum round trip, ms.
    pub min_rtt_ms: f64,
    /// Median round trip, ms.
    pub median_rtt_ms: f64,
    /// Mean of the lower half of the round trips ([`stats::lower_half_mean`]), ms: what the
    /// plane's slopes are fitted to. Documents written before it was recorded read as NaN.
    #[serde(default = "unrecorded")]
    pub lower_half_rtt_ms: f64,
    /// Minimum minus the fitted line, ms.
    pub residual_ms: f64,
}

/// The fit of one hop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopFit {
    /// Round trip = intercept + slope x (sent + returned bytes): intercept ms.
    pub rtt_intercept_ms: f64,
    /// ... slope, ms per byte crossing the path.
    pub rtt_slope_ms_per_byte: f64,
    /// One-way best case: intercept / 2 + slope x size.
    pub one_way: Cost,
    /// R^2 of the least-squares fit of the minimums.
    pub r_squared: f64,
    /// Residual standard error, ms.
    pub residual_std_ms: f64,
    /// Bootstrap interval of the one-way coefficients (`confidence`).
    pub bootstrap: Option<LineIntervals>,
    /// Even/odd split-half spread of the one-way coefficients.
    pub split_half: Option<LineIntervals>,
    /// Theil-Sen, one-way.
    pub theil_sen: Option<Cost>,
    /// Least median of squares, one-way.
    pub least_median_of_squares: Option<Cost>,
    /// A step in the minimums the line does not explain.
    pub step: Option<StepReport>,
    /// The round trip as a plane in bytes sent and returned (`perhop`): `u` and `v` apart
    /// when the sizes straddle the quote limit, else one slope for both. Documents written
    /// before it was recorded read as NaN.
    #[serde(default = "unrecorded_rtt_line")]
    pub rtt_line: RttLine,
    /// Whether `rtt_line` separates sent from returned bytes (older documents: one slope).
    #[serde(default = "one_slope")]
    pub separation: Separation,
    /// Random-group intervals of the one-way coefficients over independent time blocks of the
    /// run ([`TimeBlockIntervals`]); None with fewer than 3 blocks that fitted (and in older
    /// documents).
    #[serde(default)]
    pub time_blocks: Option<TimeBlockIntervals>,
}

/// Intervals of a line's two coefficients from the spread of the same analysis run on each of
/// `blocks` independent time blocks of the probes (`resample::random_group_interval`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeBlockIntervals {
    /// Blocks whose analysis gave the figures.
    pub blocks: usize,
    /// Nominal confidence (0.95; a minimum's coverage is higher, see `random_group_interval`).
    pub confidence: f64,
    /// Of the one-way fixed cost, ms.
    pub fixed_ms: Interval,
    /// Of the per-byte cost, ms.
    pub per_byte_ms: Interval,
}

/// Intervals of a hop's own cost, as [`TimeBlockIntervals`], with the answer per byte.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OwnCostIntervals {
    /// Blocks whose analysis gave the hop's own cost from the same previous hop.
    pub blocks: usize,
    /// Nominal confidence (0.95).
    pub confidence: f64,
    /// Of the own one-way fixed cost, ms.
    pub fixed_ms: Interval,
    /// Of the own per-byte cost, ms.
    pub per_byte_ms: Interval,
    /// Of the answering node's cost per returned byte, ms.
    pub answer_per_byte_ms: Interval,
}

impl OwnCostIntervals {
    /// Whether the per-byte cost is below what the run resolves: its interval reaches zero.
    pub fn per_byte_unresolved(&self) -> bool {
        self.per_byte_ms.low <= 0.0
    }
}

/// A figure an older document did not record.
fn unrecorded() -> f64 {
    f64::NAN
}

fn unrecorded_rtt_line() -> RttLine {
    RttLine {
        fixed_ms: f64::NAN,
        per_sent_byte_ms: f64::NAN,
        per_returned_byte_ms: f64::NAN,
    }
}

fn one_slope() -> Separation {
    Separation::Collinear
}

/// A step, reported in probe sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// Between which bytes-crossed values the step lies.
    pub between_bytes: [f64; 2],
    /// Its height, ms (upper minus lower, round trip).
    pub jump_ms: f64,
    /// The largest F over the first half's breakpoints (one shift against the fit without it).
    pub f_statistic: f64,
    /// Its bootstrap p-value under the fit without a step (`stats::step_with_evidence`);
    /// older documents: NaN.
    #[serde(default = "unrecorded")]
    pub p_value: f64,
    /// The level it had to be below: the family-wise rate shared by the hops of the path.
    #[serde(default = "unrecorded")]
    pub level: f64,
    /// The shift the first and the second half of the probes show, ms (`jump_ms` is their
    /// mean); older documents: NaN.
    #[serde(default = "unrecorded_pair")]
    pub half_jumps_ms: [f64; 2],
}

fn unrecorded_pair() -> [f64; 2] {
    [f64::NAN; 2]
}

/// A hop's own cost: its line minus the previous hop's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Increment {
    /// The hop it is measured from (0 = this host).
    pub from_ttl: u8,
    /// The difference, one-way: half the difference of the round-trip planes' fixed costs, and
    /// the difference of their costs per byte sent (`perhop::own_costs`).
    pub cost: Cost,
    /// The answering node's own cost per byte it returns, `v - u` of this hop's plane, ms (0
    /// for an echo; folded into `cost` when the sizes did not separate it).
    #[serde(default = "unrecorded")]
    pub answer_per_byte_ms: f64,
    /// 8 / per-byte difference, bit/s (the link rate if the difference is all serialization).
    pub implied_bits_per_second: Option<f64>,
    /// Why the figure should not be trusted as it stands, when it should not.
    pub caveat: Option<String>,
    /// Random-group intervals of `cost` and `answer_per_byte_ms` over independent time blocks;
    /// None with fewer than 3 blocks (and in older documents).
    #[serde(default)]
    pub intervals: Option<OwnCostIntervals>,
    /// The per byte of `cost` is not this hop's per byte sent: the hop echoes (one slope for
    /// the bytes sent and returned, their mean) and the path before it returns bytes at another
    /// cost than it sends them (see [`mark_echoes_that_mix_directions`]), so one end cannot
    /// tell the two apart. Older documents: false.
    #[serde(default)]
    pub per_byte_mixes_directions: bool,
    /// Which probes measured the per byte and the answer per byte: the hop's own (ICMP), or
    /// at the destination the agent's echoes and short replies
    /// ([`crate::destination::analyze_with_agent`]). Older documents: the hop's own.
    #[serde(default)]
    pub per_byte_from: crate::destination::PerByteSeries,
}

/// Everything about one hop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopAnalysis {
    /// Its TTL.
    pub ttl: u8,
    /// Per size.
    pub sizes: Vec<SizeRow>,
    /// Lost share of its probes.
    pub loss_fraction: f64,
    /// The fit, when one could be made.
    pub fit: Option<HopFit>,
    /// Why there is no fit.
    pub no_fit_reason: Option<String>,
    /// ICMP rate limiting seen at this hop.
    pub rate_limit: Option<String>,
    /// Its own cost, from the previous fitted hop.
    pub increment: Option<Increment>,
}

fn to_one_way(iv: LineIntervals) -> LineIntervals {
    let mut out = iv;
    out.intercept.low /= 2.0;
    out.intercept.high /= 2.0;
    out
}

/// Recognises ICMP rate limiting: a hop that lost a fifth or more of its probes while
/// answering no faster than about one per second (Linux's `net.ipv4.icmp_ratelimit`, 1000 ms
/// per destination with a burst of 6).
fn rate_limit(obs: &[&Observation]) -> Option<String> {
    let sent = obs.len();
    let answered = obs.iter().filter(|o| o.rtt_ms.is_some()).count();
    if sent < 10 || answered * 5 > sent * 4 {
        return None;
    }
    let first = obs
        .iter()
        .map(|o| o.sent_at_seconds)
        .fold(f64::INFINITY, f64::min);
    let last = obs.iter().map(|o| o.sent_at_seconds).fold(0.0, f64::max);
    let span = (last - first).max(1e-3);
    let per_second = answered as f64 / span;
    let offered = sent as f64 / span;
    // The kernel lets a burst of 6 through, then one per second; allow some slack.
    ((answered as f64) <= 2.0 * span + 8.0 && offered > per_second * 1.5).then(|| {
        format!(
            "rate limited: {answered} of {sent} probes answered over {span:.1} s ({per_second:.2}/s answered, {offered:.1}/s sent), the pattern of ICMP rate limiting (Linux: net.ipv4.icmp_ratelimit, about 1 per second per source); fewer, slower probes to this hop help: --hop-interval 1s"
        )
    })
}

/// The step rule (`stats::step_with_evidence`) over this hop's answered probes, each size's in
/// the order they were sent, with the hops of the path sharing its false-alarm rate.
fn step_of(
    rows: &[SizeRow],
    obs: &[&Observation],
    p: &AnalysisParams,
    ttl: u8,
    hops: usize,
) -> Option<StepReport> {
    let sizes: Vec<SizeProbes> = rows
        .iter()
        .filter(|r| r.lost < r.sent)
        .map(|r| {
            let mut these: Vec<&&Observation> = obs
                .iter()
                .filter(|o| o.sent_bytes == r.sent_bytes && o.rtt_ms.is_some())
                .collect();
            these.sort_by(|a, b| a.sent_at_seconds.total_cmp(&b.sent_at_seconds));
            SizeProbes {
                sent_bytes: r.sent_bytes as f64,
                returned_bytes: r.returned_bytes as f64,
                rtts_ms: these.iter().filter_map(|o| o.rtt_ms).collect(),
            }
        })
        .collect();
    let rule = StepRule {
        family_alpha: stats::STEP_FAMILY_ALPHA,
        hops,
        confirm_alpha: stats::STEP_CONFIRM_ALPHA,
        min_jump_ms: p.min_step_ms,
        seed: p.seed ^ u64::from(ttl),
    };
    stats::step_with_evidence(&sizes, &rule).map(|s| StepReport {
        between_bytes: [s.after_bytes, s.before_bytes],
        jump_ms: (s.jump_ms + s.second_jump_ms) / 2.0,
        f_statistic: s.f_statistic,
        p_value: s.p_value,
        level: s.level,
        half_jumps_ms: [s.jump_ms, s.second_jump_ms],
    })
}

/// Analyses the probes of one hop, alone on its path.
pub fn analyze_hop(ttl: u8, obs: &[&Observation], p: &AnalysisParams) -> HopAnalysis {
    analyze_hop_among(ttl, obs, p, 1)
}

/// Analyses the probes of one hop of `hops` (who share the step rule's false-alarm rate).
fn analyze_hop_among(
    ttl: u8,
    obs: &[&Observation],
    p: &AnalysisParams,
    hops: usize,
) -> HopAnalysis {
    let mut sizes: Vec<usize> = obs.iter().map(|o| o.sent_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for &size in &sizes {
        let these: Vec<&&Observation> = obs.iter().filter(|o| o.sent_bytes == size).collect();
        let rtts: Vec<f64> = these.iter().filter_map(|o| o.rtt_ms).collect();
        if rtts.is_empty() {
            rows.push(SizeRow {
                sent_bytes: size,
                returned_bytes: 0,
                sent: these.len(),
                lost: these.len(),
                min_rtt_ms: f64::NAN,
                median_rtt_ms: f64::NAN,
                lower_half_rtt_ms: f64::NAN,
                residual_ms: f64::NAN,
            });
            continue;
        }
        let mut returned: Vec<usize> = these
            .iter()
            .filter(|o| o.rtt_ms.is_some())
            .map(|o| o.returned_bytes)
            .collect();
        returned.sort_unstable();
        let returned = returned[returned.len() / 2];
        rows.push(SizeRow {
            sent_bytes: size,
            returned_bytes: returned,
            sent: these.len(),
            lost: these.len() - rtts.len(),
            min_rtt_ms: rtts.iter().copied().fold(f64::INFINITY, f64::min),
            median_rtt_ms: stats::median(&rtts),
            lower_half_rtt_ms: stats::lower_half_mean(&rtts),
            residual_ms: f64::NAN,
        });
        groups.push(Group {
            x: (size + returned) as f64,
            ys: rtts,
        });
    }
    let total = obs.len();
    let lost = obs.iter().filter(|o| o.rtt_ms.is_none()).count();
    let limited = rate_limit(obs);
    let mut out = HopAnalysis {
        ttl,
        sizes: Vec::new(),
        loss_fraction: if total > 0 {
            lost as f64 / total as f64
        } else {
            0.0
        },
        fit: None,
        no_fit_reason: None,
        rate_limit: limited.clone(),
        increment: None,
    };
    let xs: Vec<f64> = groups.iter().map(|g| g.x).collect();
    let mins: Vec<f64> = groups
        .iter()
        .map(|g| g.ys.iter().copied().fold(f64::INFINITY, f64::min))
        .collect();
    let thin = groups.iter().filter(|g| g.ys.len() < 2).count();
    if limited.is_some() && thin * 2 > groups.len() {
        out.no_fit_reason =
            Some("not fitted: rate limiting left fewer than 2 answers for most sizes".to_string());
        out.sizes = rows;
        return out;
    }
    // The plane's slopes from each size's lower half, its fixed cost from the minimums
    // (`perhop::through_floor`): a hop's own per byte is a difference of two such slopes, and
    // minimums, one lucky probe per size, made it move by more than its tolerance from run to
    // run (issue 31).
    let answered = || rows.iter().filter(|r| r.lost < r.sent);
    let point = |r: &SizeRow, y: f64| (r.sent_bytes as f64, r.returned_bytes as f64, y);
    let slope_points: Vec<(f64, f64, f64)> =
        answered().map(|r| point(r, r.lower_half_rtt_ms)).collect();
    let floor_points: Vec<(f64, f64, f64)> = answered().map(|r| point(r, r.min_rtt_ms)).collect();
    let plane = perhop::fit_rtt_line(&slope_points)
        .map(|(line, how)| (perhop::through_floor(line, &floor_points), how));
    match (stats::least_squares(&xs, &mins), plane) {
        (Err(e), _) => out.no_fit_reason = Some(format!("not fitted: {e}")),
        (Ok(_), None) => out.no_fit_reason = Some("not fitted: too few sizes".to_string()),
        (Ok(fit), Some((rtt_line, separation))) => {
            for (row, g) in rows.iter_mut().filter(|r| r.lost < r.sent).zip(&groups) {
                row.residual_ms = row.min_rtt_ms - fit.line.at(g.x);
            }
            let one_way = |l: stats::Line| Cost::new(l.intercept / 2.0, l.slope);
            out.fit = Some(HopFit {
                rtt_intercept_ms: fit.line.intercept,
                rtt_slope_ms_per_byte: fit.line.slope,
                one_way: one_way(fit.line),
                r_squared: fit.r_squared,
                residual_std_ms: fit.residual_std,
                bootstrap: stats::bootstrap(&groups, p.bootstrap_replicates, p.confidence, p.seed)
                    .ok()
                    .map(to_one_way),
                split_half: stats::split_half(&groups)
                    .ok()
                    .map(|s| to_one_way(s.intervals())),
                theil_sen: stats::theil_sen(&xs, &mins).ok().map(one_way),
                least_median_of_squares: stats::least_median_of_squares(&xs, &mins)
                    .ok()
                    .map(one_way),
                // Tested over the plane where sent and returned bytes separate (past the quote
                // limit a router's answer stops growing, which bends a line in bytes crossed),
                // against the largest F a path without a step gives, and again in the second
                // half of the probes (issue 31).
                step: step_of(&rows, obs, p, ttl, hops),
                rtt_line,
                separation,
                time_blocks: None,
            });
        }
    }
    out.sizes = rows;
    out
}

/// Time blocks at most that the probes are split into for the intervals: 8 blocks of a default
/// run's 32 probes per size leave 4 probes a size in each (enough for a minimum that is often
/// near the floor), and 7 degrees of freedom for the spread (t = 2.36 at 95%).
pub const TIME_BLOCKS: usize = 8;

/// Analyses every hop, in TTL order, and differences consecutive fitted hops. The first hop is
/// differenced against `host`, the sending host's own line (the seed's roc: echoes to its own
/// loopback) when given, else against nothing. Each fitted hop then gets random-group
/// intervals ([`time_blocks`]) of its line and its own cost.
pub fn analyze(obs: &[Observation], p: &AnalysisParams, host: Option<Cost>) -> Vec<HopAnalysis> {
    let mut hops = analyze_whole(obs, p, host);
    let blocks = time_blocks(obs);
    if blocks.len() < 3 {
        return hops;
    }
    // The blocks need no bootstrap of their own: one replicate is the least `bootstrap` does.
    let quick = AnalysisParams {
        bootstrap_replicates: 0,
        ..*p
    };
    let parts: Vec<Vec<HopAnalysis>> = blocks
        .iter()
        .map(|b| analyze_whole(b, &quick, host))
        .collect();
    for hop in &mut hops {
        add_block_intervals(hop, &parts, p.confidence, host.is_some());
    }
    mark_echoes_that_mix_directions(&mut hops);
    hops
}

/// Marks the echo hops whose own per byte cannot be read as the bytes sent.
///
/// An echo returns what it is sent, so its round trip is one line in bytes crossed whose slope
/// is the mean of the path's per byte out (`u`) and back (`v`), while the router before it was
/// fitted as a plane with the two apart. Their difference is the echo hop's own per byte sent
/// only when `u = v` at the echo, that is when the path returns bytes at the cost it sends
/// them. Where the previous router's answer per byte (`v - u` of its plane) is apart from zero
/// beyond its interval, it is not: that figure is the path's difference between directions
/// (links with other rates each way) plus the router's own answer cost, and one end cannot
/// tell those apart (`perhop`'s module docs), so neither can it correct the echo's slope. On
/// 60 saved runs of random labs, 20 of the 25 echo hops off by more than 2% and 30 us over the
/// sizes' span were behind a link with other rates each way, and this marks 15 of them (four
/// of the others had it on the last link alone, where no one-ended probe can see it).
fn mark_echoes_that_mix_directions(hops: &mut [HopAnalysis]) {
    for i in 1..hops.len() {
        let (before, rest) = hops.split_at_mut(i);
        let hop = &mut rest[0];
        let echo = hop
            .fit
            .as_ref()
            .is_some_and(|f| f.separation == Separation::Echo);
        let Some(inc) = hop.increment.as_mut() else {
            continue;
        };
        if !echo || inc.from_ttl == 0 {
            continue;
        }
        let Some(prev) = before.iter().find(|h| h.ttl == inc.from_ttl) else {
            continue;
        };
        let separated = prev
            .fit
            .as_ref()
            .is_some_and(|f| f.separation == Separation::Separated);
        let Some(answer) = prev
            .increment
            .as_ref()
            .and_then(|i| i.intervals)
            .map(|iv| iv.answer_per_byte_ms)
        else {
            continue;
        };
        if !separated || (answer.low <= 0.0 && answer.high >= 0.0) {
            continue;
        }
        inc.per_byte_mixes_directions = true;
        // A link rate read from a mixed slope would be a rate of no link.
        inc.implied_bits_per_second = None;
        let note = format!(
            "per byte not separable from one end: this hop echoes, so its line has one slope for the bytes sent and returned, and hop {} returns bytes at another cost than it sends them ({:.6} .. {:.6} ms/byte: links with other rates each way, or that router's answer cost); a hop that answers with a time exceeded separates them",
            inc.from_ttl, answer.low, answer.high
        );
        inc.caveat = Some(match inc.caveat.take() {
            Some(c) => format!("{c}; {note}"),
            None => note,
        });
    }
}

/// The probes split into independent time blocks: each hop's probes of each size, in the order
/// they were sent, cut into as many consecutive runs as the sparsest size allows (at most
/// [`TIME_BLOCKS`]); block `j` holds the `j`-th run of every size of every hop, so it is one
/// stretch of the run's time when the schedule goes round the sizes and hops. Blocks apart in
/// time see the load and the path drift as a repeated run would, which is what the intervals
/// must cover (probes interleaved one by one would share every slow change and look alike).
pub fn time_blocks(obs: &[Observation]) -> Vec<Vec<Observation>> {
    let mut groups: std::collections::BTreeMap<(u8, usize), Vec<&Observation>> =
        std::collections::BTreeMap::new();
    for o in obs {
        groups.entry((o.ttl, o.sent_bytes)).or_default().push(o);
    }
    let k = groups
        .values()
        .map(Vec::len)
        .min()
        .unwrap_or(0)
        .min(TIME_BLOCKS);
    if k < 3 {
        return Vec::new();
    }
    let mut blocks = vec![Vec::new(); k];
    for group in groups.values_mut() {
        group.sort_by(|a, b| a.sent_at_seconds.total_cmp(&b.sent_at_seconds));
        let n = group.len();
        for (rank, o) in group.iter().enumerate() {
            blocks[rank * k / n].push(**o);
        }
    }
    blocks
}

/// Sets the random-group intervals of `hop`'s line and own cost from the same hop in each
/// block's analysis (a block counts for the own cost only when it differences the hop against
/// the same previous hop, with the same separation of sent and returned bytes), and judges the
/// own cost's caveat by them.
fn add_block_intervals(
    hop: &mut HopAnalysis,
    parts: &[Vec<HopAnalysis>],
    confidence: f64,
    host_subtracted: bool,
) {
    let Some(fit) = hop.fit.as_mut() else {
        return;
    };
    let same: Vec<&HopAnalysis> = parts
        .iter()
        .filter_map(|p| p.iter().find(|h| h.ttl == hop.ttl))
        .collect();
    let fits: Vec<&HopFit> = same.iter().filter_map(|h| h.fit.as_ref()).collect();
    let line = |f: fn(&HopFit) -> f64, full: f64| {
        random_group_interval(
            full,
            &fits.iter().map(|x| f(x)).collect::<Vec<_>>(),
            confidence,
        )
    };
    if let (Some(fixed_ms), Some(per_byte_ms)) = (
        line(|f| f.one_way.fixed_ms, fit.one_way.fixed_ms),
        line(|f| f.one_way.per_byte_ms, fit.one_way.per_byte_ms),
    ) {
        fit.time_blocks = Some(TimeBlockIntervals {
            blocks: fits.len(),
            confidence,
            fixed_ms,
            per_byte_ms,
        });
    }
    let separation = fit.separation;
    let Some(inc) = hop.increment.as_mut() else {
        return;
    };
    let own: Vec<&Increment> = same
        .iter()
        .filter(|h| h.fit.as_ref().is_some_and(|f| f.separation == separation))
        .filter_map(|h| h.increment.as_ref())
        .filter(|i| i.from_ttl == inc.from_ttl)
        .collect();
    let interval = |f: fn(&Increment) -> f64, full: f64| {
        random_group_interval(
            full,
            &own.iter().map(|x| f(x)).collect::<Vec<_>>(),
            confidence,
        )
    };
    if let (Some(fixed_ms), Some(per_byte_ms), Some(answer_per_byte_ms)) = (
        interval(|i| i.cost.fixed_ms, inc.cost.fixed_ms),
        interval(|i| i.cost.per_byte_ms, inc.cost.per_byte_ms),
        interval(|i| i.answer_per_byte_ms, inc.answer_per_byte_ms),
    ) {
        let intervals = OwnCostIntervals {
            blocks: own.len(),
            confidence,
            fixed_ms,
            per_byte_ms,
            answer_per_byte_ms,
        };
        inc.intervals = Some(intervals);
        if inc.from_ttl != 0 || !host_subtracted {
            inc.caveat = own_cost_caveat(&intervals, inc.from_ttl);
        }
    }
}

/// What an own cost's intervals say about trusting it: a per-byte cost the run cannot tell
/// from zero, or a difference negative beyond the noise.
pub(crate) fn own_cost_caveat(iv: &OwnCostIntervals, from_ttl: u8) -> Option<String> {
    let mut notes = Vec::new();
    if from_ttl == 0 {
        notes.push("from this host: includes the host's own sending and receiving cost (probe 127.0.0.1 or ::1 for it, as the seed's roc)".to_string());
    }
    let (pb, fx) = (iv.per_byte_ms, iv.fixed_ms);
    if pb.high < 0.0 {
        notes.push(format!("per-byte difference negative beyond the noise ({:.6} .. {:.6} ms/byte): the previous hop answers more slowly per byte than this one (ICMP errors generated in a slow path, or a different return route)", pb.low, pb.high));
    } else if pb.low <= 0.0 {
        notes.push(format!("per-byte difference within the noise ({:.6} .. {:.6} ms/byte): below what this run resolves; more probes or larger sizes narrow it", pb.low, pb.high));
    }
    if fx.high < 0.0 {
        notes.push(format!("fixed difference negative beyond the noise ({:.4} .. {:.4} ms): the previous hop takes longer to answer than this one to forward and answer", fx.low, fx.high));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// [`analyze`] without the intervals of the time blocks: one analysis of `obs` whole.
pub(crate) fn analyze_whole(
    obs: &[Observation],
    p: &AnalysisParams,
    host: Option<Cost>,
) -> Vec<HopAnalysis> {
    let mut ttls: Vec<u8> = obs.iter().map(|o| o.ttl).collect();
    ttls.sort_unstable();
    ttls.dedup();
    let mut hops: Vec<HopAnalysis> = ttls
        .iter()
        .map(|&ttl| {
            let these: Vec<&Observation> = obs.iter().filter(|o| o.ttl == ttl).collect();
            analyze_hop_among(ttl, &these, p, ttls.len())
        })
        .collect();
    let mut prev: Option<(u8, HopFit)> = None;
    for hop in &mut hops {
        let Some(fit) = hop.fit.clone() else {
            continue;
        };
        let (from_ttl, before, before_iv) = match &prev {
            Some((t, f)) => (*t, f.rtt_line, f.bootstrap),
            None => (0, RttLine::echo(host.unwrap_or_default()), None),
        };
        let own = perhop::own_costs(&[before, fit.rtt_line])[1];
        let cost = own.cost();
        let caveat = increment_caveat(cost, fit.bootstrap, before_iv, from_ttl, host.is_some());
        hop.increment = Some(Increment {
            from_ttl,
            cost,
            answer_per_byte_ms: own.answer_per_byte_ms,
            implied_bits_per_second: cost.implied_bits_per_second(),
            caveat,
            intervals: None,
            per_byte_mixes_directions: false,
            per_byte_from: crate::destination::PerByteSeries::Probes,
        });
        prev = Some((hop.ttl, fit));
    }
    hops
}

/// Says when a difference is within the noise or negative beyond it, instead of clipping it.
fn increment_caveat(
    cost: Cost,
    now: Option<LineIntervals>,
    before: Option<LineIntervals>,
    from_ttl: u8,
    host_subtracted: bool,
) -> Option<String> {
    if from_ttl == 0 && host_subtracted {
        return Some(
            "from this host's loopback line (the seed's roc): the first link's serialization and the hop's own cost together".into(),
        );
    }
    if from_ttl == 0 {
        return Some(
            "from this host: includes the host's own sending and receiving cost (probe 127.0.0.1 or ::1 for it, as the seed's roc)".into(),
        );
    }
    let (Some(a), Some(b)) = (now, before) else {
        return (cost.per_byte_ms < 0.0 || cost.fixed_ms < 0.0)
            .then(|| "negative difference; no interval to judge it by".to_string());
    };
    let pb_lo = a.slope.low - b.slope.high;
    let pb_hi = a.slope.high - b.slope.low;
    let fx_lo = a.intercept.low - b.intercept.high;
    let fx_hi = a.intercept.high - b.intercept.low;
    let mut notes = Vec::new();
    if pb_hi < 0.0 {
        notes.push(format!("per-byte difference negative beyond the noise ({pb_lo:.6} .. {pb_hi:.6} ms/byte): the previous hop answers more slowly per byte than this one (ICMP errors generated in a slow path, or a different return route)"));
    } else if pb_lo <= 0.0 {
        notes.push(format!("per-byte difference within the noise ({pb_lo:.6} .. {pb_hi:.6} ms/byte): the link is faster than this run can resolve; more probes or larger sizes narrow it"));
    }
    if fx_hi < 0.0 {
        notes.push(format!("fixed difference negative beyond the noise ({fx_lo:.4} .. {fx_hi:.4} ms): the previous hop takes longer to answer than this one to forward and answer"));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}
