//! The text view of `wirespeed autoneg`: each partner and what it runs, or a word's fields.

use std::io::{self, Write};

use wirespeed_report::Render;

use super::result::{AutonegReport, ResolveReport, WordReport};

impl Render for AutonegReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        match self {
            AutonegReport::Resolve(r) => render_resolve(r, out),
            AutonegReport::Word(w) => render_word(w, out),
        }
    }
}

fn render_resolve(r: &ResolveReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "autoneg: two link partners (IEEE 802.3 Clause 28)")?;
    let res = &r.resolution;
    for (name, partner, state, page) in [
        ("A", &r.a, &res.a, r.a_base_page),
        ("B", &r.b, &res.b, r.b_base_page),
    ] {
        let sends = match page {
            Some(word) => format!("sends base page {word}"),
            None => "sends no link code word".to_string(),
        };
        writeln!(out, "  {name}: {}; {sends}", partner.describe())?;
        let how = match state.how {
            wirespeed_model::autoneg::HowResolved::Negotiated => "negotiated",
            wirespeed_model::autoneg::HowResolved::ParallelDetection => "parallel detection",
            wirespeed_model::autoneg::HowResolved::Forced => "forced",
            wirespeed_model::autoneg::HowResolved::NoLink => "no link",
        };
        if state.technology.is_some() {
            writeln!(out, "     runs {} ({how})", state.describe())?;
        } else {
            writeln!(out, "     {how}")?;
        }
    }
    if let Some(best) = res.best_possible {
        writeln!(out, "  best both could run: {}", best.name())?;
    }
    for note in &res.notes {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

fn render_word(w: &WordReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "link code word {} = {} (D15..D0)", w.word, w.binary)?;
    for row in &w.fields {
        writeln!(
            out,
            "  {:<7} {:<6} {:>5}  {}",
            row.field, row.bits, row.value, row.meaning
        )?;
    }
    writeln!(out, "summary: {}", w.summary)
}
