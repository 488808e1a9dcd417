//! Unit tests of mesh, beside its module and apart from it.

use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: MeshArgs,
}

fn parse(argv: &[&str]) -> Result<MeshArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("mesh").chain(argv.iter().copied())).map(|c| c.args)
}

#[test]
fn agents_parse_with_and_without_ports() {
    let a = parse(&["--agents", "127.0.0.1,127.0.0.2:7,[::1]:9"]).unwrap();
    let e = named_agents(&a).unwrap();
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
        let e = parse(&argv).unwrap().check().unwrap_err().to_string();
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
    let v = r.verdicts().join("\n");
    assert!(v.contains("pair h3 -> h4 is far below"), "{v}");
    assert!(v.contains("h4 <-> h3 is asymmetric"), "{v}");
    let mut text = Vec::new();
    wirespeed_report::Render::render(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("TCP rate (row: source, column: destination)"),
        "{text}"
    );
    assert!(r.csv().to_string().lines().count() == 13);
}
