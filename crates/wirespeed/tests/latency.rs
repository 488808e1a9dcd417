//! `wirespeed latency` end to end on loopback: the document's shape and sense, `--rr` and
//! `--rr --connect` counted alike at both ends, an agent in another process with a key, bad
//! input refused before any work, and an interrupt giving a partial result with status 3. The
//! ground truth across an emulated link is in `lab::latency::latency_under_load_...`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{ServeProcess, assert_one_line_error, wirespeed};

fn json(args: &[&str]) -> serde_json::Value {
    let run = wirespeed(args);
    assert_eq!(run.status, 0, "{args:?}: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[test]
fn latency_on_loopback_reports_every_probe_kind_idle_and_loaded() {
    let doc = json(&["latency", "--idle", "1s", "-t", "2s", "-P", "1", "--json"]);
    assert_eq!(doc["schema"], "wirespeed.latency.v1");
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert!(
        typed.findings.iter().any(|f| f.kind == "responsiveness"
            && f.evidence["loaded_rpm"]
                .as_f64()
                .is_some_and(|rpm| rpm > 0.0)),
        "{:?}",
        typed.findings
    );
    let r = &doc["result"];
    let kinds = r["kinds"].as_array().unwrap();
    let names: Vec<&str> = kinds.iter().map(|k| k["kind"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "udp_echo",
            "tcp_connect",
            "rr_new_connection",
            "rr_kept_connection"
        ]
    );
    for k in kinds {
        for phase in ["idle", "loaded"] {
            let s = &k[phase];
            assert!(s["probes"].as_u64().unwrap() > 0, "{k}");
            let (min, p50, p99, max) = (
                s["min_ms"].as_f64().unwrap(),
                s["p50_ms"].as_f64().unwrap(),
                s["p99_ms"].as_f64().unwrap(),
                s["max_ms"].as_f64().unwrap(),
            );
            assert!(0.0 < min && min <= p50 && p50 <= p99 && p99 <= max, "{k}");
        }
    }
    assert!(r["upload_bits_per_second"].as_f64().unwrap() > 0.0);
    assert!(r["download_bits_per_second"].as_f64().unwrap() > 0.0);
    assert!(r["probe_share_percent"].as_f64().unwrap() < 1.0);
    assert!(r["rpm_loaded"].as_f64().unwrap() > 0.0);
    assert_eq!(r["partial"], false);
    let phases: Vec<&str> = r["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases.first(), Some(&"idle"));
    assert!(phases.contains(&"loaded"), "{phases:?}");
    let verdicts = doc["verdicts"].to_string();
    assert!(
        verdicts.contains("loopback") || verdicts.contains("no measurable delay"),
        "{verdicts}"
    );
    assert!(verdicts.contains("RPM"), "{verdicts}");
    // The split on loopback: the load's bytes wait in the sockets' buffers (measured through
    // sock_diag), the qdisc of lo is noqueue and holds nothing, and there is no link.
    let queues = r["queues"].as_array().unwrap();
    let kind = |k: &str| queues.iter().find(|q| q["queue"] == k);
    let mean = |k: &str| kind(k).map_or(f64::NAN, |q| q["mean_bytes"].as_f64().unwrap());
    let qdisc = kind("qdisc").expect("lo's qdisc is sampled");
    assert_eq!(qdisc["location"], "the qdisc of lo (noqueue)", "{qdisc}");
    assert_eq!(mean("qdisc"), 0.0, "{qdisc}");
    assert_eq!(qdisc["probes_wait_here"], true);
    assert!(
        mean("sender_socket_buffers") + mean("receiver_socket_buffers") > 0.0,
        "{queues:?}"
    );
    assert_eq!(
        kind("sender_socket_buffers").unwrap()["probes_wait_here"],
        false
    );
    assert!(
        kind("lab_link").is_none() && kind("path").is_none(),
        "{queues:?}"
    );
    assert!(
        verdicts.contains("where the load's bytes waited")
            && verdicts.contains("on loopback the qdisc is noqueue and there is no link"),
        "{verdicts}"
    );
}

#[test]
fn rr_and_crr_count_the_same_transactions_at_both_ends() {
    for extra in [&[][..], &["--connect"][..]] {
        let mut args = vec![
            "latency",
            "--rr",
            "-t",
            "1s",
            "--request",
            "64",
            "--response",
            "1KiB",
            "--json",
        ];
        args.extend_from_slice(extra);
        let doc = json(&args);
        assert_eq!(doc["schema"], "wirespeed.latency-rr.v1");
        let typed = crate::findings::assert_typed(&doc.to_string());
        assert_eq!(
            typed.findings[0].kind, "request_response",
            "{:?}",
            typed.findings
        );
        assert_eq!(
            typed.findings[0].evidence["new_connection"],
            !extra.is_empty()
        );
        let r = &doc["result"];
        let n = r["transactions"].as_u64().unwrap();
        assert!(n > 10, "{r}");
        assert_eq!(r["agent_transactions"].as_u64(), Some(n), "{r}");
        assert_eq!(r["new_connection"], !extra.is_empty());
        assert_eq!(r["connect"].is_object(), !extra.is_empty(), "{r}");
        let tps = r["transactions_per_second"].as_f64().unwrap();
        let secs = r["seconds"].as_f64().unwrap();
        assert!((tps * secs - n as f64).abs() < 1.0);
    }
}

#[test]
fn latency_against_an_agent_with_a_key() {
    let dir = std::env::temp_dir().join(format!("ws-latency-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef").unwrap();
    let key = key.to_str().unwrap();
    let agent = ServeProcess::start(&["--auth-key-file", key]);
    let port = agent.port.to_string();
    let doc = json(&[
        "latency",
        "127.0.0.1",
        "-p",
        &port,
        "--auth-key-file",
        key,
        "--idle",
        "500ms",
        "-t",
        "1s",
        "-P",
        "1",
        "--direction",
        "down",
        "--json",
    ]);
    assert_eq!(doc["parameters"]["in_process_agent"], false);
    assert!(doc["result"]["download_bits_per_second"].as_f64().unwrap() > 0.0);
    assert!(doc["result"]["upload_bits_per_second"].is_null());
    // Without the key the agent refuses, and nothing is measured.
    let run = wirespeed(&["latency", "127.0.0.1", "-p", &port, "--rr", "-t", "1s"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--auth-key-file"), "{}", run.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_latency_input_is_refused_before_any_work() {
    for (args, needle) in [
        (&["latency", "-t", "100ms"][..], "-t must be at least 500ms"),
        (&["latency", "--idle", "2h"][..], "at most 1h"),
        (
            &["latency", "--probe-interval", "0s"][..],
            "--probe-interval",
        ),
        (&["latency", "--connect"][..], "--rr"),
        (&["latency", "--rr", "--request", "0"][..], "--request 0"),
        (&["latency", "--rr", "--response", "1MiB"][..], "--response"),
        (&["latency", "-P", "0"][..], "--parallel"),
    ] {
        let run = wirespeed(args);
        assert_one_line_error(&run, needle);
    }
}

/// Interrupted, latency prints what it measured marked partial and exits 128 + the signal
/// (docs/exit-status.md), never 3 and never NaN: cut in its loaded phase (SIGINT, JSON) and in
/// its idle phase before any load (SIGTERM, text).
#[test]
fn an_interrupted_latency_run_is_partial_with_the_signals_status() {
    for (signal, status, after, extra) in [
        (libc::SIGINT, 130, Duration::from_millis(2500), "--json"),
        (libc::SIGTERM, 143, Duration::from_millis(1000), "-f"),
    ] {
        let mut args = vec!["latency", "--idle", "2s", "-t", "20s", "-P", "1", extra];
        if extra == "-f" {
            args.push("m");
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read stdout as it comes, so a long document cannot fill the pipe and stall the child.
        let mut pipe = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
            text
        });
        std::thread::sleep(after);
        // SAFETY: signalling a child this test started, by its PID.
        unsafe { libc::kill(child.id() as i32, signal) };
        let t0 = Instant::now();
        let out = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("no end 20 s after signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = reader.join().unwrap();
        assert_eq!(out.code(), Some(status), "{stdout}");
        assert!(!stdout.contains("NaN"), "no NaN in the output: {stdout}");
        if extra == "--json" {
            let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["result"]["partial"], true);
            assert!(doc["verdicts"].as_array().unwrap().is_empty(), "{doc}");
        } else {
            assert!(stdout.contains("round trip (ms)"), "{stdout}");
            assert!(stdout.contains("partial result"), "{stdout}");
        }
    }
}

#[test]
fn json_stream_and_plots() {
    let dir = std::env::temp_dir().join(format!("ws-latency-plot-{}", std::process::id()));
    let run = wirespeed(&[
        "latency",
        "--idle",
        "1s",
        "-t",
        "1s",
        "-P",
        "1",
        "--json-stream",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (last, intervals) = lines.split_last().unwrap();
    assert_eq!(last["schema"], "wirespeed.latency.v1");
    assert!(!intervals.is_empty());
    assert!(intervals.iter().all(|i| i["interval"]["phase"].is_string()));
    for svg in ["latency-over-time.svg", "latency-cdf.svg"] {
        let text = std::fs::read_to_string(dir.join(svg)).unwrap();
        assert!(text.starts_with("<svg"), "{svg}");
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // A reader that stops after the first line (`| head -1`): the run ends quietly, with no
    // panic, as the docs say of a broken pipe.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args([
            "latency",
            "--idle",
            "1s",
            "-t",
            "1s",
            "-P",
            "1",
            "--json-stream",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.contains("\"interval\""), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
}
