use wirespeed::latency::{LatencyResult, Phase};

fn saved() -> LatencyResult {
    #[derive(serde::Deserialize)]
    struct Doc {
        result: LatencyResult,
    }
    serde_json::from_str::<Doc>(include_str!("../../../testdata/report/latency.json"))
        .unwrap()
        .result
}

/// Issue 34: the load's box sits where this run's clock saw the load, not on whole seconds.
#[test]
fn the_load_box_is_drawn_from_the_runs_own_timestamps() {
    let mut r = saved();
    r.idle_seconds = 2.0;
    r.settle_seconds = 1.0;
    r.load_started_seconds = Some(2.05);
    r.load_ended_seconds = Some(6.05);
    let b = r.load_bounds().unwrap();
    assert_eq!((b.started, b.settled, b.ended), (2.05, 3.05, 6.05));
    let curves = r.over_time_curves();
    let boxed = curves
        .iter()
        .find(|c| c.series.name.starts_with("load on"))
        .unwrap();
    assert_eq!(boxed.series.name, "load on, 2.05 to 6.05 s");
    let xs: Vec<f64> = boxed.series.points.iter().map(|p| p.0).collect();
    assert_eq!(xs, [2.05, 2.05, 6.05, 6.05]);
    // As the statistics count them: idle until the planned idle end, then settling.
    assert_eq!(r.phase_at(1.99), Some(Phase::Idle));
    assert_eq!(r.phase_at(2.04), Some(Phase::Settling));
    assert_eq!(r.phase_at(3.0), Some(Phase::Settling));
    assert_eq!(r.phase_at(3.06), Some(Phase::Loaded));
    assert_eq!(r.phase_at(6.05), Some(Phase::After));
    // A document from before the timestamps: the phases it measured against.
    r.load_started_seconds = None;
    r.load_ended_seconds = None;
    r.loaded_seconds = 3.0;
    let b = r.load_bounds().unwrap();
    assert_eq!((b.started, b.settled, b.ended), (2.0, 3.0, 6.0));
}
