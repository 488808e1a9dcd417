//! Several documents of one command side by side: for each headline figure, its median,
//! minimum and maximum over the documents, and each document's value linked to its section.
//! A single run is noise-prone (hyperfine's lesson); this table shows how much.

use serde_json::Value;
use wirespeed_model::stats::median;

use super::markup::{Cell, HtmlTable, Markup, by_unit};
use super::sections::num;
use super::{Entry, Kind, anchor, title};

/// Documents listed one by one beside the statistics.
const MAX_RUN_COLUMNS: usize = 12;
/// Figures compared per command when the command has no chosen headline figures.
const MAX_GENERIC_METRICS: usize = 12;

/// A headline figure: its label, the key its unit comes from, and where it is.
struct Metric {
    label: String,
    unit_key: &'static str,
    path: Vec<String>,
}

fn chosen(label: &str, unit_key: &'static str, path: &[&str]) -> Metric {
    Metric {
        label: label.into(),
        unit_key,
        path: path.iter().map(|s| s.to_string()).collect(),
    }
}

/// The figures worth comparing for a command.
fn metrics(command: &str, docs: &[&Value]) -> Vec<Metric> {
    match command {
        "tcp" | "udp" => vec![
            chosen(
                "received rate",
                "bits_per_second",
                &["result", "end", "sum_received", "bits_per_second"],
            ),
            chosen(
                "sent rate",
                "bits_per_second",
                &["result", "end", "sum_sent", "bits_per_second"],
            ),
            chosen(
                "retransmits",
                "",
                &["result", "end", "sum_sent", "retransmits"],
            ),
            chosen(
                "lost",
                "lost_percent",
                &["result", "end", "sum_received", "lost_percent"],
            ),
            chosen(
                "jitter",
                "jitter_seconds",
                &["result", "end", "sum_received", "jitter_seconds"],
            ),
            chosen(
                "CPU here",
                "host_percent",
                &["result", "end", "cpu_utilization_percent", "host_total"],
            ),
            chosen(
                "CPU at the agent",
                "remote_percent",
                &["result", "end", "cpu_utilization_percent", "remote_total"],
            ),
        ],
        "envelope" => vec![
            chosen(
                "goodput ceiling",
                "bits_per_second",
                &["result", "goodput_bits_per_second"],
            ),
            chosen("efficiency", "", &["result", "efficiency"]),
        ],
        "sweep" => vec![chosen(
            "plateau",
            "bytes_per_second",
            &["result", "analysis", "plateau_bytes_per_second"],
        )],
        _ => generic_metrics(docs),
    }
}

/// Numbers up to two levels under `result` that at least two of the documents have.
fn generic_metrics(docs: &[&Value]) -> Vec<Metric> {
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
        .map(|p| {
            let mut path = vec!["result".to_string()];
            path.extend(p.iter().cloned());
            Metric {
                label: p.join(" "),
                unit_key: "",
                path,
            }
        })
        .filter(|m| {
            docs.iter()
                .filter(|d| value_at(d, &m.path).is_some())
                .count()
                >= 2
        })
        .take(MAX_GENERIC_METRICS)
        .collect()
}

fn value_at(doc: &Value, path: &[String]) -> Option<f64> {
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    num(doc, &keys).filter(|v| v.is_finite())
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
            let same = values.iter().all(|v| *v == values[0]);
            (!same).then(|| (path.to_string(), values))
        })
        .take(MAX_DIFFERING)
        .collect()
}

/// One comparison table per command that has two or more documents.
pub(crate) fn tables(entries: &[Entry]) -> Markup {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !matches!(Kind::of(&e.document), Kind::Known(_) | Kind::Unknown) {
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
        let command = match Kind::of(docs[0]) {
            Kind::Known(c) => c,
            _ => String::new(),
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
        for metric in metrics(&command, &docs) {
            let values: Vec<Option<f64>> = docs.iter().map(|d| value_at(d, &metric.path)).collect();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            if present.is_empty() {
                continue;
            }
            let unit_key = if metric.unit_key.is_empty() {
                metric.path.last().map_or("", String::as_str)
            } else {
                metric.unit_key
            };
            let show = |v: f64| by_unit(unit_key, v);
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
