//! The agent answering iperf3 clients (`wirespeed serve --iperf3 [PORT]`): one test at a time,
//! as iperf3's own server runs them (another client is told ACCESS_DENIED), under the agent's
//! limits: `--max-duration` (longer `-t` refused; a running test whose client does not end it
//! is stopped with SERVER_TERMINATE by the agent's drain rule, `Limits::test_end`), `--max-rate`, `--max-streams`, `--max-window`, `--max-memory`, and the
//! handshake timeout on every read before the test runs (a client that sends its cookie or
//! parameters a byte at a time is closed when it runs out, unlike iperf3 3.12, which blocks
//! on it). Data streams are taken only from the control connection's address, so nobody can
//! join another's test or aim its data elsewhere.
//!
//! TCP data streams arrive on the control port and open with the test's cookie; UDP streams
//! greet the same port number over UDP and are answered from a socket connected to the
//! client, bound to the same address, so the kernel hands it that client's datagrams.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol as SockProtocol, Socket, Type};

use super::client::results_of;
use super::codec::{
    COOKIE_BYTES, CodecError, Cookie, MAX_PARAMS_BYTES, MAX_RESULTS_BYTES, Params, Results, State,
    TestParams, UDP_CONNECT_MSG, UDP_CONNECT_REPLY, encode_json, stream_id,
};
use super::stream::{self, Count, Shared, read_exact_by, read_json, read_state, write_all_within};
use crate::agent::SessionSlots;
use crate::agent_config::{AgentConfig, Limits, SessionRecord, Stopped};
use crate::budget::{Budget, SESSION_OVERHEAD_BYTES, streams_cost};
use crate::report::{CpuTime, Role, SideReport, StreamReport};
use crate::sockopt;
use crate::spec::{Amount, Direction, Flow, Protocol, TestSpec};

/// iperf3's default port.
pub const DEFAULT_PORT: u16 = 5201;

/// What the iperf3 service has done, for the agent's metrics.
#[derive(Debug, Default)]
pub struct Stats {
    /// Tests running now (0 or 1).
    pub sessions: AtomicUsize,
    /// Tests that ran to their results, in all.
    pub completed_total: AtomicU64,
    /// Clients refused (busy, limits, bad parameters, timeouts), in all.
    pub refused_total: AtomicU64,
    /// Of those, clients refused because the agent's `--max-sessions` were all taken.
    pub refused_sessions_total: AtomicU64,
    /// Payload bytes received from clients, in all, counted while tests run (at most
    /// [`LIVE_POLL`] late), so that a scraper's `rate()` moves during a test.
    pub received_bytes_total: AtomicU64,
    /// Payload bytes sent to clients, in all, counted while tests run.
    pub sent_bytes_total: AtomicU64,
}

/// The iperf3 service, bound and not yet serving.
pub struct Server {
    tcp: TcpListener,
    udp: Arc<UdpSocket>,
    config: AgentConfig,
    stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
    budget: Option<Arc<Budget>>,
    slots: Option<SessionSlots>,
}

/// How often a running test's control loop looks for the client's next message, and so how
/// late the live byte totals may be.
const LIVE_POLL: Duration = Duration::from_millis(200);

/// Stops a running service and reads its counts.
#[derive(Clone)]
pub struct Handle {
    stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
}

impl Stats {
    /// The counts now, as the agent's metrics show them.
    pub fn counts(&self) -> crate::agent::Iperf3Counts {
        crate::agent::Iperf3Counts {
            sessions: self.sessions.load(Ordering::Acquire),
            completed: self.completed_total.load(Ordering::Relaxed),
            refused: self.refused_total.load(Ordering::Relaxed),
            refused_sessions: self.refused_sessions_total.load(Ordering::Relaxed),
            bytes_sent: self.sent_bytes_total.load(Ordering::Relaxed),
            bytes_received: self.received_bytes_total.load(Ordering::Relaxed),
        }
    }
}

impl Handle {
    /// Asks the service to stop; its thread ends soon after.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Its counts.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// The test that holds the service, and where its TCP streams go.
struct Active {
    cookie: Cookie,
    client: IpAddr,
    /// Data connections with their accept order: the cookie reads race in their own threads,
    /// and the order the client created its streams in is what says which way each one goes.
    streams: mpsc::SyncSender<(u64, TcpStream)>,
    /// The agent's session slot the test holds, given back when the test is cleared.
    _slot: Option<crate::agent::SessionSlot>,
}

struct Ctx {
    config: AgentConfig,
    udp: Arc<UdpSocket>,
    stats: Arc<Stats>,
    active: Mutex<Option<Active>>,
    pending: AtomicUsize,
    budget: Arc<Budget>,
    stop: Arc<AtomicBool>,
    slots: Option<SessionSlots>,
    /// The last session number given (`config.on_session` records), from 1.
    sessions: AtomicU64,
}

impl Server {
    /// Binds TCP and UDP on `addr` (`[::]` serves IPv4 and IPv6 alike).
    pub fn bind(addr: SocketAddr, config: AgentConfig) -> io::Result<Server> {
        config
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let t = Socket::new(
            Domain::for_address(addr),
            Type::STREAM,
            Some(SockProtocol::TCP),
        )?;
        t.set_reuse_address(true)?;
        if addr.is_ipv6() {
            t.set_only_v6(false)?;
        }
        t.bind(&addr.into())?;
        t.listen(128)?;
        let tcp: TcpListener = t.into();
        let bound = tcp.local_addr()?;
        let udp = udp_on(bound, None)?;
        Ok(Server {
            tcp,
            udp: Arc::new(udp),
            config,
            stats: Arc::default(),
            stop: Arc::default(),
            budget: None,
            slots: None,
        })
    }

    /// Counts every test against the agent's `--max-sessions` (`slots`, the agent beside it):
    /// a client beyond the cap is told ACCESS_DENIED, iperf3's answer for a busy server.
    pub fn share_sessions(mut self, slots: SessionSlots) -> Server {
        self.slots = Some(slots);
        self
    }

    /// Draws every test's memory from `budget` (the agent's, when it runs beside one) instead
    /// of a budget of its own of `max_memory_bytes`, so that the two together stay under it.
    pub fn share_budget(mut self, budget: Arc<Budget>) -> Server {
        self.budget = Some(budget);
        self
    }

    /// The address served.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    /// Its handle.
    pub fn handle(&self) -> Handle {
        Handle {
            stats: self.stats.clone(),
            stop: self.stop.clone(),
        }
    }

    /// Serves on a thread of its own.
    pub fn spawn(self) -> io::Result<(Handle, JoinHandle<()>)> {
        let h = self.handle();
        let t = std::thread::Builder::new()
            .name("ws-iperf3".into())
            .spawn(move || self.serve())?;
        Ok((h, t))
    }

    /// Accepts clients until stopped. Each connection gets a thread that reads its cookie
    /// within the handshake timeout; at most `max_pending` such threads at once.
    pub fn serve(self) {
        let ctx = Arc::new(Ctx {
            budget: self
                .budget
                .unwrap_or_else(|| Budget::new(self.config.limits.max_memory_bytes)),
            config: self.config,
            udp: self.udp,
            stats: self.stats,
            active: Mutex::new(None),
            pending: AtomicUsize::new(0),
            stop: self.stop,
            slots: self.slots,
            sessions: AtomicU64::new(0),
        });
        let _ = self.tcp.set_nonblocking(true);
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let mut accepted: u64 = 0;
        while !ctx.stop.load(Ordering::Acquire) {
            threads.retain(|t| !t.is_finished());
            match self.tcp.accept() {
                Ok((s, peer)) => {
                    let _ = s.set_nonblocking(false);
                    if ctx.pending.load(Ordering::Acquire) >= ctx.config.limits.max_pending {
                        ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    ctx.pending.fetch_add(1, Ordering::AcqRel);
                    let c = ctx.clone();
                    accepted += 1;
                    let order = accepted;
                    match std::thread::Builder::new()
                        .name("ws-iperf3-conn".into())
                        .spawn(move || first_contact(&c, s, peer, order))
                    {
                        Ok(t) => threads.push(t),
                        Err(_) => {
                            ctx.pending.fetch_sub(1, Ordering::AcqRel);
                            ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        for t in threads {
            let _ = t.join();
        }
    }
}

/// A UDP socket on `local` (shared with the others on it), connected to `peer` if given.
fn udp_on(local: SocketAddr, peer: Option<SocketAddr>) -> io::Result<UdpSocket> {
    let s = Socket::new(
        Domain::for_address(local),
        Type::DGRAM,
        Some(SockProtocol::UDP),
    )?;
    s.set_reuse_address(true)?;
    if local.is_ipv6() {
        s.set_only_v6(false)?;
    }
    s.bind(&local.into())?;
    if let Some(p) = peer {
        s.connect(&p.into())?;
    }
    Ok(s.into())
}

/// The same address in one family: an IPv4 client of a dual-stack listener appears as
/// `::ffff:a.b.c.d` on one socket and `a.b.c.d` on another.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn first_contact(ctx: &Arc<Ctx>, mut s: TcpStream, peer: SocketAddr, order: u64) {
    let deadline = Instant::now() + ctx.config.handshake_timeout;
    let started = Instant::now();
    let mut raw = [0u8; COOKIE_BYTES];
    let got = read_exact_by(&mut s, &mut raw, deadline);
    ctx.pending.fetch_sub(1, Ordering::AcqRel);
    // A connection that never sent a cookie is not a session (as a native connection that
    // never sent its hello): counted, not logged.
    let Ok(()) = got else {
        ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let refuse = |s: &mut TcpStream, reason: &str| {
        ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
        let _ = write_all_within(s, &[State::AccessDenied.code()], Duration::from_secs(1));
        log(ctx, peer, started, Err(Ended::Refused(reason.into())), None);
    };
    let Ok(cookie) = Cookie::parse(&raw) else {
        refuse(
            &mut s,
            "not an iperf3 cookie (36 characters of a-z2-7 and a NUL)",
        );
        return;
    };
    let (tx, rx) = mpsc::sync_channel(2 * super::codec::MAX_STREAMS as usize);
    {
        let mut active = ctx.active.lock().unwrap_or_else(|p| p.into_inner());
        match active.as_ref() {
            Some(a) if a.cookie == cookie => {
                // A data stream, taken only from the test's own client.
                if canonical(peer.ip()) != a.client || a.streams.try_send((order, s)).is_err() {
                    ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            Some(_) => {
                drop(active);
                refuse(&mut s, "busy: another iperf3 test runs (ACCESS_DENIED)");
                return;
            }
            None => {}
        }
        // A new test: it takes one of the agent's --max-sessions slots, as a native session.
        let slot = match &ctx.slots {
            Some(slots) => match slots.take() {
                Some(slot) => Some(slot),
                None => {
                    drop(active);
                    ctx.stats
                        .refused_sessions_total
                        .fetch_add(1, Ordering::Relaxed);
                    refuse(
                        &mut s,
                        "busy: the agent's --max-sessions are all taken (ACCESS_DENIED)",
                    );
                    return;
                }
            },
            None => None,
        };
        *active = Some(Active {
            cookie,
            client: canonical(peer.ip()),
            streams: tx,
            _slot: slot,
        });
    }
    ctx.stats.sessions.fetch_add(1, Ordering::AcqRel);
    let mut spec = None;
    let end = session(ctx, s, peer, rx, &mut spec);
    ctx.stats.sessions.fetch_sub(1, Ordering::AcqRel);
    if end.is_ok() {
        ctx.stats.completed_total.fetch_add(1, Ordering::Relaxed);
    } else {
        ctx.stats.refused_total.fetch_add(1, Ordering::Relaxed);
    }
    *ctx.active.lock().unwrap_or_else(|p| p.into_inner()) = None;
    log(ctx, peer, started, end, spec);
}

/// Tells the agent's session log (`config.on_session`) how a test ended, in the record its
/// own sessions use; what came from the client is escaped.
fn log(
    ctx: &Ctx,
    peer: SocketAddr,
    started: Instant,
    end: Result<SideReport, Ended>,
    spec: Option<TestSpec>,
) {
    let Some(log) = &ctx.config.on_session else {
        return;
    };
    let (outcome, message, report) = match end {
        Ok(report) => ("completed", None, Some(report)),
        Err(Ended::Refused(why)) => ("refused", Some(why), None),
        Err(Ended::Failed(why)) => ("failed", Some(why), None),
    };
    let spec = spec.map(|mut s| {
        s.congestion = s.congestion.map(|c| wirespeed_model::peer::escape(&c));
        s
    });
    log(&SessionRecord {
        session: ctx.sessions.fetch_add(1, Ordering::Relaxed) + 1,
        peer: peer.to_string(),
        outcome,
        message: message.map(|m| wirespeed_model::peer::escape(&m)),
        spec,
        report,
        seconds: started.elapsed().as_secs_f64(),
        queued_seconds: None,
        protocol: Some("iperf3"),
    });
}

/// iperf3's error numbers (`iperf_api.h`) a refusal is sent with: the client prints its own
/// sentence for each.
mod errno {
    pub(super) const DURATION: i32 = 5;
    pub(super) const NUM_STREAMS: i32 = 6;
    pub(super) const BLOCK_SIZE: i32 = 7;
    pub(super) const BUF_SIZE: i32 = 8;
    pub(super) const MSS: i32 = 10;
    pub(super) const TOTAL_RATE: i32 = 27;
    pub(super) const RECV_PARAMS: i32 = 114;
    pub(super) const AUTH: i32 = 142;
    pub(super) const CREATE_STREAMS: i32 = 118;
    pub(super) const SET_CONGESTION: i32 = 134;
}

/// Why a session ended without results, for the session log.
#[derive(Debug)]
enum Ended {
    /// Told the client (iperf3's SERVER_ERROR or ACCESS_DENIED): why.
    Refused(String),
    /// The client broke off, went silent or broke the protocol: what it did.
    Failed(String),
}

/// `what` broke the session; the same for every failed read or write of the control
/// connection.
fn failed(what: &str) -> Ended {
    Ended::Failed(what.to_string())
}

/// Tells the client iperf3's error number `code` (its client prints its own sentence for it);
/// the log gets `why`.
fn server_error(s: &mut TcpStream, code: i32, why: &str) -> Ended {
    let mut msg = vec![State::ServerError.code()];
    msg.extend_from_slice(&code.to_be_bytes());
    msg.extend_from_slice(&0i32.to_be_bytes());
    let _ = write_all_within(s, &msg, Duration::from_secs(1));
    Ended::Refused(format!("{why} (iperf3 error {code})"))
}

/// The error number for a refusal of the parameters.
fn refusal_code(p: &Params, reason: &str) -> i32 {
    if p.authtoken.is_some() {
        errno::AUTH
    } else if reason.contains("-P") || reason.contains("--max-streams") || reason.contains("memory")
    {
        errno::NUM_STREAMS
    } else if reason.contains("-t") || reason.contains("--max-duration") {
        errno::DURATION
    } else if reason.contains("-l") {
        errno::BLOCK_SIZE
    } else if reason.contains("-w") {
        errno::BUF_SIZE
    } else if reason.contains("-M") {
        errno::MSS
    } else if reason.contains("-b") || reason.contains("rate") {
        errno::TOTAL_RATE
    } else {
        errno::RECV_PARAMS
    }
}

/// The test in wirespeed's terms, for the agent's limits.
fn spec_of(t: &TestParams) -> TestSpec {
    TestSpec {
        protocol: if t.udp { Protocol::Udp } else { Protocol::Tcp },
        direction: t.direction,
        streams: t.streams,
        amount: if t.seconds > 0 && t.bytes == 0 {
            Amount::Seconds(t.seconds as f64)
        } else {
            Amount::Bytes(t.bytes)
        },
        length_bytes: t.length,
        window_bytes: t.window,
        nodelay: t.nodelay,
        mss_bytes: t.mss,
        congestion: t.congestion.clone(),
        rate_bits_per_second: t.bits_per_second,
        omit: Duration::from_secs(t.omit_seconds),
        tos: t.tos,
        ..TestSpec::default()
    }
}

fn session(
    ctx: &Arc<Ctx>,
    mut ctrl: TcpStream,
    peer: SocketAddr,
    streams_rx: mpsc::Receiver<(u64, TcpStream)>,
    logged_spec: &mut Option<TestSpec>,
) -> Result<SideReport, Ended> {
    let _ = ctrl.set_nodelay(true);
    let hs = ctx.config.handshake_timeout;
    let send = |ctrl: &mut TcpStream, st: State| {
        write_all_within(ctrl, &[st.code()], hs)
            .map_err(|_| failed("the client stopped reading the control connection"))
    };
    send(&mut ctrl, State::ParamExchange)?;
    let params: Params = match read_json(&mut ctrl, MAX_PARAMS_BYTES, Instant::now() + hs) {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            return Err(server_error(
                &mut ctrl,
                errno::RECV_PARAMS,
                &format!("parameters refused: {e}"),
            ));
        }
        Err(e) => {
            return Err(Ended::Failed(format!(
                "no parameters within --handshake-timeout: {e}"
            )));
        }
    };
    let test = match params.check() {
        Ok(t) => t,
        Err(CodecError::Refused(r)) => {
            let code = refusal_code(&params, &r);
            return Err(server_error(&mut ctrl, code, &r));
        }
        Err(e) => {
            return Err(server_error(
                &mut ctrl,
                errno::RECV_PARAMS,
                &format!("parameters refused: {e}"),
            ));
        }
    };
    let spec = spec_of(&test);
    *logged_spec = Some(spec.clone());
    let limits = &ctx.config.limits;
    if let Some(r) = limits.check(&spec) {
        return Err(server_error(&mut ctrl, refusal_code(&params, &r), &r));
    }
    if test.seconds + test.omit_seconds > limits.max_duration.as_secs() && test.bytes == 0 {
        return Err(server_error(
            &mut ctrl,
            errno::DURATION,
            &format!(
                "-t {} s with -O {} s is longer than --max-duration {} s",
                test.seconds,
                test.omit_seconds,
                limits.max_duration.as_secs()
            ),
        ));
    }
    let flows = if test.direction == Direction::Both {
        2
    } else {
        1
    } * test.streams as usize;
    let Ok(_memory) = ctx
        .budget
        .reserve(SESSION_OVERHEAD_BYTES + streams_cost(&spec, flows))
    else {
        return Err(server_error(
            &mut ctrl,
            errno::NUM_STREAMS,
            "the streams' buffers do not fit in what is left of --max-memory",
        ));
    };

    // The streams, in the client's creation order: its sending streams first.
    let client_sends: Vec<bool> = match test.direction {
        Direction::Send => vec![true; flows],
        Direction::Receive => vec![false; flows],
        Direction::Both => (0..flows).map(|i| i < test.streams as usize).collect(),
    };
    send(&mut ctrl, State::CreateStreams)?;
    let deadline = Instant::now() + hs;
    let mut tcp_streams = Vec::new();
    let mut udp_streams = Vec::new();
    let local = ctrl
        .local_addr()
        .map_err(|e| Ended::Failed(format!("control connection: {e}")))?;
    for _ in 0..flows {
        if test.udp {
            match accept_udp(ctx, canonical(peer.ip()), local, deadline) {
                Ok(u) => udp_streams.push(u),
                Err(_) => {
                    return Err(server_error(
                        &mut ctrl,
                        errno::CREATE_STREAMS,
                        "a UDP stream's greeting did not come within --handshake-timeout",
                    ));
                }
            }
        } else {
            match streams_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((order, t)) => {
                    if let Err(e) = sockopt::apply_options(&t, &spec, true) {
                        return Err(server_error(
                            &mut ctrl,
                            errno::SET_CONGESTION,
                            &format!("a stream's socket options: {e}"),
                        ));
                    }
                    tcp_streams.push((order, t));
                }
                Err(_) => {
                    return Err(server_error(
                        &mut ctrl,
                        errno::CREATE_STREAMS,
                        "a TCP stream did not come within --handshake-timeout",
                    ));
                }
            }
        }
    }
    // The client connects its streams one after another, so accept order is its creation
    // order; arrival on the channel is not (with --bidir a swap made both ends send on one
    // connection and read on the other).
    tcp_streams.sort_by_key(|(order, _)| *order);
    let tcp_streams: Vec<TcpStream> = tcp_streams.into_iter().map(|(_, t)| t).collect();
    // What the streams really use, as iperf3's server reports it (its client prints it as
    // receiver_tcp_congestion, or sender_ with -R), also when -C chose nothing.
    let congestion_used = tcp_streams.first().and_then(sockopt::congestion);
    // iperf3's -b on TCP is a per-stream rate: where this end sends (-R, --bidir) the kernel's
    // pacing holds it, as `tcp -b` does; a cap the socket does not take ends the test.
    if !test.udp && test.bits_per_second > 0 {
        for (t, &client_sends) in tcp_streams.iter().zip(&client_sends) {
            if !client_sends && sockopt::cap_pacing_rate(t, test.bits_per_second).is_err() {
                return Err(server_error(
                    &mut ctrl,
                    errno::SET_CONGESTION,
                    "the kernel's pacing does not take -b on this socket",
                ));
            }
        }
    }
    for u in &udp_streams {
        let _ = sockopt::apply_options(u, &spec, false);
    }
    send(&mut ctrl, State::TestStart)?;
    send(&mut ctrl, State::TestRunning)?;

    let omit = Duration::from_secs(test.omit_seconds);
    let shared = Shared::new(omit, test.bytes);
    let len = test.length as usize;
    let mut threads = Vec::with_capacity(flows);
    let mut tcp_iter = tcp_streams.into_iter();
    let mut udp_iter = udp_streams.into_iter();
    for &client_sends in &client_sends {
        let sh = shared.clone();
        let (rate, wide) = (test.bits_per_second, test.udp_counters_64bit);
        let t = if test.udp {
            let u = udp_iter.next().ok_or(failed("a UDP stream went missing"))?;
            if client_sends {
                std::thread::spawn(move || stream::udp_recv(u, len, wide, sh))
            } else {
                std::thread::spawn(move || stream::udp_send(u, len, rate, wide, sh))
            }
        } else {
            let s = tcp_iter.next().ok_or(failed("a TCP stream went missing"))?;
            if client_sends {
                std::thread::spawn(move || stream::tcp_recv(s, len, sh, stream::DRAIN_WAIT))
            } else {
                std::thread::spawn(move || stream::tcp_send(s, len, sh))
            }
        };
        threads.push(t);
    }

    // The client ends the test; the agent stops it if the client does not: a timed one once
    // its data has stopped moving past -t (Limits::test_end), as the agent's own tests.
    let asked = (test.bytes == 0).then(|| Duration::from_secs(test.seconds + test.omit_seconds));
    let mut watch = EndWatch::new(limits, asked);
    let started = Instant::now();
    // What the streams have moved, told to the totals as it moves (bytes after the warm-up).
    let mut told = (0u64, 0u64);
    let tell = |told: &mut (u64, u64), sent: u64, received: u64| {
        let s = &ctx.stats;
        s.sent_bytes_total
            .fetch_add(sent.saturating_sub(told.0), Ordering::Relaxed);
        s.received_bytes_total
            .fetch_add(received.saturating_sub(told.1), Ordering::Relaxed);
        *told = (told.0.max(sent), told.1.max(received));
    };
    let end = loop {
        tell(
            &mut told,
            shared.sent.load(Ordering::Relaxed),
            shared.received.load(Ordering::Relaxed),
        );
        if ctx.stop.load(Ordering::Acquire) {
            break None;
        }
        if let Some(why) = watch.stop_now(limits, started.elapsed(), told.0 + told.1) {
            break Some(Err(why));
        }
        match read_state(&mut ctrl, Instant::now() + LIVE_POLL) {
            Ok(Ok(st)) => break Some(Ok(st)),
            Ok(Err(_)) => break Some(Ok(State::ClientTerminate)),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {}
            Err(_) => break Some(Ok(State::ClientTerminate)),
        }
    };
    shared.stop.store(true, Ordering::Relaxed);
    let wall = started.elapsed().saturating_sub(omit).as_secs_f64();
    let counts: Vec<Count> = threads
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    // The streams' own counts are the final word; what they add beyond the live figures is
    // the last moments' bytes.
    let (mut sent, mut received) = (0u64, 0u64);
    for (c, sends) in counts.iter().zip(&client_sends) {
        if *sends {
            received += c.bytes;
        } else {
            sent += c.bytes;
        }
    }
    tell(&mut told, sent, received);
    match end {
        Some(Ok(State::TestEnd)) => {}
        None => {
            let _ = send(&mut ctrl, State::ServerTerminate);
            return Err(Ended::Refused("the agent is shutting down".into()));
        }
        Some(Err(why)) => {
            let _ = send(&mut ctrl, State::ServerTerminate);
            return Err(Ended::Refused(format!(
                "{} (SERVER_TERMINATE)",
                limits.stopped(asked, why)
            )));
        }
        Some(Ok(st)) => {
            return Err(Ended::Failed(format!(
                "the client ended the test with {st:?} instead of TEST_END"
            )));
        }
    }
    send(&mut ctrl, State::ExchangeResults)?;
    let idle = ctx.config.idle_timeout;
    let _theirs: Results = match read_json(&mut ctrl, MAX_RESULTS_BYTES, Instant::now() + idle) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(Ended::Failed(format!("the client's results: {e}"))),
        Err(e) => {
            return Err(Ended::Failed(format!(
                "no results from the client within --idle-timeout: {e}"
            )));
        }
    };
    let ids: Vec<(u64, bool)> = client_sends
        .iter()
        .enumerate()
        .map(|(i, c)| (stream_id(i as u32), !c))
        .collect();
    let mut ours = results_of(&ids, &counts, wall, !test.udp);
    if !test.udp {
        ours.congestion_used = congestion_used.or_else(|| test.congestion.clone());
    }
    if test.get_server_output {
        ours.server_output_text = Some(server_output(&test, &ids, &counts));
    }
    write_all_within(&mut ctrl, &encode_json(&ours), idle)
        .map_err(|_| failed("the client stopped reading the control connection"))?;
    send(&mut ctrl, State::DisplayResults)?;
    // IPERF_DONE, or the client's close: either ends the test.
    let _ = read_state(&mut ctrl, Instant::now() + idle);
    Ok(side_report(&ids, &counts, wall, test.udp))
}

/// When a running test must be stopped if its client has not ended it: the agent's
/// [`Limits::test_end`], moved on each time the streams' byte total moves past `-t`, so that a
/// slow path drains what its sender queued (up to `DRAIN_CAP`) where a fixed grace cut it.
#[doc(hidden)]
pub struct EndWatch {
    asked: Option<Duration>,
    moved: u64,
    end: Duration,
    why: Stopped,
}

impl EndWatch {
    #[doc(hidden)]
    pub fn new(limits: &Limits, asked: Option<Duration>) -> EndWatch {
        let (end, why) = limits.test_end(asked, Duration::ZERO);
        EndWatch {
            asked,
            moved: 0,
            end,
            why,
        }
    }

    /// `elapsed`: since the test started; `moved`: bytes the streams have sent and received
    /// in all. `Some(why)` once the test is past its end.
    #[doc(hidden)]
    pub fn stop_now(&mut self, limits: &Limits, elapsed: Duration, moved: u64) -> Option<Stopped> {
        if moved != self.moved {
            self.moved = moved;
            if self.asked.is_some_and(|t| elapsed >= t) {
                (self.end, self.why) = limits.test_end(self.asked, elapsed);
            }
        }
        (elapsed >= self.end).then_some(self.why)
    }
}

/// This end's view of a finished test as the agent's own sessions report theirs, for the
/// session log: each stream's bytes, time and CPU, and a UDP receiver's loss and jitter.
/// `ids`: each stream's id and whether this end sent on it.
fn side_report(ids: &[(u64, bool)], counts: &[Count], wall: f64, udp: bool) -> SideReport {
    let streams = ids
        .iter()
        .zip(counts)
        .map(|(&(id, sends), c)| StreamReport {
            id: id as u32,
            flow: if sends { Flow::Download } else { Flow::Upload },
            role: if sends { Role::Sender } else { Role::Receiver },
            bytes: c.bytes,
            calls: c.calls,
            seconds: c.seconds,
            cpu: c.cpu,
            socket: Default::default(),
            tcp_info: if udp { None } else { c.tcp_info.clone() },
            udp: udp.then(|| c.udp_report(sends)),
            zerocopy: None,
            longest_call_seconds: None,
            skipped_in_window_seconds: None,
            drain: None,
            error: c.error.clone(),
        })
        .collect();
    let cpu = counts.iter().fold(CpuTime::default(), |mut t, c| {
        t.add(&c.cpu);
        t
    });
    SideReport {
        software: format!("wirespeed {} iperf3 service", env!("CARGO_PKG_VERSION")),
        streams,
        intervals: Vec::new(),
        cpu,
        wall_seconds: wall,
        environment: None,
    }
}

/// Waits for one UDP stream's greeting from `client` and answers it from a socket connected
/// to the greeting's source. Datagrams from any other address are dropped unanswered.
fn accept_udp(
    ctx: &Ctx,
    client: IpAddr,
    local: SocketAddr,
    deadline: Instant,
) -> io::Result<UdpSocket> {
    let mut buf = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no UDP greeting"));
        }
        ctx.udp.set_read_timeout(Some(left))?;
        let (n, from) = match ctx.udp.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => return Err(e),
        };
        if canonical(from.ip()) != client || n != 4 || buf[..4] != UDP_CONNECT_MSG {
            continue;
        }
        let s = udp_on(local, Some(from))?;
        s.send(&UDP_CONNECT_REPLY)?;
        return Ok(s);
    }
}

/// This end's view as text, for a client's `--get-server-output` (iperf3 prints it under
/// "Server output:"): one line per stream.
fn server_output(test: &TestParams, ids: &[(u64, bool)], counts: &[Count]) -> String {
    let mut out = format!(
        "wirespeed {} iperf3 service: {} test, {} stream(s) per direction\n",
        env!("CARGO_PKG_VERSION"),
        if test.udp { "UDP" } else { "TCP" },
        test.streams
    );
    for ((id, sends), c) in ids.iter().zip(counts) {
        let rate = if c.seconds > 0.0 {
            c.bytes as f64 * 8.0 / c.seconds
        } else {
            0.0
        };
        out.push_str(&format!(
            "[{id:3}] {:.2} s  {} bytes  {:.1} Mbit/s  {}{}\n",
            c.seconds,
            c.bytes,
            rate / 1e6,
            if *sends { "sender" } else { "receiver" },
            if test.udp && !sends {
                format!(
                    "  lost {}/{}  jitter {:.3} ms",
                    c.lost,
                    c.packets,
                    c.jitter * 1e3
                )
            } else {
                String::new()
            }
        ));
    }
    out
}
