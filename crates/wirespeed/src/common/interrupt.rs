//! Ctrl-C (SIGINT) and SIGTERM for the long commands (`sweep`, `load`, `sim csma`, `probe`):
//! nothing finished is lost. The signal only sets a flag ([`wirespeed_net::signal`]); the
//! command's loop sees it between runs (and the run in flight sees it within its own poll),
//! stops, prints what finished marked PARTIAL (in `--json`, `"partial": true`), keeps what the
//! results file already holds, names the command that resumes, and exits 128 + the signal
//! (130 for SIGINT, 143 for SIGTERM) through [`Interrupted`]. A second signal ends the process
//! at once (`signal.rs`): every record already saved is whole, so even that loses nothing saved.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_report::{Document, OutputFormat, Render, emit};

use crate::common::output::OutputArgs;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the SIGINT/SIGTERM handler (once) and returns the flag it sets, for loops that
/// take one (`ClientConfig::interrupt`).
pub(crate) fn watch() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        wirespeed_net::signal::forward_to(flag.clone());
        flag
    })
    .clone()
}

/// Whether SIGINT or SIGTERM arrived since [`watch`].
pub(crate) fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// 128 + the signal that arrived (130 for SIGINT, 143 for SIGTERM), as a shell reports it.
pub(crate) fn signal_status() -> u8 {
    let signal = wirespeed_net::signal::received().unwrap_or(wirespeed_net::signal::SIGINT);
    u8::try_from(128 + signal).unwrap_or(130)
}

/// The error a command returns after it printed its partial result: `main` prints the
/// message and exits 128 + the signal's number.
#[derive(Debug)]
pub struct Interrupted {
    /// What was kept and how to go on, one sentence.
    pub message: String,
    /// The exact command that continues the work, when the command can resume.
    pub resume: Option<String>,
}

impl Interrupted {
    /// The process's exit status: 130 after SIGINT, 143 after SIGTERM.
    pub fn status(&self) -> u8 {
        signal_status()
    }
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match wirespeed_net::signal::received() {
            Some(wirespeed_net::signal::SIGTERM) => "SIGTERM",
            _ => "SIGINT",
        };
        write!(f, "interrupted by {name}: {}", self.message)?;
        if let Some(cmd) = &self.resume {
            write!(f, "\nresume with: {cmd}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Interrupted {}

/// Prints a document cut short: the human form starts with a PARTIAL line, the JSON form has
/// `"partial": true` and `"interrupted"` (the sentence) beside the schema.
pub(crate) fn print_partial<P: Serialize, R: Serialize + Render>(
    args: &OutputArgs,
    doc: &Document<P, R>,
    what: &str,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match args.format() {
        OutputFormat::Json => {
            let partial = Partial {
                doc,
                partial: true,
                interrupted: what,
            };
            let mut text = serde_json::to_string_pretty(&partial)?;
            text.push('\n');
            out.write_all(text.as_bytes())?;
        }
        OutputFormat::Human => {
            writeln!(out, "PARTIAL: {what}")?;
            emit(&mut out, OutputFormat::Human, doc)?;
        }
    }
    out.flush()
}

/// A document with the partial mark after its own fields.
#[derive(Serialize)]
struct Partial<'a, D: Serialize> {
    #[serde(flatten)]
    doc: &'a D,
    partial: bool,
    interrupted: &'a str,
}

/// A command line as one string a POSIX shell reads back into the same words: `wirespeed`
/// as it was invoked, then the words, each quoted only if it needs it.
pub(crate) fn command_line(words: &[String]) -> String {
    let program = std::env::args()
        .next()
        .unwrap_or_else(|| "wirespeed".into());
    std::iter::once(program.as_str())
        .chain(words.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

#[doc(hidden)]
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A path as a word of [`command_line`].
pub(crate) fn path_word(path: &Path) -> String {
    path.display().to_string()
}

/// The output flags (`--json`, `-f`) as words, so the resumed command prints the same way.
#[doc(hidden)]
pub fn output_words(args: &OutputArgs) -> Vec<String> {
    let mut words = Vec::new();
    if args.json {
        words.push("--json".into());
    }
    let unit = match args.rate_format {
        RateFormat::Adaptive => None,
        RateFormat::Bits => Some("b"),
        RateFormat::Kilobits => Some("k"),
        RateFormat::Megabits => Some("m"),
        RateFormat::Gigabits => Some("g"),
        RateFormat::Terabits => Some("t"),
        RateFormat::Bytes => Some("B"),
        RateFormat::Kibibytes => Some("K"),
        RateFormat::Mebibytes => Some("M"),
        RateFormat::Gibibytes => Some("G"),
        RateFormat::Kilobytes => Some("kB"),
        RateFormat::Megabytes => Some("MB"),
        RateFormat::Gigabytes => Some("GB"),
    };
    if let Some(u) = unit {
        words.extend(["-f".to_string(), u.to_string()]);
    }
    if let Some(path) = &args.metrics_file {
        words.extend(["--metrics-file".to_string(), path.display().to_string()]);
    }
    words
}

/// A duration as a word `parse_duration` reads back exactly.
#[doc(hidden)]
pub fn duration_word(d: std::time::Duration) -> String {
    let ns = d.as_nanos();
    match [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
        .into_iter()
        .find(|(unit, _)| ns.is_multiple_of(*unit))
    {
        Some((unit, name)) => format!("{}{name}", ns / unit),
        None => format!("{ns}ns"),
    }
}
