//! The client side of a test: handshake, data connections, the live interval loop, and the
//! exchange of both ends' views. Measuring returns data; only the binary prints.

use crate::address::with_port;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::auth::AuthKey;
use crate::control::handshake::{self, HandshakeError};
use crate::control::{Message, Phase, data_greeting};
use crate::engine::{DataSocket, Running, Sample, Side};
use crate::env::Environment;
use crate::report::{Interval, IntervalStream, IntervalSum, Role, SideReport};
use crate::session::{Control, SessionError};
use crate::sockopt;
use crate::spec::{Direction, Protocol, TestSpec};

pub use crate::control::handshake::software;

/// How to run one test.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The agent's control address.
    pub agent: SocketAddr,
    /// Local address to send from (`--bind`).
    pub bind: Option<IpAddr>,
    /// The test, with its `-i` ([`TestSpec::interval`]) and `-O` ([`TestSpec::omit`]): this
    /// end ticks and leaves out the warm-up by the same figures the agent is sent, held once.
    pub spec: TestSpec,
    /// The pre-shared key, if the agent asks for one.
    pub auth: Option<AuthKey>,
    /// CPU for the client's stream threads (`-A`).
    pub cpu: Option<usize>,
    /// How long a silent agent is waited for.
    pub idle_timeout: Duration,
    /// Set to stop the test early (SIGINT); the partial result is returned.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// A file this end's TCP senders send with `sendfile` (`--file`), from the start again
    /// when they reach its end.
    pub source: Option<std::path::PathBuf>,
}

/// This end's own socket choices, the ones iperf3's client names (`--connect-timeout`,
/// `--cport`, `--bind-dev`, `--dont-fragment`): they shape this end's sockets alone and are
/// never sent to the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalOptions {
    /// How long a connection (control or data) may take to be answered; `None`: as long as
    /// the agent may stay silent ([`ClientConfig::idle_timeout`]).
    pub connect_timeout: Option<Duration>,
    /// The first local port of the data connections or sockets; flow `i` (in
    /// [`TestSpec::flows`] order) takes this port plus `i`, as iperf3's `--cport` with `-P`.
    /// The control connection keeps an ephemeral port.
    pub client_port: Option<u16>,
    /// The interface every socket of this end is bound to (`SO_BINDTODEVICE`).
    pub bind_device: Option<String>,
    /// UDP: this end's datagrams carry IPv4's Don't Fragment bit (IPv6: are never fragmented
    /// here), `IP_MTU_DISCOVER = IP_PMTUDISC_DO`; a datagram over the path MTU is refused
    /// before the test.
    pub dont_fragment: bool,
}

/// Why a test did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent could not be reached.
    #[error("cannot connect to the agent at {addr}: {source}")]
    Connect {
        /// Where.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The agent refused the test; the reason is its own sentence.
    #[error("{0}")]
    Refused(String),
    /// The agent reported an error.
    #[error("the agent reported: {0}")]
    Agent(String),
    /// `--connect-timeout`: the agent did not answer a connection in time.
    #[error(
        "no answer from the agent at {addr} within {} ms (--connect-timeout): check the host and port, or give it longer",
        timeout.as_millis()
    )]
    ConnectTimeout {
        /// Where.
        addr: SocketAddr,
        /// How long it was given.
        timeout: Duration,
    },
    /// A local socket option or socket failed.
    #[error("{0}")]
    Local(String),
    /// The control session broke before the test started.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The agent needs a key and none was given.
    #[error("the agent requires authentication: pass --auth-key-file with the agent's key")]
    KeyRequired,
}

/// What a test produced. `error` is set when it ended early; the rest is the partial result.
#[derive(Debug, Clone)]
pub struct TestOutcome {
    /// The client's view.
    pub client: SideReport,
    /// The agent's view (missing if the agent went away).
    pub agent: Option<SideReport>,
    /// Each interval.
    pub intervals: Vec<Interval>,
    /// Why the test ended early.
    pub error: Option<String>,
    /// The control connection's local and remote addresses.
    pub local: SocketAddr,
    /// The agent's control address.
    pub remote: SocketAddr,
    /// How long the test waited for another to end on an `--exclusive` agent (0: it did not,
    /// or the agent did not say).
    pub queued_seconds: f64,
}

/// Receives each interval as it ends (`-i` lines, `--json-stream`).
pub trait Progress {
    /// Called once per interval, in order.
    fn interval(&mut self, interval: &Interval);

    /// Called when the agent (`serve --exclusive`) says the test waits for another to end:
    /// when the wait starts and every second after; `position` tests are ahead of it.
    fn queued(&mut self, position: u32, waited: Duration) {
        let _ = (position, waited);
    }
}

impl<F: FnMut(&Interval)> Progress for F {
    fn interval(&mut self, interval: &Interval) {
        self(interval)
    }
}

fn local_err(e: impl std::fmt::Display) -> ClientError {
    ClientError::Local(e.to_string())
}

fn new_tcp(
    cfg: &ClientConfig,
    local: &LocalOptions,
    mptcp: bool,
    port: Option<u16>,
) -> Result<socket2::Socket, ClientError> {
    let domain = socket2::Domain::for_address(cfg.agent);
    let protocol = if mptcp {
        socket2::Protocol::MPTCP
    } else {
        socket2::Protocol::TCP
    };
    let s = socket2::Socket::new(domain, socket2::Type::STREAM, Some(protocol)).map_err(|e| {
        if mptcp {
            local_err(format!(
                "this kernel does not open Multipath TCP sockets ({e}): enable it (sysctl net.mptcp.enabled=1) or drop --mptcp"
            ))
        } else {
            local_err(e)
        }
    })?;
    bind_device(&s, local)?;
    if cfg.bind.is_some() || port.is_some() {
        let ip = cfg.bind.unwrap_or_else(|| unspecified(cfg.agent));
        let port = port.unwrap_or(0);
        if port != 0 {
            // A port named again by the next test may still hold a closed connection's
            // TIME_WAIT; the connection it makes has a new peer port, so reuse is safe.
            s.set_reuse_address(true).map_err(local_err)?;
        }
        s.bind(&SocketAddr::new(ip, port).into())
            .map_err(|e| bind_err(ip, port, e))?;
    }
    Ok(s)
}

/// The unspecified address of `agent`'s family.
fn unspecified(agent: SocketAddr) -> IpAddr {
    if agent.is_ipv4() {
        IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)
    }
}

fn bind_err(ip: IpAddr, port: u16, e: io::Error) -> ClientError {
    if port == 0 {
        local_err(format!("cannot bind to {ip}: {e}"))
    } else if e.kind() == io::ErrorKind::AddrInUse {
        local_err(format!(
            "--cport: port {port} is in use on this host: choose another (each of -P N streams takes one, from --cport on)"
        ))
    } else {
        local_err(format!("cannot bind to port {port} of {ip} (--cport): {e}"))
    }
}

/// `--bind-dev`: `SO_BINDTODEVICE` on one of this end's sockets.
fn bind_device(s: &impl std::os::fd::AsFd, local: &LocalOptions) -> Result<(), ClientError> {
    let Some(dev) = &local.bind_device else {
        return Ok(());
    };
    socket2::SockRef::from(s)
        .bind_device(Some(dev.as_bytes()))
        .map_err(|e| {
            let why = if e.raw_os_error() == Some(libc::ENODEV) {
                "no such interface on this host: give one that `ip link` lists".to_string()
            } else {
                e.to_string()
            };
            local_err(format!("--bind-dev {dev}: {why}"))
        })
}

fn connect(
    s: &socket2::Socket,
    cfg: &ClientConfig,
    local: &LocalOptions,
) -> Result<TcpStream, ClientError> {
    let timeout = local.connect_timeout.unwrap_or(cfg.idle_timeout);
    s.connect_timeout(&cfg.agent.into(), timeout)
        .map_err(|source| match (local.connect_timeout, source.kind()) {
            (Some(timeout), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => {
                ClientError::ConnectTimeout {
                    addr: cfg.agent,
                    timeout,
                }
            }
            _ => ClientError::Connect {
                addr: cfg.agent,
                source,
            },
        })?;
    Ok(s.try_clone().map_err(local_err)?.into())
}

/// `--dont-fragment`: the Don't Fragment bit on a UDP socket connected to the agent, and a
/// datagram of `length` bytes checked against the path MTU the kernel now knows.
fn dont_fragment(s: &UdpSocket, length: u32, agent: SocketAddr) -> Result<(), ClientError> {
    use rustix::net::sockopt;
    let (mtu, headers) = if agent.is_ipv4() {
        sockopt::set_ip_mtu_discover(s, sockopt::Ipv4PathMtuDiscovery::DO)
            .map_err(|e| local_err(format!("--dont-fragment: {e}")))?;
        (sockopt::ip_mtu(s), 28)
    } else {
        sockopt::set_ipv6_mtu_discover(s, sockopt::Ipv6PathMtuDiscovery::DO)
            .map_err(|e| local_err(format!("--dont-fragment: {e}")))?;
        (sockopt::ipv6_mtu(s), 48)
    };
    let mtu = mtu.map_err(|e| local_err(format!("--dont-fragment: path MTU unknown ({e})")))?;
    let datagram = u64::from(length) + headers;
    if datagram > u64::from(mtu) {
        return Err(local_err(format!(
            "--dont-fragment: a datagram of {datagram} bytes (-l {length} and {headers} of UDP/IP headers) is over the path MTU to {} ({mtu} bytes) and may not be fragmented: use -l {} or less, or drop --dont-fragment",
            agent.ip(),
            u64::from(mtu).saturating_sub(headers)
        )));
    }
    Ok(())
}

/// Runs one test against an agent, calling `progress` at each interval.
pub fn run(cfg: &ClientConfig, progress: &mut dyn Progress) -> Result<TestOutcome, ClientError> {
    run_with_options(cfg, &LocalOptions::default(), progress)
}

/// [`run`], with this end's sockets shaped by `local`.
pub fn run_with_options(
    cfg: &ClientConfig,
    local_options: &LocalOptions,
    progress: &mut dyn Progress,
) -> Result<TestOutcome, ClientError> {
    let lo = local_options;
    let spec = cfg.spec.clone();
    spec.validate().map_err(ClientError::Local)?;
    // The control connection is plain TCP whatever the data connections are.
    let s = new_tcp(cfg, lo, false, None)?;
    let stream = connect(&s, cfg, lo)?;
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().map_err(local_err)?;
    let mut ctl = Control::new(stream, &[], false, false);
    let idle = cfg.idle_timeout;
    let welcome =
        handshake::greet_queued(&mut ctl, cfg.auth.as_ref(), idle).map_err(|e| match e {
            HandshakeError::Channel(e) => ClientError::Session(e),
            HandshakeError::Io(e) => ClientError::Session(SessionError::Io(e)),
            HandshakeError::KeyRequired => ClientError::KeyRequired,
            HandshakeError::Refused(reason) => ClientError::Refused(reason),
            HandshakeError::Agent(message) => ClientError::Agent(message),
            // Version, a malformed challenge, a message out of place: the sentence says it all.
            other => ClientError::Refused(other.to_string()),
        })?;
    let spec = request_for(spec, &welcome.software)?;
    // UDP: bind our ends first, so the agent's sockets talk to these ports alone.
    let flows = cfg.spec.flows();
    let mut udp = Vec::new();
    if cfg.spec.protocol == Protocol::Udp {
        // The control connection's own address keeps a link-local zone; -B names an address.
        let from = cfg.bind.map_or(local, |ip| SocketAddr::new(ip, 0));
        for (i, &(id, flow)) in flows.iter().enumerate() {
            let port = flow_port(lo, i)?;
            let s =
                UdpSocket::bind(with_port(from, port)).map_err(|e| bind_err(from.ip(), port, e))?;
            bind_device(&s, lo)?;
            sockopt::apply_options(&s, &cfg.spec, false).map_err(local_err)?;
            crate::udp::enable_gro(&s);
            udp.push((id, flow, s));
        }
    }
    let client_udp_ports = udp
        .iter()
        .map(|(_, _, s)| s.local_addr().map(|a| a.port()))
        .collect::<io::Result<Vec<_>>>()
        .map_err(local_err)?;
    ctl.send(&Message::Request {
        spec,
        client_udp_ports,
    })
    .map_err(SessionError::Io)?;
    ctl.set_phase(Phase::AwaitRequest);
    let requested = Instant::now();
    let mut queued = false;
    let (cookie, agent_udp_ports) = loop {
        match ctl.recv(idle, "waiting for the agent to accept the test")? {
            Message::Accepted {
                cookie,
                agent_udp_ports,
            } => break (cookie, agent_udp_ports),
            // `serve --exclusive`: another test runs; the agent says so every second.
            Message::Queued {
                position,
                waited_seconds,
            } => {
                queued = true;
                let waited = Duration::try_from_secs_f64(waited_seconds).unwrap_or_default();
                progress.queued(position, waited);
                if cfg
                    .interrupt
                    .as_ref()
                    .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
                {
                    return Err(ClientError::Local(
                        "interrupted while waiting for the agent (another test was running)".into(),
                    ));
                }
            }
            other => return Err(ended(other)),
        }
    };
    let queued_seconds = if queued {
        requested.elapsed().as_secs_f64()
    } else {
        0.0
    };
    let mut sockets = Vec::new();
    if cfg.spec.protocol == Protocol::Tcp {
        for (i, &(id, flow)) in flows.iter().enumerate() {
            let port = lo.client_port.map(|_| flow_port(lo, i)).transpose()?;
            let s = new_tcp(cfg, lo, cfg.spec.mptcp, port)?;
            sockopt::apply_options(&s, &cfg.spec, true).map_err(local_err)?;
            let mut t = connect(&s, cfg, lo)?;
            sockopt::set_timeouts(&t, idle).map_err(local_err)?;
            t.write_all(&data_greeting(&cookie, id))
                .map_err(local_err)?;
            sockets.push((id, flow, DataSocket::Tcp(t)));
        }
    } else {
        if agent_udp_ports.len() != udp.len() {
            return Err(ClientError::Agent(
                "the agent named the wrong number of UDP ports".into(),
            ));
        }
        for ((id, flow, s), port) in udp.into_iter().zip(agent_udp_ports) {
            s.connect(with_port(cfg.agent, port)).map_err(local_err)?;
            if lo.dont_fragment {
                dont_fragment(&s, cfg.spec.length_bytes, cfg.agent)?;
            }
            sockets.push((id, flow, DataSocket::Udp(s)));
        }
    }
    match ctl.recv(idle, "waiting for the agent to start the test")? {
        Message::Start => {}
        other => return Err(ended(other)),
    }
    let running = Running::start(
        &cfg.spec,
        Side::Client,
        sockets,
        cookie.tag(),
        cfg.cpu,
        cfg.source.clone(),
        Instant::now(),
    )
    .map_err(local_err)?;
    let mut outcome = TestOutcome {
        client: SideReport::default(),
        agent: None,
        intervals: Vec::new(),
        error: None,
        local,
        remote: cfg.agent,
        queued_seconds,
    };
    let error = drive(&mut ctl, &running, cfg, progress, &mut outcome.intervals);
    if error.is_some() {
        running.abort();
    }
    outcome.client = running.finish();
    outcome.client.environment = Some(Environment::collect(Some(local.ip())));
    outcome.error = error;
    let interrupted = outcome.error.as_deref() == Some("interrupted");
    if outcome.error.is_none() {
        let deadline = idle + Duration::from_secs(5);
        match exchange(&mut ctl, &outcome.client, deadline, cfg.agent) {
            Ok(agent) => outcome.agent = Some(agent),
            Err(e) => outcome.error = Some(e),
        }
    } else if interrupted && cfg.spec.direction == Direction::Send {
        // Interrupted while only the client sent: the agent's receivers hold the count of what
        // arrived, and they stop as soon as they hear the client is done (a UDP receiver after
        // a 50 ms drain; a TCP one at the shutdown the abort made), so its view is asked for
        // with a short deadline and the partial result shows what was received, not "0 B".
        // An agent that sends (-R, --bidir) runs its senders to their end, so it is not asked.
        match exchange(
            &mut ctl,
            &outcome.client,
            INTERRUPTED_RESULTS_WAIT,
            cfg.agent,
        ) {
            Ok(agent) => outcome.agent = Some(agent),
            Err(e) => {
                let _ = ctl.send(&Message::Error {
                    message: format!("interrupted ({e})"),
                });
            }
        }
    } else {
        let _ = ctl.send(&Message::Error {
            message: outcome.error.clone().unwrap_or_default(),
        });
    }
    fix_udp_loss(&mut outcome);
    Ok(outcome)
}

/// Flow `index`'s local port: `--cport` plus the index, or 0 (ephemeral) without it.
fn flow_port(lo: &LocalOptions, index: usize) -> Result<u16, ClientError> {
    let Some(first) = lo.client_port else {
        return Ok(0);
    };
    u16::try_from(index)
        .ok()
        .and_then(|i| first.checked_add(i))
        .ok_or_else(|| {
            local_err(format!(
                "--cport {first}: stream {index} would need a port past 65535: give a lower first port"
            ))
        })
}

/// The spec the agent is sent, given what its welcome names. A TCP rate cap (`tcp -b`) goes
/// only to an agent that names [`crate::control::MAX_PACING_FEATURE`]: an older one refuses
/// the field it does not know. Such an agent can still receive a capped upload (the cap is
/// this end's, and is kept here), but cannot send capped, so a test in which it sends is
/// refused before it starts, never run uncapped.
#[doc(hidden)]
pub fn request_for(spec: TestSpec, agent_software: &str) -> Result<TestSpec, ClientError> {
    let Some(cap) = spec.max_pacing_rate_bits_per_second else {
        return Ok(spec);
    };
    if crate::control::names_feature(agent_software, crate::control::MAX_PACING_FEATURE) {
        return Ok(spec);
    }
    if spec.direction != crate::spec::Direction::Send {
        let software = agent_software
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        return Err(ClientError::Refused(format!(
            "the agent ({software}) cannot cap its TCP senders: -b {cap} bit/s with -R or --bidir \
             needs an agent of a release that does (update it), or drop -b"
        )));
    }
    Ok(TestSpec {
        max_pacing_rate_bits_per_second: None,
        ..spec
    })
}

/// A message that ends the handshake: a refusal, an error, or something out of place.
fn ended(m: Message) -> ClientError {
    match m {
        Message::Refused { reason } => ClientError::Refused(reason),
        Message::Error { message } => ClientError::Agent(message),
        other => ClientError::Agent(format!("unexpected control message '{}'", other.kind())),
    }
}

/// The running test: polls the control connection, reports intervals, relays "senders done".
/// Returns why the test ended early, if it did.
fn drive(
    ctl: &mut Control,
    running: &Running,
    cfg: &ClientConfig,
    progress: &mut dyn Progress,
    intervals: &mut Vec<Interval>,
) -> Option<String> {
    let mut told_send_done = false;
    let mut last = (0.0, running.zero());
    // The agent keeps its own intervals on the same ticks (the spec it was sent).
    let tick = cfg.spec.interval;
    let mut next = tick.map(|t| running.start + t);
    loop {
        // As the agent's SUPERVISE_TICK: the end of a test is seen at most this late.
        let polled = ctl.poll(Duration::from_millis(10));
        // An interrupt first: the signal that sets the flag also breaks the poll (EINTR), and
        // the run ended because the user asked, not because the control connection failed.
        if cfg
            .interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::Relaxed))
        {
            return Some("interrupted".into());
        }
        match polled {
            Ok(Some(Message::SendDone)) => running.peer_senders_done(),
            Ok(Some(Message::Error { message })) => {
                return Some(format!("the agent ended the test: {message}"));
            }
            Ok(_) => {}
            Err(SessionError::Closed) => {
                return Some("the agent closed the control connection mid-test".into());
            }
            Err(e) => return Some(e.to_string()),
        }
        if !told_send_done && running.senders_done() {
            if let Err(e) = ctl.send(&Message::SendDone) {
                return Some(format!("the agent went away: {e}"));
            }
            told_send_done = true;
        }
        let done = running.all_done();
        if let (Some(t), Some(at)) = (tick, next)
            && (Instant::now() >= at || done)
        {
            let end = if done {
                running.start.elapsed().as_secs_f64()
            } else {
                at.duration_since(running.start).as_secs_f64()
            };
            let now = running.samples();
            let omitted = end <= cfg.spec.omit.as_secs_f64() + 1e-9;
            if end - last.0 > 1e-3 {
                let iv = interval(last.0, end, &last.1, &now, omitted);
                progress.interval(&iv);
                intervals.push(iv);
                last = (end, now);
            } else if done && let Some(previous) = intervals.last_mut() {
                // A last slice under a millisecond joins the interval before it (already
                // shown live), so that the intervals hold every byte.
                let tail = interval(last.0, end, &last.1, &now, omitted);
                *previous = previous.extended(&tail);
                last = (end, now);
            }
            next = Some(at + t);
        }
        if done {
            return None;
        }
    }
}

/// One interval from the samples at its start and its end (both ends use it).
pub(crate) fn interval(
    start: f64,
    end: f64,
    before: &[Sample],
    now: &[Sample],
    omitted: bool,
) -> Interval {
    let secs = end - start;
    let rate = |b: u64| b as f64 * 8.0 / secs;
    let streams: Vec<IntervalStream> = now
        .iter()
        .zip(before)
        .map(|(n, b)| {
            let bytes = n.bytes - b.bytes;
            let udp = n.datagrams > 0 || b.datagrams > 0;
            let retrans = |s: &Sample| s.tcp_info.as_ref().map(|t| t.retransmits);
            IntervalStream {
                id: n.id,
                flow: n.flow,
                role: n.role,
                bytes,
                bits_per_second: rate(bytes),
                datagrams: udp.then(|| n.datagrams - b.datagrams),
                retransmits: retrans(n).map(|r| r.saturating_sub(retrans(b).unwrap_or(0))),
                cwnd_bytes: n
                    .tcp_info
                    .as_ref()
                    .map(|t| u64::from(t.cwnd_segments) * u64::from(t.mss_bytes)),
                rtt_seconds: n.tcp_info.as_ref().map(|t| t.rtt_seconds),
            }
        })
        .collect();
    let sum = |role: Role| {
        let of: Vec<&IntervalStream> = streams.iter().filter(|s| s.role == role).collect();
        (!of.is_empty()).then(|| {
            let bytes = of.iter().map(|s| s.bytes).sum();
            IntervalSum {
                bytes,
                bits_per_second: rate(bytes),
                datagrams: of.iter().map(|s| s.datagrams).sum(),
                retransmits: of.iter().map(|s| s.retransmits).sum(),
            }
        })
    };
    Interval {
        start_seconds: start,
        end_seconds: end,
        omitted,
        sum_sent: sum(Role::Sender),
        sum_received: sum(Role::Receiver),
        streams,
    }
}

/// How long an interrupted test waits for the agent's count of what it received: its
/// receivers answer within a drain (50 ms) of hearing the client is done, so this bounds a
/// busy host's delay, not the usual one, and an interrupt still takes effect promptly.
const INTERRUPTED_RESULTS_WAIT: Duration = Duration::from_secs(2);

/// Sends the client's view, waits (at most `deadline`) for the agent's.
#[doc(hidden)]
pub fn exchange(
    ctl: &mut Control,
    client: &SideReport,
    deadline: Duration,
    agent: SocketAddr,
) -> Result<SideReport, String> {
    if let Err(e) = ctl.send(&Message::Finished {
        report: client.clone(),
    }) {
        // An agent that ended the test (its --max-duration) said why and closed: its reason may
        // still be unread here when this end's own streams ended first (a UDP sender whose
        // receiver closed), and it is the one to give.
        return Err(match said_before_closing(ctl) {
            Some(message) => format!("the agent reported: {message}"),
            None => format!("the agent went away before the results: {e}"),
        });
    }
    ctl.set_phase(Phase::ExchangeResults);
    loop {
        match ctl.recv(deadline, "waiting for the agent's results") {
            Ok(Message::Results { report }) => {
                // The agent's figures are shown beside ours: an impossible one is refused,
                // named, not printed as measured.
                report
                    .check(&format!("agent {agent}"))
                    .map_err(|e| e.to_string())?;
                return Ok(report);
            }
            Ok(Message::SendDone) => {}
            Ok(Message::Error { message }) => return Err(format!("the agent reported: {message}")),
            Ok(other) => return Err(format!("unexpected control message '{}'", other.kind())),
            Err(SessionError::Closed) => {
                return Err(
                    "the agent closed the control connection before sending its results".into(),
                );
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// The error an agent sent before it closed the control connection, read from what is still
/// queued (at most a second: the connection is already gone, so the reads end at once).
fn said_before_closing(ctl: &mut Control) -> Option<String> {
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        match ctl.recv(Duration::from_millis(200), "the agent's last word") {
            Ok(Message::Error { message }) => return Some(message),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// With both views, a UDP receiver's loss is exact: datagrams sent minus datagrams received.
fn fix_udp_loss(outcome: &mut TestOutcome) {
    let Some(agent) = outcome.agent.as_mut() else {
        return;
    };
    fix_receivers(&mut outcome.client, agent);
    fix_receivers(agent, &outcome.client);
}

fn fix_receivers(receivers: &mut SideReport, senders: &SideReport) {
    for r in receivers
        .streams
        .iter_mut()
        .filter(|s| s.role == Role::Receiver)
    {
        let sent = senders
            .streams
            .iter()
            .find(|s| s.id == r.id && s.role == Role::Sender)
            .and_then(|s| s.udp.as_ref().map(|u| u.datagrams));
        if let (Some(u), Some(sent)) = (r.udp.as_mut(), sent) {
            let lost = sent.saturating_sub(u.datagrams);
            u.lost = Some(lost);
            u.lost_percent = crate::udp::percent(lost, sent);
        }
    }
}
