//! `wirespeed report`: saved results in, one self-contained HTML page out.
//!
//! The page needs nothing beside itself: one inline stylesheet, plots as inline SVG, no
//! script (its Content-Security-Policy forbids scripts and remote loads, so even a flaw in the
//! escaping could not run one). Every document gets a section: its command, schema, start time,
//! host, verdicts and warnings, the tables and plots its schema has a natural form for, its
//! parameters, and every field of its result as nested tables. A schema this report does not
//! know is shown the generic way with a note, never refused. Several documents of one schema
//! get a comparison table (median, minimum, maximum of their headline figures).
//!
//! Rendering is pure (documents in, a string out) and total. The page frame (heading, host
//! facts, verdicts, every field as nested tables) walks a document as `serde_json::Value`; the
//! tables and plots of a command come from its own result type, decoded from the document by
//! the caller's [`Views`] (the binary, where the types live, beside their text views). A
//! document that does not decode into its type (damaged, or written by another version) gets
//! the generic section with the decoder's reason, never a panic.

mod compare;
pub mod generic;
mod input;
pub mod markup;
pub mod plots;

use serde_json::Value;

pub use input::{InputError, MAX_DEPTH, MAX_DOCUMENTS, parse_documents};
pub use markup::escape;

use generic::{Budget, value_markup};
use markup::{Cell, HtmlTable, Markup};

/// What a command's own result type shows of one document.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Its tables and plots.
    pub markup: Markup,
    /// The figures several documents of one command are compared by: a label, the unit key
    /// the value is formatted by (`_bits_per_second`, `_seconds`, `_ms`, `` for a count), and
    /// the value.
    pub headlines: Vec<(String, &'static str, f64)>,
    /// False when the tables show only part of the document (its fields are then shown open).
    pub complete: bool,
}

/// The typed views of the commands this build knows: `view(command, document)` decodes the
/// document into the command's result type and renders it; `None` when the command has no
/// typed view (the page shows its scalar fields), `Some(Err(why))` when the document does not
/// decode into the type.
pub trait Views {
    /// The view of `doc`, a document of `command` (`"stream"` for a cut-off `--json-stream`
    /// that has intervals and no schema).
    fn view(&self, command: &str, doc: &Value) -> Option<Result<View, String>>;
}

/// No typed views: every document is shown field by field (the crate's own tests use it).
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldsOnly;

impl Views for FieldsOnly {
    fn view(&self, _command: &str, _doc: &Value) -> Option<Result<View, String>> {
        None
    }
}

/// One document and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The file (and position) it was read from, shown under its heading.
    pub source: String,
    /// The document as read.
    pub document: Value,
}

/// Table cells the "every field" part of one section may draw.
const CELLS_PER_DOCUMENT: usize = 20_000;

/// Schema versions this report has a dedicated rendering for, by command.
const KNOWN: &[(&str, u32)] = &[
    ("tcp", 1),
    ("udp", 1),
    ("sweep", 1),
    ("sweep-runs", 1),
    ("load", 1),
    ("load-runs", 1),
    ("mesh", 1),
    ("mesh-runs", 1),
    ("latency", 1),
    ("latency-rr", 1),
    ("envelope", 1),
    ("probe", 1),
    ("model", 1),
    ("sim", 1),
    ("autoneg", 1),
    ("diagnose", 1),
    ("reproduce", 1),
    ("lab.up", 1),
    ("lab.status", 1),
    ("serve", 1),
];

/// What a document's schema says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `wirespeed.<command>.v<version>` with a version this report knows.
    Known(String),
    /// A wirespeed command, in a version newer (or older) than this report knows.
    OtherVersion(String, String),
    /// A document `iperf3 -J` printed, read so that old iperf3 runs sit beside wirespeed's:
    /// the wirespeed command its test corresponds to (`tcp`, `udp`), or `iperf3` when none does.
    Iperf3(&'static str),
    /// Anything else, including no schema.
    Unknown,
}

impl Kind {
    pub(crate) fn of(doc: &Value) -> Kind {
        let Some(schema) = Head::of(doc).schema else {
            return match input::iperf3_test(doc) {
                Some(command) => Kind::Iperf3(command),
                None => Kind::Unknown,
            };
        };
        let Some(rest) = schema.strip_prefix("wirespeed.") else {
            return Kind::Unknown;
        };
        let Some((command, version)) = rest.rsplit_once(".v") else {
            return Kind::Unknown;
        };
        let known_command = KNOWN.iter().any(|(c, _)| *c == command);
        match version.parse::<u32>() {
            Ok(v) if KNOWN.contains(&(command, v)) => Kind::Known(command.to_string()),
            _ if known_command => Kind::OtherVersion(command.to_string(), version.to_string()),
            _ => Kind::Unknown,
        }
    }
}

/// The name a document goes by in headings: its command, or its schema, or "document".
fn title(doc: &Value) -> String {
    match Kind::of(doc) {
        Kind::Known(c) | Kind::OtherVersion(c, _) => c,
        Kind::Iperf3(c) => c.to_string(),
        Kind::Unknown => doc
            .get("schema")
            .and_then(Value::as_str)
            .map_or_else(|| "document".to_string(), str::to_string),
    }
}

/// The page for these documents, with the commands' typed `views`.
pub fn render_page(entries: &[Entry], views: &dyn Views) -> String {
    let mut m = Markup::new();
    m.lit(HEAD);
    m.lit("<h1>wirespeed report</h1>\n<p class=\"meta\">");
    m.int(entries.len())
        .lit(if entries.len() == 1 {
            " document"
        } else {
            " documents"
        })
        .lit(", rendered by wirespeed ")
        .text(env!("CARGO_PKG_VERSION"))
        .lit(".</p>\n");
    if entries.is_empty() {
        m.note("No documents: give files or directories of results saved with --json, --json-stream or --results.");
    } else {
        let typed: Vec<Option<Result<View, String>>> = entries
            .iter()
            .map(|e| match Kind::of(&e.document) {
                Kind::Known(command) => views.view(&command, &e.document),
                Kind::Iperf3(_) => views.view("iperf3", &e.document),
                // A cut-off --json-stream has intervals and no schema.
                Kind::Unknown if input::is_stream(&e.document) => views.view("stream", &e.document),
                _ => None,
            })
            .collect();
        m.push(&index(entries));
        m.push(&compare::tables(entries, &typed));
        for (i, (entry, view)) in entries.iter().zip(&typed).enumerate() {
            m.push(&section(i + 1, entry, view.as_ref()));
        }
    }
    m.lit("</body>\n</html>\n");
    m.into_string()
}

/// The anchor of document `n` (from 1).
pub(crate) fn anchor(n: usize) -> String {
    format!("doc-{n}")
}

fn index(entries: &[Entry]) -> Markup {
    let mut m = Markup::new();
    m.lit("<nav>\n<h2>Contents</h2>\n<ol>\n");
    for (i, e) in entries.iter().enumerate() {
        let doc = &e.document;
        m.lit("<li><a href=\"#")
            .text(&anchor(i + 1))
            .lit("\">")
            .text(&title(doc))
            .lit("</a>");
        if let Some(t) = Head::of(doc).started_at {
            m.lit(" <span class=\"dim\">").text(&t).lit("</span>");
        }
        m.lit(" <span class=\"src\">")
            .text(&e.source)
            .lit("</span>");
        let verdicts = strings(doc, "verdicts").len();
        let warnings = strings(doc, "warnings").len();
        if verdicts + warnings > 0 {
            m.lit(" <span class=\"dim\">(")
                .text(&crate::plot::plural(verdicts, "verdict", "verdicts"))
                .lit(", ")
                .text(&crate::plot::plural(warnings, "warning", "warnings"))
                .lit(")</span>");
        }
        m.lit("</li>\n");
    }
    m.lit("</ol>\n</nav>\n");
    m
}

fn section(n: usize, entry: &Entry, view: Option<&Result<View, String>>) -> Markup {
    let doc = &entry.document;
    let kind = Kind::of(doc);
    let mut m = Markup::new();
    m.lit("<section id=\"")
        .text(&anchor(n))
        .lit("\">\n<h2>")
        .int(n)
        .lit(". ")
        .text(&title(doc))
        .lit("</h2>\n<p class=\"src\">from ")
        .text(&entry.source)
        .lit("</p>\n");
    m.push(&facts(doc));
    match &kind {
        // An iperf3 document's view says where it came from.
        Kind::Known(_) | Kind::Iperf3(_) => {}
        Kind::OtherVersion(command, version) => {
            m.note(&format!(
                "schema version v{version} of \"{command}\" is not one this report knows: its fields are shown as nested tables"
            ));
        }
        Kind::Unknown if doc.get("schema").is_some() => {
            m.note("not a schema this report knows: its fields are shown as nested tables");
        }
        Kind::Unknown if doc.is_object() => {
            m.note("a document without a schema: its fields are shown as nested tables");
        }
        Kind::Unknown => {
            m.note("not a wirespeed document (a JSON value that is not an object): shown as it is");
        }
    }
    m.push(&sentences(doc, "verdicts", "Verdicts", "verdicts"));
    m.push(&sentences(doc, "warnings", "Warnings", "warnings"));
    let open = match (view, &kind) {
        (Some(Ok(v)), _) => {
            m.push(&v.markup);
            // Without tables of its own the fields are the content: shown open.
            v.markup.is_empty() || !v.complete
        }
        (Some(Err(why)), Kind::Known(command)) => {
            m.note(&format!(
                "this \"{command}\" document does not match this version's result type ({why}): its fields are shown as nested tables"
            ));
            true
        }
        (Some(Err(why)), Kind::Iperf3(_)) => {
            m.note(&format!(
                "an iperf3 -J document this report cannot read ({why}): its fields are shown as nested tables"
            ));
            true
        }
        (_, Kind::Known(_)) => {
            m.push(&generic::scalars(
                "Summary",
                doc.get("result").unwrap_or(&Value::Null),
            ));
            true
        }
        _ => true,
    };
    let mut budget = Budget::new(CELLS_PER_DOCUMENT);
    if let Some(p) = doc.get("parameters") {
        m.heading("Parameters");
        m.push(&value_markup("parameters", p, &mut budget));
    }
    let rest = everything_else(doc);
    if !rest.is_empty() {
        m.lit(if open {
            "<details open><summary>Every field</summary>\n"
        } else {
            "<details><summary>Every field</summary>\n"
        });
        for (key, value) in rest {
            m.lit("<h4>").text(key).lit("</h4>\n");
            m.push(&value_markup(key, value, &mut budget));
        }
        m.lit("</details>\n");
    }
    m.lit("</section>\n");
    m
}

/// The fields not already shown in the header, verdicts, warnings and parameters.
fn everything_else(doc: &Value) -> Vec<(&str, &Value)> {
    const SHOWN: &[&str] = &[
        "schema",
        "wirespeed_version",
        "started_at",
        "host",
        "parameters",
        "verdicts",
        "warnings",
    ];
    match doc {
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !SHOWN.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
            .collect(),
        other => vec![("value", other)],
    }
}

/// The envelope every wirespeed document shares (see [`crate::Document`]), read into its
/// types field by field: a field of another type reads as absent here and is shown as it is
/// under "Every field".
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Head {
    #[serde(deserialize_with = "or_none")]
    schema: Option<String>,
    #[serde(deserialize_with = "or_none")]
    wirespeed_version: Option<String>,
    #[serde(deserialize_with = "or_none")]
    started_at: Option<String>,
    #[serde(deserialize_with = "or_none")]
    host: Option<crate::HostFacts>,
}

/// `T` if the value is one, else `None` (the frame never refuses a document).
fn or_none<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = <Value as serde::Deserialize>::deserialize(d)?;
    Ok(crate::decode::from_value(value).ok())
}

impl Head {
    fn of(doc: &Value) -> Head {
        match doc {
            // From the borrowed value: the result, however large, is skipped, not copied.
            Value::Object(_) => <Head as serde::Deserialize>::deserialize(doc).unwrap_or_default(),
            _ => Head::default(),
        }
    }
}

/// Schema, version, start time and host facts (see [`crate::HostFacts`]).
fn facts(doc: &Value) -> Markup {
    let head = Head::of(doc);
    let mut t = HtmlTable::new(Vec::<String>::new());
    let mut add = |label: &str, value: Option<String>| {
        if let Some(v) = value {
            t.row(vec![Cell::text(label), Cell::text(v)]);
        }
    };
    add("schema", head.schema);
    add("wirespeed version", head.wirespeed_version);
    add("started at", head.started_at);
    if let Some(host) = head.host {
        add("host name", Some(host.hostname));
        add("system", Some(format!("{} {}", host.os, host.kernel)));
        add("processor", Some(host.cpu_model));
        add("cores", Some(host.cores.to_string()));
    }
    let mut m = Markup::new();
    if !t.is_empty() {
        m.lit("<div class=\"facts\">")
            .push(&t.markup())
            .lit("</div>\n");
    }
    m
}

/// The strings of an array field (verdicts, warnings); other values are shown as text.
pub(crate) fn strings<'a>(doc: &'a Value, key: &str) -> Vec<std::borrow::Cow<'a, str>> {
    match doc.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
                other => std::borrow::Cow::Owned(other.to_string()),
            })
            .collect(),
        Some(Value::String(s)) => vec![std::borrow::Cow::Borrowed(s.as_str())],
        _ => Vec::new(),
    }
}

fn sentences(doc: &Value, key: &str, heading: &str, class: &'static str) -> Markup {
    let items = strings(doc, key);
    let mut m = Markup::new();
    if items.is_empty() {
        return m;
    }
    m.heading(heading);
    m.lit("<ul class=\"").lit(class).lit("\">\n");
    for s in items {
        m.lit("<li>").text(&s).lit("</li>\n");
    }
    m.lit("</ul>\n");
    m
}

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>wirespeed report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #1f77b4; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; text-align: left; }
th { background: #eef3f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.good { background: #dff3df; color: #1a5e1a; font-weight: bold; }
td.bad { background: #f8dcdc; color: #8a1c1c; font-weight: bold; }
td.neutral { color: #666; }
.kv table { font-size: 1em; margin: 0; }
.kv td:first-child { color: #555; white-space: nowrap; }
.wide { overflow-x: auto; }
.facts td:first-child { color: #555; }
.src, .dim, .meta { color: #777; font-size: 0.9em; }
.note { background: #fff7e0; border-left: 4px solid #e0a800; padding: 0.3em 0.6em; }
ul.verdicts li { margin: 0.2em 0; }
ul.warnings li { color: #8a4b00; margin: 0.2em 0; }
svg.plot { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
details { margin-top: 1em; }
summary { cursor: pointer; color: #1f77b4; }
nav ol { padding-left: 1.5em; }
</style>
</head>
<body>
"#;

// testing.rs (the page frame's checks and the arbitrary-JSON strategy) is compiled by no build
// of this library: the tests include it by path, crates/wirespeed-report-tests (this library's
// tests) and the binary's tests of the typed views.
