use wirespeed::probe::verdicts::*;
use wirespeed_model::stability::{Budget, Figure, RoundPlan, StopReason, Unsettled};
use wirespeed_net::probe::{ReplyKind, Sample};
use wirespeed_report::Severity;

fn sample(ttl: u8, from: &str, reply: ReplyKind, sent_bytes: usize) -> Sample {
    Sample {
        ttl,
        sent_bytes,
        returned_bytes: 100,
        rtt_kernel_ns: None,
        rtt_user_ns: Some(1000),
        sent_at_ns: 0,
        responder: Some(from.parse().unwrap()),
        reply,
        unreachable_code: None,
        too_big_mtu: (reply == ReplyKind::TooBig).then_some(1400),
        series: wirespeed_net::probe::Series::Probe,
        agent_residence_ns: None,
    }
}

#[test]
fn a_hop_answered_from_two_addresses_is_flagged() {
    let te = ReplyKind::TimeExceeded;
    let samples = [
        sample(1, "198.18.1.2", te, 100),
        sample(2, "198.18.2.2", te, 100),
        sample(2, "198.18.4.2", te, 100),
        sample(1, "198.18.1.2", te, 100),
    ];
    assert_eq!(mixed_responders(&samples, 1, "hop 1"), None);
    let w = mixed_responders(&samples, 2, "hop 2").unwrap();
    assert_eq!(
        w,
        ProbeFinding::MixedResponders {
            hop: "hop 2".into(),
            responders: vec!["198.18.2.2".parse().unwrap(), "198.18.4.2".parse().unwrap()],
        }
    );
    assert_eq!(w.severity(), Severity::Warning);
    let text = w.to_string();
    assert!(
        text.starts_with("hop 2 answered from 2 addresses (198.18.2.2, 198.18.4.2)"),
        "{text}"
    );
    let typed = wirespeed_report::Finding::of(w.severity(), &w);
    assert_eq!(typed.kind, "mixed_responders");
    assert_eq!(typed.evidence["responders"][1], "198.18.4.2");
}

#[test]
fn probes_too_big_for_a_link_are_counted_with_the_smallest_and_the_mtu() {
    let samples = [
        sample(1, "198.18.1.2", ReplyKind::TimeExceeded, 1000),
        sample(1, "198.18.1.1", ReplyKind::TooBig, 1500),
        sample(1, "198.18.1.1", ReplyKind::TooBig, 1450),
    ];
    let found = too_big(&samples).unwrap();
    assert_eq!(
        found,
        ProbeFinding::ProbesTooBig {
            probes: 2,
            smallest_bytes: 1450,
            mtu_bytes: 1400,
            reported_by: vec!["198.18.1.1".parse().unwrap()],
        }
    );
    assert_eq!(
        found.to_string(),
        "2 probes of 1450 bytes and more were too big for a link on the way (198.18.1.1 reported MTU 1400): they are left out of the fits; keep --sizes at or below 1400"
    );
    assert_eq!(too_big(&samples[..1]), None);
}

#[test]
fn the_rounds_say_what_stopped_them() {
    let settled = ProbeFinding::RoundsStopped {
        rounds: 2,
        elapsed_seconds: 31.0,
        budget_seconds: 60.0,
        stopped_by: StopReason::Settled,
        unsettled: Vec::new(),
        plan: None,
        budget: None,
    };
    assert_eq!(settled.severity(), Severity::Verdict);
    assert!(
        settled
            .to_string()
            .starts_with("--until-stable: stopped after 2 round(s), 31"),
        "{settled}"
    );
    let unsettled: Vec<Unsettled> = (1..=8)
        .map(|ttl| Unsettled {
            ttl,
            figure: Figure::AnswerPerByte,
            half_width_ms: Some(41.2e-6),
            tolerance_ms: 12.1e-6,
        })
        .collect();
    let budget = ProbeFinding::RoundsStopped {
        rounds: 3,
        elapsed_seconds: 52.0,
        budget_seconds: 60.0,
        stopped_by: StopReason::Budget,
        unsettled,
        plan: Some(RoundPlan {
            ttls: vec![2, 3],
            round_seconds: 12.4,
            rounds_to_settle: Some(3),
            seconds_to_settle: Some(37.2),
            widest: None,
        }),
        budget: Some(Box::new(Budget {
            seconds: 60.0,
            from_path: false,
            path_seconds: Some(160.0),
            cap_seconds: 60.0,
            first_plan: Some(RoundPlan {
                ttls: vec![1, 2, 3],
                round_seconds: 20.0,
                rounds_to_settle: Some(7),
                seconds_to_settle: Some(140.0),
                widest: Some(Unsettled {
                    ttl: 3,
                    figure: Figure::PerByte,
                    half_width_ms: Some(56.0e-6),
                    tolerance_ms: 21.2e-6,
                }),
            }),
        })),
    };
    assert_eq!(budget.severity(), Severity::Warning);
    let text = budget.to_string();
    assert!(text.contains("within the budget of 60"), "{text}");
    assert!(
        text.ends_with("; the path asked for about 160 s after round 1 (its widest figure, hop 3 per byte +-56.0 ns/B (tolerance 21.2 ns/B), projects about 7 more round(s) of 20 s if the intervals narrow as one over the root of the probes); the budget given was 60 s, which stopped short of it"),
        "{text}"
    );
    assert!(
        text.contains("hop 1 answer per byte +-41.2 ns/B (tolerance 12.1 ns/B)"),
        "{text}"
    );
    assert!(text.contains("and 2 more; rounds planned from the path: the next would probe hop(s) 2, 3 only (about 12.4 s"), "{text}");
    assert!(
        text.contains("about 3 more such round(s), 37.2 s"),
        "{text}"
    );
    let typed = wirespeed_report::Finding::of(budget.severity(), &budget);
    assert_eq!(typed.kind, "rounds_stopped");
    assert_eq!(typed.evidence["stopped_by"], "budget");
    assert_eq!(typed.evidence["plan"]["rounds_to_settle"], 3);
    assert_eq!(typed.evidence["budget"]["path_seconds"], 160.0);
    // The bare flag: the budget is the path's, capped by --max-time.
    let Some(mut planned) = (match &budget {
        ProbeFinding::RoundsStopped { budget, .. } => budget.as_deref().cloned(),
        _ => None,
    }) else {
        panic!("a budget")
    };
    planned.from_path = true;
    planned.cap_seconds = 600.0;
    planned.seconds = 160.0;
    let text = budget_text(&planned, false);
    assert!(
        text.starts_with(
            "budget planned from the path after round 1: 160 s (its widest figure, hop 3 per byte"
        ),
        "{text}"
    );
    planned.cap_seconds = 100.0;
    assert!(
        budget_text(&planned, true).ends_with("capped by --max-time 100 s"),
        "{}",
        budget_text(&planned, true)
    );
}

#[test]
fn a_step_in_the_minimums_is_the_one_verdict() {
    let step = ProbeFinding::BufferingStep {
        hop: "hop 1".into(),
        jump_seconds: 0.2e-3,
        between_bytes: [512.0, 1024.0],
        f_statistic: 31.25,
    };
    assert_eq!(step.severity(), Severity::Verdict);
    assert!(
        step.to_string().starts_with(
            "hop 1: the minimums step by +0.2000 ms between 512 and 1024 bytes crossed (F = 31.2"
        ),
        "{step}"
    );
    let typed = wirespeed_report::Finding::of(step.severity(), &step);
    assert_eq!(typed.kind, "buffering_step");
    assert_eq!(typed.evidence["jump_seconds"], 0.2e-3);
    assert_eq!(
        ProbeFinding::StoppedAtMaxTime {
            max_time_seconds: 2.0
        }
        .severity(),
        Severity::Warning
    );
}
