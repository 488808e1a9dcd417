use serde_json::json;
use wirespeed::deploy::text::yaml;

#[test]
fn yaml_quotes_every_string_and_nests_lists_of_maps() {
    let v = json!({"a": {"b": [1, "x: y"], "c": [{"d": true, "e": "on"}]}, "f": []});
    let mut s = String::new();
    yaml(&v, 0, &mut s);
    assert_eq!(
        s,
        "a:\n  b:\n  - 1\n  - \"x: y\"\n  c:\n  - d: true\n    e: \"on\"\nf: []\n"
    );
}
