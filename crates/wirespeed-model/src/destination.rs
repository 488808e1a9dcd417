//! The destination's own per byte, each direction apart, from an agent's echoes and short
//! replies (`probe --hops --udp`, issue 31).
//!
//! A destination that echoes returns what it is sent, so its round trips lie on one line in
//! bytes crossed whose slope is the mean of the path's per byte out (`u`) and back (`v`).
//! Behind a path that returns bytes at another cost than it sends them (links with other rates
//! each way, or a router's answer cost) its own per byte sent, `u_k - u_{k-1}`, cannot be read
//! from that line ([`crate::bestcase::Increment::per_byte_mixes_directions`]). A wirespeed
//! agent on the destination answers two series beside the ICMP probes: its whole echo (bytes
//! returned = bytes sent) and a short reply of constant size. Together they are a plane
//! `c + u S + v Q` with `S` and `Q` apart, as a router's time exceeded is past its quote limit,
//! and without that limit: every size to the path MTU separates them, on IPv6 as on IPv4.
//!
//! The agent's answers pass through a user-space program (its wake-up and turnaround, tens of
//! microseconds), so their fixed part is not the destination's: the plane gives the slopes,
//! and the destination's fixed cost stays the kernel's ICMP echo line, drawn through that
//! echo's minimums with the agent's slopes ([`crate::perhop::through_floor`]). Its intervals
//! are over the same independent time blocks as every hop's, each block's ICMP probes and
//! agent probes analysed together.

use serde::{Deserialize, Serialize};

use crate::bestcase::{
    self, AnalysisParams, HopAnalysis, Increment, Observation, OwnCostIntervals,
};
use crate::delay::Cost;
use crate::perhop::{self, RttLine, Separation};
use crate::resample::random_group_interval;
use crate::stats;

/// Which probes measured a hop's per byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PerByteSeries {
    /// The hop's own probes: a router's time exceeded, the destination's ICMP echo.
    #[default]
    Probes,
    /// At the destination, the agent's whole echoes and short replies: its per byte sent and
    /// returned apart.
    AgentShortReplies,
}

/// The agent's plane: `u` and `v` from each (size, bytes returned)'s lower half of round
/// trips, as a hop's slopes are fitted ([`bestcase`]'s analysis). None unless the bytes
/// returned vary apart from the bytes sent (both series answered at two sizes or more).
pub fn agent_plane(agent: &[Observation]) -> Option<RttLine> {
    let mut groups: std::collections::BTreeMap<(usize, usize), Vec<f64>> =
        std::collections::BTreeMap::new();
    for o in agent {
        if let Some(rtt) = o.rtt_ms.filter(|r| r.is_finite()) {
            groups
                .entry((o.sent_bytes, o.returned_bytes))
                .or_default()
                .push(rtt);
        }
    }
    let points: Vec<(f64, f64, f64)> = groups
        .iter()
        .map(|(&(s, q), rtts)| (s as f64, q as f64, stats::lower_half_mean(rtts)))
        .collect();
    match perhop::fit_rtt_line(&points)? {
        (line, Separation::Separated) => Some(line),
        _ => None,
    }
}

/// [`bestcase::analyze`] of the ICMP probes `obs`, with the destination's per byte sent and
/// returned taken from the agent's probes `agent` (all at the destination's TTL): the
/// destination's plane gets the agent's slopes and the ICMP echo's floor, its own cost is
/// differenced from the hop before as every hop's, and its intervals come from the time
/// blocks of both series. Without agent probes, or when they do not separate the two
/// directions, the analysis is [`bestcase::analyze`]'s unchanged.
pub fn analyze_with_agent(
    obs: &[Observation],
    agent: &[Observation],
    p: &AnalysisParams,
    host: Option<Cost>,
) -> Vec<HopAnalysis> {
    let mut hops = bestcase::analyze(obs, p, host);
    let Some(ttl) = agent.first().map(|o| o.ttl) else {
        return hops;
    };
    let Some(plane) = agent_plane(agent) else {
        return hops;
    };
    if !apply(&mut hops, ttl, plane, host) {
        return hops;
    }
    let icmp_blocks = bestcase::time_blocks(obs);
    let agent_blocks = bestcase::time_blocks(agent);
    let quick = AnalysisParams {
        bootstrap_replicates: 0,
        ..*p
    };
    let Some(dest) = hops.iter_mut().find(|h| h.ttl == ttl) else {
        return hops;
    };
    let Some(inc) = dest.increment.as_mut() else {
        return hops;
    };
    // Block j of each series is the same stretch of the run: the schedule interleaves them.
    let parts: Vec<Increment> = icmp_blocks
        .iter()
        .zip(&agent_blocks)
        .filter_map(|(icmp, agent)| {
            let mut part = bestcase::analyze_whole(icmp, &quick, host);
            let plane = agent_plane(agent)?;
            apply(&mut part, ttl, plane, host).then_some(())?;
            part.into_iter()
                .find(|h| h.ttl == ttl)?
                .increment
                .filter(|i| i.from_ttl == inc.from_ttl)
        })
        .collect();
    let interval = |f: fn(&Increment) -> f64, full: f64| {
        random_group_interval(full, &parts.iter().map(f).collect::<Vec<_>>(), p.confidence)
    };
    inc.intervals = match (
        interval(|i| i.cost.fixed_ms, inc.cost.fixed_ms),
        interval(|i| i.cost.per_byte_ms, inc.cost.per_byte_ms),
        interval(|i| i.answer_per_byte_ms, inc.answer_per_byte_ms),
    ) {
        (Some(fixed_ms), Some(per_byte_ms), Some(answer_per_byte_ms)) => Some(OwnCostIntervals {
            blocks: parts.len(),
            confidence: p.confidence,
            fixed_ms,
            per_byte_ms,
            answer_per_byte_ms,
        }),
        _ => None,
    };
    inc.caveat = match inc.intervals {
        Some(iv) if inc.from_ttl != 0 || host.is_none() => {
            bestcase::own_cost_caveat(&iv, inc.from_ttl)
        }
        Some(_) => inc.caveat.take(),
        None => Some(
            "per byte from the agent's echoes and short replies, with fewer than 3 time blocks: no interval to judge it by".to_string(),
        ),
    };
    hops
}

/// Gives the hop at `ttl` the agent's slopes (its fixed cost through its ICMP echo's
/// minimums) and its own cost from the hop before; false when it has no fit or no own cost.
fn apply(hops: &mut [HopAnalysis], ttl: u8, plane: RttLine, host: Option<Cost>) -> bool {
    let Some(i) = hops.iter().position(|h| h.ttl == ttl) else {
        return false;
    };
    let (before, rest) = hops.split_at_mut(i);
    let hop = &mut rest[0];
    let floor: Vec<(f64, f64, f64)> = hop
        .sizes
        .iter()
        .filter(|r| r.lost < r.sent && r.min_rtt_ms.is_finite())
        .map(|r| (r.sent_bytes as f64, r.returned_bytes as f64, r.min_rtt_ms))
        .collect();
    let (Some(fit), Some(inc)) = (hop.fit.as_mut(), hop.increment.as_mut()) else {
        return false;
    };
    if floor.is_empty() {
        return false;
    }
    let previous = if inc.from_ttl == 0 {
        Some(RttLine::echo(host.unwrap_or_default()))
    } else {
        before
            .iter()
            .find(|h| h.ttl == inc.from_ttl)
            .and_then(|h| h.fit.as_ref())
            .map(|f| f.rtt_line)
    };
    let Some(previous) = previous else {
        return false;
    };
    let line = perhop::through_floor(plane, &floor);
    let own = perhop::own_costs(&[previous, line])[1];
    fit.rtt_line = line;
    fit.separation = Separation::Separated;
    inc.cost = own.cost();
    inc.answer_per_byte_ms = own.answer_per_byte_ms;
    inc.implied_bits_per_second = inc.cost.implied_bits_per_second();
    inc.per_byte_mixes_directions = false;
    inc.per_byte_from = PerByteSeries::AgentShortReplies;
    inc.caveat = None;
    true
}
