//! The packaged agent under its unit's own seccomp filter (packaging/wirespeed.service):
//! every test kind a client can ask for is served, a call outside the filter fails with EPERM
//! without killing the agent, and `load --raw` is served only with the documented drop-in.
//!
//! A container has no systemd to start the unit, so the agent runs the way systemd would start
//! it as far as the filter goes: `setpriv` gives it an unprivileged user and the unit's
//! capabilities, and packaging/debian/unit-seccomp.py loads the program systemd builds from
//! the unit's SystemCallFilter=, SystemCallErrorNumber=, RestrictAddressFamilies= and
//! MemoryDenyWriteExecute= (the @groups as this host's `systemd-analyze` lists them) before
//! exec'ing the agent. Root only (setpriv changes user); skipped, saying why, where
//! python3-seccomp, systemd-analyze or setpriv are missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{Scratch, ServeProcess, wirespeed};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Why this machine cannot load the unit's filter, if it cannot.
fn missing() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("needs root (setpriv changes the agent's user)".into());
    }
    let runs = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !runs("/usr/bin/python3", &["-c", "import seccomp"]) {
        return Some("no libseccomp Python binding (apt-get install python3-seccomp)".into());
    }
    if !runs("systemd-analyze", &["syscall-filter", "@system-service"]) {
        return Some("no systemd-analyze (apt-get install systemd)".into());
    }
    if !runs("setpriv", &["--version"]) {
        return Some("no setpriv (apt-get install util-linux)".into());
    }
    None
}

macro_rules! skip_unless_filter_loads {
    () => {
        if let Some(why) = missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// A scratch directory the unprivileged agent can read, holding the key (`auth.key`); the
/// drop-ins are written beside it.
fn readable_scratch(tag: &str) -> Scratch {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new(&format!("unit-{tag}"));
    std::fs::set_permissions(scratch.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = scratch.write("auth.key", "unit-filter-test-key-0123456789abcdef");
    std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o644)).unwrap();
    scratch
}

/// `wirespeed serve` on 127.0.0.1 under the unit's filter with `drop_ins`, as user 65534 with
/// `caps` (setpriv names, e.g. "net_raw") as its only capabilities.
fn filtered_agent(scratch: &Scratch, drop_ins: &[String], caps: &[&str]) -> ServeProcess {
    let unit = repo()
        .join("packaging/wirespeed.service")
        .display()
        .to_string();
    let loader = repo()
        .join("packaging/debian/unit-seccomp.py")
        .display()
        .to_string();
    let plus: String = caps.iter().map(|c| format!(",+{c}")).collect();
    let inheritable = format!("--inh-caps=-all{plus}");
    let bounding = format!("--bounding-set=-all{plus}");
    let ambient = format!("--ambient-caps=-all{plus}");
    let mut wrapper: Vec<&str> = vec![
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        &inheritable,
        &ambient,
        &bounding,
        "/usr/bin/python3",
        &loader,
        &unit,
    ];
    for d in drop_ins {
        wrapper.extend(["--drop-in", d]);
    }
    wrapper.push("--");
    ServeProcess::start_wrapped(
        &wrapper,
        "127.0.0.1",
        &["--auth-key-file", &scratch.arg("auth.key")],
    )
}

/// `-A` for a client and the agent on two different CPUs where there are two.
fn affinity() -> &'static str {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 { "0,1" } else { "0,0" }
}

/// Runs one client against the agent and asserts it succeeded.
fn served(agent: &mut ServeProcess, key: &str, kind: &str, args: &[&str]) {
    let port = agent.port.to_string();
    let mut all: Vec<&str> = args.to_vec();
    for a in all.iter_mut() {
        if *a == "PORT" {
            *a = &port;
        }
    }
    all.extend(["--auth-key-file", key]);
    let run = wirespeed(&all);
    assert_eq!(
        run.status,
        0,
        "{kind} under the unit's filter: {}\nagent: {}",
        run.stderr,
        agent.stderr()
    );
    assert!(agent.alive(), "{kind} ended the agent: {}", agent.stderr());
}

#[test]
fn the_units_filter_serves_every_test_kind() {
    skip_unless_filter_loads!();
    let scratch = readable_scratch("kinds");
    let mut agent = filtered_agent(&scratch, &[], &[]);
    let key = scratch.arg("auth.key");
    let kinds: [(&str, Vec<&str>); 8] = [
        ("tcp", vec!["tcp", "127.0.0.1", "-p", "PORT", "-t", "0.5"]),
        (
            "tcp -R",
            vec!["tcp", "127.0.0.1", "-p", "PORT", "-t", "0.5", "-R"],
        ),
        (
            "tcp -A",
            vec![
                "tcp",
                "127.0.0.1",
                "-p",
                "PORT",
                "-t",
                "0.5",
                "-A",
                affinity(),
            ],
        ),
        (
            "udp",
            vec!["udp", "127.0.0.1", "-p", "PORT", "-t", "0.5", "-b", "10M"],
        ),
        (
            "latency (echo, RR, load)",
            vec![
                "latency",
                "127.0.0.1",
                "-p",
                "PORT",
                "--idle",
                "0.5s",
                "-t",
                "1s",
                "-P",
                "1",
            ],
        ),
        (
            "latency --rr",
            vec!["latency", "127.0.0.1", "-p", "PORT", "--rr", "-t", "0.5s"],
        ),
        (
            "load",
            vec![
                "load",
                "-a",
                "127.0.0.1:PORT",
                "--settle",
                "0.2s",
                "-t",
                "0.6s",
                "--measure",
                "0.2s",
                "--cooldown",
                "0.2s",
                "-l",
                "512",
            ],
        ),
        (
            "probe --udp (echo)",
            vec!["probe", "--udp", "127.0.0.1", "-p", "PORT"],
        ),
    ];
    // `load -a` takes HOST:PORT in one word.
    let joined = format!("127.0.0.1:{}", agent.port);
    for (kind, args) in &kinds {
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "127.0.0.1:PORT" { &joined } else { *a })
            .collect();
        served(&mut agent, &key, kind, &args);
    }
    // Without the drop-in a packet socket is outside RestrictAddressFamilies=: the client is
    // told, the agent goes on.
    let raw = wirespeed(&[
        "load",
        "-a",
        &joined,
        "--settle",
        "0.2s",
        "-t",
        "0.6s",
        "--measure",
        "0.2s",
        "--cooldown",
        "0.2s",
        "-l",
        "512",
        "--raw",
        "lo",
        "--auth-key-file",
        &key,
    ]);
    assert_eq!(raw.status, 2, "{}", raw.stderr);
    assert!(
        raw.stderr.contains("Address family not supported"),
        "{}",
        raw.stderr
    );
    served(
        &mut agent,
        &key,
        "tcp after the refusal",
        &["tcp", "127.0.0.1", "-p", "PORT", "-t", "0.3"],
    );
}

#[test]
fn a_call_outside_the_units_filter_fails_with_eperm_and_the_agent_lives() {
    skip_unless_filter_loads!();
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: no strace to see the refused call (apt-get install strace)");
        return;
    }
    // The unit's filter as the issue found it (sched_setaffinity refused), with the unit's
    // SystemCallErrorNumber=EPERM: a client's -A now costs the pinning, not the agent.
    let scratch = readable_scratch("eperm");
    let deny = scratch.write(
        "deny-affinity.conf",
        "[Service]\nSystemCallFilter=~sched_setaffinity\n",
    );
    let mut agent = filtered_agent(&scratch, &[deny], &[]);
    let trace = scratch.path("strace.txt");
    let mut strace = Command::new("strace")
        .args(["-f", "-e", "trace=sched_setaffinity", "-o"])
        .arg(&trace)
        .args(["-p", &agent.pid().to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .expect("strace starts");
    // strace says when it has attached; only then is the client's call seen.
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(strace.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("attached"), "strace: {line}");
    }
    let key = scratch.arg("auth.key");
    served(
        &mut agent,
        &key,
        "tcp -A with sched_setaffinity refused",
        &["tcp", "127.0.0.1", "-p", "PORT", "-t", "0.5", "-A", "0,0"],
    );
    served(
        &mut agent,
        &key,
        "the next tcp",
        &["tcp", "127.0.0.1", "-p", "PORT", "-t", "0.3"],
    );
    drop(agent);
    let _ = strace.wait();
    let seen = std::fs::read_to_string(&trace).unwrap_or_default();
    assert!(
        seen.lines()
            .any(|l| l.contains("sched_setaffinity(") && l.contains("= -1 EPERM")),
        "no refused sched_setaffinity in the trace: {seen}"
    );
}

#[test]
fn the_raw_load_drop_in_lets_the_agent_serve_load_raw() {
    skip_unless_filter_loads!();
    let scratch = readable_scratch("raw");
    let drop_in = repo()
        .join("packaging/debian/raw-load.conf")
        .display()
        .to_string();
    let mut agent = filtered_agent(&scratch, &[drop_in], &["net_raw"]);
    let joined = format!("127.0.0.1:{}", agent.port);
    let key = scratch.arg("auth.key");
    served(
        &mut agent,
        &key,
        "load --raw with the drop-in",
        &[
            "load",
            "-a",
            &joined,
            "--settle",
            "0.2s",
            "-t",
            "0.6s",
            "--measure",
            "0.2s",
            "--cooldown",
            "0.2s",
            "-l",
            "512",
            "--raw",
            "lo",
        ],
    );
}
