//! Saved results as text, into documents: one `--json` document (or several, concatenated),
//! a `sweep`/`load` results file (a plan line, then one line per finished run), and
//! `--json-stream` output (one `{"interval": ...}` line per interval, then the document).
//!
//! Everything here is bounded, because a results file may come from anywhere: serde_json
//! refuses nesting deeper than 128 levels while parsing, and this module refuses documents
//! deeper than [`MAX_DEPTH`] and files with more than [`MAX_DOCUMENTS`] documents, each with the
//! line and column where the problem starts.

use serde_json::{Map, Value};

/// The deepest nesting a document may have (wirespeed's own documents use under ten levels).
pub const MAX_DEPTH: usize = 64;

/// The most documents one report takes (a `serve --json` log of many sessions, or many runs).
pub const MAX_DOCUMENTS: usize = 2000;

/// Why a file's text is not a set of wirespeed results.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The text is not JSON at this place.
    #[error("{line}:{column}: not valid JSON: {message}")]
    Json {
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// A document is nested deeper than [`MAX_DEPTH`] levels.
    #[error("{line}:{column}: nested more than {limit} levels deep")]
    TooDeep {
        /// Line where the document starts.
        line: usize,
        /// Column where the document starts.
        column: usize,
        /// The limit.
        limit: usize,
    },
    /// More documents than [`MAX_DOCUMENTS`].
    #[error("{line}:{column}: more than {limit} documents")]
    TooMany {
        /// Line where the first document over the limit starts.
        line: usize,
        /// Its column.
        column: usize,
        /// The limit.
        limit: usize,
    },
    /// No JSON value at all.
    #[error("holds no JSON document")]
    Empty,
}

/// The documents in `text`, in order; results files become one document each: the plan object
/// with its runs under `"runs"`, so the page treats it as one series.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, InputError> {
    let mut values = Vec::new();
    let mut torn = None;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = skip_space(text, stream.byte_offset());
        let Some(next) = stream.next() else { break };
        let (line, column) = line_column(text, start);
        let value = match next {
            Ok(value) => value,
            // A results file or a stream that a crash or Ctrl-C cut mid-line: the lines before
            // it are whole (each was flushed as it ended), so they are kept, as `--resume` does.
            Err(e) if e.is_eof() && !values.is_empty() => {
                torn = Some(line);
                break;
            }
            Err(e) => return Err(json_error(text, &e)),
        };
        if depth(&value) > MAX_DEPTH {
            return Err(InputError::TooDeep {
                line,
                column,
                limit: MAX_DEPTH,
            });
        }
        if values.len() == MAX_DOCUMENTS {
            return Err(InputError::TooMany {
                line,
                column,
                limit: MAX_DOCUMENTS,
            });
        }
        values.push(value);
    }
    if values.is_empty() {
        return Err(InputError::Empty);
    }
    let mut documents = group(values);
    if let (Some(line), Some(Value::Object(last))) = (torn, documents.last_mut()) {
        let note = Value::String(format!(
            "line {line} was cut off mid-write (a crash or Ctrl-C while saving): it is left out"
        ));
        match last.get_mut("warnings") {
            Some(Value::Array(w)) => w.push(note),
            _ => {
                last.insert("warnings".into(), Value::Array(vec![note]));
            }
        }
    }
    Ok(documents)
}

/// Folds run lines into the plan before them, and drops `--json-stream` interval lines that
/// the final document repeats; intervals whose document never came (the run was cut off)
/// become a document of their own with a warning saying so.
fn group(values: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut runs: Option<(Map<String, Value>, Vec<Value>)> = None;
    let mut intervals: Vec<Value> = Vec::new();
    for value in values {
        if is_plan(&value) {
            flush_runs(&mut out, runs.take());
            flush_intervals(&mut out, &mut intervals);
            if let Value::Object(plan) = value {
                runs = Some((plan, Vec::new()));
            }
            continue;
        }
        if let Some(iv) = interval_line(&value) {
            flush_runs(&mut out, runs.take());
            intervals.push(iv.clone());
            continue;
        }
        let is_document = value.get("schema").is_some();
        match &mut runs {
            Some((_, lines)) if !is_document => lines.push(value),
            _ => {
                flush_runs(&mut out, runs.take());
                // The document carries every interval the stream printed before it.
                intervals.clear();
                out.push(value);
            }
        }
    }
    flush_runs(&mut out, runs.take());
    flush_intervals(&mut out, &mut intervals);
    out
}

/// The first line of a results file: `"schema": "wirespeed.<command>-runs.v<N>"`.
fn is_plan(value: &Value) -> bool {
    value
        .get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("wirespeed.") && s.contains("-runs.v"))
}

/// What `group` makes of a cut-off `--json-stream`: intervals under `result`, no schema.
pub(crate) fn is_stream(value: &Value) -> bool {
    value.get("schema").is_none()
        && value
            .get("result")
            .is_some_and(|r| r.get("intervals").is_some())
}

/// What `iperf3 -J` printed (or wirespeed's `--json-format iperf3`), told apart by its own
/// head (`start.version` is "iperf 3.x", or "wirespeed x" with no schema): the
/// wirespeed command its test corresponds to, from `start.test_start.protocol` ("iperf3" for a
/// test that never started, or SCTP). Read typed, never by path: a document that only looks
/// similar is not taken for one.
pub(crate) fn iperf3_test(value: &Value) -> Option<&'static str> {
    #[derive(serde::Deserialize)]
    struct Doc {
        start: Start,
    }
    #[derive(serde::Deserialize)]
    struct Start {
        version: String,
        #[serde(default)]
        test_start: Option<TestStart>,
    }
    #[derive(serde::Deserialize)]
    struct TestStart {
        protocol: String,
    }
    if value.get("schema").is_some() || value.get("end").is_none() {
        return None;
    }
    let doc = <Doc as serde::Deserialize>::deserialize(value).ok()?;
    // "wirespeed X": a wirespeed run saved with `--json-format iperf3`.
    let v = &doc.start.version;
    if !(v.starts_with("iperf 3") || v.starts_with("wirespeed ")) {
        return None;
    }
    Some(
        match doc.start.test_start.as_ref().map(|t| t.protocol.as_str()) {
            Some("TCP") => "tcp",
            Some("UDP") => "udp",
            _ => "iperf3",
        },
    )
}

fn interval_line(value: &Value) -> Option<&Value> {
    match value {
        Value::Object(m) if m.len() == 1 => m.get("interval"),
        _ => None,
    }
}

fn flush_runs(out: &mut Vec<Value>, runs: Option<(Map<String, Value>, Vec<Value>)>) {
    // A schedule's file (`--every`): each run's record holds the command's whole document,
    // which is shown (and compared by its headline figures) as if saved on its own.
    if let Some((plan, lines)) = &runs
        && plan.get("schema").and_then(Value::as_str) == Some("wirespeed.schedule-runs.v1")
    {
        out.extend(
            lines
                .iter()
                .filter_map(|run| run.get("document").filter(|d| d.is_object()).cloned()),
        );
        return;
    }
    if let Some((mut plan, lines)) = runs {
        plan.insert("runs".into(), Value::Array(lines));
        out.push(Value::Object(plan));
    }
}

fn flush_intervals(out: &mut Vec<Value>, intervals: &mut Vec<Value>) {
    if intervals.is_empty() {
        return;
    }
    let n = intervals.len();
    out.push(serde_json::json!({
        "result": { "intervals": std::mem::take(intervals) },
        "warnings": [format!(
            "a --json-stream that ended after {n} interval(s) without its final document \
             (the run was cut off): only the intervals are shown"
        )],
    }));
}

/// Nesting depth without recursion, so that no input can exhaust the stack here.
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn json_error(text: &str, e: &serde_json::Error) -> InputError {
    let message = e.to_string();
    // serde_json appends " at line L column C"; the position is reported separately.
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    let (line, column) = if e.line() == 0 {
        line_column(text, text.len())
    } else {
        (e.line(), e.column().max(1))
    };
    InputError::Json {
        line,
        column,
        message,
    }
}

fn skip_space(text: &str, offset: usize) -> usize {
    let rest = text.get(offset..).unwrap_or("");
    offset + (rest.len() - rest.trim_start().len())
}

/// Line and column (from 1, in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
