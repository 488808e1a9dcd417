//! What the report's tests share with the binary's tests of the typed views: an arbitrary-JSON
//! strategy with the keys the renderers look for, the self-containment check, and the page
//! frame's checks that hold whatever views render it (unknown schemas, no input, large input).
//! Built for this crate's tests; the binary's tests include this file by path
//! (`wirespeed/src/report/views/tests.rs` says why), so it names nothing of this crate but
//! `super::Entry`.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::Entry;

/// Runs the frame's checks on a page renderer (views in or out, the frame must not change).
pub fn check_the_page_frame(render: &dyn Fn(&[Entry]) -> String) {
    unknown_schemas_and_versions_render_generically_with_a_note(render);
    no_documents_is_a_page_that_says_so(render);
    large_documents_are_cut_not_dropped(render);
}

fn unknown_schemas_and_versions_render_generically_with_a_note(
    render: &dyn Fn(&[Entry]) -> String,
) {
    let html = render(&[
        Entry {
            source: "x".into(),
            document: json!({"schema": "wirespeed.tcp.v7", "result": {"rate": 1}}),
        },
        Entry {
            source: "y".into(),
            document: json!({"schema": "other.thing", "result": [1, 2]}),
        },
        Entry {
            source: "z".into(),
            document: json!([{"a": 1}, "two", null]),
        },
    ]);
    assert_self_contained(&html);
    assert!(html.contains("schema version v7 of &quot;tcp&quot; is not one this report knows"));
    assert!(html.contains("not a schema this report knows"));
    assert!(html.contains("not a wirespeed document"));
}

fn no_documents_is_a_page_that_says_so(render: &dyn Fn(&[Entry]) -> String) {
    let html = render(&[]);
    assert_self_contained(&html);
    assert!(html.contains("No documents"));
}

fn large_documents_are_cut_not_dropped(render: &dyn Fn(&[Entry]) -> String) {
    let rows: Vec<Value> = (0..50_000).map(|i| json!({"i": i, "v": i * 2})).collect();
    let html = render(&[Entry {
        source: "big".into(),
        document: json!({"schema": "wirespeed.serve.v1", "result": {"rows": rows}}),
    }]);
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
    assert!(html.contains("more rows not shown"));
}

/// Any JSON value, nested a few levels, with the keys the renderers look for.
pub fn arbitrary_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("schema".to_string()),
        Just("result".to_string()),
        Just("intervals".to_string()),
        Just("streams".to_string()),
        Just("bits_per_second".to_string()),
        Just("end_seconds".to_string()),
        Just("hops".to_string()),
        Just("sizes".to_string()),
        Just("points".to_string()),
        Just("rows".to_string()),
        Just("runs".to_string()),
        Just("snd".to_string()),
        Just("rcv".to_string()),
        Just("snd_index".to_string()),
        Just("rcv_index".to_string()),
        Just("analysis".to_string()),
        Just("cells".to_string()),
        Just("verdicts".to_string()),
        Just("end".to_string()),
        Just("sum_received".to_string()),
        Just("plan".to_string()),
        Just("diagonal".to_string()),
        Just("packets".to_string()),
        Just("mss_bytes".to_string()),
        Just("fit".to_string()),
        Just("repeat".to_string()),
        Just("comparisons".to_string()),
        "[a-z_<>&\"]{0,8}",
    ];
    let schema = prop_oneof![
        Just(json!("wirespeed.tcp.v1")),
        Just(json!("wirespeed.sweep.v1")),
        Just(json!("wirespeed.sweep-runs.v1")),
        Just(json!("wirespeed.load.v1")),
        Just(json!("wirespeed.load-runs.v1")),
        Just(json!("wirespeed.probe.v1")),
        Just(json!("wirespeed.sim.v1")),
        Just(json!("wirespeed.reproduce.v1")),
        Just(json!("wirespeed.autoneg.v1")),
        Just(json!("wirespeed.envelope.v2")),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![Just(0.0), Just(1.0), Just(1e300), Just(-1e-300), Just(5e9)]
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        schema,
    ];
    leaf.prop_recursive(6, 96, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The page is one well-formed document with no script and no remote resource.
pub fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "no script");
    assert!(!lower.contains("src=\"http") && !lower.contains("href=\"http"));
    assert_eq!(
        html.matches("<section").count(),
        html.matches("</section>").count()
    );
    assert_eq!(
        html.matches("<table>").count(),
        html.matches("</table>").count()
    );
}
