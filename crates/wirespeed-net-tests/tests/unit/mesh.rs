use wirespeed_net::mesh::*;

#[test]
fn latency_figures_are_quantiles_of_the_answers() {
    let l = latency_of(4, &[0.003, 0.001, 0.002]);
    assert_eq!((l.sent, l.answered), (4, 3));
    assert_eq!(l.min_seconds, Some(0.001));
    assert_eq!(l.median_seconds, Some(0.002));
    assert_eq!(l.max_seconds, Some(0.003));
    let none = latency_of(5, &[]);
    assert_eq!(none.median_seconds, None);
}
