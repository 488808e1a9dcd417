//! Every document's verdicts and warnings also stand as typed findings (issue 30): a script
//! acts on `{"kind": "link_bound", ...}` instead of matching a sentence. The sentences are the
//! same ones a person reads; each finding carries its sentence, so the two cannot drift.

use std::path::Path;

use serde_json::Value;
use wirespeed_report::Document;

/// Parses a `--json` document and asserts every verdict and warning has its typed finding with
/// a stable kind. Returns the document for further checks.
pub(crate) fn assert_typed(json: &str) -> Document<Value, Value> {
    let mut value: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {json}"));
    // Golden files mask the host; its facts are not what is checked here.
    if value.get("host").is_some_and(|h| !h.is_object()) {
        value["host"] = serde_json::json!({
            "hostname": "masked", "os": "masked", "kernel": "masked", "cpu_model": "masked", "cores": 1
        });
    }
    let doc: Document<Value, Value> =
        serde_json::from_value(value).unwrap_or_else(|e| panic!("not a document ({e}): {json}"));
    if let Err(why) = doc.findings_consistent() {
        panic!(
            "{why}: verdicts {:?}, warnings {:?}, findings {:?}",
            doc.verdicts, doc.warnings, doc.findings
        );
    }
    doc
}

#[test]
fn golden_documents_carry_a_typed_finding_for_every_sentence() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Deploy's golden file is a list of manifests, not a document.
        if serde_json::from_str::<Value>(&text)
            .unwrap()
            .get("schema")
            .is_none()
        {
            continue;
        }
        assert_typed(&text);
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} golden documents checked");
}
