//! The probe engine: echo requests of many sizes to a host, and TTL-limited ones to every
//! router on the way, one at a time, in a seeded random order.
//!
//! Bellovin (seed 001) sends ICMP echoes of a range of sizes and keeps the minimum of each; the
//! per-hop tools (pathchar, pchar, clink) add TTL-limited probes so that every router on the way
//! answers with an ICMP time exceeded. This engine does both and only measures: it returns every
//! probe (hop, bytes sent, bytes returned, round trip, which clock) and the analysis lives in
//! `wirespeed_model::bestcase`.
//!
//! Probes are stop-and-wait (the next leaves when the previous has been answered or timed out,
//! plus a gap), so the probe never queues behind itself, and sizes and hops are interleaved in
//! random order so that slow drift in the path does not bias one size or one hop.

pub mod echo;

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use wirespeed_model::stats::SplitMix64;

use crate::icmp::{Family, Message};
use crate::icmp_socket::{Event, IcmpSocket, OpenError, SocketChoice, SocketKind};

/// What to probe and how.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// The host.
    pub target: IpAddr,
    /// The link of a link-local target (`fe80::1%eth0`: the interface's index); 0 for none.
    pub scope_id: u32,
    /// The TOS byte / IPv6 traffic class of every probe (`-S`); `None`: the kernel's 0.
    pub tos: Option<u8>,
    /// Probe sizes, IP packet bytes.
    pub sizes: Vec<usize>,
    /// Probes per size (per hop).
    pub per_size: u32,
    /// Probe every hop up to this TTL (the destination included) instead of the destination
    /// alone.
    pub max_ttl: Option<u8>,
    /// Pause after each probe's answer.
    pub gap: Duration,
    /// Least time between two probes to the same hop (routers limit ICMP errors per source).
    pub hop_interval: Duration,
    /// How long to wait for an answer.
    pub timeout: Duration,
    /// Seed of the probe order.
    pub seed: u64,
    /// Stop sending after this long (what was measured is kept and the result says so).
    pub max_duration: Duration,
    /// Which socket kind to use.
    pub socket: SocketChoice,
    /// Probe with UDP echo against a wirespeed agent on the target instead of ICMP echo; with
    /// `max_ttl`, probe the hops with ICMP as always and the destination also with the
    /// agent's whole echoes and short replies ([`Series`]).
    pub udp: Option<UdpTarget>,
    /// With `max_ttl`: measure only these hops (path discovery still finds them all), e.g. a
    /// further round of `--until-stable` that probes the hops still unsettled; None: every hop.
    pub only_ttls: Option<Vec<u8>>,
    /// Set (by Ctrl-C) to stop after the probe in flight: what was measured is kept and the
    /// run says `interrupted`.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Told (probes sent, probes planned) as the shuffled schedule runs, for a progress line.
    pub progress: Option<ProgressHook>,
}

/// A callback for the schedule's progress: (probes sent, probes planned).
#[derive(Clone)]
pub struct ProgressHook(pub Arc<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

impl ProbeConfig {
    fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
    }
}

/// A wirespeed agent to probe with UDP echo ([`crate::echo`]).
#[derive(Clone)]
pub struct UdpTarget {
    /// The agent's control port.
    pub port: u16,
    /// The pre-shared key, if the agent asks for one.
    pub auth: Option<crate::auth::AuthKey>,
}

impl std::fmt::Debug for UdpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpTarget")
            .field("port", &self.port)
            .field("auth", &self.auth.is_some())
            .finish()
    }
}

/// Why probing could not start or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// No ICMP socket could be opened.
    #[error("cannot open an ICMP socket for {target}: {detail}")]
    NoSocket {
        /// The target.
        target: IpAddr,
        /// Each kind tried, why it failed, and the fix.
        detail: String,
    },
    /// A probe size below the smallest echo request.
    #[error("probe size {size} is below the smallest {family} echo request, {min} bytes ({parts})")]
    SizeTooSmall {
        /// What the smallest request is made of.
        parts: &'static str,
        /// The size asked for.
        size: usize,
        /// The minimum.
        min: usize,
        /// "IPv4" or "IPv6".
        family: &'static str,
    },
    /// A send failed.
    #[error("sending a {size}-byte probe to {target} failed{hint}")]
    Send {
        /// The target.
        target: IpAddr,
        /// The probe size.
        size: usize,
        /// The OS error.
        source: std::io::Error,
        /// What to do about it.
        hint: &'static str,
    },
    /// Receiving failed.
    #[error("receiving from the ICMP socket failed: {0}")]
    Receive(std::io::Error),
    /// The UDP echo session could not be opened or broke.
    #[error("UDP echo: {0}")]
    Echo(#[from] echo::EchoError),
    /// The agent on the destination cannot answer short replies (an older release).
    #[error(
        "the agent at {target} does not answer short replies (its welcome does not name +shortreply), which --hops --udp needs to time the destination's bytes sent apart from those returned: run the same wirespeed release on it, or drop --udp"
    )]
    AgentWithoutShortReplies {
        /// The destination.
        target: IpAddr,
    },
    /// A node on the way said the target cannot be reached.
    #[error(
        "{target} is unreachable: {by} answered ICMP destination unreachable (code {code}): check the address and the routes on the way (`ip route get {target}`), or a firewall that rejects ICMP echo"
    )]
    Unreachable {
        /// The target.
        target: IpAddr,
        /// Who said so.
        by: IpAddr,
        /// The ICMP code.
        code: u8,
    },
    /// Nothing answered the path discovery.
    #[error(
        "{target} did not answer {tries} echo requests within {timeout:?} each: the host is down, unreachable, or filters ICMP echo (check with ping, or allow ICMP echo on its firewall)"
    )]
    NoAnswer {
        /// The target.
        target: IpAddr,
        /// Echo requests sent.
        tries: u32,
        /// Wait per request.
        timeout: Duration,
    },
}

/// What came back for one probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyKind {
    /// An echo reply from the destination.
    EchoReply,
    /// A time exceeded from a router.
    TimeExceeded,
    /// A destination unreachable (filtered, no route).
    Unreachable,
    /// Too big for a link on the way (fragmentation needed, packet too big).
    TooBig,
    /// Nothing before the timeout.
    Lost,
}

/// One probe.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    /// TTL it was sent with.
    pub ttl: u8,
    /// IP bytes sent.
    pub sent_bytes: usize,
    /// IP bytes of the answer (0 when lost).
    pub returned_bytes: usize,
    /// Round trip from kernel stamps (transmit to receive), ns.
    pub rtt_kernel_ns: Option<u64>,
    /// Round trip from CLOCK_MONOTONIC around the syscalls, ns.
    pub rtt_user_ns: Option<u64>,
    /// When it was sent, ns after the start.
    pub sent_at_ns: u64,
    /// Who answered.
    pub responder: Option<IpAddr>,
    /// What came back.
    pub reply: ReplyKind,
    /// The ICMP code of a destination unreachable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable_code: Option<u8>,
    /// The MTU a too-big answer reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub too_big_mtu: Option<u32>,
    /// Which series it belongs to: the probes of the run (ICMP, or the agent's echo with
    /// `--udp` alone), or with `--hops --udp` one of the agent's two series at the destination.
    #[serde(default, skip_serializing_if = "Series::is_probe")]
    pub series: Series,
    /// In the agent's series, its residence time (kernel receive stamp to its `sendmsg`),
    /// checked against the round trip, ns: the agent's wake-up, taken out of the round trip by
    /// [`Sample::rtt_ns`]. None elsewhere, or when the agent did not stamp it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_residence_ns: Option<u64>,
}

impl Sample {
    /// The round trip on the kernel's stamps (`kernel`) or the monotonic clock, less the
    /// agent's residence where it stamped one: what the network and the kernels took.
    pub fn rtt_ns(&self, kernel: bool) -> Option<u64> {
        let rtt = if kernel {
            self.rtt_kernel_ns
        } else {
            self.rtt_user_ns
        }?;
        Some(rtt.saturating_sub(self.agent_residence_ns.unwrap_or(0)))
    }
}

/// The series a probe belongs to. With `--hops` and an agent on the destination
/// ([`ProbeConfig::udp`] with [`ProbeConfig::max_ttl`]), the routers and the destination are
/// probed with ICMP as always, and the destination also by the agent: whole echoes (bytes
/// returned = bytes sent) and short replies (bytes returned constant). The two agent series
/// separate the destination's per byte sent from its per byte returned, which one echo line
/// cannot (`wirespeed_model::destination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Series {
    /// The run's probes: ICMP (echo or time exceeded), or the agent's echo with `--udp` alone.
    #[default]
    Probe,
    /// The agent's whole echo at the destination, beside the ICMP probes.
    AgentEcho,
    /// The agent's short reply at the destination: constant bytes returned.
    AgentShortReply,
}

impl Series {
    /// The run's own probes (not written in the JSON: documents stay as they were).
    pub fn is_probe(&self) -> bool {
        *self == Series::Probe
    }

    /// One of the agent's two series beside the ICMP probes.
    pub fn is_agent(&self) -> bool {
        !self.is_probe()
    }
}

/// One hop as path discovery found it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hop {
    /// Its TTL.
    pub ttl: u8,
    /// Who answered at that TTL (None: nobody, "*").
    pub responder: Option<IpAddr>,
    /// Whether it is the destination (answered with an echo reply).
    pub destination: bool,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRun {
    /// The socket kind used.
    pub socket: SocketKind,
    /// The route's MTU, bytes.
    pub path_mtu_bytes: Option<usize>,
    /// The hops probed (one, the destination, without `max_ttl`).
    pub hops: Vec<Hop>,
    /// Every probe of the measurement (not the path discovery), in the order sent.
    pub samples: Vec<Sample>,
    /// How long it took, seconds.
    pub elapsed_seconds: f64,
    /// Whether `max_duration` cut the schedule short.
    pub stopped_early: bool,
    /// Whether the interrupt flag stopped the run (every sample taken is kept).
    pub interrupted: bool,
    /// UDP echo: what the agent's echo counted (answered, dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<crate::control::echo::EchoTotals>,
}

fn family_of(target: IpAddr) -> Family {
    match target {
        IpAddr::V4(_) => Family::V4,
        IpAddr::V6(_) => Family::V6,
    }
}

/// The smallest probe for a target: an IP header plus the 8-byte echo header.
pub fn min_size(target: IpAddr) -> usize {
    family_of(target).ip_header_len() + crate::icmp::HEADER_LEN
}

/// What the probes travel as.
enum Via {
    Icmp(IcmpSocket),
    Udp(echo::UdpEcho),
}

struct Prober {
    via: Via,
    /// With `--hops --udp`: the agent's echo session on the destination, beside ICMP.
    agent: Option<echo::UdpEcho>,
    target: IpAddr,
    seq: u16,
    start: Instant,
    timeout: Duration,
}

impl Prober {
    fn refuse_unreachable(&self, s: &Sample) -> Result<(), ProbeError> {
        match (s.reply, s.responder) {
            (ReplyKind::Unreachable, Some(by)) => Err(ProbeError::Unreachable {
                target: self.target,
                by,
                code: s.unreachable_code.unwrap_or(0),
            }),
            _ => Ok(()),
        }
    }

    /// One probe of the destination's agent in `series`, recorded at the destination's `ttl`.
    fn agent_one(&mut self, ttl: u8, size: usize, series: Series) -> Result<Sample, ProbeError> {
        let Some(agent) = self.agent.as_mut() else {
            return self.one(ttl, size);
        };
        let got = match series {
            Series::AgentShortReply => agent.one_short(size, self.start, self.timeout),
            _ => agent.one_stamped(size, self.start, self.timeout),
        };
        let mut sample = got.map_err(|source| ProbeError::Send {
            target: self.target,
            size,
            hint: match source.raw_os_error() {
                Some(libc::EMSGSIZE) => " (larger than the path MTU: use smaller --sizes)",
                _ => "",
            },
            source,
        })?;
        sample.ttl = ttl;
        sample.series = series;
        Ok(sample)
    }

    fn one(&mut self, ttl: u8, size: usize) -> Result<Sample, ProbeError> {
        let sock = match &mut self.via {
            Via::Icmp(sock) => sock,
            Via::Udp(echo) => {
                return echo.one(size, self.start, self.timeout).map_err(|source| {
                    ProbeError::Send {
                        target: self.target,
                        size,
                        hint: match source.raw_os_error() {
                            Some(libc::EMSGSIZE) => {
                                " (larger than the path MTU: use smaller --sizes)"
                            }
                            _ => "",
                        },
                        source,
                    }
                });
            }
        };
        sock.set_ttl(ttl).map_err(ProbeError::Receive)?;
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let (t0, tx_id) = sock.send(seq, size).map_err(|source| {
            let hint = match source.raw_os_error() {
                Some(libc::EMSGSIZE) => " (larger than the path MTU: use smaller --sizes)",
                Some(libc::ENETUNREACH | libc::EHOSTUNREACH) => {
                    " (no route to it: check the address and `ip route get`)"
                }
                Some(libc::EPERM | libc::EACCES) => " (a firewall rule refuses ICMP output)",
                _ => "",
            };
            ProbeError::Send {
                target: self.target,
                size,
                source,
                hint,
            }
        })?;
        let mut sample = Sample {
            ttl,
            sent_bytes: size,
            returned_bytes: 0,
            rtt_kernel_ns: None,
            rtt_user_ns: None,
            sent_at_ns: (t0 - self.start).as_nanos() as u64,
            responder: None,
            reply: ReplyKind::Lost,
            unreachable_code: None,
            too_big_mtu: None,
            series: Series::Probe,
            agent_residence_ns: None,
        };
        let mut tx_ns: Option<i128> = None;
        let mut rx_ns: Option<i128> = None;
        let deadline = t0 + self.timeout;
        let ident = sock.ident;
        let mut matched = |ev: Event, sample: &mut Sample, tx_ns: &mut Option<i128>| -> bool {
            match ev {
                Event::TxStamp { id, ns } => {
                    if id == tx_id {
                        *tx_ns = Some(ns);
                    }
                    false
                }
                Event::Reply {
                    message,
                    from,
                    returned,
                    rx_kernel_ns,
                    rx_user,
                } => {
                    let (kind, i, s) = match message {
                        Message::EchoReply { ident, seq } => (ReplyKind::EchoReply, ident, seq),
                        Message::TimeExceeded { ident, seq, .. } => {
                            (ReplyKind::TimeExceeded, ident, seq)
                        }
                        Message::TooBig { ident, seq, mtu } => {
                            sample.too_big_mtu = Some(mtu);
                            (ReplyKind::TooBig, ident, seq)
                        }
                        Message::Unreachable {
                            ident, seq, code, ..
                        } => {
                            sample.unreachable_code = Some(code);
                            (ReplyKind::Unreachable, ident, seq)
                        }
                        _ => return false,
                    };
                    if i != ident || s != seq {
                        return false;
                    }
                    sample.reply = kind;
                    sample.responder = Some(from);
                    sample.returned_bytes = returned;
                    sample.rtt_user_ns = Some((rx_user - t0).as_nanos() as u64);
                    rx_ns = rx_kernel_ns;
                    true
                }
            }
        };
        while let Some(ev) = sock.next_event(deadline).map_err(ProbeError::Receive)? {
            if matched(ev, &mut sample, &mut tx_ns) {
                break;
            }
        }
        // The transmit stamp can follow the reply on the error queue: collect what is there.
        if sample.reply != ReplyKind::Lost && tx_ns.is_none() {
            let until = Instant::now() + Duration::from_micros(200);
            while tx_ns.is_none() && Instant::now() < until {
                match sock.poll_now().map_err(ProbeError::Receive)? {
                    Some(Event::TxStamp { id, ns }) if id == tx_id => tx_ns = Some(ns),
                    Some(_) => {}
                    None => std::hint::spin_loop(),
                }
            }
        }
        if let (Some(tx), Some(rx)) = (tx_ns, rx_ns)
            && rx >= tx
        {
            sample.rtt_kernel_ns = Some((rx - tx) as u64);
        }
        Ok(sample)
    }
}

/// What the scheduler does next.
#[derive(Debug, PartialEq)]
#[doc(hidden)]
pub enum Pick {
    /// Send this probe (taken off the queue).
    Send((u8, usize, Series)),
    /// Every queued probe is for a hop probed less than `interval` ago: wait.
    WaitUntil(Instant),
}

/// Takes the first queued probe whose hop was last probed at least `interval` ago (routers
/// limit the ICMP errors they send per source; spacing each hop's probes while the others are
/// probed in between stays under the limit without slowing the run), keeping the order of the
/// rest.
#[doc(hidden)]
#[inline]
pub fn pick(
    pending: &mut std::collections::VecDeque<(u8, usize, Series)>,
    last: &[Option<Instant>],
    now: Instant,
    interval: Duration,
) -> Pick {
    let ready =
        |t: u8| last[usize::from(t)].is_none_or(|l| now.saturating_duration_since(l) >= interval);
    match pending.iter().position(|&(t, ..)| ready(t)) {
        Some(i) => Pick::Send(pending.remove(i).expect("index from position")),
        None => {
            let soonest = pending
                .iter()
                .filter_map(|&(t, ..)| last[usize::from(t)])
                .min()
                .map_or(now, |l| l + interval);
            Pick::WaitUntil(soonest)
        }
    }
}

/// Runs the probes `config` describes.
pub fn run(config: &ProbeConfig) -> Result<ProbeRun, ProbeError> {
    let family = family_of(config.target);
    // With max_ttl the sizes are the ICMP probes'; the agent answers those that can ask for
    // a short reply.
    let (min, parts) = match config.udp {
        Some(_) if config.max_ttl.is_none() => (
            echo::min_size(config.target),
            "IP header + UDP 8 + the session cookie 16 + a sequence number 8",
        ),
        _ => (min_size(config.target), "IP header + ICMP 8"),
    };
    if let Some(&size) = config.sizes.iter().find(|&&s| s < min) {
        return Err(ProbeError::SizeTooSmall {
            parts,
            size,
            min,
            family: if family == Family::V4 { "IPv4" } else { "IPv6" },
        });
    }
    let start = Instant::now();
    let open_agent = |udp: &UdpTarget| -> Result<echo::UdpEcho, ProbeError> {
        // The session lasts as long as the run may, plus the answers' wait.
        let seconds = (config.max_duration + config.timeout * 4).as_secs_f64();
        let echo = echo::UdpEcho::open(
            crate::address::scoped(config.target, udp.port, config.scope_id),
            udp.auth.as_ref(),
            seconds.min(3600.0),
            Duration::from_secs(10),
        )?;
        if let Some(tos) = config.tos {
            echo.set_tos(tos).map_err(ProbeError::Receive)?;
        }
        Ok(echo)
    };
    let mut agent = None;
    let (via, kind) = match &config.udp {
        Some(udp) if config.max_ttl.is_some() => {
            let echo = open_agent(udp)?;
            if !echo.answers_short() {
                let _ = echo.close(Duration::from_secs(2));
                return Err(ProbeError::AgentWithoutShortReplies {
                    target: config.target,
                });
            }
            agent = Some(echo);
            let sock = open_icmp(config)?;
            if let Some(tos) = config.tos {
                sock.set_tos(tos).map_err(ProbeError::Receive)?;
            }
            let kind = sock.kind;
            (Via::Icmp(sock), kind)
        }
        Some(udp) => (Via::Udp(open_agent(udp)?), SocketKind::UdpEcho),
        None => {
            let sock = open_icmp(config)?;
            if let Some(tos) = config.tos {
                sock.set_tos(tos).map_err(ProbeError::Receive)?;
            }
            let kind = sock.kind;
            (Via::Icmp(sock), kind)
        }
    };
    let mut p = Prober {
        via,
        agent,
        target: config.target,
        seq: (config.seed >> 16) as u16,
        start,
        timeout: config.timeout,
    };
    let mut run = measure(&mut p, config, min, kind, start)?;
    if let Via::Udp(echo) = p.via {
        run.echo = Some(echo.close(Duration::from_secs(10))?);
    }
    if let Some(echo) = p.agent {
        run.echo = Some(echo.close(Duration::from_secs(10))?);
    }
    Ok(run)
}

fn open_icmp(config: &ProbeConfig) -> Result<IcmpSocket, ProbeError> {
    let raw_ident = (config.seed as u16) ^ (std::process::id() as u16);
    IcmpSocket::open(config.target, config.scope_id, config.socket, raw_ident).map_err(
        |OpenError { datagram, raw }| {
            let mut detail = Vec::new();
            if let Some(e) = datagram {
                detail.push(format!(
                    "the unprivileged ICMP datagram socket was refused ({e}): allow your group with sysctl -w net.ipv4.ping_group_range=\"0 2147483647\""
                ));
            }
            if let Some(e) = raw {
                detail.push(format!(
                    "the raw socket was refused ({e}): run as root or give the binary CAP_NET_RAW (setcap cap_net_raw+ep wirespeed)"
                ));
            }
            ProbeError::NoSocket {
                target: config.target,
                detail: detail.join("; "),
            }
        },
    )
}

/// A run the interrupt ended during path discovery: nothing measured.
fn stopped_before_measuring(kind: SocketKind, config: &ProbeConfig, start: Instant) -> ProbeRun {
    ProbeRun {
        socket: kind,
        path_mtu_bytes: crate::icmp_socket::path_mtu(config.target).ok(),
        hops: Vec::new(),
        samples: Vec::new(),
        elapsed_seconds: start.elapsed().as_secs_f64(),
        stopped_early: true,
        interrupted: true,
        echo: None,
    }
}

/// Path discovery, warm-up and the shuffled schedule, over either transport.
fn measure(
    p: &mut Prober,
    config: &ProbeConfig,
    min: usize,
    kind: SocketKind,
    start: Instant,
) -> Result<ProbeRun, ProbeError> {
    let mut samples = Vec::new();
    // Discovery: which TTL reaches whom; without max_ttl, the destination at TTL 64.
    let mut hops = Vec::new();
    match config.max_ttl {
        None => {
            let mut answered = false;
            for _ in 0..3 {
                if config.interrupted() {
                    return Ok(stopped_before_measuring(kind, config, start));
                }
                let s = p.one(64, min)?;
                p.refuse_unreachable(&s)?;
                answered = s.reply == ReplyKind::EchoReply;
                if answered {
                    break;
                }
            }
            if !answered {
                return Err(ProbeError::NoAnswer {
                    target: config.target,
                    tries: 3,
                    timeout: config.timeout,
                });
            }
            hops.push(Hop {
                ttl: 64,
                responder: Some(config.target),
                destination: true,
            });
        }
        Some(max_ttl) => {
            for ttl in 1..=max_ttl {
                let mut hop = Hop {
                    ttl,
                    responder: None,
                    destination: false,
                };
                for _ in 0..3 {
                    if config.interrupted() {
                        return Ok(stopped_before_measuring(kind, config, start));
                    }
                    let s = p.one(ttl, min)?;
                    p.refuse_unreachable(&s)?;
                    let reply = s.reply;
                    hop.responder = s.responder;
                    if reply != ReplyKind::Lost {
                        hop.destination = reply == ReplyKind::EchoReply;
                        break;
                    }
                    std::thread::sleep(config.gap);
                }
                let done = hop.destination;
                hops.push(hop);
                if done {
                    break;
                }
            }
            // Routers still answering at the last TTL mean the destination lies further on:
            // the hops found are measured (as traceroute -m stops short). Silence there means
            // the destination does not answer.
            let routers_go_on = hops.last().is_some_and(|h| h.responder.is_some());
            if !hops.iter().any(|h| h.destination) && !routers_go_on {
                return Err(ProbeError::NoAnswer {
                    target: config.target,
                    tries: u32::from(max_ttl) * 3,
                    timeout: config.timeout,
                });
            }
        }
    }
    // The kernel turns receive timestamping on through a deferred static key, so the first
    // answers after the socket asked for stamps can arrive without one: warm up until a stamped
    // answer comes back (or give up after 20 tries and let the analysis fall back).
    let answering = hops
        .iter()
        .find(|h| h.destination)
        .or_else(|| hops.iter().rev().find(|h| h.responder.is_some()));
    if let Some(dest) = answering {
        for _ in 0..20 {
            if config.interrupted() {
                break;
            }
            let s = p.one(dest.ttl, min)?;
            if s.rtt_kernel_ns.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // The measurement proper: every (hop, size) N times, shuffled; with an agent on the
    // destination, also its whole echo and its short reply of every size that can ask for one.
    let mut schedule: Vec<(u8, usize, Series)> = Vec::new();
    let measured = |ttl: u8| config.only_ttls.as_ref().is_none_or(|o| o.contains(&ttl));
    for hop in hops
        .iter()
        .filter(|h| h.responder.is_some() && measured(h.ttl))
    {
        for &size in &config.sizes {
            for _ in 0..config.per_size {
                schedule.push((hop.ttl, size, Series::Probe));
            }
        }
    }
    let dest = hops.iter().find(|h| h.destination && measured(h.ttl));
    if let (Some(agent), Some(dest)) = (&p.agent, dest) {
        let smallest = agent.short_min_size();
        for &size in config.sizes.iter().filter(|&&s| s >= smallest) {
            for _ in 0..config.per_size {
                schedule.push((dest.ttl, size, Series::AgentEcho));
                schedule.push((dest.ttl, size, Series::AgentShortReply));
            }
        }
        // The agent's socket asks for stamps of its own: warm it up as the ICMP one.
        for _ in 0..20 {
            if config.interrupted() {
                break;
            }
            let s = p.agent_one(dest.ttl, smallest, Series::AgentShortReply)?;
            if s.rtt_kernel_ns.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    SplitMix64::new(config.seed).shuffle(&mut schedule);
    let mut last_to_hop: Vec<Option<Instant>> = vec![None; 256];
    let mut stopped_early = false;
    let mut interrupted = false;
    let planned = schedule.len() as u64;
    let tell = |sent: u64| {
        if let Some(hook) = &config.progress {
            (hook.0)(sent, planned);
        }
    };
    tell(0);
    let mut pending = std::collections::VecDeque::from(schedule);
    while !pending.is_empty() {
        if config.interrupted() {
            interrupted = true;
            break;
        }
        if start.elapsed() >= config.max_duration {
            stopped_early = true;
            break;
        }
        let (ttl, size, series) = match pick(
            &mut pending,
            &last_to_hop,
            Instant::now(),
            config.hop_interval,
        ) {
            Pick::Send(probe) => probe,
            Pick::WaitUntil(ready) => {
                std::thread::sleep(ready.saturating_duration_since(Instant::now()));
                continue;
            }
        };
        last_to_hop[usize::from(ttl)] = Some(Instant::now());
        samples.push(if series.is_agent() {
            p.agent_one(ttl, size, series)?
        } else {
            p.one(ttl, size)?
        });
        tell(planned - pending.len() as u64);
        if !config.gap.is_zero() {
            std::thread::sleep(config.gap);
        }
    }
    Ok(ProbeRun {
        socket: kind,
        path_mtu_bytes: crate::icmp_socket::path_mtu(config.target).ok(),
        hops,
        samples,
        elapsed_seconds: start.elapsed().as_secs_f64(),
        stopped_early,
        interrupted,
        echo: None,
    })
}
