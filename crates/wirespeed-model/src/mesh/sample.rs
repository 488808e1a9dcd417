//! A sampled mesh: a seeded random choice of N ordered pairs of a fleet, for fleets whose full
//! mesh is out of reach (`mesh --pairs N --seed S`, issue 36).
//!
//! A uniform draw of N pairs from the N(N-1) would put some agents in many tests and others
//! in none, and pairs that share an agent cannot run together, so the draw would take more
//! slots than its size needs and leave hosts unmeasured. The sample is drawn instead from the
//! structure the full mesh is scheduled by ([`super::circle_rounds`]): the agents are relabelled
//! by a seeded permutation, the circle method's rounds are taken in a seeded order, each played
//! forward then back as [`super::tournament`] plays it, and pairs are taken round by round until
//! N. Every round is a matching, so no agent is in two tests at once, the sample runs in
//! ceil(N / floor(n/2)) rounds, and when N is P x (n - n mod 2) it is exactly the P-partner
//! sample whose cost [`super::sampled_mesh_scale`] gives: every agent sends to and receives from
//! P others. Every agent is a source and a destination once N reaches [`covering_pairs`]: the
//! first round both ways for n even; for n odd, whose rounds each leave one agent out (its bye,
//! a different agent in each round), the first two rounds both ways.
//!
//! The draw is SplitMix64 ([`crate::stats::SplitMix64`]) from the seed alone, so the same seed
//! and fleet size give the same pairs on any machine and in any version that keeps this
//! construction; the seed is part of the mesh's plan, so a resumed mesh runs the same sample.

use super::{ControllerMemory, MeshScale, Pair, TestTiming, full_mesh_rounds};
use crate::stats::SplitMix64;

/// Round `r` (from 0) of the circle method for `n` agents, as [`super::circle_rounds`] draws
/// it, without building the others: position 0 fixed, the other m-1 positions rotated `r`
/// steps (m = n, or n + 1 with a bye for n odd), position i meeting position m-1-i.
pub fn circle_round(n: usize, r: usize) -> Vec<Pair> {
    if n < 2 {
        return Vec::new();
    }
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    let at = |j: usize| {
        if j == 0 {
            0
        } else {
            // The original 1..m-1 rotated right by r.
            1 + (j - 1 + (m - 1) - r % (m - 1)) % (m - 1)
        }
    };
    (0..m / 2)
        .filter_map(|i| {
            let (a, b) = (at(i), at(m - 1 - i));
            (a < n && b < n).then(|| (a.min(b), a.max(b)))
        })
        .collect()
}

/// The smallest sample in which every agent of `n` is a source and a destination: the first
/// round played both ways for n even (n pairs), the first two for n odd (2(n-1) pairs); 0
/// below 2 agents.
pub fn covering_pairs(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        n if n.is_multiple_of(2) => n,
        n => 2 * (n - 1),
    }
}

/// The ordered rounds of a sample of `pairs` ordered pairs of `0..n` drawn from `seed` (the
/// module's construction): every round a matching, every pair distinct, the last round
/// possibly partial; all n(n-1) pairs (in a seeded order) when `pairs` is at least that.
pub fn sampled_rounds(n: usize, pairs: usize, seed: u64) -> Vec<Vec<Pair>> {
    if n < 2 || pairs == 0 {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(seed);
    let mut label: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut label);
    let unordered = full_mesh_rounds(n) / 2;
    let mut order: Vec<usize> = (0..unordered).collect();
    rng.shuffle(&mut order);
    let mut left = pairs.min(n * (n - 1));
    let mut out = Vec::new();
    for (k, &r) in order.iter().enumerate() {
        if left == 0 {
            break;
        }
        let forward: Vec<Pair> = circle_round(n, r)
            .into_iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let (a, b) = (label[a], label[b]);
                if (k + i) % 2 == 0 { (a, b) } else { (b, a) }
            })
            .collect();
        let back: Vec<Pair> = forward.iter().map(|&(a, b)| (b, a)).collect();
        for mut round in [forward, back] {
            if left == 0 {
                break;
            }
            round.truncate(left);
            left -= round.len();
            out.push(round);
        }
    }
    out
}

/// What a sample of `pairs` ordered pairs of `n` agents costs ([`sampled_rounds`] at
/// `concurrency` tests per agent): ceil(pairs / floor(n/2)) rounds, merged `concurrency` to a
/// slot. Equal to [`super::sampled_mesh_scale`] for P partners when `pairs` is P x (n - n mod
/// 2), and to [`super::full_mesh_scale`] from n(n-1) pairs on.
pub fn sampled_pairs_scale(
    n: usize,
    pairs: usize,
    concurrency: usize,
    timing: &TestTiming,
    memory: &ControllerMemory,
) -> MeshScale {
    let all = n * n.saturating_sub(1);
    if pairs >= all {
        return super::full_mesh_scale(n, concurrency, timing, memory);
    }
    let per_round = n / 2;
    let rounds = pairs.div_ceil(per_round.max(1));
    let slots = rounds.div_ceil(concurrency.max(1)) as u64;
    MeshScale {
        agents: n,
        tests: pairs as u64,
        slots,
        seconds: slots as f64 * timing.per_test_seconds(),
        controller_bytes: memory.base_bytes + memory.per_test_bytes * pairs as f64,
    }
}
