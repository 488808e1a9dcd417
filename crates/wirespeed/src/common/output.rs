//! Output flags shared by every command.

use std::io::{self, Write};
use std::path::Path;

use clap::Args;
use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_report::{Document, OutputFormat, Render, emit};

/// `--json` and `-f`, flattened into each command.
#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct OutputArgs {
    /// Print one JSON document (schema "wirespeed.<command>.v1") instead of text.
    #[arg(long, short = 'J')]
    pub json: bool,

    /// Rate unit: a = auto, k/m/g = kbit/s, Mbit/s, Gbit/s; K/M/G = KiB/s, MiB/s, GiB/s
    /// (binary, as iperf prints them); kB/MB/GB = decimal bytes/s.
    #[arg(long = "format", short = 'f', default_value = "a", value_name = "UNIT")]
    pub rate_format: RateFormat,

    /// Also write the result's headline figures as Prometheus text to FILE (replaced whole,
    /// for node_exporter's textfile collector): gauges in base units, named per command.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    pub metrics_file: Option<std::path::PathBuf>,
}

impl OutputArgs {
    pub(crate) fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            OutputFormat::Human
        }
    }
}

/// Writes a document to stdout in the chosen format.
pub(crate) fn print<P: Serialize, R: Serialize + Render + crate::common::metrics::Metrics>(
    args: &OutputArgs,
    doc: &Document<P, R>,
) -> io::Result<()> {
    print_prefixed(
        args,
        doc,
        &crate::common::line_prefix::LinePrefix::default(),
    )
}

/// [`print`], each text line after `prefix` (`-T`, `--timestamps`; JSON is never prefixed).
pub(crate) fn print_prefixed<
    P: Serialize,
    R: Serialize + Render + crate::common::metrics::Metrics,
>(
    args: &OutputArgs,
    doc: &Document<P, R>,
    prefix: &crate::common::line_prefix::LinePrefix,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match args.format() {
        wirespeed_report::OutputFormat::Json => emit(&mut out, args.format(), doc)?,
        human => emit(&mut prefix.wrap(&mut out), human, doc)?,
    }
    out.flush()?;
    if let Some(path) = &args.metrics_file {
        crate::common::metrics::write_file(path, doc)
            .map_err(|e| io::Error::other(format!("{e:#}")))?;
    }
    Ok(())
}

/// Checks, before any work, that `path` can be written as the output file of `flag`: a sweep
/// that runs for an hour and then cannot save its plot has lost the hour.
#[doc(hidden)]
pub fn check_output_file(flag: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.is_dir() {
        anyhow::bail!(
            "{flag} {shown} is a directory: give a file name in it, e.g. {flag} {shown}/out"
        );
    }
    writable_directory(flag, path, parent_of(path))
}

/// The same for an output directory that will be created if it is missing.
#[doc(hidden)]
pub fn check_output_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    let shown = dir.display();
    if dir.exists() {
        if !dir.is_dir() {
            anyhow::bail!(
                "{flag} {shown} is a file, not a directory: give a directory to write into"
            );
        }
        return writable_directory(flag, dir, dir);
    }
    writable_directory(flag, dir, parent_of(dir))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn writable_directory(flag: &str, path: &Path, dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        anyhow::bail!(
            "{flag} {}: the directory {} does not exist: create it first (mkdir -p {})",
            path.display(),
            dir.display(),
            dir.display()
        );
    }
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err() {
        anyhow::bail!(
            "{flag} {}: the directory {} is not writable by this user: choose another place",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}
