//! The page for real documents of every schema (saved from wirespeed runs into
//! `crates/wirespeed/testdata/report/`), through the commands' typed views,
//! for hostile strings, unknown schemas, no input, and arbitrary JSON.

use proptest::prelude::*;
use serde_json::{Value, json};

use wirespeed_report::html::{Entry, parse_documents};

// The report crate's shared checks, included by path rather than through a cargo feature: a
// feature turned on by a dev-dependency builds wirespeed-report, and so this whole crate, once
// for `cargo test` and again for `cargo build`, a second compile of the largest crate each
// time a developer alternates the two. The file names nothing of its crate but `super::Entry`.
#[path = "../../../../../wirespeed-report/src/html/testing.rs"]
mod testing;
use testing::{arbitrary_json, assert_self_contained, check_the_page_frame};

use wirespeed::report::views::CommandViews;

fn render_page(entries: &[Entry]) -> String {
    wirespeed_report::html::render_page(entries, &CommandViews)
}

fn entries(name: &str, text: &str) -> Vec<Entry> {
    parse_documents(text)
        .unwrap()
        .into_iter()
        .map(|document| Entry {
            source: name.into(),
            document,
        })
        .collect()
}

fn page(name: &str, text: &str) -> String {
    render_page(&entries(name, text))
}

fn svg_count(html: &str) -> usize {
    html.matches("<svg class=\"plot\"").count()
}

#[test]
fn tcp_shows_totals_streams_and_the_rate_over_time() {
    let html = page(
        "tcp.json",
        include_str!("../../../../testdata/report/tcp.json"),
    );
    assert_self_contained(&html);
    for needle in [
        "<h2>1. tcp</h2>",
        "wirespeed.tcp.v1",
        "<h3>Totals</h3>",
        "<h3>Streams</h3>",
        "<h3>Rate over time</h3>",
        "stream 0 upload sender",
        "stream 1 upload sender",
        "sum sent",
        "host name",
        "AMD EPYC",
        "Gbit/s",
        "<h3>Verdicts</h3>",
        "<h3>Parameters</h3>",
        "<details><summary>Every field</summary>",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn udp_shows_loss_and_jitter() {
    let html = page(
        "udp.json",
        include_str!("../../../../testdata/report/udp.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("<th>lost</th>") && html.contains("<th>jitter</th>"));
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn sweep_draws_its_heatmap_and_diagonal() {
    let html = page(
        "sweep.json",
        include_str!("../../../../testdata/report/sweep.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("Send = receive buffer (the seed&#39;s table)"));
    assert!(html.contains("task-to-task MiB/s (median)") && html.contains("send = receive buffer"));
    assert_eq!(svg_count(&html), 2);
}

#[test]
fn results_files_are_one_series_each() {
    let sweep = page(
        "runs.jsonl",
        include_str!("../../../../testdata/report/sweep-runs.jsonl"),
    );
    assert_self_contained(&sweep);
    assert!(sweep.contains("18 of 18 planned runs finished"), "{sweep}");
    assert_eq!(svg_count(&sweep), 2);
    let load = page(
        "load.jsonl",
        include_str!("../../../../testdata/report/load-runs.jsonl"),
    );
    assert_self_contained(&load);
    assert!(load.contains("4 of 4 planned tests finished"));
    assert!(load.contains("<h3>Tests</h3>") && load.contains("1500 bytes"));
    assert_eq!(svg_count(&load), 1);
}

#[test]
fn load_plots_bit_rate_against_hosts_beside_the_model() {
    let html = page(
        "load.json",
        include_str!("../../../../testdata/report/load.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("total bit rate against hosts") && html.contains("64 bytes, model"));
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn probe_plots_minimum_rtt_with_fitted_lines() {
    let html = page(
        "probe.json",
        include_str!("../../../../testdata/report/probe.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("<h3>Hops</h3>") && html.contains("minimum RTT, ms"));
    assert!(
        html.contains("\n127.0.0.1\n"),
        "the destination names its curve"
    );
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn sim_plots_efficiency_against_hosts() {
    let html = page(
        "sim.json",
        include_str!("../../../../testdata/report/sim.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("efficiency against hosts") && html.contains("1536 bytes"));
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn reproduce_colours_its_verdicts() {
    let html = page(
        "reproduce.json",
        include_str!("../../../../testdata/report/reproduce.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("<td class=\"good\">within</td>"));
    assert!(html.contains("<td class=\"bad\">outside</td>"));
    assert!(html.contains("<h3>Ground truth</h3>"));
}

#[test]
fn envelope_and_autoneg_show_their_figures() {
    let html = page(
        "envelope.json",
        include_str!("../../../../testdata/report/envelope.json"),
    );
    assert!(
        html.contains("<td>goodput ceiling</td><td class=\"num\">9.415 Mbit/s</td>"),
        "{html}"
    );
    assert!(
        html.contains("<details open>"),
        "the envelope's fields are its content"
    );
    let html = page(
        "autoneg.json",
        include_str!("../../../../testdata/report/autoneg.json"),
    );
    assert!(
        html.contains("<details><summary>"),
        "autoneg has its own tables"
    );
    assert!(html.contains("<td class=\"bad\">duplex mismatch</td>"));
}

#[test]
fn a_json_stream_is_its_final_document() {
    let html = page(
        "stream.jsonl",
        include_str!("../../../../testdata/report/tcp-stream.jsonl"),
    );
    assert_self_contained(&html);
    assert!(html.contains("1 document,"));
    assert_eq!(svg_count(&html), 1);
}

#[test]
fn several_runs_of_a_command_get_a_comparison() {
    let tcp = include_str!("../../../../testdata/report/tcp.json");
    let mut docs = entries("a.json", tcp);
    docs.extend(entries("b.json", tcp));
    docs.extend(entries(
        "c.json",
        include_str!("../../../../testdata/report/envelope.json"),
    ));
    let html = render_page(&docs);
    assert_self_contained(&html);
    assert!(html.contains("Comparison: 2 × tcp"), "{html}");
    assert!(html.contains("<th>median</th><th>minimum</th><th>maximum</th><th>#1</th><th>#2</th>"));
    assert!(html.contains("<td>received rate</td><td class=\"num\">2</td>"));
    assert!(
        !html.contains("Comparison: 1"),
        "one envelope: nothing to compare"
    );
    assert!(html.contains("<a href=\"#doc-3\">envelope</a>"));
    assert!(!html.contains("parameter test.streams"), "same parameters");
    let mut other: Value = serde_json::from_str(tcp).unwrap();
    other["parameters"]["test"]["streams"] = json!(1);
    docs[1].document = other;
    let html = render_page(&docs);
    let row = "<tr><td>parameter test.streams</td><td></td><td></td><td></td><td></td><td>2</td><td>1</td></tr>";
    assert!(html.contains(row), "the differing parameter, per document");
}

/// What `iperf3 -J` (3.12) printed on this machine sits beside wirespeed's own runs: one
/// comparison table, the same headline rows, iperf3's units converted.
#[test]
fn iperf3_documents_are_compared_with_wirespeed_runs() {
    let mut docs = entries(
        "tcp.json",
        include_str!("../../../../testdata/report/tcp.json"),
    );
    docs.extend(entries(
        "iperf3-tcp.json",
        include_str!("../../../../testdata/report/iperf3-tcp.json"),
    ));
    let html = render_page(&docs);
    assert_self_contained(&html);
    assert!(html.contains("<h2>2. tcp</h2>"), "{html}");
    assert!(
        html.contains("JSON layout, written by iperf 3.12"),
        "{html}"
    );
    assert!(html.contains("Comparison: 2 × tcp"), "{html}");
    for row in ["received rate", "sent rate", "retransmits", "CPU here"] {
        assert!(
            html.contains(&format!("<td>{row}</td><td class=\"num\">2</td>")),
            "{row} compared over both documents"
        );
    }
    // iperf3's 24.42 Gbit/s received, in the table as wirespeed writes rates.
    assert!(html.contains("24.42 Gbit/s"), "{html}");
    // The RTTs iperf3 gives in microseconds (min 41, max 46) are shown as times.
    assert!(html.contains("<h3>Streams (sender)</h3>"));
    assert!(
        html.contains(">41 us<") && html.contains(">46 us<"),
        "{html}"
    );
    // Two plots: wirespeed's rate over time and iperf3's, drawn by the same code.
    assert_eq!(svg_count(&html), 2);
    // A document without parameters does not make every parameter "differ".
    assert!(!html.contains("parameter test."), "{html}");
}

#[test]
fn iperf3_udp_loss_and_jitter_arrive_in_wirespeeds_units() {
    let iperf3: Value =
        serde_json::from_str(include_str!("../../../../testdata/report/iperf3-udp.json")).unwrap();
    let run: wirespeed::throughput::iperf3::html::Iperf3Run =
        serde_json::from_value(iperf3.clone()).unwrap();
    assert_eq!(run.command(), "udp");
    let headlines = run.headlines();
    let get = |label: &str| headlines.iter().find(|h| h.0 == label).map(|h| (h.1, h.2));
    let jitter_ms = iperf3["end"]["sum_received"]["jitter_ms"].as_f64().unwrap();
    assert_eq!(get("jitter"), Some(("jitter_seconds", jitter_ms / 1e3)));
    assert_eq!(get("lost"), Some(("lost_percent", 0.0)));
    assert_eq!(get("retransmits"), None, "UDP has no retransmits");
    let received = iperf3["end"]["sum_received"]["bits_per_second"].as_f64();
    assert_eq!(get("received rate").map(|h| h.1), received);
    let mut docs = entries(
        "udp.json",
        include_str!("../../../../testdata/report/udp.json"),
    );
    docs.extend(entries("iperf3-udp.json", &iperf3.to_string()));
    let html = render_page(&docs);
    assert!(html.contains("Comparison: 2 × udp"), "{html}");
    assert!(
        html.contains("<td>jitter</td><td class=\"num\">2</td>"),
        "{html}"
    );
}

#[test]
fn a_failed_iperf3_run_says_so_and_lookalikes_are_not_iperf3() {
    let html = page(
        "iperf3-error.json",
        include_str!("../../../../testdata/report/iperf3-error.json"),
    );
    assert_self_contained(&html);
    assert!(html.contains("<h2>1. iperf3</h2>"), "{html}");
    assert!(
        html.contains(
            "iperf3 reported the test as failed: unable to connect to server: Connection refused"
        ),
        "{html}"
    );
    // Another program's document with an iperf-like head is not read as iperf3's.
    let html = render_page(&[Entry {
        source: "x".into(),
        document: json!({"start": {"version": "iperf 2.1"}, "end": {}}),
    }]);
    assert!(html.contains("a document without a schema"), "{html}");
    // An iperf3 document with a damaged field is shown with the reason, not dropped.
    let mut damaged: Value =
        serde_json::from_str(include_str!("../../../../testdata/report/iperf3-tcp.json")).unwrap();
    damaged["end"]["sum_sent"]["bytes"] = json!("many");
    let html = render_page(&[Entry {
        source: "x".into(),
        document: damaged,
    }]);
    assert!(
        html.contains("an iperf3 -J document this report cannot read ("),
        "{html}"
    );
}

#[test]
fn the_page_frame_holds_with_the_commands_views() {
    check_the_page_frame(&render_page);
}

const HOSTILE: &str = "<script>alert('x')</script>\" onload=\"evil()\" & <img src=x>";

#[test]
fn every_string_from_a_file_is_escaped() {
    let mut doc: Value =
        serde_json::from_str(include_str!("../../../../testdata/report/tcp.json")).unwrap();
    doc["host"]["hostname"] = json!(HOSTILE);
    doc["host"]["cpu_model"] = json!(HOSTILE);
    doc["parameters"]["agent"] = json!(HOSTILE);
    doc["parameters"][HOSTILE] = json!(HOSTILE);
    doc["verdicts"] = json!([HOSTILE]);
    doc["warnings"] = json!([HOSTILE]);
    doc["started_at"] = json!(HOSTILE);
    doc["result"]["error"] = json!(HOSTILE);
    doc["result"]["intervals"][0]["streams"][0]["role"] = json!(HOSTILE);
    doc["result"]["end"]["streams"][0]["flow"] = json!(HOSTILE);
    let mut reproduce: Value =
        serde_json::from_str(include_str!("../../../../testdata/report/reproduce.json")).unwrap();
    reproduce["result"]["comparisons"][0]["rows"][0]["verdict"] = json!(HOSTILE);
    reproduce["result"]["comparisons"][0]["title"] = json!(HOSTILE);
    let html = render_page(&[
        Entry {
            source: HOSTILE.into(),
            document: doc,
        },
        Entry {
            source: "r".into(),
            document: reproduce,
        },
        Entry {
            source: "s".into(),
            document: json!({"schema": HOSTILE, HOSTILE: [{HOSTILE: HOSTILE}]}),
        },
    ]);
    assert_self_contained(&html);
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<img") && !lower.contains("onload=\"evil"));
    assert!(html.contains(
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot; onload=&quot;evil()&quot; &amp;"
    ));
    assert!(html.contains("Content-Security-Policy"));
}

const FIXTURES: &[&str] = &[
    include_str!("../../../../testdata/report/tcp.json"),
    include_str!("../../../../testdata/report/udp.json"),
    include_str!("../../../../testdata/report/sweep.json"),
    include_str!("../../../../testdata/report/sweep-runs.jsonl"),
    include_str!("../../../../testdata/report/load.json"),
    include_str!("../../../../testdata/report/load-runs.jsonl"),
    include_str!("../../../../testdata/report/probe.json"),
    include_str!("../../../../testdata/report/sim.json"),
    include_str!("../../../../testdata/report/reproduce.json"),
    include_str!("../../../../testdata/report/envelope.json"),
    include_str!("../../../../testdata/report/autoneg.json"),
    include_str!("../../../../testdata/report/latency.json"),
    include_str!("../../../../testdata/report/latency-rr.json"),
    include_str!("../../../../testdata/report/iperf3-tcp.json"),
    include_str!("../../../../testdata/report/iperf3-udp.json"),
    include_str!("../../../../testdata/report/iperf3-error.json"),
];

/// Replaces every number in `v`, in order, by the next of `with` (cyclically).
fn replace_numbers(v: &mut Value, with: &[Value], next: &mut usize) {
    match v {
        Value::Number(_) => {
            *v = with[*next % with.len()].clone();
            *next += 1;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| replace_numbers(i, with, next)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|i| replace_numbers(i, with, next)),
        _ => {}
    }
}

fn number_or_damage() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![
            Just(0.0),
            Just(-1.0),
            Just(1e308),
            Just(-1e308),
            Just(1e-310)
        ]
        .prop_map(Value::from),
        Just(Value::Null),
        Just(json!("x")),
        Just(json!([])),
        Just(json!({})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn any_json_renders_without_panicking(docs in prop::collection::vec(arbitrary_json(), 0..4)) {
        let entries: Vec<Entry> = docs
            .into_iter()
            .map(|document| Entry { source: "p".into(), document })
            .collect();
        let html = render_page(&entries);
        prop_assert!(html.ends_with("</html>\n"));
        prop_assert!(!html.contains("<script"));
    }

    #[test]
    fn real_documents_with_any_numbers_render(
        which in 0..FIXTURES.len(),
        with in prop::collection::vec(number_or_damage(), 1..16),
    ) {
        let mut docs = parse_documents(FIXTURES[which]).unwrap();
        let mut next = 0;
        docs.iter_mut().for_each(|d| replace_numbers(d, &with, &mut next));
        let entries: Vec<Entry> = docs
            .into_iter()
            .map(|document| Entry { source: "p".into(), document })
            .collect();
        let html = render_page(&entries);
        prop_assert!(html.ends_with("</html>\n"));
    }
}

/// A document of a known command that does not decode into its type (a field renamed or
/// missing, as a damaged file or another version would have it) is shown field by field with
/// the decoder's reason, never as blank tables.
#[test]
fn a_document_that_does_not_fit_its_type_says_why() {
    let mut doc: Value =
        serde_json::from_str(include_str!("../../../../testdata/report/tcp.json")).unwrap();
    doc["result"]["end"]
        .as_object_mut()
        .unwrap()
        .remove("sum_received");
    let html = render_page(&[Entry {
        source: "damaged".into(),
        document: doc,
    }]);
    assert!(
        html.contains(
            "does not match this version&#39;s result type (missing field `sum_received`"
        ),
        "{html}"
    );
    assert!(!html.contains("<h3>Totals</h3>"));
    assert!(html.contains("<details open>"));
}
