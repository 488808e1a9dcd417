use wirespeed::sim::verdicts::*;
use wirespeed_report::{Finding, Severity};

#[test]
fn the_seed_comparisons_carry_their_figures() {
    let long = SimFinding::LongNetUtilization {
        hosts: 24,
        frame_bytes: 1536,
        utilization_share: 0.9712,
        delay_seconds: 0.0312,
    };
    let text = long.to_string();
    assert!(
        text.starts_with("24 hosts x 1536 bytes on the long net: 97.1% utilisation and 31"),
        "{text}"
    );
    let typed = Finding::of(Severity::Verdict, &long);
    assert_eq!(typed.kind, "long_net_utilization");
    assert_eq!(typed.evidence["utilization_share"], 0.9712);
    let short = SimFinding::ShortPacketRate {
        hosts: 2,
        frame_bytes: 64,
        packets_per_second: 13_499.6,
    };
    assert!(
        short
            .to_string()
            .starts_with("2 hosts x 64 bytes: 13,500 packets/s without a collision"),
        "{short}"
    );
    assert_eq!(
        Finding::of(Severity::Warning, &SimFinding::SingleReplication).kind,
        "single_replication"
    );
}
