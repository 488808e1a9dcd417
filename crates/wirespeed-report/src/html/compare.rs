//! Several documents of one command side by side: for each headline figure, its median,
//! minimum and maximum over the documents, and each document's value linked to its section.
//! A single run is noise-prone (hyperfine's lesson); this table shows how much.

use serde_json::Value;
use wirespeed_model::stats::median;

use super::markup::{Cell, HtmlTable, Markup, by_unit};
use super::{Entry, Kind, View, anchor, title};

/// Documents listed one by one beside the statistics.
const MAX_RUN_COLUMNS: usize = 12;
/// Figures compared per command when the command has no chosen headline figures.
const MAX_GENERIC_METRICS: usize = 12;

/// A figure compared across documents: its label, the key its unit comes from, and each
/// document's value.
struct Metric {
    label: String,
    unit_key: String,
    values: Vec<Option<f64>>,
}

/// The headline figures the commands' own types chose, in the order first seen.
fn typed_metrics(views: &[Option<&View>]) -> Vec<Metric> {
    let mut out: Vec<Metric> = Vec::new();
    for (i, view) in views.iter().enumerate() {
        for (label, unit, value) in view.map(|v| v.headlines.as_slice()).unwrap_or_default() {
            let index = match out.iter().position(|m| &m.label == label) {
                Some(k) => k,
                None => {
                    out.push(Metric {
                        label: label.clone(),
                        unit_key: unit.to_string(),
                        values: vec![None; views.len()],
                    });
                    out.len() - 1
                }
            };
            out[index].values[i] = Some(*value).filter(|v| v.is_finite());
        }
    }
    out
}

/// Numbers up to two levels under `result` that at least two of the documents have.
fn generic_metrics(docs: &[&Value]) -> Vec<Metric> {
    // A walk over whatever numbers the documents have: the fallback for commands without a
    // typed view, so it reads keys it found, never keys it expects.
    let mut paths: Vec<Vec<String>> = Vec::new();
    for doc in docs {
        let Some(Value::Object(result)) = doc.get("result") else {
            continue;
        };
        for (k, v) in result {
            let mut candidates = Vec::new();
            match v {
                Value::Number(_) => candidates.push(vec![k.clone()]),
                Value::Object(inner) => candidates.extend(
                    inner
                        .iter()
                        .filter(|(_, v)| v.is_number())
                        .map(|(k2, _)| vec![k.clone(), k2.clone()]),
                ),
                _ => {}
            }
            for c in candidates {
                if !paths.contains(&c) {
                    paths.push(c);
                }
            }
        }
    }
    paths
        .into_iter()
        .map(|p| Metric {
            label: p.join(" "),
            unit_key: p.last().cloned().unwrap_or_default(),
            values: docs.iter().map(|d| found_at(d, &p)).collect(),
        })
        .filter(|m| m.values.iter().flatten().count() >= 2)
        .take(MAX_GENERIC_METRICS)
        .collect()
}

/// The finite number at `result` / `keys` of a document, where the walk above found one.
fn found_at(doc: &Value, keys: &[String]) -> Option<f64> {
    keys.iter()
        .try_fold(doc.get("result")?, |v, k| v.get(k))?
        .as_f64()
        .filter(|v| v.is_finite())
}

/// Parameters shown as differing, at most.
const MAX_DIFFERING: usize = 8;

/// Levels of nested parameters compared.
const MAX_PARAMETER_LEVELS: usize = 8;

/// Every scalar under `value` as (dotted path, text), nested objects flattened (down to
/// [`MAX_PARAMETER_LEVELS`]; deeper ones are compared as a whole).
fn flatten(prefix: &str, value: &Value, level: usize, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) if level < MAX_PARAMETER_LEVELS => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, level + 1, out);
            }
        }
        other => out.push((prefix.to_string(), super::generic::scalar(prefix, other))),
    }
}

/// The parameters whose values are not the same in every document (a figure compared across
/// different settings is a different question), with each document's value.
fn differing_parameters(docs: &[&Value]) -> Vec<(String, Vec<String>)> {
    let flat: Vec<Vec<(String, String)>> = docs
        .iter()
        .map(|d| {
            let mut out = Vec::new();
            if let Some(p) = d.get("parameters") {
                flatten("", p, 0, &mut out);
            }
            out
        })
        .collect();
    let mut paths: Vec<&str> = Vec::new();
    for f in &flat {
        for (p, _) in f {
            if !paths.contains(&p.as_str()) {
                paths.push(p);
            }
        }
    }
    paths
        .into_iter()
        .filter_map(|path| {
            let values: Vec<String> = flat
                .iter()
                .map(|f| {
                    f.iter()
                        .find(|(p, _)| p == path)
                        .map_or_else(String::new, |(_, v)| v.clone())
                })
                .collect();
            // Documents without parameters (another tool's, such as iperf3's) take no side.
            let mut with = values
                .iter()
                .zip(docs)
                .filter(|(_, d)| d.get("parameters").is_some())
                .map(|(v, _)| v);
            let first = with.next();
            let same = first.is_none_or(|f| with.all(|v| v == f));
            (!same).then(|| (path.to_string(), values))
        })
        .take(MAX_DIFFERING)
        .collect()
}

/// One comparison table per command that has two or more documents.
pub(crate) fn tables(entries: &[Entry], views: &[Option<Result<View, String>>]) -> Markup {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !matches!(
            Kind::of(&e.document),
            Kind::Known(_) | Kind::Iperf3(_) | Kind::Unknown
        ) {
            continue;
        }
        let name = title(&e.document);
        match groups.iter_mut().find(|g| g.0 == name) {
            Some(g) => g.1.push(i),
            None => groups.push((name, vec![i])),
        }
    }
    let mut m = Markup::new();
    for (name, members) in groups.iter().filter(|g| g.1.len() > 1) {
        let docs: Vec<&Value> = members.iter().map(|&i| &entries[i].document).collect();
        let typed: Vec<Option<&View>> = members
            .iter()
            .map(|&i| {
                views
                    .get(i)
                    .and_then(|v| v.as_ref())
                    .and_then(|v| v.as_ref().ok())
            })
            .collect();
        let chosen = typed_metrics(&typed);
        let metrics = if chosen.is_empty() {
            generic_metrics(&docs)
        } else {
            chosen
        };
        let shown = members.len().min(MAX_RUN_COLUMNS);
        let mut header = vec![
            "figure".to_string(),
            "documents".into(),
            "median".into(),
            "minimum".into(),
            "maximum".into(),
        ];
        header.extend(members[..shown].iter().map(|i| format!("#{}", i + 1)));
        let mut t = HtmlTable::new(header);
        for metric in metrics {
            let values = &metric.values;
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            if present.is_empty() {
                continue;
            }
            let show = |v: f64| by_unit(&metric.unit_key, v);
            let min = present.iter().copied().fold(f64::INFINITY, f64::min);
            let max = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut row = vec![
                Cell::text(metric.label.clone()),
                Cell::num(present.len().to_string()),
                Cell::num(show(median(&present))),
                Cell::num(show(min)),
                Cell::num(show(max)),
            ];
            row.extend(values[..shown].iter().map(|v| Cell::opt(v.map(show))));
            t.row(row);
        }
        if t.is_empty() {
            continue;
        }
        for (path, values) in differing_parameters(&docs) {
            let mut row = vec![
                Cell::text(format!("parameter {path}")),
                Cell::text(""),
                Cell::text(""),
                Cell::text(""),
                Cell::text(""),
            ];
            row.extend(values[..shown].iter().cloned().map(Cell::text));
            t.row(row);
        }
        m.lit("<section>\n<h2>Comparison: ")
            .int(members.len())
            .lit(" × ")
            .text(name)
            .lit("</h2>\n<p class=\"dim\">documents ");
        for (k, &i) in members.iter().enumerate() {
            if k > 0 {
                m.lit(", ");
            }
            m.lit("<a href=\"#")
                .text(&anchor(i + 1))
                .lit("\">#")
                .int(i + 1)
                .lit("</a>");
        }
        m.lit("</p>\n<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>\n</section>\n");
        if members.len() > shown {
            m.note(&format!(
                "the first {shown} documents are listed one by one; the statistics use all {}",
                members.len()
            ));
        }
    }
    m
}
