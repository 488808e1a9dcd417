//! The `--json` documents of the deterministic commands, byte for byte.
//!
//! A consumer parses these documents; a field renamed, moved or reformatted breaks it even when
//! every figure is right. Each case's output is compared with a golden file in `tests/golden/`
//! after masking only what changes from run to run (when it ran, on which host, which version).
//! A change made on purpose is accepted by running the test with `WIRESPEED_BLESS=1`, which
//! rewrites the golden files, so the diff of the commit shows exactly what changed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Name of the golden file, and the command's arguments (`--json` is added).
const CASES: &[(&str, &[&str])] = &[
    ("envelope", &["envelope", "--rate", "10M", "--explain"]),
    (
        "envelope-half",
        &[
            "envelope", "--rate", "10M", "--duplex", "half", "--vlan", "1",
        ],
    ),
    (
        "envelope-udp",
        &["envelope", "--rate", "1G", "-u", "-l", "64", "-6"],
    ),
    (
        "sim-csma",
        &[
            "sim",
            "csma",
            "--hosts",
            "1,2,8,24",
            "-l",
            "64,1536",
            "--replications",
            "2",
            "-t",
            "0.2s",
            "--seed",
            "7",
            "--theory",
        ],
    ),
    ("sim-link", &["sim", "link", "--a", "half", "--b", "full"]),
    (
        "sim-link-full",
        &[
            "sim", "link", "--a", "full", "--b", "full", "-r", "100M", "-t", "1s",
        ],
    ),
    (
        "model-predict",
        &["model", "predict", "examples/bellovin-1992.toml", "cbnewsa"],
    ),
    (
        "model-compare",
        &[
            "model",
            "compare",
            "examples/bellovin-1992.toml",
            "ih2",
            "examples/bellovin-1992-ih-probe.json",
        ],
    ),
    ("autoneg", &["autoneg", "auto", "100-full"]),
    ("autoneg-decode", &["autoneg", "--decode", "0x41E1"]),
    ("reproduce-boggs", &["reproduce", "boggs"]),
    (
        "deploy-kubernetes",
        &["deploy", "kubernetes", "--allow-destination", "10.0.0.0/16"],
    ),
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Fields that time the program itself (the simulator's own speed), not the experiment.
const OWN_COST_KEYS: &[&str] = &["\"wall_seconds\": ", "\"events_per_second\": "];

/// The document with the run's own facts masked: `started_at`, `wirespeed_version`, the
/// `host` object (pretty-printed at the top level, two spaces in) and the program's own timing.
fn masked(doc: &str) -> String {
    let mut out = String::new();
    let mut in_host = false;
    for line in doc.lines() {
        if in_host {
            if line == "  }," || line == "  }" {
                in_host = false;
                out.push_str("  \"host\": \"[masked]\",\n");
            }
            continue;
        }
        if line == "  \"host\": {" {
            in_host = true;
            continue;
        }
        let line = if line.starts_with("  \"started_at\": ") {
            "  \"started_at\": \"[masked]\","
        } else if line.starts_with("  \"wirespeed_version\": ") {
            "  \"wirespeed_version\": \"[masked]\","
        } else if let Some(key) = OWN_COST_KEYS
            .iter()
            .find(|k| line.trim_start().starts_with(**k))
        {
            let indent = &line[..line.len() - line.trim_start().len()];
            let comma = if line.ends_with(',') { "," } else { "" };
            out.push_str(&format!("{indent}{key}\"[masked]\"{comma}\n"));
            continue;
        } else {
            line
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn json_documents_of_deterministic_commands_are_byte_identical_to_their_golden_files() {
    let bless = std::env::var_os("WIRESPEED_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, args) in CASES {
        let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(*args)
            .arg("--json")
            .current_dir(repo_root())
            .output()
            .expect("the wirespeed binary runs");
        assert!(
            out.status.success(),
            "wirespeed {} --json failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = String::from_utf8(out.stdout).expect("UTF-8");
        serde_json::from_str::<serde_json::Value>(&doc).expect("the document parses");
        let got = masked(&doc);
        assert!(
            got.contains("\"host\": \"[masked]\""),
            "the host object was not found to mask in {name}"
        );
        let path = golden_dir().join(format!("{name}.json"));
        if bless {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with WIRESPEED_BLESS=1)", path.display()));
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(g, w)| g != w)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            differ.push(format!(
                "{name} (wirespeed {}): first difference at line {}: got {:?}, golden {:?}",
                args.join(" "),
                first + 1,
                got.lines().nth(first).unwrap_or("<end>"),
                want.lines().nth(first).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "documents differ from tests/golden (if on purpose, rerun with WIRESPEED_BLESS=1 and \
         say which fields changed in the commit):\n{}",
        differ.join("\n")
    );
}
