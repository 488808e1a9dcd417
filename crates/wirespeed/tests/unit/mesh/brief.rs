use wirespeed::common::brief::Headline;
use wirespeed::mesh::MeshResult;
use wirespeed_model::RateFormat;
use wirespeed_model::mesh::faults::Fault;

fn result(faults: Vec<Fault>, rates: &[f64]) -> MeshResult {
    let r: MeshResult = serde_json::from_value(serde_json::json!({
        "agents": [
            {"name": "h1", "address": "198.19.0.1:5210"},
            {"name": "h2", "address": "198.19.0.2:5210"},
            {"name": "h3", "address": "198.19.0.3:5210"}
        ],
        "tests_planned": 6, "tests_failed": 0, "slots": 3, "predicted_seconds": 3.0,
        "elapsed_seconds": 3.0, "rate_matrix_bits_per_second": [], "rtt_matrix_seconds": [],
        "pairs": [],
        "analysis": {"hosts": [], "findings": []},
        "tests": rates.iter().map(|r| serde_json::json!({
            "source": 0, "destination": 1, "slot": 0, "planned_start_seconds": 0.0,
            "planned_end_seconds": 1.0, "start_seconds": 0.0, "end_seconds": 1.0,
            "start_unix_seconds": 0.0, "end_unix_seconds": 1.0,
            "result": {"tcp_bits_per_second": r, "started_unix_seconds": 0.0,
                       "ended_unix_seconds": 1.0},
            "error": null
        })).collect::<Vec<_>>(),
        "results_file": null
    }))
    .unwrap();
    MeshResult { faults, ..r }
}

#[test]
fn the_headline_names_each_fault_with_its_figure() {
    let slow = Fault::SlowHost {
        host: 2,
        reach_bits_per_second: 9.38e6,
        yardstick_bits_per_second: 92.7e6,
        slow_link_bits_per_second: None,
        tests: 4,
        steady: true,
    };
    let r = result(vec![slow.clone()], &[9.38e6, 92.7e6]);
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        ["mesh: 2 of 6 tests between 3 hosts, 1 fault: h3 slow (9.38 Mbit/s against 92.7 Mbit/s)"]
    );
    let pair = Fault::BadPair {
        source: 0,
        destination: 1,
        rate_bits_per_second: 1e6,
        expected_bits_per_second: 9e6,
    };
    let r = result(vec![slow, pair], &[]);
    let line = &r.headline(RateFormat::Megabits)[0];
    assert!(
        line.ends_with("2 faults: h3 slow (9.38 Mbit/s against 92.7 Mbit/s); pair h1 -> h2 slow (1 Mbit/s against 9 Mbit/s)"),
        "{line}"
    );
}

#[test]
fn a_clean_fleet_says_no_fault_and_its_range() {
    let r = result(Vec::new(), &[9.1e6, 9.4e6]);
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        ["mesh: 2 of 6 tests between 3 hosts, no fault (rates 9.1 Mbit/s to 9.4 Mbit/s)"]
    );
}
