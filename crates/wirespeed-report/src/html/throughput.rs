//! `wirespeed tcp` and `udp` documents (iperf3's layout: `start`, `intervals[]`, `end`): the
//! totals each way, CPU, every stream, `--repeat` statistics, and the rate of every stream over
//! time.

use serde_json::Value;
use wirespeed_model::RateFormat;

use crate::plot::{Curve, Labels, Mark, Series};

use super::markup::{Cell, HtmlTable, Markup, by_unit, number, rate, seconds};
use super::plots::{self, MAX_CURVES};
use super::sections::{list, num, text};

/// The throughput section of a `tcp`/`udp` document.
pub(crate) fn section(doc: &Value) -> Markup {
    let result = doc.get("result").unwrap_or(&Value::Null);
    let mut m = Markup::new();
    if let Some(e) = text(result, &["error"]) {
        m.note(&format!("the test ended early: {e}"));
    }
    m.push(&totals(result));
    m.push(&repeat(result));
    m.push(&streams(result));
    m.push(&intervals_plot(result));
    m
}

fn totals(result: &Value) -> Markup {
    let mut t = HtmlTable::new([
        "direction",
        "bytes",
        "seconds",
        "bit rate",
        "retransmits",
        "datagrams",
        "lost",
        "jitter",
        "out of order",
    ]);
    let end = result.get("end").unwrap_or(&Value::Null);
    for (key, label) in [
        ("sum_sent", "sent"),
        ("sum_received", "received"),
        ("sum_sent_bidir_reverse", "sent (reverse)"),
        ("sum_received_bidir_reverse", "received (reverse)"),
    ] {
        let Some(s) = end.get(key).filter(|s| s.is_object()) else {
            continue;
        };
        let f = |k: &str| num(s, &[k]);
        t.row(vec![
            Cell::text(label),
            Cell::opt(f("bytes").map(number)),
            Cell::opt(f("seconds").map(seconds)),
            Cell::opt(f("bits_per_second").map(rate)),
            Cell::opt(f("retransmits").map(number)),
            Cell::opt(f("datagrams").map(number)),
            Cell::opt(f("lost_percent").map(|p| format!("{} %", number(p)))),
            Cell::opt(f("jitter_seconds").map(seconds)),
            Cell::opt(f("out_of_order").map(number)),
        ]);
    }
    let mut m = Markup::new();
    if t.is_empty() {
        return m;
    }
    m.heading("Totals");
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    if let Some(Value::Object(cpu)) = end.get("cpu_utilization_percent") {
        let mut c = HtmlTable::new(["CPU", "percent of one core"]);
        for (k, v) in cpu {
            if let Some(v) = v.as_f64() {
                c.row(vec![Cell::text(k.replace('_', " ")), Cell::num(number(v))]);
            }
        }
        m.push(&c.markup());
    }
    m
}

fn repeat(result: &Value) -> Markup {
    let mut m = Markup::new();
    let Some(r) = result.get("repeat").filter(|r| r.is_object()) else {
        return m;
    };
    let values = list(r, &["values"]);
    m.heading(&format!("{} runs (--repeat): received rate", values.len()));
    let mut t = HtmlTable::new([
        "median",
        "minimum",
        "maximum",
        "95% interval of the median",
        "spread",
    ]);
    let f = |k: &str| num(r, &[k]);
    let interval = match (f("ci95_low"), f("ci95_high")) {
        (Some(lo), Some(hi)) => Some(format!("{} .. {}", rate(lo), rate(hi))),
        _ => None,
    };
    t.row(vec![
        Cell::opt(f("median").map(rate)),
        Cell::opt(f("min").map(rate)),
        Cell::opt(f("max").map(rate)),
        Cell::opt(interval),
        Cell::opt(f("spread_percent").map(|p| format!("{} %", number(p)))),
    ]);
    m.push(&t.markup());
    let mut runs = HtmlTable::new(["run", "received rate"]);
    for (i, v) in values.iter().enumerate() {
        runs.row(vec![
            Cell::num((i + 1).to_string()),
            Cell::opt(v.as_f64().map(rate)),
        ]);
    }
    m.push(&runs.markup());
    m
}

fn streams(result: &Value) -> Markup {
    let mut t = HtmlTable::new([
        "stream",
        "flow",
        "bytes received",
        "sender rate",
        "retransmits",
        "smoothed RTT",
        "cwnd",
        "send buffer granted",
        "receive buffer granted",
        "congestion",
    ]);
    for s in list(result, &["end", "streams"]) {
        let sender = s.get("sender").unwrap_or(&Value::Null);
        let receiver = s.get("receiver").unwrap_or(&Value::Null);
        let sender_rate = match (num(sender, &["bytes"]), num(sender, &["seconds"])) {
            (Some(b), Some(secs)) if secs > 0.0 => Some(rate(b * 8.0 / secs)),
            _ => None,
        };
        t.row(vec![
            Cell::opt(num(s, &["id"]).map(number)),
            Cell::text(text(s, &["flow"]).unwrap_or_default()),
            Cell::opt(num(receiver, &["bytes"]).map(number)),
            Cell::opt(sender_rate),
            Cell::opt(num(sender, &["tcp_info", "retransmits"]).map(number)),
            Cell::opt(num(sender, &["tcp_info", "rtt_seconds"]).map(seconds)),
            Cell::opt(
                num(sender, &["tcp_info", "cwnd_segments"]).map(|c| format!("{} seg", number(c))),
            ),
            Cell::opt(
                num(sender, &["socket", "send_buffer_granted_bytes"]).map(|b| by_unit("bytes", b)),
            ),
            Cell::opt(
                num(receiver, &["socket", "receive_buffer_granted_bytes"])
                    .map(|b| by_unit("bytes", b)),
            ),
            Cell::text(text(sender, &["socket", "congestion"]).unwrap_or_default()),
        ]);
    }
    let mut m = Markup::new();
    if !t.is_empty() {
        m.heading("Streams");
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
    }
    m
}

/// The rate of every stream over time (one curve per stream and role, and the sums when
/// there are several streams), from `intervals[]`.
pub(crate) fn intervals_plot(result: &Value) -> Markup {
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    // Each interval is a step: its rate held from its start to its end.
    let mut add =
        |name: String, step: [(f64, f64); 2]| match curves.iter_mut().find(|c| c.0 == name) {
            Some(c) => c.1.extend(step),
            None => curves.push((name, step.to_vec())),
        };
    let intervals = list(result, &["intervals"]);
    for iv in intervals {
        let (Some(t0), Some(t1)) = (num(iv, &["start_seconds"]), num(iv, &["end_seconds"])) else {
            continue;
        };
        let streams = list(iv, &["streams"]);
        for s in streams {
            if let Some(bps) = num(s, &["bits_per_second"]) {
                let id = num(s, &["id"]).map_or_else(|| "?".into(), number);
                let role = text(s, &["role"]).unwrap_or("stream");
                let flow = text(s, &["flow"])
                    .map(|f| format!(" {f}"))
                    .unwrap_or_default();
                add(format!("stream {id}{flow} {role}"), [(t0, bps), (t1, bps)]);
            }
        }
        if streams.len() > 1 {
            for (key, name) in [("sum_sent", "sum sent"), ("sum_received", "sum received")] {
                if let Some(bps) = num(iv, &[key, "bits_per_second"]) {
                    add(name.to_string(), [(t0, bps), (t1, bps)]);
                }
            }
        }
    }
    let mut m = Markup::new();
    let peak = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    if curves.is_empty() {
        return m;
    }
    let shown = curves.len().min(MAX_CURVES);
    let unit = RateFormat::Adaptive.unit(peak);
    let curves: Vec<Curve> = curves
        .into_iter()
        .map(|(name, points)| {
            let points = points
                .into_iter()
                .map(|(t, bps)| (t, scale(bps, peak)))
                .collect();
            Curve::new(Series { name, points }, Mark::Line)
        })
        .collect();
    let total = curves.len();
    let svg = plots::chart(
        Labels {
            title: "rate over time",
            x: "seconds from the start",
            y: unit,
        },
        curves,
        true,
    );
    m.heading("Rate over time");
    plots::figure(
        &mut m,
        &format!("the rate of each -i interval, held across it, per stream ({unit})"),
        svg,
    );
    if total > shown {
        m.note(&format!(
            "{shown} of {total} curves drawn; the tables and the JSON have every stream"
        ));
    }
    m
}

/// `bps` in the unit [`RateFormat::Adaptive`] picks for the plot's peak.
fn scale(bps: f64, peak: f64) -> f64 {
    let unit_bps = RateFormat::Adaptive.value(peak);
    if unit_bps > 0.0 && peak > 0.0 {
        bps * unit_bps / peak
    } else {
        bps
    }
}
