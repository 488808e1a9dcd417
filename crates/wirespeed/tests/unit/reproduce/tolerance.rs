use wirespeed::reproduce::Verdict;
use wirespeed::reproduce::tolerance::*;

/// Issue 31's rows of `reproduce bellovin --topology`: r2's answer per byte at -10.6%,
/// hop 2's per byte at +5.7% and r1's answer at +5.9%, with intervals up to +-41.8%, were
/// "within" a tolerance of "2% + this run's interval". Against the fixed tolerance none is
/// within: with that interval each is not measured precisely enough; with an interval
/// narrower than the tolerance each is outside.
#[test]
fn the_issues_rows_are_never_within_by_their_own_noise() {
    for (off, tolerance) in [(-0.106, 0.05), (0.057, 0.02), (0.059, 0.05)] {
        assert_eq!(judge(off, tolerance, 0.418).verdict, Verdict::Imprecise);
        let narrow = judge(off, tolerance, 0.01);
        assert_eq!(narrow.verdict, Verdict::Outside);
        assert!(narrow.said.contains("a bias"), "{narrow:?}");
    }
}

#[test]
fn a_precise_row_is_within_or_outside_by_the_tolerance_alone() {
    assert_eq!(judge(0.019, 0.02, 0.005).verdict, Verdict::Within);
    assert_eq!(judge(-0.02, 0.02, 0.02).verdict, Verdict::Within);
    assert_eq!(judge(0.021, 0.02, 0.02).verdict, Verdict::Outside);
    // Microseconds work the same way: 20 us fixed, a 3.5 us interval.
    assert_eq!(judge(-19.0, 20.0, 3.5).verdict, Verdict::Within);
    assert_eq!(judge(27.0, 20.0, 3.5).verdict, Verdict::Outside);
}

#[test]
fn a_wide_interval_is_never_within_even_when_the_estimate_is_on_the_truth() {
    let j = judge(0.0, 0.02, 0.03);
    assert_eq!(j.verdict, Verdict::Imprecise);
    assert!(j.said.contains("not measured precisely enough"), "{j:?}");
    // Off by more than tolerance + interval: outside whatever the interval.
    assert_eq!(judge(0.051, 0.02, 0.03).verdict, Verdict::Outside);
    assert_eq!(judge(0.049, 0.02, 0.03).verdict, Verdict::Imprecise);
}

#[test]
fn no_interval_or_no_figure_is_never_within() {
    assert_eq!(judge(0.0, 0.02, f64::NAN).verdict, Verdict::Imprecise);
    assert_eq!(judge(f64::NAN, 0.02, 0.001).verdict, Verdict::Outside);
}
