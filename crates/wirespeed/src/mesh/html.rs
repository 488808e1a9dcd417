//! The HTML view of a mesh, beside its text view (`mesh.rs`): heatmaps of the rate and round
//! trip matrices, the fault table with each fault's evidence, and every test's planned and
//! actual times; a results file still being written is shown through the same analysis.

use wirespeed_model::mesh::faults::Fault;
use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, rate, seconds};
use wirespeed_report::html::plots;
use wirespeed_report::plot::Labels;

use crate::mesh::{MeshPlan, MeshResult, PairRecord, build_result};

impl MeshResult {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        let names: Vec<String> = self.agents.iter().map(|a| a.name.clone()).collect();
        let mbit: Vec<Vec<Option<f64>>> = self
            .rate_matrix_bits_per_second
            .iter()
            .map(|row| row.iter().map(|v| v.map(|v| v / 1e6)).collect())
            .collect();
        m.heading("Rate matrix");
        plots::figure(
            &mut m,
            "TCP rate of every ordered pair, Mbit/s (row: source, column: destination)",
            plots::heatmap(
                Labels {
                    title: "TCP rate, Mbit/s",
                    x: "destination",
                    y: "source",
                },
                &names,
                &names,
                &mbit,
            ),
        );
        let ms: Vec<Vec<Option<f64>>> = self
            .rtt_matrix_seconds
            .iter()
            .map(|row| row.iter().map(|v| v.map(|v| v * 1e3)).collect())
            .collect();
        plots::figure(
            &mut m,
            "best round trip of the UDP echo probes, ms",
            plots::heatmap(
                Labels {
                    title: "round trip, ms",
                    x: "destination",
                    y: "source",
                },
                &names,
                &names,
                &ms,
            ),
        );
        m.heading("Faults");
        let mut t = HtmlTable::new(["kind", "hosts", "verdict and evidence"]);
        let name = |i: usize| names.get(i).cloned().unwrap_or_default();
        for f in &self.faults {
            let kind = match f {
                Fault::SlowHost { .. } => "slow host",
                Fault::DuplexMismatch { .. } => "duplex mismatch",
                Fault::AsymmetricHost { .. } => "asymmetric host",
                Fault::LossyHost { .. } => "lossy host",
                Fault::BadPair { .. } => "bad pair",
                Fault::AsymmetricPair { .. } => "asymmetric pair",
                Fault::Latency { .. } => "latency",
            };
            let hosts: Vec<String> = f.hosts().into_iter().map(name).collect();
            t.row(vec![
                Cell::text(kind),
                Cell::text(hosts.join(", ")),
                Cell::text(self.fault_text(f)),
            ]);
        }
        if t.is_empty() {
            m.note("no fault: every host reaches the fleet's best-connected quarter and every pair what its hosts reach");
        } else {
            m.push(&t.markup());
        }
        m.heading("Tests");
        let mut t = HtmlTable::new([
            "source",
            "destination",
            "slot",
            "planned",
            "ran",
            "rate",
            "round trip",
            "error",
        ]);
        for r in &self.tests {
            t.row(vec![
                Cell::text(name(r.source)),
                Cell::text(name(r.destination)),
                Cell::num(r.slot.to_string()),
                Cell::num(format!(
                    "{:.2}-{:.2} s",
                    r.planned_start_seconds, r.planned_end_seconds
                )),
                Cell::num(format!("{:.2}-{:.2} s", r.start_seconds, r.end_seconds)),
                Cell::opt(
                    r.result
                        .as_ref()
                        .and_then(|x| x.tcp_bits_per_second)
                        .map(rate),
                ),
                Cell::opt(
                    r.result
                        .as_ref()
                        .and_then(|x| x.latency.as_ref())
                        .and_then(|l| l.median_seconds)
                        .map(seconds),
                ),
                Cell::text(r.error.clone().unwrap_or_default()),
            ]);
        }
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
        m
    }

    /// The figures several meshes are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        let rates: Vec<f64> = self
            .rate_matrix_bits_per_second
            .iter()
            .flatten()
            .flatten()
            .copied()
            .collect();
        vec![
            (
                "median pair rate".into(),
                "bits_per_second",
                wirespeed_model::stats::median(&rates),
            ),
            ("faults".into(), "", self.faults.len() as f64),
        ]
    }
}

/// A mesh results file: the plan line and the tests that finished.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct MeshRuns {
    #[serde(flatten)]
    plan: MeshPlan,
    runs: Vec<PairRecord>,
}

impl MeshRuns {
    /// The same section as the command's, from the tests saved so far.
    pub(crate) fn html(&self) -> Markup {
        let r = build_result(
            &self.plan,
            &self.runs,
            0,
            (f64::NAN, f64::NAN),
            f64::NAN,
            &[],
            None,
            wirespeed_model::RateFormat::Adaptive,
            false,
        );
        let mut m = Markup::new();
        m.note(&format!(
            "a mesh results file: {} of {} tests finished",
            self.runs.len(),
            r.tests_planned
        ));
        m.push(&r.html());
        m
    }
}
