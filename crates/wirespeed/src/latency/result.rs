//! The schema of `wirespeed.latency.v1` and `wirespeed.latency-rr.v1`: the typed parameters
//! and results a saved document reads back into, units in the field names. It imports none of
//! its siblings, so that a reader of results needs nothing that measures or prints.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::stats::quantile;

use crate::throughput::analysis::LinkRate;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadDirection {
    /// The client sends (upload).
    Up,
    /// The agent sends (download).
    Down,
    /// Both at once.
    Both,
}

/// The probes, by what they measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// A UDP datagram to the agent's echo and back.
    UdpEcho,
    /// The TCP handshake of a new connection to the agent.
    TcpConnect,
    /// A 1-byte request and response on that new connection.
    RrNewConnection,
    /// A 1-byte request and response on one connection kept open.
    RrKeptConnection,
}

impl ProbeKind {
    pub(crate) const ALL: [ProbeKind; 4] = [
        ProbeKind::UdpEcho,
        ProbeKind::TcpConnect,
        ProbeKind::RrNewConnection,
        ProbeKind::RrKeptConnection,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            ProbeKind::UdpEcho => "UDP echo",
            ProbeKind::TcpConnect => "TCP connect",
            ProbeKind::RrNewConnection => "request/response, new connection",
            ProbeKind::RrKeptConnection => "request/response, kept connection",
        }
    }

    /// Bits on an Ethernet wire per probe, (this end's way out, the way back): each frame's IP
    /// packet plus 38 bytes (header, FCS, preamble, gap), at least 84. The frames are those the
    /// lab counts per probe in an idle phase (IPv4, TCP timestamps; IPv6 adds 20 bytes a frame):
    /// a UDP echo is one datagram each way; a request on the kept connection the request and
    /// the response's ACK out (acknowledged at once, so that the delayed-ACK timer does not race
    /// the next probe) and the response back (carrying the request's ACK); a probe on a new
    /// connection is SYN, ACK, the session cookie, the request, FIN and the last ACK out, and
    /// SYN-ACK, the response, FIN and an ACK back, split here between the handshake and the
    /// request (`lab::latency::latency_probes_own_load_stays_under_one_percent_of_the_link`).
    pub(crate) fn wire_bits(self, udp_ip_bytes: usize, v6: bool) -> (f64, f64) {
        let extra = if v6 { 20 } else { 0 };
        let wire = |ip: &[usize]| -> f64 {
            ip.iter()
                .map(|&b| ((b + extra + 38).max(84) * 8) as f64)
                .sum()
        };
        let udp = udp_ip_bytes - extra;
        match self {
            ProbeKind::UdpEcho => (wire(&[udp]), wire(&[udp])),
            // SYN (with its options), ACK, FIN, ACK; SYN-ACK, FIN.
            ProbeKind::TcpConnect => (wire(&[60, 52, 52, 52]), wire(&[60, 52])),
            // The 16-byte cookie, the 1-byte request; the response, an ACK.
            ProbeKind::RrNewConnection => (wire(&[68, 53]), wire(&[53, 52])),
            // The request and the response's ACK (sent at once: `set_ack_at_once`); the
            // response.
            ProbeKind::RrKeptConnection => (wire(&[53, 52]), wire(&[53])),
        }
    }
}

/// One probe: when it was sent and its round trip (`None`: no answer in time).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[doc(hidden)]
pub struct ProbeSample {
    pub(crate) kind: ProbeKind,
    pub(crate) at_seconds: f64,
    pub(crate) rtt_ms: Option<f64>,
    /// UDP echo against an agent that reports it: the agent's residence time (its kernel's
    /// receive stamp to its reply's send), accepted as within `0..=rtt_ms`; the network's
    /// round trip is `rtt_ms` less this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_residence_ms: Option<f64>,
    /// The reply carried a residence time that cannot be true (negative, or longer than the
    /// round trip): refused, and the round trip kept raw.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) residence_rejected: bool,
    /// The residence ends at the agent's kernel transmit stamp (its follow-up arrived), not
    /// just before its `sendmsg`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) residence_to_transmit: bool,
}

impl ProbeSample {
    pub(crate) fn new(kind: ProbeKind, at_seconds: f64, rtt_ms: Option<f64>) -> ProbeSample {
        ProbeSample {
            kind,
            at_seconds,
            rtt_ms,
            agent_residence_ms: None,
            residence_rejected: false,
            residence_to_transmit: false,
        }
    }

    /// The round trip less the agent's residence time, where the agent reported one.
    pub(crate) fn network_rtt_ms(&self) -> Option<f64> {
        Some(self.rtt_ms? - self.agent_residence_ms?)
    }
}

/// Round trips of one probe kind in one phase, ms.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatencyStats {
    pub probes: usize,
    pub lost: usize,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The mean of the round trips at or below the 95th percentile (the draft's trimmed mean).
    pub trimmed_mean_ms: f64,
}

impl LatencyStats {
    #[doc(hidden)]
    pub fn of(rtts_ms: &[f64], lost: usize) -> LatencyStats {
        let q = |p: f64| quantile(rtts_ms, p);
        let p95 = q(0.95);
        let kept: Vec<f64> = rtts_ms.iter().copied().filter(|r| *r <= p95).collect();
        LatencyStats {
            probes: rtts_ms.len() + lost,
            lost,
            min_ms: q(0.0),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            max_ms: q(1.0),
            trimmed_mean_ms: if kept.is_empty() {
                f64::NAN
            } else {
                kept.iter().sum::<f64>() / kept.len() as f64
            },
        }
    }
}

/// One probe kind, idle against loaded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KindReport {
    pub kind: ProbeKind,
    /// The raw round trips, as the client's kernel stamped them (the agent's turnaround in).
    pub idle: LatencyStats,
    pub loaded: LatencyStats,
    /// Loaded minus idle median: the delay the load added.
    pub increase_p50_ms: f64,
    /// UDP echo against an agent that reports its residence time (RFC 8762's T3 - T2): the
    /// network's round trip, each probe's raw round trip less the agent's residence, over the
    /// probes that carried an accepted one. `None` for other kinds and older agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_round_trip: Option<NetworkRoundTrip>,
}

/// The round trip without the far end's own processing, and that processing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct NetworkRoundTrip {
    /// Raw round trip less the agent's residence, idle and loaded.
    pub(crate) idle: LatencyStats,
    pub(crate) loaded: LatencyStats,
    /// The agent's residence times (receive stamp to send), idle.
    pub(crate) agent_residence_idle: LatencyStats,
    /// Replies whose residence was refused (negative or longer than the round trip).
    pub(crate) residence_rejected: usize,
    /// Idle probes whose residence ends at the agent's kernel transmit stamp (its follow-up
    /// arrived), as the client's own stamps are taken; the others' ends just before the
    /// agent's `sendmsg`, leaving its send path in the network's round trip.
    #[serde(default)]
    pub(crate) idle_to_transmit_stamp: usize,
    /// The echo's IP packet, bytes (with the residence and follow-up fields), whose
    /// serialization each way belongs to the round trip.
    #[serde(default)]
    pub(crate) probe_ip_bytes: usize,
}

/// One second of the run: its phase and each kind's median.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct LatencyInterval {
    pub(crate) start_seconds: f64,
    pub(crate) end_seconds: f64,
    pub(crate) phase: Phase,
    pub(crate) p50_ms: Vec<(ProbeKind, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[doc(hidden)]
pub enum Phase {
    Idle,
    /// The load's first moments (slow start), left out of both phases.
    Settling,
    Loaded,
    After,
}

/// Where the delay the load added waits, as far as the run can tell.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct Queue {
    /// Loaded minus idle median UDP echo round trip.
    pub delay_ms: f64,
    /// That delay at the load's measured rate: the bytes standing in the queue.
    pub(crate) bytes: f64,
    /// The queue, in words.
    pub(crate) location: String,
    /// What would shrink it.
    pub(crate) remedy: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyResult {
    pub idle_seconds: f64,
    pub loaded_seconds: f64,
    /// Left out at the start of the load (slow start) from the loaded statistics.
    pub settle_seconds: f64,
    /// When the load started and stopped, seconds from the start of the run as its own
    /// clock read them (the load starts after the idle phase plus the time a connection
    /// takes): the report's phase markers are drawn from these, not from the plan.
    #[serde(default)]
    pub load_started_seconds: Option<f64>,
    #[serde(default)]
    pub load_ended_seconds: Option<f64>,
    pub kinds: Vec<KindReport>,
    /// Round trips per minute (the responsiveness draft), idle and loaded.
    pub rpm_idle: f64,
    pub rpm_loaded: f64,
    /// The load's goodput each way over the loaded window (the receiving end's intervals
    /// after the first `settle_seconds`; the whole transfer when none fits), bit/s.
    pub upload_bits_per_second: Option<f64>,
    pub download_bits_per_second: Option<f64>,
    /// The probes' own load on the wire during the loaded phase (Ethernet framing), bit/s,
    /// both ways together and each way, and the larger way's share of the load's rate.
    pub probe_bits_per_second: f64,
    #[serde(default)]
    pub probe_out_bits_per_second: f64,
    #[serde(default)]
    pub probe_back_bits_per_second: f64,
    pub probe_share_percent: f64,
    /// The larger of the two ways' shares of the link's rate that way, where the link's rate
    /// is known (a lab, a NIC that reports its speed).
    #[serde(default)]
    pub probe_share_of_link_percent: Option<f64>,
    pub link_rate: LinkRate,
    pub queue: Option<Queue>,
    /// Inside a wirespeed lab: the link's queue as the lab's emulator sampled it while the
    /// load ran, beside the probes' round trips in the same window.
    #[serde(default)]
    pub link_queue: Option<LinkQueueWindow>,
    /// Inside a lab: the probes' own load on the link as the lab counted it in the idle phase.
    #[serde(default)]
    pub probe_load_on_link: Option<ProbeLoadCount>,
    /// Where the load's bytes waited over the loaded window, queue by queue, as measured.
    #[serde(default)]
    pub queues: Vec<QueueShare>,
    pub intervals: Vec<LatencyInterval>,
    pub samples: Vec<ProbeSample>,
    pub partial: bool,
    pub partial_reason: Option<String>,
    #[serde(skip)]
    pub rate_format: RateFormat,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyParams {
    pub(crate) agent: String,
    pub(crate) in_process_agent: bool,
    pub(crate) streams: u32,
    pub(crate) direction: LoadDirection,
    pub(crate) probe_interval_seconds: f64,
    #[serde(default)]
    pub(crate) congestion: Option<String>,
    /// `-S`: the TOS byte the probes carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tos: Option<u8>,
}

/// `--rr`: the request/response test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RrResult {
    pub request_bytes: u32,
    pub response_bytes: u32,
    /// TCP_CRR: a new connection per transaction.
    pub new_connection: bool,
    pub transactions: u64,
    pub seconds: f64,
    pub transactions_per_second: f64,
    /// From the request's first byte to the response's last.
    pub round_trip: LatencyStats,
    /// With a new connection: its handshake.
    pub connect: Option<LatencyStats>,
    /// What the agent counted.
    pub agent_transactions: Option<u64>,
    pub partial: bool,
}

/// Which queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[doc(hidden)]
pub enum QueueKind {
    /// The load's TCP sockets on this host: written, not yet sent.
    SenderSocketBuffers,
    /// The load's TCP sockets on this host: received, not yet read.
    ReceiverSocketBuffers,
    /// The queueing discipline of the interface towards the agent.
    Qdisc,
    /// The NIC's transmit ring (BQL's in-flight bytes).
    NicRing,
    /// The emulated link's queue, as the lab's emulator sampled it.
    LabLink,
    /// Beyond this host: the probes' rise less what this host's queues on their path held.
    Path,
}

/// One queue the load's bytes waited in, averaged over the loaded window.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct QueueShare {
    pub(crate) queue: QueueKind,
    /// The queue, in words.
    pub(crate) location: String,
    pub(crate) mean_bytes: f64,
    pub(crate) max_bytes: f64,
    /// The mean bytes at the load's measured rate (the emulated link: its sampled delay,
    /// which is its bytes at the link's rate).
    pub(crate) mean_ms: f64,
    /// True when the probes (flows of their own) wait in it; the senders' socket buffers
    /// delay only the load's own data.
    pub(crate) probes_wait_here: bool,
    /// How it was measured.
    pub(crate) source: String,
    /// What would shrink it.
    pub(crate) remedy: String,
}

/// What the lab's emulator saw of the link between two snapshots: the ground truth the
/// probes' round trips are compared with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct LinkQueueWindow {
    pub(crate) lab: String,
    pub(crate) link: String,
    /// The link's active queue management, in words (`None`: drop-tail).
    #[serde(default)]
    pub(crate) aqm: Option<String>,
    /// The window, seconds from the run's start.
    pub(crate) from_seconds: f64,
    pub(crate) to_seconds: f64,
    /// The emulator's samples of the way out's queue in the window (one per millisecond).
    pub samples: u64,
    /// Mean queue delay of the way out (this end's egress), and of the way back, ms.
    pub out_mean_ms: f64,
    pub back_mean_ms: f64,
    /// The way out's queue in bytes: its mean delay at the link's rate.
    pub out_mean_bytes: f64,
    /// Frames the way out's queue dropped in the window (full).
    pub out_drops: u64,
    /// The UDP echo probes sent in the window that came back, and their mean round trip
    /// minus the idle phase's median: what the queues added to a probe on average.
    pub probes: usize,
    pub probe_mean_increase_ms: f64,
}

/// The probes' own load on the lab link, as the lab's emulator counted every frame of the idle
/// phase (when only the probes run), beside the run's own estimate for the probes it sent in
/// the same window.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct ProbeLoadCount {
    /// The window, seconds from the run's start.
    pub(crate) from_seconds: f64,
    pub(crate) to_seconds: f64,
    /// On the wire (the frames with their FCS, preamble and gap), bit/s, this end's way out
    /// and the way back.
    pub(crate) out_bits_per_second: f64,
    pub(crate) back_bits_per_second: f64,
    pub(crate) out_frames_per_second: f64,
    pub(crate) back_frames_per_second: f64,
    /// Of the link's rate each way.
    pub(crate) out_share_percent: f64,
    pub(crate) back_share_percent: f64,
    /// What the run estimates for the probes it sent in the window, bit/s each way.
    pub(crate) estimate_out_bits_per_second: f64,
    pub(crate) estimate_back_bits_per_second: f64,
}
