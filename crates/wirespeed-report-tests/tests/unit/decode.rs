//! The unit tests of `wirespeed_report::decode`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use wirespeed_report::decode::*;
use wirespeed_report::{Document, to_json};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Inner {
    rate_bits_per_second: f64,
    note: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Tcp,
    Udp,
}

#[derive(Debug, Serialize, Deserialize)]
struct Outer {
    kind: Kind,
    rows: Vec<Inner>,
    best: Option<f64>,
    count: u64,
}

#[test]
fn a_document_reads_back_into_its_own_types_with_nan_for_null() {
    let doc = Document::new(
        "test",
        (),
        Outer {
            kind: Kind::Udp,
            rows: vec![
                Inner {
                    rate_bits_per_second: f64::NAN,
                    note: None,
                },
                Inner {
                    rate_bits_per_second: 2.5,
                    note: Some("x".into()),
                },
            ],
            best: None,
            count: 7,
        },
    );
    let text = to_json(&doc).unwrap();
    assert!(text.contains("\"rate_bits_per_second\": null"));
    let back: Document<(), Outer> = from_str(&text).unwrap();
    assert_eq!(back.schema, "wirespeed.test.v1");
    assert!(back.result.rows[0].rate_bits_per_second.is_nan());
    assert_eq!(back.result.rows[1], doc.result.rows[1]);
    assert_eq!(back.result.kind, Kind::Udp);
    assert_eq!((back.result.best, back.result.count), (None, 7));
    assert_eq!(back.host, doc.host);
}

#[test]
fn the_text_and_the_tree_decode_alike() {
    let text = r#"{"kind": "tcp", "rows": [{"rate_bits_per_second": null, "note": null},
        {"rate_bits_per_second": 3, "note": "n"}], "best": null, "count": 2}"#;
    let direct: Outer = from_str(text).unwrap();
    let parsed: Value = serde_json::from_str(text).unwrap();
    let borrowed: Outer = from_value_ref(&parsed).unwrap();
    let tree: Outer = from_value(parsed).unwrap();
    assert!(direct.rows[0].rate_bits_per_second.is_nan());
    assert!(borrowed.rows[0].rate_bits_per_second.is_nan());
    assert_eq!(direct.rows[1], tree.rows[1]);
    assert_eq!(borrowed.rows[1], tree.rows[1]);
    assert_eq!((borrowed.best, borrowed.count), (None, 2));
    assert_eq!(direct.rows[1].rate_bits_per_second, 3.0);
    assert_eq!(
        (direct.kind, direct.best, direct.count),
        (Kind::Tcp, None, 2)
    );
    // Trailing text after the document is an error, as with serde_json::from_str.
    assert!(from_str::<Inner>(r#"{"rate_bits_per_second": 1, "note": null} x"#).is_err());
    // An f64 that is not a number (nor null) is still refused.
    assert!(from_str::<Inner>(r#"{"rate_bits_per_second": [1], "note": null}"#).is_err());
    assert!(from_str::<Inner>(r#"{"rate_bits_per_second": true, "note": null}"#).is_err());
}

#[test]
fn a_wrong_type_is_still_an_error_naming_the_field() {
    let err = from_str::<Inner>(r#"{"rate_bits_per_second": "fast", "note": null}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid type"), "{err}");
    assert!(from_str::<Inner>(r#"{"note": null}"#).is_err());
}
