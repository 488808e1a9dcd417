//! Issue 14, findings 6 and 7: results files survive torn tails, SIGKILL and Ctrl-C, and every
//! long command stops on SIGINT/SIGTERM with its partial result printed, saved and resumable.
//! Everything runs on loopback with in-process agents; every wait is bounded.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Run, Scratch, wirespeed};

/// A small sweep on the in-process agent: 3 x 3 points x 2 reps = 18 short runs; -M skips the
/// MSS probe so that runs start at once.
const SWEEP: &[&str] = &[
    "sweep", "--snd", "1..3", "--reps", "2", "-n", "256KiB", "-M", "1460", "--seed", "7",
];
const SWEEP_RUNS: usize = 18;

/// The cheapest load series: 2 local agents, host counts 1 and 2, three lengths, 100 ms tests
/// at 1 Mbit/s, no model: 6 tests.
const LOAD: &[&str] = &[
    "load",
    "--local",
    "2",
    "--hosts",
    "1,2",
    "--lengths",
    "64,512,1536",
    "--settle",
    "0s",
    "--transmit",
    "100ms",
    "--measure",
    "50ms",
    "--cooldown",
    "0s",
    "--rate",
    "1M",
    "--no-model",
];
const LOAD_TESTS: usize = 6;

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(ToString::to_string).collect()
}

fn run(args: &[String]) -> Run {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    wirespeed(&refs)
}

fn spawn(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the wirespeed binary starts")
}

/// Waits for `child` at most `limit`; kills it and fails the test if it is still running.
/// A run Ctrl-C stopped: status 130, its partial output first (holding `shows`), and the one
/// line on stderr that names the signal.
fn assert_stopped_by_sigint(stopped: &Run, shows: &str) {
    assert_eq!(stopped.status, 130, "{}", stopped.stderr);
    assert!(
        stopped.stdout.starts_with("PARTIAL: interrupted after "),
        "{}",
        stopped.stdout
    );
    assert!(stopped.stdout.contains(shows), "{}", stopped.stdout);
    assert!(
        stopped.stderr.contains("interrupted by SIGINT"),
        "{}",
        stopped.stderr
    );
}

fn finish(mut child: Child, limit: Duration) -> Run {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Waits (at most 60 s) until the file at `path` holds at least `lines` newline-ended lines.
fn wait_for_lines(path: &str, lines: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = std::fs::read(path).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
        if n >= lines {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("exited ({status}) before {path} had {lines} lines");
        }
        assert!(
            Instant::now() < deadline,
            "{path} never reached {lines} lines"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `sig` once the child has installed its handler for it (its `SigCgt` mask in
/// /proc says so; waited for at most 60 s), so a slow start cannot turn the test's Ctrl-C into
/// the default action.
fn signal(child: &Child, sig: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (sig - 1)) != 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the handler never appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// The key of every run line of a results file (all lines after the plan), parsed whole.
fn keys(path: &str, key: fn(&serde_json::Value) -> String) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let plan: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(plan["schema"].as_str().unwrap().ends_with("-runs.v1"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| key(&serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))))
        .collect()
}

fn sweep_key(v: &serde_json::Value) -> String {
    format!("{}x{}#{}", v["snd_index"], v["rcv_index"], v["rep"])
}

fn load_key(v: &serde_json::Value) -> String {
    format!("{}@{}", v["hosts"], v["lengths"])
}

/// Every planned point exactly once.
fn assert_each_once(keys: &[String], planned: usize) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for k in keys {
        *counts.entry(k).or_default() += 1;
    }
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "points saved twice: {twice:?}");
    assert_eq!(counts.len(), planned, "{counts:?}");
}

fn assert_report_reads(dir: &Scratch, path: &str) {
    let page = dir.arg("report.html");
    let r = wirespeed(&["report", path, "-o", &page]);
    assert_eq!(r.status, 0, "report refused {path}: {}", r.stderr);
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

/// Cuts the file's last line `keep` bytes after its start (0 < keep < its length).
fn tear_last_line(path: &str, keep: usize) -> usize {
    let bytes = std::fs::read(path).unwrap();
    let start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut = start + keep;
    assert!(cut < bytes.len() - 1);
    std::fs::write(path, &bytes[..cut]).unwrap();
    cut - start
}

/// The `resume with:` command a stopped run printed, as arguments (paths here have no
/// spaces, so splitting on spaces is exact); the program word is dropped.
fn resume_args(stderr: &str) -> Vec<String> {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume command in: {stderr}"));
    line.split(' ').skip(1).map(ToString::to_string).collect()
}

/// Finding 6, sweep: a torn last line is cut off (and said), the run redone; a record missing
/// only its newline is kept; every point ends up once and `report` reads the file.
#[test]
fn sweep_resume_repairs_a_torn_tail_and_keeps_a_record_missing_its_newline() {
    let dir = Scratch::new("results-safety-sweep-torn");
    let file = dir.arg("runs.jsonl");
    let first = run(&with(SWEEP, &["--results", &file, "--json"]));
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert_each_once(&keys(&file, sweep_key), SWEEP_RUNS);
    let whole = std::fs::read(&file).unwrap();

    // Only the final newline missing: nothing to redo, nothing dropped.
    std::fs::write(&file, &whole[..whole.len() - 1]).unwrap();
    let again = run(&with(&["sweep"], &["--resume", &file, "--json"]));
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert!(!again.stderr.contains("dropped"), "{}", again.stderr);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        whole,
        "the newline is restored"
    );

    // A torn last line: `report` reads the whole lines before it and says so.
    let torn = tear_last_line(&file, 40);
    let page = dir.arg("torn.html");
    let report = wirespeed(&["report", &file, "-o", &page]);
    assert_eq!(report.status, 0, "{}", report.stderr);
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("cut off mid-write")
    );
    // Resume drops its bytes, says so, and runs that point again.
    let repaired = run(&with(&["sweep"], &["--resume", &file, "--json"]));
    assert_eq!(repaired.status, 0, "{}", repaired.stderr);
    assert!(
        repaired
            .stderr
            .contains(&format!("dropped {torn} bytes of a torn last line")),
        "{}",
        repaired.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&repaired.stdout).unwrap();
    assert!(doc["warnings"].to_string().contains("torn last line"));
    assert_eq!(doc["result"]["complete"], true);
    assert_each_once(&keys(&file, sweep_key), SWEEP_RUNS);
    // Once more: the file is whole, so nothing is dropped or run.
    let third = run(&with(&["sweep"], &["--resume", &file, "--json"]));
    assert_eq!(third.status, 0, "{}", third.stderr);
    assert!(!third.stderr.contains("dropped"));
    assert_each_once(&keys(&file, sweep_key), SWEEP_RUNS);
    assert_report_reads(&dir, &file);
}

/// Finding 6, load: the same repair for a load series.
#[test]
fn load_resume_repairs_a_torn_tail() {
    let dir = Scratch::new("results-safety-load-torn");
    let file = dir.arg("tests.jsonl");
    let first = run(&with(LOAD, &["--results", &file, "--json"]));
    assert_eq!(first.status, 0, "{}", first.stderr);
    let torn = tear_last_line(&file, 25);
    let resumed = run(&with(
        &["load"],
        &["--local", "2", "--no-model", "--resume", &file, "--json"],
    ));
    assert_eq!(resumed.status, 0, "{}", resumed.stderr);
    assert!(
        resumed.stderr.contains(&format!("dropped {torn} bytes")),
        "{}",
        resumed.stderr
    );
    assert_each_once(&keys(&file, load_key), LOAD_TESTS);
    assert_report_reads(&dir, &file);
}

/// Finding 7, sweep: SIGINT stops it at once with the partial table marked PARTIAL, every
/// finished run saved, exit 130, and the printed command finishes the sweep.
#[test]
fn sweep_ctrl_c_prints_the_partial_table_and_the_command_that_resumes() {
    let dir = Scratch::new("results-safety-sweep-int");
    let file = dir.arg("runs.jsonl");
    let mut child = spawn(&with(SWEEP, &["--results", &file]));
    wait_for_lines(&file, 3, &mut child);
    signal(&child, libc::SIGINT);
    let stopped = finish(child, Duration::from_secs(20));
    assert_stopped_by_sigint(&stopped, "matrix, median ");
    let saved = keys(&file, sweep_key).len();
    assert!((2..SWEEP_RUNS).contains(&saved), "{saved} runs saved");
    assert!(
        stopped
            .stdout
            .contains(&format!("after {saved} of {SWEEP_RUNS} runs")),
        "what was printed is what was saved: {}",
        stopped.stdout
    );
    let args = resume_args(&stopped.stderr);
    assert_eq!(&args[args.len() - 2..], ["--resume", file.as_str()]);
    let rest = run(&args);
    assert_eq!(rest.status, 0, "{}", rest.stderr);
    assert_each_once(&keys(&file, sweep_key), SWEEP_RUNS);
}

/// Finding 7, load: SIGTERM mid-test stops at once (the test in flight is abandoned, not
/// saved), the JSON says partial, exit 143, and the printed command finishes the series.
#[test]
fn load_sigterm_saves_the_finished_tests_and_marks_the_json_partial() {
    let dir = Scratch::new("results-safety-load-term");
    let file = dir.arg("tests.jsonl");
    // Tests of 1 s so that the signal lands in the middle of one.
    let mut args = with(LOAD, &["--results", &file, "--json"]);
    let transmit = args.iter().position(|a| a == "--transmit").unwrap();
    args[transmit + 1] = "1s".into();
    let mut child = spawn(&args);
    wait_for_lines(&file, 2, &mut child);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGTERM);
    let stopped = finish(child, Duration::from_secs(20));
    assert_eq!(stopped.status, 143, "{}", stopped.stderr);
    let doc: serde_json::Value = serde_json::from_str(&stopped.stdout).unwrap();
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["schema"], "wirespeed.load.v1");
    let saved = keys(&file, load_key).len();
    assert!((1..LOAD_TESTS).contains(&saved), "{saved} tests saved");
    assert_eq!(doc["result"]["rows"].as_array().unwrap().len(), saved);
    assert!(
        stopped.stderr.contains("interrupted by SIGTERM"),
        "{}",
        stopped.stderr
    );
    let rest = run(&resume_args(&stopped.stderr));
    assert_eq!(rest.status, 0, "{}", rest.stderr);
    assert_each_once(&keys(&file, load_key), LOAD_TESTS);
    assert_report_reads(&dir, &file);
}

/// Finding 7, load without --results: the partial rows are printed and the user is told
/// nothing was saved (no resume command to give).
#[test]
fn load_ctrl_c_without_a_results_file_says_nothing_was_saved() {
    let mut args = with(LOAD, &[]);
    let transmit = args.iter().position(|a| a == "--transmit").unwrap();
    args[transmit + 1] = "2s".into();
    let child = spawn(&args);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGINT);
    let stopped = finish(child, Duration::from_secs(20));
    assert_eq!(stopped.status, 130, "{}", stopped.stderr);
    assert!(
        stopped.stdout.starts_with("PARTIAL: "),
        "{}",
        stopped.stdout
    );
    assert!(
        stopped.stderr.contains("none is saved (add --results FILE"),
        "{}",
        stopped.stderr
    );
    assert!(!stopped.stderr.contains("resume with"));
}

/// Finding 7, sim csma: the finished points are printed, PARTIAL first, exit 130.
#[test]
fn sim_csma_ctrl_c_prints_the_finished_points() {
    // 48 points of a minute of simulated time each: far longer than the test waits.
    let child = spawn(&with(
        &["sim", "csma"],
        &[
            "--hosts",
            "1-24",
            "-l",
            "64,1536",
            "-t",
            "60s",
            "--threads",
            "1",
            "--json",
        ],
    ));
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    let stopped = finish(child, Duration::from_secs(20));
    assert_eq!(stopped.status, 130, "{}", stopped.stderr);
    let doc: serde_json::Value = serde_json::from_str(&stopped.stdout).unwrap();
    assert_eq!(doc["partial"], true);
    let points = doc["result"]["points"].as_array().unwrap().len();
    assert!(points < 48, "{points} points");
    assert!(
        doc["interrupted"]
            .as_str()
            .unwrap()
            .contains(&format!("after {points} of 48 points")),
        "{doc}"
    );
}

/// Finding 7, probe: the fit from the probes so far, PARTIAL first, exit 130.
#[test]
fn probe_ctrl_c_prints_the_partial_fit() {
    // 16 sizes x 500 probes, 1 ms apart: over 8 s, interrupted after one.
    let child = spawn(&with(
        &["probe"],
        &["127.0.0.1", "-c", "500", "--gap", "1ms"],
    ));
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGINT);
    let stopped = finish(child, Duration::from_secs(30));
    assert_stopped_by_sigint(&stopped, "probe 127.0.0.1");
}

/// The crash test's instants and offsets, reproducible from the seed it prints (the model's
/// SplitMix64).
struct Rng(wirespeed_model::stats::SplitMix64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n.max(1)
    }
}

/// SIGKILLs `start` (or its resume) at random instants, cuts the file at a random offset after
/// the plan line each time, resumes, and at the end checks every point is there once.
fn crash_and_resume(
    name: &str,
    start: &[String],
    resume: &[String],
    file: &str,
    planned: usize,
    key: fn(&serde_json::Value) -> String,
    seed: u64,
) {
    let dir = Scratch::new(&format!("results-safety-{name}"));
    let mut rng = Rng(wirespeed_model::stats::SplitMix64::new(seed));
    let mut kills = 0;
    for round in 0..5 {
        let args = if Path::new(file).exists() {
            resume
        } else {
            start
        };
        let mut child = spawn(args);
        // The kill's instant counts from the file's first appearance (bounded wait): on a
        // busy machine a start can take longer than the whole draw, and five kills before
        // any file existed left nothing to resume.
        let appeared = Instant::now();
        while !Path::new(file).exists()
            && child.try_wait().unwrap().is_none()
            && appeared.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let instant = Duration::from_millis(100 + rng.below(600));
        std::thread::sleep(instant);
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            kills += 1;
        }
        let _ = child.wait();
        let Ok(bytes) = std::fs::read(file) else {
            continue; // killed before the file appeared: the next round starts it
        };
        let plan_end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .expect("the plan is whole")
            + 1;
        let cut = plan_end - 1 + rng.below((bytes.len() - plan_end + 2) as u64) as usize;
        std::fs::write(file, &bytes[..cut]).unwrap();
        eprintln!(
            "{name} round {round}: killed after {instant:?}, file cut from {} to {cut} bytes",
            bytes.len()
        );
    }
    assert!(kills >= 1, "no run was killed: the test proved nothing");
    let last = run(resume);
    assert_eq!(last.status, 0, "{}", last.stderr);
    assert_each_once(&keys(file, key), planned);
    assert_report_reads(&dir, file);
}

/// The crash test: 5 SIGKILLs each of `sweep` and `load` at seeded random instants, the file
/// cut at a random byte each time, resumed each time; every planned point ends up saved exactly
/// once and `report` reads the file.
#[test]
fn sigkill_and_truncation_at_random_never_lose_or_duplicate_a_point() {
    let seed = 0x5eed_0014;
    eprintln!("crash test seed {seed:#x}");
    let dir = Scratch::new("results-safety-crash");
    let sweep_file = dir.arg("sweep.jsonl");
    crash_and_resume(
        "crash-sweep",
        &with(SWEEP, &["--results", &sweep_file, "--json"]),
        &with(&["sweep"], &["--resume", &sweep_file, "--json"]),
        &sweep_file,
        SWEEP_RUNS,
        sweep_key,
        seed,
    );
    let load_file = dir.arg("load.jsonl");
    crash_and_resume(
        "crash-load",
        &with(LOAD, &["--results", &load_file, "--json"]),
        &with(
            &["load"],
            &[
                "--local",
                "2",
                "--no-model",
                "--resume",
                &load_file,
                "--json",
            ],
        ),
        &load_file,
        LOAD_TESTS,
        load_key,
        seed + 1,
    );
}
