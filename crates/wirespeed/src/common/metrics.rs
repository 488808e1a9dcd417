//! A result in the Prometheus text exposition format (what node_exporter's textfile collector
//! reads and `promtool check metrics` checks): `--metrics-file FILE` on every command that
//! prints a document.
//!
//! Each command chooses its series from its typed result ([`Metrics`], beside the command's
//! other views): the figures a dashboard or an alert would use, named in Prometheus' base units
//! with the unit in the name (`wirespeed_tcp_received_bits_per_second`,
//! `wirespeed_latency_round_trip_seconds`), and labelled by what a value means
//! (`{direction="download"}`, `{phase="loaded",quantile="0.99"}`, `{stream="1"}`), never by
//! where it sat in an array: an index changes meaning from one run to the next, and a
//! dashboard keyed on it shows the wrong stream. Figures are gauges (the figures of one
//! finished test); round trips by quantile are summaries, the one type that may carry a
//! `quantile` label, with their count of samples. Every file also says which document wrote it (`wirespeed_<command>_info`),
//! when it started, and how many verdicts and warnings it had.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use wirespeed_report::Document;

/// Most samples one document may produce: a bound on what a scraper is handed, whatever a
/// hostile or enormous result holds.
#[doc(hidden)]
pub const SAMPLES_MAX: usize = 100_000;

/// Longest label value kept whole; a longer one is cut (at a character boundary) so that a
/// sentence in a field cannot bloat every sample it labels.
#[doc(hidden)]
pub const LABEL_VALUE_MAX: usize = 120;

/// A command's result, as the series its `--metrics-file` holds.
#[doc(hidden)]
pub trait Metrics {
    /// Adds this result's series to `m` (names without the `wirespeed_<command>_` prefix).
    fn metrics(&self, m: &mut Exposition);
}

type Labels = Vec<(&'static str, String)>;

#[derive(Debug)]
struct Family {
    name: String,
    help: &'static str,
    /// `gauge` or `summary`.
    kind: &'static str,
    /// The suffix after the family's name (`_count` of a summary), labels, value.
    samples: Vec<(&'static str, Labels, f64)>,
    seen: HashSet<(&'static str, Labels)>,
}

/// The series of one document, grouped into families (one `# HELP`/`# TYPE` each).
#[derive(Debug)]
#[doc(hidden)]
pub struct Exposition {
    prefix: String,
    families: Vec<Family>,
    index: HashMap<String, usize>,
    samples: usize,
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`: what a metric or label name may hold.
fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Exposition {
    /// An empty exposition for `command` (`lab.status` becomes `wirespeed_lab_status_...`).
    #[doc(hidden)]
    pub fn new(command: &str) -> Exposition {
        let command: String = command
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        Exposition {
            prefix: format!("wirespeed_{command}"),
            families: Vec::new(),
            index: HashMap::new(),
            samples: 0,
        }
    }

    /// One sample of the gauge `name` (its unit in the name, the value in that unit; a name
    /// in `_bits_per_second` is written in `_bytes_per_second`, its value over 8). A value
    /// that is not finite is no figure (a rate over no time) and is left out; a label set seen
    /// before keeps its first value.
    ///
    /// # Panics
    /// On a name or label name that is not `[a-zA-Z_][a-zA-Z0-9_]*`, or a label named twice:
    /// these are the command's own constants, and the tests of every command reach them.
    #[doc(hidden)]
    pub fn gauge(
        &mut self,
        name: &str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        value: f64,
    ) {
        assert!(
            !labels.iter().any(|(l, _)| *l == "quantile"),
            "{name}: a quantile label belongs to a summary"
        );
        self.add(name, help, "gauge", "", labels, value);
    }

    /// A summary: `quantiles` (each `(q, value)`, q as written in the label) and how many
    /// samples they were taken over. Prometheus lets only a summary carry a `quantile` label.
    #[doc(hidden)]
    pub fn summary(
        &mut self,
        name: &str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        quantiles: &[(&'static str, f64)],
        count: u64,
    ) {
        for (q, value) in quantiles {
            let mut l = labels.to_vec();
            l.push(("quantile", q));
            self.add(name, help, "summary", "", &l, *value);
        }
        self.add(name, help, "summary", "_count", labels, count as f64);
    }

    fn add(
        &mut self,
        name: &str,
        help: &'static str,
        kind: &'static str,
        suffix: &'static str,
        labels: &[(&'static str, &str)],
        value: f64,
    ) {
        assert!(valid_name(name), "metric name {name:?}");
        for (i, (label, _)) in labels.iter().enumerate() {
            assert!(valid_name(label), "label name {label:?}");
            assert!(
                !labels[..i].iter().any(|(l, _)| l == label),
                "label {label:?} twice on {name}"
            );
        }
        if !value.is_finite() || self.samples >= SAMPLES_MAX {
            return;
        }
        self.samples += 1;
        // Results carry rates in bits per second, as networks are rated; Prometheus' base unit
        // is the byte (promtool's lint refuses `bits`), so the series says bytes and holds
        // the figure over 8.
        let (full, value) = match name.strip_suffix("_bits_per_second") {
            Some(base) => (
                format!("{}_{base}_bytes_per_second", self.prefix),
                value / 8.0,
            ),
            None => (format!("{}_{name}", self.prefix), value),
        };
        let i = match self.index.get(&full) {
            Some(&i) => i,
            None => {
                self.families.push(Family {
                    name: full.clone(),
                    help,
                    kind,
                    samples: Vec::new(),
                    seen: HashSet::new(),
                });
                self.index.insert(full, self.families.len() - 1);
                self.families.len() - 1
            }
        };
        let labels: Labels = labels
            .iter()
            .map(|(k, v)| (*k, cut(v).to_string()))
            .collect();
        let family = &mut self.families[i];
        assert_eq!(family.kind, kind, "{} is one type", family.name);
        if family.seen.insert((suffix, labels.clone())) {
            family.samples.push((suffix, labels, value));
        }
    }

    /// [`Exposition::gauge`] for a figure that may be missing.
    #[doc(hidden)]
    pub fn maybe(
        &mut self,
        name: &str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        value: Option<f64>,
    ) {
        if let Some(v) = value {
            self.gauge(name, help, labels, v);
        }
    }

    /// A yes/no figure as 1 or 0.
    #[doc(hidden)]
    pub fn flag(
        &mut self,
        name: &str,
        help: &'static str,
        labels: &[(&'static str, &str)],
        yes: bool,
    ) {
        self.gauge(name, help, labels, f64::from(u8::from(yes)));
    }

    /// The text format: families in the order they were first added.
    #[doc(hidden)]
    pub fn text(&self) -> String {
        let mut out = String::new();
        for family in &self.families {
            let _ = writeln!(out, "# HELP {} {}", family.name, escape_help(family.help));
            let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind);
            for (suffix, labels, value) in &family.samples {
                out.push_str(&family.name);
                out.push_str(suffix);
                if !labels.is_empty() {
                    out.push('{');
                    for (i, (k, v)) in labels.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        let _ = write!(out, "{k}=\"{}\"", escape_label(v));
                    }
                    out.push('}');
                }
                let _ = writeln!(out, " {value}");
            }
        }
        out
    }
}

fn cut(value: &str) -> &str {
    if value.len() <= LABEL_VALUE_MAX {
        return value;
    }
    let mut end = LABEL_VALUE_MAX;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}

fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn escape_help(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A figure written with a unit of the seed's or the field's (`ms`, `Mbit/s`, `KiB/s`, `%`) in
/// Prometheus' base unit: the name's unit suffix and the factor that converts it. None for a
/// unit that has no base-unit name (the caller leaves the figure out rather than mislabel it).
#[doc(hidden)]
pub fn base_unit(unit: &str) -> Option<(&'static str, f64)> {
    Some(match unit.trim() {
        "s" | "seconds" => ("seconds", 1.0),
        "ms" => ("seconds", 1e-3),
        "us" | "µs" => ("seconds", 1e-6),
        "ns" => ("seconds", 1e-9),
        "us/byte" => ("seconds_per_byte", 1e-6),
        "ns/byte" => ("seconds_per_byte", 1e-9),
        "bit/s" => ("bits_per_second", 1.0),
        "kbit/s" => ("bits_per_second", 1e3),
        "Mbit/s" => ("bits_per_second", 1e6),
        "Gbit/s" => ("bits_per_second", 1e9),
        "B/s" | "bytes/s" => ("bytes_per_second", 1.0),
        "kB/s" => ("bytes_per_second", 1e3),
        "MB/s" => ("bytes_per_second", 1e6),
        "KiB/s" => ("bytes_per_second", 1024.0),
        "MiB/s" => ("bytes_per_second", 1024.0 * 1024.0),
        "bytes" | "B" => ("bytes", 1.0),
        "%" => ("ratio", 0.01),
        "ratio" => ("ratio", 1.0),
        "packets" => ("packets", 1.0),
        "packets/s" => ("packets_per_second", 1.0),
        "hosts" => ("hosts", 1.0),
        _ => return None,
    })
}

/// The document's series: which document wrote them, then its result's own.
/// A saved document (`testdata/report/*.json`) and its exposition's text, for the tests of
/// each command's series.
#[doc(hidden)]
pub fn saved_exposition<R: Metrics + serde::de::DeserializeOwned>(
    json: &str,
) -> (Document<serde_json::Value, R>, String) {
    let doc: Document<serde_json::Value, R> =
        wirespeed_report::decode::from_str(json).expect("a saved document decodes");
    let text = exposition(&doc).text();
    (doc, text)
}

#[doc(hidden)]
pub fn exposition<P, R: Metrics>(doc: &Document<P, R>) -> Exposition {
    let command = doc
        .schema
        .strip_prefix("wirespeed.")
        .and_then(|s| s.rsplit_once('.'))
        .map_or("unknown", |(command, _version)| command);
    let mut m = Exposition::new(command);
    m.gauge(
        "info",
        "the document's schema and the wirespeed version that wrote it",
        &[
            ("schema", doc.schema.as_str()),
            ("version", doc.wirespeed_version.as_str()),
        ],
        1.0,
    );
    if let Some(started) = humantime::parse_rfc3339(&doc.started_at)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    {
        m.gauge(
            "started_timestamp_seconds",
            "when the run started, seconds since 1970",
            &[],
            started.as_secs_f64(),
        );
    }
    m.gauge(
        "verdicts",
        "how many verdicts the document has",
        &[],
        doc.verdicts.len() as f64,
    );
    m.gauge(
        "warnings",
        "how many warnings the document has",
        &[],
        doc.warnings.len() as f64,
    );
    // One series per kind, so an alert can fire on `{kind="receiver_window_limited"}` without
    // matching a sentence; a kind said twice counts twice.
    let mut by_kind = std::collections::BTreeMap::<(&str, &str), usize>::new();
    for finding in &doc.findings {
        let severity = match finding.severity {
            wirespeed_report::Severity::Verdict => "verdict",
            wirespeed_report::Severity::Warning => "warning",
        };
        *by_kind
            .entry((severity, finding.kind.as_str()))
            .or_default() += 1;
    }
    for ((severity, kind), count) in by_kind {
        m.gauge(
            "findings",
            "how many verdicts or warnings of this kind the document has",
            &[("severity", severity), ("kind", kind)],
            count as f64,
        );
    }
    doc.result.metrics(&mut m);
    m
}

/// Writes the document's metrics to `path` whole or not at all (a temporary file in the same
/// directory, then a rename), as the textfile collector requires: it must never read half a file.
pub(crate) fn write_file<P: Serialize, R: Metrics>(
    path: &Path,
    doc: &Document<P, R>,
) -> anyhow::Result<()> {
    let text = exposition(doc).text();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("--metrics-file {}: not a file name", path.display()))?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temp, text).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| {
        let _ = std::fs::remove_file(&temp);
        format!("renaming {} to {}", temp.display(), path.display())
    })
}

/// `--metrics-file` value parser: the file must be writable before the test starts.
pub(crate) fn output_file(s: &str) -> Result<std::path::PathBuf, String> {
    let path = std::path::PathBuf::from(s);
    crate::common::output::check_output_file("--metrics-file", &path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The series of a saved document's `result` (golden files mask the run's facts), for the
/// commands' tests.
#[doc(hidden)]
pub fn of_result<R: serde::de::DeserializeOwned + Metrics>(command: &str, json: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(json).expect("a JSON document");
    let result: R = serde_json::from_value(doc["result"].clone()).expect("the command's result");
    let mut m = Exposition::new(command);
    result.metrics(&mut m);
    m.text()
}
