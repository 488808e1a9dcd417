//! The HTML view of a load series, beside its text view (`text.rs`): every test's
//! figures and the aggregate bit rate against hosts next to the shared-segment model (seed
//! 000's figure 3-3); a results file still being written is summarised by the same `rows`
//! the command's `--resume` uses, without the model.

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number, rate, seconds};
use wirespeed_report::html::plots;
use wirespeed_report::plot::{Curve, Labels, Mark, Series};

use crate::load::{LoadPlan, TestRecord};
use crate::load::{LoadResult, Row};

fn section(rows: &[Row]) -> Markup {
    let mut t = HtmlTable::new([
        "lengths",
        "hosts",
        "bit rate",
        "packets/s",
        "mean delay",
        "excess delay",
        "Jain fairness",
        "model: shared 10 Mbit/s",
        "complete",
    ]);
    let mut measured: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut model: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let push = |curves: &mut Vec<(String, Vec<(f64, f64)>)>, name: &str, p: (f64, f64)| match curves
        .iter_mut()
        .find(|c| c.0 == name)
    {
        Some(c) => c.1.push(p),
        None => curves.push((name.to_string(), vec![p])),
    };
    for r in rows {
        let m = r.measured.as_ref();
        let model_rate = r.model_shared_10mbit.as_ref().map(|s| s.bits_per_second);
        t.row(vec![
            Cell::text(r.lengths.clone()),
            Cell::num(r.hosts.to_string()),
            Cell::opt(m.map(|s| rate(s.bits_per_second))),
            Cell::opt(m.map(|s| number(s.packets_per_second))),
            Cell::opt(m.map(|s| seconds(s.delay_mean_seconds))),
            Cell::opt(m.and_then(|s| s.excess_delay_seconds).map(seconds)),
            Cell::opt(m.map(|s| number(s.jain_fairness))),
            Cell::opt(model_rate.map(rate)),
            Cell::text(if r.complete { "yes" } else { "no" }),
        ]);
        if let Some(s) = m {
            push(
                &mut measured,
                &r.lengths,
                (r.hosts as f64, s.bits_per_second / 1e6),
            );
        }
        if let Some(b) = model_rate {
            push(&mut model, &r.lengths, (r.hosts as f64, b / 1e6));
        }
    }
    let mut m = Markup::new();
    if t.is_empty() {
        return m;
    }
    m.heading("Tests");
    m.lit("<div class=\"wide\">")
        .push(&t.markup())
        .lit("</div>");
    let curves = measured
        .into_iter()
        .map(|(name, points)| (format!("{name} bytes"), points, Mark::LineAndPoints))
        .chain(
            model
                .into_iter()
                .map(|(name, points)| (format!("{name} bytes, model"), points, Mark::Line)),
        )
        .map(|(name, points, mark)| Curve::new(Series { name, points }, mark))
        .collect();
    let svg = plots::chart(
        Labels {
            title: "total bit rate against hosts",
            x: "hosts",
            y: "Mbit/s",
        },
        curves,
        true,
    );
    plots::figure(
        &mut m,
        "aggregate bit rate per packet length (lines alone: the shared-segment model)",
        svg,
    );
    m
}

impl LoadResult {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        section(&self.rows)
    }
}

/// A load results file: the plan line and the tests that finished.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct LoadRuns {
    #[serde(flatten)]
    plan: LoadPlan,
    runs: Vec<TestRecord>,
}

impl LoadRuns {
    /// Each finished test's figures from its hosts' counters, as `--resume` computes them.
    pub(crate) fn html(&self) -> Result<Markup, String> {
        let rows = crate::load::rows(&self.plan, &self.runs, None).map_err(|e| format!("{e:#}"))?;
        let planned = self.plan.hosts.len() * self.plan.lengths.len();
        let mut m = Markup::new();
        m.note(&format!(
            "a load results file: {} of {planned} planned tests finished; figures are computed \
             here from the counters, the model and verdicts come from \"wirespeed load --resume FILE\"",
            self.runs.len()
        ));
        m.push(&section(&rows));
        Ok(m)
    }
}
