//! `sweep --metrics-file`: each cell of the buffer grid, labelled by the buffer sizes asked
//! for (bytes), never by its place in the grid; the plateau and the ceiling.

use crate::common::metrics::{Exposition, Metrics};
use crate::sweep::SweepReport;

impl Metrics for SweepReport {
    fn metrics(&self, m: &mut Exposition) {
        let plan = &self.plan;
        let size = |axis: &wirespeed_model::sweep::Axis, i: usize| {
            axis.0
                .get(i)
                .map_or_else(|| "?".to_string(), |b| b.bytes(plan.mss_bytes).to_string())
        };
        for cell in &self.analysis.cells {
            let snd = size(&plan.snd, cell.snd_index);
            let rcv = size(&plan.rcv, cell.rcv_index);
            let buffers = [
                ("send_buffer_bytes", snd.as_str()),
                ("receive_buffer_bytes", rcv.as_str()),
            ];
            if cell.runs > 0 {
                for (statistic, v) in [
                    ("median", cell.median_bytes_per_second),
                    ("min", cell.min_bytes_per_second),
                    ("max", cell.max_bytes_per_second),
                ] {
                    m.gauge(
                        "throughput_bytes_per_second",
                        "the runs' goodput for one pair of buffer sizes, per statistic",
                        &[buffers[0], buffers[1], ("statistic", statistic)],
                        v,
                    );
                }
            }
            m.maybe(
                "predicted_bytes_per_second",
                "what the window over the round trip allows for the cell's buffers",
                &buffers,
                cell.predicted_bytes_per_second,
            );
            m.gauge(
                "cell_runs",
                "runs finished for the cell",
                &buffers,
                cell.runs as f64,
            );
        }
        m.maybe(
            "plateau_bytes_per_second",
            "the rate the grid levels off at",
            &[],
            self.analysis.plateau_bytes_per_second,
        );
        m.maybe(
            "ceiling_bytes_per_second",
            "the path's ceiling the cells are compared with",
            &[],
            self.ceiling_bytes_per_second,
        );
        m.gauge(
            "runs_planned",
            "runs the plan holds",
            &[],
            self.runs_planned as f64,
        );
        m.gauge("runs", "runs finished", &[], self.runs.len() as f64);
        m.flag(
            "complete",
            "1 when every planned run finished",
            &[],
            self.complete,
        );
    }
}
