//! `--json-format iperf3` against what iperf3 itself prints on this machine: every key path
//! `iperf3 -J` emits for a test exists in wirespeed's document for the same test, with the same
//! JSON type, so a consumer of iperf3's JSON reads wirespeed's unchanged.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::util::{ChildGuard, wirespeed};

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every path in `v` (array elements as `[]`) with the type found there.
fn paths(v: &Value, at: String, out: &mut BTreeMap<String, &'static str>) {
    out.insert(at.clone(), kind(v));
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                paths(child, format!("{at}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// Runs `iperf3 -c` with `args` against a one-off iperf3 server on loopback; None when iperf3 is
/// not installed (scripts/install-deps.sh installs it). A run iperf3 itself reports as failed
/// (its "error" key, seen on a busy machine even with exit status 0) is no reference: it is
/// tried again with a fresh server, three times at most.
fn iperf3(args: &[&str]) -> Option<Value> {
    Command::new("iperf3").arg("--version").output().ok()?;
    let mut last = Value::Null;
    for _attempt in 0..3 {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port().to_string()
        };
        let _server = ChildGuard::new(
            Command::new("iperf3")
                .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("iperf3 -s starts"),
        );
        // The server listens within moments; retry the connection briefly, not blind sleeps.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = Command::new("iperf3")
                .args(["-c", "127.0.0.1", "-p", &port, "-J"])
                .args(args)
                .output()
                .expect("iperf3 -c runs");
            last = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            if out.status.success() && last.get("error").is_none() && last.get("end").is_some() {
                return Some(last);
            }
            // Refused before the server listened: try again; any other failure ends the attempt.
            let refused = last["error"]
                .as_str()
                .is_some_and(|e| e.contains("Connection refused"));
            if !refused || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("iperf3 -c {args:?} failed three times: {}", last["error"]);
}

/// A scoped thread's result, its panic passed on as the test's own.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn compare(theirs: &Value, ours: &Value, case: &str) {
    let mut want = BTreeMap::new();
    paths(theirs, String::new(), &mut want);
    let mut have = BTreeMap::new();
    paths(ours, String::new(), &mut have);
    let mut wrong = Vec::new();
    for (path, t) in &want {
        // `error` is there only when a run failed: ours has it then too.
        if *t == "null" || path == ".error" {
            continue;
        }
        match have.get(path) {
            None => wrong.push(format!("{path}: missing (iperf3 has a {t})")),
            Some(h) if h != t => wrong.push(format!("{path}: {h}, iperf3 has a {t}")),
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{case}:\n{}", wrong.join("\n"));
}

/// The four cases run at once, each with iperf3's run beside ours: the test judges key paths
/// and types, never a figure, so every flow is paced (10 Mbit/s a stream), and the eight 1 s
/// runs take about 1.5 s instead of 9 s one after another, at a few percent of a core.
#[test]
fn iperf3_layout_has_every_key_iperf3_prints_with_its_type() {
    if Command::new("iperf3").arg("--version").output().is_err() {
        eprintln!("iperf3 is not installed: the layout is not compared");
        return;
    }
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (
            "tcp",
            &["-t", "1", "-b", "10M"],
            &["tcp", "-t", "1", "-b", "10M"],
        ),
        (
            "tcp --bidir",
            &["-t", "1", "--bidir", "-b", "10M"],
            &["tcp", "-t", "1", "--bidir", "-b", "10M"],
        ),
        (
            "tcp -P 2 -R",
            &["-t", "1", "-P", "2", "-R", "-b", "10M"],
            &["tcp", "-t", "1", "-P", "2", "-R", "-b", "10M"],
        ),
        (
            "udp -b 10M",
            &["-t", "1", "-u", "-b", "10M"],
            &["udp", "-t", "1", "-b", "10M"],
        ),
    ];
    let runs: Vec<(&str, Option<Value>, crate::util::Run)> = std::thread::scope(|s| {
        let started: Vec<_> = cases
            .iter()
            .map(|&(case, theirs, ours)| {
                let reference = s.spawn(move || iperf3(theirs));
                let run = s.spawn(move || {
                    let mut args = ours.to_vec();
                    args.extend(["--json-format", "iperf3"]);
                    wirespeed(&args)
                });
                (case, reference, run)
            })
            .collect();
        started
            .into_iter()
            .map(|(case, reference, run)| (case, joined(reference), joined(run)))
            .collect()
    });
    for (case, reference, run) in runs {
        let reference = reference.expect("iperf3 --version ran, so iperf3 -c runs");
        assert_eq!(run.status, 0, "{case}: {}", run.stderr);
        let doc: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
        compare(&reference, &doc, case);
        // And the figures are wirespeed's own: the received sum is the test's.
        assert!(
            doc["end"]["sum_received"]["bytes"].as_u64().unwrap() > 0,
            "{case}"
        );
        // --bidir: the way back is its own sum, and its streams are not the client's sending
        // ones, as iperf3 marks them.
        if case.ends_with("--bidir") {
            assert!(
                doc["end"]["sum_received_bidir_reverse"]["bytes"]
                    .as_u64()
                    .unwrap()
                    > 0
            );
            let marks = |v: &Value| -> Vec<bool> {
                v["end"]["streams"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["sender"]["sender"].as_bool().unwrap())
                    .collect()
            };
            assert_eq!(marks(&doc), marks(&reference), "{case}");
            assert_eq!(doc["end"]["sum_sent_bidir_reverse"]["sender"], false);
        }
    }
}

#[test]
fn iperf3_layout_and_json_stream_are_refused_together() {
    let run = wirespeed(&["tcp", "--json-format", "iperf3", "--json-stream"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--json-stream"), "{}", run.stderr);
}

/// The other way: `wirespeed report` reads what `iperf3 -J` printed on this machine (and what
/// `--json-format iperf3` printed) and compares it with a wirespeed run by the same figures.
/// Both are `--bidir` runs with a warm-up: the report shows each direction's totals and marks
/// the omitted interval, and wirespeed's layout marks it as iperf3 does. The three runs go at
/// once, each paced at 10 Mbit/s a stream: the report compares what each run measured, and
/// nothing here judges a rate (2 s instead of 5 one after another).
#[test]
fn report_reads_iperf3_files_beside_wirespeed_runs() {
    if Command::new("iperf3").arg("--version").output().is_err() {
        eprintln!("iperf3 is not installed: the report is not checked against it");
        return;
    }
    let (reference, ours, layout) = std::thread::scope(|s| {
        // iperf3's -O comes on top of its -t; wirespeed's is part of it: 2 s each.
        let reference = s.spawn(|| iperf3(&["-t", "1", "-O", "1", "--bidir", "-b", "10M"]));
        let ours = s.spawn(|| wirespeed(&["tcp", "-t", "1", "-b", "10M", "--json"]));
        let layout = wirespeed(&[
            "tcp",
            "-t",
            "2",
            "-O",
            "1",
            "--bidir",
            "-b",
            "10M",
            "--json-format",
            "iperf3",
        ]);
        (joined(reference), joined(ours), layout)
    });
    let reference = reference.expect("iperf3 --version ran, so iperf3 -c runs");
    let dir = std::env::temp_dir().join(format!("ws-iperf3-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let theirs = dir.join("iperf3.json");
    std::fs::write(&theirs, reference.to_string()).unwrap();
    assert_eq!(ours.status, 0, "{}", ours.stderr);
    std::fs::write(dir.join("wirespeed.json"), &ours.stdout).unwrap();
    assert_eq!(layout.status, 0, "{}", layout.stderr);
    let doc: Value = serde_json::from_str(&layout.stdout).unwrap();
    for key in ["sum", "sum_bidir_reverse"] {
        assert_eq!(doc["intervals"][0][key]["omitted"], true, "{key}: {doc}");
        let last = doc["intervals"].as_array().unwrap().last().unwrap();
        assert_eq!(last[key]["omitted"], false, "{key}: {doc}");
    }
    std::fs::write(dir.join("layout.json"), &layout.stdout).unwrap();
    let page = dir.join("page.html");
    let run = wirespeed(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap_or_default();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(html.contains("Comparison: 3 × tcp"), "{html}");
    // Both directions of both --bidir documents, and their warm-up marked.
    for mark in [
        "both ways at once (--bidir)",
        "<td>client to server: received</td>",
        "<td>server to client: received</td>",
        "<td>omitted (warm-up, -O)</td>",
    ] {
        assert_eq!(html.matches(mark).count(), 2, "{mark}: {html}");
    }
    assert!(html.contains("written by iperf 3."), "{html}");
    assert!(html.contains("written by wirespeed "), "{html}");
    assert!(
        html.contains("<td>received rate</td><td class=\"num\">3</td>"),
        "every run's received rate compared"
    );
}
