//! A series' results file (`sweep`, `load`): one JSON line of plan, then one line per finished
//! run, appended and flushed as each run ends so that Ctrl-C, a crash or a lost peer keeps every
//! finished run, and `--resume FILE` can continue where the file stops.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The first line of a results file: what fixes the runs of a series, under a named schema.
pub(crate) trait RunsPlan: Serialize + DeserializeOwned {
    /// The schema this kind of plan is written under (`wirespeed.sweep-runs.v1`).
    const SCHEMA: &'static str;
    /// The schema the plan read from a file carries.
    fn schema(&self) -> &str;
}

/// An open results file, ready for appending.
pub(crate) struct RunsFile {
    path: PathBuf,
    file: File,
}

impl RunsFile {
    /// Starts a new file with the plan; refuses to overwrite one that exists.
    pub(crate) fn create<P: RunsPlan>(path: &Path, plan: &P) -> anyhow::Result<RunsFile> {
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
    pub(crate) fn resume<P: RunsPlan, R: DeserializeOwned>(
        path: &Path,
    ) -> anyhow::Result<(P, Vec<R>, RunsFile)> {
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
        let plan: P = serde_json::from_str(&first?)
            .ok()
            .filter(|p: &P| p.schema() == P::SCHEMA)
            .with_context(|| format!("{} line 1 is not a {} plan", path.display(), P::SCHEMA))?;
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
            match serde_json::from_str::<R>(&line) {
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
    pub(crate) fn append<R: Serialize>(&mut self, run: &R) -> anyhow::Result<()> {
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
