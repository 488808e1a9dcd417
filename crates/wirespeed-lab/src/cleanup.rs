//! Ending every process of a lab, whatever started it.
//!
//! A lab's processes are started by `lab exec`, by the command of `lab run`, or by anything
//! else that enters one of its namespaces (`ip netns exec`). Two nets catch them:
//!
//! - **its cgroup.** `lab up` makes `wirespeed-lab/ws-NAME` in the cgroup2 hierarchy (found in
//!   /proc/self/mountinfo, wherever it is mounted: /sys/fs/cgroup on a unified host,
//!   /sys/fs/cgroup/unified on a hybrid one), or in the cgroup v1 `freezer` or `pids`
//!   hierarchy when there is no writable cgroup2. `lab exec` and `lab run` put their command
//!   into it before it runs, so every process it forks is there too, and `down` ends them all
//!   (`cgroup.kill` where the kernel has it, else SIGKILL to each member until none is left,
//!   frozen first under the v1 freezer so that none can fork away).
//! - **its namespaces.** Every process whose network namespace (the inode of
//!   /proc/PID/ns/net) is one of the lab's is killed too, so that a process started by any
//!   other means does not keep a deleted namespace alive.
//!
//! Only processes in the lab's own cgroup or namespaces are touched, never this process.
//! Every loop here is bounded by a deadline.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::process::Signal;

/// The directory under a cgroup hierarchy's root that holds every lab's cgroup.
pub const CGROUP_PARENT: &str = "wirespeed-lab";
/// How long `kill_cgroup` and `kill_in_namespaces` keep trying.
const KILL_DEADLINE: Duration = Duration::from_secs(3);

/// A cgroup hierarchy usable for a lab's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct Hierarchy {
    /// Where it is mounted.
    pub root: PathBuf,
    v2: bool,
    freezer: bool,
}

/// The mounted cgroup hierarchies, cgroup2 first, then v1 freezer, then v1 pids.
#[doc(hidden)]
pub fn hierarchies() -> Vec<Hierarchy> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for line in text.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount) = left.split(' ').nth(4) else {
            continue;
        };
        let mut right = right.split(' ');
        let fstype = right.next().unwrap_or("");
        let options = right.nth(1).unwrap_or("");
        let root = PathBuf::from(mount.replace("\\040", " "));
        let rank = match fstype {
            "cgroup2" => 0,
            "cgroup" if options.split(',').any(|o| o == "freezer") => 1,
            "cgroup" if options.split(',').any(|o| o == "pids") => 2,
            _ => continue,
        };
        found.push((
            rank,
            Hierarchy {
                root,
                v2: rank == 0,
                freezer: rank == 1,
            },
        ));
    }
    found.sort_by_key(|(rank, _)| *rank);
    found.into_iter().map(|(_, h)| h).collect()
}

/// Makes the cgroup of lab `name` in the first hierarchy that allows it; returns its path, or
/// None when no cgroup can be made here (the namespace sweep still ends the lab's processes).
pub fn create_cgroup(name: &str) -> Option<PathBuf> {
    for h in hierarchies() {
        let parent = h.root.join(CGROUP_PARENT);
        let dir = parent.join(format!("{}{name}", crate::sys::PREFIX));
        let made = (parent.is_dir() || std::fs::create_dir(&parent).is_ok())
            && std::fs::create_dir(&dir).is_ok();
        if made && dir.join("cgroup.procs").exists() {
            return Some(dir);
        }
        let _ = std::fs::remove_dir(&dir);
    }
    None
}

/// True if `path` can be the cgroup of lab `name`: `<a mounted hierarchy>/wirespeed-lab/ws-NAME`.
/// A state file naming anything else is not trusted.
pub fn is_lab_cgroup(path: &Path, name: &str) -> bool {
    let expected = format!("{}{name}", crate::sys::PREFIX);
    path.file_name().is_some_and(|f| f == expected.as_str())
        && hierarchies()
            .iter()
            .any(|h| path.parent() == Some(h.root.join(CGROUP_PARENT).as_path()))
}

/// Puts process `pid` into the cgroup at `cgroup`.
pub fn join_cgroup(cgroup: &Path, pid: u32) -> std::io::Result<()> {
    std::fs::write(cgroup.join("cgroup.procs"), pid.to_string())
}

/// Makes `cmd` move itself into `cgroup` before it runs (between fork and exec), so that it and
/// everything it forks end with the lab; the command fails to start if it cannot.
pub fn command_in_cgroup(cmd: &mut std::process::Command, cgroup: &Path) -> std::io::Result<()> {
    let procs = std::fs::OpenOptions::new()
        .write(true)
        .open(cgroup.join("cgroup.procs"))?;
    crate::sys::process::write_pid_before_exec(cmd, procs);
    Ok(())
}

/// The processes in cgroup `cgroup`.
pub fn cgroup_members(cgroup: &Path) -> Vec<i32> {
    std::fs::read_to_string(cgroup.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Ends every process in `cgroup` and removes it; returns the pids signalled. Bounded by a
/// deadline; whatever survives it (a process in uninterruptible sleep) is reported by the
/// cgroup still existing.
pub fn kill_cgroup(cgroup: &Path) -> Vec<i32> {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + KILL_DEADLINE;
    let freezer = cgroup.join("freezer.state");
    let frozen = freezer.exists() && std::fs::write(&freezer, "FROZEN").is_ok();
    let mut killed = Vec::new();
    let kill_file = cgroup.join("cgroup.kill");
    loop {
        let members: Vec<i32> = cgroup_members(cgroup)
            .into_iter()
            .filter(|&p| p != me)
            .collect();
        if members.is_empty() {
            break;
        }
        if !kill_file.exists() || std::fs::write(&kill_file, "1").is_err() {
            for &pid in &members {
                // SIGKILL to a member of the lab's own cgroup.
                crate::sys::send_signal(pid, Signal::KILL);
            }
        }
        for pid in members {
            if !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        if frozen {
            // A frozen process takes SIGKILL only when thawed.
            let _ = std::fs::write(&freezer, "THAWED");
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    while std::fs::remove_dir(cgroup).is_err() && cgroup.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

/// Device and inode of each named network namespace that exists (/run/netns/NAME).
pub fn namespace_ids(namespaces: &[String]) -> Vec<(u64, u64)> {
    namespaces
        .iter()
        .filter_map(|ns| std::fs::metadata(Path::new("/run/netns").join(ns)).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// The processes (other than this one) whose network namespace is one of `ids`.
pub fn processes_in(ids: &[(u64, u64)]) -> Vec<i32> {
    if ids.is_empty() {
        return Vec::new();
    }
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| ids.contains(&(m.dev(), m.ino())))
        })
        .collect()
}

/// SIGKILLs every process in the namespaces `ids` until none is left (bounded); returns the
/// pids signalled.
pub fn kill_in_namespaces(ids: &[(u64, u64)]) -> Vec<i32> {
    let deadline = Instant::now() + KILL_DEADLINE;
    let mut killed = Vec::new();
    loop {
        let found = processes_in(ids);
        if found.is_empty() || Instant::now() >= deadline {
            break;
        }
        for pid in found {
            // SIGKILL to a process inside one of the lab's own namespaces.
            crate::sys::send_signal(pid, Signal::KILL);
            if !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}
