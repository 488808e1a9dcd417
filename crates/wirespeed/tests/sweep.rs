use crate::util::{assert_one_line_error, wirespeed};

/// A small loopback sweep: every point runs `reps` times, granted buffers grow with the
/// requested ones, the results file holds every run, and the JSON document carries the table.
#[test]
fn loopback_sweep_grants_grow_with_requests() {
    let dir = std::env::temp_dir().join(format!("ws-sweep-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("runs.jsonl");
    let heatmap = dir.join("heatmap.svg");
    let csv = dir.join("cells.csv");
    let run = wirespeed(&[
        "sweep",
        "--snd",
        "32KiB,128KiB",
        "--reps",
        "2",
        "-n",
        "1MiB",
        "--seed",
        "3",
        "--results",
        results.to_str().unwrap(),
        "--heatmap",
        heatmap.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema"], "wirespeed.sweep.v1");
    let result = &doc["result"];
    assert_eq!(result["complete"], true);
    let runs = result["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 2);
    for r in runs {
        assert_eq!(r["bytes"], 1 << 20, "exactly the transfer arrived: {r}");
        let (req, granted) = (
            r["snd_requested_bytes"].as_u64().unwrap(),
            r["snd_granted_bytes"].as_u64().unwrap(),
        );
        assert!(
            granted >= req,
            "the kernel grants at least the request (it doubles it): {r}"
        );
    }
    let granted = |snd: u64| {
        runs.iter()
            .filter(|r| r["snd_requested_bytes"] == snd)
            .map(|r| r["snd_granted_bytes"].as_u64().unwrap())
            .max()
            .unwrap()
    };
    assert!(granted(32768) < granted(131072));
    assert_eq!(result["analysis"]["diagonal"].as_array().unwrap().len(), 2);
    // Loopback, no --link-rate: the plateau is typed, and nothing to judge it against.
    let typed = crate::findings::assert_typed(&run.stdout);
    let kinds: Vec<&str> = typed.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"plateau"), "{kinds:?}");
    assert!(
        typed.findings[0].evidence["plateau_bytes_per_second"]
            .as_f64()
            .is_some_and(|p| p > 0.0),
        "{:?}",
        typed.findings[0]
    );
    assert!(
        kinds.contains(&"link_rate_unknown") || kinds.contains(&"cpu_limited"),
        "{kinds:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&results).unwrap().lines().count(),
        1 + 8
    );
    assert!(
        std::fs::read_to_string(&heatmap)
            .unwrap()
            .starts_with("<svg")
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        1 + 4
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_results_file_is_never_overwritten() {
    let path = std::env::temp_dir().join(format!("ws-sweep-exists-{}.jsonl", std::process::id()));
    std::fs::write(&path, "precious\n").unwrap();
    let run = wirespeed(&[
        "sweep",
        "--snd",
        "1",
        "--reps",
        "1",
        "--results",
        path.to_str().unwrap(),
    ]);
    assert_one_line_error(&run, "--resume");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn bad_grids_are_one_line() {
    assert_one_line_error(&wirespeed(&["sweep", "--snd", "17..1"]), "buffer axis");
    assert_one_line_error(&wirespeed(&["sweep", "--rcv", "1..x"]), "buffer axis");
    assert_one_line_error(&wirespeed(&["sweep", "--reps", "0"]), "--reps");
    let missing = std::env::temp_dir().join("ws-sweep-no-such-file.jsonl");
    assert_one_line_error(
        &wirespeed(&["sweep", "--resume", missing.to_str().unwrap()]),
        "cannot open",
    );
}

/// Off a terminal (a CI log), a series longer than the progress period prints a plain line
/// naming how far it is and how long is left; the JSON on stdout stays one document.
#[test]
fn a_long_series_off_a_terminal_prints_plain_progress_lines() {
    let dir = std::env::temp_dir().join(format!("ws-sweep-progress-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("runs.jsonl");
    // 6 runs of 1 s: past the 5 s period whatever the machine's load.
    let run = wirespeed(&[
        "sweep",
        "--snd",
        "64KiB,128KiB",
        "--rcv",
        "128KiB",
        "--reps",
        "3",
        "-t",
        "1s",
        "--results",
        results.to_str().unwrap(),
        "--json",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("sweep: ") && l.contains(" runs, "))
        .unwrap_or_else(|| panic!("no progress line in: {}", run.stderr));
    assert!(line.contains("elapsed") && line.contains("left"), "{line}");
    serde_json::from_str::<serde_json::Value>(&run.stdout).expect("stdout is one document");
}

/// Issue 15 item 7: on loopback (gigabytes a second) the default unit scales, so no figure in
/// the tables needs more than five digits; `-f` still picks the unit.
#[test]
fn loopback_sweep_figures_stay_short_in_the_default_unit() {
    let dir = std::env::temp_dir().join(format!("ws-sweep-units-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("runs.jsonl");
    let run = wirespeed(&[
        "sweep",
        "--snd",
        "256KiB",
        "--rcv",
        "256KiB",
        "--reps",
        "1",
        "-n",
        "8MiB",
        "--results",
        results.to_str().unwrap(),
    ]);
    // The finished sweep again with `--brief` (--resume: no run is repeated): one line, the
    // plateau with its unit and the runs it stands on.
    let brief = wirespeed(&["sweep", "--resume", results.to_str().unwrap(), "--brief"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(brief.status, 0, "{}", brief.stderr);
    assert_eq!(brief.stdout.lines().count(), 1, "{}", brief.stdout);
    assert!(
        brief.stdout.starts_with("sweep: plateau ")
            && brief.stdout.contains("bit/s")
            && brief.stdout.trim_end().ends_with("; 1 of 1 runs"),
        "{}",
        brief.stdout
    );
    let matrix = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("matrix, median "))
        .nth(2)
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let figure = matrix.split_whitespace().last().unwrap();
    let digits = figure.split('.').next().unwrap().len();
    assert!(digits <= 5, "{figure} in {}", run.stdout);
}

/// Issue 31's sweep on a slow path, inside the T1 lab (labs/t1-path.toml: h1 -[10M]- r1
/// -[1.544M serial, 5 ms]- r2 -[100M]- h2). The seed's default grid is refused before its
/// first run with its estimate and the flag that overrides it, leaving no file; a small grid
/// reads the T1 as the ceiling without --link-rate, divides window by a full segment's round
/// trip computed from the route (longer than the SYN's the kernel saw), caps every prediction
/// by the ceiling, and reports the window the sender saw per buffer asked. About 10 s.
#[test]
fn issue_31_sweep_on_the_t1_path_reads_the_lab_and_refuses_the_seeds_grid() {
    if !crate::lab::can_build_labs("sweep on the t1 path") {
        return;
    }
    let _guard = crate::lab::LAB_LOCK.beside_others();
    let started = std::time::Instant::now();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/t1-path.toml");
    let lab = crate::verdicts::TestLab::up(std::path::Path::new(file));
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let agent = crate::verdicts::NsAgent::start(&h2, "198.18.2.2");
    let dir = std::env::temp_dir().join(format!("ws-sweep-t1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let refused = dir.join("refused.jsonl");
    let run = crate::verdicts::in_namespace(
        &h1,
        &[
            "sweep",
            "198.18.2.2",
            "-p",
            &agent.port,
            "--results",
            refused.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("1156 runs would take about")
            && run
                .stderr
                .contains(" h on this path (a full segment's round trip")
            && run.stderr.contains("the ceiling of link r1-r2")
            && run.stderr.contains("--budget"),
        "{}",
        run.stderr
    );
    assert!(!refused.exists(), "a refused plan leaves no file");

    let results = dir.join("small.jsonl");
    let run = crate::verdicts::in_namespace(
        &h1,
        &[
            "sweep",
            "198.18.2.2",
            "-p",
            &agent.port,
            "--snd",
            "1,4",
            "--reps",
            "1",
            "-n",
            "64KiB",
            "--seed",
            "1",
            "--results",
            results.to_str().unwrap(),
            "--json",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let r = &doc["result"];
    eprintln!("{}", serde_json::to_string_pretty(&r["analysis"]).unwrap());
    eprintln!("{}", doc["verdicts"]);
    // The T1's goodput: 1448 payload bytes of every 1500 on the serial line.
    let ceiling = r["ceiling_bytes_per_second"].as_f64().unwrap();
    assert!(
        (ceiling - 1.544e6 / 8.0 * 1448.0 / 1500.0).abs() < 1.0,
        "{ceiling}"
    );
    assert!(
        r["ceiling_source"].as_str().unwrap().contains("r1-r2"),
        "{}",
        r["ceiling_source"]
    );
    let rtt = &r["analysis"]["round_trip"];
    assert_eq!(rtt["basis"]["kind"], "path", "{rtt}");
    let (full, lowest) = (
        rtt["seconds"].as_f64().unwrap(),
        rtt["lowest_seen_seconds"].as_f64().unwrap(),
    );
    // 10 ms of T1 delay both ways, 7.8 ms of a full segment on the T1 alone: the full
    // segment's round trip is well above the SYN's.
    assert!(full > 0.0178 && full < 0.022, "{rtt}");
    assert!(full > lowest + 0.005, "{rtt}");
    let bdp = r["analysis"]["bdp"]["bytes"].as_f64().unwrap();
    assert!((bdp - ceiling * full).abs() < 1.0, "{bdp}");
    for cell in r["analysis"]["cells"].as_array().unwrap() {
        let predicted = cell["predicted_bytes_per_second"].as_f64().unwrap();
        let measured = cell["median_bytes_per_second"].as_f64().unwrap();
        assert!(predicted <= ceiling + 1e-6, "{cell}");
        assert!(measured <= 1.05 * ceiling, "{cell}");
    }
    let estimate = r["estimate"]["seconds"].as_f64().unwrap();
    assert!(estimate > 1.0 && estimate < 60.0, "{estimate}");
    let verdicts = doc["verdicts"].to_string();
    assert!(
        verdicts.contains("computed from the configured path")
            && verdicts.contains("the window the sender saw was"),
        "{verdicts}"
    );
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}
