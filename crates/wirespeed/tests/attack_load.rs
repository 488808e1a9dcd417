//! Issue 13's load findings replayed against a real `wirespeed serve` on loopback: the exact
//! bytes that once killed the agent (finding 1: one datagram naming host 0xFFFFFFFF), turned
//! it into a traffic cannon (finding 2: a destination that merely echoes, or is not asked at
//! all), and wrapped its schedule round (finding 7). After each, the agent must be alive, its
//! resident memory bounded, and a legitimate test must still pass. Loopback only; every agent
//! is started here on port 0 and stopped by its PID; every wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wirespeed_model::load::{LengthDeck, Schedule};
use wirespeed_net::control::{Message, PROTOCOL_VERSION, decode, encode};
use wirespeed_net::load::{LoadMessage, LoadTest};

use crate::util::{ChildGuard, wirespeed};

/// An agent process of this test, killed by its PID when dropped.
struct Agent {
    child: ChildGuard,
    addr: SocketAddr,
}

impl Agent {
    fn start(bind: &str, extra: &[&str]) -> Agent {
        let mut child = ChildGuard::new(
            Command::new(env!("CARGO_BIN_EXE_wirespeed"))
                .args(["serve", "-B", bind, "-p", "0", "--idle-timeout", "3s"])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the agent starts"),
        );
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        let addr = first
            .split_whitespace()
            .find_map(|w| w.trim_end_matches(',').parse::<SocketAddr>().ok());
        let Some(addr) = addr else {
            drop(child);
            panic!("no address in {first:?}");
        };
        Agent { child, addr }
    }

    fn port(&self) -> String {
        self.addr.port().to_string()
    }

    /// Alive, and its resident set under 200 MB (it idles near 10 MB).
    fn assert_alive_and_small(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the agent died: {:?}",
            self.child.try_wait()
        );
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmRSS");
        assert!(kb < 200_000, "agent RSS {kb} kB");
    }
}

/// A hostile controller: the handshake, then whatever load messages it likes.
struct Hostile {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Hostile {
    fn connect(agent: &Agent) -> Hostile {
        let stream = TcpStream::connect_timeout(&agent.addr, Duration::from_secs(3)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut h = Hostile {
            stream,
            buf: Vec::new(),
        };
        h.send(&Message::Hello {
            protocol_version: PROTOCOL_VERSION,
            software: "attack_load".into(),
            nonce: None,
        });
        match h.recv() {
            Message::Welcome { .. } => h,
            other => panic!("no welcome: {other:?}"),
        }
    }

    fn send(&mut self, m: &Message) {
        self.stream.write_all(&encode(m)).unwrap();
    }

    fn load(&mut self, m: LoadMessage) -> Message {
        self.send(&Message::Load(m));
        self.recv()
    }

    /// The next message, within 10 s.
    fn recv(&mut self) -> Message {
        let t = Instant::now();
        loop {
            if let Some((m, used)) = decode(&self.buf).unwrap() {
                self.buf.drain(..used);
                return m;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "no answer");
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the agent closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// The agent's clock, read once.
    fn agent_now(&mut self) -> u64 {
        match self.load(LoadMessage::ClockQuery) {
            Message::Load(LoadMessage::ClockReply { agent_ns }) => agent_ns,
            other => panic!("{other:?}"),
        }
    }
}

fn short() -> Schedule {
    Schedule {
        settle_ns: 100_000_000,
        transmit_ns: 500_000_000,
        measure_ns: 200_000_000,
        cooldown_ns: 100_000_000,
    }
}

fn test(tag: u64, schedule: Schedule, count_sink: bool) -> LoadTest {
    LoadTest {
        tag,
        host: 0,
        hosts: 1,
        schedule,
        deck: LengthDeck::from_counts(&[(512, 1)]).unwrap(),
        rate_bits_per_second: Some(2e6),
        count_sink,
        seed: 1,
        raw: None,
        tos: None,
    }
}

/// The datagram header of a load test: tag, host, flags (1: in the window).
fn header(tag: u64, host: u32, flags: u32, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len.max(16)];
    d[..8].copy_from_slice(&tag.to_be_bytes());
    d[8..12].copy_from_slice(&host.to_be_bytes());
    d[12..16].copy_from_slice(&flags.to_be_bytes());
    d
}

/// A legitimate load test through the agents (`--sink 1` when there are two) and a TCP test
/// to the first: both must pass.
fn legitimate_tests_pass(agents: &[&Agent]) {
    let mut args = vec![
        "load",
        "--lengths",
        "512",
        "--rate",
        "5M",
        "--settle",
        "0.1s",
        "--transmit",
        "0.6s",
        "--measure",
        "0.3s",
        "--cooldown",
        "0.1s",
        "--no-model",
        "--json",
        "--timeout",
        "3s",
    ];
    let addrs: Vec<String> = agents.iter().map(|a| a.addr.to_string()).collect();
    for a in &addrs {
        args.extend(["--agent", a.as_str()]);
    }
    let hosts = agents.len().to_string();
    args.extend(["--hosts", hosts.as_str()]);
    if agents.len() > 1 {
        args.extend(["--sink", "1"]);
    }
    let run = wirespeed(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let row = &doc["result"]["rows"][0];
    assert_eq!(row["complete"], true, "{row}");
    let tcp = wirespeed(&[
        "tcp",
        &agents[0].addr.ip().to_string(),
        "-p",
        &agents[0].port(),
        "-n",
        "1MiB",
    ]);
    assert_eq!(tcp.status, 0, "{}", tcp.stderr);
}

#[test]
fn finding_1_a_datagram_naming_host_0xffffffff_is_a_stray_not_32_gib() {
    let mut agent = Agent::start("127.0.0.1", &[]);
    let mut evil = Hostile::connect(&agent);
    let tag = 0x6576_696c_0000_0001;
    let sink_port = match evil.load(LoadMessage::Announce {
        test: test(tag, short(), true),
    }) {
        Message::Load(LoadMessage::Ready { sink_port }) => sink_port,
        other => panic!("{other:?}"),
    };
    let sink = SocketAddr::new(agent.addr.ip(), sink_port);
    let spray = UdpSocket::bind("127.0.0.1:0").unwrap();
    // The bytes of the finding: this test's tag, host 0xFFFFFFFF, in the window; then other
    // hosts, flags and lengths that were never announced.
    let bad = [
        header(tag, u32::MAX, 1, 470),
        header(tag, 1, 1, 470),
        header(tag, 0, 0xFFFF_FFFF, 470),
        // A length the deck never deals (small: the spray must not overflow the sink's
        // receive buffer and cost the agent's own packets).
        header(tag, 0, 1, 471),
        header(tag, 0x8000_0000, 2, 32),
    ];
    for d in &bad {
        spray.send_to(d, sink).unwrap();
    }
    let start = evil.agent_now() + 100_000_000;
    evil.send(&Message::Load(LoadMessage::Go {
        start_at_ns: start,
        destination: None,
    }));
    for _ in 0..50 {
        for d in &bad {
            let _ = spray.send_to(d, sink);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let report = match evil.recv() {
        Message::Load(LoadMessage::Report { report }) => report,
        other => panic!("{other:?}"),
    };
    let counts = report.sink.expect("it counted");
    assert_eq!(counts.received.len(), 1, "sized by the announcement");
    assert_eq!(
        counts.received[0], report.counters.packets,
        "its own packets only"
    );
    assert!(
        counts.strays + counts.foreign >= 50,
        "the spray is counted, not believed: {counts:?}"
    );
    agent.assert_alive_and_small();
    legitimate_tests_pass(&[&agent]);
    agent.assert_alive_and_small();
}

/// A plain UDP echo service on `ip`: echoes everything, counts datagrams and the longest.
struct Echo {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    datagrams: Arc<AtomicU64>,
    longest: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Echo {
    fn start(ip: &str) -> Echo {
        let sock = UdpSocket::bind(format!("{ip}:0")).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let datagrams = Arc::new(AtomicU64::new(0));
        let longest = Arc::new(AtomicU64::new(0));
        let (s, d, l) = (stop.clone(), datagrams.clone(), longest.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            let t = Instant::now();
            while !s.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(60) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    d.fetch_add(1, Ordering::Relaxed);
                    l.fetch_max(n as u64, Ordering::Relaxed);
                    let _ = sock.send_to(&buf[..n], from);
                }
            }
        });
        Echo {
            addr,
            stop,
            datagrams,
            longest,
            thread: Some(thread),
        }
    }

    fn counts(&self) -> (u64, u64) {
        (
            self.datagrams.load(Ordering::Relaxed),
            self.longest.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn refusal(m: Message) -> String {
    match m {
        Message::Refused { reason } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn finding_2_an_echo_service_elsewhere_gets_no_test_traffic() {
    let echo = Echo::start("127.0.0.2");
    let mut strict = Agent::start("127.0.0.1", &[]);
    let mut open = Agent::start("127.0.0.1", &["--allow-destination", "127.0.0.0/8"]);
    let tag = 0x6576_696c_0000_0002;

    // 1. The old bytes: announce, then 'go' straight at the echo service.
    let mut evil = Hostile::connect(&strict);
    assert!(matches!(
        evil.load(LoadMessage::Announce {
            test: test(tag, short(), false)
        }),
        Message::Load(LoadMessage::Ready { .. })
    ));
    let start = evil.agent_now() + 50_000_000;
    let why = refusal(evil.load(LoadMessage::Go {
        start_at_ns: start,
        destination: Some(echo.addr),
    }));
    assert!(why.contains("did not consent"), "{why}");

    // 2. Asking for the echo service as a target: the rule refuses it, naming the flag.
    let mut evil = Hostile::connect(&strict);
    evil.load(LoadMessage::Announce {
        test: test(tag, short(), false),
    });
    let why = refusal(evil.load(LoadMessage::Target {
        destination: echo.addr,
    }));
    assert!(
        why.contains("--allow-destination") && why.contains("127.0.0.2"),
        "{why}"
    );
    assert_eq!(why.lines().count(), 1);
    assert_eq!(
        echo.counts().0,
        0,
        "nothing at all reached the echo service"
    );

    // 3. An agent that allows 127.0.0.0/8 but holds no key: a bare nonce is no proof beyond
    // its client's address (anyone on the path could relay it, issue 32), so the target is
    // refused before a single datagram, naming the key; 'go' there too.
    let mut evil = Hostile::connect(&open);
    evil.load(LoadMessage::Announce {
        test: test(tag, short(), false),
    });
    let why = refusal(evil.load(LoadMessage::Target {
        destination: echo.addr,
    }));
    assert!(why.contains("--auth-key-file"), "{why}");
    let mut evil = Hostile::connect(&open);
    evil.load(LoadMessage::Announce {
        test: test(tag, short(), false),
    });
    let start = evil.agent_now() + 50_000_000;
    let why = refusal(evil.load(LoadMessage::Go {
        start_at_ns: start,
        destination: Some(echo.addr),
    }));
    assert!(why.contains("did not consent"), "{why}");
    // Past any schedule: the echo service saw the 32-byte nonces (at most 20 per target, two
    // targets) and not one test datagram (512-byte frames: 470-byte datagrams).
    std::thread::sleep(Duration::from_millis(800));
    let (datagrams, longest) = echo.counts();
    assert!(
        datagrams <= 40,
        "{datagrams} datagrams reached the echo service"
    );
    assert!(
        longest <= 32,
        "a {longest}-byte datagram reached the echo service"
    );

    strict.assert_alive_and_small();
    open.assert_alive_and_small();
    // The client's own address still works, and so does a sink at another address that is a
    // wirespeed agent of the test when the generator's operator allowed it.
    legitimate_tests_pass(&[&strict, &open]);
    // A keyless generator beyond its client's address is refused, naming the key (issue 32: a
    // bare nonce can be relayed by anyone on the path); the keyed case passes in
    // wirespeed-net's tests/load.rs.
    let mut elsewhere = Agent::start("127.0.0.2", &[]);
    let (a, b) = (elsewhere.addr.to_string(), open.addr.to_string());
    let keyless = wirespeed(&[
        "load",
        "--agent",
        &a,
        "--agent",
        &b,
        "--hosts",
        "2",
        "--sink",
        "1",
        "--lengths",
        "512",
        "--rate",
        "5M",
        "--no-model",
        "--timeout",
        "3s",
    ]);
    assert_eq!(keyless.status, 2, "{}", keyless.stderr);
    assert!(
        keyless.stderr.contains("--auth-key-file"),
        "{}",
        keyless.stderr
    );
    let refused = wirespeed(&[
        "load",
        "--agent",
        &elsewhere.addr.to_string(),
        "--agent",
        &strict.addr.to_string(),
        "--hosts",
        "2",
        "--sink",
        "1",
        "--lengths",
        "512",
        "--rate",
        "5M",
        "--no-model",
        "--timeout",
        "3s",
    ]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--allow-destination"),
        "{}",
        refused.stderr
    );
    for a in [&mut strict, &mut open, &mut elsewhere] {
        a.assert_alive_and_small();
    }
}

#[test]
fn finding_7_a_schedule_adding_past_2_64_is_refused_and_one_over_the_limit_too() {
    let mut agent = Agent::start("127.0.0.1", &["--max-duration", "5s"]);
    let wraps = Schedule {
        settle_ns: u64::MAX - 1,
        transmit_ns: 2,
        measure_ns: 1,
        cooldown_ns: 0,
    };
    let mut evil = Hostile::connect(&agent);
    let why = refusal(evil.load(LoadMessage::Announce {
        test: test(7, wraps, true),
    }));
    assert!(why.contains("2^64"), "{why}");
    let long = Schedule {
        settle_ns: 1_000_000_000,
        transmit_ns: 4_000_000_000,
        measure_ns: 1_000_000_000,
        cooldown_ns: 1_000_000_000,
    };
    let mut evil = Hostile::connect(&agent);
    let why = refusal(evil.load(LoadMessage::Announce {
        test: test(7, long, true),
    }));
    assert!(
        why.contains("--max-duration") && why.contains("6 s"),
        "{why}"
    );
    // Hosts out of range: no sink sized by them.
    let mut evil = Hostile::connect(&agent);
    let why = refusal(evil.load(LoadMessage::Announce {
        test: LoadTest {
            hosts: u32::MAX,
            ..test(7, short(), true)
        },
    }));
    assert!(why.contains("1 to 1024"), "{why}");
    let mut evil = Hostile::connect(&agent);
    let why = refusal(evil.load(LoadMessage::Announce {
        test: LoadTest {
            rate_bits_per_second: Some(-1.0),
            ..test(7, short(), true)
        },
    }));
    assert!(why.contains("not a positive rate"), "{why}");
    agent.assert_alive_and_small();
    legitimate_tests_pass(&[&agent]);
}
