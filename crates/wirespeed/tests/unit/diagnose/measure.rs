use wirespeed::diagnose::measure::*;
use wirespeed_model::diagnose::peer::{Transfer, peer_findings};

/// A loopback transfer slowed one way on a loaded host is a counterless warning; its
/// evidence then says how loaded the host was, and a fault's does not.
#[test]
fn a_counterless_asymmetry_carries_the_hosts_load() {
    let t = |direction: &str, bps: f64| Transfer {
        direction: direction.into(),
        bits_per_second: bps,
        retransmits: None,
    };
    let mut findings = peer_findings(&t("to the peer", 1e9), &t("from the peer", 3.1e9), &[]);
    assert_eq!(findings.len(), 1);
    add_host_load(&mut findings, 9.84, 2);
    assert_eq!(
        findings[0].evidence.last().unwrap(),
        "this host's load average 9.8 on 2 CPUs as the transfers ended"
    );
    let mut symmetric = peer_findings(&t("to the peer", 1e9), &t("from the peer", 1.1e9), &[]);
    add_host_load(&mut symmetric, 9.84, 1);
    assert!(symmetric.is_empty());
}
