use std::net::SocketAddr;
use wirespeed::diagnose::result::PeerReport;
use wirespeed::diagnose::verdicts::*;
use wirespeed_model::diagnose::peer::Transfer;
use wirespeed_model::diagnose::{Confidence, FindingKind};

fn transfer(direction: &str, bits_per_second: f64) -> Transfer {
    Transfer {
        direction: direction.into(),
        bits_per_second,
        retransmits: None,
    }
}

#[test]
fn a_rule_that_fired_names_the_verdict_and_no_rule_says_healthy() {
    let fault = DiagnoseVerdict::Fault {
        interface: "dut01".into(),
        rule: FindingKind::DuplexMismatchHalfSide,
        title: "late collisions on a half-duplex end".into(),
        confidence: Confidence::High,
    };
    assert_eq!(
        fault.to_string(),
        "dut01: late collisions on a half-duplex end (high confidence)"
    );
    let v = serde_json::to_value(&fault).unwrap();
    assert_eq!(v["kind"], "duplex_mismatch_half_side");
    assert_eq!(v["interface"], "dut01");
    assert_eq!(v["level"], "fault");
    assert_eq!(v["confidence"], "high");
    let healthy = DiagnoseVerdict::Healthy {
        interface: "eth0".into(),
    };
    assert_eq!(healthy.to_string(), "eth0: healthy");
    assert_eq!(serde_json::to_value(&healthy).unwrap()["kind"], "healthy");
    let lo = DiagnoseVerdict::NoPhysicalLayer {
        interface: "lo".into(),
        interface_kind: "loopback".into(),
    };
    assert_eq!(
        lo.to_string(),
        "lo: no physical layer (loopback); nothing to diagnose at the PHY"
    );
    assert_eq!(
        serde_json::to_value(&lo).unwrap()["kind"],
        "no_physical_layer"
    );
}

#[test]
fn the_peer_test_gives_its_rules_kind_or_says_the_directions_agree() {
    let agent: SocketAddr = "127.0.0.1:5210".parse().unwrap();
    let mut p = PeerReport {
        agent,
        seconds_each: 1.0,
        to_peer: transfer("to the peer", 9e6),
        from_peer: transfer("from the peer", 8e6),
        findings: Vec::new(),
    };
    let v = peer_verdicts(&p, 3.0);
    assert_eq!(
        v,
        [DiagnoseVerdict::SymmetricTransfer {
            peer: agent,
            asymmetry_ratio: 3.0,
            to_peer_bits_per_second: 9e6,
            from_peer_bits_per_second: 8e6,
        }]
    );
    assert_eq!(
        v[0].to_string(),
        "peer 127.0.0.1:5210: both directions within 3x of each other: no duplex-mismatch signature end to end"
    );
    p.from_peer.bits_per_second = 1e6;
    p.findings = wirespeed_model::diagnose::peer::peer_findings(&p.to_peer, &p.from_peer, &[]);
    let v = peer_verdicts(&p, 3.0);
    let json = serde_json::to_value(&v[0]).unwrap();
    assert_eq!(json["kind"], "asymmetric_transfer");
    assert_eq!(json["from_peer_bits_per_second"], 1e6);
    assert!(v[0].to_string().starts_with("peer 127.0.0.1:5210: "));
}

#[test]
fn a_stalled_transfer_is_a_typed_warning() {
    let w = DiagnoseWarning::TransferEndedEarly {
        direction: "from the peer".into(),
        error: "timed out".into(),
        counted_by: "sender".into(),
    };
    assert_eq!(
        w.to_string(),
        "--peer: the transfer from the peer ended early (timed out); its rate is what the sender counted before"
    );
    assert_eq!(
        serde_json::to_value(&w).unwrap()["kind"],
        "transfer_ended_early"
    );
}
