use wirespeed::reproduce::Reproduction;

#[test]
fn figures_are_in_base_units_beside_the_papers() {
    let text = wirespeed::common::metrics::of_result::<Reproduction>(
        "reproduce",
        include_str!("../../../tests/golden/reproduce-boggs.json"),
    );
    assert!(
        text.contains("wirespeed_reproduce_rows{experiment=\"boggs\",verdict=\"within\"} "),
        "{text}"
    );
    assert!(text.contains(",source=\"paper\"} "), "{text}");
    assert!(!text.contains("ms\""), "no unit left unconverted: {text}");
}
