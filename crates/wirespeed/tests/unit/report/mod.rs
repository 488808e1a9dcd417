mod views;

use clap::Parser;
use std::path::PathBuf;
use wirespeed::report::*;

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: ReportArgs,
}

#[test]
fn files_are_required_and_the_page_defaults_to_report_html() {
    assert!(Wrapper::try_parse_from(["report"]).is_err());
    let w = Wrapper::try_parse_from(["report", "a.json", "dir"]).unwrap();
    assert_eq!(w.args.inputs.len(), 2);
    assert_eq!(w.args.output, PathBuf::from("report.html"));
    let w = Wrapper::try_parse_from(["report", "a.json", "-o", "-"]).unwrap();
    assert_eq!(w.args.output, PathBuf::from("-"));
}

/// Issue 30: a library caller renders a saved result (here what iperf3 -J printed) into a
/// page held as a string, and gets the command's refusal of a path that is not there.
#[test]
fn a_library_caller_renders_a_report() {
    let saved = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/iperf3-tcp.json"
    ));
    let page = render(std::slice::from_ref(&saved)).unwrap();
    assert_eq!((page.documents, page.files), (1, 1));
    assert!(
        page.html.starts_with("<!DOCTYPE html>"),
        "{}",
        &page.html[..80]
    );
    assert!(page.html.contains("iperf3-tcp.json"));
    let err = render(&[PathBuf::from("/nonexistent/run.json")]).unwrap_err();
    assert!(
        format!("{err:#}").contains("/nonexistent/run.json"),
        "{err:#}"
    );
}

#[test]
fn positions_count_lines_and_characters() {
    assert_eq!(position(b"ab\ncd\xff", 5), (2, 3));
    assert_eq!(position(b"\xff", 0), (1, 1));
}
