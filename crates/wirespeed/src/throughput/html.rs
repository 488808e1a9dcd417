//! The HTML view of a `tcp`/`udp` result, beside its text view (`throughput_text.rs`): the
//! totals each way, CPU, `--repeat` statistics, every stream, and the rate of every stream
//! over time. `wirespeed report` decodes a saved document into [`ThroughputResult`] and asks
//! it for this view; a cut-off `--json-stream` (intervals, no final document) gets the plot.

use wirespeed_model::RateFormat;
use wirespeed_net::report::{Interval, Role};
use wirespeed_net::spec::Flow;
use wirespeed_net::summary::Sum;
use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, by_unit, number, rate, seconds};
use wirespeed_report::html::plots::{self, MAX_CURVES};
use wirespeed_report::plot::{Curve, Labels, Mark, Series};

use crate::throughput::ThroughputResult;

pub(crate) fn flow_name(flow: Flow) -> &'static str {
    match flow {
        Flow::Upload => "upload",
        Flow::Download => "download",
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Sender => "sender",
        Role::Receiver => "receiver",
    }
}

impl ThroughputResult {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        if let Some(e) = &self.error {
            m.note(&format!("the test ended early: {e}"));
        }
        if let Some(why) = self.partial_reason.as_ref().filter(|_| self.partial) {
            m.note(&format!("partial result: {why}"));
        }
        m.push(&self.totals());
        m.push(&self.repeat_html());
        m.push(&self.streams_html());
        m.push(&intervals_plot(&self.intervals));
        m
    }

    /// The figures several runs are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        let end = &self.end;
        let cpu = &end.cpu_utilization_percent;
        let mut out = vec![
            (
                "received rate".into(),
                "bits_per_second",
                end.sum_received.bits_per_second,
            ),
            (
                "sent rate".into(),
                "bits_per_second",
                end.sum_sent.bits_per_second,
            ),
        ];
        let optional = [
            (
                "retransmits",
                "",
                end.sum_sent.retransmits.map(|r| r as f64),
            ),
            ("lost", "lost_percent", end.sum_received.lost_percent),
            ("jitter", "jitter_seconds", end.sum_received.jitter_seconds),
            ("CPU here", "host_percent", Some(cpu.host_total)),
            ("CPU at the agent", "remote_percent", cpu.remote_total),
        ];
        out.extend(
            optional
                .into_iter()
                .filter_map(|(label, unit, v)| Some((label.to_string(), unit, v?))),
        );
        out
    }

    fn totals(&self) -> Markup {
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
        let end = &self.end;
        let sums: [(Option<&Sum>, &str); 4] = [
            (Some(&end.sum_sent), "sent"),
            (Some(&end.sum_received), "received"),
            (end.sum_sent_bidir_reverse.as_ref(), "sent (reverse)"),
            (
                end.sum_received_bidir_reverse.as_ref(),
                "received (reverse)",
            ),
        ];
        for (sum, label) in sums {
            let Some(s) = sum else { continue };
            t.row(vec![
                Cell::text(label),
                Cell::num(number(s.bytes as f64)),
                Cell::num(seconds(s.seconds)),
                Cell::num(rate(s.bits_per_second)),
                Cell::opt(s.retransmits.map(|r| number(r as f64))),
                Cell::opt(s.datagrams.map(|d| number(d as f64))),
                Cell::opt(s.lost_percent.map(|p| format!("{} %", number(p)))),
                Cell::opt(s.jitter_seconds.map(seconds)),
                Cell::opt(s.out_of_order.map(|o| number(o as f64))),
            ]);
        }
        let mut m = Markup::new();
        m.heading("Totals");
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
        let cpu = &end.cpu_utilization_percent;
        let mut c = HtmlTable::new(["CPU", "percent of one core"]);
        for (label, v) in [
            ("host total", Some(cpu.host_total)),
            ("host user", Some(cpu.host_user)),
            ("host system", Some(cpu.host_system)),
            ("remote total", cpu.remote_total),
            ("remote user", cpu.remote_user),
            ("remote system", cpu.remote_system),
        ] {
            if let Some(v) = v {
                c.row(vec![Cell::text(label), Cell::num(number(v))]);
            }
        }
        m.push(&c.markup());
        m
    }

    fn repeat_html(&self) -> Markup {
        let mut m = Markup::new();
        let Some(r) = &self.repeat else {
            return m;
        };
        m.heading(&format!(
            "{} runs (--repeat): received rate",
            r.values.len()
        ));
        let mut t = HtmlTable::new([
            "median",
            "minimum",
            "maximum",
            "95% interval of the median",
            "spread",
        ]);
        t.row(vec![
            Cell::num(rate(r.median)),
            Cell::num(rate(r.min)),
            Cell::num(rate(r.max)),
            Cell::num(format!("{} .. {}", rate(r.ci95_low), rate(r.ci95_high))),
            Cell::num(format!("{} %", number(r.spread_percent))),
        ]);
        m.push(&t.markup());
        let mut runs = HtmlTable::new(["run", "received rate"]);
        for (i, v) in r.values.iter().enumerate() {
            runs.row(vec![Cell::num((i + 1).to_string()), Cell::num(rate(*v))]);
        }
        m.push(&runs.markup());
        m
    }

    fn streams_html(&self) -> Markup {
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
        for s in &self.end.streams {
            let sender = s.sender.as_ref();
            let info = sender.and_then(|s| s.tcp_info.as_ref());
            t.row(vec![
                Cell::num(s.id.to_string()),
                Cell::text(flow_name(s.flow)),
                Cell::opt(s.receiver.as_ref().map(|r| number(r.bytes as f64))),
                Cell::opt(
                    sender
                        .filter(|s| s.seconds > 0.0)
                        .map(|s| rate(s.bytes as f64 * 8.0 / s.seconds)),
                ),
                Cell::opt(info.map(|i| number(f64::from(i.retransmits)))),
                Cell::opt(info.map(|i| seconds(i.rtt_seconds))),
                Cell::opt(info.map(|i| format!("{} seg", i.cwnd_segments))),
                Cell::opt(
                    sender.map(|s| by_unit("bytes", s.socket.send_buffer_granted_bytes as f64)),
                ),
                Cell::opt(
                    s.receiver
                        .as_ref()
                        .map(|r| by_unit("bytes", r.socket.receive_buffer_granted_bytes as f64)),
                ),
                Cell::text(
                    sender
                        .and_then(|s| s.socket.congestion.clone())
                        .unwrap_or_default(),
                ),
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
}

/// The rate of every stream over time (one curve per stream and role, and the sums when
/// there are several streams).
pub(crate) fn intervals_plot(intervals: &[Interval]) -> Markup {
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    // Each interval is a step: its rate held from its start to its end.
    let mut add =
        |name: String, step: [(f64, f64); 2]| match curves.iter_mut().find(|c| c.0 == name) {
            Some(c) => c.1.extend(step),
            None => curves.push((name, step.to_vec())),
        };
    for iv in intervals {
        let (t0, t1) = (iv.start_seconds, iv.end_seconds);
        for s in &iv.streams {
            let name = format!(
                "stream {} {} {}",
                s.id,
                flow_name(s.flow),
                role_name(s.role)
            );
            add(name, [(t0, s.bits_per_second), (t1, s.bits_per_second)]);
        }
        if iv.streams.len() > 1 {
            for (sum, name) in [
                (&iv.sum_sent, "sum sent"),
                (&iv.sum_received, "sum received"),
            ] {
                if let Some(s) = sum {
                    add(
                        name.to_string(),
                        [(t0, s.bits_per_second), (t1, s.bits_per_second)],
                    );
                }
            }
        }
    }
    let mut m = Markup::new();
    if curves.is_empty() {
        return m;
    }
    let peak = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let shown = curves.len().min(MAX_CURVES);
    let unit = RateFormat::Adaptive.unit(peak);
    let total = curves.len();
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
