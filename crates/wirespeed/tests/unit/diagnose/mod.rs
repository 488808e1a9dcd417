mod measure;
mod verdicts;

use std::time::Duration;
use wirespeed::diagnose::measure::measure;
use wirespeed::diagnose::*;

fn parse(argv: &[&str]) -> Result<DiagnoseArgs, clap::Error> {
    crate::unit::parse_flags("diagnose", argv)
}

#[test]
fn interval_and_names_parse() {
    let a = parse(&[]).unwrap();
    assert!(a.interfaces.is_empty());
    assert_eq!(a.interval, Duration::from_secs(1));
    let a = parse(&["eth0", "lo", "-i", "250ms", "-J"]).unwrap();
    assert_eq!(a.interfaces, ["eth0", "lo"]);
    assert_eq!(a.interval, Duration::from_millis(250));
    assert!(a.json);
    assert!(parse(&["--interval", "0s"]).is_err());
    assert!(parse(&["--interval", "soon"]).is_err());
    assert!(parse(&["--interval", "2h"]).is_err());
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    Config::try_from(&parse(argv)?)
}

/// --peer is resolved (with its port) before any counter is read; a bad one is one line.
#[test]
fn the_config_resolves_the_peer_first() {
    let c = config(&["eth0", "-i", "250ms"]).unwrap();
    assert_eq!(c.interfaces, ["eth0"]);
    assert_eq!(c.interval, Duration::from_millis(250));
    assert!(c.peer.is_none());
    let c = config(&["--peer", "127.0.0.1", "-p", "7000", "-t", "1s"]).unwrap();
    let peer = c.peer.expect("a peer");
    assert_eq!(peer.agent, "127.0.0.1:7000".parse().unwrap());
    assert_eq!(peer.time, Duration::from_secs(1));
    assert!(peer.auth.is_none());
    let e = config(&["--peer", "[::1"]).unwrap_err();
    assert!(format!("{e:#}").contains("--peer"), "{e:#}");
    let e = config(&["--peer", "127.0.0.1", "--auth-key-file", "/nonexistent/key"]).unwrap_err();
    assert!(format!("{e:#}").contains("/nonexistent/key"), "{e:#}");
}

/// Issue 30: a library caller diagnoses the full-duplex end of seed 003's Table 7 (test 1)
/// from the replayed tree with the constructor and `measure` alone: the FCS errors and runts
/// of a duplex mismatch, a fault; an interval the flags refuse is refused.
#[test]
fn a_library_caller_runs_a_diagnosis() {
    let tree = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/sysfs-seed-003/net"
    );
    let config = Config::interfaces(vec!["dut02".into()], Duration::from_millis(1))
        .unwrap()
        .with_sysfs(tree);
    let doc = measure(&config).unwrap();
    let [dut02] = &doc.result.interfaces[..] else {
        panic!("one interface: {:?}", doc.result.interfaces)
    };
    assert_eq!(dut02.evidence.name, "dut02");
    assert_eq!(
        dut02.diagnosis.delta.fcs_errors, 0,
        "replayed counters do not move"
    );
    assert!(!dut02.diagnosis.healthy, "{:?}", dut02.diagnosis.findings);
    assert!(
        doc.verdicts[0].contains("duplex mismatch"),
        "{:?}",
        doc.verdicts
    );
    assert!(doc.parameters.source.ends_with("sysfs-seed-003/net"));
    let refused = |c: anyhow::Result<Config>| format!("{:#}", c.unwrap_err());
    assert!(refused(Config::interfaces(vec![], Duration::ZERO)).starts_with("-i 0s"));
    let ok = Config::interfaces(vec![], Duration::from_secs(1)).unwrap();
    let agent = "127.0.0.1:9".parse().unwrap();
    let long = Duration::from_secs(7200);
    assert!(refused(ok.with_peer(agent, long, None)).starts_with("-t 2h"));
}
