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

/// A `wirespeed serve` process started by a test (port 0: the kernel picks), on loopback or
/// inside a namespace the test made (`ip netns exec` execs it, so the child is the agent
/// itself); killed by its PID on drop. Its stderr (notices) goes to a file the test can read.
pub(crate) struct ServeProcess {
    child: std::process::Child,
    pub(crate) port: u16,
    /// The iperf3 service's port, when started with `--iperf3`.
    pub(crate) iperf3_port: Option<u16>,
    stderr_path: std::path::PathBuf,
}

impl ServeProcess {
    /// An agent on 127.0.0.1 with `extra` flags.
    pub(crate) fn start(extra: &[&str]) -> ServeProcess {
        ServeProcess::start_in(None, "127.0.0.1", extra)
    }

    /// An agent bound to `bind`, inside namespace `ns` when given.
    pub(crate) fn start_in(ns: Option<&str>, bind: &str, extra: &[&str]) -> ServeProcess {
        match ns {
            Some(ns) => ServeProcess::start_wrapped(&["ip", "netns", "exec", ns], bind, extra),
            None => ServeProcess::start_wrapped(&[], bind, extra),
        }
    }

    /// An agent bound to `bind`, started by `wrapper` (a program and its arguments that end by
    /// exec'ing the command after them, as `ip netns exec NS` or `setpriv ...` do, so the child
    /// is the agent itself).
    pub(crate) fn start_wrapped(wrapper: &[&str], bind: &str, extra: &[&str]) -> ServeProcess {
        use std::io::BufRead;
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let stderr_path = std::env::temp_dir().join(format!(
            "ws-serve-{}-{}.stderr",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(env!("CARGO_BIN_EXE_wirespeed"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_wirespeed")),
        };
        let mut child = command
            .args(["serve", "-B", bind, "-p", "0"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("the agent starts");
        let mut first = String::new();
        let mut reader = std::io::BufReader::new(child.stdout.as_mut().unwrap());
        reader.read_line(&mut first).unwrap();
        // `--iperf3 PORT`: the second line names the iperf3 service's address.
        let mut second = String::new();
        if extra.contains(&"--iperf3") {
            reader.read_line(&mut second).unwrap();
        }
        drop(reader);
        let iperf3_port = second
            .split_whitespace()
            .find_map(|w| w.rsplit_once(':').and_then(|(_, p)| p.parse().ok()));
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
            iperf3_port,
            stderr_path,
        }
    }

    /// What the agent printed on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops the agent (by its PID) and returns what it printed on stdout after its first
    /// lines: its session log.
    pub(crate) fn stop_and_read_log(mut self) -> String {
        use std::io::Read;
        let mut out = self.child.stdout.take().expect("stdout is piped");
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut log = String::new();
        let _ = out.read_to_string(&mut log);
        log
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}
