use wirespeed::common::metrics::{Exposition, Metrics};
use wirespeed::envelope::EnvelopeReport;

#[test]
fn the_ceiling_is_in_bits_per_second_and_the_efficiency_a_ratio() {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/golden/envelope.json")).unwrap();
    let envelope: wirespeed_model::envelope::Envelope =
        serde_json::from_value(doc["result"].clone()).unwrap();
    let report = EnvelopeReport {
        envelope,
        explain: None,
        rate_format: Default::default(),
    };
    let mut m = Exposition::new("envelope");
    report.metrics(&mut m);
    let text = m.text();
    assert!(
        text.contains(&format!(
            "wirespeed_envelope_goodput_bytes_per_second {}\n",
            9414824.4473342 / 8.0
        )),
        "{text}"
    );
    assert!(text.contains("wirespeed_envelope_efficiency_ratio 0.94148244473342\n"));
    assert!(text.contains("wirespeed_envelope_link_rate_bytes_per_second 1250000\n"));
}
