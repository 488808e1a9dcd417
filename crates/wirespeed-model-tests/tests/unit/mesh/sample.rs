use proptest::prelude::*;
use std::collections::BTreeSet;
use wirespeed_model::mesh::sample::*;
use wirespeed_model::mesh::{ControllerMemory, Pair, TestTiming};
use wirespeed_model::mesh::{circle_rounds, sampled_mesh_scale, slots};

const TIMING: TestTiming = TestTiming {
    tcp_seconds: 5.0,
    latency_seconds: 0.2,
    overhead_seconds: 0.2,
};
const MEMORY: ControllerMemory = ControllerMemory {
    base_bytes: 8.0 * 1048576.0,
    per_test_bytes: 3.3 * 1024.0,
};

#[test]
fn one_round_is_the_circle_methods_round() {
    for n in 0..40 {
        for (r, round) in circle_rounds(n).iter().enumerate() {
            assert_eq!(&circle_round(n, r), round, "n {n} round {r}");
        }
    }
}

#[test]
fn whole_partners_cost_what_the_partner_model_says() {
    for n in 2..30 {
        let per_partner = n - n % 2;
        for p in 0..n {
            for k in 1..3 {
                let pairs = p * per_partner;
                let built = slots(&sampled_rounds(n, pairs, 7), k);
                let by_partners = sampled_mesh_scale(n, p, k, &TIMING, &MEMORY);
                let by_pairs = sampled_pairs_scale(n, pairs, k, &TIMING, &MEMORY);
                assert_eq!(by_pairs.slots, built.len() as u64, "n {n} p {p} k {k}");
                assert_eq!(by_pairs.slots, by_partners.slots, "n {n} p {p} k {k}");
                assert_eq!(by_pairs.tests, by_partners.tests, "n {n} p {p}");
            }
        }
    }
    // A sample of 1,000 agents' fleet at 8 partners: 16 slots, 86.4 s, as docs/deploy.md.
    let s = sampled_pairs_scale(1000, 8000, 1, &TIMING, &MEMORY);
    assert_eq!((s.tests, s.slots), (8000, 16));
    assert!((s.seconds - 86.4).abs() < 1e-9);
}

#[test]
fn a_sample_of_every_pair_is_the_full_mesh() {
    for n in 2..20 {
        let all: BTreeSet<Pair> = sampled_rounds(n, usize::MAX, 3)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(all.len(), n * (n - 1), "n {n}");
        assert_eq!(
            sampled_pairs_scale(n, n * (n - 1), 1, &TIMING, &MEMORY),
            wirespeed_model::mesh::full_mesh_scale(n, 1, &TIMING, &MEMORY)
        );
    }
}

#[test]
fn different_seeds_draw_different_pairs() {
    let a: Vec<Pair> = sampled_rounds(100, 200, 1).concat();
    let b: Vec<Pair> = sampled_rounds(100, 200, 2).concat();
    assert_ne!(a, b);
}

proptest! {
    #[test]
    fn a_sample_is_seeded_disjoint_in_each_round_and_covers_the_fleet(
        n in 2usize..120,
        pairs in 1usize..2000,
        seed in any::<u64>(),
    ) {
        let rounds = sampled_rounds(n, pairs, seed);
        // The same seed, the same pairs in the same rounds.
        prop_assert_eq!(&rounds, &sampled_rounds(n, pairs, seed));
        let want = pairs.min(n * (n - 1));
        let mut seen = BTreeSet::new();
        for round in &rounds {
            let mut busy = vec![false; n];
            for &(s, d) in round {
                prop_assert!(s < n && d < n && s != d);
                prop_assert!(seen.insert((s, d)), "{}->{} twice", s, d);
                prop_assert!(!busy[s] && !busy[d], "an agent twice in a round");
                busy[s] = true;
                busy[d] = true;
            }
        }
        prop_assert_eq!(seen.len(), want);
        prop_assert_eq!(
            sampled_pairs_scale(n, pairs, 1, &TIMING, &MEMORY).slots,
            rounds.len() as u64
        );
        if pairs >= covering_pairs(n) {
            for a in 0..n {
                prop_assert!(seen.iter().any(|&(s, _)| s == a), "{} never sends", a);
                prop_assert!(seen.iter().any(|&(_, d)| d == a), "{} never receives", a);
            }
        }
    }
}
