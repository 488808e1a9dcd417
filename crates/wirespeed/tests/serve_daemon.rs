//! `serve --daemon`, `--pidfile` and `--logfile` (iperf3's -D, -I and --logfile): the command
//! returns once the ports are bound, the daemon serves and logs, a second agent on the same pid
//! file is refused, and SIGTERM ends the daemon and removes its pid file.

use std::time::{Duration, Instant};

use crate::util::{Scratch, assert_one_line_error, wirespeed};

/// Whether `pid` runs (a zombie, ended but not yet reaped by its new parent, does not).
fn runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// A daemon this test started: ended by its pid if the test did not end it (a failed
/// assertion must not leave an agent behind; it is in a session of its own, out of reach of
/// the harness's process group).
struct Daemon(i32);

impl Drop for Daemon {
    fn drop(&mut self) {
        if runs(self.0) {
            // SAFETY: kill with a pid this test's own command reported and a valid signal.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

fn wait_for(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < until, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The port and pid in "listening on 127.0.0.1:PORT ... as pid PID".
fn port_and_pid(line: &str) -> (String, i32) {
    let port = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no port in {line:?}"))
        .to_string();
    let pid = line
        .split("as pid ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"));
    (port, pid)
}

#[test]
fn a_daemon_serves_logs_holds_its_pid_file_and_ends_on_sigterm() {
    let dir = Scratch::new("daemon-serve");
    let (pidfile, logfile) = (dir.arg("agent.pid"), dir.arg("agent.log"));
    let started = wirespeed(&[
        "serve",
        "-B",
        "127.0.0.1",
        "-p",
        "0",
        "--daemon",
        "--pidfile",
        &pidfile,
        "--logfile",
        &logfile,
    ]);
    assert_eq!(started.status, 0, "{}", started.stderr);
    let (port, pid) = port_and_pid(started.stdout.lines().next().unwrap_or_default());
    let daemon = Daemon(pid);
    assert!(runs(pid), "the daemon runs after the command returned");
    assert_eq!(
        std::fs::read_to_string(&pidfile).unwrap().trim(),
        pid.to_string()
    );
    // It serves, and its session log goes to the log file.
    let test = wirespeed(&["tcp", "127.0.0.1", "-p", &port, "-n", "1MiB"]);
    assert_eq!(test.status, 0, "{}", test.stderr);
    wait_for("the session in the log", Duration::from_secs(10), || {
        std::fs::read_to_string(&logfile).is_ok_and(|l| l.contains("session 1 from 127.0.0.1"))
    });
    // A second agent on the same pid file is refused before it binds anything.
    let second = wirespeed(&["serve", "-B", "127.0.0.1", "-p", "0", "--pidfile", &pidfile]);
    assert_one_line_error(&second, &format!("agent {pid} is running"));
    // SIGTERM ends it; it removes its pid file on the way out.
    // SAFETY: kill with the pid the daemon's own command reported and a valid signal.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_for("the daemon's end", Duration::from_secs(10), || !runs(pid));
    wait_for("the pid file's removal", Duration::from_secs(2), || {
        !std::path::Path::new(&pidfile).exists()
    });
    drop(daemon);
    // With --json the command's one line carries the daemon's pid, for a script.
    let started = wirespeed(&["serve", "-B", "127.0.0.1", "-p", "0", "-D", "--json"]);
    assert_eq!(started.status, 0, "{}", started.stderr);
    let doc: serde_json::Value = serde_json::from_str(started.stdout.trim()).unwrap();
    let pid = doc["daemon_pid"].as_i64().expect("daemon_pid") as i32;
    let _daemon = Daemon(pid);
    assert!(doc["listening"].as_str().unwrap().starts_with("127.0.0.1:"));
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_for("the daemon's end", Duration::from_secs(10), || !runs(pid));
}

#[test]
fn unusable_pid_and_log_files_are_one_line_before_anything_listens() {
    let dir = Scratch::new("daemon-bad");
    assert_one_line_error(
        &wirespeed(&[
            "serve",
            "-p",
            "0",
            "--logfile",
            "/nonexistent-dir/agent.log",
        ]),
        "--logfile /nonexistent-dir/agent.log: cannot append",
    );
    assert_one_line_error(
        &wirespeed(&[
            "serve",
            "-p",
            "0",
            "--pidfile",
            "/nonexistent-dir/agent.pid",
        ]),
        "cannot write the pid file",
    );
    let not_a_pid = dir.arg("notes.txt");
    std::fs::write(&not_a_pid, "my notes\n").unwrap();
    assert_one_line_error(
        &wirespeed(&["serve", "-p", "0", "--pidfile", &not_a_pid]),
        "not a pid file",
    );
    assert_eq!(
        std::fs::read_to_string(&not_a_pid).unwrap(),
        "my notes\n",
        "a file that is not a pid file is left as it was"
    );
}
