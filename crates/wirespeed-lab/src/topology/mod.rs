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

use std::path::Path;
use std::time::Duration;

use wirespeed_model::{BitRate, LinkLayer};

use crate::addressing::Ipv4Net;

mod check;
mod notes;

use check::{Ctx, RawTopology};
pub use notes::{SLOT_BITS, TopologyNote};

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

/// Most stations a segment's /24 can number.
pub const MAX_STATIONS: usize = 253;

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
