//! The unit tests of `wirespeed_report::html::generic`.

use serde_json::{Value, json};
use wirespeed_report::html::generic::*;

fn html(v: &Value) -> String {
    value_markup("", v, &mut Budget::new(100_000)).into_string()
}

#[test]
fn objects_nest_and_arrays_of_objects_become_columns() {
    let out = html(&json!({
        "hops": [{"ttl": 1, "rtt_seconds": 0.002}, {"ttl": 2, "extra": true}],
        "sizes": [1, 2, 3],
        "inner": {"granted_bytes": 4096}
    }));
    // Keys come in serde_json's order (sorted); columns in the order they first appear.
    assert!(
        out.contains("<th>rtt_seconds</th><th>ttl</th><th>extra</th>"),
        "{out}"
    );
    assert!(out.contains("2 ms") && out.contains("1, 2, 3") && out.contains("4,096 B"));
}

#[test]
fn seeds_are_printed_exactly() {
    let seed = json!(4_112_730_303_788_921_392u64);
    assert_eq!(scalar("seed", &seed), "4112730303788921392");
    assert_eq!(
        scalar("n", &json!(-9_007_199_254_740_993i64)),
        "-9007199254740993"
    );
    assert_eq!(scalar("n", &json!(12345)), "12,345");
}

#[test]
fn long_and_deep_values_are_cut_with_a_note() {
    let rows: Vec<Value> = (0..500).map(|i| json!({"i": i})).collect();
    let out = html(&Value::Array(rows));
    assert!(out.contains("440 more rows not shown"), "{out}");
    let mut deep = json!(1);
    for _ in 0..20 {
        deep = json!({ "d": deep });
    }
    assert!(html(&deep).contains("nested deeper"));
    let small = value_markup("", &json!({"a": 1, "b": 2, "c": 3}), &mut Budget::new(3));
    assert!(small.into_string().contains("more fields not shown"));
}
