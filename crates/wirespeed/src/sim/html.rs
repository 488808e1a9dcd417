//! The HTML view of `sim csma`, beside its text view (in `sim.rs`): efficiency against hosts,
//! one curve per packet length (seed 000's figures), and the table of every point.

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number, rate, seconds};
use wirespeed_report::html::plots;
use wirespeed_report::plot::{Curve, Labels, Mark, Series};

use crate::sim::SimReport;

impl SimReport {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        let mut t = HtmlTable::new([
            "lengths",
            "hosts",
            "bit rate",
            "packets/s",
            "efficiency",
            "mean delay",
            "excess delay",
            "Jain fairness",
            "collisions per packet",
        ]);
        let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for p in &self.points {
            let s = &p.summary;
            t.row(vec![
                Cell::text(s.lengths.clone()),
                Cell::num(s.hosts.to_string()),
                Cell::num(rate(s.bits_per_second.mean)),
                Cell::num(number(s.packets_per_second.mean)),
                Cell::num(format!("{} %", number(s.utilization.mean * 100.0))),
                Cell::num(seconds(s.delay_mean_seconds.mean)),
                Cell::num(seconds(s.excess_delay_seconds.mean)),
                Cell::num(number(s.jain_fairness.mean)),
                Cell::num(number(s.collisions_per_packet.mean)),
            ]);
            let point = (s.hosts as f64, s.utilization.mean * 100.0);
            match curves.iter_mut().find(|c| c.0 == s.lengths) {
                Some(c) => c.1.push(point),
                None => curves.push((s.lengths.clone(), vec![point])),
            }
        }
        if t.is_empty() {
            return m;
        }
        m.heading("Points");
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
        let curves = curves
            .into_iter()
            .map(|(name, points)| {
                Curve::new(
                    Series {
                        name: format!("{name} bytes"),
                        points,
                    },
                    Mark::LineAndPoints,
                )
            })
            .collect();
        let svg = plots::chart(
            Labels {
                title: "efficiency against hosts",
                x: "hosts",
                y: "efficiency, % of the link",
            },
            curves,
            true,
        );
        plots::figure(
            &mut m,
            "utilisation of the shared channel, per packet length",
            svg,
        );
        m
    }
}
