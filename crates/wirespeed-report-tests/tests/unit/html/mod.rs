//! The page frame for unknown schemas, no input, large documents and arbitrary JSON, with no
//! typed views (the commands' own views and their tests live in the binary, beside the result
//! types: `crates/wirespeed/src/report_views`).

use proptest::prelude::*;

mod generic;
mod input;
mod markup;
mod plots;
/// Shared with the binary's tests of the typed views, which include it by the same path.
#[path = "../../../../wirespeed-report/src/html/testing.rs"]
mod testing;

use testing::{arbitrary_json, check_the_page_frame};
use wirespeed_report::html::*;

fn render(entries: &[Entry]) -> String {
    render_page(entries, &FieldsOnly)
}

#[test]
fn the_page_frame_holds_with_no_views() {
    check_the_page_frame(&render);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn any_json_renders_without_panicking(docs in prop::collection::vec(arbitrary_json(), 0..4)) {
        let entries: Vec<Entry> = docs
            .into_iter()
            .map(|document| Entry { source: "p".into(), document })
            .collect();
        let html = render(&entries);
        prop_assert!(html.ends_with("</html>\n"));
        prop_assert!(!html.contains("<script"));
    }

    #[test]
    fn any_text_parses_or_fails_cleanly(text in "\\PC{0,64}") {
        let _ = parse_documents(&text);
    }
}
