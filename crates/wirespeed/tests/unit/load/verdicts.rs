use wirespeed::load::verdicts::*;
use wirespeed_report::{Finding, Severity};

#[test]
fn each_finding_has_its_kind_and_figures() {
    let unfair = LoadFinding::Unfair {
        hosts: 5,
        lengths: "64".into(),
        jain_index: 0.8125,
    };
    assert_eq!(
        unfair.to_string(),
        "5 hosts x 64: unfair (Jain 0.81); the seed saw its backoff's unfairness at small N shrink as N grew (§3.5)"
    );
    let typed = Finding::of(Severity::Verdict, &unfair);
    assert_eq!(typed.kind, "unfair");
    assert_eq!(typed.evidence["jain_index"], 0.8125);
    let older = LoadFinding::TosNotMarked {
        agent: "127.0.0.1:1".into(),
        asked_tos: 0xb8,
        sent_tos: None,
    };
    assert!(
        older
            .to_string()
            .contains("TOS 0xb8 (-S): it reports no TOS")
    );
    let other = LoadFinding::TosNotMarked {
        agent: "127.0.0.1:1".into(),
        asked_tos: 0xb8,
        sent_tos: Some(0),
    };
    assert!(
        other
            .to_string()
            .contains("sent with TOS 0x00, not the 0xb8")
    );
    let typed = Finding::of(Severity::Warning, &LoadFinding::LoopbackNotAMedium);
    assert_eq!(typed.kind, "loopback_not_a_medium");
    assert!(typed.evidence.is_empty());
    assert!(!typed.sentence.contains("  "), "{}", typed.sentence);
}
