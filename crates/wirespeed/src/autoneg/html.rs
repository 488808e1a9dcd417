//! The HTML view of `autoneg`'s resolution of two partners, beside its text view (in
//! `text.rs`): what each end settles on, and the outcome against the best both could run.

use wirespeed_model::autoneg::{EndState, HowResolved, Outcome, Resolution};
use wirespeed_model::envelope::Duplex;
use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, Tone};

fn how(h: HowResolved) -> String {
    // The JSON's own word for it, in prose.
    serde_json::to_value(h)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

fn end_row(side: &str, e: &EndState) -> Vec<Cell> {
    vec![
        Cell::text(side),
        Cell::text(
            e.technology
                .map(|t| t.short().to_string())
                .unwrap_or_default(),
        ),
        Cell::opt(e.speed_mbps.map(|s| format!("{s} Mbit/s"))),
        Cell::text(match e.duplex {
            Some(Duplex::Full) => "full",
            Some(Duplex::Half) => "half",
            None => "",
        }),
        Cell::text(how(e.how)),
    ]
}

/// The tables of the report's section.
pub(crate) fn html(r: &Resolution) -> Markup {
    let mut t = HtmlTable::new(["partner", "mode", "speed", "duplex", "how"]);
    t.row(end_row("A", &r.a));
    t.row(end_row("B", &r.b));
    let mut m = Markup::new();
    m.heading("Link partners");
    m.push(&t.markup());
    let (class, tone) = match &r.outcome {
        Outcome::Ok => ("ok", Tone::Good),
        Outcome::DuplexMismatch { .. } => ("duplex mismatch", Tone::Bad),
        Outcome::NoLink { .. } => ("no link", Tone::Bad),
        Outcome::SlowerThanPossible { .. } => ("slower than possible", Tone::Bad),
    };
    let mut o = HtmlTable::new(["outcome", "best possible"]);
    o.row(vec![
        Cell::Tone(class.to_string(), tone),
        Cell::text(
            r.best_possible
                .map(|t| t.short().to_string())
                .unwrap_or_default(),
        ),
    ]);
    m.push(&o.markup());
    m
}
