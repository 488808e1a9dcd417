//! Output flags shared by every command.

use std::io::{self, Write};

use clap::Args;
use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_report::{Document, OutputFormat, Render, emit};

/// `--json` and `-f`, flattened into each command.
#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Print one JSON document (schema "wirespeed.<command>.v1") instead of text.
    #[arg(long, short = 'J')]
    pub(crate) json: bool,

    /// Rate unit: a = auto, k/m/g = kbit/s, Mbit/s, Gbit/s; K/M/G = KiB/s, MiB/s, GiB/s
    /// (binary, as iperf prints them); kB/MB/GB = decimal bytes/s.
    #[arg(long = "format", short = 'f', default_value = "a", value_name = "UNIT")]
    pub(crate) rate_format: RateFormat,
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
pub(crate) fn print<P: Serialize, R: Serialize + Render>(
    args: &OutputArgs,
    doc: &Document<P, R>,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    emit(&mut out, args.format(), doc)?;
    out.flush()
}
