//! Issue 15 item 8: every value is checked before the work starts, and refused in one line
//! that names the value, the range and an example (exit 2, nothing on stdout, nothing left).

use crate::util::{assert_one_line_error, wirespeed};

#[test]
fn throughput_values_are_refused_before_the_test() {
    for (args, needle) in [
        (&["tcp", "-w", "0", "-t", "1"][..], "-w 0 is too small"),
        (&["tcp", "-A", "9999", "-t", "1"][..], "CPU 9999 is not one"),
        (
            &["tcp", "-t", "1ns"][..],
            "out of range: use 0.1 s to 1 day",
        ),
        (
            &["tcp", "127.0.0.1:5999", "-6", "-t", "1"][..],
            "IPv4 address but -6",
        ),
        (
            &["tcp", "[::1]:5999", "-4", "-t", "1"][..],
            "IPv6 address but -4",
        ),
        (
            &["tcp", "127.0.0.1:5391", "-p", "5999", "-t", "1"][..],
            "two ports",
        ),
    ] {
        assert_one_line_error(&wirespeed(args), needle);
    }
}

#[test]
fn simulation_and_sweep_values_are_refused_before_the_work() {
    assert_one_line_error(
        &wirespeed(&["sim", "csma", "--threads", "0", "--hosts", "2"]),
        "--threads",
    );
    assert_one_line_error(
        &wirespeed(&["sim", "csma", "-t", "100000h", "--hosts", "1"]),
        "at most 1 h of simulated time",
    );
    let dir = std::env::temp_dir().join(format!("ws-refusals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("runs.jsonl");
    let run = wirespeed(&[
        "sweep",
        "--heatmap",
        "/nonexistent/x.svg",
        "--results",
        results.to_str().unwrap(),
    ]);
    assert_one_line_error(&run, "/nonexistent does not exist");
    let run = wirespeed(&["sweep", "-n", "0", "--results", results.to_str().unwrap()]);
    assert_one_line_error(&run, "-n 0 sends nothing");
    assert!(!results.exists(), "a refused sweep leaves no results file");
    let model = dir.join("model.toml");
    std::fs::write(&model, "[components]\ncisco = { fixed_ms = -1 }\n[paths.p]\nelements = [{ component = \"cisco\", hop = 1 }]\n").unwrap();
    let run = wirespeed(&["model", "predict", model.to_str().unwrap(), "p"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_one_line_error(&run, "fixed_ms = -1 is out of range");
}

/// Issue 15 item 7: `-f` is honoured where a command prints a rate and refused where it
/// cannot apply, never parsed and ignored.
#[test]
fn rate_unit_is_honoured_or_refused() {
    let run = wirespeed(&[
        "model",
        "predict",
        "../../examples/bellovin-1992.toml",
        "cbnewsa",
        "-f",
        "m",
    ]);
    assert_one_line_error(&run, "-f sets the unit of rates");
    let run = wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "2",
        "--sizes",
        "100,500",
        "-f",
        "k",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let implied = run
        .stdout
        .lines()
        .find(|l| l.contains("implied link rate"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    // On a busy loopback the per-byte slope can come out at or below 0, and then no rate is
    // implied; when one is, it is in the unit asked for.
    assert!(
        implied.contains("kbit/s") || implied.contains("none (per-byte cost not above 0)"),
        "{implied}"
    );
    assert!(
        !implied.contains("Gbit/s") && !implied.contains("Mbit/s"),
        "{implied}"
    );
}
