//! The HTML view of a reproduction, beside its text view (in `reproduce.rs`): the ground
//! truth, and each of the seed's tables beside ours with its verdicts coloured.

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, Tone, number};

use crate::reproduce::{Reproduction, Verdict};

impl Reproduction {
    /// The tables of the report's section.
    pub(crate) fn html(&self) -> Markup {
        let mut m = Markup::new();
        m.lit("<p>")
            .text(&format!(
                "{} within the paper's tolerance, {} outside it{}",
                self.within,
                self.outside,
                if self.imprecise > 0 {
                    format!(", {} not measured precisely enough to say", self.imprecise)
                } else {
                    String::new()
                }
            ))
            .lit("</p>\n");
        if !self.ground_truth.is_empty() {
            let mut t = HtmlTable::new(["ground truth", "value"]);
            for g in &self.ground_truth {
                t.row(vec![
                    Cell::text(g.name.clone()),
                    Cell::text(g.value.clone()),
                ]);
            }
            m.heading("Ground truth");
            m.push(&t.markup());
        }
        for c in &self.comparisons {
            m.heading(&c.title);
            for (label, s) in [("source: ", &c.source), ("method: ", &c.method)] {
                if !s.is_empty() {
                    m.lit("<p class=\"dim\">").text(label).text(s).lit("</p>\n");
                }
            }
            let mut t = HtmlTable::new([
                "quantity",
                "unit",
                "configured",
                "paper",
                "ours",
                "tolerance",
                "verdict",
                "why",
            ]);
            for r in &c.rows {
                let n = |v: Option<f64>| Cell::opt(v.map(number));
                let (word, tone) = match r.verdict {
                    Verdict::Within => ("within", Tone::Good),
                    Verdict::Outside => ("outside", Tone::Bad),
                    Verdict::NotCompared => ("not compared", Tone::Neutral),
                    Verdict::Imprecise => ("not measured precisely enough", Tone::Neutral),
                };
                t.row(vec![
                    Cell::text(r.quantity.clone()),
                    Cell::text(r.unit.clone()),
                    n(r.configured),
                    n(r.paper),
                    n(r.ours),
                    Cell::text(r.tolerance.clone()),
                    Cell::Tone(word.to_string(), tone),
                    Cell::text(r.why.clone()),
                ]);
            }
            m.lit("<div class=\"wide\">")
                .push(&t.markup())
                .lit("</div>");
        }
        if !self.notes.is_empty() {
            m.heading("Notes");
            m.lit("<ul>\n");
            for n in &self.notes {
                m.lit("<li>").text(n).lit("</li>\n");
            }
            m.lit("</ul>\n");
        }
        m
    }

    /// The figures several reproductions are compared by.
    pub(crate) fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        vec![
            ("rows within tolerance".into(), "", self.within as f64),
            ("rows outside tolerance".into(), "", self.outside as f64),
        ]
    }
}
