//! `--metrics-file`: results in the Prometheus text format, checked by Prometheus' own linter
//! where it is installed (scripts/install-deps.sh installs it).

use std::process::Command;

use super::util::{assert_one_line_error, wirespeed};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `promtool check metrics` on `text`: None when promtool is not installed, else its findings.
fn promtool_findings(text: &str) -> Option<String> {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[test]
fn results_written_as_metrics_pass_promtool_and_match_the_json() {
    let dir = scratch("metrics");
    let file = dir.join("tcp.prom");
    let run = wirespeed(&[
        "tcp",
        "-t",
        "0.5",
        "--json",
        "--metrics-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    // The received rate in the file is the document's, in bytes per second.
    let bps = doc["result"]["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("wirespeed_tcp_end_sum_received_bytes_per_second "))
        .unwrap_or_else(|| panic!("no received rate in {text}"));
    let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(
        (value - bps / 8.0).abs() <= 1e-6 * value.max(1.0),
        "{line} vs {bps}"
    );
    for command in [&["envelope", "--rate", "10M"][..], &["sim", "link"][..]] {
        let path = dir.join("other.prom");
        let mut args = command.to_vec();
        args.extend(["--metrics-file", path.to_str().unwrap()]);
        let run = wirespeed(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let other = std::fs::read_to_string(&path).unwrap();
        assert!(other.lines().filter(|l| !l.starts_with('#')).count() > 10);
        if let Some(findings) = promtool_findings(&other) {
            assert!(findings.trim().is_empty(), "{command:?}: {findings}");
        }
    }
    if let Some(findings) = promtool_findings(&text) {
        assert!(findings.trim().is_empty(), "promtool: {findings}");
    }
    // Replaced whole: no temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_metrics_file_is_refused_before_the_test_runs() {
    let run = wirespeed(&[
        "tcp",
        "-t",
        "30",
        "--metrics-file",
        "/nonexistent-dir/x.prom",
    ]);
    assert_one_line_error(&run, "--metrics-file");
}
