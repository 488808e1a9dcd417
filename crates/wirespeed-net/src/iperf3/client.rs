//! A test against an iperf3 3.x server (`wirespeed tcp|udp HOST --iperf3`): wirespeed's
//! [`TestSpec`] said in iperf3's parameters, the streams run here, and the server's results
//! decoded into wirespeed's [`SideReport`] beside this end's, so that everything that reads a
//! wirespeed agent's report (the envelope, the verdicts) reads this one.
//!
//! What an iperf3 server does not report is listed in [`Outcome::missing`]: it sends no
//! `TCP_INFO` of its end, CPU only as percentages of its whole test, no socket facts and no
//! call counts.

use std::io;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol as SockProtocol, SockRef, Socket, Type};

use super::codec::{
    COOKIE_BYTES, Cookie, LEGACY_UDP_CONNECT_REPLY, MAX_RESULTS_BYTES, MAX_UDP_BLOCK_BYTES,
    MIN_UDP_BLOCK_BYTES, Params, Results, State, StreamResults, UDP_CONNECT_MSG, UDP_CONNECT_REPLY,
    encode_json, stream_id,
};
use super::stream::{self, Count, Shared, read_json, read_state, write_all_within};
use crate::client::{Progress, TestOutcome};
use crate::report::{CpuTime, Interval, IntervalSum, Role, SideReport, StreamReport, UdpReport};
use crate::sockopt;
use crate::spec::{Amount, Direction, Flow, Protocol, TestSpec};

/// How to run one test against an iperf3 server.
#[derive(Debug, Clone)]
pub struct Config {
    /// The server's address (port 5201 unless it was started with `-p`).
    pub server: SocketAddr,
    /// Local address to test from (`--bind`).
    pub bind: Option<std::net::IpAddr>,
    /// The test. `Amount::Bytes` is per stream, as everywhere in wirespeed; iperf3's `-n`
    /// counts every stream together, so the server is asked for streams times bytes.
    pub spec: TestSpec,
    /// How long the server may stay silent while the test is set up and its results sent.
    pub timeout: Duration,
    /// Set to end the test early (SIGINT): the server is told, as iperf3's client does.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// What a test against an iperf3 server produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Both ends in wirespeed's types: `client` measured here, `agent` the server's results.
    pub test: TestOutcome,
    /// The server's results as it sent them.
    pub server_results: Results,
    /// What an iperf3 server cannot report that a wirespeed agent does.
    pub missing: Vec<String>,
}

/// Why the test did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Iperf3Error {
    /// The server could not be reached.
    #[error("cannot connect to the iperf3 server at {addr}: {source}")]
    Connect {
        /// Where.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The server closed or reset the control connection before it said anything: nothing of
    /// the test ran, so it may be tried again (an iperf3 server re-opens its listener after a
    /// failed test, and resets the connections waiting on the old one).
    #[error("the iperf3 server at {addr} closed the connection before the test started ({source})")]
    Dropped {
        /// The server.
        addr: SocketAddr,
        /// How it closed.
        source: io::Error,
    },
    /// The server said ACCESS_DENIED: another test runs there.
    #[error(
        "the iperf3 server at {0} is busy with another test (ACCESS_DENIED); try again when it ends"
    )]
    Busy(SocketAddr),
    /// The server said SERVER_ERROR.
    #[error("the iperf3 server refused or failed the test: {0}")]
    Server(String),
    /// The server broke the protocol or went silent.
    #[error("the iperf3 server at {addr} {what}")]
    Protocol {
        /// The server.
        addr: SocketAddr,
        /// What went wrong, as a sentence's end.
        what: String,
    },
    /// The test cannot be said in iperf3's protocol.
    #[error("{0}")]
    Unsupported(String),
    /// A local socket failed.
    #[error("{0}")]
    Local(String),
}

/// The sentence for iperf3's error numbers a server sends with SERVER_ERROR (`iperf_error.c`),
/// for the ones a refused test meets; others by number.
pub fn server_error_text(i_errno: i32) -> String {
    match i_errno {
        5 => "test duration too long (-t exceeds the server's limit)".into(),
        6 => "too many parallel streams (-P exceeds the server's limit)".into(),
        7 | 20 => "block size invalid (-l)".into(),
        8 => "socket buffer size too large (-w exceeds the server's limit)".into(),
        10 => "MSS too large (-M)".into(),
        27 => "total required bandwidth is larger than the server's limit (-b)".into(),
        134 => "the server cannot set that TCP congestion control (-C)".into(),
        142 => "test authorization failed (the server requires --username)".into(),
        n => format!("iperf3 error number {n} (see iperf3's iperf_error.c)"),
    }
}

/// The parameters iperf3's client would send for `spec`.
pub fn params_for(spec: &TestSpec) -> Result<Params, Iperf3Error> {
    let udp = spec.protocol == Protocol::Udp;
    let (time, num) = match spec.amount {
        Amount::Seconds(s) => {
            if s.fract() != 0.0 || s < 1.0 {
                return Err(Iperf3Error::Unsupported(format!(
                    "-t {s}: iperf3 takes whole seconds of at least 1; give -t 1, 2, ..."
                )));
            }
            (s as u64, 0)
        }
        Amount::Bytes(b) => (0, b.saturating_mul(u64::from(spec.streams))),
    };
    if spec.omit.subsec_nanos() != 0 {
        return Err(Iperf3Error::Unsupported(format!(
            "-O {}: iperf3 takes whole seconds of warm-up",
            spec.omit.as_secs_f64()
        )));
    }
    // What this end cannot do in iperf3's streams is refused, not dropped.
    if spec.zerocopy && spec.direction != Direction::Receive {
        return Err(Iperf3Error::Unsupported(
            "-Z with --iperf3 zero-copies only the server's sending (-R); this end sends with write(2): drop -Z or add -R".into(),
        ));
    }
    if spec.mptcp {
        return Err(Iperf3Error::Unsupported(
            "--mptcp with --iperf3: iperf3 3.12 servers do not take Multipath TCP; drop one of them".into(),
        ));
    }
    if udp && spec.gso {
        return Err(Iperf3Error::Unsupported(
            "--gso with --iperf3: this end sends one iperf3 datagram per call; drop --gso".into(),
        ));
    }
    if udp && !(MIN_UDP_BLOCK_BYTES..=MAX_UDP_BLOCK_BYTES).contains(&u64::from(spec.length_bytes)) {
        return Err(Iperf3Error::Unsupported(format!(
            "-l {}: an iperf3 UDP datagram holds {MIN_UDP_BLOCK_BYTES} to {MAX_UDP_BLOCK_BYTES} bytes",
            spec.length_bytes
        )));
    }
    Ok(Params {
        tcp: (!udp).then_some(true),
        udp: udp.then_some(true),
        omit: Some(spec.omit.as_secs()),
        time: Some(time),
        num: Some(num),
        blockcount: Some(0),
        mss: spec.mss_bytes.map(u64::from),
        nodelay: spec.nodelay.then_some(true),
        parallel: Some(u64::from(spec.streams)),
        reverse: (spec.direction == Direction::Receive).then_some(true),
        bidirectional: (spec.direction == Direction::Both).then_some(true),
        window: spec.window_bytes,
        len: Some(u64::from(spec.length_bytes)),
        // iperf3's UDP default is 1 Mbit/s; wirespeed's -b 0 is "as fast as it goes", which
        // iperf3 says the same way.
        // TCP: `tcp -b` is iperf3's own `-b`, which its server's senders (-R, --bidir) hold
        // to; this end's senders hold to it through the kernel's pacing.
        bandwidth: if udp {
            Some(spec.rate_bits_per_second)
        } else {
            spec.max_pacing_rate_bits_per_second
        },
        tos: spec.tos.map(u64::from),
        congestion: spec.congestion.clone(),
        zerocopy: spec.zerocopy.then_some(1),
        // 64-bit sequence numbers cost nothing and never wrap; iperf3 servers take them.
        udp_counters_64bit: udp.then_some(1),
        client_version: Some(format!("wirespeed {}", env!("CARGO_PKG_VERSION"))),
        ..Params::default()
    })
}

/// One stream as this end opened it.
struct Opened {
    id: u64,
    flow: Flow,
    tcp: Option<TcpStream>,
    udp: Option<UdpSocket>,
}

/// Runs one test against the iperf3 server at `cfg.server`, without intervals.
pub fn run(cfg: &Config) -> Result<Outcome, Iperf3Error> {
    run_with(cfg, None, &mut |_: &Interval| {})
}

/// Runs one test against the iperf3 server at `cfg.server`, handing `progress` an interval
/// every `interval` after the warm-up. An iperf3 server sends nothing during the test, so an
/// interval holds this end's totals of each direction (`sum_sent`, `sum_received`), read from
/// the streams' shared counters; it has no per-stream lines and no `TCP_INFO`.
pub fn run_with(
    cfg: &Config,
    interval: Option<Duration>,
    progress: &mut dyn Progress,
) -> Result<Outcome, Iperf3Error> {
    let spec = &cfg.spec;
    let params = params_for(spec)?;
    let addr = cfg.server;
    let proto = |what: String| Iperf3Error::Protocol { addr, what };
    let io_err = |e: io::Error| Iperf3Error::Protocol {
        addr,
        what: format!("stopped answering ({e})"),
    };
    let mut ctrl = open_tcp(addr, cfg.bind, None, cfg.timeout)?;
    let _ = ctrl.set_nodelay(true);
    let local = ctrl
        .local_addr()
        .map_err(|e| Iperf3Error::Local(e.to_string()))?;
    let mut random = [0u8; COOKIE_BYTES];
    crate::auth::random_bytes(&mut random).map_err(|e| Iperf3Error::Local(e.to_string()))?;
    let cookie = Cookie::from_random(&random);
    let dropped = |e: io::Error| {
        if matches!(
            e.kind(),
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof
        ) {
            Iperf3Error::Dropped { addr, source: e }
        } else {
            io_err(e)
        }
    };
    write_all_within(&mut ctrl, &cookie.0, cfg.timeout).map_err(dropped)?;

    let judge = |ctrl: &mut TcpStream, state: State, want: State| -> Result<(), Iperf3Error> {
        match state {
            s if s == want => Ok(()),
            State::AccessDenied => Err(Iperf3Error::Busy(addr)),
            State::ServerError => {
                let mut b = [0u8; 8];
                stream::read_exact_by(ctrl, &mut b, Instant::now() + cfg.timeout)
                    .map_err(io_err)?;
                let code = i32::from_be_bytes(b[..4].try_into().expect("4 bytes"));
                Err(Iperf3Error::Server(server_error_text(code)))
            }
            State::ServerTerminate => Err(Iperf3Error::Server(
                "the server ended the test (SERVER_TERMINATE)".into(),
            )),
            other => Err(proto(format!("sent {other:?} where {want:?} was due"))),
        }
    };
    let expect = |ctrl: &mut TcpStream, want: State| -> Result<(), Iperf3Error> {
        let state = read_state(ctrl, Instant::now() + cfg.timeout)
            .map_err(io_err)?
            .map_err(|e| proto(format!("sent {e}")))?;
        judge(ctrl, state, want)
    };
    let first = read_state(&mut ctrl, Instant::now() + cfg.timeout)
        .map_err(dropped)?
        .map_err(|e| proto(format!("sent {e}")))?;
    judge(&mut ctrl, first, State::ParamExchange)?;
    write_all_within(&mut ctrl, &encode_json(&params), cfg.timeout).map_err(io_err)?;
    expect(&mut ctrl, State::CreateStreams)?;

    // Streams in iperf3's creation order: the client's sending streams first.
    let flows: Vec<Flow> = match spec.direction {
        Direction::Send => vec![Flow::Upload; spec.streams as usize],
        Direction::Receive => vec![Flow::Download; spec.streams as usize],
        Direction::Both => [Flow::Upload, Flow::Download]
            .into_iter()
            .flat_map(|f| std::iter::repeat_n(f, spec.streams as usize))
            .collect(),
    };
    let udp = spec.protocol == Protocol::Udp;
    let mut opened = Vec::with_capacity(flows.len());
    for (i, flow) in flows.iter().enumerate() {
        let id = stream_id(i as u32);
        if udp {
            let s = open_udp(addr, cfg.bind, spec, cfg.timeout)
                .map_err(|e| proto(format!("did not take UDP stream {id}: {e}")))?;
            opened.push(Opened {
                id,
                flow: *flow,
                tcp: None,
                udp: Some(s),
            });
        } else {
            let mut s = open_tcp(addr, cfg.bind, Some(spec), cfg.timeout)?;
            if let (Flow::Upload, Some(cap)) = (flow, spec.max_pacing_rate_bits_per_second) {
                sockopt::cap_pacing_rate(&s, cap).map_err(|e| {
                    Iperf3Error::Local(format!(
                        "the kernel refused the -b cap of {cap} bit/s (SO_MAX_PACING_RATE: {e}); drop -b on this host"
                    ))
                })?;
            }
            write_all_within(&mut s, &cookie.0, cfg.timeout).map_err(io_err)?;
            opened.push(Opened {
                id,
                flow: *flow,
                tcp: Some(s),
                udp: None,
            });
        }
    }
    expect(&mut ctrl, State::TestStart)?;
    expect(&mut ctrl, State::TestRunning)?;

    let omit = spec.omit;
    let budget = params.num.unwrap_or(0);
    let shared = Shared::new(omit, budget);
    let started = Instant::now();
    let len = spec.length_bytes as usize;
    let wide = params.udp_counters_64bit.is_some();
    let mut threads = Vec::with_capacity(opened.len());
    let mut facts = Vec::with_capacity(opened.len());
    for o in &opened {
        let sh = shared.clone();
        let (local_s, peer_s, sock_report) = match (&o.tcp, &o.udp) {
            (Some(t), _) => (
                t.local_addr(),
                t.peer_addr(),
                sockopt::socket_report(t, spec, true, String::new(), String::new()),
            ),
            (_, Some(u)) => (
                u.local_addr(),
                u.peer_addr(),
                sockopt::socket_report(u, spec, false, String::new(), String::new()),
            ),
            _ => unreachable!("every stream has a socket"),
        };
        let mut sock_report = sock_report;
        sock_report.local_address = local_s.map(|a| a.to_string()).unwrap_or_default();
        sock_report.peer_address = peer_s.map(|a| a.to_string()).unwrap_or_default();
        facts.push(sock_report);
        let rate = spec.rate_bits_per_second;
        let handle = match (
            o.flow,
            o.tcp.as_ref().map(TcpStream::try_clone),
            o.udp.as_ref().map(UdpSocket::try_clone),
        ) {
            (Flow::Upload, Some(Ok(t)), _) => {
                std::thread::spawn(move || stream::tcp_send(t, len, sh))
            }
            (Flow::Download, Some(Ok(t)), _) => {
                std::thread::spawn(move || stream::tcp_recv(t, len, sh, Duration::from_secs(1)))
            }
            (Flow::Upload, _, Some(Ok(u))) => {
                std::thread::spawn(move || stream::udp_send(u, len, rate, wide, sh))
            }
            (Flow::Download, _, Some(Ok(u))) => {
                std::thread::spawn(move || stream::udp_recv(u, len, wide, sh))
            }
            _ => {
                return Err(Iperf3Error::Local(
                    "cannot share a stream's socket with its thread".into(),
                ));
            }
        };
        threads.push(handle);
    }

    // The client ends the test, as iperf3's does: at its time, or when `-n` is sent or received.
    let end = match spec.amount {
        Amount::Seconds(s) => Some(started + omit + Duration::from_secs_f64(s)),
        Amount::Bytes(_) => None,
    };
    let mut error = None;
    let mut ticker = interval
        .filter(|i| !i.is_zero())
        .map(|every| Ticker::new(every, shared.counted_from, spec));
    let mut intervals = Vec::new();
    let _ = ctrl.set_nonblocking(true);
    loop {
        std::thread::sleep(Duration::from_millis(5));
        if let Some(t) = ticker.as_mut()
            && let Some(iv) = t.tick(&shared, Instant::now())
        {
            progress.interval(&iv);
            // Bounded: one per interval of a test whose length the server also caps.
            if intervals.len() < MAX_INTERVALS {
                intervals.push(iv);
            }
        }
        if end.is_some_and(|e| Instant::now() >= e) {
            break;
        }
        if budget > 0
            && (shared.sent.load(Ordering::Relaxed) >= budget
                || shared.received.load(Ordering::Relaxed) >= budget)
        {
            break;
        }
        if cfg
            .interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::Relaxed))
        {
            error = Some("interrupted".to_string());
            break;
        }
        // The server speaks during the test only to end it.
        let mut b = [0u8; 1];
        match ctrl.peek(&mut b) {
            Ok(0) => {
                error =
                    Some("the iperf3 server closed the control connection during the test".into());
                break;
            }
            Ok(_) => {
                error = Some(match State::from_code(b[0]) {
                    Ok(State::ServerTerminate) => {
                        "the iperf3 server ended the test (SERVER_TERMINATE)".into()
                    }
                    Ok(s) => format!("the iperf3 server sent {s:?} during the test"),
                    Err(e) => format!("the iperf3 server sent {e}"),
                });
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => {
                error = Some(format!("the control connection failed: {e}"));
                break;
            }
        }
    }
    let _ = ctrl.set_nonblocking(false);
    shared.stop.store(true, Ordering::Relaxed);
    let wall = started.elapsed().saturating_sub(omit).as_secs_f64();
    if let Some(e) = error {
        let _ = write_all_within(&mut ctrl, &[State::ClientTerminate.code()], cfg.timeout);
        return Err(Iperf3Error::Protocol {
            addr,
            what: format!("did not finish the test: {e}"),
        });
    }
    // Senders end (their data acknowledged) before TEST_END, at which the server stops
    // counting; receivers drain after it, uncounted, until the server closes its streams.
    let mut counts: Vec<Option<Count>> = vec![None; threads.len()];
    let mut receivers = Vec::new();
    for (i, (h, flow)) in threads.into_iter().zip(&flows).enumerate() {
        if *flow == Flow::Upload {
            counts[i] = Some(joined(h));
        } else {
            receivers.push((i, h));
        }
    }
    write_all_within(&mut ctrl, &[State::TestEnd.code()], cfg.timeout).map_err(io_err)?;
    for (i, h) in receivers {
        counts[i] = Some(joined(h));
    }
    let counts: Vec<Count> = counts.into_iter().map(Option::unwrap_or_default).collect();

    expect(&mut ctrl, State::ExchangeResults)?;
    let ids: Vec<(u64, bool)> = opened
        .iter()
        .map(|o| (o.id, o.flow == Flow::Upload))
        .collect();
    let ours = results_of(&ids, &counts, wall, spec.protocol == Protocol::Tcp);
    write_all_within(&mut ctrl, &encode_json(&ours), cfg.timeout).map_err(io_err)?;
    let theirs: Results = read_json(&mut ctrl, MAX_RESULTS_BYTES, Instant::now() + cfg.timeout)
        .map_err(io_err)?
        .and_then(Results::check)
        .map_err(|e| proto(format!("sent results that do not decode: {e}")))?;
    expect(&mut ctrl, State::DisplayResults)?;
    let _ = write_all_within(&mut ctrl, &[State::IperfDone.code()], cfg.timeout);
    drop(opened);

    let client = SideReport {
        software: format!("wirespeed {}", env!("CARGO_PKG_VERSION")),
        streams: flows
            .iter()
            .zip(&counts)
            .zip(facts)
            .enumerate()
            .map(|(i, ((flow, c), socket))| our_stream(stream_id(i as u32), *flow, c, socket, udp))
            .collect(),
        cpu: counts.iter().fold(CpuTime::default(), |mut t, c| {
            t.add(&c.cpu);
            t
        }),
        wall_seconds: wall,
        ..SideReport::default()
    };
    let (agent, missing) = server_side(&theirs, &flows, udp)?;
    Ok(Outcome {
        test: TestOutcome {
            client,
            agent: Some(agent),
            intervals,
            error: None,
            local,
            remote: addr,
            queued_seconds: 0.0,
        },
        server_results: theirs,
        missing,
    })
}

/// Intervals kept for the report; a longer test's later intervals are shown but not kept.
const MAX_INTERVALS: usize = 100_000;

/// Cuts the streams' shared totals into intervals of `every`, from the end of the warm-up.
#[doc(hidden)]
pub struct Ticker {
    every: Duration,
    from: Instant,
    next: Instant,
    sent: u64,
    received: u64,
    sends: bool,
    receives: bool,
}

impl Ticker {
    #[doc(hidden)]
    pub fn new(every: Duration, from: Instant, spec: &TestSpec) -> Ticker {
        Ticker {
            every,
            from,
            next: from + every,
            sent: 0,
            received: 0,
            sends: spec.direction != Direction::Receive,
            receives: spec.direction != Direction::Send,
        }
    }

    /// The interval that ended by `now`, if one did.
    #[doc(hidden)]
    pub fn tick(&mut self, shared: &Shared, now: Instant) -> Option<Interval> {
        if now < self.next {
            return None;
        }
        let start = self.next - self.every;
        let seconds = self.every.as_secs_f64();
        let sent = shared.sent.load(Ordering::Relaxed);
        let received = shared.received.load(Ordering::Relaxed);
        let sum = |bytes: u64| IntervalSum {
            bytes,
            bits_per_second: bytes as f64 * 8.0 / seconds,
            datagrams: None,
            retransmits: None,
        };
        let iv = Interval {
            start_seconds: start.duration_since(self.from).as_secs_f64(),
            end_seconds: self.next.duration_since(self.from).as_secs_f64(),
            omitted: false,
            streams: Vec::new(),
            sum_sent: self.sends.then(|| sum(sent.saturating_sub(self.sent))),
            sum_received: self
                .receives
                .then(|| sum(received.saturating_sub(self.received))),
        };
        self.sent = sent;
        self.received = received;
        self.next += self.every;
        Some(iv)
    }
}

fn joined(h: std::thread::JoinHandle<Count>) -> Count {
    h.join().unwrap_or_else(|_| Count {
        error: Some("stream thread panicked".into()),
        ..Count::default()
    })
}

/// A TCP connection from `bind` (if given) with `spec`'s options set before it connects
/// (a data stream), or without (the control connection).
fn open_tcp(
    addr: SocketAddr,
    bind: Option<std::net::IpAddr>,
    spec: Option<&TestSpec>,
    timeout: Duration,
) -> Result<TcpStream, Iperf3Error> {
    let s = Socket::new(
        Domain::for_address(addr),
        Type::STREAM,
        Some(SockProtocol::TCP),
    )
    .map_err(|e| Iperf3Error::Local(format!("cannot open a TCP socket: {e}")))?;
    if let Some(ip) = bind {
        s.bind(&SocketAddr::new(ip, 0).into())
            .map_err(|e| Iperf3Error::Local(format!("cannot bind to {ip} (--bind): {e}")))?;
    }
    if let Some(spec) = spec {
        sockopt::apply_options(&s, spec, true).map_err(|e| Iperf3Error::Local(e.to_string()))?;
    }
    s.connect_timeout(&addr.into(), timeout)
        .map_err(|source| Iperf3Error::Connect { addr, source })?;
    Ok(s.into())
}

/// Opens a UDP stream: the greeting until the server answers, at most three times.
fn open_udp(
    addr: SocketAddr,
    bind: Option<std::net::IpAddr>,
    spec: &TestSpec,
    timeout: Duration,
) -> io::Result<UdpSocket> {
    let s = Socket::new(
        Domain::for_address(addr),
        Type::DGRAM,
        Some(SockProtocol::UDP),
    )?;
    if let Some(ip) = bind {
        s.bind(&SocketAddr::new(ip, 0).into())?;
    }
    sockopt::apply_options(&s, spec, false).map_err(|e| io::Error::other(e.to_string()))?;
    s.connect(&addr.into())?;
    let s: UdpSocket = s.into();
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 64];
    for _ in 0..3 {
        s.send(&UDP_CONNECT_MSG)?;
        let wait = Instant::now() + (deadline.saturating_duration_since(Instant::now()) / 3);
        while Instant::now() < wait {
            s.set_read_timeout(Some(
                wait.saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            ))?;
            match s.recv(&mut buf) {
                Ok(4) if buf[..4] == UDP_CONNECT_REPLY || buf[..4] == LEGACY_UDP_CONNECT_REPLY => {
                    let _ = SockRef::from(&s).set_read_timeout(None);
                    return Ok(s);
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        "no answer to the UDP greeting",
    ))
}

/// This end's results as iperf3's client sends them.
/// `streams`: each stream's id and whether this end sent on it.
#[doc(hidden)]
pub fn results_of(streams: &[(u64, bool)], counts: &[Count], wall: f64, tcp: bool) -> Results {
    let cpu = counts.iter().fold(CpuTime::default(), |mut t, c| {
        t.add(&c.cpu);
        t
    });
    let pct = |s: f64| if wall > 0.0 { s / wall * 100.0 } else { 0.0 };
    let sends = streams.iter().any(|(_, sender)| *sender);
    Results {
        cpu_util_total: pct(cpu.total_seconds()),
        cpu_util_user: pct(cpu.user_seconds),
        cpu_util_system: pct(cpu.system_seconds),
        sender_has_retransmits: if !sends {
            -1
        } else if tcp {
            1
        } else {
            0
        },
        congestion_used: None,
        streams: streams
            .iter()
            .zip(counts)
            .map(|((id, sender), c)| stream_results(*id, *sender, tcp, c))
            .collect(),
        server_output_text: None,
    }
}

/// One stream's results record.
pub(crate) fn stream_results(id: u64, sender: bool, tcp: bool, c: &Count) -> StreamResults {
    StreamResults {
        id,
        bytes: c.bytes,
        retransmits: match (&c.tcp_info, sender && tcp) {
            (Some(i), true) => i64::from(i.retransmits),
            _ => -1,
        },
        jitter: c.jitter,
        errors: c.lost as i64,
        omitted_errors: Some(0),
        packets: c.packets as i64,
        omitted_packets: Some(0),
        start_time: Some(0.0),
        end_time: Some(c.seconds),
    }
}

fn our_stream(
    id: u64,
    flow: Flow,
    c: &Count,
    socket: crate::report::SocketReport,
    udp: bool,
) -> StreamReport {
    let role = if flow == Flow::Upload {
        Role::Sender
    } else {
        Role::Receiver
    };
    StreamReport {
        id: id as u32,
        flow,
        role,
        bytes: c.bytes,
        calls: c.calls,
        seconds: c.seconds,
        cpu: c.cpu,
        socket,
        tcp_info: if udp { None } else { c.tcp_info.clone() },
        udp: udp.then(|| c.udp_report(role == Role::Sender)),
        zerocopy: None,
        longest_call_seconds: None,
        skipped_in_window_seconds: None,
        drain: None,
        error: c.error.clone(),
    }
}

/// The server's results as a wirespeed agent's report, and what they cannot say.
fn server_side(
    r: &Results,
    flows: &[Flow],
    udp: bool,
) -> Result<(SideReport, Vec<String>), Iperf3Error> {
    let mut streams = Vec::with_capacity(r.streams.len());
    for s in &r.streams {
        let Some(flow) = (0..flows.len() as u32)
            .find(|i| stream_id(*i) == s.id)
            .map(|i| flows[i as usize])
        else {
            return Err(Iperf3Error::Protocol {
                addr: ([0, 0, 0, 0], 0).into(),
                what: format!("reported stream {} that this test did not open", s.id),
            });
        };
        // The server's role is the other end of the client's.
        let role = if flow == Flow::Upload {
            Role::Receiver
        } else {
            Role::Sender
        };
        let seconds = (s.end_time.unwrap_or(0.0) - s.start_time.unwrap_or(0.0)).max(0.0);
        let packets = s.packets.max(0) as u64;
        let lost = s.errors.max(0) as u64;
        streams.push(StreamReport {
            id: s.id as u32,
            flow,
            role,
            bytes: s.bytes,
            calls: 0,
            seconds,
            cpu: CpuTime::default(),
            socket: Default::default(),
            tcp_info: None,
            udp: udp.then(|| match role {
                Role::Sender => UdpReport {
                    datagrams: packets,
                    ..UdpReport::default()
                },
                Role::Receiver => UdpReport {
                    datagrams: packets.saturating_sub(lost),
                    lost: Some(lost),
                    lost_percent: crate::udp::percent(lost, packets),
                    jitter_seconds: Some(s.jitter),
                    clock: Some("iperf3 server".into()),
                    ..UdpReport::default()
                },
            }),
            zerocopy: None,
            longest_call_seconds: None,
            skipped_in_window_seconds: None,
            drain: None,
            error: None,
        });
    }
    let wall = streams.iter().map(|s| s.seconds).fold(0.0, f64::max);
    let cpu = CpuTime {
        user_seconds: r.cpu_util_user / 100.0 * wall,
        system_seconds: r.cpu_util_system / 100.0 * wall,
    };
    let mut missing = vec![
        "the server's TCP_INFO (RTT, cwnd, pacing and delivery rates at its end)".to_string(),
        "the server's socket facts (granted buffers, MSS, TOS)".to_string(),
        "the server's per-stream CPU and call counts (iperf3 sends CPU as a percentage of its whole test)".to_string(),
        "the server's intervals and environment".to_string(),
    ];
    if !udp && r.streams.iter().all(|s| s.retransmits < 0) && flows.contains(&Flow::Download) {
        missing.push("the server's retransmits".into());
    }
    Ok((
        SideReport {
            software: "iperf3".into(),
            streams,
            intervals: Vec::new(),
            cpu,
            wall_seconds: wall,
            environment: None,
        },
        missing,
    ))
}
