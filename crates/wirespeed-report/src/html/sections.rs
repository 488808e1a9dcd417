//! The part of a section that depends on the schema: the tables and plots each command's
//! result has a natural form for. Every reader here takes what is present and skips what is
//! not, so a damaged document gives fewer tables, never an error.

use serde_json::Value;

use crate::plot::{Curve, Labels, Mark, Series};

use super::generic::{is_scalar, scalar};
use super::markup::{Cell, HtmlTable, Markup, Tone, by_unit, number};
use super::{Kind, plots, series, throughput};

/// The number at `path`, if it is one.
pub(crate) fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path).and_then(Value::as_f64)
}

/// The string at `path`, if it is one.
pub(crate) fn text<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

/// The array at `path`, or nothing.
pub(crate) fn list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// Whether a command's result has tables and plots of its own here; for the others the page
/// shows its scalar figures and then every field, unfolded.
pub(crate) fn dedicated(kind: &Kind, doc: &Value) -> bool {
    let Kind::Known(command) = kind else {
        return false;
    };
    match command.as_str() {
        "tcp" | "udp" | "sweep" | "sweep-runs" | "load" | "load-runs" | "probe" | "reproduce"
        | "autoneg" => true,
        // `sim csma` has points to plot; `sim link` has directions, shown as fields.
        "sim" => !list(doc, &["result", "points"]).is_empty(),
        _ => false,
    }
}

/// The schema-specific tables and plots of a document (empty when it has none).
pub(crate) fn summary(kind: &Kind, doc: &Value) -> Markup {
    let result = doc.get("result").unwrap_or(&Value::Null);
    match kind {
        Kind::Known(command) => match command.as_str() {
            "tcp" | "udp" => throughput::section(doc),
            "sweep" => series::sweep(doc),
            "sweep-runs" => series::sweep_runs(doc),
            "load" => series::load(doc),
            "load-runs" => series::load_runs(doc),
            "probe" => probe(result),
            "sim" => sim(result),
            "reproduce" => reproduce(result),
            "autoneg" => autoneg(result),
            _ => scalars("Summary", result),
        },
        // A cut-off --json-stream has intervals and no schema.
        Kind::Unknown => throughput::intervals_plot(result),
        Kind::OtherVersion(..) => Markup::new(),
    }
}

/// The scalar fields at the top of a result, formatted by the units in their names.
fn scalars(heading: &str, result: &Value) -> Markup {
    let mut t = HtmlTable::new(["quantity", "value"]);
    if let Value::Object(map) = result {
        for (k, v) in map.iter().filter(|(_, v)| is_scalar(v)) {
            t.row(vec![
                Cell::text(k.replace('_', " ")),
                Cell::num(scalar(k, v)),
            ]);
        }
    }
    let mut m = Markup::new();
    if !t.is_empty() {
        m.heading(heading);
        m.push(&t.markup());
    }
    m
}

/// `wirespeed probe`: per hop, the fitted fixed and per-byte cost, and minimum RTT against
/// bytes crossed with each hop's fitted line (Bellovin 1992, seed 001).
fn probe(result: &Value) -> Markup {
    let hops = list(result, &["hops"]);
    let mut t = HtmlTable::new([
        "ttl",
        "responder",
        "loss",
        "fixed (one way)",
        "per byte (one way)",
        "r²",
        "implied link rate",
        "note",
    ]);
    let mut curves = Vec::new();
    for h in hops {
        let who = text(h, &["responder"]).unwrap_or("*");
        let ttl = num(h, &["ttl"]).map_or_else(|| "?".into(), number);
        // Without --hops the one "hop" is the destination at the default TTL.
        let name = if result.get("per_hop").and_then(Value::as_bool) == Some(true) {
            format!("hop {ttl} {who}")
        } else {
            who.to_string()
        };
        t.row(vec![
            Cell::num(ttl.clone()),
            Cell::text(who),
            Cell::opt(num(h, &["loss_fraction"]).map(|l| format!("{} %", number(l * 100.0)))),
            Cell::opt(num(h, &["fit", "one_way", "fixed_ms"]).map(|v| by_unit("_ms", v))),
            Cell::opt(num(h, &["fit", "one_way", "per_byte_ms"]).map(|v| by_unit("_ms", v))),
            Cell::opt(num(h, &["fit", "r_squared"]).map(number)),
            Cell::opt(num(h, &["increment", "implied_bits_per_second"]).map(super::markup::rate)),
            Cell::text(text(h, &["no_fit_reason"]).unwrap_or_default()),
        ]);
        let points = list(h, &["sizes"])
            .iter()
            .filter_map(|s| {
                let bytes = num(s, &["sent_bytes"])? + num(s, &["returned_bytes"]).unwrap_or(0.0);
                Some((bytes, num(s, &["min_rtt_ms"])?))
            })
            .collect();
        let curve = Curve::new(Series { name, points }, Mark::Points);
        let fit = (
            num(h, &["fit", "rtt_intercept_ms"]),
            num(h, &["fit", "rtt_slope_ms_per_byte"]),
        );
        curves.push(match fit {
            (Some(a), Some(b)) => curve.with_fit(a, b),
            _ => curve,
        });
    }
    let mut m = Markup::new();
    if t.is_empty() {
        return m;
    }
    m.heading("Hops");
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    let svg = plots::chart(
        Labels {
            title: "minimum round trip",
            x: "bytes crossed (sent + returned)",
            y: "minimum RTT, ms",
        },
        curves,
        true,
    );
    plots::figure(
        &mut m,
        "minimum RTT of each size per hop, with the fitted line fixed + per-byte x bytes",
        svg,
    );
    m
}

/// `wirespeed sim csma`: efficiency against hosts, one curve per packet length (seed 000's
/// figures), and the table of every point. `sim link` has no points: its directions show in
/// the result's tables.
fn sim(result: &Value) -> Markup {
    let points = list(result, &["points"]);
    let mut m = Markup::new();
    if points.is_empty() {
        return scalars("Summary", result);
    }
    let mut t = HtmlTable::new([
        "lengths",
        "hosts",
        "bit rate",
        "packets/s",
        "efficiency",
        "mean delay",
        "excess delay",
        "Jain fairness",
        "collisions per packet",
    ]);
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in points {
        let lengths = p.get("lengths").map_or_else(String::new, |v| scalar("", v));
        let mean = |k: &str| num(p, &[k, "mean"]);
        t.row(vec![
            Cell::text(lengths.clone()),
            Cell::opt(num(p, &["hosts"]).map(number)),
            Cell::opt(mean("bits_per_second").map(super::markup::rate)),
            Cell::opt(mean("packets_per_second").map(number)),
            Cell::opt(mean("utilization").map(|u| format!("{} %", number(u * 100.0)))),
            Cell::opt(mean("delay_mean_seconds").map(super::markup::seconds)),
            Cell::opt(mean("excess_delay_seconds").map(super::markup::seconds)),
            Cell::opt(mean("jain_fairness").map(number)),
            Cell::opt(mean("collisions_per_packet").map(number)),
        ]);
        if let (Some(h), Some(u)) = (num(p, &["hosts"]), mean("utilization")) {
            match curves.iter_mut().find(|c| c.0 == lengths) {
                Some(c) => c.1.push((h, u * 100.0)),
                None => curves.push((lengths, vec![(h, u * 100.0)])),
            }
        }
    }
    m.heading("Points");
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    let curves = curves
        .into_iter()
        .map(|(name, points)| {
            Curve::new(
                Series {
                    name: format!("{name} bytes"),
                    points,
                },
                Mark::LineAndPoints,
            )
        })
        .collect();
    let svg = plots::chart(
        Labels {
            title: "efficiency against hosts",
            x: "hosts",
            y: "efficiency, % of the link",
        },
        curves,
        true,
    );
    plots::figure(
        &mut m,
        "utilisation of the shared channel, per packet length",
        svg,
    );
    m
}

/// `wirespeed reproduce`: the ground truth, and each comparison with its verdicts coloured.
fn reproduce(result: &Value) -> Markup {
    let mut m = Markup::new();
    if let (Some(within), Some(outside)) = (num(result, &["within"]), num(result, &["outside"])) {
        m.lit("<p>")
            .text(&format!(
                "{} within the paper's tolerance, {} outside it",
                number(within),
                number(outside)
            ))
            .lit("</p>\n");
    }
    let truth = list(result, &["ground_truth"]);
    if !truth.is_empty() {
        let mut t = HtmlTable::new(["ground truth", "value"]);
        for g in truth {
            t.row(vec![
                Cell::text(text(g, &["name"]).unwrap_or_default()),
                Cell::text(g.get("value").map_or_else(String::new, |v| scalar("", v))),
            ]);
        }
        m.heading("Ground truth");
        m.push(&t.markup());
    }
    for c in list(result, &["comparisons"]) {
        m.heading(text(c, &["title"]).unwrap_or("comparison"));
        for (key, label) in [("source", "source: "), ("method", "method: ")] {
            if let Some(s) = text(c, &[key]) {
                m.lit("<p class=\"dim\">").text(label).text(s).lit("</p>\n");
            }
        }
        let mut t = HtmlTable::new([
            "quantity",
            "unit",
            "configured",
            "paper",
            "ours",
            "tolerance",
            "verdict",
            "why",
        ]);
        for r in list(c, &["rows"]) {
            let n = |k: &str| Cell::opt(num(r, &[k]).map(number));
            let verdict = text(r, &["verdict"]).unwrap_or("");
            let tone = match verdict {
                "within" | "pass" | "match" => Tone::Good,
                "outside" | "fail" | "mismatch" => Tone::Bad,
                _ => Tone::Neutral,
            };
            t.row(vec![
                Cell::text(text(r, &["quantity"]).unwrap_or_default()),
                Cell::text(text(r, &["unit"]).unwrap_or_default()),
                n("configured"),
                n("paper"),
                n("ours"),
                Cell::text(text(r, &["tolerance"]).unwrap_or_default()),
                Cell::Tone(verdict.replace('_', " "), tone),
                Cell::text(text(r, &["why"]).unwrap_or_default()),
            ]);
        }
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
    }
    let notes = super::strings(result, "notes");
    if !notes.is_empty() {
        m.heading("Notes");
        m.lit("<ul>\n");
        for n in notes {
            m.lit("<li>").text(&n).lit("</li>\n");
        }
        m.lit("</ul>\n");
    }
    m
}

/// `wirespeed autoneg`: what each partner settles on, side by side.
fn autoneg(result: &Value) -> Markup {
    let mut t = HtmlTable::new(["partner", "mode", "speed", "duplex", "how"]);
    for side in ["a", "b"] {
        let Some(p) = result.get(side).filter(|p| p.is_object()) else {
            continue;
        };
        t.row(vec![
            Cell::text(side.to_uppercase()),
            Cell::text(text(p, &["technology"]).unwrap_or_default()),
            Cell::opt(num(p, &["speed_mbps"]).map(|s| format!("{} Mbit/s", number(s)))),
            Cell::text(text(p, &["duplex"]).unwrap_or_default()),
            Cell::text(text(p, &["how"]).unwrap_or_default().replace('_', " ")),
        ]);
    }
    let mut m = Markup::new();
    if !t.is_empty() {
        m.heading("Link partners");
        m.push(&t.markup());
    }
    if let Some(class) = text(result, &["outcome", "class"]) {
        let tone = if class.contains("mismatch") || class.contains("fail") {
            Tone::Bad
        } else {
            Tone::Good
        };
        let mut o = HtmlTable::new(["outcome", "best possible"]);
        o.row(vec![
            Cell::Tone(class.replace('_', " "), tone),
            Cell::text(text(result, &["best_possible"]).unwrap_or_default()),
        ]);
        m.push(&o.markup());
    }
    m
}
