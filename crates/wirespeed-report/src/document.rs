//! The result document and its one writer.

use std::fmt;
use std::io::{self, Write};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
/// "host", "parameters", "result", "verdicts", "warnings", "findings"}`. Floats that are not
/// finite are written as `null` (JSON has no NaN), so the document always parses.
///
/// `verdicts` and `warnings` are the sentences a person reads; `findings` holds each of them
/// again for a script, with a stable `kind` and its evidence figures. Add them through
/// [`Document::verdict`] and [`Document::warning`] so the two views never drift apart.
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
    /// Every verdict and warning in the order given, typed: what a script acts on. Documents
    /// written before findings existed read with none.
    #[serde(default)]
    pub findings: Vec<Finding>,
}

/// Whether a finding is a verdict on the result or a warning about its trustworthiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A judgement of the result against a ceiling, a model or the truth.
    Verdict,
    /// Something that may make the result less trustworthy.
    Warning,
}

/// One verdict or warning for a script: a stable machine-readable `kind` (snake case, never
/// renamed once released), the sentence a person reads, and the figures it rests on, in base
/// units with the unit in each name (`ceiling_bits_per_second`).
///
/// A rule set is a pure function returning an enum that derives `Serialize` with
/// `#[serde(tag = "kind", rename_all = "snake_case")]` and implements `Display` with the
/// sentence; [`Finding::of`] turns any such value into a finding, so the kind and the figures
/// come from the type and cannot disagree with the sentence's source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Verdict or warning.
    pub severity: Severity,
    /// What was found, stable across releases: `receiver_window_limited`, `link_bound`, ...
    pub kind: String,
    /// The sentence printed after `verdict:` or `warning:`.
    pub sentence: String,
    /// The evidence: the typed value's other fields, flattened beside `kind`.
    #[serde(flatten)]
    pub evidence: Map<String, Value>,
}

/// The kind given to a typed value that did not serialize as an object with a string `kind`:
/// a defect in its rule set, which the documents' tests look for.
pub const UNNAMED_KIND: &str = "unnamed";

impl Finding {
    /// A finding from a typed judgement: its `kind` and fields from `Serialize`, its sentence
    /// from `Display`.
    pub fn of<T: Serialize + fmt::Display + ?Sized>(severity: Severity, judged: &T) -> Finding {
        let sentence = judged.to_string();
        let mut evidence = match serde_json::to_value(judged) {
            Ok(Value::Object(fields)) => fields,
            _ => Map::new(),
        };
        let kind = match evidence.remove("kind") {
            Some(Value::String(kind)) => kind,
            _ => UNNAMED_KIND.to_string(),
        };
        // The flattened evidence must not shadow the finding's own fields when read back.
        evidence.remove("severity");
        evidence.remove("sentence");
        Finding {
            severity,
            kind,
            sentence,
            evidence,
        }
    }

    /// A finding whose rule has no figures worth a field: just a kind and its sentence.
    pub fn plain(severity: Severity, kind: &str, sentence: impl Into<String>) -> Finding {
        Finding {
            severity,
            kind: kind.to_string(),
            sentence: sentence.into(),
            evidence: Map::new(),
        }
    }
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
            findings: Vec::new(),
        }
    }
}

impl<P, R> Document<P, R> {
    /// Adds a verdict: its sentence to `verdicts`, the typed finding to `findings`.
    pub fn verdict<T: Serialize + fmt::Display + ?Sized>(&mut self, judged: &T) {
        self.push(Finding::of(Severity::Verdict, judged));
    }

    /// Adds a warning: its sentence to `warnings`, the typed finding to `findings`.
    pub fn warning<T: Serialize + fmt::Display + ?Sized>(&mut self, judged: &T) {
        self.push(Finding::of(Severity::Warning, judged));
    }

    /// Adds a finding made elsewhere, its sentence to the list its severity names.
    pub fn push(&mut self, finding: Finding) {
        match finding.severity {
            Severity::Verdict => self.verdicts.push(finding.sentence.clone()),
            Severity::Warning => self.warnings.push(finding.sentence.clone()),
        }
        self.findings.push(finding);
    }

    /// Adds findings in order.
    pub fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for finding in findings {
            self.push(finding);
        }
    }

    /// Whether every sentence has its finding and every finding its kind: what the commands'
    /// tests check of each document they make.
    pub fn findings_consistent(&self) -> Result<(), String> {
        let said = |severity| {
            self.findings
                .iter()
                .filter(|f| f.severity == severity)
                .map(|f| f.sentence.as_str())
                .collect::<Vec<_>>()
        };
        if said(Severity::Verdict) != as_strs(&self.verdicts) {
            return Err("the verdicts and the verdict findings differ".into());
        }
        if said(Severity::Warning) != as_strs(&self.warnings) {
            return Err("the warnings and the warning findings differ".into());
        }
        match self.findings.iter().find(|f| !is_kind(&f.kind)) {
            Some(f) => Err(format!(
                "finding {:?} has no stable kind: {:?}",
                f.sentence, f.kind
            )),
            None => Ok(()),
        }
    }
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A stable kind: snake case ASCII, not the defect marker.
pub fn is_kind(kind: &str) -> bool {
    kind != UNNAMED_KIND
        && !kind.is_empty()
        && kind.starts_with(|c: char| c.is_ascii_lowercase())
        && kind
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
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
