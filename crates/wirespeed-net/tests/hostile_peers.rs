//! Issue 32, finding 4: a peer's text and figures are hostile. A forged error (lines and
//! escape codes) reaches the agent's session log escaped; a hostile source agent's impossible
//! figures are refused by the mesh controller's call, naming the agent and the figure; and an
//! agent's idle sessions give their slots up to a client that needs one. Loopback only, every
//! wait bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wirespeed_net::agent::SessionRecord;
use wirespeed_net::control::mesh::{MeshMessage, PairLatency, PairResult, PairTest};
use wirespeed_net::control::{Message, PROTOCOL_VERSION, decode, encode};
use wirespeed_net::{Agent, AgentConfig, Amount, ClientConfig, Limits, TestSpec, client};

fn read_message(s: &mut TcpStream) -> Message {
    let mut buf = Vec::new();
    let t = Instant::now();
    loop {
        if let Some((m, _)) = decode(&buf).unwrap() {
            return m;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no message");
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

const FORGED: &str = "bye\nsession 99 127.0.0.1:1 completed\n\u{1b}[2J\u{1b}]0;owned\u{7}";

#[test]
fn a_forged_first_error_reaches_the_session_log_escaped() {
    let _loading = crate::rates::loading();
    let records = Arc::new(Mutex::new(Vec::<SessionRecord>::new()));
    let log = records.clone();
    let a = Agent::bind(
        "127.0.0.1:0".parse().unwrap(),
        AgentConfig {
            on_session: Some(Arc::new(move |r: &SessionRecord| {
                log.lock().unwrap().push(r.clone())
            })),
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&encode(&Message::Error {
        message: FORGED.into(),
    }))
    .unwrap();
    let t = Instant::now();
    while records.lock().unwrap().is_empty() {
        assert!(t.elapsed() < Duration::from_secs(5), "no record");
        std::thread::sleep(Duration::from_millis(10));
    }
    let message = records.lock().unwrap()[0].message.clone().unwrap();
    assert!(!message.chars().any(char::is_control), "{message:?}");
    assert!(
        message.contains(r"bye\nsession 99 127.0.0.1:1 completed\n\x1b[2J\x1b]0;owned\x07"),
        "{message}"
    );
    h.stop();
}

/// A source agent that answers every mesh run with `result`, and whose refusal, if asked
/// for, is the forged text.
fn hostile_source(result: Option<PairResult>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let _hello = read_message(&mut s);
            s.write_all(&encode(&Message::Welcome {
                protocol_version: PROTOCOL_VERSION,
                software: "wirespeed 0.1.0\n\u{1b}[31mmesh ok".into(),
            }))
            .unwrap();
            let _run = read_message(&mut s);
            let answer = match result {
                Some(result) => Message::Mesh(MeshMessage::Result { result }),
                None => Message::Refused {
                    reason: FORGED.into(),
                },
            };
            s.write_all(&encode(&answer)).unwrap();
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    addr
}

fn pair_test() -> PairTest {
    PairTest {
        mesh_version: wirespeed_net::control::mesh::MESH_VERSION,
        destination: "127.0.0.1:9".parse().unwrap(),
        tcp_seconds: 0.5,
        probes: 0,
        probe_gap_seconds: 0.01,
        tos: None,
    }
}

#[test]
fn a_hostile_agents_impossible_figures_and_forged_text_are_refused_by_name() {
    let _loading = crate::rates::loading();
    let cases: [(&str, PairResult); 4] = [
        (
            "impossible rate",
            PairResult {
                tcp_bits_per_second: Some(1.7e308),
                tcp_bytes: Some(1_000_000),
                tcp_seconds: Some(1.0),
                ..PairResult::default()
            },
        ),
        (
            "impossible rate",
            PairResult {
                tcp_bits_per_second: Some(-5e9),
                ..PairResult::default()
            },
        ),
        (
            "impossible probe count",
            PairResult {
                latency: Some(PairLatency {
                    sent: 10,
                    answered: 11,
                    ..PairLatency::default()
                }),
                ..PairResult::default()
            },
        ),
        (
            "impossible latency",
            PairResult {
                latency: Some(PairLatency {
                    sent: 10,
                    answered: 10,
                    min_seconds: Some(0.005),
                    median_seconds: Some(0.001),
                    p90_seconds: Some(0.006),
                    max_seconds: Some(0.007),
                }),
                ..PairResult::default()
            },
        ),
    ];
    for (needle, result) in cases {
        let source = hostile_source(Some(result));
        let e = wirespeed_net::mesh::run_pair(source, None, &pair_test(), Duration::from_secs(3))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("agent {source} reported an {needle}")),
            "{e}"
        );
    }
    // A plausible result passes, its errors escaped.
    let source = hostile_source(Some(PairResult {
        tcp_bits_per_second: Some(8e6),
        tcp_bytes: Some(1_000_000),
        tcp_seconds: Some(1.0),
        errors: vec![FORGED.into()],
        ..PairResult::default()
    }));
    let ok =
        wirespeed_net::mesh::run_pair(source, None, &pair_test(), Duration::from_secs(3)).unwrap();
    assert!(
        !ok.errors[0].chars().any(char::is_control),
        "{:?}",
        ok.errors
    );
    // A forged refusal is one line of visible characters.
    let source = hostile_source(None);
    let e = wirespeed_net::mesh::run_pair(source, None, &pair_test(), Duration::from_secs(3))
        .unwrap_err()
        .to_string();
    assert!(!e.chars().any(char::is_control), "{e:?}");
    assert!(e.contains(r"\n\x1b[2J"), "{e}");
}

#[test]
fn idle_sessions_give_their_slots_to_a_client_that_needs_one() {
    let _loading = crate::rates::loading();
    let a = Agent::bind(
        "127.0.0.1:0".parse().unwrap(),
        AgentConfig {
            limits: Limits {
                max_sessions: 8,
                ..Limits::default()
            },
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    // Eight idle hellos from eight addresses (the per-address share is not what is tested).
    let mut idlers = Vec::new();
    for i in 0..8u8 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(&SocketAddr::from(([127, 0, 1, 2 + i], 0)).into())
            .unwrap();
        s.connect(&addr.into()).unwrap();
        let mut s: TcpStream = s.into();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&encode(&Message::Hello {
            protocol_version: PROTOCOL_VERSION,
            software: "idle".into(),
            nonce: None,
        }))
        .unwrap();
        assert!(matches!(read_message(&mut s), Message::Welcome { .. }));
        idlers.push(s);
    }
    assert_eq!(h.stats().sessions, 8);
    // Within the grace, a newcomer is refused; after it, an idler makes room.
    std::thread::sleep(wirespeed_net::agent::IDLE_SLOT_GRACE + Duration::from_millis(300));
    let cfg = ClientConfig {
        agent: addr,
        bind: None,
        spec: TestSpec {
            amount: Amount::Bytes(100_000),
            ..TestSpec::default()
        },
        auth: None,
        cpu: None,
        idle_timeout: Duration::from_secs(5),
        interrupt: None,
        source: None,
    };
    let out = client::run(&cfg, &mut |_: &wirespeed_net::report::Interval| {}).unwrap();
    assert_eq!(out.agent.unwrap().streams[0].bytes, 100_000);
    assert!(h.stats().evicted_idle >= 1, "{:?}", h.stats());
    h.stop();
}

/// A hello from `from` to `addr`, welcomed; the connection, its read bounded.
fn welcomed(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let mut s = hello_from(from, addr);
    assert!(matches!(read_message(&mut s), Message::Welcome { .. }));
    s
}

/// A hello from `from` to `addr`; the connection, its read bounded.
fn hello_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    s.connect(&addr.into()).unwrap();
    let mut s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&encode(&Message::Hello {
        protocol_version: PROTOCOL_VERSION,
        software: "share".into(),
        nonce: None,
    }))
    .unwrap();
    s
}

/// The refusal that ends `s`'s session (after at most a few other messages).
fn refusal(s: &mut TcpStream) -> String {
    for _ in 0..4 {
        if let Message::Refused { reason } = read_message(s) {
            return reason;
        }
    }
    panic!("no refusal");
}

/// Issue 32 item 3: the per-address caps are the operator's (`serve
/// --max-sessions-per-address`, `--max-echo-per-address`): one address is refused beyond them,
/// naming the flag, while another address is still served, and an echo session beyond its
/// cap is refused while the address's other sessions stand.
#[test]
fn per_address_caps_hold_at_the_operators_settings() {
    let _loading = crate::rates::loading();
    let a = Agent::bind(
        "127.0.0.1:0".parse().unwrap(),
        AgentConfig {
            limits: Limits {
                max_sessions: 16,
                max_sessions_per_address: Some(3),
                max_echo_per_address: Some(1),
                ..Limits::default()
            },
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    let mut held: Vec<TcpStream> = (0..3).map(|_| welcomed([127, 0, 2, 2], addr)).collect();
    let mut fourth = hello_from([127, 0, 2, 2], addr);
    let why = refusal(&mut fourth);
    assert!(why.contains("--max-sessions-per-address"), "{why}");
    assert!(why.contains("holds 3 sessions"), "{why}");
    // Another address is not counted against the first one's share.
    let _other = welcomed([127, 0, 2, 3], addr);
    // One echo session per address: the first opens, the second is refused by name.
    let udp = std::net::UdpSocket::bind("127.0.2.2:0").unwrap();
    let open = Message::Echo(wirespeed_net::control::echo::EchoMessage::Open {
        client_port: udp.local_addr().unwrap().port(),
        seconds: 3.0,
    });
    held[0].write_all(&encode(&open)).unwrap();
    assert!(
        matches!(read_message(&mut held[0]), Message::Echo(_)),
        "the first echo session opens"
    );
    held[1].write_all(&encode(&open)).unwrap();
    let why = refusal(&mut held[1]);
    assert!(why.contains("--max-echo-per-address"), "{why}");
    assert!(why.contains("holds 1 echo sessions"), "{why}");
    h.stop();
}

/// A peer's figure about its own schedule, the time a `-b` sender gave up behind its cap, is
/// checked on arrival as every message from a peer is: one that is not a time (NaN, infinite,
/// negative) is dropped, one over the stream's own time is that time, one within it is kept.
#[test]
fn a_peers_time_given_up_behind_its_cap_is_kept_within_its_stream() {
    use wirespeed_net::report::Role;
    use wirespeed_net::spec::Flow;
    use wirespeed_net::{CpuTime, SideReport, StreamReport};
    let stream = |id: u32, seconds: f64, skipped: Option<f64>| StreamReport {
        id,
        flow: Flow::Download,
        role: Role::Sender,
        bytes: 1000,
        calls: 1,
        seconds,
        cpu: CpuTime::default(),
        socket: Default::default(),
        tcp_info: None,
        udp: None,
        zerocopy: None,
        longest_call_seconds: None,
        skipped_in_window_seconds: skipped,
        drain: None,
        error: None,
    };
    let report = SideReport {
        streams: vec![
            stream(1, 2.0, Some(f64::NAN)),
            stream(2, 2.0, Some(-0.5)),
            stream(3, 2.0, Some(f64::INFINITY)),
            stream(4, 2.0, Some(5.0)),
            stream(5, 2.0, Some(0.25)),
            stream(6, 2.0, None),
            stream(7, f64::NAN, Some(0.25)),
        ],
        ..SideReport::default()
    };
    let Message::Results { report } = (Message::Results { report }).with_peer_text_escaped() else {
        unreachable!()
    };
    let got: Vec<Option<f64>> = report
        .streams
        .iter()
        .map(|s| s.skipped_in_window_seconds)
        .collect();
    assert_eq!(
        got,
        [None, None, None, Some(2.0), Some(0.25), None, Some(0.0)]
    );
}
