//! `sweep --brief`: the plateau, how far it is from the ceiling and what holds it there, and
//! the buffer from which the diagonal reaches 90% of it: the seed's question ("how much buffer
//! does this path need?") answered in one line.

use wirespeed_model::RateFormat;
use wirespeed_model::sweep::PlateauLimit;
use wirespeed_model::units::ByteSize;

use super::SweepReport;
use crate::common::brief::{Headline, percent};

impl Headline for SweepReport {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        let a = &self.analysis;
        let rate = |bytes_per_second: f64| format.format(bytes_per_second * 8.0);
        let mut line = match a.plateau_bytes_per_second {
            None => "sweep: no run finished".to_string(),
            Some(plateau) => {
                let mut l = format!("sweep: plateau {}", rate(plateau));
                if let Some(c) = self.ceiling_bytes_per_second {
                    l.push_str(&format!(
                        ", {} of the {} ceiling{}",
                        percent(plateau, c),
                        rate(c),
                        self.ceiling_source
                            .as_deref()
                            .map_or(String::new(), |s| format!(" ({s})"))
                    ));
                }
                l.push_str(match a.limit {
                    PlateauLimit::Link => ", limited by the link",
                    PlateauLimit::Cpu => ", limited by CPU (an end at 90% of a core)",
                    PlateauLimit::Other => ", below the ceiling with no CPU saturated",
                    PlateauLimit::Unknown => {
                        " (no link rate to compare with: --link-rate gives one)"
                    }
                });
                if let Some(b) = a.reaches_90_percent_at {
                    let bytes = ByteSize::from_bytes(b.bytes(self.plan.mss_bytes));
                    let size = match b {
                        wirespeed_model::sweep::BufferSize::Packets(_) => {
                            format!("{b} ({bytes})")
                        }
                        wirespeed_model::sweep::BufferSize::Bytes(_) => bytes.to_string(),
                    };
                    l.push_str(&format!("; 90% of it from {size} per end"));
                }
                l
            }
        };
        let odd = [
            (a.notches.len(), "notch", "notches"),
            (a.pathological.len(), "collapse", "collapses"),
        ]
        .into_iter()
        .filter(|(n, ..)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect::<Vec<_>>();
        if !odd.is_empty() {
            line.push_str(&format!("; {}", odd.join(", ")));
        }
        line.push_str(&format!(
            "; {} of {} runs",
            self.runs.len(),
            self.runs_planned
        ));
        vec![line]
    }
}
