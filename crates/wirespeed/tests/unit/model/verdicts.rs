use wirespeed::model::verdicts::*;

#[test]
fn the_count_outside_tolerance_names_the_verdict() {
    assert_eq!(
        compare_verdict(0, 3),
        CompareVerdict::WithinTolerance { segments: 3 }
    );
    assert_eq!(
        compare_verdict(3, 3),
        CompareVerdict::AllOutsideTolerance { segments: 3 }
    );
    // One segment out of one is that segment's fault, not the probe's.
    assert_eq!(
        compare_verdict(1, 1),
        CompareVerdict::OutsideTolerance {
            anomalous_segments: 1,
            segments: 1
        }
    );
    let some = compare_verdict(1, 3);
    assert_eq!(
        some.to_string(),
        "1 segment(s) outside tolerance: see the hypotheses"
    );
    let json = serde_json::to_value(&some).unwrap();
    assert_eq!(json["kind"], "outside_tolerance");
    assert_eq!(json["anomalous_segments"], 1);
    assert_eq!(json["segments"], 3);
    assert_eq!(
        compare_verdict(2, 2).to_string(),
        "all 2 segments outside tolerance: is the probe of this path? each segment's hypothesis says what disagrees"
    );
}
