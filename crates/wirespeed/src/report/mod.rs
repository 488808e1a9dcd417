//! `wirespeed report FILE... [-o report.html]`: saved results (`--json`, `--json-stream`,
//! the `--results` files of `sweep` and `load`, and what `iperf3 -J` printed), files or
//! directories of them, into one self-contained HTML page. Reading files is this module's job; the page is
//! `wirespeed_report::html`'s.

#[doc(hidden)]
pub mod views;

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_report::html::{self, Entry};

/// The largest results file read (a long `serve --json` log or a big sweep stays far below).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes read over all inputs together.
const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// How deep directories are searched for results.
const MAX_DIRECTORY_DEPTH: usize = 8;
/// File name endings taken from a directory.
const EXTENSIONS: &[&str] = &["json", "jsonl", "ndjson"];

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct ReportArgs {
    /// Results saved with --json, --json-stream or --results (sweep, load), or by iperf3 -J;
    /// a directory is searched for *.json, *.jsonl and *.ndjson files.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<PathBuf>,

    /// Where to write the page; "-" for standard output.
    #[arg(
        short = 'o',
        long = "output",
        default_value = "report.html",
        value_name = "FILE"
    )]
    pub output: PathBuf,
}

/// A report page and what went into it.
#[derive(Debug, Clone)]
pub struct Page {
    /// The self-contained HTML page, as `wirespeed report -o -` prints it.
    pub html: String,
    /// The documents it shows.
    pub documents: usize,
    /// The files they came from, directories searched.
    pub files: usize,
}

/// `wirespeed report FILE...` without the file it writes: saved results (`--json`,
/// `--json-stream`, the `--results` files of `sweep` and `load`, what `iperf3 -J` printed;
/// files, or directories searched for them), each read bounded, rendered into one HTML page.
pub fn render(inputs: &[PathBuf]) -> anyhow::Result<Page> {
    let files = expand(inputs)?;
    let mut entries = Vec::new();
    let mut total = 0u64;
    for file in &files {
        let text = read_limited(file, &mut total)?;
        let documents = html::parse_documents(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{e} (give files written by --json, --json-stream, --results or iperf3 -J)",
                file.display()
            )
        })?;
        if entries.len() + documents.len() > html::MAX_DOCUMENTS {
            bail!(
                "more than {} documents in all: report on fewer files at a time",
                html::MAX_DOCUMENTS
            );
        }
        let n = documents.len();
        entries.extend(
            documents
                .into_iter()
                .enumerate()
                .map(|(i, document)| Entry {
                    source: if n == 1 {
                        file.display().to_string()
                    } else {
                        format!("{} (document {} of {n})", file.display(), i + 1)
                    },
                    document,
                }),
        );
    }
    Ok(Page {
        html: html::render_page(&entries, &crate::report::views::CommandViews),
        documents: entries.len(),
        files: files.len(),
    })
}

/// `wirespeed report`: the page rendered, then written to its file or standard output.
pub(crate) fn run(args: ReportArgs) -> anyhow::Result<()> {
    let Page {
        html: page,
        documents,
        files,
    } = render(&args.inputs)?;
    if args.output == Path::new("-") {
        let mut out = io::stdout().lock();
        out.write_all(page.as_bytes())?;
        return out.flush().context("writing the page");
    }
    fs::write(&args.output, &page)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    println!(
        "wrote {}: {documents} document(s) from {files} file(s), {} plot(s), {} KiB",
        args.output.display(),
        page.matches("<svg class=\"plot\"").count(),
        page.len().div_ceil(1024)
    );
    Ok(())
}

/// The files named, with each directory replaced by its results files in name order.
fn expand(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = fs::metadata(input).with_context(|| {
            format!(
                "cannot read {}: give a results file or a directory",
                input.display()
            )
        })?;
        if meta.is_dir() {
            let before = files.len();
            walk(input, 0, &mut files)?;
            if files.len() == before {
                bail!(
                    "{} holds no .json, .jsonl or .ndjson files: give a directory of saved results",
                    input.display()
                );
            }
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    names.sort();
    for path in names {
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        // symlink_metadata: a link to a directory is not followed, so no loop can form.
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if hidden {
            continue;
        }
        if meta.is_dir() {
            if depth < MAX_DIRECTORY_DEPTH {
                walk(&path, depth + 1, files)?;
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// The file's text, refusing files (and totals) beyond the limits before reading them whole.
fn read_limited(path: &Path, total: &mut u64) -> anyhow::Result<String> {
    let file = fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let len = bytes.len() as u64;
    if len > MAX_FILE_BYTES {
        bail!(
            "{} is larger than {} MiB: not a results file, or split it (a --results file can be cut between lines)",
            path.display(),
            MAX_FILE_BYTES >> 20
        );
    }
    *total += len;
    if *total > MAX_TOTAL_BYTES {
        bail!(
            "the inputs exceed {} MiB together: report on fewer files at a time",
            MAX_TOTAL_BYTES >> 20
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        let (line, column) = position(e.as_bytes(), e.utf8_error().valid_up_to());
        anyhow::anyhow!(
            "{}:{line}:{column}: not UTF-8 text (give files written by --json, --json-stream, --results or iperf3 -J)",
            path.display()
        )
    })
}

/// Line and column (from 1) of a byte offset in text that is valid up to it.
#[doc(hidden)]
pub fn position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = String::from_utf8_lossy(&bytes[..offset.min(bytes.len())]);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
