//! The agent in the background, as iperf3's `-D`, `-I` and `--logfile` put it there: a pid
//! file a supervisor can read, a log file for what would have gone to a terminal, and a detach
//! from the shell that started it.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::sys::process::{Forked, fork};

/// The largest pid file read: a pid and a newline, with room for a careless editor.
const PID_FILE_MOST_BYTES: u64 = 64;

/// Why a pid file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PidFileError {
    /// The file names a process that runs.
    #[error(
        "{path}: agent {pid} is running (stop it first, or remove the file if {pid} is not an agent)"
    )]
    Running {
        /// The file.
        path: String,
        /// The live process it names.
        pid: u32,
    },
    /// The file is not a pid file.
    #[error("{path}: not a pid file ({why}); give another path, or remove it")]
    NotAPidFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// The directory or the file cannot be written.
    #[error("{path}: cannot write the pid file there ({source})")]
    Write {
        /// The file.
        path: String,
        /// The system's reason.
        source: io::Error,
    },
}

/// Checks `path` before anything starts: absent, or left by a process that has ended (a stale
/// file, replaced later), is fine; a file naming a running process is refused. Returns the
/// absolute path, so that a daemon that has changed directory still finds it.
pub fn check_pid_file(path: &Path) -> Result<PathBuf, PidFileError> {
    let shown = path.display().to_string();
    let absolute = std::path::absolute(path).map_err(|source| PidFileError::Write {
        path: shown.clone(),
        source,
    })?;
    if let Some(pid) = read_pid(&absolute)?
        && process_runs(pid)
    {
        return Err(PidFileError::Running { path: shown, pid });
    }
    // The directory must take a file: found now, not after the agent has detached.
    let dir = absolute.parent().unwrap_or(Path::new("/"));
    let probe = tempfile_name(&absolute, "check");
    File::options()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|source| PidFileError::Write {
            path: format!("{} (in {})", shown, dir.display()),
            source,
        })?;
    Ok(absolute)
}

fn read_pid(path: &Path) -> Result<Option<u32>, PidFileError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(PidFileError::Write {
                path: shown,
                source,
            });
        }
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(PidFileError::NotAPidFile {
            path: shown,
            why: "not a regular file".into(),
        });
    }
    let mut text = String::new();
    file.take(PID_FILE_MOST_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| PidFileError::NotAPidFile {
            path: shown.clone(),
            why: e.to_string(),
        })?;
    match text.trim().parse::<u32>() {
        Ok(pid) if pid > 0 => Ok(Some(pid)),
        _ => Err(PidFileError::NotAPidFile {
            path: shown,
            why: format!("it holds {:?}, not a process id", text.trim()),
        }),
    }
}

fn process_runs(pid: u32) -> bool {
    // A zombie (ended, not yet reaped) has a /proc entry whose state is Z: it runs no more.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

fn tempfile_name(path: &Path, what: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{what}.{}", std::process::id()));
    path.with_file_name(name)
}

/// A pid file written whole (beside it, then renamed), so that a supervisor never reads half.
pub fn write_pid_file(path: &Path, pid: u32) -> Result<(), PidFileError> {
    let shown = path.display().to_string();
    let tmp = tempfile_name(path, "new");
    let written = File::options()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp)
        .and_then(|mut f| writeln!(f, "{pid}").and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(PidFileError::Write {
            path: shown,
            source,
        });
    }
    Ok(())
}

/// Removes the pid file when the agent ends, if it still names this process (a successor that
/// took the file over keeps it).
pub struct PidFileGuard {
    path: PathBuf,
    pid: u32,
}

impl PidFileGuard {
    /// Guards `path`, which names `pid`.
    pub fn new(path: PathBuf, pid: u32) -> PidFileGuard {
        PidFileGuard { path, pid }
    }
}

impl Drop for PidFileGuard {
    fn drop(&mut self) {
        if matches!(read_pid(&self.path), Ok(Some(p)) if p == self.pid) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Opens the log file for appending (created with mode 0640: session logs name clients).
pub fn open_log(path: &Path) -> io::Result<File> {
    File::options()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(path)
}

/// Sends this process's standard output and error to `log` from now on.
pub fn redirect_output(log: &File) -> io::Result<()> {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    rustix::stdio::dup2_stdout(log)?;
    rustix::stdio::dup2_stderr(log)?;
    Ok(())
}

/// Which process [`detach`] returned in.
pub enum Detached {
    /// The process that was started, which should say where the daemon listens and exit
    /// at once, running no destructor: the sockets it holds are the daemon's too, and a
    /// listener shut down here would be shut down there.
    Parent {
        /// The daemon's pid.
        daemon: u32,
    },
    /// The daemon: its own session, no terminal, the root as its directory, standard input
    /// from /dev/null and output to `log` (or /dev/null).
    Daemon,
}

/// Detaches the agent from the shell that started it. Refused unless this process runs one
/// thread (see [`fork`]): call it after every socket is bound and before any thread starts.
pub fn detach(log: Option<&File>) -> io::Result<Detached> {
    let threads = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<u32>().ok())
        });
    if threads != Some(1) {
        return Err(io::Error::other(format!(
            "cannot detach: {} threads run (a daemon is forked before any thread starts)",
            threads.map_or("an unknown number of".to_string(), |n| n.to_string())
        )));
    }
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    match fork()? {
        Forked::Parent(pid) => Ok(Detached::Parent {
            daemon: pid.unsigned_abs(),
        }),
        Forked::Child => {
            rustix::process::setsid()?;
            std::env::set_current_dir("/")?;
            let null = File::options().read(true).write(true).open("/dev/null")?;
            rustix::stdio::dup2_stdin(&null)?;
            let out = log.unwrap_or(&null);
            rustix::stdio::dup2_stdout(out)?;
            rustix::stdio::dup2_stderr(out)?;
            Ok(Detached::Daemon)
        }
    }
}
