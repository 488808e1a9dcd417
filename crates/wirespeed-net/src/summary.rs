//! Both ends' views folded into iperf3's proven result layout: per-stream sender/receiver pairs,
//! `sum_sent` / `sum_received` (and `*_bidir_reverse` for `--bidir`), `cpu_utilization_percent`,
//! plus seed 002's ttcp line (bytes in real seconds = rate; calls; ms per call; calls per
//! second).

use serde::{Deserialize, Serialize};

use crate::client::TestOutcome;
use crate::report::{Role, SideReport, StreamReport};
use crate::spec::{Direction, Flow};

/// A direction's total at one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sum {
    /// Streams summed.
    pub streams: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// The longest stream's time at this end.
    pub seconds: f64,
    /// `bytes * 8 / seconds`.
    pub bits_per_second: f64,
    /// Data-moving system calls.
    pub calls: u64,
    /// TCP sender: retransmitted segments.
    pub retransmits: Option<u64>,
    /// UDP: datagrams.
    pub datagrams: Option<u64>,
    /// UDP receiver: datagrams lost.
    pub lost: Option<u64>,
    /// UDP receiver: lost, percent of sent.
    pub lost_percent: Option<f64>,
    /// UDP receiver: mean of the streams' RFC 3550 jitter.
    pub jitter_seconds: Option<f64>,
    /// UDP receiver: duplicates.
    pub duplicates: Option<u64>,
    /// UDP receiver: out of order.
    pub out_of_order: Option<u64>,
}

/// One stream, both ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamPair {
    /// Stream number.
    pub id: u32,
    /// Which way.
    pub flow: Flow,
    /// The sending end's view.
    pub sender: Option<StreamReport>,
    /// The receiving end's view.
    pub receiver: Option<StreamReport>,
}

/// CPU use of both ends, percent of one core over the test (iperf3's names: host = this
/// client, remote = the agent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUtilization {
    /// Client, user + system.
    pub host_total: f64,
    /// Client, user.
    pub host_user: f64,
    /// Client, system.
    pub host_system: f64,
    /// Agent, user + system.
    pub remote_total: Option<f64>,
    /// Agent, user.
    pub remote_user: Option<f64>,
    /// Agent, system.
    pub remote_system: Option<f64>,
}

/// Seed 002's summary for one end of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ttcp {
    /// Which way.
    pub flow: Flow,
    /// Sender or receiver.
    pub role: Role,
    /// Bytes.
    pub bytes: u64,
    /// Real (wall-clock) seconds.
    pub real_seconds: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Calls (`numCalls`).
    pub calls: u64,
    /// Milliseconds per call (`msec/call`).
    pub ms_per_call: f64,
    /// Calls per second (`calls/sec`).
    pub calls_per_second: f64,
}

/// The `end` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// Every stream, both ends.
    pub streams: Vec<StreamPair>,
    /// The primary direction, sending end.
    pub sum_sent: Sum,
    /// The primary direction, receiving end.
    pub sum_received: Sum,
    /// `--bidir`: the reverse direction, sending end.
    pub sum_sent_bidir_reverse: Option<Sum>,
    /// `--bidir`: the reverse direction, receiving end.
    pub sum_received_bidir_reverse: Option<Sum>,
    /// Both ends' CPU.
    pub cpu_utilization_percent: CpuUtilization,
    /// ttcp's lines.
    pub ttcp: Vec<Ttcp>,
}

fn per_core(cpu: f64, side: &SideReport) -> f64 {
    if side.wall_seconds > 0.0 {
        cpu / side.wall_seconds * 100.0
    } else {
        0.0
    }
}

/// Streams of one flow and role, from whichever end had that role.
fn pick(o: &TestOutcome, flow: Flow, role: Role) -> Vec<&StreamReport> {
    o.client
        .streams
        .iter()
        .chain(o.agent.iter().flat_map(|a| &a.streams))
        .filter(|s| s.flow == flow && s.role == role)
        .collect()
}

/// Sums streams.
pub fn sum(streams: &[&StreamReport]) -> Sum {
    let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
    let seconds = streams.iter().map(|s| s.seconds).fold(0.0, f64::max);
    let opt_sum = |f: &dyn Fn(&StreamReport) -> Option<u64>| -> Option<u64> {
        streams.iter().map(|s| f(s)).sum::<Option<u64>>()
    };
    let datagrams = opt_sum(&|s| s.udp.as_ref().map(|u| u.datagrams));
    let lost = opt_sum(&|s| s.udp.as_ref().and_then(|u| u.lost));
    let jitters: Vec<f64> = streams
        .iter()
        .filter_map(|s| s.udp.as_ref().and_then(|u| u.jitter_seconds))
        .collect();
    Sum {
        streams: streams.len() as u32,
        bytes,
        seconds,
        bits_per_second: if seconds > 0.0 {
            bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        calls: streams.iter().map(|s| s.calls).sum(),
        retransmits: opt_sum(&|s| s.tcp_info.as_ref().map(|t| u64::from(t.retransmits))),
        datagrams,
        lost,
        lost_percent: match (lost, datagrams) {
            (Some(l), Some(d)) => crate::udp::percent(l, l + d),
            _ => None,
        },
        jitter_seconds: (!jitters.is_empty())
            .then(|| jitters.iter().sum::<f64>() / jitters.len() as f64),
        duplicates: opt_sum(&|s| s.udp.as_ref().and_then(|u| u.duplicates)),
        out_of_order: opt_sum(&|s| s.udp.as_ref().and_then(|u| u.out_of_order)),
    }
}

#[doc(hidden)]
pub fn ttcp(flow: Flow, role: Role, s: &Sum) -> Ttcp {
    let per = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    Ttcp {
        flow,
        role,
        bytes: s.bytes,
        real_seconds: s.seconds,
        bytes_per_second: per(s.bytes as f64, s.seconds),
        calls: s.calls,
        ms_per_call: per(s.seconds * 1e3, s.calls as f64),
        calls_per_second: per(s.calls as f64, s.seconds),
    }
}

/// Folds an outcome into the `end` layout.
pub fn end(o: &TestOutcome, direction: Direction) -> End {
    let primary = match direction {
        Direction::Receive => Flow::Download,
        Direction::Send | Direction::Both => Flow::Upload,
    };
    let mut streams: Vec<StreamPair> = Vec::new();
    for s in o
        .client
        .streams
        .iter()
        .chain(o.agent.iter().flat_map(|a| &a.streams))
    {
        let i = match streams.iter().position(|p| p.id == s.id) {
            Some(i) => i,
            None => {
                streams.push(StreamPair {
                    id: s.id,
                    flow: s.flow,
                    sender: None,
                    receiver: None,
                });
                streams.len() - 1
            }
        };
        match s.role {
            Role::Sender => streams[i].sender = Some(s.clone()),
            Role::Receiver => streams[i].receiver = Some(s.clone()),
        }
    }
    streams.sort_by_key(|p| p.id);
    let sums = |flow| {
        (
            sum(&pick(o, flow, Role::Sender)),
            sum(&pick(o, flow, Role::Receiver)),
        )
    };
    let (sum_sent, sum_received) = sums(primary);
    let reverse = (direction == Direction::Both).then(|| sums(Flow::Download));
    let mut lines = vec![
        ttcp(primary, Role::Sender, &sum_sent),
        ttcp(primary, Role::Receiver, &sum_received),
    ];
    if let Some((s, r)) = &reverse {
        lines.push(ttcp(Flow::Download, Role::Sender, s));
        lines.push(ttcp(Flow::Download, Role::Receiver, r));
    }
    let c = &o.client;
    let cpu = CpuUtilization {
        host_total: per_core(c.cpu.total_seconds(), c),
        host_user: per_core(c.cpu.user_seconds, c),
        host_system: per_core(c.cpu.system_seconds, c),
        remote_total: o.agent.as_ref().map(|a| per_core(a.cpu.total_seconds(), a)),
        remote_user: o.agent.as_ref().map(|a| per_core(a.cpu.user_seconds, a)),
        remote_system: o.agent.as_ref().map(|a| per_core(a.cpu.system_seconds, a)),
    };
    End {
        streams,
        sum_sent,
        sum_received,
        sum_sent_bidir_reverse: reverse.as_ref().map(|r| r.0.clone()),
        sum_received_bidir_reverse: reverse.map(|r| r.1),
        cpu_utilization_percent: cpu,
        ttcp: lines,
    }
}
