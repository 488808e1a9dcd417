//! The result document and its one writer.

use std::io::{self, Write};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::host::HostFacts;

/// How a document is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Tables and sentences for a person.
    #[default]
    Human,
    /// One JSON document, schema named and versioned.
    Json,
}

/// A result that can print itself for a person; JSON comes from `Serialize`.
pub trait Render {
    /// Writes the human form.
    fn render(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// Everything one run of a command produced.
///
/// The JSON layout is `{"schema": "wirespeed.<command>.v1", "wirespeed_version", "started_at",
/// "host", "parameters", "result", "verdicts", "warnings"}`. Floats that are not finite are
/// written as `null` (JSON has no NaN), so the document always parses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document<P, R> {
    /// `wirespeed.<command>.v<N>`.
    pub schema: String,
    /// The version of wirespeed that made it.
    pub wirespeed_version: String,
    /// When the run started, RFC 3339 UTC.
    pub started_at: String,
    /// The machine it ran on.
    pub host: HostFacts,
    /// What was asked.
    pub parameters: P,
    /// What was found.
    pub result: R,
    /// Sentences comparing the result with a ceiling or a model.
    #[serde(default)]
    pub verdicts: Vec<String>,
    /// Things that may make the result less trustworthy.
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl<P: Serialize, R: Serialize> Document<P, R> {
    /// A document for `command` (schema version 1), started now, on this host.
    pub fn new(command: &str, parameters: P, result: R) -> Self {
        Document {
            schema: format!("wirespeed.{command}.v1"),
            wirespeed_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            host: HostFacts::collect(),
            parameters,
            result,
            verdicts: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// The document as pretty JSON, with a trailing newline.
pub fn to_json<P: Serialize, R: Serialize>(doc: &Document<P, R>) -> serde_json::Result<String> {
    let mut text = serde_json::to_string_pretty(doc)?;
    text.push('\n');
    Ok(text)
}

/// Writes a document in the chosen format. The one writer every command uses.
pub fn emit<P: Serialize, R: Serialize + Render>(
    out: &mut dyn Write,
    format: OutputFormat,
    doc: &Document<P, R>,
) -> io::Result<()> {
    match format {
        OutputFormat::Json => out.write_all(to_json(doc)?.as_bytes()),
        OutputFormat::Human => {
            doc.result.render(out)?;
            for verdict in &doc.verdicts {
                writeln!(out, "verdict: {verdict}")?;
            }
            for warning in &doc.warnings {
                writeln!(out, "warning: {warning}")?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Sample {
        rate_bits_per_second: f64,
    }

    impl Render for Sample {
        fn render(&self, out: &mut dyn Write) -> io::Result<()> {
            writeln!(out, "rate {}", self.rate_bits_per_second)
        }
    }

    #[test]
    fn json_names_its_schema_and_never_writes_nan() {
        let doc = Document::new(
            "test",
            (),
            Sample {
                rate_bits_per_second: f64::NAN,
            },
        );
        let text = to_json(&doc).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["schema"], "wirespeed.test.v1");
        assert!(value["result"]["rate_bits_per_second"].is_null());
        assert!(value["host"]["cores"].as_u64().unwrap() >= 1);
        assert!(value["started_at"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn human_output_lists_verdicts_after_the_result() {
        let mut doc = Document::new(
            "test",
            (),
            Sample {
                rate_bits_per_second: 1.0,
            },
        );
        doc.verdicts.push("fine".into());
        let mut out = Vec::new();
        emit(&mut out, OutputFormat::Human, &doc).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "rate 1\nverdict: fine\n");
    }
}
