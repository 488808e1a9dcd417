//! The HTML view of a latency run, beside its text view (in `latency.rs`): the table of every
//! probe kind idle against loaded, the round trips over time with the load's phase boundaries
//! marked, and the distribution (CDF) of the UDP echo's round trips idle against loaded, as
//! flent's RRUL plots show them.

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number, rate};
use wirespeed_report::html::plots::{self, Axes};
use wirespeed_report::plot::{Curve, Labels, Mark, Series, outlier_cut};

use crate::latency::{LatencyResult, Phase, ProbeKind, RrResult};

fn ms(v: f64) -> String {
    format!("{} ms", number(v))
}

/// The empirical CDF of `values`: (value, fraction at or below it).
fn cdf(mut values: Vec<f64>) -> Vec<(f64, f64)> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| (v, (i + 1) as f64 / n * 100.0))
        .collect()
}

/// The titles of the plot over time.
pub(crate) const OVER_TIME: Labels<'static> = Labels {
    title: "round trips over time",
    x: "seconds from the start",
    y: "round trip, ms",
};

/// The titles of the CDF.
pub(crate) const CDF: Labels<'static> = Labels {
    title: "UDP echo round trip, cumulative",
    x: "round trip, ms",
    y: "% of probes at or below",
};

/// Where the load ran, from the run's own clock: it started, its first `settle` seconds were
/// left out of the statistics, and it stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct LoadBounds {
    pub started: f64,
    pub settled: f64,
    pub ended: f64,
}

impl LatencyResult {
    /// The load's bounds: the timestamps the run recorded, or for a document written before
    /// it recorded them, the plan's (idle phase, settling, loaded window) it measured against.
    #[doc(hidden)]
    pub fn load_bounds(&self) -> Option<LoadBounds> {
        let started = self.load_started_seconds.unwrap_or(self.idle_seconds);
        let ended = self
            .load_ended_seconds
            .unwrap_or(self.idle_seconds + self.settle_seconds + self.loaded_seconds);
        let settled = started + self.settle_seconds;
        let sane = [started, settled, ended]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0);
        (sane && ended > started).then_some(LoadBounds {
            started,
            settled,
            ended,
        })
    }

    /// The phase a probe sent `at` seconds into the run belongs to, as the statistics count it.
    #[doc(hidden)]
    pub fn phase_at(&self, at: f64) -> Option<Phase> {
        let b = self.load_bounds()?;
        Some(if at < self.idle_seconds.min(b.started) {
            Phase::Idle
        } else if at < b.settled {
            Phase::Settling
        } else if at < b.ended {
            Phase::Loaded
        } else {
            Phase::After
        })
    }

    /// Every probe's round trip over time, one scatter per kind, the load's span as a box from
    /// its start to its end, and a line where the statistics' loaded window begins. The box
    /// reaches the top of the bulk of the round trips (a far outlier is cut off the axis).
    #[doc(hidden)]
    pub fn over_time_curves(&self) -> Vec<Curve> {
        let kinds = [
            ProbeKind::UdpEcho,
            ProbeKind::RrKeptConnection,
            ProbeKind::TcpConnect,
        ];
        let mut curves: Vec<Curve> = kinds
            .iter()
            .map(|&k| {
                let points = self
                    .samples
                    .iter()
                    .filter(|s| s.kind == k)
                    .filter_map(|s| Some((s.at_seconds, s.rtt_ms?)))
                    .collect();
                Curve::new(
                    Series {
                        name: k.label().to_string(),
                        points,
                    },
                    Mark::Points,
                )
            })
            .collect();
        let rtts: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| kinds.contains(&s.kind))
            .filter_map(|s| s.rtt_ms)
            .filter(|v| v.is_finite())
            .collect();
        let top = outlier_cut(&rtts).unwrap_or_else(|| rtts.iter().copied().fold(0.0, f64::max));
        if let Some(b) = self.load_bounds().filter(|_| top > 0.0) {
            curves.push(Curve::new(
                Series {
                    name: format!("load on, {} to {} s", number(b.started), number(b.ended)),
                    points: vec![
                        (b.started, 0.0),
                        (b.started, top),
                        (b.ended, top),
                        (b.ended, 0.0),
                    ],
                },
                Mark::Line,
            ));
            curves.push(Curve::new(
                Series {
                    name: format!("statistics from {} s", number(b.settled)),
                    points: vec![(b.settled, 0.0), (b.settled, top)],
                },
                Mark::Line,
            ));
        }
        curves
    }

    /// The UDP echo's round trips as cumulative distributions, idle and loaded.
    pub(crate) fn cdf_curves(&self) -> Vec<Curve> {
        let udp = |phase: Phase| {
            cdf(self
                .samples
                .iter()
                .filter(|s| {
                    s.kind == ProbeKind::UdpEcho && self.phase_at(s.at_seconds) == Some(phase)
                })
                .filter_map(|s| s.rtt_ms)
                .collect())
        };
        vec![
            Curve::new(
                Series {
                    name: "idle".into(),
                    points: udp(Phase::Idle),
                },
                Mark::Line,
            ),
            Curve::new(
                Series {
                    name: "loaded".into(),
                    points: udp(Phase::Loaded),
                },
                Mark::Line,
            ),
        ]
    }

    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        if let Some(why) = &self.partial_reason {
            m.note(&format!("partial result: {why}"));
        }
        let mut t = HtmlTable::new([
            "probe",
            "idle p50",
            "loaded p50",
            "p90",
            "p99",
            "max",
            "increase of p50",
            "lost",
        ]);
        for k in &self.kinds {
            t.row(vec![
                Cell::text(k.kind.label()),
                Cell::num(ms(k.idle.p50_ms)),
                Cell::num(ms(k.loaded.p50_ms)),
                Cell::num(ms(k.loaded.p90_ms)),
                Cell::num(ms(k.loaded.p99_ms)),
                Cell::num(ms(k.loaded.max_ms)),
                Cell::num(ms(k.increase_p50_ms)),
                Cell::num(format!("{}/{}", k.loaded.lost, k.loaded.probes)),
            ]);
        }
        m.heading("Round trips, idle and loaded");
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
        let mut s = HtmlTable::new([
            "load up",
            "load down",
            "RPM idle",
            "RPM loaded",
            "probe load",
        ]);
        let r = |v: Option<f64>| Cell::opt(v.map(rate));
        s.row(vec![
            r(self.upload_bits_per_second),
            r(self.download_bits_per_second),
            Cell::num(number(self.rpm_idle.round())),
            Cell::num(number(self.rpm_loaded.round())),
            Cell::num(format!(
                "{} out, {} back ({} % of the {})",
                rate(self.probe_out_bits_per_second),
                rate(self.probe_back_bits_per_second),
                number(
                    self.probe_share_of_link_percent
                        .unwrap_or(self.probe_share_percent)
                ),
                if self.probe_share_of_link_percent.is_some() {
                    "link"
                } else {
                    "load"
                }
            )),
        ]);
        m.push(&s.markup());
        if !self.queues.is_empty() {
            let mut q = HtmlTable::new([
                "queue",
                "mean",
                "max",
                "mean ms",
                "probes wait in it",
                "measured by",
                "shrink it",
            ]);
            let bytes = |v: f64| Cell::num(crate::latency::queues::bytes_text(v));
            for share in &self.queues {
                q.row(vec![
                    Cell::text(share.location.as_str()),
                    bytes(share.mean_bytes),
                    bytes(share.max_bytes),
                    Cell::num(ms(share.mean_ms)),
                    Cell::text(if share.probes_wait_here { "yes" } else { "no" }),
                    Cell::text(share.source.as_str()),
                    Cell::text(share.remedy.as_str()),
                ]);
            }
            m.heading("Where the load's bytes waited");
            m.lit("<div class=\"wide\">")
                .push(&q.markup())
                .lit("</div>");
        }
        let svg = plots::chart_with(
            OVER_TIME,
            self.over_time_curves(),
            Axes {
                x_from_zero: true,
                y_cut_outliers: Some("ms"),
                ..Axes::default()
            },
        );
        m.heading("Over time");
        plots::figure(
            &mut m,
            "every probe's round trip; the box spans the load as this run's clock saw it start \
             and stop, the line where its loaded statistics begin (the first moments, slow \
             start, left out); a round trip far above the rest sits on the top edge as a triangle",
            svg,
        );
        let svg = plots::chart_with(
            CDF,
            self.cdf_curves(),
            Axes {
                x_log_when_wide: true,
                ..Axes::default()
            },
        );
        m.heading("Distribution");
        plots::figure(
            &mut m,
            "the CDF of the UDP echo's round trips, idle against loaded (a log axis when they \
             differ by decades)",
            svg,
        );
        m
    }
    /// The figures several runs are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        let mut out = Vec::new();
        if let Some(u) = self.kinds.iter().find(|k| k.kind == ProbeKind::UdpEcho) {
            out.push(("UDP echo idle p50".into(), "_ms", u.idle.p50_ms));
            out.push(("UDP echo loaded p50".into(), "_ms", u.loaded.p50_ms));
            out.push(("UDP echo loaded p99".into(), "_ms", u.loaded.p99_ms));
        }
        out.push(("RPM loaded".into(), "", self.rpm_loaded));
        out
    }
}

impl RrResult {
    /// The table of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut t = HtmlTable::new([
            "test",
            "transactions/s",
            "p50",
            "p90",
            "p99",
            "max",
            "connect p50",
        ]);
        t.row(vec![
            Cell::text(if self.new_connection {
                "TCP_CRR"
            } else {
                "TCP_RR"
            }),
            Cell::num(number(self.transactions_per_second.round())),
            Cell::num(ms(self.round_trip.p50_ms)),
            Cell::num(ms(self.round_trip.p90_ms)),
            Cell::num(ms(self.round_trip.p99_ms)),
            Cell::num(ms(self.round_trip.max_ms)),
            Cell::opt(self.connect.as_ref().map(|c| ms(c.p50_ms))),
        ]);
        let mut m = Markup::new();
        m.heading("Request/response");
        m.push(&t.markup());
        m
    }

    /// The figures several runs are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        vec![
            ("transactions/s".into(), "", self.transactions_per_second),
            ("round trip p50".into(), "_ms", self.round_trip.p50_ms),
        ]
    }
}

/// `--plot DIR`: the round trips over time and the CDF, as the report draws them.
pub(super) fn write_plots(dir: &std::path::Path, r: &LatencyResult) -> anyhow::Result<()> {
    use anyhow::Context;
    use wirespeed_report::plot::Plot;
    std::fs::create_dir_all(dir).with_context(|| format!("--plot {}", dir.display()))?;
    for (name, labels, curves, from_zero) in [
        (
            "latency-over-time.svg",
            crate::latency::html::OVER_TIME,
            r.over_time_curves(),
            true,
        ),
        (
            "latency-cdf.svg",
            crate::latency::html::CDF,
            r.cdf_curves(),
            false,
        ),
    ] {
        let curves: Vec<_> = curves
            .into_iter()
            .filter(|c| !c.series.points.is_empty())
            .collect();
        if curves.is_empty() {
            continue;
        }
        let mut plot = curves.into_iter().fold(Plot::new(labels), Plot::curve);
        if from_zero {
            plot = plot.x_from_zero();
        }
        let svg = plot
            .svg()
            .map_err(|e| anyhow::anyhow!("drawing {name}: {e}"))?;
        let path = dir.join(name);
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
