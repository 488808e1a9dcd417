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

/// A `wirespeed serve` process on 127.0.0.1 (port 0: the kernel picks), started by a test and
/// killed on drop; its stderr (notices) goes to a file the test can read.
pub(crate) struct ServeProcess {
    child: std::process::Child,
    pub(crate) port: u16,
    pub(crate) stderr_path: std::path::PathBuf,
}

impl ServeProcess {
    pub(crate) fn start(extra: &[&str]) -> ServeProcess {
        use std::io::BufRead;
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let stderr_path = std::env::temp_dir().join(format!(
            "ws-serve-{}-{}.stderr",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(["serve", "-B", "127.0.0.1", "-p", "0"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("the agent starts");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first
            .split_whitespace()
            .nth(4)
            .and_then(|a| a.rsplit_once(':'))
            .and_then(|(_, p)| p.parse().ok());
        let Some(port) = port else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no port in {first:?}: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        };
        ServeProcess {
            child,
            port,
            stderr_path,
        }
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}
