//! How long to probe: the rounds of each address family planned from the path's configured
//! round trips (more behind a slow line, until the even and the odd rounds agree on a path of
//! fast hops), within a budget, and why a run's rounds ended before they agreed.

use std::time::Duration;

use wirespeed_lab::truth::ChainHop;

use super::{
    DENSE_PER_SIZE, LONGEST_BUDGET, MAX_ROUNDS, MIN_ROUNDS, ROUND_OVERHEAD, ROUNDS, ROUNDS_BUDGET,
    SIZES, SLOW_SIZES, SPARSE_PER_SIZE,
};

/// The sizes of a list such as [`SIZES`], IP bytes.
#[doc(hidden)]
pub fn sizes_of(list: &str) -> Vec<f64> {
    list.split(',').filter_map(|s| s.parse().ok()).collect()
}

/// The configured time of one probe pass, seconds: every hop `..hops` of `chain` probed
/// `per_size` times at each of `sizes`, stop and wait (`wirespeed_net::probe`): the sum of
/// their configured round trips (a router answers a time exceeded quoting at most 548 bytes,
/// the destination an echo of the same size).
#[doc(hidden)]
pub fn pass_seconds(chain: &[ChainHop], hops: usize, sizes: &[f64], per_size: f64) -> f64 {
    let ms: f64 = chain[..hops]
        .iter()
        .map(|h| {
            sizes
                .iter()
                .map(|&s| {
                    let returned = if h.router { s.min(548.0) + 28.0 } else { s };
                    h.line.at(s, returned)
                })
                .sum::<f64>()
        })
        .sum();
    ms * per_size / 1e3
}

/// Rounds for a path with hops behind a slow line (issue 21): as many as fit in `left` of the
/// budget, each round's time being what the configured lines say one round of the real chain
/// and one of its twin take (the hops `..dense` densely at [`SIZES`], then every hop once at
/// [`SLOW_SIZES`]), at least [`ROUNDS`] and at most [`MAX_ROUNDS`]. A slow line's rate, not
/// a constant, sets it: the seed's 56 kbit/s DS0 leaves room for about twelve rounds in
/// 40 s, a line half as fast for half as many. The loop still stops when a round it has
/// measured says the next would overrun the budget (a loaded machine).
#[doc(hidden)]
pub fn rounds_behind_slow_line(
    chain: &[ChainHop],
    twin: &[ChainHop],
    dense: usize,
    left: Duration,
) -> usize {
    let per_size = |n: &str| n.parse::<f64>().unwrap_or(1.0);
    let round = |c: &[ChainHop]| {
        pass_seconds(c, dense, &sizes_of(SIZES), per_size(DENSE_PER_SIZE))
            + pass_seconds(c, c.len(), &sizes_of(SLOW_SIZES), per_size(SPARSE_PER_SIZE))
    };
    let seconds = round(chain) + round(twin);
    if seconds.is_nan() || seconds <= 0.0 {
        return MAX_ROUNDS;
    }
    ((left.as_secs_f64() / seconds).floor() as usize).clamp(ROUNDS, MAX_ROUNDS)
}

/// How many rounds to probe one address family, and for how long at most, from the path's
/// configured round trips.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct RoundPlan {
    /// Fewest rounds before the even and the odd rounds are compared (`settled`).
    pub least: usize,
    /// Most rounds.
    pub most: usize,
    /// No round starts that would end after this much probing of the family.
    pub budget: Duration,
    /// One round of both labs by the configured round trips, seconds.
    pub round_seconds: f64,
}

/// The plan of rounds for one address family (issue 31: the budget comes from the path). One
/// round of both labs takes what their configured round trips say (the hops `..dense`
/// probed densely at [`SIZES`], and, if a slow line follows, every hop once at
/// [`SLOW_SIZES`]), times [`ROUND_OVERHEAD`]. A path of fast hops gets [`MIN_ROUNDS`] to
/// [`MAX_ROUNDS`] and a budget that fits the most of them, at least [`ROUNDS_BUDGET`]; a path
/// behind a slow line the rounds that fit in [`ROUNDS_BUDGET`] ([`rounds_behind_slow_line`]),
/// but no fewer than [`MIN_ROUNDS`], and a budget that fits them. No budget exceeds
/// [`LONGEST_BUDGET`]; a path too slow for its rounds in it gets fewer, and says so.
///
/// A budget the user `asked` for (`-t`) replaces the planned one: a path of fast hops gets
/// the rounds that fit in it (still until the even and the odd rounds agree, at most
/// [`MAX_ROUNDS`]), a path behind a slow line the rounds its configured lines fit in it, at
/// least [`ROUNDS`] (the loop stops earlier if a measured round says the next would overrun
/// it, and the method says so).
#[doc(hidden)]
pub fn plan_rounds(
    chain: &[ChainHop],
    twin: &[ChainHop],
    dense: usize,
    asked: Option<Duration>,
) -> RoundPlan {
    let per_size = |n: &str| n.parse::<f64>().unwrap_or(1.0);
    let round = |c: &[ChainHop]| {
        let slow = if dense < c.len() {
            pass_seconds(c, c.len(), &sizes_of(SLOW_SIZES), per_size(SPARSE_PER_SIZE))
        } else {
            0.0
        };
        pass_seconds(c, dense, &sizes_of(SIZES), per_size(DENSE_PER_SIZE)) + slow
    };
    let round_seconds = round(chain) + round(twin);
    let per_round = if round_seconds.is_finite() && round_seconds > 0.0 {
        round_seconds * ROUND_OVERHEAD
    } else {
        0.0
    };
    let budget_for = |rounds: usize| {
        Duration::from_secs_f64(rounds as f64 * per_round)
            .max(ROUNDS_BUDGET)
            .min(LONGEST_BUDGET)
    };
    let fit_in = |budget: Duration| {
        if per_round > 0.0 {
            ((budget.as_secs_f64() / per_round).floor() as usize).max(1)
        } else {
            MAX_ROUNDS
        }
    };
    let fit_in_longest = fit_in(LONGEST_BUDGET);
    let (least, most, budget) = if let Some(budget) = asked {
        if dense == chain.len() {
            let most = MAX_ROUNDS.min(fit_in(budget));
            (MIN_ROUNDS.min(most), most, budget)
        } else {
            let planned = rounds_behind_slow_line(chain, twin, dense, budget);
            (planned, planned, budget)
        }
    } else if dense == chain.len() {
        let most = MAX_ROUNDS.min(fit_in_longest);
        (MIN_ROUNDS.min(most), most, budget_for(MAX_ROUNDS))
    } else {
        let planned = rounds_behind_slow_line(chain, twin, dense, ROUNDS_BUDGET)
            .max(MIN_ROUNDS)
            .min(fit_in_longest);
        (planned, planned, budget_for(planned))
    };
    RoundPlan {
        least,
        most,
        budget,
        round_seconds,
    }
}

/// Why the rounds of a path of fast hops ended before the even and the odd rounds agreed, in
/// what was measured: whether the budget or the most rounds ended them, the machine's load
/// average, and a round's time against the configured one. "Loaded" only when the load
/// average reaches the number of cores (issue 31: every run said "too loaded", also at load
/// 0.3).
#[doc(hidden)]
pub fn unsettled_reason(
    rounds: usize,
    plan: &RoundPlan,
    by_budget: bool,
    round_seconds: f64,
    (load, cores): (f64, usize),
) -> String {
    let ended = if by_budget {
        format!(
            "the {:.0} s budget ended them after {rounds}",
            plan.budget.as_secs_f64()
        )
    } else {
        format!("after the most planned, {rounds}")
    };
    let round = format!(
        "a round took {round_seconds:.1} s, {:.1} s by the configured round trips",
        plan.round_seconds
    );
    if !load.is_finite() {
        format!(
            "the even and the odd rounds still disagreed {ended} (load average not readable; {round}): the rows carry that spread"
        )
    } else if load >= cores as f64 {
        format!(
            "the even and the odd rounds still disagreed {ended}: the machine was loaded (load average {load:.1} on {cores} cores; {round}): the rows carry that spread"
        )
    } else {
        format!(
            "the even and the odd rounds still disagreed {ended} at load average {load:.1} on {cores} cores ({round}): the rows carry the rounds' own spread"
        )
    }
}
