//! How a sweep prints: the seed's table for the diagonal, the matrix, verdicts; CSV; SVG.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::sweep::{
    Anomaly, Axis, PlanEstimate, PlateauLimit, RoundTripBasis, RunRecord, SweepAnalysis,
};
use wirespeed_model::units::{ByteSize, significant};
use wirespeed_report::plot::{Labels, Series, heatmap_svg, line_plot_svg};
use wirespeed_report::{Csv, Render, Table};

use super::SweepPlan;

/// The sweep's result document body.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SweepReport {
    pub(crate) plan: SweepPlan,
    /// Where the runs are kept.
    pub(crate) results_file: String,
    /// True when every planned run finished.
    pub(crate) complete: bool,
    pub(crate) runs_planned: usize,
    pub(crate) runs: Vec<RunRecord>,
    pub(crate) ceiling_bytes_per_second: Option<f64>,
    /// Where the ceiling comes from (`--link-rate`, or a lab's configured route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ceiling_source: Option<String>,
    /// The plan's duration as estimated before its first run (a new sweep only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) estimate: Option<PlanEstimate>,
    pub(crate) analysis: SweepAnalysis,
    #[serde(skip)]
    pub(crate) rate_format: RateFormat,
}

impl SweepReport {
    /// The seed's unit, KB/s of 1024 bytes, while the fastest run fits in five digits of it
    /// (a 10 Mbit/s link: about 1,100); faster paths in MiB/s or GiB/s, one unit for the whole
    /// report so that its figures compare at a glance.
    fn adaptive_scale(&self) -> (&'static str, f64) {
        let fastest = self
            .runs
            .iter()
            .map(RunRecord::bytes_per_second)
            .filter(|b| b.is_finite())
            .fold(0.0, f64::max);
        const KIB: f64 = 1024.0;
        if fastest < 1e5 * KIB {
            ("KiB/s", KIB)
        } else if fastest < 1e5 * KIB * KIB {
            ("MiB/s", KIB * KIB)
        } else {
            ("GiB/s", KIB * KIB * KIB)
        }
    }

    fn rate(&self, bytes_per_second: f64) -> String {
        match self.rate_format {
            RateFormat::Adaptive => {
                let (_, size) = self.adaptive_scale();
                let v = bytes_per_second / size;
                if size == 1024.0 {
                    format!("{v:.0}")
                } else {
                    significant(v, 4)
                }
            }
            f => significant(f.value(bytes_per_second * 8.0), 4),
        }
    }

    fn rate_unit(&self) -> &'static str {
        match self.rate_format {
            RateFormat::Adaptive => self.adaptive_scale().0,
            f => f.unit(1.0),
        }
    }

    fn label(axis: &Axis, index: usize, mss: u64) -> String {
        axis.0.get(index).map_or_else(String::new, |b| {
            let bytes = b.bytes(mss);
            match b {
                wirespeed_model::sweep::BufferSize::Packets(n) => {
                    format!("{n}p ({})", compact(bytes))
                }
                wirespeed_model::sweep::BufferSize::Bytes(_) => compact(bytes),
            }
        })
    }

    /// Medians as `values[send][receive]`.
    fn matrix(&self) -> Vec<Vec<Option<f64>>> {
        let p = &self.plan;
        (0..p.snd.0.len())
            .map(|s| {
                (0..p.rcv.0.len())
                    .map(|r| {
                        self.analysis
                            .cells
                            .iter()
                            .find(|c| c.snd_index == s && c.rcv_index == r)
                            .map(|c| c.median_bytes_per_second)
                    })
                    .collect()
            })
            .collect()
    }

    /// Verdict sentences, for the human output and the document's `verdicts`.
    pub(crate) fn verdicts(&self) -> Vec<String> {
        let a = &self.analysis;
        let p = &self.plan;
        let mut out = Vec::new();
        if let Some(plateau) = a.plateau_bytes_per_second {
            let of_ceiling = self
                .ceiling_bytes_per_second
                .map(|c| {
                    format!(
                        " ({:.0}% of the {} {} ceiling)",
                        100.0 * plateau / c,
                        self.rate(c),
                        self.rate_unit()
                    )
                })
                .unwrap_or_default();
            out.push(format!(
                "plateau {} {}{of_ceiling}",
                self.rate(plateau),
                self.rate_unit()
            ));
        }
        if let Some(b) = a.reaches_90_percent_at {
            out.push(format!(
                "the diagonal reaches 90% of its plateau at {} per end",
                compact(b.bytes(p.mss_bytes))
            ));
        } else if a.diagonal.is_empty() && a.plateau_bytes_per_second.is_some() {
            out.push(
                "no buffer size is on both axes, so there is no diagonal: the plateau is the best cell of the matrix (give --rcv the sizes of --snd for the seed's table)"
                    .to_string(),
            );
        }
        if let Some(source) = &self.ceiling_source
            && let Some(c) = self.ceiling_bytes_per_second
        {
            out.push(format!(
                "the path's ceiling is {} {}: {source}; window / RTT is capped by it",
                self.rate(c),
                self.rate_unit()
            ));
        }
        if let Some(ratio) = a.window_per_buffer_byte {
            out.push(format!(
                "the axis is the buffer asked of SO_SNDBUF and SO_RCVBUF (1 packet = {} bytes); \
                 the window the sender saw was {ratio:.2} x the receive buffer asked (median \
                 over the cells), in segments in the table's window column",
                p.mss_bytes
            ));
        }
        if let Some(bdp) = &a.bdp {
            let knee = a.reaches_90_percent_at.map_or(String::new(), |b| {
                let ratio = b.bytes(p.mss_bytes) as f64 / bdp.bytes.max(1.0);
                format!(
                    "; the knee at {} per end is {ratio:.1}x it{}",
                    compact(b.bytes(p.mss_bytes)),
                    knee_reason(ratio)
                )
            });
            let lowest = a
                .round_trip
                .and_then(|r| r.lowest_seen_seconds)
                .map_or(String::new(), round_trip);
            let rtt_words = match bdp.basis {
                RoundTripBasis::Path => format!(
                    "a full segment's round trip {}, computed from the configured path \
                     (the lowest the kernel saw, a small packet's: {lowest})",
                    round_trip(bdp.rtt_seconds)
                ),
                RoundTripBasis::LowestSeenPlusSegment { segment_seconds } => format!(
                    "a full segment's round trip {}: the lowest the kernel saw, {lowest}, \
                     plus {} to serialize a full segment at the link rate",
                    round_trip(bdp.rtt_seconds),
                    round_trip(segment_seconds)
                ),
                RoundTripBasis::LowestSeen => format!(
                    "the lowest round trip the kernel saw, {}, a small packet's: short of \
                     a full segment's by its serialization (give --link-rate)",
                    round_trip(bdp.rtt_seconds)
                ),
            };
            out.push(format!(
                "the path's bandwidth-delay product is {} ({} {} {} x {rtt_words}): with less \
                 window than that the window, not the path, sets the rate{knee}",
                compact(bdp.bytes.round() as u64),
                if bdp.rate_is_ceiling {
                    "ceiling"
                } else {
                    "plateau"
                },
                self.rate(bdp.rate_bytes_per_second),
                self.rate_unit(),
            ));
        }
        out.push(
            match a.limit {
                PlateauLimit::Link => "the plateau is limited by the link: it is within 10% of the envelope ceiling",
                PlateauLimit::Cpu => "the plateau is limited by CPU: an end used 90% or more of a core at the best buffers",
                PlateauLimit::Other => {
                    "the plateau is below 90% of the ceiling with no CPU saturated: look at the path, the NICs or the peer"
                }
                PlateauLimit::Unknown => "no link rate given (--link-rate) and not in a wirespeed lab, so no ceiling to compare with; no CPU saturated",
            }
            .to_string(),
        );
        let describe = |kind: &str, x: &Anomaly| {
            format!(
                "{kind} at send {} x receive {}: {} {} where its neighbours suggest {}; {}",
                Self::label(&p.snd, x.snd_index, p.mss_bytes),
                Self::label(&p.rcv, x.rcv_index, p.mss_bytes),
                self.rate(x.bytes_per_second),
                self.rate_unit(),
                self.rate(x.expected_bytes_per_second),
                x.explanation
            )
        };
        out.extend(a.notches.iter().map(|x| describe("notch", x)));
        out.extend(a.pathological.iter().map(|x| describe("collapse", x)));
        out
    }

    /// One row per cell.
    pub(crate) fn csv(&self) -> String {
        let p = &self.plan;
        let mut csv = Csv::new([
            "snd_buffer",
            "rcv_buffer",
            "snd_requested_bytes",
            "rcv_requested_bytes",
            "snd_granted_bytes",
            "rcv_granted_bytes",
            "runs",
            "median_bytes_per_second",
            "min_bytes_per_second",
            "max_bytes_per_second",
            "percent_of_ceiling",
            "predicted_bytes_per_second",
        ]);
        let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
        for c in &self.analysis.cells {
            csv.row([
                p.snd.0[c.snd_index].to_string(),
                p.rcv.0[c.rcv_index].to_string(),
                p.snd.0[c.snd_index].bytes(p.mss_bytes).to_string(),
                p.rcv.0[c.rcv_index].bytes(p.mss_bytes).to_string(),
                c.snd_granted_bytes.to_string(),
                c.rcv_granted_bytes.to_string(),
                c.runs.to_string(),
                format!("{:.1}", c.median_bytes_per_second),
                format!("{:.1}", c.min_bytes_per_second),
                format!("{:.1}", c.max_bytes_per_second),
                opt(c.percent_of_ceiling),
                opt(c.predicted_bytes_per_second),
            ]);
        }
        csv.to_string()
    }

    pub(crate) fn heatmap(&self) -> anyhow::Result<String> {
        let p = &self.plan;
        let scale = |v: f64| v / 1024.0;
        let values: Vec<Vec<Option<f64>>> = self
            .matrix()
            .into_iter()
            .map(|row| row.into_iter().map(|v| v.map(scale)).collect())
            .collect();
        let (cols, x) = super::html::buffer_axis(&p.rcv, p.mss_bytes, "receive buffer");
        let (rows, y) = super::html::buffer_axis(&p.snd, p.mss_bytes, "send buffer");
        Ok(heatmap_svg(
            Labels {
                title: "task-to-task KiB/s (median)",
                x: &x,
                y: &y,
            },
            &cols,
            &rows,
            &values,
        )?)
    }

    pub(crate) fn diagonal_plot(&self) -> anyhow::Result<String> {
        let mss = self.plan.mss_bytes;
        let points: Vec<(f64, f64)> = self
            .analysis
            .diagonal
            .iter()
            .map(|row| {
                (
                    row.buffer.bytes(mss) as f64 / mss as f64,
                    row.task_to_task_kib_per_second,
                )
            })
            .collect();
        let mut series = vec![Series {
            name: "measured (median)".into(),
            points,
        }];
        if let Some(c) = self.ceiling_bytes_per_second
            && let (Some(first), Some(last)) = (series[0].points.first(), series[0].points.last())
        {
            series.push(Series {
                name: "envelope ceiling".into(),
                points: vec![(first.0, c / 1024.0), (last.0, c / 1024.0)],
            });
        }
        Ok(line_plot_svg(
            Labels {
                title: "send = receive buffer",
                x: &format!("socket buffer (packets of {mss} bytes)"),
                y: "KiB/s",
            },
            &series,
        )?)
    }
}

/// `16 KiB`, `1460 B`, `8 MiB` without the space, for narrow columns.
/// A round trip in the unit that shows it: loopback's tens of microseconds printed as
/// "0.00 ms" in a fixed millisecond format.
pub(super) fn round_trip(seconds: f64) -> String {
    if seconds > 0.0 && seconds < 1e-3 {
        format!("{} us", significant(seconds * 1e6, 3))
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}

fn compact(bytes: u64) -> String {
    ByteSize::from_bytes(bytes).to_string().replace(' ', "")
}

impl Render for SweepReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let p = &self.plan;
        let a = &self.analysis;
        let unit = self.rate_unit();
        writeln!(
            out,
            "sweep of {}: {} runs done of {} ({} send x {} receive buffers x {} reps), seed {}, 1 packet = {} bytes",
            p.target,
            self.runs.len(),
            self.runs_planned,
            p.snd.0.len(),
            p.rcv.0.len(),
            p.reps,
            p.seed,
            p.mss_bytes
        )?;
        if !a.diagonal.is_empty() {
            writeln!(out, "\nsend = receive buffer (the seed's table):")?;
            let mut t = Table::new(vec![
                "buffer asked".to_string(),
                format!("task to task {unit}"),
                "wire Mbit/s".to_string(),
                "% of ceiling".to_string(),
                format!("window/RTT {unit}"),
                "window, segments".to_string(),
                "granted snd/rcv".to_string(),
            ]);
            for row in &a.diagonal {
                let index = p.snd.0.iter().position(|b| *b == row.buffer).unwrap_or(0);
                let cell = a.cells.iter().find(|c| {
                    c.snd_index == index
                        && p.rcv.0[c.rcv_index].bytes(p.mss_bytes) == row.buffer.bytes(p.mss_bytes)
                });
                t.row([
                    Self::label(&p.snd, index, p.mss_bytes),
                    self.rate(row.task_to_task_kib_per_second * 1024.0),
                    // On the wire of the modelled link only: loopback has no wire.
                    if self.ceiling_bytes_per_second.is_some() {
                        format!("{:.1}", row.wire_mbit_per_second)
                    } else {
                        "-".to_string()
                    },
                    row.percent_of_ceiling
                        .map_or_else(|| "-".into(), |v| format!("{v:.0}%")),
                    cell.and_then(|c| c.predicted_bytes_per_second)
                        .map_or_else(|| "-".into(), |v| self.rate(v)),
                    cell.and_then(|c| c.window_bytes)
                        .filter(|_| p.mss_bytes > 0)
                        .map_or_else(
                            || "-".into(),
                            |w| format!("{:.1}", w as f64 / p.mss_bytes as f64),
                        ),
                    cell.map_or_else(String::new, |c| {
                        format!(
                            "{}/{}",
                            compact(c.snd_granted_bytes),
                            compact(c.rcv_granted_bytes)
                        )
                    }),
                ]);
            }
            write!(out, "{t}")?;
        }
        writeln!(
            out,
            "\nmatrix, median {unit} (rows: send buffer; columns: receive buffer):"
        )?;
        let mut header = vec!["snd \\ rcv".to_string()];
        header.extend(p.rcv.0.iter().map(ToString::to_string));
        let mut t = Table::new(header);
        for (s, row) in self.matrix().iter().enumerate() {
            let mut cells = vec![p.snd.0[s].to_string()];
            cells.extend(
                row.iter()
                    .map(|v| v.map_or_else(|| ".".into(), |v| self.rate(v))),
            );
            t.row(cells);
        }
        write!(out, "{t}")?;
        writeln!(
            out,
            "runs kept in {} (continue with --resume)",
            self.results_file
        )?;
        Ok(())
    }
}

/// What a knee at `ratio` times the bandwidth-delay product says about the path.
fn knee_reason(ratio: f64) -> &'static str {
    if ratio < 0.5 {
        ": below one BDP, so the rate is not window-bound there (the sender or the receiver's CPU, or the link, holds it)"
    } else if ratio <= 2.5 {
        ": a window of about one BDP fills the path, as TCP's window / RTT bound predicts"
    } else {
        ": well above one BDP: the buffer holds less payload than its size (per-packet overhead), or a queue on the path lengthens the RTT under load"
    }
}
