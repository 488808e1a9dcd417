//! The unit tests of `wirespeed_report`'s documents (its private `document` module, re-exported
//! at the crate's root).

use std::fmt;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use wirespeed_report::*;

#[derive(Serialize)]
struct Sample {
    rate_bits_per_second: f64,
}

impl Render for Sample {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "rate {}", self.rate_bits_per_second)
    }
}

#[test]
fn json_names_its_schema_and_never_writes_nan() {
    let doc = Document::new(
        "test",
        (),
        Sample {
            rate_bits_per_second: f64::NAN,
        },
    );
    let text = to_json(&doc).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["schema"], "wirespeed.test.v1");
    assert!(value["result"]["rate_bits_per_second"].is_null());
    assert!(value["host"]["cores"].as_u64().unwrap() >= 1);
    assert!(value["started_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn human_output_lists_verdicts_after_the_result() {
    let mut doc = Document::new(
        "test",
        (),
        Sample {
            rate_bits_per_second: 1.0,
        },
    );
    doc.push(Finding::plain(Severity::Verdict, "fine", "fine"));
    let mut out = Vec::new();
    emit(&mut out, OutputFormat::Human, &doc).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "rate 1\nverdict: fine\n");
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Judged {
    ReceiverWindowLimited {
        window_bytes: u64,
        round_trip_seconds: f64,
    },
    NothingArrived,
}

impl fmt::Display for Judged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Judged::ReceiverWindowLimited {
                window_bytes,
                round_trip_seconds,
            } => write!(
                f,
                "receiver-window limited: {window_bytes} B per {round_trip_seconds} s"
            ),
            Judged::NothingArrived => write!(f, "nothing arrived"),
        }
    }
}

#[test]
fn a_typed_judgement_gives_its_kind_figures_and_sentence() {
    let mut doc = Document::new(
        "test",
        (),
        Sample {
            rate_bits_per_second: 1.0,
        },
    );
    doc.verdict(&Judged::ReceiverWindowLimited {
        window_bytes: 65536,
        round_trip_seconds: f64::NAN,
    });
    doc.warning(&Judged::NothingArrived);
    assert_eq!(doc.findings_consistent(), Ok(()));
    let value: Value = serde_json::from_str(&to_json(&doc).unwrap()).unwrap();
    assert_eq!(
        value["verdicts"][0],
        "receiver-window limited: 65536 B per NaN s"
    );
    let finding = &value["findings"][0];
    assert_eq!(finding["kind"], "receiver_window_limited");
    assert_eq!(finding["severity"], "verdict");
    assert_eq!(finding["window_bytes"], 65536);
    assert!(
        finding["round_trip_seconds"].is_null(),
        "NaN is written as null"
    );
    assert_eq!(value["findings"][1]["kind"], "nothing_arrived");
    assert_eq!(value["findings"][1]["severity"], "warning");
    // Read back, the evidence stays beside the kind.
    let back: Document<(), Value> = serde_json::from_value(value).unwrap();
    assert_eq!(back.findings[0].evidence["window_bytes"], 65536);
    assert_eq!(back.findings_consistent(), Ok(()));
}

#[test]
fn a_sentence_without_its_finding_or_an_unnamed_kind_is_caught() {
    let mut doc = Document::new(
        "test",
        (),
        Sample {
            rate_bits_per_second: 1.0,
        },
    );
    doc.verdicts.push("said behind the findings' back".into());
    assert!(doc.findings_consistent().is_err());
    let mut doc = Document::new(
        "test",
        (),
        Sample {
            rate_bits_per_second: 1.0,
        },
    );
    doc.verdict(&"a bare string has no kind");
    assert!(
        doc.findings_consistent()
            .unwrap_err()
            .contains("no stable kind")
    );
}

#[test]
fn an_old_document_without_findings_still_reads() {
    let old = r#"{"schema":"wirespeed.test.v1","wirespeed_version":"0.1.0",
        "started_at":"2026-01-01T00:00:00Z","host":{"hostname":"h","os":"linux",
        "kernel":"6","cpu_model":"x","cores":2},"parameters":null,"result":null,
        "verdicts":["fine"],"warnings":[]}"#;
    let doc: Document<(), Value> = serde_json::from_str(old).unwrap();
    assert!(doc.findings.is_empty());
}
