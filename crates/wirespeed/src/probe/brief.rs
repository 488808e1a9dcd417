//! `probe --brief`: the destination's best-case one-way cost (the seed's `fixed + per byte x
//! size`), and with `--per-hop` each hop's implied link rate, in one line.

use wirespeed_model::RateFormat;

use super::ProbeReport;
use super::text::line;
use crate::common::brief::{Headline, percent};

impl Headline for ProbeReport {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        let mut text = format!(
            "probe {}: {} of {} probes answered",
            self.target,
            self.answers,
            self.samples.len()
        );
        // The destination's line is the answer; a path whose end never answered has the last
        // hop that did.
        match self
            .hops
            .iter()
            .rev()
            .find(|h| h.destination)
            .or(self.hops.last())
        {
            None => text.push_str("; no hop answered"),
            Some(h) => {
                let a = &h.analysis;
                match &a.fit {
                    Some(f) => text.push_str(&format!(
                        "; one-way best case {}",
                        line(f.one_way).replace(" x size", " x bytes")
                    )),
                    None => text.push_str(&format!(
                        "; no fit: {}",
                        a.no_fit_reason.as_deref().unwrap_or("too few answers")
                    )),
                }
                text.push_str(&format!(", loss {}", percent(a.loss_fraction, 1.0)));
            }
        }
        if self.per_hop {
            let rates: Vec<String> = self
                .hops
                .iter()
                .filter_map(|h| {
                    let inc = h.analysis.increment.as_ref()?;
                    // A per byte the run cannot tell from zero implies no rate (issue 31).
                    if inc.intervals.is_some_and(|iv| iv.per_byte_unresolved()) {
                        return Some(format!("hop {} not resolved", h.analysis.ttl));
                    }
                    if inc.per_byte_mixes_directions {
                        return Some(format!("hop {} not separable", h.analysis.ttl));
                    }
                    let rate = inc.implied_bits_per_second?;
                    Some(format!("hop {} {}", h.analysis.ttl, format.format(rate)))
                })
                .collect();
            if !rates.is_empty() {
                text.push_str(&format!("; implied link rates {}", rates.join(", ")));
            }
        }
        if self.stopped_early {
            text.push_str(" (stopped early)");
        }
        vec![text]
    }
}
