//! The unit tests of `wirespeed_report::html`'s input (its private `input` module, re-exported
//! there).

use wirespeed_report::html::*;

#[test]
fn one_pretty_document_and_several_concatenated() {
    let one = parse_documents("{\n  \"schema\": \"wirespeed.tcp.v1\"\n}\n").unwrap();
    assert_eq!(one.len(), 1);
    let two = parse_documents("{\"schema\":\"wirespeed.a.v1\"}\n{\"schema\":\"wirespeed.b.v1\"}")
        .unwrap();
    assert_eq!(two[1]["schema"], "wirespeed.b.v1");
}

#[test]
fn a_results_file_is_its_plan_with_the_runs() {
    let text = "{\"schema\":\"wirespeed.sweep-runs.v1\",\"reps\":1}\n{\"snd_index\":0}\n{\"snd_index\":1}\n";
    let docs = parse_documents(text).unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["reps"], 1);
    assert_eq!(docs[0]["runs"].as_array().unwrap().len(), 2);
    let empty = parse_documents("{\"schema\":\"wirespeed.load-runs.v1\"}").unwrap();
    assert_eq!(empty[0]["runs"], serde_json::json!([]));
}

#[test]
fn a_schedule_file_gives_each_run_s_document() {
    let text = "{\"schema\":\"wirespeed.schedule-runs.v1\",\"command\":\"tcp\"}\n\
        {\"run\":1,\"document\":{\"schema\":\"wirespeed.tcp.v1\",\"n\":1}}\n\
        {\"run\":2,\"error\":\"down\",\"document\":null}\n\
        {\"run\":3,\"document\":{\"schema\":\"wirespeed.tcp.v1\",\"n\":3}}\n";
    let docs = parse_documents(text).unwrap();
    assert_eq!(docs.len(), 2, "the failed run has no document");
    assert_eq!(
        (docs[0]["n"].as_u64(), docs[1]["n"].as_u64()),
        (Some(1), Some(3))
    );
}

#[test]
fn a_line_cut_off_at_the_end_is_left_out_with_a_warning() {
    let text = "{\"schema\":\"wirespeed.sweep-runs.v1\"}\n{\"snd_index\":0}\n{\"snd_index\":1,\"rc";
    let docs = parse_documents(text).unwrap();
    assert_eq!(docs[0]["runs"].as_array().unwrap().len(), 1);
    assert!(
        docs[0]["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("line 3 was cut off")
    );
    // A document cut before it ends is an error, not an empty page.
    assert!(matches!(
        parse_documents("{\"schema\": \"wirespeed.tcp.v1\", \"res"),
        Err(InputError::Json { line: 1, .. })
    ));
    // Damage that is not at the end is an error.
    assert!(parse_documents("{\"a\":1}\n{\"b\": ]}\n{\"c\":1}").is_err());
}

#[test]
fn stream_intervals_give_way_to_their_document_or_stand_alone() {
    let whole = "{\"interval\":{\"start_seconds\":0}}\n{\"schema\":\"wirespeed.tcp.v1\"}\n";
    let docs = parse_documents(whole).unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["schema"], "wirespeed.tcp.v1");
    let cut = "{\"interval\":{\"start_seconds\":0}}\n{\"interval\":{\"start_seconds\":1}}\n";
    let docs = parse_documents(cut).unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["result"]["intervals"].as_array().unwrap().len(), 2);
    assert!(docs[0]["warnings"][0].as_str().unwrap().contains("cut off"));
}

#[test]
fn bad_json_names_line_and_column() {
    let err = parse_documents("{\n  \"a\": 1,\n  \"b\": @\n}").unwrap_err();
    match err {
        InputError::Json { line, column, .. } => assert_eq!((line, column), (3, 8)),
        e => panic!("{e}"),
    }
    assert!(matches!(
        parse_documents("{\"a\": 1"),
        Err(InputError::Json { line: 1, .. })
    ));
    assert_eq!(parse_documents(" \n "), Err(InputError::Empty));
}

#[test]
fn depth_and_count_are_bounded() {
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert!(matches!(
        parse_documents(&format!("\n  {deep}")),
        Err(InputError::TooDeep {
            line: 2,
            column: 3,
            ..
        })
    ));
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse_documents(&ok).is_ok());
    // Deeper than serde_json's own limit: an error, not a stack overflow.
    let very = "[".repeat(100_000);
    assert!(matches!(
        parse_documents(&very),
        Err(InputError::Json { .. })
    ));
    let many = "1\n".repeat(MAX_DOCUMENTS + 1);
    assert!(matches!(
        parse_documents(&many),
        Err(InputError::TooMany { line, .. }) if line == MAX_DOCUMENTS + 1
    ));
}
