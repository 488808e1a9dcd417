//! The HTML view of a sweep, beside its text view (`text.rs`): the seed's diagonal table,
//! the heatmap of every buffer pair and the diagonal plot; and of a results file still being
//! written (the plan and the runs that finished), whose cells' medians are computed here while
//! the verdicts come from `sweep --resume FILE`.

use wirespeed_model::ByteSize;
use wirespeed_model::stats::median;
use wirespeed_model::sweep::{Axis, BufferSize, RunRecord};
use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number};
use wirespeed_report::html::plots::{self, Axes};
use wirespeed_report::plot::{Curve, Labels, Mark, Series, byte_rate_unit};

use super::SweepPlan;
use super::SweepReport;

/// The buffer in packets of `mss` bytes, for the diagonal's x axis.
fn packets(b: BufferSize, mss: u64) -> f64 {
    match b {
        BufferSize::Packets(p) => p as f64,
        BufferSize::Bytes(bytes) => bytes as f64 / mss.max(1) as f64,
    }
}

/// Medians in `unit` bytes/s as `values[send][receive]` from `(snd_index, rcv_index, bytes/s)`.
fn matrix(
    rows: usize,
    columns: usize,
    cells: &[(usize, usize, f64)],
    unit: f64,
) -> Vec<Vec<Option<f64>>> {
    let mut values = vec![vec![None; columns]; rows];
    for &(s, r, v) in cells {
        if let Some(cell) = values.get_mut(s).and_then(|row| row.get_mut(r)) {
            *cell = Some(v / unit);
        }
    }
    values
}

/// A buffer axis's ticks and title, units said once: packet counts under a title naming the
/// packet's size, or sizes with their unit (`16 KiB`); a bare `64p` was read as 64 pixels.
#[doc(hidden)]
pub fn buffer_axis(axis: &Axis, mss: u64, name: &str) -> (Vec<String>, String) {
    let packets_only = axis.0.iter().all(|b| matches!(b, BufferSize::Packets(_)));
    let ticks = axis
        .0
        .iter()
        .map(|b| match b {
            BufferSize::Packets(n) if packets_only => n.to_string(),
            BufferSize::Packets(n) => format!("{n} pkt"),
            BufferSize::Bytes(bytes) => ByteSize::from_bytes(*bytes).to_string(),
        })
        .collect();
    let title = if packets_only {
        format!("{name}, packets of {mss} bytes")
    } else {
        name.to_string()
    };
    (ticks, title)
}

fn sweep_plots(
    m: &mut Markup,
    plan: &SweepPlan,
    cells: &[(usize, usize, f64)],
    ceiling: Option<f64>,
) {
    let (snd, rcv) = (&plan.snd.0, &plan.rcv.0);
    let (rows, y_title) = buffer_axis(&plan.snd, plan.mss_bytes, "send buffer");
    let (columns, x_title) = buffer_axis(&plan.rcv, plan.mss_bytes, "receive buffer");
    let peak = cells.iter().map(|c| c.2).fold(0.0, f64::max);
    let (unit, unit_bytes) = byte_rate_unit(peak);
    let title = format!("task-to-task {unit} (median)");
    let svg = plots::heatmap(
        Labels {
            title: &title,
            x: &x_title,
            y: &y_title,
        },
        &columns,
        &rows,
        &matrix(rows.len(), columns.len(), cells, unit_bytes),
    );
    plots::figure(m, "median rate of every send x receive buffer pair", svg);
    let diagonal: Vec<(f64, f64)> = cells
        .iter()
        .filter(|(s, r, _)| snd.get(*s).is_some() && snd.get(*s) == rcv.get(*r))
        .map(|&(s, _, v)| (packets(snd[s], plan.mss_bytes), v / unit_bytes))
        .collect();
    let mut curves = vec![Curve::new(
        Series {
            name: "measured (median)".into(),
            points: diagonal.clone(),
        },
        Mark::LineAndPoints,
    )];
    let (lo, hi) = diagonal
        .iter()
        .map(|p| p.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if let Some(c) = ceiling.filter(|_| lo.is_finite()) {
        curves.push(Curve::new(
            Series {
                name: "envelope ceiling".into(),
                points: vec![(lo, c / unit_bytes), (hi, c / unit_bytes)],
            },
            Mark::Line,
        ));
    }
    let x_title = format!("socket buffer (packets of {} bytes)", plan.mss_bytes);
    let y_title = format!("task to task, {unit}");
    let svg = plots::chart_with(
        Labels {
            title: "send = receive buffer",
            x: &x_title,
            y: &y_title,
        },
        curves,
        Axes {
            x_log_when_wide: true,
            ..Axes::default()
        },
    );
    plots::figure(
        m,
        "the diagonal: equal send and receive buffers (a log axis when they span decades)",
        svg,
    );
}

impl SweepReport {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        if !self.complete {
            m.note(&format!(
                "incomplete: {} of {} runs finished",
                self.runs.len(),
                self.runs_planned
            ));
        }
        let mss = self.plan.mss_bytes;
        let mut t = HtmlTable::new(["buffer", "KiB/s task to task", "wire rate", "% of ceiling"]);
        for row in &self.analysis.diagonal {
            let bytes = row.buffer.bytes(mss);
            t.row(vec![
                Cell::text(format!("{} ({})", row.buffer, ByteSize::from_bytes(bytes))),
                Cell::num(number(row.task_to_task_kib_per_second)),
                Cell::num(format!("{} Mbit/s", number(row.wire_mbit_per_second))),
                Cell::opt(row.percent_of_ceiling.map(|p| format!("{} %", number(p)))),
            ]);
        }
        if !t.is_empty() {
            m.heading("Send = receive buffer (the seed's table)");
            m.push(&t.markup());
        }
        let cells: Vec<(usize, usize, f64)> = self
            .analysis
            .cells
            .iter()
            .map(|c| (c.snd_index, c.rcv_index, c.median_bytes_per_second))
            .collect();
        m.heading("Throughput against socket buffers");
        sweep_plots(&mut m, &self.plan, &cells, self.ceiling_bytes_per_second);
        m
    }

    /// The figures several sweeps are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        self.analysis
            .plateau_bytes_per_second
            .map(|p| ("plateau".to_string(), "bytes_per_second", p))
            .into_iter()
            .collect()
    }
}

/// A sweep results file: the plan line and the runs that finished.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct SweepRuns {
    #[serde(flatten)]
    pub(crate) plan: SweepPlan,
    pub(crate) runs: Vec<RunRecord>,
}

impl SweepRuns {
    /// The plan, and each cell's median of the runs that finished.
    pub(crate) fn html(&self) -> Markup {
        let plan = &self.plan;
        let planned = plan.snd.0.len() * plan.rcv.0.len() * plan.reps as usize;
        let mut m = Markup::new();
        m.note(&format!(
            "a sweep results file: {} of {planned} planned runs finished; medians are computed \
             here, verdicts come from \"wirespeed sweep --resume FILE\"",
            self.runs.len(),
        ));
        let mut groups: Vec<((usize, usize), Vec<f64>)> = Vec::new();
        for r in &self.runs {
            let key = (r.snd_index, r.rcv_index);
            let rate = r.bytes_per_second();
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(rate),
                None => groups.push((key, vec![rate])),
            }
        }
        let cells: Vec<(usize, usize, f64)> = groups
            .iter()
            .map(|((s, c), rates)| (*s, *c, median(rates)))
            .collect();
        if !cells.is_empty() {
            m.heading("Throughput against socket buffers");
            sweep_plots(&mut m, plan, &cells, None);
        }
        m
    }
}
