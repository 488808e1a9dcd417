//! `wirespeed serve`: the agent, the far end of every test.
//!
//! One listening port carries control and data connections (a data connection opens with
//! [`DATA_MAGIC`](crate::control::DATA_MAGIC) and the session cookie). Every control connection
//! gets its own thread, so one client's test never waits for another's (iperf3 serves one client
//! at a time). Limits are checked before anything is opened and refused with a sentence the
//! client prints verbatim; a silent peer times out; a malformed or out-of-order message gets an
//! error reply and closes that session only. SIGINT/SIGTERM (or [`AgentHandle::stop`]) stop the
//! accept loop, tell live sessions and shut their sockets.

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::auth::{AuthKey, hex, random_bytes, unhex};
use crate::control::{Cookie, DATA_MAGIC, Message, PROTOCOL_VERSION, Phase, parse_greeting_rest};
use crate::engine::{DataSocket, Running, Side};
use crate::env::Environment;
use crate::report::{Interval, SideReport, keep_interval};
use crate::session::{Control, SessionError};
use crate::sock;
use crate::spec::{Amount, Flow, Protocol, TestSpec};

/// What the agent allows one session.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    /// Longest test (`-t`); a `-n` test is stopped at this time too.
    pub max_duration: Duration,
    /// Highest UDP `-b` per stream, if limited (then `-b 0`, unlimited, is refused).
    pub max_rate_bits_per_second: Option<u64>,
    /// Sessions at once.
    pub max_sessions: usize,
    /// Largest `-w`.
    pub max_window_bytes: Option<u64>,
    /// Largest `-P`.
    pub max_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_duration: Duration::from_secs(3600),
            max_rate_bits_per_second: None,
            max_sessions: 64,
            max_window_bytes: None,
            max_streams: 128,
        }
    }
}

impl Limits {
    /// `None` if the spec fits, else the refusal the client prints.
    pub fn check(&self, spec: &TestSpec) -> Option<String> {
        let refuse = |what: String, flag: &str| {
            Some(format!(
                "refused by the agent: {what} ({flag} on the agent)"
            ))
        };
        if spec.streams > self.max_streams {
            return refuse(
                format!(
                    "-P {} exceeds this agent's limit of {} parallel streams",
                    spec.streams, self.max_streams
                ),
                "--max-streams",
            );
        }
        match spec.amount {
            Amount::Seconds(s) if s > self.max_duration.as_secs_f64() => {
                return refuse(
                    format!(
                        "-t {s} s exceeds this agent's limit of {} s",
                        self.max_duration.as_secs_f64()
                    ),
                    "--max-duration",
                );
            }
            _ => {}
        }
        let largest = [
            spec.window_bytes,
            spec.send_buffer_bytes,
            spec.receive_buffer_bytes,
        ]
        .into_iter()
        .flatten()
        .max();
        if let (Some(max), Some(w)) = (self.max_window_bytes, largest)
            && w > max
        {
            return refuse(
                format!("-w {w} bytes exceeds this agent's limit of {max} bytes"),
                "--max-window",
            );
        }
        if let (Some(max), Protocol::Udp) = (self.max_rate_bits_per_second, spec.protocol) {
            let b = spec.rate_bits_per_second;
            if b == 0 || b > max {
                let asked = if b == 0 {
                    "unlimited (-b 0)".to_string()
                } else {
                    format!("-b {b} bit/s")
                };
                return refuse(
                    format!("rate {asked} exceeds this agent's limit of {max} bit/s per stream"),
                    "--max-rate",
                );
            }
        }
        None
    }
}

/// How the agent runs.
#[derive(Clone)]
pub struct AgentConfig {
    /// The limits.
    pub limits: Limits,
    /// The pre-shared key, if clients must prove they know it.
    pub auth: Option<AuthKey>,
    /// How long a silent peer is waited for.
    pub idle_timeout: Duration,
    /// Serve one session, then exit (`--one-off`).
    pub one_off: bool,
    /// Stop on SIGINT/SIGTERM (the binary's agent; not an in-process one).
    pub handle_signals: bool,
    /// Called with a record of every session when it ends (`--json` session log).
    pub on_session: Option<SessionLog>,
    /// Where load tests may send besides the agent's own address and its client's
    /// (`--allow-destination`; the destination must still prove consent, docs/traffic-rules.md).
    pub allow_destinations: Vec<crate::load::consent::Cidr>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            limits: Limits::default(),
            auth: None,
            idle_timeout: Duration::from_secs(10),
            one_off: false,
            handle_signals: false,
            on_session: None,
            allow_destinations: Vec::new(),
        }
    }
}

/// Receives each finished session's record.
pub type SessionLog = Arc<dyn Fn(&SessionRecord) + Send + Sync>;

/// What happened in one session, for the agent's log.
#[derive(Debug, Clone, Serialize)]
pub struct SessionRecord {
    /// Agent-wide session number, from 1.
    pub session: u64,
    /// The client's control address.
    pub peer: String,
    /// `completed`, `refused` or `failed`.
    pub outcome: &'static str,
    /// The refusal or error, verbatim.
    pub message: Option<String>,
    /// What the client asked for, if it got that far.
    pub spec: Option<TestSpec>,
    /// The agent's measurements, if the test ran.
    pub report: Option<SideReport>,
    /// How long the session lasted.
    pub seconds: f64,
}

type DataConn = (u32, TcpStream);

struct Shared {
    config: AgentConfig,
    stop: AtomicBool,
    sessions: AtomicUsize,
    next_id: AtomicU64,
    data_routes: Mutex<HashMap<Cookie, (IpAddr, Sender<DataConn>)>>,
    controls: Mutex<HashMap<u64, TcpStream>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || (self.config.handle_signals && crate::signal::requested())
    }
}

/// A bound agent, ready to serve.
pub struct Agent {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Stops an agent running in another thread.
#[derive(Clone)]
pub struct AgentHandle {
    shared: Arc<Shared>,
}

impl AgentHandle {
    /// Asks the agent to stop; `serve` returns soon after.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
    }
}

impl Agent {
    /// Binds the control port. `[::]:port` serves IPv4 and IPv6 alike.
    pub fn bind(addr: SocketAddr, config: AgentConfig) -> io::Result<Agent> {
        let domain = socket2::Domain::for_address(addr);
        let s = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
        s.set_reuse_address(true)?;
        if addr.is_ipv6() && addr.ip().is_unspecified() {
            s.set_only_v6(false)?;
        }
        s.bind(&addr.into())?;
        s.listen(1024)?;
        if config.handle_signals {
            crate::signal::install();
        }
        Ok(Agent {
            listener: s.into(),
            shared: Arc::new(Shared {
                config,
                stop: AtomicBool::new(false),
                sessions: AtomicUsize::new(0),
                next_id: AtomicU64::new(1),
                data_routes: Mutex::new(HashMap::new()),
                controls: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A handle that stops this agent.
    pub fn handle(&self) -> AgentHandle {
        AgentHandle {
            shared: self.shared.clone(),
        }
    }

    /// Runs `serve` in a thread.
    pub fn spawn(self) -> io::Result<(AgentHandle, JoinHandle<io::Result<()>>)> {
        let handle = self.handle();
        let thread = std::thread::Builder::new()
            .name("ws-agent".into())
            .spawn(move || self.serve())?;
        Ok((handle, thread))
    }

    /// Accepts connections until stopped (or after one session with `one_off`).
    pub fn serve(self) -> io::Result<()> {
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let fd = self.listener.as_raw_fd();
        while !self.shared.stopping() {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut pfd, 1, 200) };
            threads.retain(|t| !t.is_finished());
            if ready <= 0 {
                continue;
            }
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if is_transient_accept_error(&e) => continue,
                Err(e) => return Err(e),
            };
            let shared = self.shared.clone();
            let t = std::thread::Builder::new()
                .name("ws-conn".into())
                .spawn(move || handle_connection(stream, peer, &shared))?;
            threads.push(t);
        }
        // Tell live sessions and unblock them.
        for (_, c) in self.shared.controls.lock().expect("not poisoned").drain() {
            let _ = crate::control::write_message(
                &mut &c,
                &Message::Error {
                    message: "the agent is shutting down".into(),
                },
            );
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

fn is_transient_accept_error(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

fn handle_connection(mut stream: TcpStream, peer: SocketAddr, shared: &Arc<Shared>) {
    let idle = shared.config.idle_timeout;
    let _ = stream.set_read_timeout(Some(idle));
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 4];
    if stream.read_exact(&mut first).is_err() {
        return;
    }
    if first == DATA_MAGIC {
        let mut rest = [0u8; 20];
        if stream.read_exact(&mut rest).is_err() {
            return;
        }
        let (cookie, id) = parse_greeting_rest(&rest);
        let routes = shared.data_routes.lock().expect("not poisoned");
        // Unknown cookies and foreign addresses are dropped without a word.
        if let Some((ip, tx)) = routes.get(&cookie)
            && *ip == peer.ip()
        {
            let _ = tx.send((id, stream));
        }
        return;
    }
    let session = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let mut record = SessionRecord {
        session,
        peer: peer.to_string(),
        outcome: "failed",
        message: None,
        spec: None,
        report: None,
        seconds: 0.0,
    };
    let auth = shared.config.auth.is_some();
    let mut ctl = Control::new(stream, &first, true, auth);
    let active = shared.sessions.fetch_add(1, Ordering::AcqRel);
    if active >= shared.config.limits.max_sessions {
        let reason = format!(
            "refused by the agent: it is serving its limit of {} concurrent sessions; try again later (--max-sessions on the agent)",
            shared.config.limits.max_sessions
        );
        let _ = ctl.send(&Message::Refused {
            reason: reason.clone(),
        });
        record.outcome = "refused";
        record.message = Some(reason);
    } else {
        if let Ok(c) = ctl.stream.try_clone() {
            shared
                .controls
                .lock()
                .expect("not poisoned")
                .insert(session, c);
        }
        match run_session(&mut ctl, peer, shared, &mut record) {
            Ok(()) => {}
            Err(SessionEnd::Refused(reason)) => {
                let _ = ctl.send(&Message::Refused {
                    reason: reason.clone(),
                });
                record.outcome = "refused";
                record.message = Some(reason);
            }
            Err(SessionEnd::Failed(e)) => {
                let message = e.to_string();
                if !matches!(e, SessionError::Closed) {
                    let _ = ctl.send(&Message::Error {
                        message: message.clone(),
                    });
                }
                record.outcome = "failed";
                record.message = Some(message);
            }
        }
        shared
            .controls
            .lock()
            .expect("not poisoned")
            .remove(&session);
    }
    shared.sessions.fetch_sub(1, Ordering::AcqRel);
    let _ = ctl.stream.shutdown(std::net::Shutdown::Both);
    record.seconds = started.elapsed().as_secs_f64();
    if let Some(log) = &shared.config.on_session {
        log(&record);
    }
    if shared.config.one_off {
        shared.stop.store(true, Ordering::Release);
    }
}

enum SessionEnd {
    Refused(String),
    Failed(SessionError),
}

/// The end of a handshake by a message the phase admits but the handshake cannot use: the
/// only such message is the client's own error.
fn client_ended(m: Message) -> SessionEnd {
    let why = match m {
        Message::Error { message } => format!("the client ended the session: {message}"),
        other => format!("unexpected control message '{}'", other.kind()),
    };
    SessionEnd::Failed(SessionError::Io(io::Error::other(why)))
}

impl<E: Into<SessionError>> From<E> for SessionEnd {
    fn from(e: E) -> Self {
        SessionEnd::Failed(e.into())
    }
}

fn run_session(
    ctl: &mut Control,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    record: &mut SessionRecord,
) -> Result<(), SessionEnd> {
    let cfg = &shared.config;
    let idle = cfg.idle_timeout;
    let protocol_version = match ctl.recv(idle, "waiting for hello")? {
        Message::Hello {
            protocol_version, ..
        } => protocol_version,
        other => return Err(client_ended(other)),
    };
    if protocol_version != PROTOCOL_VERSION {
        return Err(SessionEnd::Refused(format!(
            "refused by the agent: the client speaks control protocol version {protocol_version}, this agent version {PROTOCOL_VERSION}; run the same wirespeed release at both ends"
        )));
    }
    if let Some(key) = &cfg.auth {
        let mut nonce = [0u8; 32];
        random_bytes(&mut nonce).map_err(SessionError::Io)?;
        ctl.send(&Message::Challenge { nonce: hex(&nonce) })?;
        let mac = match ctl.recv(idle, "waiting for the authentication response")? {
            Message::AuthResponse { mac } => mac,
            other => return Err(client_ended(other)),
        };
        let ok = unhex(&mac).is_some_and(|mac| key.verify(&nonce, &mac));
        if !ok {
            return Err(SessionEnd::Refused(
                "refused by the agent: authentication failed (the client's --auth-key-file does not match the agent's)".into(),
            ));
        }
    }
    ctl.send(&Message::Welcome {
        protocol_version: PROTOCOL_VERSION,
        software: crate::client::software(),
    })?;
    let request = ctl.recv(idle, "waiting for the test request")?;
    if let Message::Load(first) = request {
        let refused = crate::load::serve(ctl, first, cfg, &|| shared.stopping())?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused;
        return Ok(());
    }
    if let Message::Echo(first) = request {
        let (refused, totals) = crate::echo::serve(ctl, first, peer, cfg, &|| shared.stopping())?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused.or(Some(format!(
            "udp echo: {} answered, {} dropped",
            totals.answered, totals.dropped
        )));
        return Ok(());
    }
    let Message::Request {
        spec,
        client_udp_ports,
    } = request
    else {
        return Err(SessionEnd::Failed(SessionError::Closed));
    };
    record.spec = Some(spec.clone());
    if let Err(e) = spec.validate() {
        return Err(SessionEnd::Refused(format!("refused by the agent: {e}")));
    }
    if let Some(reason) = cfg.limits.check(&spec) {
        return Err(SessionEnd::Refused(reason));
    }
    let flows = spec.flows();
    let local_ip = ctl.stream.local_addr().map_err(SessionError::Io)?.ip();
    let cookie = Cookie::random().map_err(SessionError::Io)?;
    let mut udp_sockets = Vec::new();
    if spec.protocol == Protocol::Udp {
        if client_udp_ports.len() != flows.len() {
            return Err(SessionEnd::Refused(format!(
                "refused by the agent: a UDP request needs {} client ports, it named {}",
                flows.len(),
                client_udp_ports.len()
            )));
        }
        for (&(id, flow), &port) in flows.iter().zip(&client_udp_ports) {
            let s = udp_socket(local_ip, &spec).map_err(SessionError::Io)?;
            s.connect(SocketAddr::new(peer.ip(), port))
                .map_err(SessionError::Io)?;
            udp_sockets.push((id, flow, s));
        }
    }
    let (tx, rx) = mpsc::channel();
    if spec.protocol == Protocol::Tcp {
        shared
            .data_routes
            .lock()
            .expect("not poisoned")
            .insert(cookie, (peer.ip(), tx));
    }
    let agent_udp_ports = udp_sockets
        .iter()
        .map(|(_, _, s)| s.local_addr().map(|a| a.port()))
        .collect::<io::Result<Vec<_>>>()
        .map_err(SessionError::Io)?;
    ctl.send(&Message::Accepted {
        cookie,
        agent_udp_ports,
    })?;
    ctl.set_phase(Phase::CreateStreams);
    let sockets = if spec.protocol == Protocol::Tcp {
        let got = collect_data_connections(&rx, &flows, &spec, idle);
        shared
            .data_routes
            .lock()
            .expect("not poisoned")
            .remove(&cookie);
        got?
    } else {
        udp_sockets
            .into_iter()
            .map(|(id, flow, s)| (id, flow, DataSocket::Udp(s)))
            .collect()
    };
    let running = Running::start(
        &spec,
        Side::Agent,
        sockets,
        cookie.tag(),
        spec.agent_cpu,
        None,
        Instant::now(),
    )
    .map_err(SessionError::Io)?;
    ctl.send(&Message::Start)?;
    ctl.set_phase(Phase::Running);
    let mut intervals = Vec::new();
    let outcome = supervise(ctl, &running, &spec, shared, &mut intervals);
    if outcome.is_err() {
        running.abort();
    }
    let mut report = running.finish();
    report.intervals = intervals;
    report.environment = Some(Environment::collect(Some(local_ip)));
    record.report = Some(report.clone());
    outcome?;
    ctl.send(&Message::Results { report })?;
    record.outcome = "completed";
    Ok(())
}

fn udp_socket(local_ip: IpAddr, spec: &TestSpec) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind(SocketAddr::new(local_ip, 0))?;
    sock::apply_options(&s, spec, false).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(s)
}

/// Waits for one TCP data connection per stream, each with the session's cookie.
fn collect_data_connections(
    rx: &Receiver<DataConn>,
    flows: &[(u32, Flow)],
    spec: &TestSpec,
    idle: Duration,
) -> Result<Vec<(u32, Flow, DataSocket)>, SessionEnd> {
    let mut slots: Vec<Option<TcpStream>> = (0..flows.len()).map(|_| None).collect();
    let deadline = Instant::now() + idle;
    while slots.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        let (id, s) = rx.recv_timeout(left).map_err(|_| SessionError::Timeout {
            what: "waiting for the data connections",
            after: idle,
        })?;
        if let Some(slot) = slots.get_mut(id as usize)
            && slot.is_none()
        {
            sock::apply_options(&s, spec, true)
                .map_err(|e| SessionError::Io(io::Error::other(e.to_string())))?;
            sock::set_timeouts(&s, idle).map_err(SessionError::Io)?;
            s.set_read_timeout(Some(idle)).map_err(SessionError::Io)?;
            *slot = Some(s);
        }
    }
    Ok(flows
        .iter()
        .zip(slots)
        .map(|(&(id, flow), s)| (id, flow, DataSocket::Tcp(s.expect("all filled"))))
        .collect())
}

/// The running phase: relays "senders done" both ways, waits for the client's view and for
/// this end's streams, and enforces the duration limit.
fn supervise(
    ctl: &mut Control,
    running: &Running,
    spec: &TestSpec,
    shared: &Arc<Shared>,
    intervals: &mut Vec<Interval>,
) -> Result<(), SessionEnd> {
    let cfg = &shared.config;
    let grace = cfg.idle_timeout + Duration::from_secs(2);
    let cap = spec
        .amount
        .duration()
        .unwrap_or(cfg.limits.max_duration)
        .min(cfg.limits.max_duration)
        + grace;
    let mut client_done = false;
    let mut told_send_done = false;
    let tick = spec.interval_seconds.map(Duration::from_secs_f64);
    let mut next = tick.map(|t| running.start + t);
    let mut last = (0.0, running.samples());
    loop {
        let wait = next.map_or(Duration::from_millis(50), |at| {
            at.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50))
        });
        if let Some(m) = ctl.poll(wait)? {
            match m {
                Message::SendDone => running.peer_senders_done(),
                Message::Finished { .. } => {
                    client_done = true;
                    // The client's receivers have drained, so its senders (if any) told us
                    // already; make sure ours stop waiting.
                    running.peer_senders_done();
                }
                Message::Error { message } => {
                    return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                        format!("the client ended the test: {message}"),
                    ))));
                }
                _ => {}
            }
        }
        if !told_send_done && running.senders_done() {
            ctl.send(&Message::SendDone)?;
            told_send_done = true;
        }
        let own_done = running.all_done();
        if let (Some(t), Some(at)) = (tick, next)
            && (Instant::now() >= at || own_done)
        {
            // The last interval ends when this end's streams did, not at the next tick.
            let end = if own_done {
                running.start.elapsed().as_secs_f64()
            } else {
                at.duration_since(running.start).as_secs_f64()
            };
            let now = running.samples();
            if end - last.0 > 1e-3 {
                let omitted = end <= spec.omit_seconds + 1e-9;
                keep_interval(
                    intervals,
                    crate::client::interval(last.0, end, &last.1, &now, omitted),
                );
                last = (end, now);
            }
            next = (!own_done).then_some(at + t);
        }
        if client_done && own_done {
            return Ok(());
        }
        if shared.stopping() {
            return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                "the agent is shutting down",
            ))));
        }
        if running.start.elapsed() > cap {
            return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                format!(
                    "the test ran past the agent's limit of {} s",
                    cap.as_secs_f64()
                ),
            ))));
        }
    }
}
