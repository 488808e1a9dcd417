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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    const P: AnalysisParams = AnalysisParams {
        bootstrap_replicates: 20,
        confidence: 0.95,
        seed: 5,
        min_step_ms: 0.005,
    };

    /// One router then the destination, probed as `probe --hops --udp` does (rounds over
    /// every series and size, 16 sizes from 80 to 1500 bytes, 32 probes each): link 1 costs
    /// `out[0]` a byte going out and `back[0]` coming back, link 2 `out[1]` and `back[1]`;
    /// the router quotes at most 576 bytes, the destination echoes ICMP in its kernel and the
    /// agent answers 20 us later (its wake-up) with the whole echo or a 60-byte short reply.
    /// Every probe queues an exponential delay of mean 30 us above its floor.
    /// Returns (ICMP observations, agent observations).
    fn two_hops(out: [f64; 2], back: [f64; 2], seed: u64) -> (Vec<Observation>, Vec<Observation>) {
        let fixed = [0.3, 0.2];
        let mut rng = SplitMix64::new(seed);
        let sizes: Vec<usize> = (0..16).map(|i| 80 + (1500 - 80) * i / 15).collect();
        let (mut icmp, mut agent) = (Vec::new(), Vec::new());
        let mut t = 0.0;
        for _ in 0..32 {
            // 0, 1: ICMP to the router and the destination; 2, 3: the agent's echo and short.
            for series in 0..4 {
                let mut order = sizes.clone();
                rng.shuffle(&mut order);
                for size in order {
                    let k = series.min(1);
                    let returned = match series {
                        0 => size.min(548) + 28,
                        3 => 60,
                        _ => size,
                    };
                    let u: f64 = out[..=k].iter().sum();
                    let v: f64 = back[..=k].iter().sum();
                    let f: f64 = fixed[..=k].iter().sum();
                    let turnaround = if series >= 2 { 0.020 } else { 0.0 };
                    let queue = -0.03 * (1.0 - rng.next_f64()).ln();
                    t += 0.002;
                    let o = Observation {
                        ttl: (k + 1) as u8,
                        sent_bytes: size,
                        returned_bytes: returned,
                        rtt_ms: Some(
                            2.0 * f + u * size as f64 + v * returned as f64 + turnaround + queue,
                        ),
                        sent_at_seconds: t,
                    };
                    if series >= 2 {
                        agent.push(o);
                    } else {
                        icmp.push(o);
                    }
                }
            }
        }
        (icmp, agent)
    }

    /// Issue 31: behind a first link that returns bytes at half the rate it sends them, the
    /// destination's echo alone mixes the two directions and is marked not separable; with the
    /// agent's short replies its per byte sent is within 2% of the second link's, its per byte
    /// returned (answer) within 5% of the first link's extra cost back, its fixed cost within
    /// 30 us of the configured (the agent's turnaround kept out), and the intervals hold them.
    #[test]
    fn short_replies_separate_a_path_slower_back_than_out() {
        let (out, back) = ([0.0008, 0.0008], [0.0016, 0.0008]);
        for seed in 1..=5 {
            let (icmp, agent) = two_hops(out, back, seed);
            let alone = bestcase::analyze(&icmp, &P, None);
            let echo = alone[1].increment.as_ref().unwrap();
            assert!(echo.per_byte_mixes_directions, "seed {seed}: {echo:?}");
            assert_eq!(echo.per_byte_from, PerByteSeries::Probes);
            let hops = analyze_with_agent(&icmp, &agent, &P, None);
            let dest = hops[1].increment.as_ref().unwrap();
            let fit = hops[1].fit.as_ref().unwrap();
            assert_eq!(fit.separation, Separation::Separated);
            assert!(!dest.per_byte_mixes_directions);
            assert_eq!(dest.per_byte_from, PerByteSeries::AgentShortReplies);
            assert!(
                (dest.cost.per_byte_ms / out[1] - 1.0).abs() < 0.02,
                "seed {seed}: per byte {} against {}",
                dest.cost.per_byte_ms,
                out[1]
            );
            let answer = back[0] - out[0];
            assert!(
                (dest.answer_per_byte_ms / answer - 1.0).abs() < 0.05,
                "seed {seed}: answer {} against {answer}",
                dest.answer_per_byte_ms
            );
            assert!(
                (dest.cost.fixed_ms - 0.2).abs() < 0.030,
                "seed {seed}: fixed {}",
                dest.cost.fixed_ms
            );
            let iv = dest.intervals.expect("8 blocks");
            assert_eq!(iv.blocks, 8);
            assert!(iv.per_byte_ms.width() > 0.0);
            assert!(dest.caveat.is_none(), "{:?}", dest.caveat);
            // The router before it is untouched.
            assert_eq!(hops[0], alone[0]);
        }
    }

    /// The same path with the same rate each way: the agent's figures agree with the echo's
    /// (per byte 0.8 us, nothing returned at another cost).
    #[test]
    fn short_replies_agree_with_the_echo_on_an_even_path() {
        let (icmp, agent) = two_hops([0.0008, 0.0008], [0.0008, 0.0008], 9);
        let alone = bestcase::analyze(&icmp, &P, None);
        let hops = analyze_with_agent(&icmp, &agent, &P, None);
        let (a, b) = (
            alone[1].increment.as_ref().unwrap(),
            hops[1].increment.as_ref().unwrap(),
        );
        assert!((a.cost.per_byte_ms / 0.0008 - 1.0).abs() < 0.02, "{a:?}");
        assert!((b.cost.per_byte_ms / 0.0008 - 1.0).abs() < 0.02, "{b:?}");
        assert!(b.answer_per_byte_ms.abs() < 0.05 * 0.0008, "{b:?}");
    }

    /// A hostile or useless agent series changes nothing: none at all, only whole echoes (no
    /// short reply answered, so nothing separates), or one size.
    #[test]
    fn an_agent_series_that_cannot_separate_leaves_the_analysis_alone() {
        let (icmp, agent) = two_hops([0.0008, 0.0008], [0.0016, 0.0008], 3);
        let alone = bestcase::analyze(&icmp, &P, None);
        assert_eq!(analyze_with_agent(&icmp, &[], &P, None), alone);
        let echoes: Vec<Observation> = agent
            .iter()
            .copied()
            .filter(|o| o.returned_bytes == o.sent_bytes)
            .collect();
        assert_eq!(analyze_with_agent(&icmp, &echoes, &P, None), alone);
        let one_size: Vec<Observation> = agent
            .iter()
            .copied()
            .filter(|o| o.sent_bytes == 80)
            .collect();
        assert_eq!(analyze_with_agent(&icmp, &one_size, &P, None), alone);
        let lost: Vec<Observation> = agent
            .iter()
            .map(|o| Observation { rtt_ms: None, ..*o })
            .collect();
        assert_eq!(analyze_with_agent(&icmp, &lost, &P, None), alone);
    }
}
