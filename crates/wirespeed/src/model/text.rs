//! The text view of `wirespeed model`: the prediction table, the comparison table with its
//! hypotheses, the fitted TOML, and the seed's figure 4 (`compare --plot`).

use std::io::{self, Write};

use wirespeed_model::delay;
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Render, Table};

use super::measure::ProbedHop;
use super::result::{CompareReport, FitReport, PredictReport};

/// Measured against calculated one-way delay to the destination, as the seed's figure 4.
pub(crate) fn figure_4(path: &delay::Path, measured: &[ProbedHop]) -> anyhow::Result<String> {
    let dest = measured
        .iter()
        .find(|m| m.destination)
        .or_else(|| measured.last());
    let points: Vec<(f64, f64)> = dest
        .map(|d| {
            d.echoed_minimums
                .iter()
                .map(|&(x, rtt)| (x, rtt / 2.0))
                .collect()
        })
        .unwrap_or_default();
    let expected = dest
        .and_then(|d| path.hop_marks().into_iter().find(|m| m.0 == d.hop.hop))
        .map_or_else(|| path.total(), |m| m.1);
    let measured = Curve::new(
        Series {
            name: "measured (min RTT / 2)".into(),
            points: points.clone(),
        },
        Mark::Points,
    );
    let measured = match dest {
        Some(d) => measured.with_fit(d.hop.cost.fixed_ms, d.hop.cost.per_byte_ms),
        None => measured,
    };
    let model = Curve::new(
        Series {
            name: format!("model '{}'", path.name),
            points: points.iter().map(|&(x, _)| (x, expected.at(x))).collect(),
        },
        Mark::Points,
    )
    .with_fit(expected.fixed_ms, expected.per_byte_ms);
    let title = format!("path {}: measured versus calculated", path.name);
    let labels = Labels {
        title: &title,
        x: "packet size, bytes",
        y: "one-way delay, ms",
    };
    Ok(Plot::new(labels)
        .x_from_zero()
        .curve(measured)
        .curve(model)
        .svg()?)
}

impl Render for PredictReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "model {} path {}: {} (one-way, ms; cable at {}c)",
            self.file, self.path, self.description, self.velocity_factor
        )?;
        let p = &self.prediction;
        let mut header = vec!["component".to_string(), "fixed".into(), "per byte".into()];
        header.extend(p.sizes.iter().map(|s| format!("{s} bytes")));
        let mut t = Table::new(header);
        for r in p.rows.iter().chain([&p.total]) {
            let mut row = vec![
                r.group.clone(),
                format!("{:.4}", r.cost.fixed_ms),
                format!("{:.6}", r.cost.per_byte_ms),
            ];
            row.extend(r.at_sizes_ms.iter().map(|v| format!("{v:.4}")));
            t.row(row);
        }
        write!(out, "{t}")
    }
}

impl Render for CompareReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "path {} against the probe (one-way, ms; tolerance {} ms fixed, {:.0}% per byte)",
            self.path,
            self.tolerance.fixed_ms,
            self.tolerance.per_byte_relative * 100.0
        )?;
        let mut t = Table::new([
            "to",
            "components",
            "expected fixed",
            "measured",
            "expected per byte",
            "measured",
            "",
        ]);
        for named in &self.segments {
            let s = &named.segment;
            t.row([
                named.to.clone(),
                s.elements.join(" + "),
                format!("{:.4}", s.expected.fixed_ms),
                format!("{:.4}", s.measured.fixed_ms),
                format!("{:.6}", s.expected.per_byte_ms),
                format!("{:.6}", s.measured.per_byte_ms),
                if s.anomalous { "ANOMALY" } else { "ok" }.to_string(),
            ]);
        }
        write!(out, "{t}")?;
        for named in self.segments.iter().filter(|s| s.segment.anomalous) {
            for h in &named.segment.hypotheses {
                writeln!(out, "{}: hypothesis: {h}", named.to)?;
            }
        }
        Ok(())
    }
}

impl Render for FitReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.toml.as_bytes())
    }
}
