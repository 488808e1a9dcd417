//! The unit tests of `wirespeed_report::html::markup`.

use wirespeed_report::html::markup::*;

#[test]
fn escaping_covers_content_and_attributes() {
    assert_eq!(
        escape("<script>alert(\"x\" & 'y')</script>"),
        "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
    );
    assert_eq!(escape("a\u{0}b\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
}

#[test]
fn columns_empty_in_every_row_are_left_out() {
    let mut t = HtmlTable::new(["a", "lost", "b"]);
    t.row(vec![Cell::text("1"), Cell::opt(None), Cell::num("2")]);
    let html = t.markup().into_string();
    assert!(
        html.contains("<th>a</th><th>b</th>") && !html.contains("lost"),
        "{html}"
    );
    assert_eq!(seconds(1.057e-17), "0 s");
}

#[test]
fn tables_escape_every_cell_and_heading() {
    let mut t = HtmlTable::new(["<th>"]);
    t.row(vec![
        Cell::text("<b>"),
        Cell::num("1&2"),
        Cell::Tone("\"bad\"".into(), Tone::Bad),
        Cell::text("\"><script>"),
    ]);
    let html = t.markup().into_string();
    assert!(
        !html.contains("<b>") && !html.contains("<script>"),
        "{html}"
    );
    assert!(html.contains("&lt;th&gt;") && html.contains("1&amp;2"));
    assert!(html.contains("class=\"bad\">&quot;bad&quot;"));
}

#[test]
fn units_come_from_field_names() {
    assert_eq!(by_unit("bits_per_second", 11_306_449_870.0), "11.31 Gbit/s");
    assert_eq!(by_unit("rtt_seconds", 0.000228), "228 us");
    assert_eq!(by_unit("delay_sum_s", -0.5), "-500 ms");
    assert_eq!(
        by_unit("send_buffer_granted_bytes", 4_194_304.0),
        "4,194,304 B"
    );
    assert_eq!(by_unit("lost_percent", 1.2345), "1.23 %");
    assert_eq!(by_unit("packets", 28047.0), "28,047");
    assert_eq!(by_unit("efficiency", 0.94148244), "0.9415");
    assert_eq!(number(f64::NAN), "-");
}

#[test]
fn unit_slips_the_issue_found_read_right() {
    assert_eq!(seconds(-1.973e-17), "0 s", "a tiny negative is 0");
    assert_eq!(by_unit("excess_delay_seconds", -1.973e-17), "0 s");
    assert_eq!(by_unit("held_back_max_us", 0.0), "0 us");
    assert_eq!(by_unit("held_back_max_us", 1500.0), "1.5 ms");
    assert_eq!(by_unit("pid", 7979.0), "7979");
    assert_eq!(by_unit("agent_port", 43519.0), "43519");
    assert_eq!(
        by_unit("rapid", 7979.0),
        "7,979",
        "only whole words name things"
    );
    assert_eq!(
        number(1_234_567.8),
        "1,234,568",
        "no 7-digit figure ungrouped"
    );
    assert_eq!(number(999.26), "999.3");
    assert_eq!(number(-4321.5), "-4,322");
}
