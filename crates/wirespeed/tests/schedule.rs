//! `--every` schedules (issue 18): runs on a schedule against an agent this test starts on
//! port 0, each run a record of the results file, never overlapping; a peer that goes down
//! mid-schedule gives recorded failures and status 3; `--resume` continues; bad flags are one
//! line and status 2. Nothing here asserts a timing: only the order of recorded times.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::util::{ServeProcess, assert_one_line_error, wirespeed};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ws-schedule-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The plan and the records of a results file.
fn read(path: &Path) -> (Value, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let plan = lines.next().expect("a plan line");
    (plan, lines.collect())
}

fn time(record: &Value, field: &str) -> SystemTime {
    humantime::parse_rfc3339(record[field].as_str().unwrap()).unwrap()
}

/// Each run starts after the previous one ended, in a later slot, at or after its slot.
fn assert_never_overlap(plan: &Value, records: &[Value]) {
    let start = humantime::parse_rfc3339(plan["start"].as_str().unwrap()).unwrap();
    let every = Duration::from_secs_f64(plan["every_seconds"].as_f64().unwrap());
    for pair in records.windows(2) {
        assert!(
            time(&pair[1], "started") >= time(&pair[0], "ended"),
            "runs overlap: {} / {}",
            pair[0],
            pair[1]
        );
        assert!(pair[1]["slot"].as_u64() > pair[0]["slot"].as_u64());
    }
    for r in records {
        let slot = u32::try_from(r["slot"].as_u64().unwrap()).unwrap();
        assert!(time(r, "started") >= start + every * slot, "{r}");
        assert!(time(r, "ended") >= time(r, "started"), "{r}");
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wirespeed starts")
}

/// Waits (at most 60 s) until the results file holds `lines` lines.
fn wait_for_lines(path: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(path).map_or(0, |t| t.lines().count()) < lines {
        assert!(
            Instant::now() < deadline,
            "{} never reached {lines} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tcp_every_1s_count_3_records_three_runs_that_never_overlap() {
    let agent = ServeProcess::start(&[]);
    let dir = temp("three");
    let results = dir.join("runs.jsonl");
    let port = agent.port.to_string();
    let run = wirespeed(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "0.5",
        "-i",
        "0",
        "--every",
        "1s",
        "--count",
        "3",
        "--slip",
        "100ms",
        "--results",
        results.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let (plan, records) = read(&results);
    assert_eq!(plan["schema"], "wirespeed.schedule-runs.v1");
    assert_eq!(plan["command"], "tcp");
    assert_eq!(plan["count"], 3);
    assert_eq!(plan["seed_source"], "os");
    assert_eq!(
        plan["arguments"],
        serde_json::json!(["127.0.0.1", "-p", port, "-t", "0.5", "-i", "0"])
    );
    assert_eq!(records.len(), 3);
    assert_never_overlap(&plan, &records);
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r["run"], k as u64 + 1);
        assert!(r["error"].is_null(), "{r}");
        assert_eq!(r["document"]["schema"], "wirespeed.tcp.v1");
        assert!(r["headline"].as_f64().unwrap() > 0.0);
        // The slip stays within --slip of the slot.
        let slip = time(r, "scheduled")
            .duration_since(
                humantime::parse_rfc3339(plan["start"].as_str().unwrap()).unwrap()
                    + Duration::from_secs(r["slot"].as_u64().unwrap()),
            )
            .unwrap();
        assert!(slip < Duration::from_millis(101), "{slip:?}");
    }
    // One line per run and the summary.
    assert_eq!(
        run.stdout.lines().filter(|l| l.starts_with("run ")).count(),
        3
    );
    assert!(run.stdout.contains("3 run(s), 0 failed"), "{}", run.stdout);
    assert!(run.stdout.contains("received rate: min "), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peer_down_mid_schedule_is_recorded_and_the_exit_status_says_so() {
    let agent = ServeProcess::start(&[]);
    let dir = temp("down");
    let results = dir.join("runs.jsonl");
    let port = agent.port.to_string();
    let child = spawn(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "0.3",
        "-i",
        "0",
        "--every",
        "1s",
        "--count",
        "3",
        "--json",
        "--results",
        results.to_str().unwrap(),
    ]);
    wait_for_lines(&results, 2);
    drop(agent); // killed by its PID: the next runs find nobody there
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let (_, records) = read(&results);
    assert_eq!(records.len(), 3, "the schedule went on after the failure");
    assert!(records[0]["error"].is_null(), "{}", records[0]);
    let failed = records.iter().filter(|r| !r["error"].is_null()).count();
    assert!(failed >= 1, "{records:?}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["schema"], "wirespeed.schedule.v1");
    assert_eq!(summary["result"]["runs"], 3);
    assert_eq!(summary["result"]["failed"], failed as u64);
    assert!(
        stderr.contains(&format!("{failed} of 3 scheduled run(s) failed")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resume_continues_a_schedule_stopped_by_sigint() {
    let agent = ServeProcess::start(&[]);
    let dir = temp("resume");
    let results = dir.join("runs.jsonl");
    let port = agent.port.to_string();
    let args = ["tcp", "127.0.0.1", "-p", &port, "-t", "0.3", "-i", "0"];
    let mut first: Vec<&str> = args.to_vec();
    first.extend([
        "--every",
        "1s",
        "--count",
        "3",
        "--results",
        results.to_str().unwrap(),
    ]);
    let child = spawn(&first);
    wait_for_lines(&results, 2);
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    let (_, kept) = read(&results);
    assert!(!kept.is_empty() && kept.len() < 3, "{kept:?}");
    // Changed arguments are refused, the same ones continue up to the plan's --count.
    let mut changed: Vec<&str> = args.to_vec();
    changed[5] = "0.4";
    changed.extend(["--resume", results.to_str().unwrap()]);
    assert_one_line_error(
        &wirespeed(&changed),
        "the arguments differ from the schedule's plan",
    );
    let mut again: Vec<&str> = args.to_vec();
    again.extend(["--resume", results.to_str().unwrap()]);
    let run = wirespeed(&again);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let (plan, records) = read(&results);
    assert_eq!(records.len(), 3, "the runs recorded count toward --count");
    assert_never_overlap(&plan, &records);
    let numbers: Vec<u64> = records.iter().map(|r| r["run"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert!(run.stdout.contains("3 run(s), 0 failed"), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_schedule_flags_are_one_line_and_status_2() {
    let dir = temp("bad");
    let r = dir.join("r.jsonl");
    let r = r.to_str().unwrap();
    for (args, needle) in [
        (
            &["tcp", "--every", "1s"][..],
            "--every needs a bound: add --count N",
        ),
        (&["udp", "--count", "3"][..], "add --every DURATION"),
        (
            &["probe", "127.0.0.1", "--every", "1s"][..],
            "add --max-runs N",
        ),
        (
            &["latency", "--every", "1s", "--count", "2", "--json-stream"][..],
            "drop --json-stream",
        ),
        (
            &["tcp", "--every", "1s", "--count", "2", "--json-stream"][..],
            "drop --json-stream",
        ),
        (
            &["tcp", "--every", "1s", "--count", "2", "--until", "1h"][..],
            "give one of them",
        ),
        (
            &["tcp", "--every", "100ms", "--count", "2"][..],
            "give 1 s to 366 days",
        ),
        (
            &["tcp", "--every", "1s", "--count", "2", "--slip", "2s"][..],
            "exceeds --every",
        ),
        (
            &["tcp", "--every", "1s", "--count", "0"][..],
            "give 1 to 100000",
        ),
        (
            &["tcp", "--every", "1s", "--until", "2001-01-01T00:00:00Z"][..],
            "is in the past",
        ),
        (
            &["tcp", "--every", "1s", "--until", "soon"][..],
            "neither an RFC 3339",
        ),
        (
            &["tcp", "--resume", r, "--every", "1s"][..],
            "cannot be used with",
        ),
        (&["tcp", "--resume", r][..], "cannot open"),
    ] {
        assert_one_line_error(&wirespeed(args), needle);
    }
    // A results file of another command is refused, not continued.
    std::fs::write(
        dir.join("other.jsonl"),
        "{\"schema\":\"wirespeed.sweep-runs.v1\"}\n",
    )
    .unwrap();
    assert_one_line_error(
        &wirespeed(&["tcp", "--resume", dir.join("other.jsonl").to_str().unwrap()]),
        "is not a wirespeed.schedule-runs.v1 plan",
    );
    assert!(!Path::new(r).exists(), "no file for refused flags");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn probe_and_latency_run_on_a_schedule_too() {
    let agent = ServeProcess::start(&[]);
    let dir = temp("probe-latency");
    let port = agent.port.to_string();
    let probe = dir.join("probe.jsonl");
    let run = wirespeed(&[
        "probe",
        "127.0.0.1",
        "--udp",
        "-p",
        &port,
        "-c",
        "2",
        "--sizes",
        "64,256",
        "--seed",
        "9",
        "--every",
        "1s",
        "--max-runs",
        "2",
        "--results",
        probe.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let (plan, records) = read(&probe);
    assert_eq!(
        (plan["seed"].as_u64(), plan["seed_source"].as_str()),
        (Some(9), Some("--seed"))
    );
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["document"]["schema"], "wirespeed.probe.v1");
    assert_never_overlap(&plan, &records);
    let latency = dir.join("latency.jsonl");
    let run = wirespeed(&[
        "latency",
        "127.0.0.1",
        "-p",
        &port,
        "--rr",
        "-t",
        "500ms",
        "--every",
        "1s",
        "--count",
        "2",
        "--json",
        "--results",
        latency.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let summary: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["result"]["runs"], 2);
    assert_eq!(summary["result"]["headline_unit"], "milliseconds");
    assert!(summary["result"]["headline_median"].as_f64().unwrap() > 0.0);
    let (plan, records) = read(&latency);
    assert_eq!(records[1]["document"]["schema"], "wirespeed.latency-rr.v1");
    assert_never_overlap(&plan, &records);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two schedules from two client addresses against `serve --exclusive`: their tests never run
/// at once (each test's window, from the end of its wait to its end, is apart from the other
/// client's), and a test that found the agent busy reports its wait.
#[test]
fn two_clients_against_an_exclusive_agent_never_overlap_and_the_second_reports_its_wait() {
    let agent = ServeProcess::start(&["--exclusive"]);
    let dir = temp("exclusive");
    let port = agent.port.to_string();
    let files = [dir.join("x.jsonl"), dir.join("y.jsonl")];
    let children: Vec<Child> = files
        .iter()
        .zip(["127.0.0.2", "127.0.0.3"])
        .map(|(file, from)| {
            spawn(&[
                "tcp",
                "127.0.0.1",
                "-p",
                &port,
                "-B",
                from,
                "-t",
                "1.5",
                "-i",
                "0",
                "--every",
                "2s",
                "--count",
                "2",
                "--results",
                file.to_str().unwrap(),
            ])
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Each run's test: from the end of its wait in the agent's queue to its end.
    let windows: Vec<Vec<(SystemTime, SystemTime, f64)>> = files
        .iter()
        .map(|f| {
            let (_, records) = read(f);
            assert_eq!(records.len(), 2);
            records
                .iter()
                .map(|r| {
                    assert!(r["error"].is_null(), "{r}");
                    let queued = r["document"]["result"]["queued_seconds"].as_f64().unwrap();
                    (
                        time(r, "started") + Duration::from_secs_f64(queued),
                        time(r, "ended"),
                        queued,
                    )
                })
                .collect()
        })
        .collect();
    // Side by side, two 1.5 s tests would share most of their 1.5 s; apart, they share at
    // most the few milliseconds between the agent ending one session and the client noting
    // its end (a margin of 0.5 s leaves room for a busy machine).
    let margin = Duration::from_millis(500);
    for x in &windows[0] {
        for y in &windows[1] {
            let shared =
                x.1.min(y.1)
                    .duration_since(x.0.max(y.0))
                    .unwrap_or_default();
            assert!(shared < margin, "tests overlap by {shared:?}: {x:?} {y:?}");
        }
    }
    let waited = windows.iter().flatten().filter(|w| w.2 > 0.0).count();
    assert!(
        waited >= 1,
        "a test found the agent busy and waited: {windows:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
