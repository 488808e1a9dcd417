//! `serve --exclusive` on loopback: a test that arrives while another runs waits and starts
//! when it ends; a client that names `+queue` in its hello hears `queued` meanwhile and reports
//! the wait, an older client waits without a word and still runs. Clients come from distinct
//! loopback addresses (tests are told apart by address). No timing is asserted: the tests wait
//! (bounded) for states and compare orders.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wirespeed_net::agent::{AgentHandle, SessionRecord};
use wirespeed_net::agent_config::Exclusive;
use wirespeed_net::client::Progress;
use wirespeed_net::control::{Message, PROTOCOL_VERSION, encode, encode_greeting};
use wirespeed_net::report::Interval;
use wirespeed_net::{Agent, AgentConfig, Amount, ClientConfig, TestSpec, client};

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

fn config(addr: SocketAddr, from: u8, amount: Amount) -> ClientConfig {
    ClientConfig {
        agent: addr,
        bind: Some(ip(from)),
        spec: TestSpec {
            amount,
            interval: Some(Duration::from_millis(100)),
            ..TestSpec::default()
        },
        auth: None,
        cpu: None,
        idle_timeout: Duration::from_secs(10),
        interrupt: None,
        source: None,
    }
}

/// Waits (at most 30 s) for `what` to hold.
fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ok() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Records intervals and queue notices.
#[derive(Default)]
struct Seen {
    intervals: Arc<AtomicBool>,
    notices: Vec<u32>,
}

impl Progress for Seen {
    fn interval(&mut self, _: &Interval) {
        self.intervals.store(true, Ordering::SeqCst);
    }
    fn queued(&mut self, position: u32, _: Duration) {
        self.notices.push(position);
    }
}

fn read_message(s: &mut TcpStream) -> Option<Message> {
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    wirespeed_net::control::read_message(s).ok()
}

#[test]
fn a_waiting_test_starts_when_the_running_one_ends_and_old_clients_wait_without_notices() {
    let _loading = crate::rates::loading();
    let records: Arc<Mutex<Vec<SessionRecord>>> = Arc::default();
    let log = records.clone();
    let agent = Agent::bind(
        "127.0.0.1:0".parse().unwrap(),
        AgentConfig {
            exclusive: Some(Exclusive {
                queue_max: 4,
                queue_timeout: Duration::from_secs(60),
            }),
            idle_timeout: Duration::from_secs(2),
            on_session: Some(Arc::new(move |r: &SessionRecord| {
                log.lock().unwrap().push(r.clone())
            })),
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = agent.local_addr().unwrap();
    let (handle, _thread): (AgentHandle, _) = agent.spawn().unwrap();

    // A: a long test from 127.0.0.2, stopped by its interrupt flag once the others wait.
    let stop_a = Arc::new(AtomicBool::new(false));
    let mut a_cfg = config(addr, 2, Amount::Seconds(60.0));
    a_cfg.interrupt = Some(stop_a.clone());
    let a_running = Arc::new(AtomicBool::new(false));
    let mut a_seen = Seen {
        intervals: a_running.clone(),
        ..Seen::default()
    };
    let a = std::thread::spawn(move || client::run(&a_cfg, &mut a_seen).map(|o| o.queued_seconds));
    until("A's data flows", || a_running.load(Ordering::SeqCst));

    // C: a new client from 127.0.0.4: it waits, hears the notices, reports the wait.
    let c_cfg = config(addr, 4, Amount::Bytes(100_000));
    let c = std::thread::spawn(move || {
        let mut seen = Seen::default();
        let out = client::run(&c_cfg, &mut seen).expect("C runs after A");
        (out.queued_seconds, seen.notices)
    });
    until("C waits", || handle.stats().queued == 1);

    // B: a client of the release before, from 127.0.0.3: its hello names no feature.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::new(ip(3), 0).into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut b: TcpStream = socket.into();
    b.write_all(&encode_greeting(&Message::Hello {
        protocol_version: PROTOCOL_VERSION,
        software: "wirespeed 0.0.9".into(),
        nonce: None,
    }))
    .unwrap();
    assert!(matches!(
        read_message(&mut b),
        Some(Message::Welcome { .. })
    ));
    b.write_all(&encode(&Message::Request {
        spec: TestSpec {
            amount: Amount::Bytes(1000),
            ..TestSpec::default()
        },
        client_udp_ports: vec![],
    }))
    .unwrap();
    until("B waits behind C", || handle.stats().queued == 2);
    assert_eq!(handle.stats().queued_total, 2);

    stop_a.store(true, Ordering::SeqCst);
    let a_queued = a.join().unwrap().expect("A ran");
    assert_eq!(a_queued, 0.0, "A did not wait");
    let (c_queued, notices) = c.join().unwrap();
    assert!(c_queued > 0.0, "C reports its wait");
    assert!(!notices.is_empty(), "C heard that it waits");
    assert!(
        notices.iter().all(|&p| p == 0),
        "C was first in line: {notices:?}"
    );
    // B's first message after its request is the acceptance: no notice it could not read.
    assert!(
        matches!(read_message(&mut b), Some(Message::Accepted { .. })),
        "an old client is accepted without a notice"
    );
    drop(b);
    until("every session logged", || {
        records.lock().unwrap().len() == 3
    });
    let records = records.lock().unwrap();
    let from = |last: u8| {
        records
            .iter()
            .find(|r| r.peer.starts_with(&format!("127.0.0.{last}:")))
            .unwrap()
            .clone()
    };
    assert!(from(2).queued_seconds.is_none());
    assert!(from(4).queued_seconds.unwrap() > 0.0);
    assert!(from(3).queued_seconds.unwrap() > 0.0);
    assert_eq!(handle.stats().queued, 0);
    handle.stop();
}

#[test]
fn a_full_queue_refuses_with_the_flag_to_change() {
    let _loading = crate::rates::loading();
    let agent = Agent::bind(
        "127.0.0.1:0".parse().unwrap(),
        AgentConfig {
            exclusive: Some(Exclusive {
                queue_max: 0,
                queue_timeout: Duration::from_secs(60),
            }),
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = agent.local_addr().unwrap();
    let (handle, _thread) = agent.spawn().unwrap();
    let stop_a = Arc::new(AtomicBool::new(false));
    let mut a_cfg = config(addr, 2, Amount::Seconds(60.0));
    a_cfg.interrupt = Some(stop_a.clone());
    let a_running = Arc::new(AtomicBool::new(false));
    let mut a_seen = Seen {
        intervals: a_running.clone(),
        ..Seen::default()
    };
    let a = std::thread::spawn(move || client::run(&a_cfg, &mut a_seen).is_ok());
    until("A's data flows", || a_running.load(Ordering::SeqCst));
    let err = client::run(
        &config(addr, 3, Amount::Bytes(1000)),
        &mut |_: &Interval| {},
    )
    .expect_err("no room to wait");
    assert!(err.to_string().contains("--queue-max"), "{err}");
    stop_a.store(true, Ordering::SeqCst);
    assert!(a.join().unwrap());
    assert_eq!(handle.stats().refused_queue, 1);
    handle.stop();
}
