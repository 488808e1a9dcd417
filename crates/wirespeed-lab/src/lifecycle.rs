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
//!
//! Safety rules (docs/lab-safety.md): a lab name is an identifier, never a path or a prefix;
//! the state is written before anything is built and records the owner (uid), the emulator's
//! pid and start time, the namespaces, devices and cgroup; `down` acts on one exact lab whose
//! state this program wrote (schema, name, owner and every recorded object checked), and only
//! on the objects recorded there; `down --all` takes only the caller's own labs unless forced.
//! Every process in the lab's cgroup or namespaces is ended ([`crate::cleanup`]), and `down`
//! reports success only once the emulator is gone.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{
    Pid, Signal, WaitOptions, getpid, getppid, getuid, set_parent_process_death_signal, setsid,
    test_kill_process, waitpid,
};
use rustix::stdio::{dup2_stderr, dup2_stdin, dup2_stdout};
use serde::{Deserialize, Serialize};

use crate::addressing::Plan;
use crate::cleanup;
use crate::runtime::{Lab, PortStatus, namespace_name};
use crate::sys;
use crate::sys::process::{Forked, SignalSet};
use crate::topology::{NodeKind, Topology, is_lab_base_name};

/// Where running labs record themselves.
pub const STATE_ROOT: &str = "/run/wirespeed-lab";
/// Environment variable that moves the state directory (an absolute path), so that a test or
/// a user can keep separate sets of labs; `down --all` sees only the labs recorded there.
pub const STATE_ENV: &str = "WIRESPEED_LAB_STATE";
/// Schema of `lab.json`: a state file without it was not written by this program.
pub const STATE_SCHEMA: &str = "wirespeed.lab.state.v1";
/// Longest lab name: a base of up to 16 characters, '-', four hex digits, with room to spare.
pub const MAX_NAME: usize = 32;
/// How long `down` waits for the emulator after SIGTERM before it sends SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long `down` waits for the emulator to vanish after SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// The files a lab's state directory may hold; `down` removes these and nothing else.
const STATE_FILES: &[&str] = &[
    "lab.json",
    "lab.tmp",
    "status.json",
    "status.tmp",
    "pid",
    "emulator.log",
    crate::inside::FILE_NAME,
    crate::inside::TEMP_NAME,
    crate::inside::ROUTES_NAME,
    crate::inside::ROUTES_TEMP_NAME,
];

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
    /// `WIRESPEED_LAB_INGRESS_STAMPS` holds a value it does not take.
    #[error(
        "WIRESPEED_LAB_INGRESS_STAMPS={value} is not a choice: 0 (no link charged from transmit stamps) or all (every link, whatever its rate); unset for links of at most 1 Gbit/s"
    )]
    BadStampsSetting {
        /// The value found.
        value: String,
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
    /// A lab name that is not an identifier (a path, empty, odd characters).
    #[error(
        "'{name}' is not a lab name (1 to {MAX_NAME} of a-z, 0-9 and '-', as `lab up` printed it; `wirespeed lab status` lists the running labs)"
    )]
    BadName {
        /// What was given.
        name: String,
    },
    /// The state directory of a lab holds something this program did not write.
    #[error(
        "the state of lab '{name}' ({path}) was not written by wirespeed: {reason}; nothing was removed (inspect it and remove it by hand)"
    )]
    NotOurs {
        /// The lab.
        name: String,
        /// Its state file or directory.
        path: String,
        /// What did not match.
        reason: String,
    },
    /// A record whose claims do not hold on this system: the process it names is not its
    /// emulator, another emulator runs the lab, or a namespace is not the one it made.
    #[error(
        "the state of lab '{name}' ({path}) does not match what runs: {reason}; nothing was signalled or removed"
    )]
    Mismatch {
        /// The lab.
        name: String,
        /// Its state file.
        path: String,
        /// What did not match.
        reason: String,
    },
    /// The state directory variable is not an absolute path.
    #[error(
        "{STATE_ENV}={value} is not an absolute path: set it to a directory such as /tmp/my-labs, or unset it"
    )]
    BadStateRoot {
        /// Its value.
        value: String,
    },
    /// An environment variable that tunes the emulator has a value it cannot use.
    #[error("{message}")]
    BadSetting {
        /// The one-line message, naming the variable and the fix.
        message: String,
    },
    /// The emulator survived SIGTERM and SIGKILL.
    #[error(
        "the emulator of lab '{name}' (pid {pid}) is still running after SIGKILL; the lab was not removed"
    )]
    StillRunning {
        /// The lab.
        name: String,
        /// The emulator's pid.
        pid: i32,
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
    /// Device and inode of its namespace (/run/netns/NAME), recorded when `lab up` made it:
    /// `down` deletes a namespace of that name only if it is still this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_id: Option<(u64, u64)>,
}

/// What a running lab is: written by `lab up` before anything is built, completed by its
/// emulator process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabRecord {
    /// [`STATE_SCHEMA`].
    #[serde(default)]
    pub schema: String,
    /// Its name.
    pub name: String,
    /// The user that made it (`down --all` takes only the caller's own labs).
    #[serde(default)]
    pub uid: Option<u32>,
    /// The emulator process (0 until it runs).
    pub pid: i32,
    /// The emulator's start time (/proc/PID/stat field 22), so that a reused pid is never
    /// signalled.
    #[serde(default)]
    pub start_time: u64,
    /// The topology file it came from.
    pub file: String,
    /// Its nodes.
    pub nodes: Vec<NodeRecord>,
    /// The TAP devices it creates (in the root namespace only while it is being built).
    #[serde(default)]
    pub devices: Vec<String>,
    /// The cgroup that holds every process started in it, if one could be made.
    #[serde(default)]
    pub cgroup: Option<String>,
    /// The emulator's executable and cgroup, once it runs (boxed, so that the record stays
    /// small in the results that carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator: Option<Box<EmulatorIdentity>>,
    /// The lab's own cost per crossing of each point-to-point link, measured by the emulator
    /// process as the lab came up (`crate::crossing`), before `lab up` returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crossings: Vec<crate::crossing::CrossingCost>,
}

/// What `down` checks a live emulator process against, besides its pid and start time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EmulatorIdentity {
    /// Its executable (/proc/PID/exe when it started).
    pub exe: String,
    /// Its own cgroup (/proc/PID/cgroup when it started).
    pub cgroup: String,
}

impl LabRecord {
    fn planned(
        topology: &Topology,
        plan: &Plan,
        name: &str,
        tap_id: &str,
        file: &str,
        cgroup: Option<&Path>,
    ) -> LabRecord {
        let nodes = topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| NodeRecord {
                name: node.name.clone(),
                kind: match node.kind {
                    NodeKind::Host(_) => "host".into(),
                    NodeKind::Router(_) => "router".into(),
                },
                namespace: namespace_name(name, &node.name),
                addresses: plan
                    .interfaces
                    .iter()
                    .filter(|f| f.node == i)
                    .flat_map(|f| {
                        std::iter::once(format!("{} {}", f.name, f.ipv4))
                            .chain(f.ipv6.map(|v6| format!("{} {v6}/64", f.name)))
                    })
                    .chain(
                        plan.stations
                            .iter()
                            .filter(|s| s.node == i)
                            .map(|s| format!("{} {}", s.name, s.ipv4)),
                    )
                    .collect(),
                namespace_id: None,
            })
            .collect();
        let ports = plan.interfaces.len() + plan.stations.len();
        LabRecord {
            schema: STATE_SCHEMA.into(),
            name: name.to_string(),
            uid: Some(getuid().as_raw()),
            pid: 0,
            start_time: 0,
            file: file.to_string(),
            nodes,
            devices: (0..ports)
                .map(|port| format!("{}{tap_id}-{port}", sys::PREFIX))
                .collect(),
            cgroup: cgroup.map(|c| c.display().to_string()),
            emulator: None,
            crossings: Vec::new(),
        }
    }

    /// Checks that this record is one this program wrote for lab `name`, and that every object
    /// it names is one a lab of that name may own: otherwise `down` must not act on it.
    pub fn verify(&self, name: &str) -> Result<(), String> {
        if self.schema != STATE_SCHEMA {
            return Err(format!("schema '{}' is not {STATE_SCHEMA}", self.schema));
        }
        if self.name != name {
            return Err(format!("it records the name '{}'", self.name));
        }
        if self.uid.is_none() {
            return Err("it records no owner".into());
        }
        let prefix = format!("{}{name}-", sys::PREFIX);
        for node in &self.nodes {
            let ns = &node.namespace;
            let tail = ns.strip_prefix(&prefix).unwrap_or("");
            if tail.is_empty()
                || !tail
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(format!("namespace '{ns}' is not one of lab {name}"));
            }
        }
        for dev in &self.devices {
            let ok = dev.len() < 16
                && dev.starts_with(sys::PREFIX)
                && dev[sys::PREFIX.len()..]
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == '-');
            if !ok {
                return Err(format!("device '{dev}' is not a lab device"));
            }
        }
        if let Some(cgroup) = &self.cgroup
            && !cleanup::is_lab_cgroup(Path::new(cgroup), name)
        {
            return Err(format!("cgroup '{cgroup}' is not lab {name}'s"));
        }
        Ok(())
    }

    /// The namespaces recorded for this lab.
    pub fn namespaces(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.namespace.clone()).collect()
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

/// The directory where labs record themselves: [`STATE_ENV`] if set, else [`STATE_ROOT`].
pub fn state_root() -> Result<PathBuf, LabError> {
    match std::env::var_os(STATE_ENV) {
        Some(v) if !v.is_empty() => {
            let path = PathBuf::from(&v);
            if path.is_absolute() && !path.components().any(|c| c.as_os_str() == "..") {
                Ok(path)
            } else {
                Err(LabError::BadStateRoot {
                    value: v.to_string_lossy().into_owned(),
                })
            }
        }
        _ => Ok(PathBuf::from(STATE_ROOT)),
    }
}

/// True if `name` is a lab name: 1 to [`MAX_NAME`] of a-z, 0-9 and '-', starting with a
/// letter or digit, not ending with '-'. Never a path, never empty.
pub fn is_lab_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The state directory of lab `name`, once the name is checked.
fn state_dir(name: &str) -> Result<PathBuf, LabError> {
    if !is_lab_name(name) {
        return Err(LabError::BadName {
            name: name.to_string(),
        });
    }
    Ok(state_root()?.join(name))
}

/// A lab name from a topology: its `name` key or the file's stem, made safe, plus a suffix that
/// makes it unique among running labs. Also returns the 4-hex-digit id used in device names.
pub fn fresh_name(topology: &Topology, file: &Path) -> (String, String) {
    let base = topology
        .name
        .clone()
        .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "lab".into());
    let base: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(crate::topology::MAX_LAB_NAME)
        .collect();
    // A file called "-.toml" or "___.toml" gives no usable name: the lab is then "lab-XXXX".
    let trimmed = base.trim_matches('-');
    let base = if is_lab_base_name(trimmed) {
        trimmed.to_string()
    } else {
        "lab".to_string()
    };
    let root = state_root().unwrap_or_else(|_| PathBuf::from(STATE_ROOT));
    let mut seed = std::process::id() as u64 ^ crate::emulator::clock::monotonic_now().0;
    loop {
        seed = crate::emulator::link::SplitMix64::new(seed).next_u64();
        let id = format!("{:04x}", seed & 0xffff);
        let name = format!("{base}-{id}");
        let taken = root.join(&name).exists()
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

/// What the emulator process does across the lab's links before `up` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Settle {
    /// One echo across each point-to-point link (and three over IPv6 where the link carries
    /// it), so that every neighbour entry is resolved both ways: a measurement started right
    /// after `up` would otherwise pay the resolution, 0.7-2.2 ms, on its first crossing.
    #[default]
    Neighbours,
    /// That, and the lab's own cost per crossing of each link, fixed and per byte, measured by
    /// series of echoes at two sizes ([`crate::crossing::measure`], about 0.7-2.8 s) into the
    /// record's `crossings`: what the probe harness's truth with the lab's crossings needs,
    /// and `lab status` shows.
    MeasureCrossings,
}

/// Builds `topology` and leaves it running in a background process; returns once it runs,
/// its neighbours resolved ([`Settle::Neighbours`]).
pub fn up(topology: Topology, file: &Path, detach: Detach) -> Result<Running, LabError> {
    up_with(topology, file, detach, Settle::Neighbours)
}

/// [`up`], settling the lab as `settle` says before it returns.
///
/// The state (owner, namespaces, devices, cgroup) is written before anything is built, so that
/// whatever happens next, `down` finds every object by its record.
pub fn up_with(
    topology: Topology,
    file: &Path,
    detach: Detach,
    settle: Settle,
) -> Result<Running, LabError> {
    sys::require_net_admin()?;
    let (name, id) = fresh_name(&topology, file);
    let root = state_root()?;
    let dir = state_dir(&name)?;
    std::fs::create_dir_all(&root).map_err(|source| LabError::Io {
        what: format!("create {}", root.display()),
        source,
    })?;
    std::fs::create_dir(&dir).map_err(|source| LabError::Io {
        what: format!("create {}", dir.display()),
        source,
    })?;
    let cgroup = cleanup::create_cgroup(&name);
    let plan = crate::addressing::plan(&topology);
    let file_text = file.display().to_string();
    let mut record =
        LabRecord::planned(&topology, &plan, &name, &id, &file_text, cgroup.as_deref());
    let undo = |dir: &Path| {
        if let Some(c) = &cgroup {
            cleanup::kill_cgroup(c);
        }
        remove_state(dir);
    };
    if let Err(source) = write_json(&dir.join("lab.json"), &record) {
        undo(&dir);
        return Err(LabError::Io {
            what: format!("write {}", dir.join("lab.json").display()),
            source,
        });
    }
    let lab = match Lab::build(topology, &name, &id) {
        Ok(lab) => lab,
        Err(e) => {
            undo(&dir);
            return Err(e);
        }
    };
    // What `down` checks before it deletes a namespace of these names.
    for node in &mut record.nodes {
        node.namespace_id = cleanup::namespace_ids(std::slice::from_ref(&node.namespace))
            .first()
            .copied();
    }
    let (read_end, write_end) = match pipe_with(PipeFlags::CLOEXEC) {
        Ok(ends) => ends,
        Err(e) => {
            drop(lab);
            undo(&dir);
            return Err(LabError::Io {
                what: "create a pipe".into(),
                source: e.into(),
            });
        }
    };
    let parent = getpid().as_raw_nonzero().get();
    // The process is single-threaded here (Lab::build joins the threads it starts), as fork
    // requires.
    let pid = match sys::process::fork() {
        Ok(Forked::Parent(pid)) => pid,
        Ok(Forked::Child) => {
            drop(read_end);
            let code = emulator_process(lab, record, &dir, write_end, detach, settle, parent);
            sys::process::exit_child(code);
        }
        Err(source) => {
            drop(lab);
            undo(&dir);
            return Err(LabError::Io {
                what: "fork the emulator process".into(),
                source,
            });
        }
    };
    drop(write_end);
    let mut ok = [0u8; 1];
    let started = std::fs::File::from(read_end).read(&mut ok).unwrap_or(0) == 1;
    if started {
        lab.release();
        Ok(Running { name, pid })
    } else {
        let log = dir.join("emulator.log").display().to_string();
        drop(lab);
        if let Some(c) = &cgroup {
            cleanup::kill_cgroup(c);
        }
        Err(LabError::EmulatorFailed { name, log })
    }
}

/// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // Fields after the command: state is field 3, so start time is the 20th of the rest.
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn emulator_process(
    mut lab: Lab,
    mut record: LabRecord,
    dir: &Path,
    ready: OwnedFd,
    detach: Detach,
    settle: Settle,
    parent: i32,
) -> i32 {
    let _ = setsid();
    if detach == Detach::DiesWithParent {
        let _ = set_parent_process_death_signal(Some(Signal::TERM));
        if Pid::as_raw(getppid()) != parent {
            return 1;
        }
    }
    redirect_stdio(&dir.join("emulator.log"));
    // The state directory is the emulator's working directory for its whole life: that is
    // how `down` tells the one emulator of this record from a copy of the record elsewhere.
    if std::env::set_current_dir(dir).is_err() {
        return 1;
    }
    record.emulator = executable_of("self")
        .zip(cgroup_of("self"))
        .map(|(exe, cgroup)| Box::new(EmulatorIdentity { exe, cgroup }));
    let signals = SignalSet::block(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1]);
    let emulator = lab.start();
    // Before `lab up` returns: a measurement started right after it finds every link's
    // neighbours resolved, and, when asked, the lab states what a crossing of each link costs
    // it (its echo series resolve the neighbours too).
    match settle {
        Settle::MeasureCrossings => {
            record.crossings = crate::crossing::measure(&lab.topology, &lab.plan, lab.namespaces());
        }
        Settle::Neighbours => {
            crate::crossing::resolve_neighbours(&lab.topology, &lab.plan, lab.namespaces())
        }
    }
    record.pid = std::process::id() as i32;
    record.start_time = start_time(record.pid).unwrap_or(0);
    let wrote = write_json(&dir.join("lab.json"), &record).is_ok()
        && crate::inside::LabTruth::of(&lab.name, &lab.topology, &lab.plan, lab.namespaces())
            .write(dir)
            .is_ok()
        && crate::inside::LabRoutes::of(&lab.name, &lab.topology, &lab.plan, lab.namespaces())
            .write(dir)
            .is_ok()
        && std::fs::write(dir.join("pid"), format!("{}\n", record.pid)).is_ok();
    if !wrote {
        eprintln!("cannot write the lab's state under {}", dir.display());
        emulator.stop();
        end_processes(&record);
        lab.teardown();
        remove_state(dir);
        return 1;
    }
    let started = Instant::now();
    let mut sequence = 0;
    let _ = write_status(dir, &emulator.status(), 0.0, sequence);
    let _ = std::fs::File::from(ready).write_all(b"1");
    loop {
        match signals.wait(Duration::from_millis(200)) {
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
    end_processes(&record);
    lab.teardown();
    remove_state(dir);
    0
}

/// Ends every process of the lab: its cgroup, then whatever is left in its namespaces.
/// Returns the pids signalled.
fn end_processes(record: &LabRecord) -> Vec<i32> {
    let mut killed = Vec::new();
    if let Some(cgroup) = &record.cgroup {
        killed.extend(cleanup::kill_cgroup(Path::new(cgroup)));
    }
    let ids = cleanup::namespace_ids(&record.namespaces());
    for pid in cleanup::kill_in_namespaces(&ids) {
        if !killed.contains(&pid) {
            killed.push(pid);
        }
    }
    killed
}

/// Removes the files a state directory may hold, then the directory; never anything else
/// (a directory with other files in it stays).
fn remove_state(dir: &Path) {
    for f in STATE_FILES {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let _ = std::fs::remove_dir(dir);
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
        let _ = dup2_stdin(&null);
        let _ = dup2_stdout(&null);
        let _ = dup2_stderr(&log);
    }
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

/// The state directory of lab `name` if it is a real directory (not a symlink).
fn existing_state_dir(name: &str) -> Result<PathBuf, LabError> {
    let dir = state_dir(name)?;
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => Err(LabError::NotOurs {
            name: name.to_string(),
            path: dir.display().to_string(),
            reason: "it is not a directory".into(),
        }),
        Err(_) => Err(LabError::UnknownLab {
            name: name.to_string(),
        }),
    }
}

/// The record of lab `name`, checked to be one this program wrote for that name.
pub fn record(name: &str) -> Result<LabRecord, LabError> {
    let dir = existing_state_dir(name)?;
    let path = dir.join("lab.json");
    let text = std::fs::read_to_string(&path).map_err(|_| LabError::UnknownLab {
        name: name.to_string(),
    })?;
    let not_ours = |reason: String| LabError::NotOurs {
        name: name.to_string(),
        path: path.display().to_string(),
        reason,
    };
    let record: LabRecord =
        serde_json::from_str(&text).map_err(|e| not_ours(format!("it does not parse ({e})")))?;
    record.verify(name).map_err(not_ours)?;
    Ok(record)
}

fn read_status(name: &str) -> Result<StatusRecord, LabError> {
    let path = existing_state_dir(name)?.join("status.json");
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
    let dir = existing_state_dir(name)?;
    if check_emulator(&record, &dir) == Ok(true) {
        // SIGUSR1 to the lab's own emulator process, which waits for it.
        sys::send_signal(record.pid, Signal::USR1);
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

/// The next counters lab `name`'s emulator writes by itself (every 200 ms), waiting at most
/// `timeout` for them; the copy there now if none comes. For a reader inside one of the lab's
/// namespaces, where [`status`] cannot check the lab's record (the cgroup hierarchy is not
/// mounted there) and so sends no signal: it only reads.
pub fn next_status(name: &str, timeout: Duration) -> Result<StatusRecord, LabError> {
    let before = read_status(name)?;
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        if let Ok(fresh) = read_status(name)
            && fresh.sequence > before.sequence
        {
            return Ok(fresh);
        }
    }
    Ok(before)
}

/// Names of the labs recorded under the state directory (only entries with a lab's name).
pub fn running() -> Vec<String> {
    let Ok(root) = state_root() else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| is_lab_name(n))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// True if process `pid` exists.
pub fn alive(pid: i32) -> bool {
    // Signal 0 only checks that the process exists.
    pid > 0 && Pid::from_raw(pid).is_some_and(|pid| test_kill_process(pid).is_ok())
}

/// True if the record's emulator runs: the pid exists, is not a zombie, and started when the
/// record says (so a reused pid is never taken for it).
fn is_our_emulator(record: &LabRecord) -> bool {
    record.pid > 0
        && alive(record.pid)
        && !is_zombie(record.pid)
        && record.start_time != 0
        && start_time(record.pid) == Some(record.start_time)
}

/// The executable of process `pid` ("self" for this one), without the " (deleted)" the
/// kernel appends once the file was replaced (an upgrade while the lab runs).
fn executable_of(pid: &str) -> Option<String> {
    let path = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let text = path.to_string_lossy();
    Some(text.strip_suffix(" (deleted)").unwrap_or(&text).to_string())
}

/// The cgroup membership of process `pid` ("self" for this one), as /proc/PID/cgroup lists it.
fn cgroup_of(pid: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .ok()
        .map(|t| t.trim().to_string())
}

/// Checks the record's emulator against the process its pid names, before anything is
/// signalled: `Ok(true)` if it runs and is this record's (pid, start time, executable, cgroup,
/// and its working directory is this state directory `dir`), `Ok(false)` if it is gone, and
/// the reason if a live process fits the pid and start time but not the rest (a record copied
/// from a running lab, or forged around an unrelated process).
fn check_emulator(record: &LabRecord, dir: &Path) -> Result<bool, String> {
    if !is_our_emulator(record) {
        return Ok(false);
    }
    let pid = record.pid;
    let Some(identity) = &record.emulator else {
        return Err(format!(
            "pid {pid} cannot be told to be this lab's emulator: the record names no executable or cgroup (a lab started by an older wirespeed: stop pid {pid} yourself)"
        ));
    };
    let found = executable_of(&pid.to_string());
    if found.as_deref() != Some(identity.exe.as_str()) {
        return Err(format!(
            "pid {pid} is not this lab's emulator: its executable is {} where the record says {}",
            found.as_deref().unwrap_or("unknown"),
            identity.exe
        ));
    }
    if cgroup_of(&pid.to_string()).as_deref() != Some(identity.cgroup.as_str()) {
        return Err(format!(
            "pid {pid} is not this lab's emulator: its cgroup differs from the record's"
        ));
    }
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    let here = std::fs::canonicalize(dir).ok();
    if cwd.is_none() || cwd != here {
        return Err(format!(
            "pid {pid} is not the emulator of the lab recorded here: it serves the lab state at {}",
            cwd.map_or("an unknown place".into(), |c| c.display().to_string())
        ));
    }
    Ok(true)
}

/// A live emulator of lab `name` recorded in another state directory than `dir`: a process
/// whose working directory is a state directory of that name holding a `lab.json`. With one,
/// a record here is a copy, and its namespaces are that lab's.
fn emulator_elsewhere(name: &str, dir: &Path) -> Option<(i32, PathBuf)> {
    let here = std::fs::canonicalize(dir).ok();
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .find_map(|pid| {
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
            (cwd.file_name()? == name
                && Some(&cwd) != here.as_ref()
                && cwd.join("lab.json").is_file()
                && !is_zombie(pid))
            .then_some((pid, cwd))
        })
}

/// What `down` checks before it signals or deletes anything: the emulator the record names
/// is this record's ([`check_emulator`]), no emulator elsewhere runs a lab of this name, and
/// each recorded namespace that exists is the one `lab up` made (its device and inode).
fn verify_claims(record: &LabRecord, dir: &Path) -> Result<(), String> {
    if !check_emulator(record, dir)?
        && let Some((pid, at)) = emulator_elsewhere(&record.name, dir)
    {
        return Err(format!(
            "lab {} is run by pid {pid} from the state at {}: this record is not that lab's",
            record.name,
            at.display()
        ));
    }
    for node in &record.nodes {
        let now = cleanup::namespace_ids(std::slice::from_ref(&node.namespace))
            .first()
            .copied();
        match (now, node.namespace_id) {
            (None, _) => {}
            (Some(now), Some(made)) if now == made => {}
            (Some(_), Some(_)) => {
                return Err(format!(
                    "namespace {} is not the one this lab made (its inode differs from the record's)",
                    node.namespace
                ));
            }
            (Some(_), None) => {
                return Err(format!(
                    "namespace {} is recorded without its identity, so it cannot be told from another lab's: if it is yours, remove it with `ip netns del {}`",
                    node.namespace, node.namespace
                ));
            }
        }
    }
    Ok(())
}

/// True if lab `name`'s emulator runs and is the one its record names (checked as `down`
/// checks it); false for a lab whose emulator is gone, or whose record is not ours.
pub fn emulator_running(name: &str) -> bool {
    let (Ok(record), Ok(dir)) = (record(name), existing_state_dir(name)) else {
        return false;
    };
    check_emulator(&record, &dir) == Ok(true)
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
    /// Processes of the labs that were ended (in their cgroup or namespaces).
    pub processes: Vec<i32>,
    /// Labs left alone, with the reason (another user's, or state not ours).
    pub skipped: Vec<String>,
}

/// Waits (bounded) until `pid` is gone or a zombie, reaping it if it is our child.
fn wait_gone(pid: i32, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        // WNOHANG never blocks; a pid that is not our child gives ECHILD.
        if let Some(pid) = Pid::from_raw(pid.max(0)) {
            let _ = waitpid(Some(pid), WaitOptions::NOHANG);
        }
        if !alive(pid) || is_zombie(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stops lab `name`: SIGTERM to its emulator (SIGKILL if it does not exit within 3 s), ends
/// every process in its cgroup and namespaces, then removes what the record names and is left.
/// Acts only on a lab whose state this program wrote, and only on the objects recorded there.
pub fn down(name: &str) -> Result<DownReport, LabError> {
    state_dir(name)?;
    sys::require_net_admin()?;
    let dir = existing_state_dir(name)?;
    let record = match record(name) {
        Ok(r) => r,
        Err(LabError::UnknownLab { .. }) => {
            // A directory without lab.json: `up` died between making it and writing the record,
            // before building anything. Only our own files are removed, and only if that is all
            // the directory holds.
            let foreign = std::fs::read_dir(&dir)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .any(|e| !STATE_FILES.iter().any(|f| e.file_name() == *f))
                })
                .unwrap_or(true);
            if foreign {
                return Err(LabError::NotOurs {
                    name: name.to_string(),
                    path: dir.display().to_string(),
                    reason: "it has no lab.json and holds other files".into(),
                });
            }
            remove_state(&dir);
            return Ok(DownReport {
                labs: vec![name.to_string()],
                ..DownReport::default()
            });
        }
        Err(e) => return Err(e),
    };
    verify_claims(&record, &dir).map_err(|reason| LabError::Mismatch {
        name: name.to_string(),
        path: dir.join("lab.json").display().to_string(),
        reason,
    })?;
    let mut report = DownReport {
        labs: vec![name.to_string()],
        ..DownReport::default()
    };
    if is_our_emulator(&record) {
        // SIGTERM to the lab's own emulator process, identified by pid and start time.
        sys::send_signal(record.pid, Signal::TERM);
        if !wait_gone(record.pid, TERM_GRACE) {
            if is_our_emulator(&record) {
                // As above; it did not exit within the grace period.
                sys::send_signal(record.pid, Signal::KILL);
            }
            if !wait_gone(record.pid, KILL_GRACE) {
                return Err(LabError::StillRunning {
                    name: name.to_string(),
                    pid: record.pid,
                });
            }
        }
    }
    report.processes = end_processes(&record);
    let existing = sys::namespaces();
    for ns in record.namespaces() {
        if existing.contains(&ns) && sys::delete_namespace(&ns).is_ok() {
            report.namespaces.push(ns);
        }
    }
    let links = sys::links();
    for dev in &record.devices {
        if links.contains(dev) && sys::ip(&["link", "del", dev], None).is_ok() {
            report.links.push(dev.clone());
        }
    }
    remove_state(&dir);
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

/// Stops every lab recorded in the state directory that the calling user made (every lab
/// with `force`). A lab whose state this program did not write is never touched.
pub fn down_all(force: bool) -> Result<DownReport, LabError> {
    state_root()?;
    sys::require_net_admin()?;
    let me = getuid().as_raw();
    let mut report = DownReport::default();
    for name in running() {
        let owner = match record(&name) {
            Ok(r) => r.uid,
            Err(LabError::UnknownLab { .. }) => Some(me),
            Err(e) => {
                report.skipped.push(format!("{name}: {e}"));
                continue;
            }
        };
        if owner != Some(me) && !force {
            report.skipped.push(format!(
                "{name}: made by uid {} (add --force to remove it too)",
                owner.map_or("unknown".into(), |u| u.to_string())
            ));
            continue;
        }
        match down(&name) {
            Ok(one) => {
                report.labs.extend(one.labs);
                report.namespaces.extend(one.namespaces);
                report.links.extend(one.links);
                report.processes.extend(one.processes);
            }
            Err(LabError::UnknownLab { .. }) => {}
            Err(e) => report.skipped.push(format!("{name}: {e}")),
        }
    }
    Ok(report)
}
