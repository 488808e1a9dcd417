//! A result in the Prometheus text exposition format (what node_exporter's textfile collector
//! reads and `promtool check metrics` checks): `--metrics-file FILE` on every command that
//! prints a document.
//!
//! Every number of the document's `result` becomes one sample. Names follow the document's own
//! field names, which already carry their units (`..._bytes`, `..._seconds`,
//! `..._bits_per_second`), so a metric is `wirespeed_<command>_<path>` with the path's keys
//! joined by `_`. An array's elements are told apart by a label named after the array holding
//! the element's index, and the short text fields of an element (a stream's `role`, a host's
//! `name`) label the numbers inside it. Booleans are 0 or 1. Everything is a gauge (the figures
//! of one finished test), except fields named `..._total`, which are counters.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

/// Longest text field used as a label value; longer ones (sentences) are not labels.
const LABEL_VALUE_MAX: usize = 64;

/// Suffixes Prometheus reserves for other metric types, and what a gauge ends with instead.
const RESERVED_SUFFIXES: &[(&str, &str)] = &[
    ("_total", "_combined"),
    ("_count", "_counted"),
    ("_sum", "_summed"),
    ("_bucket", "_bucketed"),
];

/// Most samples one document may produce: a bound on what a scraper is handed.
const SAMPLES_MAX: usize = 200_000;

type Labels = Vec<(String, String)>;

#[derive(Debug)]
struct Family {
    name: String,
    help: String,
    samples: Vec<(Labels, f64)>,
    seen: HashSet<Labels>,
}

#[derive(Default)]
struct Families {
    order: Vec<Family>,
    index: HashMap<String, usize>,
    samples: usize,
}

impl Families {
    fn add(&mut self, name: String, help: String, labels: Labels, value: f64) {
        if self.samples >= SAMPLES_MAX {
            return;
        }
        self.samples += 1;
        let i = *self.index.entry(name.clone()).or_insert_with(|| {
            self.order.push(Family {
                name,
                help,
                samples: Vec::new(),
                seen: HashSet::new(),
            });
            self.order.len() - 1
        });
        let family = &mut self.order[i];
        // The same path reached twice with the same labels (an array of arrays without text
        // fields cannot, but a hostile document could): the first one stands.
        if family.seen.insert(labels.clone()) {
            family.samples.push((labels, value));
        }
    }
}

/// `[a-zA-Z_][a-zA-Z0-9_]*` from a JSON key.
fn sanitize(key: &str) -> String {
    let mut out: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// A JSON key in Prometheus' base units: seconds, bytes and ratios. A key naming another unit as one of
/// its `_`-separated words (`ms_per_call`, `delay_us`, `bits_per_second`) is renamed and its value
/// scaled by the returned factor.
fn base_unit(key: &str) -> (String, f64) {
    let mut factor = 1.0;
    let words: Vec<&str> = key
        .split('_')
        .map(|w| match w {
            "ms" | "milliseconds" => {
                factor *= 1e-3;
                "seconds"
            }
            "us" | "microseconds" => {
                factor *= 1e-6;
                "seconds"
            }
            "ns" | "nanoseconds" => {
                factor *= 1e-9;
                "seconds"
            }
            "bits" => {
                factor /= 8.0;
                "bytes"
            }
            "percent" => {
                factor *= 0.01;
                "ratio"
            }
            w => w,
        })
        .collect();
    (words.join("_"), factor)
}

fn escape(value: &str) -> String {
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

/// Where a value sits: its metric name, its JSON path (the help text) and its scale.
#[derive(Clone)]
struct At {
    name: String,
    path: String,
    factor: f64,
}

impl At {
    fn child(&self, key: &str) -> At {
        let (unit_key, factor) = base_unit(&sanitize(key));
        At {
            name: format!("{}_{unit_key}", self.name),
            path: format!("{}.{key}", self.path),
            factor: self.factor * factor,
        }
    }
}

fn walk(v: &Value, at: &At, labels: &[(String, String)], families: &mut Families) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                // Every figure is a gauge (one finished test); these suffixes belong to
                // counters, histograms and summaries.
                let name = RESERVED_SUFFIXES
                    .iter()
                    .find_map(|(reserved, instead)| {
                        at.name
                            .strip_suffix(reserved)
                            .map(|base| format!("{base}{instead}"))
                    })
                    .unwrap_or_else(|| at.name.clone());
                let help = if at.factor == 1.0 {
                    at.path.clone()
                } else {
                    format!("{} x {}", at.path, at.factor)
                };
                families.add(name, help, labels.to_vec(), x * at.factor);
            }
        }
        Value::Bool(b) => families.add(
            at.name.clone(),
            at.path.clone(),
            labels.to_vec(),
            f64::from(u8::from(*b)),
        ),
        Value::Object(map) => {
            for (k, child) in map {
                walk(child, &at.child(k), labels, families);
            }
        }
        Value::Array(items) => {
            let label = sanitize(at.name.rsplit('_').next().unwrap_or("index"));
            for (i, item) in items.iter().enumerate() {
                let mut inner = labels.to_vec();
                inner.push((label.clone(), i.to_string()));
                if let Value::Object(map) = item {
                    for (k, text) in map {
                        if let Value::String(s) = text
                            && s.len() <= LABEL_VALUE_MAX
                        {
                            let key = sanitize(k);
                            if !inner.iter().any(|(l, _)| *l == key) {
                                inner.push((key, s.clone()));
                            }
                        }
                    }
                }
                let element = At {
                    path: format!("{}[]", at.path),
                    ..at.clone()
                };
                walk(item, &element, &inner, families);
            }
        }
        Value::String(_) | Value::Null => {}
    }
}

/// The document (a `wirespeed.<command>.vN` JSON value) in the Prometheus text format.
pub(crate) fn openmetrics(doc: &Value) -> anyhow::Result<String> {
    let schema = doc
        .get("schema")
        .and_then(Value::as_str)
        .context("the document has no schema")?;
    let command = schema
        .strip_prefix("wirespeed.")
        .and_then(|s| s.rsplit_once('.'))
        .map(|(command, _version)| command)
        .with_context(|| format!("schema {schema:?} is not wirespeed.<command>.v<N>"))?;
    let prefix = format!("wirespeed_{}", sanitize(command));
    let mut families = Families::default();
    let version = doc
        .get("wirespeed_version")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    families.add(
        format!("{prefix}_info"),
        "the document's schema and the wirespeed version that wrote it".into(),
        vec![
            ("schema".into(), schema.into()),
            ("version".into(), version.into()),
        ],
        1.0,
    );
    if let Some(started) = doc
        .get("started_at")
        .and_then(Value::as_str)
        .and_then(|s| humantime::parse_rfc3339(s).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    {
        families.add(
            format!("{prefix}_started_timestamp_seconds"),
            "started_at, as seconds since 1970".into(),
            Vec::new(),
            started.as_secs_f64(),
        );
    }
    for key in ["verdicts", "warnings"] {
        if let Some(list) = doc.get(key).and_then(Value::as_array) {
            families.add(
                format!("{prefix}_{key}"),
                format!("how many {key} the document has"),
                Vec::new(),
                list.len() as f64,
            );
        }
    }
    if let Some(result) = doc.get("result") {
        let at = At {
            name: prefix.clone(),
            path: "result".into(),
            factor: 1.0,
        };
        walk(result, &at, &[], &mut families);
    }
    let mut out = String::new();
    for family in &families.order {
        writeln!(out, "# HELP {} {}", family.name, escape(&family.help))?;
        writeln!(out, "# TYPE {} gauge", family.name)?;
        for (labels, value) in &family.samples {
            out.push_str(&family.name);
            if !labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write!(out, "{k}=\"{}\"", escape(v))?;
                }
                out.push('}');
            }
            writeln!(out, " {value}")?;
        }
    }
    Ok(out)
}

/// Writes the document's metrics to `path` whole or not at all (a temporary file in the same
/// directory, then a rename), as the textfile collector requires: it must never read half a file.
pub(crate) fn write_file(path: &Path, doc: &Value) -> anyhow::Result<()> {
    let text = openmetrics(doc)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(result: Value) -> Value {
        json!({
            "schema": "wirespeed.tcp.v1",
            "wirespeed_version": "0.1.0",
            "started_at": "2026-11-23T10:00:00Z",
            "result": result,
            "verdicts": ["a"],
            "warnings": [],
        })
    }

    #[test]
    fn numbers_become_samples_named_by_their_path_with_units_declared() {
        let text = openmetrics(&doc(json!({
            "end": {"sum_received": {"bytes": 1000, "seconds": 1.5, "bits_per_second": 5333.0}},
            "partial": false,
        })))
        .unwrap();
        assert!(text.contains("# HELP wirespeed_tcp_end_sum_received_bytes result.end.sum_received.bytes\n# TYPE wirespeed_tcp_end_sum_received_bytes gauge\nwirespeed_tcp_end_sum_received_bytes 1000\n"), "{text}");
        assert!(text.contains("wirespeed_tcp_end_sum_received_seconds 1.5\n"));
        assert!(text.contains("# HELP wirespeed_tcp_end_sum_received_bytes_per_second result.end.sum_received.bits_per_second x 0.125\n"), "{text}");
        assert!(text.contains("wirespeed_tcp_end_sum_received_bytes_per_second 666.625\n"));
        assert!(text.contains("wirespeed_tcp_partial 0\n"));
        assert!(
            text.contains("wirespeed_tcp_info{schema=\"wirespeed.tcp.v1\",version=\"0.1.0\"} 1\n")
        );
        assert!(text.contains("wirespeed_tcp_started_timestamp_seconds 1795428000\n"));
        assert!(text.contains("wirespeed_tcp_verdicts 1\n"));
    }

    #[test]
    fn array_elements_are_labelled_by_index_and_their_short_text_fields() {
        let text = openmetrics(&doc(json!({
            "streams": [
                {"role": "sender", "bytes": 10, "note": "x".repeat(100)},
                {"role": "receiver", "bytes": 9},
            ]
        })))
        .unwrap();
        assert!(
            text.contains("wirespeed_tcp_streams_bytes{streams=\"0\",role=\"sender\"} 10\n"),
            "{text}"
        );
        assert!(text.contains("wirespeed_tcp_streams_bytes{streams=\"1\",role=\"receiver\"} 9\n"));
        assert!(!text.contains("xxxx"), "a long text is not a label");
        // One TYPE line per family, samples together.
        assert_eq!(
            text.matches("# TYPE wirespeed_tcp_streams_bytes ").count(),
            1
        );
    }

    #[test]
    fn units_totals_and_hostile_keys() {
        let text = openmetrics(&doc(json!({
            "sessions_total": 3,
            "frames_count": 4,
            "ms_per_call": 2.5,
            "cpu_percent": 50,
            "9 odd-key\"": 1,
            "items": [{"name": "a\"b\\c\nd", "v": 1}],
        })))
        .unwrap();
        assert!(
            text.contains("wirespeed_tcp_sessions_combined 3\n"),
            "{text}"
        );
        assert!(text.contains("wirespeed_tcp_frames_counted 4\n"), "{text}");
        assert!(
            text.contains("wirespeed_tcp_seconds_per_call 0.0025\n"),
            "{text}"
        );
        assert!(text.contains("wirespeed_tcp_cpu_ratio 0.5\n"), "{text}");
        assert!(text.contains("wirespeed_tcp__9_odd_key_ 1\n"), "{text}");
        assert!(text.contains("name=\"a\\\"b\\\\c\\nd\""), "{text}");
    }

    #[test]
    fn a_document_without_a_wirespeed_schema_is_refused() {
        assert!(openmetrics(&json!({"result": {}})).is_err());
        assert!(openmetrics(&json!({"schema": "iperf3", "result": {}})).is_err());
    }

    #[test]
    fn samples_are_bounded() {
        let big: Vec<Value> = (0..SAMPLES_MAX + 10).map(|i| json!({"v": i})).collect();
        let text = openmetrics(&doc(json!({ "items": big }))).unwrap();
        assert!(text.lines().filter(|l| !l.starts_with('#')).count() <= SAMPLES_MAX);
    }
}
