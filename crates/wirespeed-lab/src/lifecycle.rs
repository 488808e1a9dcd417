//! A lab's life as the `wirespeed lab` commands see it: up in the background, found by name,
//! looked at, taken down, and never left behind.
//!
//! `lab up` builds the lab, then forks: the child is the lab's emulator process (new session,
//! standard streams on /dev/null and a log file, SIGTERM/SIGINT/SIGHUP waited for with
//! `sigtimedwait` so that no signal can interrupt a half-done teardown); the parent returns the
//! name once the child says it runs. The child writes its state under
//! `/run/wirespeed-lab/NAME/`: `lab.json` (what the lab is) and, every 200 ms, `status.json`
//! (its counters). Whatever ends the child (a signal, `lab down`, its parent's death for
//! `lab run`), it stops its threads, closes the TAP devices, deletes the namespaces and its
//! state directory before it exits. If it is killed outright, its devices vanish with it and
//! `lab down NAME` or `lab down --all` removes the namespaces it left.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::runtime::{Lab, PortStatus};
use crate::sys;
use crate::topology::{NodeKind, Topology};

/// Where running labs record themselves.
pub const STATE_ROOT: &str = "/run/wirespeed-lab";

/// Everything that can go wrong with a lab.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// The process lacks CAP_NET_ADMIN.
    #[error(
        "building a lab needs CAP_NET_ADMIN (network namespaces and TAP devices): run as root or grant the capability"
    )]
    NeedNetAdmin,
    /// A topology file was wrong.
    #[error(transparent)]
    Topology(#[from] crate::TopologyError),
    /// A system call or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// An `ip` command failed.
    #[error("{command} failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed.
        stderr: String,
    },
    /// No running lab has this name.
    #[error("no lab named '{name}' is running (see `wirespeed lab status` for the running ones)")]
    UnknownLab {
        /// The name asked for.
        name: String,
    },
    /// The lab has no node of this name.
    #[error("lab '{lab}' has no node '{node}' (it has: {known})")]
    UnknownNode {
        /// The lab.
        lab: String,
        /// The node asked for.
        node: String,
        /// Its nodes.
        known: String,
    },
    /// The emulator process did not come up.
    #[error("the emulator process of lab '{name}' did not start; see {log}")]
    EmulatorFailed {
        /// The lab.
        name: String,
        /// Its log file.
        log: String,
    },
}

/// A node of a running lab, as recorded in `lab.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeRecord {
    /// Its name in the topology.
    pub name: String,
    /// "host" or "router".
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// `interface address/prefix` entries.
    pub addresses: Vec<String>,
}

/// What a running lab is: written by its emulator process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabRecord {
    /// Its name.
    pub name: String,
    /// The emulator process.
    pub pid: i32,
    /// The topology file it came from.
    pub file: String,
    /// Its nodes.
    pub nodes: Vec<NodeRecord>,
}

impl LabRecord {
    fn of(lab: &Lab, file: &str, pid: i32) -> LabRecord {
        let nodes = lab
            .topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| NodeRecord {
                name: node.name.clone(),
                kind: match node.kind {
                    NodeKind::Host(_) => "host".into(),
                    NodeKind::Router(_) => "router".into(),
                },
                namespace: lab.namespaces()[i].clone(),
                addresses: lab
                    .plan
                    .interfaces
                    .iter()
                    .filter(|f| f.node == i)
                    .flat_map(|f| {
                        std::iter::once(format!("{} {}", f.name, f.ipv4))
                            .chain(f.ipv6.map(|v6| format!("{} {v6}/64", f.name)))
                    })
                    .chain(
                        lab.plan
                            .stations
                            .iter()
                            .filter(|s| s.node == i)
                            .map(|s| format!("{} {}", s.name, s.ipv4)),
                    )
                    .collect(),
            })
            .collect();
        LabRecord {
            name: lab.name.clone(),
            pid,
            file: file.to_string(),
            nodes,
        }
    }

    /// The namespace of node `node`.
    pub fn namespace(&self, node: &str) -> Result<&str, LabError> {
        self.nodes
            .iter()
            .find(|n| n.name == node)
            .map(|n| n.namespace.as_str())
            .ok_or_else(|| LabError::UnknownNode {
                lab: self.name.clone(),
                node: node.to_string(),
                known: self
                    .nodes
                    .iter()
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The counters of a running lab, written by its emulator every 200 ms.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatusRecord {
    /// Counts the writes, so that a reader can wait for a fresh one.
    pub sequence: u64,
    /// Seconds the emulator has run.
    pub uptime_seconds: f64,
    /// One entry per direction of each link.
    pub ports: Vec<PortStatus>,
}

fn state_dir(name: &str) -> PathBuf {
    Path::new(STATE_ROOT).join(name)
}

/// A lab name from a topology: its `name` key or the file's stem, made safe, plus a suffix that
/// makes it unique among running labs. Also returns the 4-hex-digit id used in device names.
pub fn fresh_name(topology: &Topology, file: &Path) -> (String, String) {
    let base = topology
        .name
        .clone()
        .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "lab".into());
    let mut base: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    base.truncate(16);
    let mut seed = std::process::id() as u64 ^ crate::emulator::clock::monotonic_now().0;
    loop {
        seed = crate::emulator::link::SplitMix64::new(seed).next_u64();
        let id = format!("{:04x}", seed & 0xffff);
        let name = format!("{base}-{id}");
        let taken = state_dir(&name).exists()
            || sys::links()
                .iter()
                .any(|l| l.starts_with(&format!("ws-{id}-")))
            || sys::namespaces()
                .iter()
                .any(|n| n.starts_with(&format!("ws-{name}-")));
        if !taken {
            return (name, id);
        }
    }
}

/// A lab running in a background emulator process.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// Its name.
    pub name: String,
    /// The emulator process.
    pub pid: i32,
}

/// How the emulator process relates to the one that starts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detach {
    /// Outlives its parent (`lab up`).
    Independent,
    /// Is told SIGTERM when its parent dies (`lab run`).
    DiesWithParent,
}

fn fail(what: &str) -> LabError {
    LabError::Io {
        what: what.to_string(),
        source: std::io::Error::last_os_error(),
    }
}

/// Builds `topology` and leaves it running in a background process; returns once it runs.
pub fn up(topology: Topology, file: &Path, detach: Detach) -> Result<Running, LabError> {
    sys::require_net_admin()?;
    let (name, id) = fresh_name(&topology, file);
    let dir = state_dir(&name);
    std::fs::create_dir_all(&dir).map_err(|source| LabError::Io {
        what: format!("create {}", dir.display()),
        source,
    })?;
    let lab = match Lab::build(topology, &name, &id) {
        Ok(lab) => lab,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(fail("create a pipe"));
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let parent = unsafe { libc::getpid() };
    // SAFETY: the process is single-threaded here (Lab::build joins the threads it starts), so
    // the child may run ordinary Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(fail("fork the emulator process"));
    }
    if pid == 0 {
        drop(read_end);
        let code = emulator_process(lab, file, &dir, write_end, detach, parent);
        // SAFETY: _exit ends the child without running the parent's atexit handlers.
        unsafe { libc::_exit(code) };
    }
    drop(write_end);
    let mut ok = [0u8; 1];
    let started = std::fs::File::from(read_end).read(&mut ok).unwrap_or(0) == 1;
    if started {
        lab.release();
        Ok(Running { name, pid })
    } else {
        let log = dir.join("emulator.log").display().to_string();
        drop(lab);
        Err(LabError::EmulatorFailed { name, log })
    }
}

fn emulator_process(
    mut lab: Lab,
    file: &Path,
    dir: &Path,
    ready: OwnedFd,
    detach: Detach,
    parent: i32,
) -> i32 {
    // SAFETY: plain system calls on this process with valid arguments.
    unsafe {
        libc::setsid();
        if detach == Detach::DiesWithParent {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != parent {
                return 1;
            }
        }
    }
    redirect_stdio(&dir.join("emulator.log"));
    let signals = blocked_signals();
    let emulator = lab.start();
    let record = LabRecord::of(&lab, &file.display().to_string(), std::process::id() as i32);
    let wrote = write_json(&dir.join("lab.json"), &record).is_ok()
        && crate::inside::LabTruth::of(&lab.name, &lab.topology, &lab.plan, lab.namespaces())
            .write(dir)
            .is_ok()
        && std::fs::write(dir.join("pid"), format!("{}\n", record.pid)).is_ok();
    if !wrote {
        eprintln!("cannot write the lab's state under {}", dir.display());
        emulator.stop();
        lab.teardown();
        let _ = std::fs::remove_dir_all(dir);
        return 1;
    }
    let started = Instant::now();
    let mut sequence = 0;
    let _ = write_status(dir, &emulator.status(), 0.0, sequence);
    let _ = std::fs::File::from(ready).write_all(b"1");
    loop {
        match wait_signal(&signals, Duration::from_millis(200)) {
            // SIGUSR1: a reader wants the counters now.
            Some(libc::SIGUSR1) | None => {}
            Some(signal) => {
                eprintln!("signal {signal}: tearing down");
                break;
            }
        }
        sequence += 1;
        let _ = write_status(
            dir,
            &emulator.status(),
            started.elapsed().as_secs_f64(),
            sequence,
        );
    }
    emulator.stop();
    lab.teardown();
    let _ = std::fs::remove_dir_all(dir);
    0
}

fn redirect_stdio(log: &Path) {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log);
    if let (Ok(null), Ok(log)) = (null, log) {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto the standard descriptors with valid source descriptors.
        unsafe {
            libc::dup2(null.as_raw_fd(), 0);
            libc::dup2(null.as_raw_fd(), 1);
            libc::dup2(log.as_raw_fd(), 2);
        }
    }
}

fn blocked_signals() -> libc::sigset_t {
    // SAFETY: sigset operations on a local set; pthread_sigmask on this thread, before any
    // emulator thread starts, so that they inherit the mask and only sigtimedwait sees them.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_signal(set: &libc::sigset_t, timeout: Duration) -> Option<i32> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: a valid set and timespec; the siginfo pointer may be null.
    let s = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (s > 0).then_some(s)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(value)?)?;
    std::fs::rename(tmp, path)
}

fn write_status(
    dir: &Path,
    ports: &[PortStatus],
    uptime: f64,
    sequence: u64,
) -> std::io::Result<()> {
    let record = StatusRecord {
        sequence,
        uptime_seconds: uptime,
        ports: ports.to_vec(),
    };
    write_json(&dir.join("status.json"), &record)
}

/// The record of running lab `name`.
pub fn record(name: &str) -> Result<LabRecord, LabError> {
    let path = state_dir(name).join("lab.json");
    let text = std::fs::read_to_string(&path).map_err(|_| LabError::UnknownLab {
        name: name.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| LabError::Io {
        what: format!("read {}", path.display()),
        source: std::io::Error::other(e),
    })
}

fn read_status(name: &str) -> Result<StatusRecord, LabError> {
    let path = state_dir(name).join("status.json");
    let text = std::fs::read_to_string(&path).map_err(|source| LabError::Io {
        what: format!("read {}", path.display()),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| LabError::Io {
        what: format!("read {}", path.display()),
        source: std::io::Error::other(e),
    })
}

/// The counters of running lab `name`, now: the emulator is asked (SIGUSR1) to write them and
/// the fresh copy is read (the last periodic copy, at most 200 ms old, if it does not answer
/// within a second).
pub fn status(name: &str) -> Result<(LabRecord, StatusRecord), LabError> {
    let record = record(name)?;
    let before = read_status(name)?;
    if alive(record.pid) && is_emulator(record.pid) {
        // SAFETY: SIGUSR1 to the lab's own emulator process, which waits for it.
        unsafe { libc::kill(record.pid, libc::SIGUSR1) };
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
            if let Ok(fresh) = read_status(name)
                && fresh.sequence > before.sequence
            {
                return Ok((record, fresh));
            }
        }
    }
    Ok((record, before))
}

/// Names of the labs recorded under the state directory.
pub fn running() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(STATE_ROOT)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// True if process `pid` exists.
pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

/// True if `pid` is one of our emulator processes (a wirespeed process), not a reused pid.
fn is_emulator(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).contains("wirespeed"))
        .unwrap_or(false)
}

/// What `down` removed.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DownReport {
    /// Labs whose emulator was stopped.
    pub labs: Vec<String>,
    /// Namespaces deleted here (left behind by an emulator that could not clean up).
    pub namespaces: Vec<String>,
    /// Devices deleted here.
    pub links: Vec<String>,
}

/// Stops lab `name`: SIGTERM to its emulator, which tears down; whatever it leaves is removed.
pub fn down(name: &str) -> Result<DownReport, LabError> {
    sys::require_net_admin()?;
    let dir = state_dir(name);
    let pid = std::fs::read_to_string(dir.join("pid"))
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let prefix = format!("{}{name}-", sys::PREFIX);
    let leftovers = sys::namespaces().iter().any(|n| n.starts_with(&prefix));
    if pid.is_none() && !dir.exists() && !leftovers {
        return Err(LabError::UnknownLab {
            name: name.to_string(),
        });
    }
    let mut report = DownReport {
        labs: vec![name.to_string()],
        ..DownReport::default()
    };
    if let Some(pid) = pid.filter(|&p| alive(p) && is_emulator(p)) {
        // SAFETY: sending SIGTERM to the lab's own emulator process, recorded by it.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) && !is_zombie(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for ns in sys::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
    {
        if sys::delete_namespace(&ns).is_ok() {
            report.namespaces.push(ns);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(report)
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Stops every recorded lab, then deletes every namespace and root-namespace device whose name
/// starts with `ws-`.
pub fn down_all() -> Result<DownReport, LabError> {
    sys::require_net_admin()?;
    let mut report = DownReport::default();
    for name in running() {
        let one = down(&name)?;
        report.labs.extend(one.labs);
        report.namespaces.extend(one.namespaces);
    }
    for ns in sys::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(sys::PREFIX))
    {
        if sys::delete_namespace(&ns).is_ok() {
            report.namespaces.push(ns);
        }
    }
    for link in sys::links()
        .into_iter()
        .filter(|l| l.starts_with(sys::PREFIX))
    {
        if sys::ip(&["link", "del", &link], None).is_ok() {
            report.links.push(link);
        }
    }
    Ok(report)
}
