//! The agent's live counters (issue 34): what its test streams move shows in its totals
//! while the test runs, at least once a second, not only when the session ends; and a client
//! without the key is recorded as refused for authentication.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wirespeed_net::agent::{AgentHandle, AgentStats, SessionRecord};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::{
    Agent, AgentConfig, Amount, ClientConfig, ClientError, Direction, Protocol, TestSpec, client,
};

fn agent(config: AgentConfig) -> (SocketAddr, AgentHandle) {
    let a = Agent::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    (addr, h)
}

fn config(addr: SocketAddr, spec: TestSpec) -> ClientConfig {
    ClientConfig {
        agent: addr,
        bind: None,
        spec,
        auth: None,
        cpu: None,
        idle_timeout: Duration::from_secs(5),
        interrupt: None,
        source: None,
    }
}

/// Runs `spec` for 3 s in a thread and reads the agent's totals three times while it runs.
fn read_while_running(addr: SocketAddr, h: &AgentHandle, spec: TestSpec) -> Vec<AgentStats> {
    let test = std::thread::spawn(move || {
        client::run(
            &config(addr, spec),
            &mut |_: &wirespeed_net::report::Interval| {},
        )
    });
    let began = Instant::now();
    let mut seen = Vec::new();
    for at in [1.0, 1.7, 2.4] {
        std::thread::sleep(Duration::from_secs_f64(at).saturating_sub(began.elapsed()));
        seen.push(h.stats());
    }
    let out = test.join().unwrap().unwrap();
    assert_eq!(out.error, None);
    seen
}

#[test]
fn tcp_bytes_move_in_the_totals_while_the_test_runs() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent(AgentConfig::default());
    let seen = read_while_running(
        addr,
        &h,
        TestSpec {
            amount: Amount::Seconds(3.0),
            direction: Direction::Both,
            ..TestSpec::default()
        },
    );
    for pair in seen.windows(2) {
        assert!(pair[0].test_bytes_received > 0, "{seen:?}");
        assert!(pair[0].test_bytes_sent > 0, "{seen:?}");
        assert!(
            pair[1].test_bytes_received > pair[0].test_bytes_received,
            "{seen:?}"
        );
        assert!(
            pair[1].test_bytes_sent > pair[0].test_bytes_sent,
            "{seen:?}"
        );
    }
    // At the end the totals hold every byte the agent's report counts (the warm-up too).
    let end = h.stats();
    assert!(end.test_bytes_received >= seen[2].test_bytes_received);
    assert_eq!(end.test_datagrams_received, 0, "TCP moves no datagrams");
    h.stop();
}

#[test]
fn udp_datagrams_move_in_the_totals_while_the_test_runs() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent(AgentConfig::default());
    let seen = read_while_running(
        addr,
        &h,
        TestSpec {
            protocol: Protocol::Udp,
            amount: Amount::Seconds(3.0),
            direction: Direction::Receive,
            length_bytes: 1000,
            rate_bits_per_second: 8_000_000,
            ..TestSpec::default()
        },
    );
    for pair in seen.windows(2) {
        assert!(pair[0].test_datagrams_sent > 0, "{seen:?}");
        assert!(
            pair[1].test_datagrams_sent > pair[0].test_datagrams_sent,
            "{seen:?}"
        );
        assert!(
            pair[1].test_bytes_sent > pair[0].test_bytes_sent,
            "{seen:?}"
        );
    }
    // 1,000 datagrams a second: about 1,000 between reads 0.7 s apart, with a wide margin.
    let moved = seen[2].test_datagrams_sent - seen[1].test_datagrams_sent;
    assert!((200..=2000).contains(&moved), "{moved} datagrams in 0.7 s");
    h.stop();
}

#[test]
fn a_client_without_the_key_is_refused_for_authentication() {
    let _loading = crate::rates::loading();
    let records = Arc::new(Mutex::new(Vec::<SessionRecord>::new()));
    let (addr, h) = agent(AgentConfig {
        auth: Some(AuthKey::from_bytes(b"a shared secret of some length")),
        on_session: Some({
            let records = records.clone();
            Arc::new(move |r: &SessionRecord| records.lock().unwrap().push(r.clone()))
        }),
        ..AgentConfig::default()
    });
    let spec = TestSpec {
        amount: Amount::Bytes(1000),
        ..TestSpec::default()
    };
    let got = client::run(
        &config(addr, spec),
        &mut |_: &wirespeed_net::report::Interval| {},
    );
    assert!(matches!(got, Err(ClientError::KeyRequired)), "{got:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while records.lock().unwrap().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let records = records.lock().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].outcome, "refused");
    let message = records[0].message.as_deref().unwrap_or("");
    assert!(message.contains("authentication required"), "{message}");
    h.stop();
}
