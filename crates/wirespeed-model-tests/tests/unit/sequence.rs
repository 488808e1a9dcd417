use proptest::prelude::*;
use wirespeed_model::sequence::*;

fn track(seqs: &[u64]) -> SequenceTracker {
    let mut t = SequenceTracker::new();
    for &s in seqs {
        t.record(s);
    }
    t
}

#[test]
fn in_order_stream_has_nothing_to_report() {
    let t = track(&(0..10_000).collect::<Vec<_>>());
    assert_eq!(
        (t.unique(), t.duplicates(), t.out_of_order()),
        (10_000, 0, 0)
    );
    assert_eq!(t.lost(Some(10_000)), 0);
}

#[test]
fn gaps_late_arrivals_and_copies_are_told_apart() {
    let t = track(&[0, 1, 3, 2, 2, 5, 5, 9]);
    assert_eq!(t.unique(), 6); // 0 1 2 3 5 9
    assert_eq!(t.duplicates(), 2);
    assert_eq!(t.out_of_order(), 1); // 2 after 3
    assert_eq!(t.lost(None), 4); // 4 6 7 8
    assert_eq!(t.lost(Some(12)), 6);
}

#[test]
fn a_jump_past_the_window_forgets_old_bits() {
    let t = track(&[0, 10_000, 10_000 - 1, SequenceTracker::WINDOW * 3]);
    assert_eq!(t.duplicates(), 0);
    assert_eq!(t.unique(), 4);
}

#[test]
fn jitter_of_constant_transit_is_zero_and_rfc_3550_gain_is_one_sixteenth() {
    let mut j = Jitter::default();
    for _ in 0..10 {
        j.record(0.005);
    }
    assert_eq!(j.seconds(), 0.0);
    j.record(0.005 + 0.016);
    assert!((j.seconds() - 0.001).abs() < 1e-12, "{}", j.seconds());
}

#[test]
fn jitter_converges_to_the_mean_deviation() {
    // Transit alternates a, a+d: every |D| is d, so J -> d.
    let mut j = Jitter::default();
    for i in 0..2000 {
        j.record(0.01 + if i % 2 == 0 { 0.0 } else { 0.002 });
    }
    assert!((j.seconds() - 0.002).abs() < 1e-9);
}

proptest! {
    #[test]
    fn any_permutation_of_a_window_counts_each_once(mut seqs in proptest::collection::vec(0u64..2000, 1..500)) {
        seqs.sort_unstable();
        seqs.dedup();
        let n = seqs.len() as u64;
        // Reverse order is the deepest reordering within the window.
        seqs.reverse();
        let mut doubled = seqs.clone();
        doubled.extend(seqs.iter().copied());
        let t = track(&doubled);
        prop_assert_eq!(t.unique(), n);
        prop_assert_eq!(t.duplicates(), n);
        prop_assert_eq!(t.unique() + t.duplicates(), doubled.len() as u64);
    }
}
