//! The sweep's results file: one JSON line of plan, then one line per finished run, appended
//! and flushed as each run ends so that Ctrl-C, a crash or a lost peer keeps every finished run,
//! and `--resume FILE` can continue where the file stops.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use wirespeed_model::sweep::{Axis, RunRecord};

/// The schema of the first line.
pub(crate) const RUNS_SCHEMA: &str = "wirespeed.sweep-runs.v1";

/// Everything that fixes which runs a sweep consists of and in which order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SweepPlan {
    pub(crate) schema: String,
    /// The agent, or "loopback" for the in-process one.
    pub(crate) target: String,
    pub(crate) snd: Axis,
    pub(crate) rcv: Axis,
    pub(crate) reps: u32,
    pub(crate) seed: u64,
    /// Bytes of one "packet" on the axes.
    pub(crate) mss_bytes: u64,
    /// Whether runs set TCP_MAXSEG to `mss_bytes` (`-M`), or leave the path's own MSS.
    #[serde(default)]
    pub(crate) set_mss: bool,
    /// Bytes per run, when the runs are fixed-size.
    pub(crate) transfer_bytes: Option<u64>,
    /// Seconds per run, when the runs are timed.
    pub(crate) transfer_seconds: Option<f64>,
}

/// An open results file, ready for appending.
pub(crate) struct RunsFile {
    path: PathBuf,
    file: File,
}

impl RunsFile {
    /// Starts a new file with the plan; refuses to overwrite one that exists.
    pub(crate) fn create(path: &Path, plan: &SweepPlan) -> anyhow::Result<RunsFile> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| {
                format!(
                    "cannot create results file {} (to continue it, use --resume)",
                    path.display()
                )
            })?;
        writeln!(file, "{}", serde_json::to_string(plan)?)?;
        file.flush()?;
        Ok(RunsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Opens a partial sweep: its plan, its finished runs, and the file for appending.
    pub(crate) fn resume(path: &Path) -> anyhow::Result<(SweepPlan, Vec<RunRecord>, RunsFile)> {
        let reader = BufReader::new(
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?,
        );
        let mut lines = reader.lines().enumerate();
        let Some((_, first)) = lines.next() else {
            bail!(
                "{} is empty: it is not a sweep results file",
                path.display()
            );
        };
        let plan: SweepPlan = serde_json::from_str(&first?)
            .ok()
            .filter(|p: &SweepPlan| p.schema == RUNS_SCHEMA)
            .with_context(|| format!("{} line 1 is not a {RUNS_SCHEMA} plan", path.display()))?;
        let mut runs = Vec::new();
        let mut torn = false;
        for (number, line) in lines {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            if torn {
                bail!(
                    "{} line {} follows an unreadable line: the file is damaged",
                    path.display(),
                    number
                );
            }
            match serde_json::from_str::<RunRecord>(&line) {
                Ok(run) => runs.push(run),
                // A run cut off by a crash mid-write leaves a torn last line: drop it, redo the run.
                Err(_) => torn = true,
            }
        }
        let file = OpenOptions::new().append(true).open(path)?;
        Ok((
            plan,
            runs,
            RunsFile {
                path: path.to_path_buf(),
                file,
            },
        ))
    }

    /// Appends one finished run and flushes it to the kernel.
    pub(crate) fn append(&mut self, run: &RunRecord) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(run)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("cannot append to {}", self.path.display()))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}
