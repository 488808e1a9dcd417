//! The memory a results file costs when it is read (issue 32, item 5: `report` peaked at
//! 1.44 GB on a 31 MB file of small objects, 47x, through a `serde_json::Value` tree).
//!
//! Each figure is the peak resident set (`VmHWM`) of a child process (this test binary run
//! again with [`CHILD_ENV`] set) that reads one file and decodes every line of it, so that
//! nothing else the test harness holds is counted. A file just under `report`'s per-file cap
//! of 64 MiB decoded into its types with `decode::from_str` must stay under 10x its size;
//! the tree's figure on a smaller file is printed beside it, for the per-byte comparison.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// Set in the child: `typed` or `tree`, and the file in [`FILE_ENV`].
const CHILD_ENV: &str = "WIRESPEED_MEMORY_CHILD";
const FILE_ENV: &str = "WIRESPEED_MEMORY_FILE";
/// Just under `report`'s per-file cap (`MAX_FILE_BYTES`, 64 MiB).
const NEAR_CAP_BYTES: usize = 63 * 1024 * 1024;
/// The budget: peak resident memory per byte of file.
const BUDGET_PER_BYTE: usize = 10;

/// A run line of a results file: small objects, the shape that costs a tree the most.
#[derive(Debug, Deserialize)]
#[allow(dead_code)] // Decoded to be held, as `report` holds its documents.
struct Run {
    index: u64,
    rate_bits_per_second: f64,
    length_bytes: u64,
    loss_ratio: f64,
    latency_us: Option<f64>,
    label: String,
}

fn write_runs(path: &Path, bytes: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0;
    let mut i = 0u64;
    loop {
        let line = format!(
            "{{\"index\": {i}, \"rate_bits_per_second\": {}, \"length_bytes\": {}, \"loss_ratio\": null, \"latency_us\": {}, \"label\": \"r{}\"}}\n",
            1.0e6 + i as f64 * 17.0,
            64 + i % 1455,
            (i % 1000) as f64 / 8.0,
            i % 97
        );
        if written + line.len() > bytes {
            break;
        }
        out.write_all(line.as_bytes()).unwrap();
        written += line.len();
        i += 1;
    }
    out.flush().unwrap();
}

/// The child's peak resident set, bytes.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kib * 1024
}

/// In the child: reads the file, decodes each line the way `mode` says and keeps it all, and
/// prints the peak.
fn child(mode: &str, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let count = match mode {
        "typed" => {
            let runs: Vec<Run> = text
                .lines()
                .map(|l| wirespeed_report::decode::from_str(l).unwrap())
                .collect();
            assert!(runs.last().unwrap().loss_ratio.is_nan());
            runs.len()
        }
        "tree" => {
            let values: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            values.len()
        }
        other => panic!("unknown mode {other}"),
    };
    println!("PEAK {} {count}", peak_rss());
}

/// Runs this test again as a child in `mode` on `path`; its peak resident set, bytes.
fn measure(mode: &str, path: &Path) -> usize {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, mode)
        .env(FILE_ENV, path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    stdout
        .lines()
        // The harness prints "test child_entry ... " on the same line.
        .find_map(|l| l.split_once("PEAK ").map(|(_, figure)| figure))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no figure in {stdout}"))
}

/// The child's entry point; a no-op when the test harness runs it.
#[test]
fn child_entry() {
    if let (Ok(mode), Some(path)) = (std::env::var(CHILD_ENV), std::env::var_os(FILE_ENV)) {
        child(&mode, Path::new(&path));
    }
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    Scratch(std::env::temp_dir().join(format!(
        "wirespeed-memory-{}-{tag}.jsonl",
        std::process::id()
    )))
}

#[test]
fn a_file_just_under_the_cap_decoded_into_its_types_stays_under_ten_times_its_size() {
    let file = scratch("near-cap");
    write_runs(&file.0, NEAR_CAP_BYTES);
    let size = std::fs::metadata(&file.0).unwrap().len() as usize;
    assert!(size > NEAR_CAP_BYTES - 1024, "{size}");
    let typed = measure("typed", &file.0);
    drop(file);
    // The tree on a file an eighth the size, for the figure per byte (not asserted: it is
    // what the typed path replaces).
    let small = scratch("tree");
    write_runs(&small.0, NEAR_CAP_BYTES / 8);
    let small_size = std::fs::metadata(&small.0).unwrap().len() as usize;
    let tree = measure("tree", &small.0);
    eprintln!(
        "typed: {size} B file, peak {} MiB ({:.2} x); tree: {small_size} B file, peak {} MiB ({:.2} x)",
        typed >> 20,
        typed as f64 / size as f64,
        tree >> 20,
        tree as f64 / small_size as f64
    );
    assert!(
        typed < BUDGET_PER_BYTE * size,
        "typed decoding peaked at {typed} B for a {size} B file"
    );
}
