//! Van Jacobson's socket-buffer experiment (seed 004), as arithmetic: the grid of send x
//! receive buffer sizes, the randomised run order, and the analysis of the finished runs.
//!
//! The seed varied each buffer "from 1 to 17 packets in 1 packet steps", ran "four tests ... at
//! each of the 289 combinations ... in random order to prevent any effects from fixed patterns
//! of resource allocation", and tabulated the diagonal (send = receive buffer) as task-to-task
//! KB/s and on-the-wire Mb/s against a 1,104 KB/s theoretical maximum. This module plans such a
//! sweep from a seed (so `--seed` replays the order), and turns finished runs into that table,
//! the full matrix, and the verdicts the seed draws by eye: where the curve reaches its plateau,
//! what limits the plateau, notches (the Intel 82586's dip at 3 packets) and pathological cells.
//! Running a point is the network crate's job; nothing here does I/O.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

pub use crate::stats::median;
use crate::units::{ByteSize, ParseUnitError};

/// One value on a buffer axis: whole packets (multiples of the path MSS, as in the seed) or
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferSize {
    /// This many maximum-size segments.
    Packets(u64),
    /// This many bytes.
    Bytes(u64),
}

impl BufferSize {
    /// The size in bytes for a path whose MSS is `mss`.
    pub fn bytes(self, mss: u64) -> u64 {
        match self {
            BufferSize::Packets(n) => n * mss,
            BufferSize::Bytes(b) => b,
        }
    }
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Packets(n) => write!(f, "{n}p"),
            BufferSize::Bytes(b) => write!(
                f,
                "{}",
                ByteSize::from_bytes(*b).to_string().replace(' ', "")
            ),
        }
    }
}

/// The values of one axis of the grid, in the order given.
///
/// Syntax: a comma-separated list of items; an item is a single value, an inclusive range
/// `A..B` or `A-B` (step 1 packet, or `A..B:S` with step S, B itself included), or a geometric
/// range `A..B:xK` (each value K times the previous). A number without a unit is a count of packets (`1..17`, `3p`), one
/// with a byte unit is bytes (`16KiB`, `4KiB..1MiB:x2`, `1500B`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Axis(pub Vec<BufferSize>);

/// The most points one axis may have: 17 x 17 x 4 runs already took the seed's machines hours.
pub const MAX_AXIS_POINTS: usize = 1024;

impl FromStr for Axis {
    type Err = ParseUnitError;

    fn from_str(text: &str) -> Result<Axis, ParseUnitError> {
        let error = || ParseUnitError {
            input: text.to_string(),
            what: "buffer axis",
            expected: "packets (a number, or N p) or bytes (with a unit), as a list, a range \
                       A..B[:STEP] or a geometric range A..B:xK",
            example: "1..17, 1,2,4,8, 16KiB..1MiB:x2, 16KiB,256KiB",
            largest: None,
            least: None,
            negative: false,
        };
        let mut values = Vec::new();
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(error());
            }
            // The same range forms as every other list of numbers (`A..B`, `A-B`, `:S`), so
            // that `1-4` means one thing in `sweep` and in `sim csma --hosts`.
            let (range, step) = match item.split_once(':') {
                Some((range, step)) => (range, Some(step)),
                None => (item, None),
            };
            match range.split_once("..").or_else(|| range.split_once('-')) {
                None if step.is_none() => values.push(parse_value(item).ok_or_else(error)?),
                None => return Err(error()),
                Some((from, to)) => {
                    let from = parse_value(from.trim()).ok_or_else(error)?;
                    let to = parse_value(to.trim()).ok_or_else(error)?;
                    expand_range(from, to, step, &mut values).ok_or_else(error)?;
                }
            }
            if values.len() > MAX_AXIS_POINTS {
                return Err(error());
            }
        }
        Ok(Axis(values))
    }
}

fn parse_value(text: &str) -> Option<BufferSize> {
    let packets = text.strip_suffix('p').unwrap_or(text);
    if !packets.is_empty() && packets.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = packets.parse().ok()?;
        return (n > 0).then_some(BufferSize::Packets(n));
    }
    let bytes = text.parse::<ByteSize>().ok()?.bytes();
    (bytes > 0).then_some(BufferSize::Bytes(bytes))
}

fn expand_range(
    from: BufferSize,
    to: BufferSize,
    step: Option<&str>,
    out: &mut Vec<BufferSize>,
) -> Option<()> {
    let (lo, hi, make): (u64, u64, fn(u64) -> BufferSize) = match (from, to) {
        (BufferSize::Packets(a), BufferSize::Packets(b)) => (a, b, BufferSize::Packets),
        (BufferSize::Bytes(a), BufferSize::Bytes(b)) => (a, b, BufferSize::Bytes),
        _ => return None,
    };
    if lo > hi {
        return None;
    }
    let mut value = lo;
    match step.map(str::trim) {
        Some(factor) if factor.starts_with('x') => {
            let k: u64 = factor[1..].parse().ok().filter(|&k| k >= 2)?;
            while value <= hi {
                out.push(make(value));
                if out.len() > MAX_AXIS_POINTS {
                    return None;
                }
                value = value.checked_mul(k)?;
            }
        }
        step => {
            let step = match (step, from) {
                (None, BufferSize::Packets(_)) => 1,
                (None, BufferSize::Bytes(_)) => return None,
                (Some(s), BufferSize::Packets(_)) => s.parse().ok().filter(|&s: &u64| s > 0)?,
                (Some(s), BufferSize::Bytes(_)) => s.parse::<ByteSize>().ok()?.bytes(),
            };
            if step == 0 || (hi - lo) / step >= MAX_AXIS_POINTS as u64 {
                return None;
            }
            while value <= hi {
                out.push(make(value));
                value += step;
            }
            // As in every list of numbers: the range's end is on the axis even off the step.
            if (hi - lo) % step != 0 {
                out.push(make(hi));
            }
        }
    }
    Some(())
}

/// One run to do: a grid cell and a repetition number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Index into the send-buffer axis.
    pub snd_index: usize,
    /// Index into the receive-buffer axis.
    pub rcv_index: usize,
    /// Repetition, from 0.
    pub rep: u32,
}

/// Every (send, receive, repetition) exactly once, in an order fixed by `seed`.
pub fn plan(snd_points: usize, rcv_points: usize, reps: u32, seed: u64) -> Vec<PlannedRun> {
    let mut runs: Vec<PlannedRun> = (0..snd_points)
        .flat_map(|s| {
            (0..rcv_points).flat_map(move |r| {
                (0..reps).map(move |rep| PlannedRun {
                    snd_index: s,
                    rcv_index: r,
                    rep,
                })
            })
        })
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    runs.shuffle(&mut rng);
    runs
}

/// The planned runs not yet in `done`, in plan order: what `--resume` still has to do.
pub fn remaining(plan: &[PlannedRun], done: &[RunRecord]) -> Vec<PlannedRun> {
    let finished: HashSet<PlannedRun> = done.iter().map(RunRecord::planned).collect();
    plan.iter()
        .copied()
        .filter(|run| !finished.contains(run))
        .collect()
}

/// How much each run carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Transfer {
    /// This many payload bytes.
    Bytes(u64),
    /// For this many seconds.
    Seconds(f64),
}

/// What a run costs beyond its transfer on a path of no delay (connections, buffers, the
/// agent's report, both processes' bookkeeping); measured around 0.1-0.3 s on a busy 2-core
/// host, so the larger figure.
pub const RUN_SETUP_SECONDS: f64 = 0.3;

/// Round trips a run spends outside its transfer: the control connection and its greeting,
/// the test's parameters, the data connection, the agent's report, and the first windows of
/// slow start.
pub const RUN_ROUND_TRIPS: f64 = 6.0;

/// An estimate of a plan's duration, made before its first run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanEstimate {
    /// Seconds for every run of the plan.
    pub seconds: f64,
    /// Runs it counts.
    pub runs: usize,
    /// The longest single run, seconds.
    pub longest_run_seconds: f64,
    /// The round trip each window waits for, seconds.
    pub round_trip_seconds: f64,
    /// The rate no run may exceed, bytes/s (`None`: not known, window / RTT alone).
    pub cap_bytes_per_second: Option<f64>,
}

/// The time a plan of `reps` runs at every (send, receive) point should take on a path whose
/// full segment round trip is `round_trip_seconds` and whose rate is at most `cap` bytes/s:
/// each run is window-bound (the smaller buffer asked for as its window: Linux's window is
/// at least that, so the estimate errs long) until the cap. The seed's 17 x 17 x 4 runs of
/// 8 MB were hours on its Ethernet; on a T1 they are most of a day (issue 31: 18.6 h), which
/// is worth saying before the first run rather than after.
pub fn estimate(
    snd: &Axis,
    rcv: &Axis,
    reps: u32,
    mss: u64,
    transfer: Transfer,
    round_trip_seconds: f64,
    cap: Option<f64>,
) -> PlanEstimate {
    let rtt = if round_trip_seconds.is_finite() && round_trip_seconds > 0.0 {
        round_trip_seconds
    } else {
        0.0
    };
    let cap = cap.filter(|c| c.is_finite() && *c > 0.0);
    let mut total = 0.0;
    let mut longest: f64 = 0.0;
    for s in &snd.0 {
        for r in &rcv.0 {
            let window = s.bytes(mss).min(r.bytes(mss)).max(1) as f64;
            let rate = match (rtt > 0.0, cap) {
                (true, Some(c)) => (window / rtt).min(c),
                (true, None) => window / rtt,
                (false, Some(c)) => c,
                (false, None) => f64::INFINITY,
            };
            let moving = match transfer {
                Transfer::Bytes(b) => b as f64 / rate,
                Transfer::Seconds(t) => t.max(0.0),
            };
            let run = moving + RUN_SETUP_SECONDS + RUN_ROUND_TRIPS * rtt;
            longest = longest.max(run);
            total += run * f64::from(reps);
        }
    }
    PlanEstimate {
        seconds: total,
        runs: snd.0.len() * rcv.0.len() * reps as usize,
        longest_run_seconds: longest,
        round_trip_seconds: rtt,
        cap_bytes_per_second: cap,
    }
}

/// What the kernel's TCP_INFO showed at the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelView {
    /// Smoothed RTT, microseconds.
    pub rtt_us: u32,
    /// Lowest RTT seen, microseconds (0 if the kernel did not say).
    pub min_rtt_us: u32,
    /// Congestion window, segments.
    pub snd_cwnd_segments: u32,
    /// Segments retransmitted over the connection.
    pub total_retransmits: u32,
    /// The peer's advertised receive window as the sender last saw it, bytes (0 if unknown).
    pub snd_window_bytes: u32,
    /// Sender MSS, bytes.
    pub snd_mss_bytes: u32,
    /// How long the sender's socket stood empty over its run, seconds: the sender's own time
    /// less the kernel's `tcpi_busy_time` (data in flight or queued; Linux 4.10+), so the time
    /// TCP waited for the sending application to write. Absent when the kernel does not report
    /// it, and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_seconds: Option<f64>,
}

/// One finished run, as appended to the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Index into the send-buffer axis.
    pub snd_index: usize,
    /// Index into the receive-buffer axis.
    pub rcv_index: usize,
    /// Repetition.
    pub rep: u32,
    /// SO_SNDBUF asked for, bytes.
    pub snd_requested_bytes: u64,
    /// SO_RCVBUF asked for, bytes.
    pub rcv_requested_bytes: u64,
    /// SO_SNDBUF the kernel reported back (doubled, clamped).
    pub snd_granted_bytes: u64,
    /// SO_RCVBUF the kernel reported back at the receiver.
    pub rcv_granted_bytes: u64,
    /// Payload bytes that arrived.
    pub bytes: u64,
    /// Seconds from the first write to the last byte read.
    pub seconds: f64,
    /// The sender's TCP_INFO at the end.
    pub kernel: Option<KernelView>,
    /// Longest single write() call, seconds: a stalled writer shows here.
    pub max_write_seconds: f64,
    /// Sender CPU use, percent of one core.
    pub sender_cpu_percent: f64,
    /// Receiver CPU use, percent of one core.
    pub receiver_cpu_percent: f64,
}

impl RunRecord {
    /// Payload bytes per second.
    pub fn bytes_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds
        } else {
            0.0
        }
    }

    fn planned(&self) -> PlannedRun {
        PlannedRun {
            snd_index: self.snd_index,
            rcv_index: self.rcv_index,
            rep: self.rep,
        }
    }
}

/// What the analysis needs to know about the path beyond the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathFacts {
    /// Payload bytes/s of the path's ceiling, when it is known (a link rate given, or the
    /// bottleneck of a lab's configured route).
    pub ceiling_bytes_per_second: Option<f64>,
    /// Wire bytes per payload byte on the modelled link (cycle wire / cycle payload).
    pub wire_bytes_per_payload_byte: f64,
    /// The round trip of a full segment and its ACK over the empty path, seconds, when the
    /// path itself is known (a lab's configured route).
    #[serde(default)]
    pub segment_round_trip_seconds: Option<f64>,
    /// How much longer a full segment's frame takes to serialize than a SYN's at the path's
    /// rate, seconds, when only the rate is known (`--link-rate`): added to the lowest round
    /// trip a kernel saw, which is a small packet's.
    #[serde(default)]
    pub segment_serialization_seconds: Option<f64>,
}

impl Default for PathFacts {
    /// Nothing known beyond the runs: no ceiling, no wire, no path.
    fn default() -> Self {
        PathFacts {
            ceiling_bytes_per_second: None,
            wire_bytes_per_payload_byte: 1.0,
            segment_round_trip_seconds: None,
            segment_serialization_seconds: None,
        }
    }
}

/// Where the round trip a window waits for comes from.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RoundTripBasis {
    /// Computed from the configured path (a lab's route), or the lowest round trip the kernel
    /// saw where that was longer.
    Path,
    /// The lowest round trip the kernel saw (a small packet's) plus a full segment's longer
    /// serialization at the given rate.
    LowestSeenPlusSegment {
        /// What the serialization added, seconds.
        segment_seconds: f64,
    },
    /// The lowest round trip the kernel saw: a small packet's, short of a full segment's by
    /// its serialization, which no known rate could say.
    #[default]
    LowestSeen,
}

/// The round trip of a full segment and its ACK, the one a window of full segments waits for
/// (issue 31: dividing by a small packet's round trip over-predicted window / RTT by 40-85% on
/// a 1.544 Mbit/s path).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SegmentRoundTrip {
    /// Seconds.
    pub seconds: f64,
    /// The lowest round trip any run's kernel saw, seconds, when one did.
    pub lowest_seen_seconds: Option<f64>,
    /// Where `seconds` comes from.
    pub basis: RoundTripBasis,
}

/// The round trip of a full segment for these runs on this path: the configured path's when
/// known (never below what a kernel saw), else the lowest seen plus a full segment's
/// serialization at the known rate, else the lowest seen.
pub fn segment_round_trip(runs: &[RunRecord], path: PathFacts) -> Option<SegmentRoundTrip> {
    let lowest = lowest_rtt_us(runs.iter()).map(|us| f64::from(us) * 1e-6);
    segment_round_trip_from(lowest, path)
}

/// [`segment_round_trip`] from the lowest round trip seen (`None`: no kernel said), as the plan
/// estimate needs before any run of the grid.
pub fn segment_round_trip_from(lowest: Option<f64>, path: PathFacts) -> Option<SegmentRoundTrip> {
    let lowest = lowest.filter(|s| s.is_finite() && *s > 0.0);
    if let Some(configured) = path
        .segment_round_trip_seconds
        .filter(|s| s.is_finite() && *s > 0.0)
    {
        return Some(SegmentRoundTrip {
            seconds: lowest.map_or(configured, |l| l.max(configured)),
            lowest_seen_seconds: lowest,
            basis: RoundTripBasis::Path,
        });
    }
    let seen = lowest?;
    Some(
        match path
            .segment_serialization_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
        {
            Some(extra) => SegmentRoundTrip {
                seconds: seen + extra,
                lowest_seen_seconds: Some(seen),
                basis: RoundTripBasis::LowestSeenPlusSegment {
                    segment_seconds: extra,
                },
            },
            None => SegmentRoundTrip {
                seconds: seen,
                lowest_seen_seconds: Some(seen),
                basis: RoundTripBasis::LowestSeen,
            },
        },
    )
}

/// A cell of the matrix: the runs of one (send, receive) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Index into the send-buffer axis.
    pub snd_index: usize,
    /// Index into the receive-buffer axis.
    pub rcv_index: usize,
    /// Runs finished.
    pub runs: usize,
    /// Median payload rate over the repetitions, bytes/s.
    pub median_bytes_per_second: f64,
    /// Lowest.
    pub min_bytes_per_second: f64,
    /// Highest.
    pub max_bytes_per_second: f64,
    /// Median as a percentage of the envelope ceiling.
    pub percent_of_ceiling: Option<f64>,
    /// Window / RTT: what the granted buffers allow at the measured minimum RTT, capped by the
    /// ceiling (bytes/s).
    pub predicted_bytes_per_second: Option<f64>,
    /// Median SO_SNDBUF granted.
    pub snd_granted_bytes: u64,
    /// Median SO_RCVBUF granted.
    pub rcv_granted_bytes: u64,
    /// The largest receive window the sender saw in TCP_INFO, bytes (`None`: not reported).
    #[serde(default)]
    pub window_bytes: Option<u64>,
}

/// A row of the seed's table: the diagonal, send = receive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagonalRow {
    /// The buffer size (both ends).
    pub buffer: BufferSize,
    /// Task-to-task rate in KiB/s (the seed's KB/s: 1024 bytes).
    pub task_to_task_kib_per_second: f64,
    /// The same rate on the wire, Mbit/s, after the link's framing and ACK overheads.
    pub wire_mbit_per_second: f64,
    /// Percentage of the ceiling.
    pub percent_of_ceiling: Option<f64>,
}

/// What holds the plateau down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlateauLimit {
    /// Within 10% of the envelope ceiling: the link.
    Link,
    /// An end spent 90% or more of a core.
    Cpu,
    /// Neither: the path, the peer, or the stack.
    Other,
    /// No ceiling given and no CPU saturation: cannot tell.
    Unknown,
}

/// A cell that falls far below its neighbours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    /// Index into the send-buffer axis.
    pub snd_index: usize,
    /// Index into the receive-buffer axis.
    pub rcv_index: usize,
    /// Its median rate, bytes/s.
    pub bytes_per_second: f64,
    /// What its neighbours suggest, bytes/s.
    pub expected_bytes_per_second: f64,
    /// Why, in the kernel's words.
    pub explanation: String,
}

/// Everything the sweep concludes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepAnalysis {
    /// Every cell with at least one run, send-major.
    pub cells: Vec<Cell>,
    /// The seed's table.
    pub diagonal: Vec<DiagonalRow>,
    /// The best diagonal median, bytes/s (the best cell's when the axes share no size).
    pub plateau_bytes_per_second: Option<f64>,
    /// The first diagonal buffer at which the rate reaches 90% of the plateau.
    pub reaches_90_percent_at: Option<BufferSize>,
    /// What limits the plateau.
    pub limit: PlateauLimit,
    /// Diagonal points well below the line through their neighbours (the seed's 3-packet notch).
    pub notches: Vec<Anomaly>,
    /// Matrix cells far below their best neighbour (a collapse, not a dip).
    pub pathological: Vec<Anomaly>,
    /// The path's bandwidth-delay product, the size the knee should be read against.
    #[serde(default)]
    pub bdp: Option<Bdp>,
    /// The round trip window / RTT divides by.
    #[serde(default)]
    pub round_trip: Option<SegmentRoundTrip>,
    /// The window the sender saw per byte of receive buffer asked for (median over the cells
    /// whose kernel reported one): what a buffer of N packets on the axis is as a window
    /// (issue 31: 1.41 N packets, unsaid).
    #[serde(default)]
    pub window_per_buffer_byte: Option<f64>,
}

/// The path's bandwidth-delay product: the window that keeps the path full. Below it the
/// window, not the path, sets the rate (window / RTT), so the diagonal's knee should sit near
/// one BDP of window (Linux uses about half of a granted buffer for payload).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bdp {
    /// Bytes.
    pub bytes: f64,
    /// The rate it is computed at, bytes/s.
    pub rate_bytes_per_second: f64,
    /// True when that rate is the envelope ceiling; false when it is the measured plateau.
    pub rate_is_ceiling: bool,
    /// The round trip of a full segment and its ACK (see `basis`), seconds.
    pub rtt_seconds: f64,
    /// Where that round trip comes from.
    #[serde(default)]
    pub basis: RoundTripBasis,
}

/// The lowest RTT the runs' kernels saw, µs: TCP_INFO's min RTT where it has one, else its
/// smoothed RTT.
fn lowest_rtt_us<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Option<u32> {
    runs.filter_map(|r| r.kernel)
        .map(|k| {
            if k.min_rtt_us > 0 {
                k.min_rtt_us
            } else {
                k.rtt_us
            }
        })
        .filter(|&rtt| rtt > 0)
        .min()
}

/// The BDP at the ceiling (else at the plateau) over a full segment's round trip.
fn bdp(round_trip: Option<SegmentRoundTrip>, plateau: Option<f64>, path: PathFacts) -> Option<Bdp> {
    let rtt = round_trip?;
    let (rate, rate_is_ceiling) = match path.ceiling_bytes_per_second {
        Some(c) if c > 0.0 => (c, true),
        _ => (plateau.filter(|&p| p > 0.0)?, false),
    };
    Some(Bdp {
        bytes: rate * rtt.seconds,
        rate_bytes_per_second: rate,
        rate_is_ceiling,
        rtt_seconds: rtt.seconds,
        basis: rtt.basis,
    })
}

/// A notch is a diagonal point this far below the straight line through its neighbours.
pub const NOTCH_FRACTION: f64 = 0.05;
/// Linux's minimum retransmission timeout (`TCP_RTO_MIN`; RFC 6298 allows 1 s).
pub const LINUX_MIN_RTO_SECONDS: f64 = 0.2;
/// A pathological cell delivers less than this fraction of its best neighbour.
pub const PATHOLOGICAL_FRACTION: f64 = 0.25;

fn median_u64(values: impl Iterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Analyses finished runs of a grid with the given axes.
pub fn analyse(
    snd: &Axis,
    rcv: &Axis,
    mss: u64,
    runs: &[RunRecord],
    path: PathFacts,
) -> SweepAnalysis {
    let round_trip = segment_round_trip(runs, path);
    let mut cells = Vec::new();
    for s in 0..snd.0.len() {
        for r in 0..rcv.0.len() {
            let here: Vec<&RunRecord> = runs
                .iter()
                .filter(|x| x.snd_index == s && x.rcv_index == r)
                .collect();
            if here.is_empty() {
                continue;
            }
            let rates: Vec<f64> = here.iter().map(|x| x.bytes_per_second()).collect();
            let median_rate = median(&rates);
            let snd_granted = median_u64(here.iter().map(|x| x.snd_granted_bytes));
            let rcv_granted = median_u64(here.iter().map(|x| x.rcv_granted_bytes));
            cells.push(Cell {
                snd_index: s,
                rcv_index: r,
                runs: here.len(),
                median_bytes_per_second: median_rate,
                min_bytes_per_second: rates.iter().copied().fold(f64::INFINITY, f64::min),
                max_bytes_per_second: rates.iter().copied().fold(0.0, f64::max),
                percent_of_ceiling: path
                    .ceiling_bytes_per_second
                    .map(|c| 100.0 * median_rate / c),
                predicted_bytes_per_second: round_trip
                    .and_then(|rtt| predict(&here, snd_granted, rcv_granted, rtt.seconds, path)),
                snd_granted_bytes: snd_granted,
                rcv_granted_bytes: rcv_granted,
                window_bytes: here
                    .iter()
                    .filter_map(|r| r.kernel)
                    .map(|k| u64::from(k.snd_window_bytes))
                    .filter(|&w| w > 0)
                    .max(),
            });
        }
    }
    let cell_at = |s: usize, r: usize| cells.iter().find(|c| c.snd_index == s && c.rcv_index == r);

    // The diagonal: cells whose two buffers are the same size.
    let mut diagonal_cells = Vec::new();
    for (s, snd_value) in snd.0.iter().enumerate() {
        let snd_bytes = snd_value.bytes(mss);
        if let Some(r) = rcv.0.iter().position(|v| v.bytes(mss) == snd_bytes)
            && let Some(cell) = cell_at(s, r)
        {
            diagonal_cells.push((*snd_value, cell));
        }
    }
    let diagonal: Vec<DiagonalRow> = diagonal_cells
        .iter()
        .map(|(buffer, cell)| DiagonalRow {
            buffer: *buffer,
            task_to_task_kib_per_second: cell.median_bytes_per_second / 1024.0,
            wire_mbit_per_second: cell.median_bytes_per_second
                * path.wire_bytes_per_payload_byte
                * 8.0
                / 1e6,
            percent_of_ceiling: cell.percent_of_ceiling,
        })
        .collect();

    // Each rate is already a median over repetitions, so the best of them is a fair plateau.
    // With no diagonal (send and receive axes that share no size) the best cell of the whole
    // matrix stands for it, so that a given ceiling is still compared with.
    let plateau_cells: Vec<&Cell> = if diagonal_cells.is_empty() {
        cells.iter().collect()
    } else {
        diagonal_cells.iter().map(|(_, c)| *c).collect()
    };
    let plateau = plateau_cells
        .iter()
        .map(|c| c.median_bytes_per_second)
        .reduce(f64::max);
    let reaches_90_percent_at = plateau.and_then(|p| {
        diagonal_cells
            .iter()
            .find(|(_, c)| c.median_bytes_per_second >= 0.9 * p)
            .map(|(b, _)| *b)
    });

    let limit = classify_limit(plateau, &plateau_cells, runs, path);

    let mut notches = Vec::new();
    for w in diagonal_cells.windows(3) {
        let (before, here, after) = (w[0].1, w[1].1, w[2].1);
        // The straight line through the neighbours, read at this point's buffer size: on a
        // doubling axis (16, 32, 64 KiB) a window-limited rate that doubles with the buffer lies
        // on it, where the neighbours' mean would put it 20% low.
        let x = |b: BufferSize| b.bytes(mss) as f64;
        let (x0, x1, x2) = (x(w[0].0), x(w[1].0), x(w[2].0));
        let t = if x2 > x0 { (x1 - x0) / (x2 - x0) } else { 0.5 };
        let line = before.median_bytes_per_second
            + t * (after.median_bytes_per_second - before.median_bytes_per_second);
        if here.median_bytes_per_second < (1.0 - NOTCH_FRACTION) * line {
            notches.push(Anomaly {
                snd_index: here.snd_index,
                rcv_index: here.rcv_index,
                bytes_per_second: here.median_bytes_per_second,
                expected_bytes_per_second: line,
                explanation: format!(
                    "{:.0}% below the line through its neighbours{}",
                    100.0 * (1.0 - here.median_bytes_per_second / line),
                    kernel_words(runs, here)
                ),
            });
        }
    }

    let mut pathological = Vec::new();
    for cell in &cells {
        let (s, r) = (cell.snd_index as isize, cell.rcv_index as isize);
        let best_neighbour = [(s - 1, r), (s + 1, r), (s, r - 1), (s, r + 1)]
            .iter()
            .filter(|(a, b)| *a >= 0 && *b >= 0)
            .filter_map(|&(a, b)| cell_at(a as usize, b as usize))
            .map(|c| c.median_bytes_per_second)
            .fold(0.0, f64::max);
        if best_neighbour > 0.0
            && cell.median_bytes_per_second < PATHOLOGICAL_FRACTION * best_neighbour
        {
            pathological.push(Anomaly {
                snd_index: cell.snd_index,
                rcv_index: cell.rcv_index,
                bytes_per_second: cell.median_bytes_per_second,
                expected_bytes_per_second: best_neighbour,
                explanation: format!(
                    "{:.1}% of its best neighbour{}",
                    100.0 * cell.median_bytes_per_second / best_neighbour,
                    kernel_words(runs, cell)
                ),
            });
        }
    }

    let ratios: Vec<f64> = cells
        .iter()
        .filter_map(|c| {
            let asked = rcv.0[c.rcv_index].bytes(mss);
            c.window_bytes
                .filter(|_| asked > 0)
                .map(|w| w as f64 / asked as f64)
        })
        .collect();
    let window_per_buffer_byte = (!ratios.is_empty()).then(|| median(&ratios));

    SweepAnalysis {
        cells,
        diagonal,
        plateau_bytes_per_second: plateau,
        reaches_90_percent_at,
        limit,
        notches,
        pathological,
        bdp: bdp(round_trip, plateau, path),
        round_trip,
        window_per_buffer_byte,
    }
}

/// Window / RTT for a cell (RTT: a full segment's, [`segment_round_trip`]): the usable window is the smaller of what the sender may keep
/// unacknowledged and what the receiver advertises. Linux grants twice a request and uses about
/// half of the granted space for payload, so half the granted size is the window; where the
/// sender saw the peer's window in TCP_INFO that figure wins.
fn predict(
    runs: &[&RunRecord],
    snd_granted: u64,
    rcv_granted: u64,
    round_trip_seconds: f64,
    path: PathFacts,
) -> Option<f64> {
    if round_trip_seconds <= 0.0 || !round_trip_seconds.is_finite() {
        return None;
    }
    let seen_window = runs
        .iter()
        .filter_map(|r| r.kernel)
        .map(|k| u64::from(k.snd_window_bytes))
        .max()
        .unwrap_or(0);
    // Linux grants twice the buffer asked for and keeps part of it for its bookkeeping; how
    // much is left for data is what the receiver advertised. With no window seen, half (the
    // doubling undone); with one, the same share of the sender's buffer: recent kernels leave
    // 1.33-1.38 times the requested size (scaling_ratio), and half made the prediction 17-19%
    // low.
    let (rcv_window, share) = if seen_window > 0 && rcv_granted > 0 {
        (seen_window, seen_window as f64 / rcv_granted as f64)
    } else {
        (rcv_granted / 2, 0.5)
    };
    let window = (snd_granted as f64 * share.min(1.0)).min(rcv_window as f64);
    let rate = window / round_trip_seconds;
    Some(path.ceiling_bytes_per_second.map_or(rate, |c| rate.min(c)))
}

fn classify_limit(
    plateau: Option<f64>,
    candidates: &[&Cell],
    runs: &[RunRecord],
    path: PathFacts,
) -> PlateauLimit {
    let Some(plateau) = plateau else {
        return PlateauLimit::Unknown;
    };
    if let Some(ceiling) = path.ceiling_bytes_per_second
        && plateau >= 0.9 * ceiling
    {
        return PlateauLimit::Link;
    }
    let top: Vec<&Cell> = candidates
        .iter()
        .copied()
        .filter(|c| c.median_bytes_per_second >= 0.9 * plateau)
        .collect();
    let cpu_bound = runs.iter().any(|r| {
        top.iter()
            .any(|c| c.snd_index == r.snd_index && c.rcv_index == r.rcv_index)
            && (r.sender_cpu_percent >= 90.0 || r.receiver_cpu_percent >= 90.0)
    });
    if cpu_bound {
        PlateauLimit::Cpu
    } else if path.ceiling_bytes_per_second.is_some() {
        PlateauLimit::Other
    } else {
        PlateauLimit::Unknown
    }
}

/// "; TCP_INFO: rtt 22.1 ms, cwnd 10, 0 retransmits; longest write 21.9 ms" for a cell's runs.
fn kernel_words(runs: &[RunRecord], cell: &Cell) -> String {
    let here: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.snd_index == cell.snd_index && r.rcv_index == cell.rcv_index)
        .collect();
    let mut words = String::new();
    if let Some(k) = here
        .iter()
        .filter_map(|r| r.kernel)
        .max_by_key(|k| k.rtt_us)
    {
        words.push_str(&format!(
            "; TCP_INFO: rtt {}, cwnd {} segments, {} retransmits, peer window {} bytes",
            crate::units::format_seconds(f64::from(k.rtt_us) * 1e-6),
            k.snd_cwnd_segments,
            k.total_retransmits,
            k.snd_window_bytes
        ));
    }
    let stall = here.iter().map(|r| r.max_write_seconds).fold(0.0, f64::max);
    if stall > 0.0 {
        words.push_str(&format!(
            "; longest write() {}",
            crate::units::format_seconds(stall)
        ));
    }
    let retransmitted = here
        .iter()
        .filter_map(|r| r.kernel)
        .any(|k| k.total_retransmits > 0);
    if retransmitted && stall >= LINUX_MIN_RTO_SECONDS * 0.9 {
        words.push_str(
            "; the writer waited out retransmission timeouts (Linux's minimum RTO is 200 ms): \
             segments were dropped, typically by a receive buffer too small for the kernel's \
             per-packet overhead",
        );
    }
    words
}
