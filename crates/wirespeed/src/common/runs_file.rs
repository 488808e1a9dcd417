//! A series' results file (`sweep`, `load`): one JSON line of plan, then one line per finished
//! run, appended as each run ends so that Ctrl-C, a crash or a lost peer keeps every finished
//! run, and `--resume FILE` can continue where the file stops.
//!
//! Crash safety rests on two rules. Every append is one whole line handed to the kernel in a
//! single `write(2)` and then `fdatasync(2)`ed, so a killed process tears at most the line being
//! written and a power cut loses at most the runs not yet synced (a run takes seconds, a sync
//! milliseconds: the cost is noise). And [`RunsFile::resume`] repairs the tail before it
//! appends: a torn last line is cut off (and its run redone), a whole last record that lacks
//! only its newline is kept and given one, and the bytes dropped are reported. Damage anywhere
//! but the tail is refused and the file left untouched: it was not made by a crash.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The longest line read back: far above any record (a run is under a few KiB), low enough
/// that a hostile file cannot make resume hold gigabytes.
const MAX_LINE_BYTES: u64 = 16 << 20;

/// The first line of a results file: what fixes the runs of a series, under a named schema.
#[doc(hidden)]
pub trait RunsPlan: Serialize + DeserializeOwned {
    /// The schema this kind of plan is written under (`wirespeed.sweep-runs.v1`).
    const SCHEMA: &'static str;
    /// The schema the plan read from a file carries.
    fn schema(&self) -> &str;
}

/// An open results file, ready for appending.
#[doc(hidden)]
pub struct RunsFile {
    path: PathBuf,
    file: File,
    /// Bytes in the file: where the next line starts, and where to cut back to if it fails.
    len: u64,
}

/// A partial series read back by [`RunsFile::resume`].
#[doc(hidden)]
pub struct Resumed<P, R> {
    pub plan: P,
    /// The finished runs, in file order.
    pub runs: Vec<R>,
    pub file: RunsFile,
    /// What the tail repair did, as a sentence for stderr and the document's warnings.
    pub repair: Option<String>,
}

/// How a file's lines were judged, before anything is changed.
struct Scan<P, R> {
    plan: P,
    runs: Vec<R>,
    /// End of the last whole line kept (after its newline, if it has one).
    keep: u64,
    /// The last kept line has no newline: one must be written before the next record.
    needs_newline: bool,
    /// Line number and bytes of a torn last line.
    torn: Option<(usize, u64)>,
    /// Bytes read in all.
    total: u64,
}

/// Takes the file for this process alone until it closes it: two writers appending the same
/// series would each run the points the other has not saved yet, and save some twice.
fn lock(file: &File, path: &Path) -> anyhow::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => anyhow::bail!(
            "results file {} is being written by another wirespeed: wait for it to finish (or stop it), then --resume {}",
            path.display(),
            path.display()
        ),
        Err(e) => Err(std::io::Error::from(e))
            .with_context(|| format!("cannot lock results file {}", path.display())),
    }
}

/// The refusal of a results file that is already there.
fn exists_error(path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "results file {} exists: to continue it, use --resume {}; to start again, give \
         another --results",
        path.display(),
        path.display()
    )
}

impl RunsFile {
    /// Refuses a path that [`RunsFile::create`] would refuse because something is there, without
    /// creating anything: for a command that creates its file only once it has a run to keep.
    pub(crate) fn check_new(path: &Path) -> anyhow::Result<()> {
        if path.symlink_metadata().is_ok() {
            return Err(exists_error(path));
        }
        Ok(())
    }

    /// Starts a new file with the plan; refuses to overwrite one that exists. The plan is
    /// written to a private file first and linked into place, so that the file appears with
    /// its plan whole or not at all (a crash here leaves no empty file to block `--results`).
    #[doc(hidden)]
    pub fn create<P: RunsPlan>(path: &Path, plan: &P) -> anyhow::Result<RunsFile> {
        let refuse = || format!("cannot create results file {}", path.display());
        let exists = || exists_error(path);
        Self::check_new(path)?;
        let name = path
            .file_name()
            .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
        let staging = path.with_file_name(format!(".{name}.{}.new", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&staging)
            .with_context(refuse)?;
        // The lock is the inode's, so it holds on the name the plan is linked to.
        lock(&file, path)?;
        let mut runs = RunsFile {
            path: path.to_path_buf(),
            file,
            len: 0,
        };
        let written = runs.append(plan);
        let linked = written.and_then(|()| match std::fs::hard_link(&staging, path) {
            Ok(()) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
            // A file system without hard links: create the file in place (a crash between its
            // creation and the plan's one write can leave it empty there).
            Err(_) => OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .open(path)
                .with_context(refuse)
                .map(Some),
        });
        let _ = std::fs::remove_file(&staging);
        if let Some(file) = linked? {
            lock(&file, path)?;
            runs = RunsFile {
                path: path.to_path_buf(),
                file,
                len: 0,
            };
            runs.append(plan)?;
        }
        Ok(runs)
    }

    /// Opens a partial series: its plan, its finished runs, and the file for appending, with a
    /// torn last line cut off first (see the module documentation).
    #[doc(hidden)]
    pub fn resume<P: RunsPlan, R: DeserializeOwned>(path: &Path) -> anyhow::Result<Resumed<P, R>> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        lock(&file, path)?;
        let scan: Scan<P, R> = scan(path, &file)?;
        let mut runs = RunsFile {
            path: path.to_path_buf(),
            file,
            len: scan.keep,
        };
        let mut repair = None;
        if scan.total > scan.keep {
            runs.file
                .set_len(scan.keep)
                .and_then(|()| runs.file.sync_data())
                .with_context(|| format!("cannot repair {}", path.display()))?;
        }
        if let Some((line, bytes)) = scan.torn {
            repair = Some(format!(
                "{}: dropped {bytes} bytes of a torn last line (line {line}, cut off mid-write \
                 by a crash); its run is done again, the {} whole records before it are kept",
                path.display(),
                scan.runs.len()
            ));
        }
        if scan.needs_newline {
            runs.write_line(b"\n")?;
        }
        Ok(Resumed {
            plan: scan.plan,
            runs: scan.runs,
            file: runs,
            repair,
        })
    }

    /// Appends one finished run as one line in one `write(2)`, then syncs it to the disk.
    #[doc(hidden)]
    pub fn append<R: Serialize>(&mut self, run: &R) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(run)?;
        line.push(b'\n');
        self.write_line(&line)
    }

    /// One `write(2)` of a whole line; a short or failed write is cut back off, so the file
    /// never ends in a fragment that this process made.
    fn write_line(&mut self, line: &[u8]) -> anyhow::Result<()> {
        let written = loop {
            match self.file.write(line) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        let result = match written {
            Ok(n) if n == line.len() => self.file.sync_data(),
            Ok(n) => Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!(
                    "only {n} of {} bytes were written (is the disk full?)",
                    line.len()
                ),
            )),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e).with_context(|| format!("cannot append to {}", self.path.display()))
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads every line of `file`, judging each: the plan, whole records, blank lines, and at most
/// one torn line, which must be the last.
fn scan<P: RunsPlan, R: DeserializeOwned>(path: &Path, file: &File) -> anyhow::Result<Scan<P, R>> {
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut offset = 0u64;
    let mut number = 0usize;
    let mut plan: Option<P> = None;
    let mut runs = Vec::new();
    let mut keep = 0u64;
    let mut needs_newline = false;
    let mut torn: Option<(usize, u64)> = None;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("cannot read {}", path.display()))? as u64;
        if n == 0 {
            break;
        }
        number += 1;
        if n > MAX_LINE_BYTES {
            bail!(
                "{} line {number} is longer than {} MiB: it is not a results file",
                path.display(),
                MAX_LINE_BYTES >> 20
            );
        }
        let terminated = buf.last() == Some(&b'\n');
        if let Some((line, _)) = torn {
            bail!(
                "{} line {number} follows the unreadable line {line}: the file is damaged in \
                 the middle, not torn by a crash, and is left as it is; cut out line {line} by \
                 hand or start again with --results",
                path.display()
            );
        }
        offset += n;
        if buf.iter().all(u8::is_ascii_whitespace) {
            if terminated {
                keep = offset;
            }
            continue;
        }
        if plan.is_none() {
            let parsed = serde_json::from_slice::<P>(&buf)
                .ok()
                .filter(|p: &P| p.schema() == P::SCHEMA);
            let Some(p) = parsed else {
                bail!(
                    "{} line {number} is not a {} plan: it is not this command's results file \
                     (or the crash came before its first line was whole); start again with --results",
                    path.display(),
                    P::SCHEMA
                );
            };
            plan = Some(p);
        } else {
            match serde_json::from_slice::<R>(&buf) {
                Ok(run) => runs.push(run),
                Err(_) => {
                    torn = Some((number, n));
                    continue;
                }
            }
        }
        keep = offset;
        needs_newline = !terminated;
    }
    let Some(plan) = plan else {
        bail!(
            "{} is empty: it is not a results file (start one with --results)",
            path.display()
        );
    };
    Ok(Scan {
        plan,
        runs,
        keep,
        needs_newline,
        torn,
        total: offset,
    })
}
