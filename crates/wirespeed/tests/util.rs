//! Runs the built binary and captures what it printed.

use std::process::{Command, Output};

pub(crate) struct Run {
    pub(crate) status: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

pub(crate) fn wirespeed(args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("the wirespeed binary runs");
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// Asserts a run failed with status 2 and exactly one line on stderr mentioning `needle`.
pub(crate) fn assert_one_line_error(run: &Run, needle: &str) {
    assert_eq!(run.status, 2, "stderr: {}", run.stderr);
    assert_eq!(
        run.stderr.lines().count(),
        1,
        "one line expected: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(needle),
        "{needle:?} not in {}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
}
