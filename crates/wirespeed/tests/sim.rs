use std::time::Duration;

use wirespeed::sim::{self, Config};
use wirespeed_model::BitRate;
use wirespeed_sim::LengthMix;

use crate::util::{assert_one_line_error, wirespeed};

fn json(args: &[&str]) -> serde_json::Value {
    let run = wirespeed(args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("one JSON document")
}

#[test]
fn sim_csma_json_has_one_point_per_size_and_host_count() {
    let doc = json(&[
        "sim",
        "csma",
        "--hosts",
        "1,2,6",
        "-l",
        "64,6/2",
        "-t",
        "100ms",
        "--replications",
        "2",
        "--json",
    ]);
    assert_eq!(doc["schema"], "wirespeed.sim.v1");
    assert_eq!(doc["parameters"]["model"], "csma");
    assert_eq!(doc["parameters"]["mac"]["slot_bits"], 512);
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert!(
        typed.findings.iter().any(|f| f.kind == "short_packet_rate"
            && f.evidence["packets_per_second"]
                .as_f64()
                .is_some_and(|pps| pps > 10_000.0)),
        "{:?}",
        typed.findings
    );
    let points = doc["result"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    assert_eq!(points[3]["lengths"], "6/2");
    assert_eq!(points[2]["hosts"], 6);
    for key in [
        "bits_per_second",
        "bits_per_second_std_dev",
        "packets_per_second",
        "packets_per_second_std_dev",
        "delay_mean_seconds",
        "delay_std_dev_seconds",
        "excess_delay_seconds",
        "jain_fairness",
        "utilization",
    ] {
        assert!(points[2][key]["mean"].is_number(), "{key}: {}", points[2]);
        assert!(points[2][key]["ci_half_width"].is_number(), "{key}");
    }
    // Two 64-byte hosts: about 13,000 packets/s, no collisions.
    let two = &points[1];
    assert!(two["packets_per_second"]["mean"].as_f64().unwrap() > 12_000.0);
    assert_eq!(two["collisions_per_packet"]["mean"], 0.0);
}

/// The simulator's determinism, through the library (issue 30: a measurement alone, so no
/// process is spawned): the same seed gives the same figures, another seed others.
#[test]
fn sim_csma_same_seed_same_figures() {
    let points = |seed| {
        let config = Config::seed_long_net(vec![5], vec![LengthMix::Fixed { bytes: 128 }])
            .and_then(|c| c.with_time(Duration::from_millis(50)))
            .unwrap()
            .with_seed(seed);
        serde_json::to_value(&sim::measure(&config).unwrap().result.points).unwrap()
    };
    let a = points(7);
    assert_eq!(a, points(7));
    assert_ne!(a, points(8));
}

#[test]
fn sim_csma_prints_a_table_per_size_and_the_theory() {
    let run = wirespeed(&[
        "sim", "csma", "--hosts", "1-3", "-l", "64,1536", "-t", "100ms", "--theory",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for text in [
        "packets: 64 bytes",
        "packets: 1536 bytes",
        "Mbit/s",
        "pkt/s",
        "Jain",
        "M-B",
        "1/e",
        "24 byte times",
        "verdict: 2 hosts x 64 bytes",
    ] {
        assert!(
            run.stdout.contains(text),
            "{text:?} missing:\n{}",
            run.stdout
        );
    }
}

/// Seed 003: at 100 Mbit/s, 3000 ft of cable is longer than the slot allows, so collisions
/// come late; through the library, as a measurement alone.
#[test]
fn sim_csma_100_mbit_on_3000_ft_reports_late_collisions() {
    let config = Config::seed_long_net(vec![8], vec![LengthMix::Fixed { bytes: 1536 }])
        .and_then(|c| c.with_rate(BitRate::from_bits_per_second(100_000_000)))
        .and_then(|c| c.with_time(Duration::from_millis(200)))
        .unwrap();
    let doc = sim::measure(&config).unwrap();
    assert!(doc.result.points[0].summary.late_collisions > 0);
    assert!(
        doc.warnings.iter().any(|w| w.contains("late collisions")),
        "{:?}",
        doc.warnings
    );
}

#[test]
fn sim_csma_bad_input_is_one_line_and_status_2() {
    assert_one_line_error(&wirespeed(&["sim", "csma", "-r", "1G"]), "Table 2");
    assert_one_line_error(&wirespeed(&["sim", "csma", "-l", "4000"]), "--oversize");
    assert_one_line_error(&wirespeed(&["sim", "csma", "-l", "32"]), "64 to");
    assert_one_line_error(&wirespeed(&["sim", "csma", "--hosts", "0"]), "host");
    assert_one_line_error(
        &wirespeed(&["sim", "csma", "--cable", "far"]),
        "cable length",
    );
    assert_one_line_error(&wirespeed(&["sim", "csma", "--velocity", "3"]), "velocity");
    assert_one_line_error(
        &wirespeed(&["sim", "csma", "--load=-1"]),
        "--load: '-1' is negative",
    );
    assert_one_line_error(&wirespeed(&["sim", "csma", "--load=0"]), "offered load");
    let help = wirespeed(&["--help"]);
    assert!(help.stdout.contains("sim"));
}

#[test]
fn sim_link_mismatch_counts_late_collisions_and_fcs_errors() {
    let doc = json(&[
        "sim", "link", "--a", "half", "--b", "full", "-t", "2s", "-J",
    ]);
    assert_eq!(doc["schema"], "wirespeed.sim.v1");
    assert_eq!(doc["parameters"]["model"], "link");
    let ab = &doc["result"]["directions"][0];
    assert_eq!(ab["from_duplex"], "half");
    assert!(ab["sender"]["late_collisions"].as_u64().unwrap() > 0);
    assert!(ab["receiver"]["fcs_errors"].as_u64().unwrap() > 0);
    assert!(ab["goodput_fraction"].as_f64().unwrap() < 0.2);
    let matched = json(&[
        "sim", "link", "--a", "full", "--b", "full", "-t", "1s", "-J",
    ]);
    let ok = &matched["result"]["directions"][0];
    assert!(ok["goodput_fraction"].as_f64().unwrap() > 0.95);
    assert_eq!(ok["receiver"]["fcs_errors"], 0);
    assert_one_line_error(&wirespeed(&["sim", "link", "-r", "1G"]), "Table 2");
    assert_one_line_error(&wirespeed(&["sim", "link", "-l", "10"]), "64 to");
    assert!(
        doc["verdicts"][0]
            .as_str()
            .unwrap()
            .starts_with("duplex mismatch: the half-duplex end counted"),
        "{doc}"
    );
}

#[test]
fn sim_link_refuses_a_timeout_no_ack_can_beat_and_earns_its_mismatch_verdict() {
    // A 1 ns timeout used to livelock the simulator (an event every ns) or, on short runs, print
    // a mismatch verdict over all-zero counters.
    assert_one_line_error(
        &wirespeed(&["sim", "link", "--rto", "1ns", "-t", "1s"]),
        "shorter than the quickest acknowledgement",
    );
    let doc = json(&[
        "sim", "link", "--a", "full", "--b", "half", "-t", "2ms", "-J",
    ]);
    let verdict = doc["verdicts"][0].as_str().unwrap();
    assert!(
        verdict.contains("no mismatch signature") && !verdict.starts_with("duplex mismatch"),
        "{verdict}"
    );
}

#[test]
fn sim_csma_plot_writes_the_seed_figures() {
    let dir = std::env::temp_dir().join(format!("wirespeed-sim-plot-{}", std::process::id()));
    let run = wirespeed(&[
        "sim",
        "csma",
        "--hosts",
        "1-3",
        "-l",
        "64,512",
        "-t",
        "50ms",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(dir.join("bit-rate.svg")).unwrap();
    // One curve per packet length: curves are the plot's only strokes two pixels wide.
    assert_eq!(svg.matches("stroke-width=\"2\"").count(), 2);
    assert!(svg.contains("fig. 3-3"));
    for f in [
        "packet-rate",
        "delay",
        "delay-sd",
        "excess-delay",
        "bit-rate-sd",
        "packet-rate-sd",
    ] {
        assert!(dir.join(format!("{f}.svg")).exists(), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 15 item 7: `sim link` takes a cable length as `sim csma` does, and honours `-f`.
#[test]
fn sim_link_takes_lengths_with_units_and_honours_the_rate_unit() {
    let metres = |args: &[&str]| {
        let mut all = vec!["sim", "link", "-t", "0.2s", "--json"];
        all.extend_from_slice(args);
        let run = wirespeed(&all);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        doc["parameters"]["cable_m"].as_f64().unwrap()
    };
    assert_eq!(metres(&["--cable", "200m"]), 200.0);
    assert_eq!(metres(&["--cable", "200"]), 200.0);
    assert!((metres(&["--cable", "330ft"]) - 100.584).abs() < 1e-9);
    let text = |f: &str| {
        let run = wirespeed(&["sim", "link", "-t", "0.2s", "-f", f]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        run.stdout.lines().next().unwrap_or_default().to_string()
    };
    assert!(text("a").contains("KiB/s"), "{}", text("a"));
    assert!(text("m").contains("Mbit/s"), "{}", text("m"));
    assert!(text("MB").contains("MB/s"), "{}", text("MB"));
}
