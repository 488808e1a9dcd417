mod faults;
mod sample;

use wirespeed_model::mesh::*;

const TIMING: TestTiming = TestTiming {
    tcp_seconds: 5.0,
    latency_seconds: 0.2,
    overhead_seconds: 0.2,
};
const MEMORY: ControllerMemory = ControllerMemory {
    base_bytes: 8.0 * 1048576.0,
    per_test_bytes: 2355.0,
};

#[test]
fn the_closed_form_is_the_built_schedule() {
    for n in 0..40 {
        for k in 1..4 {
            let built = slots(&tournament(n), k);
            let scale = full_mesh_scale(n, k, &TIMING, &MEMORY);
            assert_eq!(scale.slots, built.len() as u64, "n {n} k {k}");
            assert_eq!(
                scale.tests,
                built.iter().map(Vec::len).sum::<usize>() as u64
            );
            assert!((scale.seconds - predicted_seconds(built.len(), &TIMING)).abs() < 1e-9);
        }
    }
}

#[test]
fn a_full_mesh_of_ten_thousand_is_quadratic_in_memory_linear_in_time() {
    let s100 = full_mesh_scale(100, 1, &TIMING, &MEMORY);
    let s10k = full_mesh_scale(10_000, 1, &TIMING, &MEMORY);
    assert_eq!(s10k.tests, 99_990_000);
    assert_eq!(s10k.slots, 19_998);
    // 100 times the agents: about 100 times the time, 10,000 times the tests' memory.
    assert!((s10k.seconds / s100.seconds - 19_998.0 / 198.0).abs() < 1e-9);
    assert!(s10k.controller_bytes > 200e9 && s100.controller_bytes < 40e6);
}

/// docs/deploy.md's table: 5.4 s per slot, 8 MiB and 3.3 KiB per test.
#[test]
fn the_scale_table_in_the_deploy_docs() {
    let memory = ControllerMemory {
        base_bytes: 8.0 * 1048576.0,
        per_test_bytes: 3.3 * 1024.0,
    };
    let mib = |b: f64| b / 1048576.0;
    let rows = [
        (100, 198, 17.8 * 60.0, 40.0, 16, 11.0),
        (1000, 1998, 3.0 * 3600.0, 3.2 * 1024.0, 16, 34.0),
        (10_000, 19_998, 30.0 * 3600.0, 315.0 * 1024.0, 16, 266.0),
    ];
    for (n, slots, seconds, controller_mib, sampled_slots, sampled_mib) in rows {
        let full = full_mesh_scale(n, 1, &TIMING, &memory);
        assert_eq!(full.slots, slots);
        assert!((full.seconds / seconds - 1.0).abs() < 0.01, "{n}: {full:?}");
        assert!(
            (mib(full.controller_bytes) / controller_mib - 1.0).abs() < 0.02,
            "{n}"
        );
        let sampled = sampled_mesh_scale(n, 8, 1, &TIMING, &memory);
        assert_eq!(sampled.slots, sampled_slots);
        assert!((sampled.seconds - 86.4).abs() < 1e-9);
        assert!(
            (mib(sampled.controller_bytes) / sampled_mib - 1.0).abs() < 0.05,
            "{n}"
        );
    }
}

#[test]
fn a_sample_costs_its_partners_not_the_fleet() {
    let full = full_mesh_scale(1000, 1, &TIMING, &MEMORY);
    let sampled = sampled_mesh_scale(1000, 8, 1, &TIMING, &MEMORY);
    assert_eq!(sampled.tests, 8000);
    assert_eq!(sampled.slots, 16);
    assert!(sampled.seconds * 100.0 < full.seconds);
    assert_eq!(
        sampled_mesh_scale(10, 50, 1, &TIMING, &MEMORY),
        full_mesh_scale(10, 1, &TIMING, &MEMORY)
    );
    // The closed form is the tournament's first 2 x partners rounds.
    for n in 0..30 {
        for p in 0..n + 1 {
            for k in 1..3 {
                let rounds = tournament(n);
                let take = (2 * p).min(rounds.len());
                let built = slots(&rounds[..take], k);
                let scale = sampled_mesh_scale(n, p, k, &TIMING, &MEMORY);
                assert_eq!(scale.slots, built.len() as u64, "n {n} p {p} k {k}");
                let tests: usize = built.iter().map(Vec::len).sum();
                assert_eq!(scale.tests, tests as u64, "n {n} p {p}");
            }
        }
    }
}

use proptest::prelude::*;
use std::collections::BTreeSet;

fn check_schedule(n: usize, rounds: &[Vec<Pair>], per_round: usize) {
    let mut seen = BTreeSet::new();
    for round in rounds {
        let mut busy = vec![0usize; n];
        for &(s, d) in round {
            assert!(s < n && d < n && s != d, "{s}->{d}");
            assert!(seen.insert((s, d)), "{s}->{d} twice");
            busy[s] += 1;
            busy[d] += 1;
        }
        assert!(busy.iter().all(|&b| b <= per_round), "{round:?}");
    }
    assert_eq!(seen.len(), n * (n - 1));
}

#[test]
fn six_agents_take_ten_rounds_of_three() {
    let t = tournament(6);
    assert_eq!(t.len(), 10);
    assert!(t.iter().all(|r| r.len() == 3));
    check_schedule(6, &t, 1);
    // Five agents: a bye each round, ten rounds of two.
    let t = tournament(5);
    assert_eq!(t.len(), 10);
    assert!(t.iter().all(|r| r.len() == 2));
    assert!(tournament(1).is_empty() && tournament(0).is_empty());
    assert_eq!(tournament(2), vec![vec![(0, 1)], vec![(1, 0)]]);
}

#[test]
fn sixteen_agents_take_thirty_rounds_and_the_prediction_follows() {
    let t = tournament(16);
    assert_eq!(t.len(), 30);
    assert_eq!(t.iter().map(Vec::len).sum::<usize>(), 240);
    let timing = TestTiming {
        tcp_seconds: 1.0,
        latency_seconds: 0.2,
        overhead_seconds: 0.3,
    };
    assert!((predicted_seconds(slots(&t, 1).len(), &timing) - 45.0).abs() < 1e-9);
    assert_eq!(slots(&t, 2).len(), 15);
    assert_eq!(slots(&t, 4).len(), 8);
}

/// Runs a `Dispatch` with test `i` lasting `length(i)`, ending tests in time order;
/// returns each test's (start, end) and checks that an agent is never in more than
/// `most` tests at once, nor in tests of two slots at once.
fn simulate(slots: &[Vec<Pair>], most: usize, length: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let mut d = Dispatch::new(slots);
    let mut times = vec![(f64::NAN, f64::NAN); d.len()];
    let mut running: Vec<(f64, usize)> = Vec::new();
    let mut now = 0.0;
    loop {
        for i in d.ready() {
            times[i] = (now, now + length(i));
            running.push((now + length(i), i));
        }
        // No agent in more than `most` running tests, all of one slot.
        let mut per_agent: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for &(_, i) in &running {
            let (k, (s, t)) = d.test(i);
            per_agent.entry(s).or_default().push(k);
            per_agent.entry(t).or_default().push(k);
        }
        for ks in per_agent.values() {
            assert!(ks.len() <= most, "{ks:?}");
            assert!(ks.iter().all(|&k| k == ks[0]), "{ks:?}");
        }
        if running.is_empty() {
            break;
        }
        running.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (t, i) = running.pop().expect("not empty");
        now = t;
        d.end(i);
    }
    assert!(d.all_ended());
    times
}

#[test]
fn dispatch_with_equal_tests_is_the_slot_by_slot_schedule() {
    for n in [2, 3, 5, 6, 16] {
        let s = slots(&tournament(n), 1);
        let times = simulate(&s, 1, |_| 1.0);
        let end = times.iter().map(|t| t.1).fold(0.0, f64::max);
        assert!((end - critical_path_seconds(&s, 1.0)).abs() < 1e-9, "{n}");
        assert!(end <= s.len() as f64 + 1e-9, "{n}");
    }
    assert!((critical_path_seconds(&slots(&tournament(16), 1), 0.75) - 22.5).abs() < 1e-9);
    assert_eq!(critical_path_seconds(&[], 1.0), 0.0);
}

#[test]
fn each_tests_tail_is_in_the_prediction_along_its_chain() {
    // 16 agents, tests of 0.75 s, each waiting for its data's tail (0 to 120 ms, as a
    // 10 Mbit/s link's queue drains): the dispatch ends when the critical path of the
    // tests' own lengths says, not at the plan's 30 x 0.75 s that leaves the tails out.
    let s = slots(&tournament(16), 1);
    let d = Dispatch::new(&s);
    let tail = |i: usize| 0.12 * ((i * 37) % 11) as f64 / 10.0;
    let length = |i: usize| 0.75 + tail(i);
    let times = simulate(&s, 1, length);
    let end = times.iter().map(|t| t.1).fold(0.0, f64::max);
    let index = |k: usize, p: Pair| (0..d.len()).find(|&i| d.test(i) == (k, p)).unwrap();
    let predicted = critical_path(&s, |k, p| length(index(k, p)));
    assert!((end - predicted).abs() < 1e-9, "{end} {predicted}");
    let planned = critical_path_seconds(&s, 0.75);
    assert!(end > planned + 0.5, "{end} {planned}");
}

#[test]
fn probes_behind_another_tests_queue_are_not_judged() {
    // Identical links; one test's probes started while the last test of its source was
    // still arriving there (its tail hit the cap): 2.4 ms against 0.36 ms. Judged, it is
    // a "high round trip"; known to be behind the schedule's own queue, it is not, and it
    // does not move the others' yardstick either.
    let mut tests = fleet(16, |_, _| 9.4e6);
    tests.iter_mut().for_each(|m| m.rtt_seconds = Some(3.6e-4));
    let bad = tests
        .iter()
        .position(|m| (m.source, m.destination) == (3, 9))
        .unwrap();
    tests[bad].rtt_seconds = Some(2.4e-3);
    // Both directions' probes waited (one path's queue): the pair's best is high.
    let back = tests
        .iter()
        .position(|m| (m.source, m.destination) == (9, 3))
        .unwrap();
    tests[back].rtt_seconds = Some(2.2e-3);
    let flagged = analyse(16, &tests, &Thresholds::default()).findings;
    assert!(
        matches!(
            flagged.as_slice(),
            [Finding::HighLatencyPair {
                source: 3,
                destination: 9,
                ..
            }]
        ),
        "{flagged:?}"
    );
    tests[bad].rtt_behind_queue = true;
    tests[back].rtt_behind_queue = true;
    let a = analyse(16, &tests, &Thresholds::default());
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!((a.hosts[3].median_rtt_seconds - 3.6e-4).abs() < 1e-12);
}

#[test]
fn a_slow_test_delays_only_the_tests_of_its_agents() {
    // 16 agents, one test in each slot twice as long (a different pair each slot): slot by
    // slot that is 30 x 2 = 60; tests started as their agents come free end sooner, and
    // never before the 30 slots of one test each.
    let s = slots(&tournament(16), 1);
    let mut slow = Vec::new();
    let mut first = 0;
    for (k, slot) in s.iter().enumerate() {
        slow.push(first + (3 * k) % slot.len());
        first += slot.len();
    }
    let times = simulate(&s, 1, |i| if slow.contains(&i) { 2.0 } else { 1.0 });
    let end = times.iter().map(|t| t.1).fold(0.0, f64::max);
    assert!((31.0..50.0).contains(&end), "{end}");
}

proptest! {
    #[test]
    fn dispatch_never_puts_an_agent_in_more_tests_than_its_slot(
        n in 2usize..14,
        k in 1usize..4,
        lengths in proptest::collection::vec(0.1f64..3.0, 1..50),
    ) {
        let s = slots(&tournament(n), k);
        let times = simulate(&s, k, |i| lengths[i % lengths.len()]);
        prop_assert!(times.iter().all(|t| t.0.is_finite() && t.1 >= t.0));
    }

    #[test]
    fn every_ordered_pair_once_and_no_agent_twice_in_a_round(n in 2usize..40) {
        let t = tournament(n);
        check_schedule(n, &t, 1);
        let expected = if n.is_multiple_of(2) { 2 * (n - 1) } else { 2 * n };
        prop_assert_eq!(t.len(), expected);
    }

    #[test]
    fn a_slot_of_k_rounds_holds_an_agent_at_most_k_times(n in 2usize..30, k in 1usize..6) {
        let s = slots(&tournament(n), k);
        check_schedule(n, &s, k);
    }

    #[test]
    fn identical_links_flag_nothing(n in 3usize..12, rate in 1e6f64..1e10, jitter in 0.0f64..0.2) {
        // Every test within +-20% of one rate: no outlier of any kind.
        let mut tests = Vec::new();
        for (i, (s, d)) in tournament(n).into_iter().flatten().enumerate() {
            let wobble = 1.0 + jitter * (((i * 7919) % 13) as f64 / 12.0 - 0.5);
            tests.push(PairMeasure {
                source: s,
                destination: d,
                rate_bits_per_second: Some(rate * wobble),
                rtt_seconds: Some(1e-4 * wobble),
                rtt_behind_queue: false,
                retransmit_share: None,
            });
        }
        let a = analyse(n, &tests, &Thresholds::default());
        prop_assert!(a.findings.is_empty(), "{:?}", a.findings);
    }
}

fn fleet(n: usize, rate: impl Fn(usize, usize) -> f64) -> Vec<PairMeasure> {
    tournament(n)
        .into_iter()
        .flatten()
        .map(|(s, d)| PairMeasure {
            source: s,
            destination: d,
            rate_bits_per_second: Some(rate(s, d)),
            rtt_seconds: Some(3e-4),
            rtt_behind_queue: false,
            retransmit_share: None,
        })
        .collect()
}

#[test]
fn a_slow_host_and_a_mismatched_pair_are_found_and_nothing_else() {
    // Six hosts at 9.4 Mbit/s; host 0's link is ten times slower; the 4-5 link is
    // mismatched (2 Mbit/s one way, 3 the other).
    let tests = fleet(6, |s, d| match (s, d) {
        (0, _) | (_, 0) => 0.94e6,
        (4, 5) => 2.0e6,
        (5, 4) => 3.0e6,
        _ => 9.4e6 * (1.0 + 0.01 * ((s * 6 + d) % 3) as f64),
    });
    let a = analyse(6, &tests, &Thresholds::default());
    let hosts: Vec<usize> = a
        .findings
        .iter()
        .filter(|f| !f.is_pair())
        .flat_map(Finding::hosts)
        .collect();
    assert_eq!(hosts, vec![0], "{:?}", a.findings);
    let pairs: BTreeSet<(usize, usize)> = a
        .findings
        .iter()
        .filter(|f| f.is_pair())
        .map(|f| {
            let h = f.hosts();
            (h[0].min(h[1]), h[0].max(h[1]))
        })
        .collect();
    assert_eq!(pairs, BTreeSet::from([(4, 5)]), "{:?}", a.findings);
}

#[test]
fn an_asymmetric_pair_is_named_with_its_fast_direction() {
    let tests = fleet(4, |s, d| if (s, d) == (2, 3) { 1e6 } else { 9e6 });
    let a = analyse(4, &tests, &Thresholds::default());
    assert!(a.findings.contains(&Finding::AsymmetricPair {
        fast_source: 3,
        fast_destination: 2,
        fast_bits_per_second: 9e6,
        slow_bits_per_second: 1e6,
    }));
    assert_eq!(asymmetry(Some(1e6), Some(4e6)), Some(-0.75));
    assert_eq!(asymmetry(None, Some(4e6)), None);
}

#[test]
fn a_high_latency_pair_needs_both_the_ratio_and_the_floor() {
    let mut tests = fleet(4, |_, _| 9e6);
    tests.iter_mut().for_each(|m| {
        if (m.source.min(m.destination), m.source.max(m.destination)) == (0, 1) {
            m.rtt_seconds = Some(5e-3);
        }
    });
    let a = analyse(4, &tests, &Thresholds::default());
    assert!(
        a.findings.iter().any(|f| {
            matches!(f, Finding::HighLatencyPair { .. }) && {
                let mut h = f.hosts();
                h.sort_unstable();
                h == [0, 1]
            }
        }),
        "{:?}",
        a.findings
    );
    // Ten times 30 us is still under a millisecond: not an outlier.
    tests.iter_mut().for_each(|m| {
        if (m.source.min(m.destination), m.source.max(m.destination)) == (0, 1) {
            m.rtt_seconds = Some(9e-4);
        }
    });
    assert!(
        analyse(4, &tests, &Thresholds::default())
            .findings
            .is_empty()
    );
}

#[test]
fn a_pairs_round_trip_is_the_best_of_both_directions() {
    // Identical links under a busy host: one test's five probes all waited for a core
    // (2.85 ms best against 0.42 ms, a 16-host lab at load 11); the same path's other
    // direction, probed a slot later, was 0.43 ms. Not a slow path: nothing flagged.
    let mut tests = fleet(16, |_, _| 9.4e6);
    tests.iter_mut().for_each(|m| m.rtt_seconds = Some(4.2e-4));
    let one = tests
        .iter()
        .position(|m| (m.source, m.destination) == (7, 6))
        .unwrap();
    tests[one].rtt_seconds = Some(2.85e-3);
    let a = analyse(16, &tests, &Thresholds::default());
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    // A path that is slow is slow both ways: flagged once, with the better of the two.
    let back = tests
        .iter()
        .position(|m| (m.source, m.destination) == (6, 7))
        .unwrap();
    tests[back].rtt_seconds = Some(2.5e-3);
    let f = analyse(16, &tests, &Thresholds::default()).findings;
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        matches!(f[0], Finding::HighLatencyPair { rtt_seconds, .. } if rtt_seconds == 2.5e-3),
        "{f:?}"
    );
}

#[test]
fn mad_is_robust_to_one_outlier() {
    assert!((mad(&[1.0, 1.0, 1.0, 100.0]) - 0.0).abs() < 1e-12);
    assert!((mad(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 1.4826).abs() < 1e-12);
    assert!(mad(&[]).is_nan());
}
