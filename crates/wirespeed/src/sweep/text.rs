//! How a sweep prints: the seed's table for the diagonal, the matrix, verdicts; CSV; SVG.

use std::io::{self, Write};

use wirespeed_model::sweep::{Axis, RunRecord};
use wirespeed_model::units::{ByteSize, significant};
use wirespeed_report::plot::{Labels, Series, heatmap_svg, line_plot_svg};
use wirespeed_report::{Csv, Render, Table};

use super::SweepReport;
use super::measure::Planned;
use super::verdicts::RateScale;

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

    /// How this report writes a rate.
    pub(crate) fn scale(&self) -> RateScale {
        RateScale {
            format: self.rate_format,
            adaptive: self.adaptive_scale(),
        }
    }

    fn rate(&self, bytes_per_second: f64) -> String {
        self.scale().rate(bytes_per_second)
    }

    fn rate_unit(&self) -> &'static str {
        self.scale().unit()
    }

    pub(crate) fn label(axis: &Axis, index: usize, mss: u64) -> String {
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

    /// The matrix as CSV, one row per cell (`--csv`).
    pub fn csv(&self) -> String {
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

    /// The matrix as an SVG heatmap (`--heatmap`).
    pub fn heatmap(&self) -> anyhow::Result<String> {
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

    /// The diagonal (send = receive) as an SVG line plot against the envelope ceiling
    /// (`--plot`).
    pub fn diagonal_plot(&self) -> anyhow::Result<String> {
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

/// The line that opens a sweep on a terminal: its size, its seed and where its runs go.
pub(crate) fn start_line(planned: &Planned) -> String {
    let (order, todo) = (&planned.order, &planned.todo);
    format!(
        "sweep: {} runs ({} already done){}, seed {} (replay with --seed {}), results in {}",
        order.len(),
        order.len() - todo.len(),
        planned.estimate.map_or(String::new(), |e| format!(
            ", about {} on this path",
            hours(e.seconds)
        )),
        planned.plan.seed,
        planned.plan.seed,
        planned.file.path().display()
    )
}

/// `18.6 h`, `42 min`, `12 s`: a duration as people plan with it.
pub(crate) fn hours(seconds: f64) -> String {
    if seconds >= 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else if seconds >= 90.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{seconds:.0} s")
    }
}

/// `16 KiB`, `1460 B`, `8 MiB` without the space, for narrow columns.
/// A round trip in the unit that shows it: loopback's tens of microseconds printed as
/// "0.00 ms" in a fixed millisecond format.
#[doc(hidden)]
pub fn round_trip(seconds: f64) -> String {
    if seconds > 0.0 && seconds < 1e-3 {
        format!("{} us", significant(seconds * 1e6, 3))
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}

pub(crate) fn compact(bytes: u64) -> String {
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
