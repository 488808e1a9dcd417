//! The report view of `wirespeed envelope`.

use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number, rate, seconds};

/// The HTML view of an envelope for `wirespeed report`: the ceiling's headline figures (the
/// rest of the document, every frame and ACK, follows as fields).
pub(crate) fn html(e: &wirespeed_model::Envelope) -> Markup {
    let mut t = HtmlTable::new(["quantity", "value"]);
    for (label, value) in [
        ("goodput ceiling", rate(e.goodput_bits_per_second)),
        ("efficiency", format!("{} %", number(e.efficiency * 100.0))),
        ("payload per packet", format!("{} B", e.payload_bytes)),
        ("frames per second", number(e.frames_per_second)),
        ("time per payload byte", seconds(e.seconds_per_byte)),
        ("time per frame", seconds(e.seconds_per_frame)),
    ] {
        t.row(vec![Cell::text(label), Cell::num(value)]);
    }
    let mut m = Markup::new();
    m.heading("Summary");
    m.push(&t.markup());
    m
}
