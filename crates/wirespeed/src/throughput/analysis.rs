//! Verdicts and warnings for a throughput result: the facts gathered from both ends, judged by
//! `wirespeed_model::bottleneck`.

use std::fmt;
use std::net::SocketAddr;

use serde::Serialize;
use wirespeed_lab::inside::{InterfaceTruth, RoutePair};
use wirespeed_lab::truth::{Element, FlowShape, RouteTruth};
use wirespeed_model::RateFormat;
use wirespeed_model::bottleneck::{Bound, FlowFacts, verdicts};
use wirespeed_model::{BitRate, Duplex, EnvelopeParams, IpVersion, LinkLayer, Transport};
use wirespeed_net::env::Environment;
use wirespeed_net::report::Role;
use wirespeed_net::spec::Flow;
use wirespeed_net::{Amount, Direction, Protocol, StreamReport, TestOutcome};

use crate::throughput::ThroughputResult;
#[doc(hidden)]
pub use crate::throughput::result::LinkRate;

/// The link rate for a test from `local` to `agent` whose client end saw `env`.
pub(crate) fn link_rate(
    given: Option<BitRate>,
    env: Option<&Environment>,
    local: SocketAddr,
    agent: SocketAddr,
) -> LinkRate {
    if let Some(rate) = given {
        return LinkRate::Given {
            bits_per_second: rate.bits_per_second(),
        };
    }
    if agent.ip().is_loopback() {
        return LinkRate::Unknown {
            reason: "loopback has no link".into(),
        };
    }
    let interface = env.and_then(|e| e.interface.clone());
    if let Some(truth) = interface.as_deref().and_then(wirespeed_lab::inside::lookup) {
        return lab_rate(
            truth,
            wirespeed_lab::inside::routes_between(local.ip(), agent.ip()),
        );
    }
    match (env, interface) {
        (Some(e), Some(i)) => match e.link_speed_bits_per_second {
            Some(bps) => LinkRate::Nic {
                bits_per_second: bps,
                interface: i,
                kind: e.interface_kind.clone().unwrap_or_else(|| "NIC".into()),
            },
            None => LinkRate::Unknown {
                reason: match e.interface_kind.as_deref() {
                    Some(k) if k.starts_with("NIC") => format!("{i}, a {k}, reports no speed"),
                    Some(k) => format!(
                        "{i} is a {k}: a virtual interface's speed is a constant of its driver, \
                         not of a wire"
                    ),
                    None => format!("the kind of {i} cannot be read"),
                },
            },
        },
        _ => LinkRate::Unknown {
            reason: "the interface the test left by cannot be found".into(),
        },
    }
}

fn lab_rate(t: InterfaceTruth, route: Option<RoutePair>) -> LinkRate {
    LinkRate::Lab {
        bits_per_second: t.rate_bits_per_second,
        receive_bits_per_second: t.receive_rate_bits_per_second,
        lab: t.lab,
        link: t.link,
        interface: t.interface,
        layer: t.layer,
        mtu: t.mtu,
        half_duplex: t.half_duplex,
        route: route.map(Box::new),
    }
}

/// A ceiling, the phrase that says where it comes from, and what it is the ceiling of when
/// that is not a link.
struct Ceiling {
    bits_per_second: f64,
    source: String,
    bound: Option<String>,
    /// Where it comes from in a few words (`link h1-h2`), for one-line answers.
    short: String,
}

/// The ceiling of the route's slowest element for a flow of `shape` (`wirespeed_lab::truth`),
/// `None` when it cannot be computed.
fn route_ceiling(lab: &str, route: &RouteTruth, shape: FlowShape) -> Option<Ceiling> {
    let b = route.bottleneck(shape).ok()?;
    let bound = match b.element.element {
        Element::Link { .. } => None,
        Element::ReturnLink { .. } => Some("the ACKs' way back"),
        Element::Router { .. } | Element::ReturnRouter { .. } => Some("a router's forwarding"),
        Element::SourceHost | Element::DestinationHost => Some("a host's processing"),
    };
    let mismatch = b.mismatch.map_or(String::new(), |m| {
        format!("; a {m}: its collisions hold the rate below this ceiling")
    });
    Some(Ceiling {
        bits_per_second: b.element.ceiling_bits_per_second,
        short: b.element.describe.clone(),
        source: format!(
            "{}, the slowest of the {} element(s) of route {} -> {} ({} hop(s)) of lab {lab} as \
             configured; path MTU {}, {}{mismatch}",
            b.element.describe,
            b.all.len(),
            route.from,
            route.to,
            route.hops.len(),
            b.path_mtu,
            match shape.transport {
                Transport::Udp => "UDP",
                Transport::Tcp { .. } => "TCP with timestamps",
            }
        ),
        bound: bound.map(String::from),
    })
}

/// The link a flow leaves by, as the envelope needs it: its rate that way, its layer, MTU and
/// duplex, and where the figures come from.
struct LinkFacts {
    bps: u64,
    layer: LinkLayer,
    mtu: Option<u32>,
    half: bool,
    whence: String,
}

fn link_facts(link: &LinkRate, flow: Flow, env_mtu: Option<u32>) -> Option<LinkFacts> {
    let (bps, layer, mtu, half, whence) = match link {
        LinkRate::Given { bits_per_second } => (
            *bits_per_second,
            LinkLayer::Ethernet { vlan_tags: 0 },
            env_mtu,
            false,
            "--link-rate".to_string(),
        ),
        LinkRate::Lab {
            bits_per_second,
            receive_bits_per_second,
            lab,
            link,
            interface,
            layer,
            mtu,
            half_duplex,
            ..
        } => (
            match flow {
                Flow::Upload => *bits_per_second,
                Flow::Download => *receive_bits_per_second,
            },
            *layer,
            Some(*mtu),
            *half_duplex,
            format!("link {link} of lab {lab} as configured, leaving by {interface}"),
        ),
        LinkRate::Nic {
            bits_per_second,
            interface,
            kind,
        } => (
            *bits_per_second,
            LinkLayer::Ethernet { vlan_tags: 0 },
            env_mtu,
            false,
            format!("the speed {interface} ({kind}) reports"),
        ),
        LinkRate::Unknown { .. } => return None,
    };
    Some(LinkFacts {
        bps,
        layer,
        mtu,
        half,
        whence,
    })
}

/// The envelope ceiling for `flow` and the phrase that says where it comes from.
fn envelope(
    link: &LinkRate,
    flow: Flow,
    env_mtu: Option<u32>,
    v6: bool,
    r: &ThroughputResult,
) -> Option<Ceiling> {
    let udp = r.spec.protocol == Protocol::Udp;
    let ip = if v6 {
        IpVersion::V6
    } else {
        IpVersion::V4 { options_bytes: 0 }
    };
    if let LinkRate::Lab {
        route: Some(pair), ..
    } = link
    {
        let shape = FlowShape {
            ip,
            transport: if udp {
                Transport::Udp
            } else {
                Transport::Tcp { timestamps: true }
            },
            udp_payload: udp.then_some(u64::from(r.spec.length_bytes)),
        };
        let route = match flow {
            Flow::Upload => Some(&pair.there),
            Flow::Download => pair.back.as_ref(),
        };
        if let Some(c) = route.and_then(|route| route_ceiling(&pair.lab, route, shape)) {
            return Some(c);
        }
    }
    let short = match link {
        LinkRate::Given { .. } => "--link-rate".to_string(),
        LinkRate::Lab { link, .. } => format!("link {link}"),
        LinkRate::Nic { interface, .. } => interface.clone(),
        LinkRate::Unknown { .. } => return None,
    };
    let LinkFacts {
        bps,
        layer,
        mtu,
        half,
        whence,
    } = link_facts(link, flow, env_mtu)?;
    let rate = BitRate::from_bits_per_second(bps);
    let mtu = mtu.map_or(1500, u64::from);
    let mtu = if mtu > 9216 { 1500 } else { mtu };
    let params = EnvelopeParams {
        rate,
        link: layer,
        mtu,
        ip,
        transport: if udp {
            Transport::Udp
        } else {
            Transport::Tcp { timestamps: true }
        },
        duplex: if half { Duplex::Half } else { Duplex::Full },
        ack_every: if udp { 0 } else { 2 },
        udp_payload: udp.then_some(u64::from(r.spec.length_bytes)),
        rtt: None,
    };
    let e = params.compute().ok()?;
    let layer = match layer {
        LinkLayer::Ethernet { .. } => "Ethernet",
        LinkLayer::Serial => "serial line",
    };
    Some(Ceiling {
        bits_per_second: e.goodput_bits_per_second,
        source: format!(
            "{rate} {layer}{}, MTU {mtu}, {}; {whence}",
            if half { " (half duplex)" } else { "" },
            if udp { "UDP" } else { "TCP with timestamps" }
        ),
        bound: None,
        short,
    })
}

/// The envelope ceiling of `flow` in bit/s and where it comes from in a few words, from the
/// document alone (`--brief`); `None` where no link rate is known.
pub(crate) fn brief_ceiling(r: &ThroughputResult, flow: Flow) -> Option<(f64, String)> {
    let v6 = r
        .start
        .agent
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.is_ipv6());
    let env_mtu = r
        .start
        .client_environment
        .as_ref()
        .and_then(|e| e.mtu_bytes);
    envelope(&r.link_rate, flow, env_mtu, v6, r).map(|c| (c.bits_per_second, c.short))
}

fn thread_percent(s: &StreamReport) -> f64 {
    if s.seconds > 0.0 {
        s.cpu.total_seconds() / s.seconds * 100.0
    } else {
        0.0
    }
}

fn facts(r: &ThroughputResult, o: &TestOutcome, flow: Flow, agent: SocketAddr) -> FlowFacts {
    let all: Vec<&StreamReport> = o
        .client
        .streams
        .iter()
        .chain(o.agent.iter().flat_map(|a| &a.streams))
        .filter(|s| s.flow == flow)
        .collect();
    let senders: Vec<&&StreamReport> = all.iter().filter(|s| s.role == Role::Sender).collect();
    let receivers: Vec<&&StreamReport> = all.iter().filter(|s| s.role == Role::Receiver).collect();
    let infos: Vec<_> = senders.iter().filter_map(|s| s.tcp_info.as_ref()).collect();
    let sum_opt =
        |f: &dyn Fn(&wirespeed_net::report::TcpInfoReport) -> Option<f64>| -> Option<f64> {
            (!infos.is_empty()).then(|| infos.iter().filter_map(|t| f(t)).sum())
        };
    let env = r.start.client_environment.as_ref();
    let received = match (flow, r.spec.direction) {
        (Flow::Download, Direction::Both) => r
            .end
            .sum_received_bidir_reverse
            .as_ref()
            .unwrap_or(&r.end.sum_received),
        _ => &r.end.sum_received,
    };
    let ceiling = envelope(
        &r.link_rate,
        flow,
        env.and_then(|e| e.mtu_bytes),
        agent.is_ipv6(),
        r,
    );
    FlowFacts {
        goodput_bits_per_second: received.bits_per_second,
        unknown_rate_reason: match &r.link_rate {
            LinkRate::Unknown { reason } if ceiling.is_none() => Some(reason.clone()),
            _ => None,
        },
        bound: ceiling.as_ref().and_then(|c| c.bound.clone()),
        ceiling: ceiling.map(|c| (c.bits_per_second, c.source)),
        loopback: agent.ip().is_loopback(),
        quantum_bits_per_second: match r.spec.amount {
            Amount::Seconds(t) if r.spec.protocol == Protocol::Udp && t > 0.0 => {
                Some(f64::from(r.spec.length_bytes) * 8.0 / t)
            }
            _ => None,
        },
        target_bits_per_second: (r.spec.protocol == Protocol::Udp
            && r.spec.rate_bits_per_second > 0)
            .then(|| (r.spec.rate_bits_per_second * u64::from(r.spec.streams)) as f64),
        cap_bits_per_second: r
            .spec
            .max_pacing_rate_bits_per_second
            .map(|c| (c * u64::from(r.spec.streams)) as f64),
        cap_streams: r.spec.streams,
        cap_given_up_share: given_up_share(&senders),
        rtt_seconds: (!infos.is_empty())
            .then(|| infos.iter().map(|t| t.rtt_seconds).sum::<f64>() / infos.len() as f64),
        receive_buffer_bytes: receivers
            .iter()
            .map(|s| s.socket.receive_buffer_granted_bytes)
            // Zero: an end that reports no socket facts (an iperf3 server).
            .filter(|&b| b > 0)
            .min(),
        send_buffer_bytes: senders
            .iter()
            .map(|s| s.socket.send_buffer_granted_bytes)
            // Zero: an end that reports no socket facts (an iperf3 server).
            .filter(|&b| b > 0)
            .min(),
        busy_seconds: sum_opt(&|t| t.busy_seconds),
        rwnd_limited_seconds: sum_opt(&|t| t.rwnd_limited_seconds),
        sndbuf_limited_seconds: sum_opt(&|t| t.sndbuf_limited_seconds),
        sender_thread_cpu_percent: senders.iter().map(|s| thread_percent(s)).reduce(f64::max),
        receiver_thread_cpu_percent: receivers.iter().map(|s| thread_percent(s)).reduce(f64::max),
        congestion: senders.first().and_then(|s| s.socket.congestion.clone()),
        qdisc: env.and_then(|e| e.qdisc.clone().or_else(|| e.default_qdisc.clone())),
    }
}

/// One direction's verdict; in a `--bidir` test the sentence names the direction first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DirectedBound {
    /// `client_to_agent` or `agent_to_client` in a `--bidir` test; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) direction: Option<&'static str>,
    #[serde(flatten)]
    pub(crate) bound: Bound,
}

impl fmt::Display for DirectedBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.direction {
            Some("client_to_agent") => write!(f, "client->agent: {}", self.bound),
            Some(_) => write!(f, "agent->client: {}", self.bound),
            None => write!(f, "{}", self.bound),
        }
    }
}

/// What may make a TCP or UDP result less trustworthy, with the figures behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ThroughputWarning {
    /// `-S` asked for a TOS byte a stream does not carry.
    TosNotCarried {
        asked_tos: u8,
        carried_tos: u8,
        stream: u32,
        end: &'static str,
    },
    /// `--mptcp` connections that fell back to plain TCP.
    MptcpFellBack {
        fell_back_connections: usize,
        connections: usize,
    },
    /// A stream ended in an error.
    StreamFailed {
        stream: u32,
        role: Role,
        error: String,
    },
    /// `--zerocopy` sends the kernel copied anyway.
    ZerocopyCopied {
        stream: u32,
        copied_sends: u64,
        sends: u64,
    },
    /// UDP at `-b 0`: the receiver dropped what the sender outran it by.
    ReceiverOutrun {
        lost_percent: f64,
        sent_bits_per_second: f64,
        #[serde(skip)]
        rate_format: RateFormat,
    },
    /// `-w` above the kernel's limit, clamped.
    WindowClamped { window_bytes: u64, limit_bytes: u64 },
    /// A TCP test too short for slow start to fade from the mean.
    ShortTest { duration_seconds: f64 },
    /// A `-b` sender's socket stood empty for more than [`PACER_BEHIND_WARNING`] of its
    /// measured time because its writer was late: the machine, not the path, held the rate
    /// under the cap.
    PacerBehind {
        stream: u32,
        end: &'static str,
        skipped_seconds: f64,
        share_of_window: f64,
    },
    /// Only the client's counts exist.
    AgentViewMissing,
    /// Something iperf3's server did not report.
    NotReportedByIperf3 { missing: String },
    /// Repeated runs disagree by more than a tenth.
    RunsSpread { runs: usize, spread_percent: f64 },
}

impl fmt::Display for ThroughputWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThroughputWarning::TosNotCarried {
                asked_tos,
                carried_tos,
                stream,
                end,
            } => write!(
                f,
                "-S asked for TOS {} but stream {stream} at the {end} carries {}",
                wirespeed_model::dscp::describe(*asked_tos),
                wirespeed_model::dscp::describe(*carried_tos)
            ),
            ThroughputWarning::MptcpFellBack {
                fell_back_connections,
                connections,
            } => write!(
                f,
                "--mptcp: {fell_back_connections} of {connections} connections fell back to plain \
                 TCP: the agent listens without Multipath TCP (start it with `serve --mptcp`) or \
                 something on the path removed the MPTCP option; the rates are TCP's"
            ),
            ThroughputWarning::StreamFailed {
                stream,
                role,
                error,
            } => write!(f, "stream {stream} ({role:?} end): {error}"),
            ThroughputWarning::ZerocopyCopied {
                stream,
                copied_sends,
                sends,
            } => write!(
                f,
                "--zerocopy on stream {stream}: the kernel copied {copied_sends} of {sends} sends \
                 anyway (it must on loopback and on devices without scatter-gather); zerocopy \
                 pays off on a real NIC"
            ),
            ThroughputWarning::ReceiverOutrun {
                lost_percent,
                sent_bits_per_second,
                rate_format,
            } => write!(
                f,
                "-b 0: the sender outran the receiver and {lost_percent:.1}% of the datagrams \
                 were dropped (the received rate is what the receiver kept up with; {} were \
                 sent); give a rate with -b to measure loss at that rate",
                rate_format.format(*sent_bits_per_second)
            ),
            ThroughputWarning::WindowClamped {
                window_bytes,
                limit_bytes,
            } => write!(
                f,
                "-w {window_bytes} exceeds net.core.rmem_max/wmem_max ({limit_bytes}): the kernel \
                 clamped it; see the granted sizes"
            ),
            ThroughputWarning::ShortTest { duration_seconds } => write!(
                f,
                "a {duration_seconds} s TCP test is short: slow start and warm-up weigh on the \
                 average"
            ),
            ThroughputWarning::PacerBehind {
                stream,
                end,
                skipped_seconds,
                share_of_window,
            } => write!(
                f,
                "-b: stream {stream}'s sender at the {end} gave up {skipped_seconds:.3} s \
                 ({:.1}%) of its measured time behind its cap: its host was too busy to keep \
                 the socket filled, so the rate falls short of the cap by about that share for \
                 a reason that is not the path's",
                share_of_window * 100.0
            ),
            ThroughputWarning::AgentViewMissing => write!(
                f,
                "the agent's view is missing: rates are the client's alone"
            ),
            ThroughputWarning::NotReportedByIperf3 { missing } => {
                write!(f, "not reported by the iperf3 server: {missing}")
            }
            ThroughputWarning::RunsSpread {
                runs,
                spread_percent,
            } => write!(
                f,
                "the {runs} runs spread {spread_percent:.0}% (max - min over the median): the \
                 host is busy or the path varies; trust the median and its interval, or run more"
            ),
        }
    }
}

/// Verdicts (per direction) and warnings.
pub(crate) fn judge(
    r: &ThroughputResult,
    o: &TestOutcome,
    agent: SocketAddr,
) -> (Vec<DirectedBound>, Vec<ThroughputWarning>) {
    let flows: Vec<Flow> = match r.spec.direction {
        Direction::Send => vec![Flow::Upload],
        Direction::Receive => vec![Flow::Download],
        Direction::Both => vec![Flow::Upload, Flow::Download],
    };
    let mut out = Vec::new();
    // A partial result holds no evidence for a verdict: a rate cut short by an interrupt, a
    // failed stream or a missing view is not a ceiling and not a limit.
    let flows = if r.partial { Vec::new() } else { flows };
    for flow in flows {
        let direction = (r.spec.direction == Direction::Both).then_some(match flow {
            Flow::Upload => "client_to_agent",
            Flow::Download => "agent_to_client",
        });
        out.extend(
            verdicts(&facts(r, o, flow, agent))
                .into_iter()
                .map(|bound| DirectedBound { direction, bound }),
        );
    }
    let mut warnings = marking_warnings(r, o);
    for s in o
        .client
        .streams
        .iter()
        .chain(o.agent.iter().flat_map(|a| &a.streams))
    {
        if let Some(e) = &s.error {
            warnings.push(ThroughputWarning::StreamFailed {
                stream: s.id,
                role: s.role,
                error: e.clone(),
            });
        }
    }
    for s in o
        .client
        .streams
        .iter()
        .chain(o.agent.iter().flat_map(|a| &a.streams))
    {
        if let Some(z) = &s.zerocopy
            && z.copied > 0
        {
            warnings.push(ThroughputWarning::ZerocopyCopied {
                stream: s.id,
                copied_sends: z.copied,
                sends: z.sends,
            });
        }
    }
    if r.spec.protocol == Protocol::Udp && r.spec.rate_bits_per_second == 0 {
        for (sent, received) in [
            (Some(&r.end.sum_sent), Some(&r.end.sum_received)),
            (
                r.end.sum_sent_bidir_reverse.as_ref(),
                r.end.sum_received_bidir_reverse.as_ref(),
            ),
        ] {
            if let (Some(sent), Some(rx)) = (sent, received)
                && let Some(p) = rx.lost_percent.filter(|&p| p >= 0.1)
            {
                warnings.push(ThroughputWarning::ReceiverOutrun {
                    lost_percent: p,
                    sent_bits_per_second: sent.bits_per_second,
                    rate_format: r.rate_format,
                });
            }
        }
    }
    if let Some(w) = r.spec.window_bytes {
        let env = r.start.client_environment.as_ref();
        if let Some(max) = env.and_then(|e| e.rmem_max_bytes.min(e.wmem_max_bytes))
            && w > max
        {
            warnings.push(ThroughputWarning::WindowClamped {
                window_bytes: w,
                limit_bytes: max,
            });
        }
    }
    if let Amount::Seconds(s) = r.spec.amount
        && s < 2.0
        && r.spec.protocol == Protocol::Tcp
    {
        warnings.push(ThroughputWarning::ShortTest {
            duration_seconds: s,
        });
    }
    warnings.extend(pacers_behind(o));
    if o.agent.is_none() {
        warnings.push(ThroughputWarning::AgentViewMissing);
    }

    (out, warnings)
}

/// A `-b` sender that gave up more than this share of its measured time behind its cap earns
/// a warning, as a `load` generator does (`load::analysis::GENERATOR_BEHIND_WARNING`).
pub(crate) const PACER_BEHIND_WARNING: f64 = 0.01;

/// The share of a sender stream's measured time it gave up behind its `-b` cap, where it
/// reported one ([`StreamReport::skipped_in_window_seconds`], checked on arrival from a peer).
pub(crate) fn skipped_share(s: &StreamReport) -> Option<f64> {
    let skipped = s.skipped_in_window_seconds?;
    (s.seconds > 0.0).then(|| (skipped / s.seconds).clamp(0.0, 1.0))
}

/// The share of their summed time a direction's senders gave up behind their `-b` cap, where
/// every one of them reported it.
fn given_up_share(senders: &[&&StreamReport]) -> Option<f64> {
    let mut skipped = 0.0;
    let mut seconds = 0.0;
    for s in senders {
        skipped += s.skipped_in_window_seconds?;
        seconds += s.seconds;
    }
    (seconds > 0.0).then(|| (skipped / seconds).clamp(0.0, 1.0))
}

/// One warning per capped sender whose share given up is over [`PACER_BEHIND_WARNING`].
fn pacers_behind(o: &TestOutcome) -> Vec<ThroughputWarning> {
    let client = o.client.streams.iter().map(|s| ("client", s));
    let agent = o
        .agent
        .iter()
        .flat_map(|a| &a.streams)
        .map(|s| ("agent", s));
    client
        .chain(agent)
        .filter(|(_, s)| s.role == Role::Sender)
        .filter_map(|(end, s)| {
            let share = skipped_share(s).filter(|&x| x > PACER_BEHIND_WARNING)?;
            Some(ThroughputWarning::PacerBehind {
                stream: s.id,
                end,
                skipped_seconds: s.skipped_in_window_seconds.unwrap_or(0.0),
                share_of_window: share,
            })
        })
        .collect()
}

/// What `-S` and `--mptcp` asked for against what the sockets did: each is a request the kernel
/// or the other end may not honour, and a result measured without it must say so.
fn marking_warnings(r: &ThroughputResult, o: &TestOutcome) -> Vec<ThroughputWarning> {
    let mut out = Vec::new();
    let streams: Vec<(&'static str, &StreamReport)> = o
        .client
        .streams
        .iter()
        .map(|s| ("client", s))
        .chain(
            o.agent
                .iter()
                .flat_map(|a| &a.streams)
                .map(|s| ("agent", s)),
        )
        .collect();
    if let Some(asked) = r.spec.tos {
        for (end, s) in &streams {
            if let Some(got) = s.socket.tos
                && got != asked
            {
                out.push(ThroughputWarning::TosNotCarried {
                    asked_tos: asked,
                    carried_tos: got,
                    stream: s.id,
                    end,
                });
            }
        }
    }
    if r.spec.mptcp {
        let client: Vec<&StreamReport> = o.client.streams.iter().collect();
        let fell_back = client
            .iter()
            .filter(|s| s.socket.mptcp == Some(false))
            .count();
        if fell_back > 0 {
            out.push(ThroughputWarning::MptcpFellBack {
                fell_back_connections: fell_back,
                connections: client.len(),
            });
        }
    }
    out
}
