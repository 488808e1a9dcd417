//! Topology files: what a lab is made of, read from TOML and checked before anything is built.
//!
//! A lab is hosts and routers (each a network namespace; routers forward) joined by links. Each
//! direction of a link has its own rate, propagation delay, drop-tail queue and seeded loss, so
//! an asymmetric line (a DSL, a satellite return path) is one `[[link]]`. A router may carry
//! Bellovin's processing model (seed 001, section 2 and Table 1): a fixed plus a per-byte cost
//! for the packets it forwards and separately for the packets it answers itself.
//!
//! A host may carry a processing model of its own: a fixed plus a per-byte cost for each frame
//! it transmits and for each frame it receives, served one frame at a time (seed 004's Sun 3/60s
//! and seed 003's Solaris PCs spent real time per packet in their stacks and drivers; a modern
//! namespace answers at once), and a TCP profile: `net.ipv4.tcp_*` settings written into its
//! namespace, by name or as the `1990s` preset (no SACK, no RACK, no timestamps, Reno).
//!
//! Every mistake is reported as one line naming the file and the line the mistake is on, so that
//! `wirespeed lab up` never half-builds a network from a file it could have rejected.
//!
//! ```toml
//! [[host]]
//! name = "h1"
//! transmit = { fixed = "100us", per_byte = "784ns" }
//! receive = { per_byte = "784ns" }
//! tcp_profile = "1990s"        # and/or tcp = { tcp_sack = 0, tcp_congestion_control = "reno" }
//! [[router]]
//! name = "r1"
//! forward = { fixed = "525us", per_byte = "40ns" }
//! [[link]]
//! a = "h1"
//! b = "r1"
//! rate = "10M"          # or rate_ab / rate_ba, one per direction
//! delay = "50us"        # or length_m + velocity_factor
//! queue = 100           # packets; or queue_bytes = "64KiB"
//! aqm = "fq_codel"      # or "codel"; none (drop-tail) by default
//! aqm_target = "5ms"    # CoDel's target and interval (RFC 8289 defaults)
//! aqm_interval = "100ms"
//! fq_flows = 1024       # FQ-CoDel's flow queues and quantum (RFC 8290 defaults)
//! fq_quantum = 1514
//! fq_perturbation = 42  # the flow hash's; drawn at random per start unless set (lab status shows it)
//! ```

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;
use wirespeed_model::{BitRate, ByteSize, LinkLayer};

use crate::addressing::Ipv4Net;

/// Speed of light in vacuum, m/s (exact, SI definition of the metre).
pub const SPEED_OF_LIGHT_M_PER_S: f64 = 299_792_458.0;
/// Velocity factor used when a link gives a cable length but no factor: 0.66, typical of
/// twisted pair and of the RG-58 thin coax of 10BASE2 (0.65 to 0.66).
pub const DEFAULT_VELOCITY_FACTOR: f64 = 0.66;
/// Queue limit of a direction when the file names none, in packets (a common NIC ring and
/// `txqueuelen` order of magnitude).
pub const DEFAULT_QUEUE_PACKETS: u32 = 100;
/// The most nodes a lab may have; namespaces and threads are not free.
pub const MAX_NODES: usize = 64;
/// The most links: one /24 each out of 198.18.0.0/15.
pub const MAX_LINKS: usize = 512;

/// A topology file that could not be read or is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// The file could not be read.
    #[error("cannot read topology file {file}: {source}")]
    Read {
        /// The path as given.
        file: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not valid TOML or describes an impossible network.
    #[error("{file}:{line}: {message}")]
    Invalid {
        /// The path as given.
        file: String,
        /// 1-based line of the mistake.
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// An end system: does not forward; may model a slow host's processing and TCP.
    Host(HostConfig),
    /// Forwards between its links (ip_forward on), with optional processing costs.
    Router(RouterConfig),
}

/// Bellovin's per-packet processing cost: `fixed + per_byte * size` (seed 001, Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// Time every packet costs.
    pub fixed: Duration,
    /// Time each byte of the packet (IP header onward) costs.
    pub per_byte: Duration,
}

impl Cost {
    /// The cost of a packet of `bytes` bytes.
    pub fn of(&self, bytes: u64) -> Duration {
        self.fixed
            + self
                .per_byte
                .saturating_mul(u32::try_from(bytes).unwrap_or(u32::MAX))
    }

    /// True if the cost is zero (no processing model).
    pub fn is_zero(&self) -> bool {
        self.fixed.is_zero() && self.per_byte.is_zero()
    }
}

/// A router's processing model and ICMP behaviour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RouterConfig {
    /// Cost of a packet it forwards (applied on its egress by the emulator).
    pub forward: Cost,
    /// Cost of a packet it originates as an answer (echo reply, time exceeded).
    pub answer: Cost,
    /// Keep the kernel's ICMP rate limit (false sets net.ipv4.icmp_ratelimit=0).
    pub icmp_ratelimit: bool,
}

/// A host's processing model and TCP settings.
///
/// The emulator charges `transmit` to every frame the host sends before the frame reaches its
/// link, and `receive` to every frame it is handed before its stack sees it, on one server per
/// port: a frame waits while the host is busy with the previous one, in either direction. The
/// per-byte part is charged on the packet (everything after the Ethernet header), as a
/// router's is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostConfig {
    /// Cost of a frame the host sends.
    pub transmit: Cost,
    /// Cost of a frame the host receives.
    pub receive: Cost,
    /// `net.ipv4` sysctls written into the host's namespace, in order (preset first, then
    /// the file's own `tcp` table, which overrides it).
    pub tcp: Vec<TcpSetting>,
    /// The preset named by `tcp_profile`, if any (shown by `lab status`).
    pub tcp_profile: Option<String>,
}

impl HostConfig {
    /// True if the emulator has a processing model to apply at this host's ports.
    pub fn has_costs(&self) -> bool {
        !(self.transmit.is_zero() && self.receive.is_zero())
    }
}

/// One `net.ipv4.<key> = value` setting of a host's namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSetting {
    /// The key under net.ipv4 (`tcp_sack`).
    pub key: String,
    /// The value as written to /proc/sys.
    pub value: String,
}

/// The TCP sysctls a topology may set, with the values each accepts. All of them are per
/// network namespace (net.ipv4.tcp_* moved into `struct netns_ipv4` over kernels 4.x), so they
/// change only the lab's own hosts.
const TCP_KEYS: &[(&str, TcpValue)] = &[
    ("tcp_sack", TcpValue::Int(0, 1)),
    ("tcp_dsack", TcpValue::Int(0, 1)),
    ("tcp_timestamps", TcpValue::Int(0, 2)),
    ("tcp_window_scaling", TcpValue::Int(0, 1)),
    ("tcp_recovery", TcpValue::Int(0, 7)),
    ("tcp_early_retrans", TcpValue::Int(0, 4)),
    ("tcp_frto", TcpValue::Int(0, 2)),
    ("tcp_ecn", TcpValue::Int(0, 2)),
    ("tcp_no_metrics_save", TcpValue::Int(0, 1)),
    ("tcp_slow_start_after_idle", TcpValue::Int(0, 1)),
    ("tcp_autocorking", TcpValue::Int(0, 1)),
    ("tcp_thin_linear_timeouts", TcpValue::Int(0, 1)),
    ("tcp_reordering", TcpValue::Int(1, 300)),
    ("tcp_retries2", TcpValue::Int(1, 255)),
    ("tcp_congestion_control", TcpValue::Name),
];

#[derive(Debug, Clone, Copy)]
enum TcpValue {
    Int(i64, i64),
    Name,
}

/// The `1990s` preset: a TCP as the seeds' hosts had it (4.3BSD-Reno lineage, Solaris 2.5.1):
/// no selective acknowledgements (RFC 2018 came in 1996 and Solaris 2.5.1 did not have it),
/// no RACK or tail loss probes or F-RTO (2010s), no timestamps or window scaling (RFC 1323
/// was optional and 10 Mbit/s never needed it; without timestamps a segment carries 1460
/// bytes, the seed-004 figure), no ECN, Reno congestion control, and no per-destination
/// metrics cache, so that each transfer starts afresh. Lost segments are then repaired by
/// fast retransmit (three duplicate ACKs) or by the retransmission timer, as seed 003 §5
/// describes.
pub const TCP_PRESET_1990S: &[(&str, &str)] = &[
    ("tcp_sack", "0"),
    ("tcp_dsack", "0"),
    ("tcp_recovery", "0"),
    ("tcp_early_retrans", "0"),
    ("tcp_frto", "0"),
    ("tcp_timestamps", "0"),
    ("tcp_window_scaling", "0"),
    ("tcp_ecn", "0"),
    ("tcp_congestion_control", "reno"),
    ("tcp_no_metrics_save", "1"),
];

/// Names of the TCP presets `tcp_profile` accepts.
pub const TCP_PRESETS: &[(&str, &[(&str, &str)])] = &[("1990s", TCP_PRESET_1990S)];

/// Longest fixed cost a host or router may have: above this a unit was surely mistyped.
pub const MAX_FIXED_COST: Duration = Duration::from_secs(1);
/// Largest per-byte cost: 1 ms per byte is a 1 kB/s machine.
pub const MAX_PER_BYTE_COST: Duration = Duration::from_millis(1);
/// Longest propagation delay of a link direction: a geostationary hop is 0.27 s; 10 s leaves
/// room for any terrestrial or satellite path and keeps the frames in flight and the time a
/// teardown may have to drop within reach.
pub const MAX_DELAY: Duration = Duration::from_secs(10);
/// Longest lab name (`name` key, or the file's stem): namespaces are `ws-NAME-XXXX-NODE`.
pub const MAX_LAB_NAME: usize = 16;
/// Memory the emulator may hold in frames in flight, over all links of one lab: 256 MiB.
/// Each direction may hold at most the frames its queue, its serializer and its propagation
/// delay can contain when it carries minimum-size frames back to back
/// ([`Link::in_flight_frames`]); a lab whose links together could hold more is refused, and at
/// run time a direction that reaches its bound drops further arrivals (`drops_memory`).
pub const FLIGHT_BUDGET_BYTES: u64 = 256 * 1024 * 1024;
/// Bookkeeping per frame in flight beside its buffer (the schedule entry, channel node).
pub const FRAME_OVERHEAD_BYTES: u64 = 64;
/// Smallest packet a serial line carries (an IPv4 header), for the in-flight bound.
pub const MIN_SERIAL_PACKET: u64 = 20;

/// A host or router.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its name in the file (and in `lab exec`).
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
}

/// How many frames or bytes a direction's queue holds before it drops arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// Frames waiting (the one being serialized does not count).
    Packets(u32),
    /// Bytes of frames waiting.
    Bytes(u64),
}

/// One direction of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DirectionConfig {
    /// Serialization rate.
    pub rate: BitRate,
    /// Propagation delay.
    pub delay: Duration,
    /// Drop-tail queue limit.
    pub queue: QueueLimit,
    /// Probability that a frame is lost, 0 <= loss < 1.
    pub loss: f64,
    /// Seed of the loss process, so that a run can be repeated frame for frame.
    pub seed: u64,
    /// Store-and-forward hops hidden inside the link (a switch, or an active wiretap that
    /// receives each frame whole and retransmits it, seed 001 section 5): each adds one more
    /// serialization time to every frame, which probing sees as extra per-byte cost.
    pub hidden_hops: u8,
}

/// Which active queue management a link's directions run instead of plain drop-tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AqmKind {
    /// CoDel on the one FIFO (RFC 8289).
    Codel,
    /// FQ-CoDel: flow queues by 5-tuple hash, deficit round robin, CoDel per queue (RFC 8290).
    FqCodel,
}

impl AqmKind {
    /// The word the topology file uses.
    pub fn name(self) -> &'static str {
        match self {
            AqmKind::Codel => "codel",
            AqmKind::FqCodel => "fq_codel",
        }
    }
}

/// Active queue management of both directions of a link (`aqm = ...` and its keys). The
/// direction's `queue` / `queue_bytes` stays the hard limit: CoDel tail-drops beyond it,
/// FQ-CoDel drops the head of its fattest flow queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AqmConfig {
    /// CoDel or FQ-CoDel.
    pub kind: AqmKind,
    /// CoDel's target sojourn time.
    pub target: Duration,
    /// CoDel's interval.
    pub interval: Duration,
    /// FQ-CoDel's number of flow queues.
    pub flows: u32,
    /// FQ-CoDel's quantum, bytes.
    pub quantum: u32,
    /// FQ-CoDel's flow-hash perturbation (`fq_perturbation`), for a run that must repeat
    /// which flows share a queue; `None`: the lab draws one at random when it starts and shows
    /// it in `lab status`, so that no sender can know it in advance (RFC 8290 section 4.1).
    pub perturbation: Option<u64>,
}

/// Ranges of the AQM keys: (key, lowest, highest) as the file writes them.
pub const AQM_TARGET_RANGE: (Duration, Duration) =
    (Duration::from_micros(100), Duration::from_secs(1));
/// Range of `aqm_interval`.
pub const AQM_INTERVAL_RANGE: (Duration, Duration) =
    (Duration::from_millis(1), Duration::from_secs(10));
/// Range of `fq_flows`.
pub const FQ_FLOWS_RANGE: (i64, i64) = (1, 65_536);
/// Range of `fq_quantum`, bytes.
pub const FQ_QUANTUM_RANGE: (i64, i64) = (256, 65_536);

/// The duplex of one end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDuplex {
    /// Both directions at once, no carrier sense, no collisions.
    Full,
    /// CSMA/CD: defer to carrier, detect collisions, back off (wirespeed-sim's MAC). Two
    /// half-duplex ends share one medium; a half end facing a full end is a duplex mismatch
    /// (seed 003 §4.4).
    Half,
}

/// A link between two nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Position in the file, 0-based.
    pub index: usize,
    /// Node index of end a.
    pub a: usize,
    /// Node index of end b.
    pub b: usize,
    /// Direction a to b.
    pub ab: DirectionConfig,
    /// Direction b to a.
    pub ba: DirectionConfig,
    /// MTU of both interfaces.
    pub mtu: u32,
    /// Duplex of end a.
    pub duplex_a: LinkDuplex,
    /// Duplex of end b.
    pub duplex_b: LinkDuplex,
    /// What the serializer charges per frame: Ethernet (header, FCS, pad, preamble, gap) or a
    /// serial line (the IP packet alone).
    pub layer: LinkLayer,
    /// Whether the link carries IPv6 (`ipv6 = false` keeps IPv6's own multicast chatter off
    /// a slow line).
    pub ipv6: bool,
    /// Active queue management of both directions; `None` is drop-tail.
    pub aqm: Option<AqmConfig>,
    /// Address of end a, if the file gives one.
    pub a_address: Option<Ipv4Net>,
    /// Address of end b, if the file gives one.
    pub b_address: Option<Ipv4Net>,
    /// Line of the `[[link]]` table in the file.
    pub line: usize,
}

impl Link {
    /// Bytes of buffer one frame of this link takes in the emulator: the largest TAP frame
    /// (MTU, Ethernet header, one 802.1Q tag) plus one byte, so that an oversize frame reads
    /// as too big instead of being cut to fit.
    pub fn frame_buffer(&self) -> usize {
        frame_buffer(self.mtu)
    }

    /// The most frames direction `d` of this link can hold at once when it carries
    /// minimum-size frames back to back: its queue, the one being serialized, one in each
    /// hidden hop, and as many as its propagation delay holds, plus one for rounding. The
    /// emulator drops arrivals beyond this bound (`drops_memory`), which a real link of this
    /// rate, delay and queue could not carry anyway.
    pub fn in_flight_frames(&self, d: &DirectionConfig) -> u64 {
        let min_wire = match self.layer {
            LinkLayer::Serial => MIN_SERIAL_PACKET,
            ethernet => ethernet.frame(0).wire,
        };
        let queue = match d.queue {
            QueueLimit::Packets(p) => u64::from(p),
            QueueLimit::Bytes(b) => b.div_ceil(min_wire),
        };
        let min_frame_ns = (u128::from(min_wire) * 8 * 1_000_000_000)
            .div_ceil(u128::from(d.rate.bits_per_second().max(1)))
            .max(1);
        let propagation =
            u64::try_from(d.delay.as_nanos().div_ceil(min_frame_ns)).unwrap_or(u64::MAX);
        queue
            .saturating_add(2)
            .saturating_add(u64::from(d.hidden_hops))
            .saturating_add(propagation)
    }

    /// Bytes the frames in flight of both directions may take ([`FLIGHT_BUDGET_BYTES`]).
    pub fn in_flight_bytes(&self) -> u64 {
        let slot = self.frame_buffer() as u64 + FRAME_OVERHEAD_BYTES;
        if self.is_shared() {
            // One medium: each station's queue plus the frame on the wire, and as many again
            // held for a receiving host's CPU.
            let queue = match self.ab.queue {
                QueueLimit::Packets(p) => u64::from(p),
                QueueLimit::Bytes(b) => b.div_ceil(64),
            };
            return 2 * 2 * (queue + 2) * slot;
        }
        [&self.ab, &self.ba]
            .iter()
            .map(|d| self.in_flight_frames(d).saturating_mul(slot))
            .fold(0u64, u64::saturating_add)
    }

    /// True when either end runs CSMA/CD, so that the link is one shared medium (half duplex
    /// or a duplex mismatch) rather than two private directions.
    pub fn is_shared(&self) -> bool {
        self.duplex_a == LinkDuplex::Half || self.duplex_b == LinkDuplex::Half
    }
}

/// Bytes of buffer one frame of a link or segment of this MTU takes in the emulator.
pub fn frame_buffer(mtu: u32) -> usize {
    mtu as usize + TAP_FRAME_OVERHEAD + 1
}

/// Ethernet header and one 802.1Q tag: what a TAP frame adds to the MTU at most.
const TAP_FRAME_OVERHEAD: usize = 18;

impl Segment {
    /// Bytes the frames of this segment may take: each station's queue and the frame on the
    /// medium, and as many again held for a receiving host's CPU.
    pub fn in_flight_bytes(&self) -> u64 {
        let slot = frame_buffer(self.mtu) as u64 + FRAME_OVERHEAD_BYTES;
        2 * self.stations.len() as u64 * (u64::from(self.queue) + 2) * slot
    }
}

/// A shared segment: a hub (repeater) joining N stations on one half-duplex CSMA/CD medium.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Position among the `[[segment]]` tables, 0-based.
    pub index: usize,
    /// Its name in the file.
    pub name: String,
    /// Node index of each station, in file order.
    pub stations: Vec<usize>,
    /// Bit rate of the medium.
    pub rate: BitRate,
    /// Cable length end to end, metres (stations spread evenly along it).
    pub length_m: f64,
    /// Signal velocity as a fraction of the speed of light.
    pub velocity_factor: f64,
    /// Frames each station holds for its MAC.
    pub queue: u32,
    /// MTU of every station's interface.
    pub mtu: u32,
    /// Seed of the MACs' backoff.
    pub seed: u64,
    /// Line of the `[[segment]]` table.
    pub line: usize,
}

/// A checked topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// The `name` key, if any.
    pub name: Option<String>,
    /// Hosts then routers, in file order.
    pub nodes: Vec<Node>,
    /// Links in file order.
    pub links: Vec<Link>,
    /// Shared segments in file order.
    pub segments: Vec<Segment>,
}

impl Topology {
    /// Reads and checks a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Read {
            file: path.display().to_string(),
            source,
        })?;
        Topology::parse(&text, &path.display().to_string())
    }

    /// Parses and checks topology text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Topology, TopologyError> {
        let ctx = Ctx { text, file };
        let raw: RawTopology = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| ctx.line(s.start));
            ctx.error_at_line(line, e.message().trim().to_string())
        })?;
        raw.check(&ctx)
    }

    /// The index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}

struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn error_at_line(&self, line: usize, message: String) -> TopologyError {
        TopologyError::Invalid {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    fn error<T>(&self, at: &Spanned<T>, message: String) -> TopologyError {
        self.error_at_line(self.line(at.span().start), message)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    name: Option<Spanned<String>>,
    #[serde(default)]
    host: Vec<RawHost>,
    #[serde(default)]
    router: Vec<RawRouter>,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    segment: Vec<Spanned<RawSegment>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSegment {
    name: Spanned<String>,
    stations: Spanned<Vec<Spanned<String>>>,
    rate: Option<Spanned<toml::Value>>,
    length_m: Option<Spanned<toml::Value>>,
    velocity_factor: Option<Spanned<toml::Value>>,
    queue: Option<Spanned<toml::Value>>,
    mtu: Option<Spanned<toml::Value>>,
    seed: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    name: Spanned<String>,
    transmit: Option<Spanned<RawCost>>,
    receive: Option<Spanned<RawCost>>,
    tcp_profile: Option<Spanned<String>>,
    tcp: Option<Spanned<toml::Table>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRouter {
    name: Spanned<String>,
    forward: Option<Spanned<RawCost>>,
    answer: Option<Spanned<RawCost>>,
    #[serde(default = "yes")]
    icmp_ratelimit: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCost {
    #[serde(default)]
    fixed: Option<Spanned<toml::Value>>,
    #[serde(default)]
    per_byte: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: Spanned<String>,
    b: Spanned<String>,
    rate: Option<Spanned<toml::Value>>,
    rate_ab: Option<Spanned<toml::Value>>,
    rate_ba: Option<Spanned<toml::Value>>,
    delay: Option<Spanned<toml::Value>>,
    length_m: Option<Spanned<toml::Value>>,
    velocity_factor: Option<Spanned<toml::Value>>,
    queue: Option<Spanned<toml::Value>>,
    queue_bytes: Option<Spanned<toml::Value>>,
    loss: Option<Spanned<toml::Value>>,
    seed: Option<Spanned<toml::Value>>,
    mtu: Option<Spanned<toml::Value>>,
    duplex: Option<Spanned<String>>,
    duplex_a: Option<Spanned<String>>,
    duplex_b: Option<Spanned<String>>,
    layer: Option<Spanned<String>>,
    ipv6: Option<bool>,
    hidden_hops: Option<Spanned<toml::Value>>,
    a_address: Option<Spanned<String>>,
    b_address: Option<Spanned<String>>,
    aqm: Option<Spanned<String>>,
    aqm_target: Option<Spanned<toml::Value>>,
    aqm_interval: Option<Spanned<toml::Value>>,
    fq_flows: Option<Spanned<toml::Value>>,
    fq_quantum: Option<Spanned<toml::Value>>,
    fq_perturbation: Option<Spanned<toml::Value>>,
}

impl RawTopology {
    fn check(self, ctx: &Ctx<'_>) -> Result<Topology, TopologyError> {
        if let Some(name) = &self.name {
            check_lab_name(ctx, name)?;
        }
        let mut nodes: Vec<Node> = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut add = |name: &Spanned<String>, kind: NodeKind| -> Result<(), TopologyError> {
            check_name(ctx, name)?;
            if names.contains_key(name.get_ref()) {
                return Err(ctx.error(
                    name,
                    format!(
                        "duplicate node name '{}': every host and router needs its own name",
                        name.get_ref()
                    ),
                ));
            }
            names.insert(name.get_ref().clone(), nodes.len());
            nodes.push(Node {
                name: name.get_ref().clone(),
                kind,
            });
            Ok(())
        };
        for host in &self.host {
            add(&host.name, NodeKind::Host(host.check(ctx)?))?;
        }
        for router in &self.router {
            let config = RouterConfig {
                forward: bounded_cost(
                    ctx,
                    router.forward.as_ref(),
                    "forward",
                    "router",
                    &router.name,
                )?,
                answer: bounded_cost(
                    ctx,
                    router.answer.as_ref(),
                    "answer",
                    "router",
                    &router.name,
                )?,
                icmp_ratelimit: router.icmp_ratelimit,
            };
            add(&router.name, NodeKind::Router(config))?;
        }
        if nodes.len() < 2 {
            return Err(ctx.error_at_line(
                1,
                "a lab needs at least two nodes: add [[host]] or [[router]] tables with a name"
                    .into(),
            ));
        }
        if nodes.len() > MAX_NODES {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} nodes is more than the {MAX_NODES} a lab may have",
                    nodes.len()
                ),
            ));
        }
        if self.link.is_empty() && self.segment.is_empty() {
            return Err(ctx.error_at_line(
                1,
                "a lab needs at least one [[link]] with a = \"NODE\" and b = \"NODE\" (or a [[segment]])".into(),
            ));
        }
        if self.link.len() + self.segment.len() > MAX_LINKS {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} links and segments are more than the {MAX_LINKS} that 198.18.0.0/15 numbers",
                    self.link.len() + self.segment.len()
                ),
            ));
        }
        if self.link.len() > MAX_LINKS {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} links is more than the {MAX_LINKS} that 198.18.0.0/15 numbers",
                    self.link.len()
                ),
            ));
        }
        let mut links = Vec::new();
        for (index, link) in self.link.iter().enumerate() {
            let line = ctx.line(link.span().start);
            links.push(link.get_ref().check(ctx, index, line, &names)?);
        }
        check_addresses(ctx, &self.link, &links)?;
        let mut segments = Vec::new();
        for (index, segment) in self.segment.iter().enumerate() {
            let line = ctx.line(segment.span().start);
            segments.push(segment.get_ref().check(ctx, index, line, &names, &nodes)?);
        }
        check_memory(ctx, &links, &segments)?;
        Ok(Topology {
            name: self.name.map(Spanned::into_inner),
            nodes,
            links,
            segments,
        })
    }
}

/// True if `name` may name a lab: 1 to [`MAX_LAB_NAME`] of a-z, 0-9 and '-', starting with a
/// letter or digit and not ending with '-'. Never empty, never a path.
pub fn is_lab_base_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LAB_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn check_lab_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<(), TopologyError> {
    let n = name.get_ref();
    if is_lab_base_name(n) {
        Ok(())
    } else {
        Err(ctx.error(
            name,
            format!(
                "lab name '{n}' must be 1 to {MAX_LAB_NAME} of a-z, 0-9 and '-', starting with a letter or digit: e.g. name = \"two-host\" (or leave it out to use the file's name)"
            ),
        ))
    }
}

fn check_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<(), TopologyError> {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.len() <= 24
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ctx.error(
            name,
            format!("node name '{n}' must be 1 to 24 of a-z, 0-9 and '-', starting with a letter"),
        ))
    }
}

fn cost(ctx: &Ctx<'_>, raw: Option<&Spanned<RawCost>>) -> Result<Cost, TopologyError> {
    let Some(raw) = raw else {
        return Ok(Cost::default());
    };
    let get = |v: &Option<Spanned<toml::Value>>, what: &str| -> Result<Duration, TopologyError> {
        match v {
            None => Ok(Duration::ZERO),
            Some(v) => duration(ctx, v, what),
        }
    };
    Ok(Cost {
        fixed: get(&raw.get_ref().fixed, "fixed cost")?,
        per_byte: get(&raw.get_ref().per_byte, "per-byte cost")?,
    })
}

/// A cost within [`MAX_FIXED_COST`] and [`MAX_PER_BYTE_COST`], or an error at its line.
fn bounded_cost(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawCost>>,
    what: &str,
    kind: &str,
    name: &Spanned<String>,
) -> Result<Cost, TopologyError> {
    let c = cost(ctx, raw)?;
    if let Some(raw) = raw
        && (c.fixed > MAX_FIXED_COST || c.per_byte > MAX_PER_BYTE_COST)
    {
        return Err(ctx.error(
            raw,
            format!(
                "{what} cost of {kind} '{}' is above {} ms fixed or {} us per byte: check the unit (\"784ns\", \"1.2ms\")",
                name.get_ref(),
                MAX_FIXED_COST.as_millis(),
                MAX_PER_BYTE_COST.as_micros()
            ),
        ));
    }
    Ok(c)
}

impl RawHost {
    fn check(&self, ctx: &Ctx<'_>) -> Result<HostConfig, TopologyError> {
        let transmit = bounded_cost(ctx, self.transmit.as_ref(), "transmit", "host", &self.name)?;
        let receive = bounded_cost(ctx, self.receive.as_ref(), "receive", "host", &self.name)?;
        let mut tcp: Vec<TcpSetting> = Vec::new();
        let mut set = |key: &str, value: String| {
            tcp.retain(|s| s.key != key);
            tcp.push(TcpSetting {
                key: key.to_string(),
                value,
            });
        };
        let tcp_profile = match &self.tcp_profile {
            None => None,
            Some(p) => {
                let Some((name, preset)) = TCP_PRESETS.iter().find(|(n, _)| *n == p.get_ref())
                else {
                    let known: Vec<&str> = TCP_PRESETS.iter().map(|(n, _)| *n).collect();
                    return Err(ctx.error(
                        p,
                        format!(
                            "unknown tcp_profile '{}': use one of {}, or set sysctls in a tcp table",
                            p.get_ref(),
                            known.join(", ")
                        ),
                    ));
                };
                for (k, v) in preset.iter() {
                    set(k, v.to_string());
                }
                Some(name.to_string())
            }
        };
        if let Some(table) = &self.tcp {
            for (key, value) in table.get_ref() {
                let Some((_, kind)) = TCP_KEYS.iter().find(|(k, _)| k == key) else {
                    let known: Vec<&str> = TCP_KEYS.iter().map(|(k, _)| *k).collect();
                    return Err(ctx.error(
                        table,
                        format!(
                            "unknown TCP setting '{key}' in host '{}': the lab sets only per-namespace net.ipv4 keys ({})",
                            self.name.get_ref(),
                            known.join(", ")
                        ),
                    ));
                };
                let text = match (kind, value) {
                    (TcpValue::Int(lo, hi), toml::Value::Integer(i)) if (lo..=hi).contains(&i) => {
                        i.to_string()
                    }
                    (TcpValue::Int(lo, hi), other) => {
                        return Err(ctx.error(
                            table,
                            format!("{key} = {other} must be a whole number in {lo}..={hi}"),
                        ));
                    }
                    (TcpValue::Name, toml::Value::String(n))
                        if !n.is_empty()
                            && n.len() <= 15
                            && n.chars().all(|c| {
                                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
                            }) =>
                    {
                        n.clone()
                    }
                    (TcpValue::Name, other) => {
                        return Err(ctx.error(
                            table,
                            format!(
                                "{key} = {other} must name an algorithm, e.g. \"reno\" or \"cubic\""
                            ),
                        ));
                    }
                };
                set(key, text);
            }
        }
        Ok(HostConfig {
            transmit,
            receive,
            tcp,
            tcp_profile,
        })
    }
}

fn text_of(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn duration(
    ctx: &Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
) -> Result<Duration, TopologyError> {
    let text = text_of(v.get_ref());
    if text.trim_start().starts_with('-') {
        return Err(ctx.error(
            v,
            format!("negative {what} '{text}': a time cannot be below zero"),
        ));
    }
    if let toml::Value::Integer(_) | toml::Value::Float(_) = v.get_ref() {
        return Err(ctx.error(
            v,
            format!("{what} {text} has no unit: write it as a string with one, e.g. \"50us\" or \"1.2ms\""),
        ));
    }
    wirespeed_model::units::parse_duration(&text).map_err(|e| ctx.error(v, format!("{what}: {e}")))
}

fn rate(ctx: &Ctx<'_>, v: &Spanned<toml::Value>) -> Result<BitRate, TopologyError> {
    let text = text_of(v.get_ref());
    if text.trim_start().starts_with('-') {
        return Err(ctx.error(
            v,
            format!("negative rate '{text}': a link rate must be above zero, e.g. \"10M\""),
        ));
    }
    let digits: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if digits.parse::<f64>().is_ok_and(|x| x == 0.0) {
        return Err(ctx.error(
            v,
            format!("rate '{text}': a link rate must be above zero, e.g. \"10M\""),
        ));
    }
    let rate = BitRate::from_str(&text).map_err(|e| ctx.error(v, format!("rate: {e}")))?;
    if rate.bits_per_second() > 10_000_000_000 {
        return Err(ctx.error(
            v,
            format!("rate {rate} is above the 10 Gbit/s a user-space emulator can pretend to time"),
        ));
    }
    Ok(rate)
}

fn number(ctx: &Ctx<'_>, v: &Spanned<toml::Value>, what: &str) -> Result<f64, TopologyError> {
    match v.get_ref() {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        other => Err(ctx.error(v, format!("{what} must be a number, not {other}"))),
    }
}

fn integer(
    ctx: &Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
    min: i64,
    max: i64,
) -> Result<i64, TopologyError> {
    match v.get_ref() {
        toml::Value::Integer(i) if (min..=max).contains(i) => Ok(*i),
        toml::Value::Integer(i) => {
            Err(ctx.error(v, format!("{what} {i} is outside {min}..={max}")))
        }
        other => Err(ctx.error(v, format!("{what} must be a whole number, not {other}"))),
    }
}

impl RawLink {
    fn check(
        &self,
        ctx: &Ctx<'_>,
        index: usize,
        line: usize,
        names: &HashMap<String, usize>,
    ) -> Result<Link, TopologyError> {
        let node = |name: &Spanned<String>| -> Result<usize, TopologyError> {
            names.get(name.get_ref()).copied().ok_or_else(|| {
                let mut known: Vec<&String> = names.keys().collect();
                known.sort();
                let known: Vec<&str> = known.iter().map(|s| s.as_str()).collect();
                ctx.error(
                    name,
                    format!(
                        "unknown node '{}': declare it as [[host]] or [[router]] (known: {})",
                        name.get_ref(),
                        known.join(", ")
                    ),
                )
            })
        };
        let a = node(&self.a)?;
        let b = node(&self.b)?;
        if a == b {
            return Err(ctx.error(
                &self.b,
                format!(
                    "link from '{}' to itself: a and b must differ",
                    self.a.get_ref()
                ),
            ));
        }
        if let (Some(both), true) = (&self.rate, self.rate_ab.is_some() || self.rate_ba.is_some()) {
            // One of them would be silently ignored for that direction.
            return Err(ctx.error(
                both,
                "give rate (both directions) or rate_ab and rate_ba (one per direction), not both: remove rate or the per-direction rates".into(),
            ));
        }
        let base = self.rate.as_ref().map(|v| rate(ctx, v)).transpose()?;
        let rate_ab = self
            .rate_ab
            .as_ref()
            .map(|v| rate(ctx, v))
            .transpose()?
            .or(base);
        let rate_ba = self
            .rate_ba
            .as_ref()
            .map(|v| rate(ctx, v))
            .transpose()?
            .or(base);
        let (Some(rate_ab), Some(rate_ba)) = (rate_ab, rate_ba) else {
            return Err(ctx.error_at_line(
                line,
                "link has no rate: add rate = \"10M\" (or rate_ab and rate_ba, one per direction)"
                    .into(),
            ));
        };
        let delay = self.delay(ctx, line)?;
        let queue = match (&self.queue, &self.queue_bytes) {
            (Some(_), Some(q)) => {
                return Err(ctx.error(q, "give queue (packets) or queue_bytes, not both".into()));
            }
            (Some(q), None) => {
                QueueLimit::Packets(integer(ctx, q, "queue (packets)", 1, 1_000_000)? as u32)
            }
            (None, Some(q)) => {
                let text = text_of(q.get_ref());
                let size = ByteSize::from_str(&text)
                    .map_err(|e| ctx.error(q, format!("queue_bytes: {e}")))?;
                if size.bytes() < 64 {
                    return Err(ctx.error(
                        q,
                        format!("queue_bytes {size} cannot hold one minimum frame (64 bytes)"),
                    ));
                }
                QueueLimit::Bytes(size.bytes())
            }
            (None, None) => QueueLimit::Packets(DEFAULT_QUEUE_PACKETS),
        };
        let loss = match &self.loss {
            None => 0.0,
            Some(v) => {
                let loss = number(ctx, v, "loss")?;
                if !(0.0..1.0).contains(&loss) {
                    return Err(ctx.error(
                        v,
                        format!("loss {loss} must be a probability in 0 <= loss < 1 (0.01 is 1%)"),
                    ));
                }
                loss
            }
        };
        let seed = match &self.seed {
            None => index as u64 + 1,
            Some(v) => integer(ctx, v, "seed", 0, i64::MAX)? as u64,
        };
        let mtu = match &self.mtu {
            None => 1500,
            Some(v) => integer(ctx, v, "mtu", 68, 9000)? as u32,
        };
        let parse_duplex = |d: &Spanned<String>| match d.get_ref().as_str() {
            "full" => Ok(LinkDuplex::Full),
            "half" => Ok(LinkDuplex::Half),
            other => Err(ctx.error(d, format!("duplex '{other}' is not \"full\" or \"half\""))),
        };
        let both = self.duplex.as_ref().map(parse_duplex).transpose()?;
        let duplex_a = match &self.duplex_a {
            Some(d) => parse_duplex(d)?,
            None => both.unwrap_or(LinkDuplex::Full),
        };
        let duplex_b = match &self.duplex_b {
            Some(d) => parse_duplex(d)?,
            None => both.unwrap_or(LinkDuplex::Full),
        };
        if duplex_a == LinkDuplex::Half || duplex_b == LinkDuplex::Half {
            let at = self
                .duplex
                .as_ref()
                .or(self.duplex_a.as_ref())
                .or(self.duplex_b.as_ref())
                .expect("a half end was given");
            if rate_ab != rate_ba {
                return Err(ctx.error(
                    at,
                    "a half-duplex link is one medium with one rate: give rate, not rate_ab and rate_ba".into(),
                ));
            }
            let unsupported = [
                (self.loss.is_some(), "loss"),
                (self.hidden_hops.is_some(), "hidden_hops"),
                (self.queue_bytes.is_some(), "queue_bytes"),
                (self.layer.is_some(), "layer"),
                (self.aqm.is_some(), "aqm"),
            ];
            if let Some((_, key)) = unsupported.iter().find(|(given, _)| *given) {
                return Err(ctx.error(
                    at,
                    format!("{key} is not available on a half-duplex (CSMA/CD) link: remove it, or make the link full duplex"),
                ));
            }
        }
        let layer = match &self.layer {
            None => LinkLayer::Ethernet { vlan_tags: 0 },
            Some(l) if l.get_ref() == "ethernet" => LinkLayer::Ethernet { vlan_tags: 0 },
            Some(l) if l.get_ref() == "serial" => LinkLayer::Serial,
            Some(l) => {
                return Err(ctx.error(
                    l,
                    format!("layer '{}' is not \"ethernet\" or \"serial\"", l.get_ref()),
                ));
            }
        };
        let address = |v: &Option<Spanned<String>>| -> Result<Option<Ipv4Net>, TopologyError> {
            v.as_ref()
                .map(|v| Ipv4Net::from_str(v.get_ref()).map_err(|e| ctx.error(v, e)))
                .transpose()
        };
        let hidden_hops = match &self.hidden_hops {
            None => 0,
            Some(v) => integer(ctx, v, "hidden_hops", 0, 16)? as u8,
        };
        let direction = |rate| DirectionConfig {
            rate,
            delay,
            queue,
            loss,
            seed,
            hidden_hops,
        };
        Ok(Link {
            index,
            a,
            b,
            ab: direction(rate_ab),
            ba: DirectionConfig {
                seed: seed.wrapping_add(0x9e37_79b9_7f4a_7c15),
                ..direction(rate_ba)
            },
            mtu,
            duplex_a,
            duplex_b,
            layer,
            ipv6: self.ipv6.unwrap_or(true),
            aqm: self.aqm(ctx)?,
            a_address: address(&self.a_address)?,
            b_address: address(&self.b_address)?,
            line,
        })
    }

    /// The `aqm` key and the keys that tune it; each bad value is one line naming the key, the
    /// value, the range and an example.
    fn aqm(&self, ctx: &Ctx<'_>) -> Result<Option<AqmConfig>, TopologyError> {
        let kind = match &self.aqm {
            None => None,
            Some(a) => match a.get_ref().as_str() {
                "none" => None,
                "codel" => Some(AqmKind::Codel),
                "fq_codel" => Some(AqmKind::FqCodel),
                other => {
                    return Err(ctx.error(
                        a,
                        format!(
                            "aqm \"{other}\" is not one of \"codel\", \"fq_codel\" or \"none\": e.g. aqm = \"fq_codel\""
                        ),
                    ));
                }
            },
        };
        let tuning = [
            (&self.aqm_target, "aqm_target", true),
            (&self.aqm_interval, "aqm_interval", true),
            (&self.fq_flows, "fq_flows", false),
            (&self.fq_quantum, "fq_quantum", false),
            (&self.fq_perturbation, "fq_perturbation", false),
        ];
        for (value, key, codel_too) in tuning {
            let Some(v) = value else { continue };
            let fits = match kind {
                None => false,
                Some(AqmKind::Codel) => codel_too,
                Some(AqmKind::FqCodel) => true,
            };
            if !fits {
                let needs = if codel_too {
                    "aqm = \"codel\" or aqm = \"fq_codel\""
                } else {
                    "aqm = \"fq_codel\""
                };
                return Err(ctx.error(
                    v,
                    format!(
                        "{key} = {} tunes {needs}, which this link does not have: add it or remove {key}",
                        v.get_ref()
                    ),
                ));
            }
        }
        let Some(kind) = kind else {
            return Ok(None);
        };
        let time = |v: &Option<Spanned<toml::Value>>,
                    key: &str,
                    (min, max): (Duration, Duration),
                    default: Duration,
                    example: &str|
         -> Result<Duration, TopologyError> {
            let Some(v) = v else { return Ok(default) };
            let range = format!(
                "{}..={}",
                wirespeed_model::units::format_seconds(min.as_secs_f64()).replace(' ', ""),
                wirespeed_model::units::format_seconds(max.as_secs_f64()).replace(' ', "")
            );
            let bad = || {
                ctx.error(
                    v,
                    format!(
                        "{key} = {} is not a time in {range}: e.g. {key} = \"{example}\"",
                        v.get_ref()
                    ),
                )
            };
            let toml::Value::String(text) = v.get_ref() else {
                return Err(bad());
            };
            let d = wirespeed_model::units::parse_duration(text).map_err(|_| bad())?;
            if d < min || d > max || text.trim_start().starts_with('-') {
                return Err(bad());
            }
            Ok(d)
        };
        let target = time(
            &self.aqm_target,
            "aqm_target",
            AQM_TARGET_RANGE,
            Duration::from_nanos(crate::emulator::aqm::DEFAULT_TARGET_NS),
            "5ms",
        )?;
        let interval = time(
            &self.aqm_interval,
            "aqm_interval",
            AQM_INTERVAL_RANGE,
            Duration::from_nanos(crate::emulator::aqm::DEFAULT_INTERVAL_NS),
            "100ms",
        )?;
        if target >= interval {
            let at = self
                .aqm_target
                .as_ref()
                .or(self.aqm_interval.as_ref())
                .expect("the defaults are in order");
            return Err(ctx.error(
                at,
                format!(
                    "aqm_target {:?} must be below aqm_interval {:?} (RFC 8289 puts it at 5-10% of the interval): e.g. aqm_target = \"5ms\" with aqm_interval = \"100ms\"",
                    target, interval
                ),
            ));
        }
        let whole = |v: &Option<Spanned<toml::Value>>,
                     key: &str,
                     (min, max): (i64, i64),
                     default: u32,
                     example: u32|
         -> Result<u32, TopologyError> {
            let Some(v) = v else { return Ok(default) };
            match v.get_ref() {
                toml::Value::Integer(i) if (min..=max).contains(i) => Ok(*i as u32),
                other => Err(ctx.error(
                    v,
                    format!(
                        "{key} = {other} is not a whole number in {min}..={max}: e.g. {key} = {example}"
                    ),
                )),
            }
        };
        let flows = whole(
            &self.fq_flows,
            "fq_flows",
            FQ_FLOWS_RANGE,
            crate::emulator::aqm::DEFAULT_FLOWS,
            1024,
        )?;
        let quantum = whole(
            &self.fq_quantum,
            "fq_quantum",
            FQ_QUANTUM_RANGE,
            crate::emulator::aqm::DEFAULT_QUANTUM,
            1514,
        )?;
        let perturbation = self
            .fq_perturbation
            .as_ref()
            .map(|v| integer(ctx, v, "fq_perturbation", 0, i64::MAX).map(|p| p as u64))
            .transpose()?;
        Ok(Some(AqmConfig {
            kind,
            target,
            interval,
            flows,
            quantum,
            perturbation,
        }))
    }

    fn delay(&self, ctx: &Ctx<'_>, line: usize) -> Result<Duration, TopologyError> {
        let delay = self.unbounded_delay(ctx)?;
        if delay > MAX_DELAY {
            let at = self
                .delay
                .as_ref()
                .or(self.velocity_factor.as_ref())
                .or(self.length_m.as_ref());
            let message = format!(
                "delay {:.3} s is above the {} s a lab link may have: check the unit (\"50us\", \"270ms\")",
                delay.as_secs_f64(),
                MAX_DELAY.as_secs()
            );
            return Err(match at {
                Some(at) => ctx.error(at, message),
                None => ctx.error_at_line(line, message),
            });
        }
        Ok(delay)
    }

    fn unbounded_delay(&self, ctx: &Ctx<'_>) -> Result<Duration, TopologyError> {
        if let (Some(vf), None) = (&self.velocity_factor, &self.length_m) {
            // Alone it would change nothing: the delay is `delay`, or zero.
            return Err(ctx.error(
                vf,
                "velocity_factor needs length_m (the cable's length): add length_m = 100, or remove velocity_factor".into(),
            ));
        }
        match (&self.delay, &self.length_m) {
            (Some(_), Some(l)) => Err(ctx.error(l, "give delay or length_m, not both".into())),
            (Some(d), None) => duration(ctx, d, "delay"),
            (None, Some(l)) => {
                let length = number(ctx, l, "length_m")?;
                if !(0.0..=4.0e7).contains(&length) {
                    return Err(ctx.error(
                        l,
                        format!("length_m {length} must be between 0 and 40,000 km"),
                    ));
                }
                let vf = match &self.velocity_factor {
                    None => DEFAULT_VELOCITY_FACTOR,
                    Some(v) => number(ctx, v, "velocity_factor")?,
                };
                if !(vf > 0.0 && vf <= 1.0) {
                    let at = self.velocity_factor.as_ref().unwrap_or(l);
                    return Err(
                        ctx.error(at, format!("velocity_factor {vf} must be in 0 < vf <= 1"))
                    );
                }
                // Above the bound, and never a conversion that could overflow.
                let seconds =
                    (length / (vf * SPEED_OF_LIGHT_M_PER_S)).min(MAX_DELAY.as_secs_f64() * 2.0);
                Ok(Duration::from_secs_f64(seconds))
            }
            (None, None) => Ok(Duration::ZERO),
        }
    }
}

/// Most stations a segment's /24 can number.
pub const MAX_STATIONS: usize = 253;

impl RawSegment {
    fn check(
        &self,
        ctx: &Ctx<'_>,
        index: usize,
        line: usize,
        names: &HashMap<String, usize>,
        nodes: &[Node],
    ) -> Result<Segment, TopologyError> {
        check_name(ctx, &self.name)?;
        let mut stations = Vec::new();
        for station in self.stations.get_ref() {
            let Some(&node) = names.get(station.get_ref()) else {
                return Err(ctx.error(
                    station,
                    format!(
                        "segment '{}' names unknown station '{}': add a [[host]] with that name",
                        self.name.get_ref(),
                        station.get_ref()
                    ),
                ));
            };
            if matches!(nodes[node].kind, NodeKind::Router(_)) {
                return Err(ctx.error(
                    station,
                    format!(
                        "router '{}' on segment '{}': the lab does not route across segments; attach hosts only",
                        station.get_ref(),
                        self.name.get_ref()
                    ),
                ));
            }
            if stations.contains(&node) {
                return Err(ctx.error(
                    station,
                    format!(
                        "station '{}' is on segment '{}' twice",
                        station.get_ref(),
                        self.name.get_ref()
                    ),
                ));
            }
            stations.push(node);
        }
        if !(2..=MAX_STATIONS).contains(&stations.len()) {
            return Err(ctx.error(
                &self.stations,
                format!(
                    "segment '{}' has {} stations: give 2 to {MAX_STATIONS}",
                    self.name.get_ref(),
                    stations.len()
                ),
            ));
        }
        let Some(rate) = self.rate.as_ref().map(|v| rate(ctx, v)).transpose()? else {
            return Err(ctx.error_at_line(line, "segment has no rate: add rate = \"10M\"".into()));
        };
        let length_m = match &self.length_m {
            None => 100.0,
            Some(v) => {
                let l = number(ctx, v, "length_m")?;
                if !(0.0..=10_000.0).contains(&l) {
                    return Err(ctx.error(
                        v,
                        format!("length_m {l} of a segment must be between 0 and 10 km"),
                    ));
                }
                l
            }
        };
        let velocity_factor = match &self.velocity_factor {
            None => DEFAULT_VELOCITY_FACTOR,
            Some(v) => {
                let vf = number(ctx, v, "velocity_factor")?;
                if !(vf > 0.0 && vf <= 1.0) {
                    return Err(
                        ctx.error(v, format!("velocity_factor {vf} must be in 0 < vf <= 1"))
                    );
                }
                vf
            }
        };
        let queue = match &self.queue {
            None => DEFAULT_QUEUE_PACKETS,
            Some(v) => integer(ctx, v, "queue (packets)", 1, 1_000_000)? as u32,
        };
        let mtu = match &self.mtu {
            None => 1500,
            Some(v) => integer(ctx, v, "mtu", 68, 9000)? as u32,
        };
        let seed = match &self.seed {
            None => index as u64 + 1,
            Some(v) => integer(ctx, v, "seed", 0, i64::MAX)? as u64,
        };
        Ok(Segment {
            index,
            name: self.name.get_ref().clone(),
            stations,
            rate,
            length_m,
            velocity_factor,
            queue,
            mtu,
            seed,
            line,
        })
    }
}

/// Refuses a lab whose links and segments together could hold more than
/// [`FLIGHT_BUDGET_BYTES`] of frames, at the line of the link that goes over.
fn check_memory(ctx: &Ctx<'_>, links: &[Link], segments: &[Segment]) -> Result<(), TopologyError> {
    const MIB: f64 = 1024.0 * 1024.0;
    let budget = FLIGHT_BUDGET_BYTES as f64 / MIB;
    let mut total = 0u64;
    let items = links
        .iter()
        .map(|l| (l.line, l.in_flight_bytes(), Some(l)))
        .chain(segments.iter().map(|s| (s.line, s.in_flight_bytes(), None)));
    for (line, bytes, link) in items {
        total = total.saturating_add(bytes);
        if total <= FLIGHT_BUDGET_BYTES {
            continue;
        }
        let what = match link {
            Some(l) => format!(
                "this link can hold {:.0} MiB of frames in flight (rate {}, delay {:.3} s, queue {})",
                bytes as f64 / MIB,
                l.ab.rate.max(l.ba.rate),
                l.ab.delay.as_secs_f64(),
                match l.ab.queue {
                    QueueLimit::Packets(p) => format!("{p} packets"),
                    QueueLimit::Bytes(b) => format!("{b} bytes"),
                }
            ),
            None => format!(
                "this segment can hold {:.0} MiB of frames",
                bytes as f64 / MIB
            ),
        };
        return Err(ctx.error_at_line(
            line,
            format!(
                "{what}; with the links before it that is {:.0} MiB, above the lab's budget of {budget:.0} MiB: lower the delay, the rate or the queue",
                total as f64 / MIB
            ),
        ));
    }
    Ok(())
}

fn check_addresses(
    ctx: &Ctx<'_>,
    raw: &[Spanned<RawLink>],
    links: &[Link],
) -> Result<(), TopologyError> {
    let mut seen: HashMap<Ipv4Addr, ()> = HashMap::new();
    for (raw, link) in raw.iter().zip(links) {
        for (net, at) in [
            (link.a_address, raw.get_ref().a_address.as_ref()),
            (link.b_address, raw.get_ref().b_address.as_ref()),
        ] {
            let (Some(net), Some(at)) = (net, at) else {
                continue;
            };
            if seen.insert(net.addr, ()).is_some() {
                return Err(ctx.error(
                    at,
                    format!(
                        "duplicate address {}: every interface needs its own",
                        net.addr
                    ),
                ));
            }
        }
        if let (Some(x), Some(y), Some(at)) = (
            link.a_address,
            link.b_address,
            raw.get_ref().b_address.as_ref(),
        ) && !(x.contains(y.addr) && y.contains(x.addr))
        {
            return Err(ctx.error(
                at,
                format!("addresses {x} and {y} of one link are not in the same subnet"),
            ));
        }
        if link.a_address.is_some() != link.b_address.is_some() {
            return Err(ctx.error_at_line(
                link.line,
                "give both a_address and b_address, or neither".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
[[host]]
name = "h1"
[[host]]
name = "h2"
[[link]]
a = "h1"
b = "h2"
rate = "10M"
delay = "100us"
"#;

    fn err(text: &str) -> (usize, String) {
        match Topology::parse(text, "t.toml").unwrap_err() {
            TopologyError::Invalid { line, message, .. } => (line, message),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn two_hosts_parse_with_defaults() {
        let t = Topology::parse(TWO, "t.toml").unwrap();
        assert_eq!(t.nodes.len(), 2);
        let l = &t.links[0];
        assert_eq!(l.ab.rate.bits_per_second(), 10_000_000);
        assert_eq!(l.ba.rate.bits_per_second(), 10_000_000);
        assert_eq!(l.ab.delay, Duration::from_micros(100));
        assert_eq!(l.ab.queue, QueueLimit::Packets(DEFAULT_QUEUE_PACKETS));
        assert_eq!(l.mtu, 1500);
        assert_eq!(l.line, 6);
        assert_ne!(l.ab.seed, l.ba.seed);
    }

    #[test]
    fn each_direction_may_differ() {
        let t = Topology::parse(
            &TWO.replace("rate = \"10M\"", "rate_ab = \"1M\"\nrate_ba = \"56k\""),
            "t",
        )
        .unwrap();
        assert_eq!(t.links[0].ab.rate.bits_per_second(), 1_000_000);
        assert_eq!(t.links[0].ba.rate.bits_per_second(), 56_000);
    }

    #[test]
    fn hidden_hops_are_bounded() {
        let t = Topology::parse(&TWO.replace("delay = \"100us\"", "hidden_hops = 3"), "t").unwrap();
        assert_eq!(t.links[0].ab.hidden_hops, 3);
        assert_eq!(t.links[0].ba.hidden_hops, 3);
        let (line, msg) = err(&TWO.replace("delay = \"100us\"", "hidden_hops = 40"));
        assert_eq!(line, 10);
        assert!(msg.contains("hidden_hops 40 is outside 0..=16"), "{msg}");
    }

    #[test]
    fn cable_length_gives_propagation_delay() {
        let text = TWO.replace(
            "delay = \"100us\"",
            "length_m = 2500\nvelocity_factor = 0.77",
        );
        let t = Topology::parse(&text, "t").unwrap();
        let us = t.links[0].ab.delay.as_secs_f64() * 1e6;
        // 2500 m of thick coax at 0.77 c: 10.83 us.
        assert!((us - 10.83).abs() < 0.01, "{us}");
    }

    #[test]
    fn unknown_node_names_the_line() {
        let (line, msg) = err(&TWO.replace("b = \"h2\"", "b = \"h3\""));
        assert_eq!(line, 8);
        assert!(
            msg.contains("unknown node 'h3'") && msg.contains("h1, h2"),
            "{msg}"
        );
    }

    #[test]
    fn negative_rate_names_the_line() {
        let (line, msg) = err(&TWO.replace("\"10M\"", "\"-10M\""));
        assert_eq!(line, 9);
        assert!(msg.contains("negative rate"), "{msg}");
        let (_, msg) = err(&TWO.replace("\"10M\"", "-10"));
        assert!(msg.contains("negative rate"), "{msg}");
    }

    #[test]
    fn duplicate_address_names_the_second() {
        let text = format!(
            "{TWO}a_address = \"198.18.9.1/24\"\nb_address = \"198.18.9.2/24\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1M\"\na_address = \"198.18.9.3/24\"\nb_address = \"198.18.9.2/24\"\n"
        );
        let (line, msg) = err(&text);
        assert_eq!(line, 18);
        assert!(msg.contains("duplicate address 198.18.9.2"), "{msg}");
    }

    #[test]
    fn duplicate_node_unknown_key_and_syntax() {
        let (line, msg) = err(&TWO.replace("name = \"h2\"", "name = \"h1\""));
        assert_eq!((line, msg.contains("duplicate node name 'h1'")), (5, true));
        let (line, msg) = err(&TWO.replace("delay", "dealy"));
        assert_eq!(line, 10);
        assert!(msg.contains("dealy"), "{msg}");
        let (line, _) = err("[[host]]\nname = \n");
        assert_eq!(line, 2);
    }

    #[test]
    fn half_duplex_and_mismatch_links_and_segments_parse() {
        let t =
            Topology::parse(&TWO.replace("delay = \"100us\"", "duplex = \"half\""), "t").unwrap();
        assert_eq!(
            (t.links[0].duplex_a, t.links[0].duplex_b),
            (LinkDuplex::Half, LinkDuplex::Half)
        );
        let t = Topology::parse(
            &TWO.replace("delay = \"100us\"", "duplex_a = \"half\""),
            "t",
        )
        .unwrap();
        assert_eq!(
            (t.links[0].duplex_a, t.links[0].duplex_b),
            (LinkDuplex::Half, LinkDuplex::Full)
        );
        assert!(t.links[0].is_shared());
        let hub = "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[host]]\nname = \"c\"\n\
                   [[segment]]\nname = \"hub\"\nstations = [\"a\", \"b\", \"c\"]\nrate = \"10M\"\nlength_m = 50\n";
        let t = Topology::parse(hub, "hub.toml").unwrap();
        assert_eq!(t.segments[0].stations, [0, 1, 2]);
        assert_eq!(t.segments[0].length_m, 50.0);
        let e = Topology::parse(&hub.replace("\"c\"]", "\"d\"]"), "hub.toml").unwrap_err();
        assert!(e.to_string().contains("unknown station 'd'"), "{e}");
        assert!(e.to_string().contains("hub.toml:9:"), "names the line: {e}");
        let e = Topology::parse(&hub.replace("rate = \"10M\"\n", ""), "hub.toml").unwrap_err();
        assert!(e.to_string().contains("no rate"), "{e}");
        let e = Topology::parse(
            &TWO.replace(
                "rate = \"10M\"",
                "rate_ab = \"10M\"\nrate_ba = \"1M\"\nduplex = \"half\"",
            ),
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("one rate"), "{e}");
    }

    #[test]
    fn other_mistakes_are_explained() {
        for (from, to, needle) in [
            (
                "delay = \"100us\"",
                "delay = \"100us\"\nloss = 1.5",
                "probability",
            ),
            ("delay = \"100us\"", "delay = 100", "has no unit"),
            ("delay = \"100us\"", "delay = \"-1ms\"", "negative delay"),
            (
                "delay = \"100us\"",
                "duplex = \"half\"\nloss = 0.01",
                "loss is not available on a half-duplex (CSMA/CD) link",
            ),
            ("delay = \"100us\"", "duplex_a = \"hlaf\"", "'hlaf'"),
            ("delay = \"100us\"", "mtu = 20", "mtu 20"),
            ("delay = \"100us\"", "queue = 0", "queue"),
            ("b = \"h2\"", "b = \"h1\"", "itself"),
            ("rate = \"10M\"", "", "no rate"),
            ("rate = \"10M\"", "rate = \"0M\"", "above zero"),
            (
                "delay = \"100us\"",
                "a_address = \"198.18.1.1/24\"\nb_address = \"198.18.2.1/24\"",
                "same subnet",
            ),
        ] {
            let (_, msg) = err(&TWO.replace(from, to));
            assert!(msg.contains(needle), "{needle}: {msg}");
        }
    }

    #[test]
    fn aqm_keys_parse_with_the_rfc_defaults() {
        let t = Topology::parse(TWO, "t.toml").unwrap();
        assert_eq!(t.links[0].aqm, None, "drop-tail unless asked");
        let t = Topology::parse(&format!("{TWO}aqm = \"none\"\n"), "t.toml").unwrap();
        assert_eq!(t.links[0].aqm, None);
        let t = Topology::parse(&format!("{TWO}aqm = \"codel\"\n"), "t.toml").unwrap();
        assert_eq!(
            t.links[0].aqm,
            Some(AqmConfig {
                kind: AqmKind::Codel,
                target: Duration::from_millis(5),
                interval: Duration::from_millis(100),
                flows: 1024,
                quantum: 1514,
                perturbation: None,
            })
        );
        let text = format!(
            "{TWO}aqm = \"fq_codel\"\naqm_target = \"10ms\"\naqm_interval = \"200ms\"\nfq_flows = 64\nfq_quantum = 300\nqueue = 1000\nfq_perturbation = 12345\n"
        );
        let a = Topology::parse(&text, "t.toml").unwrap().links[0]
            .aqm
            .unwrap();
        assert_eq!(a.kind, AqmKind::FqCodel);
        assert_eq!(a.perturbation, Some(12345), "set for a reproducible run");
        assert_eq!(
            (a.target, a.interval, a.flows, a.quantum),
            (
                Duration::from_millis(10),
                Duration::from_millis(200),
                64,
                300
            )
        );
    }

    #[test]
    fn bad_aqm_values_name_the_key_value_range_and_an_example() {
        for (extra, line, needles) in [
            (
                "aqm = \"red\"",
                11,
                &[
                    "aqm \"red\"",
                    "\"codel\", \"fq_codel\" or \"none\"",
                    "e.g. aqm = \"fq_codel\"",
                ][..],
            ),
            (
                "aqm = \"codel\"\naqm_target = \"0ms\"",
                12,
                &[
                    "aqm_target = \"0ms\"",
                    "100us..=1s",
                    "e.g. aqm_target = \"5ms\"",
                ],
            ),
            (
                "aqm = \"codel\"\naqm_target = 5",
                12,
                &["aqm_target = 5", "100us..=1s", "e.g. aqm_target = \"5ms\""],
            ),
            (
                "aqm = \"codel\"\naqm_interval = \"forever\"",
                12,
                &[
                    "aqm_interval = \"forever\"",
                    "1ms..=10s",
                    "e.g. aqm_interval = \"100ms\"",
                ],
            ),
            (
                "aqm = \"codel\"\naqm_target = \"200ms\"",
                12,
                &["aqm_target 200ms must be below aqm_interval 100ms", "e.g."],
            ),
            (
                "aqm = \"fq_codel\"\nfq_flows = 0",
                12,
                &["fq_flows = 0", "1..=65536", "e.g. fq_flows = 1024"],
            ),
            (
                "aqm = \"fq_codel\"\nfq_quantum = \"1514\"",
                12,
                &[
                    "fq_quantum = \"1514\"",
                    "256..=65536",
                    "e.g. fq_quantum = 1514",
                ],
            ),
            (
                "aqm = \"codel\"\nfq_flows = 16",
                12,
                &["fq_flows = 16 tunes aqm = \"fq_codel\""],
            ),
            (
                "aqm_target = \"5ms\"",
                11,
                &["aqm_target = \"5ms\" tunes aqm = \"codel\" or aqm = \"fq_codel\""],
            ),
            (
                "duplex = \"half\"\naqm = \"codel\"",
                11,
                &["aqm is not available on a half-duplex (CSMA/CD) link"],
            ),
        ] {
            let (at, msg) = err(&format!("{TWO}{extra}\n"));
            assert!(!msg.contains('\n'), "{msg}");
            assert_eq!(at, line, "{extra}: {msg}");
            for needle in needles {
                assert!(msg.contains(needle), "{needle}: {msg}");
            }
        }
    }

    #[test]
    fn lab_names_are_identifiers_and_never_empty_or_paths() {
        for bad in [
            "",
            "-x",
            "x-",
            "../../tmp/x",
            "/tmp/x",
            "A",
            "a b",
            "abcdefghijklmnopq",
        ] {
            let (line, msg) = err(&format!("name = \"{bad}\"\n{TWO}"));
            assert_eq!(line, 1, "{bad:?}: {msg}");
            assert!(msg.contains("lab name"), "{bad:?}: {msg}");
        }
        for good in ["x", "two-host", "0day", "abcdefghijklmnop"] {
            let t = Topology::parse(&format!("name = \"{good}\"\n{TWO}"), "t").unwrap();
            assert_eq!(t.name.as_deref(), Some(good));
        }
    }

    #[test]
    fn delays_and_router_costs_outside_their_ranges_are_refused_at_their_line() {
        for (delay, needle) in [
            ("\"100000000s\"", "above the 10 s"),
            ("\"60s\"", "above the 10 s"),
            ("\"1000s\"", "above the 10 s"),
        ] {
            let (line, msg) = err(&TWO.replace("\"100us\"", delay));
            assert_eq!(line, 10, "{msg}");
            assert!(msg.contains(needle), "{msg}");
        }
        let (line, msg) = err(&TWO.replace(
            "delay = \"100us\"",
            "length_m = 1000\nvelocity_factor = 1e-300",
        ));
        assert_eq!(line, 11, "{msg}");
        assert!(msg.contains("above the 10 s"), "{msg}");
        assert!(
            Topology::parse(
                &TWO.replace("\"100us\"", "\"10s\"")
                    .replace("\"10M\"", "\"1M\""),
                "t"
            )
            .is_ok()
        );
        let router = "[[host]]\nname = \"h1\"\n[[router]]\nname = \"r1\"\nforward = { fixed = \"10s\" }\n[[link]]\na = \"h1\"\nb = \"r1\"\nrate = \"10M\"\n";
        let (line, msg) = err(router);
        assert_eq!(line, 5, "{msg}");
        assert!(msg.contains("forward cost of router 'r1'"), "{msg}");
        let (line, msg) = err(&router.replace(
            "forward = { fixed = \"10s\" }",
            "answer = { per_byte = \"2ms\" }",
        ));
        assert_eq!(line, 5, "{msg}");
        assert!(msg.contains("answer cost of router 'r1'"), "{msg}");
    }

    #[test]
    fn a_rate_beside_per_direction_rates_and_a_velocity_factor_without_length_are_refused() {
        // rate and rate_ab together: one would be silently ignored for that direction.
        for extra in ["rate_ab = \"1M\"", "rate_ba = \"56k\""] {
            let (line, msg) = err(&format!("{TWO}{extra}\n"));
            assert_eq!(line, 9, "{msg}");
            assert!(msg.contains("not both"), "{msg}");
            assert_eq!(msg.lines().count(), 1, "{msg}");
        }
        // velocity_factor alone changes nothing: with a delay, and without one.
        let (line, msg) = err(&format!("{TWO}velocity_factor = 0.66\n"));
        assert_eq!(line, 11, "{msg}");
        assert!(msg.contains("velocity_factor needs length_m"), "{msg}");
        let (line, msg) = err(&TWO.replace("delay = \"100us\"", "velocity_factor = 0.66"));
        assert_eq!(line, 10, "{msg}");
        assert!(msg.contains("add length_m"), "{msg}");
        assert!(
            Topology::parse(
                &TWO.replace(
                    "delay = \"100us\"",
                    "length_m = 100\nvelocity_factor = 0.66"
                ),
                "t"
            )
            .is_ok()
        );
    }

    #[test]
    fn frames_in_flight_are_bounded_by_the_memory_budget() {
        // 1 Gbit/s for 5 s: 7.4 million minimum frames in flight, far above the budget.
        let (line, msg) = err(&TWO
            .replace("\"10M\"", "\"1G\"")
            .replace("\"100us\"", "\"5s\""));
        assert_eq!(line, 6, "{msg}");
        assert!(msg.contains("above the lab's budget of 256 MiB"), "{msg}");
        // A 10 Mbit/s, 1 s satellite-like hop fits: 14,881 minimum frames each way.
        let t = Topology::parse(&TWO.replace("\"100us\"", "\"1s\""), "t").unwrap();
        let l = &t.links[0];
        assert_eq!(l.in_flight_frames(&l.ab), 100 + 2 + 14_881);
        assert!(l.in_flight_bytes() < FLIGHT_BUDGET_BYTES);
        // The bound grows with the delay and the queue, never shrinks.
        let long = Topology::parse(&TWO.replace("\"100us\"", "\"2s\""), "t").unwrap();
        assert!(long.links[0].in_flight_frames(&long.links[0].ab) > l.in_flight_frames(&l.ab));
        // Many links each under the budget are refused together, at the one that goes over.
        let mut text = TWO
            .replace("\"10M\"", "\"20M\"")
            .replace("\"100us\"", "\"1s\"");
        for _ in 0..4 {
            text.push_str("[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"20M\"\ndelay = \"1s\"\n");
        }
        let (line, msg) = err(&text);
        assert!(line > 6, "{line}: {msg}");
        assert!(msg.contains("with the links before it"), "{msg}");
        for lab in ["two-host-10m", "boggs-24", "shared-24", "seed-001-path"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../labs/{lab}.toml"));
            Topology::load(&path).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn router_costs_parse() {
        let text = r#"
[[host]]
name = "h1"
[[router]]
name = "r1"
icmp_ratelimit = false
forward = { fixed = "525us", per_byte = "40ns" }
answer = { fixed = "0.751ms", per_byte = "1310ns" }
[[link]]
a = "h1"
b = "r1"
rate = "10M"
"#;
        let t = Topology::parse(text, "t").unwrap();
        let NodeKind::Router(r) = &t.nodes[1].kind else {
            panic!()
        };
        assert!(!r.icmp_ratelimit);
        assert_eq!(r.forward.of(1000), Duration::from_micros(525 + 40));
        assert_eq!(r.answer.of(0), Duration::from_micros(751));
    }

    #[test]
    fn host_costs_and_tcp_profile_parse() {
        let text = TWO.replace(
            "name = \"h1\"\n",
            "name = \"h1\"\ntransmit = { fixed = \"100us\", per_byte = \"784ns\" }\nreceive = { per_byte = \"784ns\" }\ntcp_profile = \"1990s\"\ntcp = { tcp_sack = 1, tcp_congestion_control = \"cubic\" }\n",
        );
        let t = Topology::parse(&text, "t").unwrap();
        let NodeKind::Host(h) = &t.nodes[0].kind else {
            panic!()
        };
        assert!(h.has_costs());
        assert_eq!(
            h.transmit.of(1500),
            Duration::from_nanos(100_000 + 1500 * 784)
        );
        assert_eq!(h.receive.of(40), Duration::from_nanos(40 * 784));
        assert_eq!(h.tcp_profile.as_deref(), Some("1990s"));
        let get = |k: &str| h.tcp.iter().find(|s| s.key == k).map(|s| s.value.as_str());
        // The file's own table overrides the preset; the rest of the preset stays.
        assert_eq!(get("tcp_sack"), Some("1"));
        assert_eq!(get("tcp_congestion_control"), Some("cubic"));
        assert_eq!(get("tcp_timestamps"), Some("0"));
        assert_eq!(get("tcp_recovery"), Some("0"));
        assert_eq!(h.tcp.len(), TCP_PRESET_1990S.len());
        let NodeKind::Host(plain) = &t.nodes[1].kind else {
            panic!()
        };
        assert!(!plain.has_costs() && plain.tcp.is_empty());
    }

    #[test]
    fn bad_host_settings_name_their_line() {
        let with =
            |extra: &str| TWO.replace("name = \"h2\"\n", &format!("name = \"h2\"\n{extra}\n"));
        for (extra, needle) in [
            ("transmit = { fixed = \"-1ms\" }", "negative fixed cost"),
            ("receive = { per_byte = 784 }", "has no unit"),
            ("receive = { per_byte = \"2ms\" }", "check the unit"),
            ("transmit = { fixed = \"5s\" }", "check the unit"),
            ("transmit = { fixed = \"1ms\", percpu = \"1ms\" }", "percpu"),
            (
                "tcp_profile = \"1980s\"",
                "unknown tcp_profile '1980s': use one of 1990s",
            ),
            (
                "tcp = { tcp_sack = 2 }",
                "tcp_sack = 2 must be a whole number in 0..=1",
            ),
            ("tcp = { tcp_sack = \"off\" }", "must be a whole number"),
            (
                "tcp = { ip_forward = 1 }",
                "unknown TCP setting 'ip_forward'",
            ),
            (
                "tcp = { tcp_congestion_control = \"../x\" }",
                "must name an algorithm",
            ),
            (
                "tcp = { tcp_congestion_control = 3 }",
                "must name an algorithm",
            ),
        ] {
            let (line, msg) = err(&with(extra));
            assert_eq!(line, 6, "{extra}: {msg}");
            assert!(msg.contains(needle), "{extra}: {msg}");
        }
        // A router has no host model: the key is unknown there.
        let text = "[[host]]\nname = \"h1\"\n[[router]]\nname = \"r1\"\ntcp_profile = \"1990s\"\n[[link]]\na = \"h1\"\nb = \"r1\"\nrate = \"10M\"\n";
        let (line, msg) = err(text);
        assert_eq!(line, 5, "{msg}");
        assert!(msg.contains("tcp_profile"), "{msg}");
    }

    #[test]
    fn every_shipped_lab_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                Topology::load(&path).unwrap_or_else(|e| panic!("{e}"));
                checked += 1;
            }
        }
        assert!(checked >= 3, "{checked} labs in {}", dir.display());
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_accepted_or_rejected_with_a_line_in_the_file(text in "[\\[\\]a-z0-9=\" .\n-]{0,200}") {
            match Topology::parse(&text, "t") {
                Ok(_) => {}
                Err(TopologyError::Invalid { line, .. }) => {
                    proptest::prop_assert!(line >= 1 && line <= text.lines().count() + 1);
                }
                Err(other) => proptest::prop_assert!(false, "{other}"),
            }
        }

        #[test]
        fn mutated_good_files_never_panic(cut in 0usize..120, insert in "[a-z0-9=\" \n-]{0,8}") {
            let mut text = TWO.to_string();
            let at = text.char_indices().nth(cut.min(TWO.len() - 1)).map_or(0, |(i, _)| i);
            text.insert_str(at, &insert);
            let _ = Topology::parse(&text, "t");
        }
    }
}
