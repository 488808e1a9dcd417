use wirespeed_net::agent::AgentStats;
use wirespeed_net::agent_config::SessionRecord;
use wirespeed_net::metrics::agent_page::*;
use wirespeed_net::metrics::listener::ListenerStats;

fn record(outcome: &'static str, message: Option<&str>) -> SessionRecord {
    SessionRecord {
        session: 1,
        peer: "198.18.0.7:4000".into(),
        outcome,
        message: message.map(String::from),
        spec: None,
        report: None,
        seconds: 0.1,
        queued_seconds: None,
        protocol: None,
    }
}

#[test]
fn every_outcome_and_reason_is_a_series_from_the_start() {
    let p = page(
        &AgentStats::default(),
        &SessionTotals::default(),
        &ListenerStats::default(),
        false,
    );
    for outcome in OUTCOMES {
        assert!(
            p.contains(&format!(
                "wirespeed_agent_sessions_finished_total{{outcome=\"{outcome}\"}} 0\n"
            )),
            "{p}"
        );
    }
    for reason in REASONS {
        assert!(p.contains(&format!(
            "wirespeed_agent_refused_total{{reason=\"{reason}\"}} 0\n"
        )));
    }
    assert!(p.contains("wirespeed_agent_test_bytes_total{direction=\"received\"} 0\n"));
    assert!(p.contains("wirespeed_agent_test_datagrams_total{direction=\"sent\"} 0\n"));
    for family in [
        "wirespeed_agent_sessions ",
        "wirespeed_agent_refused_total ",
        "process_cpu_seconds_total ",
    ] {
        assert_eq!(
            p.matches(&format!("# TYPE {family}")).count(),
            1,
            "{family}"
        );
    }
}

#[test]
fn refusals_fall_into_reasons_and_clients_show_only_when_asked() {
    let mut t = SessionTotals::default();
    t.record(&record(
        "refused",
        Some("refused by the agent: authentication required (x)"),
    ));
    t.record(&record(
        "refused",
        Some("refused by the agent: -P 16 is over --max-streams 8"),
    ));
    t.record(&record("failed", Some("oops")));
    let stats = AgentStats {
        refused_pending: 2,
        test_bytes_sent: 5,
        ..AgentStats::default()
    };
    let p = page(&stats, &t, &ListenerStats::default(), false);
    assert!(
        p.contains("wirespeed_agent_refused_total{reason=\"authentication\"} 1\n"),
        "{p}"
    );
    assert!(p.contains("wirespeed_agent_refused_total{reason=\"limit\"} 1\n"));
    assert!(p.contains("wirespeed_agent_refused_total{reason=\"pending\"} 2\n"));
    assert!(p.contains("wirespeed_agent_sessions_finished_total{outcome=\"failed\"} 1\n"));
    assert!(p.contains("wirespeed_agent_test_bytes_total{direction=\"sent\"} 5\n"));
    t.last.push_back(("198.18.0.7".into(), 8e6, 1.0));
    assert!(!page(&stats, &t, &ListenerStats::default(), false).contains("198.18.0.7"));
    assert!(
        page(&stats, &t, &ListenerStats::default(), true)
            .contains("wirespeed_agent_last_test_bits_per_second{client=\"198.18.0.7\"} 8000000\n")
    );
    assert!(
        !page(&stats, &t, &ListenerStats::default(), false).contains("wirespeed_agent_iperf3_")
    );
}

/// iperf3 tests add to the agent's own series and show on their own beside them.
#[test]
fn iperf3_tests_count_like_the_agents_own() {
    let mut t = SessionTotals::default();
    t.record(&record("completed", None));
    // One native session and one iperf3 test, each in one of the agent's slots.
    let stats = AgentStats {
        sessions: 2,
        test_bytes_received: 100,
        iperf3: Some(wirespeed_net::agent::Iperf3Counts {
            sessions: 1,
            completed: 2,
            refused: 3,
            refused_sessions: 1,
            bytes_sent: 7,
            bytes_received: 1000,
        }),
        ..AgentStats::default()
    };
    let p = page(&stats, &t, &ListenerStats::default(), false);
    for line in [
        "wirespeed_agent_sessions 2\n",
        "wirespeed_agent_sessions_finished_total{outcome=\"completed\"} 3\n",
        "wirespeed_agent_sessions_finished_total{outcome=\"refused\"} 3\n",
        "wirespeed_agent_test_bytes_total{direction=\"received\"} 1100\n",
        "wirespeed_agent_iperf3_sessions 1\n",
        "wirespeed_agent_iperf3_sessions_finished_total{outcome=\"completed\"} 2\n",
        "wirespeed_agent_iperf3_test_bytes_total{direction=\"sent\"} 7\n",
        "wirespeed_agent_refused_total{reason=\"sessions\"} 1\n",
    ] {
        assert!(p.contains(line), "{line} missing from\n{p}");
    }
}
