//! Unit tests of mesh, beside its module and apart from it.
use std::time::Duration;
use wirespeed::mesh::analysis::build_result;
use wirespeed::mesh::result::*;
use wirespeed::mesh::result::{AgentEntry, MeshPlan, PairRecord};
use wirespeed_model::RateFormat;

use clap::Parser;
use std::net::SocketAddr;
use wirespeed::mesh::agents::{check_agents, named_agents, resolve};
use wirespeed::mesh::verdicts::{
    AsymmetricPair, BadPair, Cleared, DuplexMismatch, MeshVerdict, MeshWarning, NoOutlier,
    RateLook, Worded,
};
use wirespeed::mesh::*;
use wirespeed_model::mesh as model;
use wirespeed_model::mesh::faults::SlowDirection;
use wirespeed_net::control::mesh::PairResult;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: MeshArgs,
}

fn parse(argv: &[&str]) -> Result<MeshArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("mesh").chain(argv.iter().copied())).map(|c| c.args)
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    Config::try_from(&parse(argv)?)
}

/// Each setting once, in its type: the tests' durations, the fleet, and a schedule only with
/// --every.
#[test]
fn the_config_holds_the_flags_once() {
    let c = config(&[
        "--local",
        "3",
        "-t",
        "1s",
        "--probe-gap",
        "5ms",
        "--pairs",
        "2",
    ])
    .unwrap();
    assert_eq!(c.fleet, Fleet::Local(3));
    assert_eq!(c.tests.time, Duration::from_secs(1));
    assert_eq!(c.tests.probe_gap, Duration::from_millis(5));
    assert_eq!(c.tests.sample.map(|s| s.pairs), Some(2), "its seed drawn");
    assert!(c.schedule.is_none() && c.resume.is_none());
    let c = config(&[
        "--agents", "a,b", "-p", "7", "--every", "1m", "--count", "2",
    ])
    .unwrap();
    assert_eq!(
        c.fleet,
        Fleet::Named(wirespeed::mesh::agents::Named {
            specs: vec!["a".into(), "b".into()],
            file: None,
            port: 7,
            wait: None,
        })
    );
    let schedule = c.schedule.expect("--every is a schedule");
    assert_eq!(
        (schedule.every, schedule.runs),
        (Some(Duration::from_secs(60)), Some(2))
    );
}

/// The refusals that used to sit in three places (the flags' check, the single mesh's and
/// the schedule's) are the config's, each one line with its fix.
#[test]
fn the_config_refuses_combinations_of_one_mesh_and_a_schedule() {
    let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
    assert!(refused(&["--local", "3", "--count", "2"]).contains("--count belongs to a schedule"));
    assert!(refused(&["--local", "3", "--slip", "1s"]).contains("--slip belongs"));
    assert!(
        refused(&["--agents", "a,b", "--every", "1m", "--count", "1", "--csv"])
            .contains("drop --csv")
    );
    assert!(
        refused(&[
            "--agents",
            "a,b",
            "--every",
            "1m",
            "--count",
            "1",
            "--wait-for-agents",
            "1s"
        ])
        .contains("--wait-for-agents is for one mesh")
    );
    assert!(
        refused(&[
            "--agents", "a,b", "--every", "1m", "--pairs", "2", "--count", "1"
        ])
        .contains("needs --seed")
    );
    assert!(
        refused(&["--resume", "/nonexistent/mesh.jsonl", "--agents", "a,b"])
            .contains("the file names its agents")
    );
    assert!(refused(&["--local", "3", "--timeout", "10ms"]).contains("at least 100ms"));
}

#[test]
fn agents_parse_with_and_without_ports() {
    let a = config(&["--agents", "127.0.0.1,127.0.0.2:7,[::1]:9"]).unwrap();
    let Fleet::Named(named) = &a.fleet else {
        panic!("named agents")
    };
    let e = named_agents(named).unwrap();
    let addrs: Vec<String> = e.iter().map(|e| e.address.to_string()).collect();
    assert_eq!(addrs, ["127.0.0.1:5210", "127.0.0.2:7", "[::1]:9"]);
    assert!(resolve("", 1).is_err());
    assert!(resolve("localhost:x", 1).is_err());
    let dup = vec![e[0].clone(), e[0].clone()];
    assert!(
        check_agents(&dup)
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    assert!(
        check_agents(&e[..1])
            .unwrap_err()
            .to_string()
            .contains("at least 2")
    );
}

#[test]
fn bad_flags_name_the_fix() {
    for (argv, needle) in [
        (vec!["-t", "0.01"], "out of range"),
        (vec!["--probes", "5000"], "at most"),
        (vec!["--probe-gap", "0"], "1ms to 1s"),
        (vec!["--concurrency", "0"], "--concurrency 0"),
        (vec!["--local", "40"], "2 to 16"),
    ] {
        let e = config(&argv).unwrap_err().to_string();
        assert!(e.contains(needle), "{argv:?}: {e}");
    }
    assert!(parse(&["--csv", "--json"]).is_err());
    assert!(parse(&["--local", "3", "--agents", "a"]).is_err());
}

#[test]
fn the_result_holds_the_matrix_and_names_outliers() {
    let agents: Vec<AgentEntry> = (0..4)
        .map(|i| AgentEntry {
            name: format!("h{}", i + 1),
            address: SocketAddr::from(([127, 0, 0, 1], 4000 + i as u16)),
        })
        .collect();
    let plan = MeshPlan {
        schema: RUNS_SCHEMA.into(),
        agents,
        tcp_seconds: 1.0,
        probes: 0,
        probe_gap_seconds: 0.01,
        concurrency: 1,
        local: false,
        tos: None,
        sample: None,
    };
    let done: Vec<PairRecord> = model::tournament(4)
        .into_iter()
        .flatten()
        .map(|(s, d)| PairRecord {
            source: s,
            destination: d,
            slot: 0,
            planned_start_seconds: 0.0,
            planned_end_seconds: 1.0,
            start_seconds: 0.0,
            end_seconds: 1.0,
            start_unix_seconds: 0.0,
            end_unix_seconds: 1.0,
            result: Some(PairResult {
                tcp_bits_per_second: Some(if (s, d) == (2, 3) { 1e6 } else { 9e6 }),
                ..PairResult::default()
            }),
            error: None,
        })
        .collect();
    let r = build_result(
        &plan,
        &done,
        6,
        (7.0, 7.0),
        7.0,
        &[],
        None,
        RateFormat::Adaptive,
        false,
    );
    assert_eq!(r.rate_matrix_bits_per_second[2][3], Some(1e6));
    assert_eq!(r.rate_matrix_bits_per_second[0][0], None);
    let verdicts = r.verdicts();
    let bad = verdicts
        .iter()
        .find(|v| matches!(v, MeshVerdict::BadPair(BadPair { .. })))
        .expect("the low pair is judged");
    let MeshVerdict::BadPair(BadPair {
        source,
        destination,
        rate_bits_per_second,
        expected_bits_per_second,
        rechecked,
    }) = bad.clone()
    else {
        unreachable!()
    };
    assert_eq!((source.as_str(), destination.as_str()), ("h3", "h4"));
    assert_eq!(rate_bits_per_second, 1e6);
    assert!(expected_bits_per_second > 5e6, "{bad:?}");
    assert!(!rechecked);
    assert!(
        bad.to_string().starts_with("pair h3 -> h4 is far below"),
        "{bad}"
    );
    assert!(
        verdicts.contains(&MeshVerdict::AsymmetricPair(AsymmetricPair {
            fast_source: "h4".into(),
            fast_destination: "h3".into(),
            fast_bits_per_second: 9e6,
            slow_bits_per_second: 1e6,
        }))
    );
    assert_eq!(
        r.warnings(),
        [MeshWarning::AgentsOnLoopback { agents: 4 }],
        "every agent is on loopback; the mesh kept to its schedule"
    );
    let doc = r.clone().document(&plan);
    assert_eq!(doc.findings_consistent(), Ok(()));
    let kinds: Vec<&str> = doc.findings.iter().map(|f| f.kind.as_str()).collect();
    assert!(kinds.contains(&"bad_pair"), "{kinds:?}");
    assert!(kinds.contains(&"asymmetric_pair"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"agents_on_loopback"));
    let pair = doc.findings.iter().find(|f| f.kind == "bad_pair").unwrap();
    assert_eq!(pair.evidence["source"], "h3");
    assert_eq!(pair.evidence["rate_bits_per_second"], 1e6);
    let mut text = Vec::new();
    wirespeed_report::Render::render(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("TCP rate (row: source, column: destination)"),
        "{text}"
    );
    assert!(r.csv().to_string().lines().count() == 13);
}

#[test]
fn mesh_findings_keep_their_sentences_and_base_units() {
    let worded = |judged: MeshVerdict| {
        Worded {
            judged,
            rate_format: RateFormat::Megabits,
        }
        .to_string()
    };
    assert_eq!(
        worded(MeshVerdict::NoOutlier(NoOutlier {
            hosts: 3,
            tests: 6,
            lowest_bits_per_second: 9e6,
            highest_bits_per_second: 9.5e6,
        })),
        "no outlier among 3 hosts and 6 tests (rates 9 Mbit/s to 9.5 Mbit/s)"
    );
    let mismatch = MeshVerdict::DuplexMismatch(DuplexMismatch {
        host: "n2".into(),
        slow: SlowDirection::Sending,
        median_ratio: 0.1,
        pairs_showing: 2,
        pairs: 3,
        collisions: Some(40),
        late_collisions: Some(7),
        crc_errors: None,
    });
    assert_eq!(
        mismatch.to_string(),
        "host n2 has a duplex mismatch on its link: what it sends runs at 10% of the other way with 2 of its 3 partners; its port counted 7 late collision(s), 40 collision(s) in all over the mesh (seed 003: late collisions at the half-duplex end, CRC errors at the full one); configure both ends the same way, preferably both auto"
    );
    let value = serde_json::to_value(&mismatch).unwrap();
    assert_eq!(value["kind"], "duplex_mismatch");
    assert_eq!(value["slow"], "sending");
    assert_eq!(value["late_collisions"], 7);
    let overran = MeshWarning::ScheduleOverran {
        elapsed_seconds: 12.0,
        predicted_seconds: 10.0,
    };
    assert!(
        overran
            .to_string()
            .starts_with("the mesh took 12 s, 20% over the schedule's 10 s"),
        "{overran}"
    );
    let cleared = Worded {
        judged: MeshWarning::LowRatesCleared {
            cleared: vec![Cleared {
                source: "a".into(),
                destination: "b".into(),
                figure: RateLook {
                    rate_bits_per_second: None,
                },
            }],
        },
        rate_format: RateFormat::Adaptive,
    };
    assert!(cleared.to_string().starts_with("1 test(s) with a low rate"));
    assert!(cleared.to_string().ends_with(": a -> b (no figure)"));
    let value = serde_json::to_value(&cleared).unwrap();
    assert_eq!(value["kind"], "low_rates_cleared");
    assert_eq!(value["cleared"][0]["source"], "a");
    assert!(value["cleared"][0]["rate_bits_per_second"].is_null());
    let silent = MeshWarning::AgentsNotAnswering {
        silent: vec!["n3".into()],
        agents: 4,
        wait_seconds: 30.0,
    };
    assert_eq!(
        silent.to_string(),
        "1 of 4 agents did not answer within --wait-for-agents 30 s: n3"
    );
}

/// Issue 30: a library caller runs a mesh with the constructor and `measure` alone (two
/// in-process agents, 0.2 s tests after three probes) and gets both directions' figures in the
/// typed document; a fleet or a test no mesh can run is refused before any agent starts.
#[test]
fn a_library_caller_runs_a_mesh_of_in_process_agents() {
    let config = wirespeed::mesh::Config::local(2)
        .with_test_time(Duration::from_millis(200))
        .with_probes(3);
    let measured = wirespeed::mesh::measure(&config).unwrap();
    assert!(!measured.interrupted && measured.failed_first.is_none());
    let result: &wirespeed::mesh::MeshResult = &measured.doc.result;
    assert_eq!(
        (result.tests_planned, result.tests_failed, measured.finished),
        (2, 0, 2)
    );
    for test in &result.tests {
        let figures = test.result.as_ref().expect("a finished test has figures");
        assert!(
            figures.tcp_bits_per_second.is_some_and(|r| r > 0.0),
            "{test:?}"
        );
    }
    for (config, said) in [
        (
            wirespeed::mesh::Config::local(1),
            "--local 1 is out of range",
        ),
        (
            wirespeed::mesh::Config::local(2).with_test_time(Duration::from_millis(10)),
            "-t 0.01 s is out of range",
        ),
    ] {
        let err = wirespeed::mesh::measure(&config).unwrap_err();
        assert!(format!("{err:#}").contains(said), "{err:#}");
    }
}
