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

#[cfg(test)]
mod tests {
    use super::*;

    fn report(analysis: serde_json::Value, ceiling: Option<f64>) -> SweepReport {
        serde_json::from_value(serde_json::json!({
            "plan": {
                "schema": "wirespeed.sweep-runs.v1", "target": "loopback",
                "snd": [{"packets": 1}, {"packets": 4}], "rcv": [{"packets": 1}, {"packets": 4}],
                "reps": 1,
                "seed": 1, "mss_bytes": 1460, "transfer_bytes": 1000000, "transfer_seconds": null
            },
            "results_file": "s.jsonl", "complete": true, "runs_planned": 16, "runs": [],
            "ceiling_bytes_per_second": ceiling, "ceiling_source": "link h1-h2",
            "analysis": analysis,
        }))
        .unwrap()
    }

    fn analysis(
        plateau: Option<f64>,
        limit: &str,
        knee: Option<serde_json::Value>,
    ) -> serde_json::Value {
        serde_json::json!({
            "cells": [], "diagonal": [], "plateau_bytes_per_second": plateau,
            "reaches_90_percent_at": knee, "limit": limit, "notches": [
                {"snd_index": 2, "rcv_index": 2, "bytes_per_second": 1.0,
                 "expected_bytes_per_second": 2.0, "explanation": "x"}
            ], "pathological": []
        })
    }

    #[test]
    fn the_headline_is_the_plateau_its_ceiling_and_the_knee() {
        let r = report(
            analysis(
                Some(1_130_000.0),
                "link",
                Some(serde_json::json!({"packets": 4})),
            ),
            Some(1_164_000.0),
        );
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            [
                "sweep: plateau 9.04 Mbit/s, 97.1% of the 9.312 Mbit/s ceiling (link h1-h2), limited by the link; 90% of it from 4p (5840 B) per end; 1 notch; 0 of 16 runs"
            ]
        );
        // -f applies, as to every rate the sweep prints.
        assert!(r.headline(RateFormat::Kibibytes)[0].contains("plateau 1104 KiB/s"));
    }

    #[test]
    fn without_a_ceiling_or_a_finished_run_the_headline_says_so() {
        let r = report(analysis(Some(1e6), "unknown", None), None);
        let line = &r.headline(RateFormat::Adaptive)[0];
        assert!(
            line.starts_with("sweep: plateau 8 Mbit/s (no link rate to compare with"),
            "{line}"
        );
        let r = report(analysis(None, "unknown", None), None);
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            ["sweep: no run finished; 1 notch; 0 of 16 runs"]
        );
    }
}
