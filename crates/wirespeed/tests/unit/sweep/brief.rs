use wirespeed::common::brief::Headline;
use wirespeed::sweep::SweepReport;
use wirespeed_model::RateFormat;

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
