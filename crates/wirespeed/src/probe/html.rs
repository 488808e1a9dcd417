//! The HTML view of a probe, beside its text view (in `probe.rs`): per hop the fitted fixed
//! and per-byte cost, and minimum RTT against bytes crossed with each hop's fitted line
//! (Bellovin 1992, seed 001).

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, by_unit, number, rate};
use wirespeed_report::html::plots;
use wirespeed_report::plot::{Curve, Labels, Mark, Series};

use crate::probe::ProbeReport;

impl ProbeReport {
    /// The tables and plots of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut t = HtmlTable::new([
            "ttl",
            "responder",
            "loss",
            "fixed (one way)",
            "per byte (one way)",
            "r²",
            "implied link rate",
            "note",
        ]);
        let mut curves = Vec::new();
        for h in &self.hops {
            let a = &h.analysis;
            let who = h
                .responder
                .map_or_else(|| "*".to_string(), |r| r.to_string());
            // The legend names the responder: the figure is read beside its address.
            let name = if self.per_hop {
                format!("hop {} {who}", a.ttl)
            } else {
                who.clone()
            };
            let fit = a.fit.as_ref();
            t.row(vec![
                Cell::num(a.ttl.to_string()),
                Cell::text(who),
                Cell::num(format!("{} %", number(a.loss_fraction * 100.0))),
                Cell::opt(fit.map(|f| by_unit("_ms", f.one_way.fixed_ms))),
                Cell::opt(fit.map(|f| by_unit("_ms", f.one_way.per_byte_ms))),
                Cell::opt(fit.map(|f| number(f.r_squared))),
                Cell::opt(
                    a.increment
                        .as_ref()
                        .and_then(|i| i.implied_bits_per_second)
                        .map(rate),
                ),
                Cell::text(a.no_fit_reason.clone().unwrap_or_default()),
            ]);
            let points = a
                .sizes
                .iter()
                .map(|s| ((s.sent_bytes + s.returned_bytes) as f64, s.min_rtt_ms))
                .collect();
            let curve = Curve::new(Series { name, points }, Mark::Points);
            curves.push(match fit {
                Some(f) => curve.with_fit(f.rtt_intercept_ms, f.rtt_slope_ms_per_byte),
                None => curve,
            });
        }
        let mut m = Markup::new();
        if t.is_empty() {
            return m;
        }
        m.heading("Hops");
        m.lit("<div class=\"wide\">")
            .push(&t.markup())
            .lit("</div>");
        let svg = plots::chart(
            Labels {
                title: "minimum round trip",
                x: "bytes crossed (sent + returned)",
                y: "minimum RTT, ms",
            },
            curves,
            true,
        );
        plots::figure(
            &mut m,
            "minimum RTT of each size per hop, with the fitted line fixed + per-byte x size",
            svg,
        );
        m
    }
}
