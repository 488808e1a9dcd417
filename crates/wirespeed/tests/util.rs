//! What the end-to-end tests share: running the built binary and capturing what it printed,
//! and the guards that undo what a test made however it ends (a failed assertion included):
//! [`Scratch`] directories, [`ChildGuard`] processes, [`Netns`] namespaces and the
//! [`ServeProcess`] agent.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

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

/// The output of the command `make` builds, whose program (or the program it executes) is a
/// file this process has just written. A child that another test thread forks in that moment
/// holds the file open for writing until it executes its own program, and meanwhile the kernel
/// refuses to run the file (ETXTBSY, "Text file busy"); so a refusal is tried again, every
/// 50 ms for up to 5 s.
pub(crate) fn output_of_fresh_copy(mut make: impl FnMut() -> Command) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let busy = match make().output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => e.to_string(),
            Ok(out)
                if out.status.code() == Some(126)
                    && String::from_utf8_lossy(&out.stderr).contains("Text file busy") =>
            {
                String::from_utf8_lossy(&out.stderr).into_owned()
            }
            other => return other.expect("the command runs"),
        };
        assert!(
            std::time::Instant::now() < deadline,
            "still refused after 5 s: {busy}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A name no other test of this process (or of another engineer's test process) holds:
/// `{prefix}-{pid}-{n}`.
pub(crate) fn unique_name(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh directory of one test's own under the temp dir (`ws-{tag}-{pid}-{n}`), removed with
/// everything in it when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(unique_name(&format!("ws-{tag}")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.0
    }

    /// `name` inside the directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `name` inside the directory, as a command-line argument.
    pub(crate) fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    /// Writes `text` to `name` inside the directory; returns its path as an argument.
    pub(crate) fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, text).expect("a file in the scratch directory");
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A process a test started, killed by its PID and reaped when dropped; derefs to its
/// [`Child`] for everything else.
pub(crate) struct ChildGuard(Child);

impl ChildGuard {
    pub(crate) fn new(child: Child) -> ChildGuard {
        ChildGuard(child)
    }
}

impl std::ops::Deref for ChildGuard {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A network namespace a test made (root only; the name starts with `ws-`), deleted when
/// dropped.
pub(crate) struct Netns(String);

impl Netns {
    /// `ip netns add NAME`; panics if it fails.
    pub(crate) fn add(name: String) -> Netns {
        let out = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .expect("ip(8) runs (iproute2)");
        assert!(
            out.status.success(),
            "ip netns add {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Netns(name)
    }

    pub(crate) fn name(&self) -> &str {
        &self.0
    }

    /// `ip -n NAME ARGS`; panics if it fails.
    pub(crate) fn ip(&self, args: &[&str]) {
        let out = Command::new("ip")
            .args(["-n", &self.0])
            .args(args)
            .output()
            .expect("ip(8) runs (iproute2)");
        assert!(
            out.status.success(),
            "ip -n {} {args:?}: {}",
            self.0,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `ip netns exec NAME PROGRAM`, to which the caller adds arguments.
    pub(crate) fn exec(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0, program]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
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
    child: ChildGuard,
    pub(crate) port: u16,
    /// The iperf3 service's port, when started with `--iperf3`.
    pub(crate) iperf3_port: Option<u16>,
    /// Holds the agent's stderr; dropped after the agent is killed.
    scratch: Scratch,
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
        let scratch = Scratch::new("serve");
        let stderr_path = scratch.path("stderr");
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(env!("CARGO_BIN_EXE_wirespeed"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_wirespeed")),
        };
        let mut child = ChildGuard::new(
            command
                .args(["serve", "-B", bind, "-p", "0"])
                .args(extra)
                .stdout(std::process::Stdio::piped())
                .stderr(std::fs::File::create(&stderr_path).unwrap())
                .spawn()
                .expect("the agent starts"),
        );
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
            drop(child);
            panic!(
                "no port in {first:?}: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        };
        ServeProcess {
            child,
            port,
            iperf3_port,
            scratch,
        }
    }

    /// What the agent printed on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(self.scratch.path("stderr")).unwrap_or_default()
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
