//! `reproduce vj-buffers` (seed 004, Van Jacobson's LANCE vs Intel table): the socket buffer
//! swept over 1..12 packets (send = receive, the seed's diagonal), task-to-task KB/s and wire
//! Mb/s beside the seed's 3/60-to-3/60 (LANCE) column, across two labs: labs/seed-004-sun3.toml
//! (the 3/60s' per-byte host cost derived from the table's 1-packet row, a 1990s TCP, a
//! half-duplex Ethernet) and labs/two-host-10m.toml (hosts that answer at once), so that what
//! the host model changes is visible row by row.
//!
//! Each point is `wirespeed sweep AGENT --snd K --rcv K -M 1460` run as a subprocess inside the
//! lab's first host against one `wirespeed serve` in the second (the sweep logic lives in the
//! binary); one run per point, shorter than the seed's four 8 MB transfers (stated). The
//! seed's "buffer of K packets" is a 4BSD socket buffer of K x 1460 bytes: the receiver
//! advertises at most K packets and the sender holds at most K unacknowledged. The sweep asks
//! Linux for SO_SNDBUF = SO_RCVBUF = K x 1460 (granted doubled, never under 4,608 / 2,304) and
//! clamps the advertised window with TCP_WINDOW_CLAMP = K x 1460, so the window is the seed's;
//! a third table shows what was granted and which window the sender saw.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

use serde::de::IgnoredAny;
use wirespeed_report::Document;

use super::{Comparison, LabGuard, Name, Options, Reproduction, Row, Verdict, setting};
use crate::sweep::SweepReport;

/// The seed's LANCE column: task-to-task KB/s and wire Mb/s for 1..12 packets.
#[doc(hidden)]
pub const LANCE: [(f64, f64); 12] = [
    (384.0, 3.4),
    (606.0, 5.4),
    (690.0, 6.1),
    (784.0, 6.9),
    (866.0, 7.7),
    (904.0, 8.0),
    (946.0, 8.4),
    (954.0, 8.4),
    (974.0, 8.6),
    (983.0, 8.7),
    (995.0, 8.8),
    (1001.0, 8.9),
];

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let bytes = options.size.unwrap_or(1_000_000);
    let (sun3, sun3_mac) = sweep_lab("seed-004-sun3.toml", true, bytes)?;
    let (modern, modern_mac) = sweep_lab("two-host-10m.toml", false, bytes)?;
    let comparisons = vec![
        table(
            "Socket buffer vs throughput, 3/60 to 3/60 (LANCE), hosts modelled",
            "labs/seed-004-sun3.toml",
            &sun3,
            &sun3_mac,
            bytes,
            true,
        ),
        table(
            "The same sweep between hosts that answer at once",
            "labs/two-host-10m.toml",
            &modern,
            &modern_mac,
            bytes,
            false,
        ),
        granted(&sun3),
    ];
    let truth = vec![
        setting(
            "3/60 lab (labs/seed-004-sun3.toml)",
            "sun1 - sun2, 10 Mbit/s half duplex (CSMA/CD), 100 m; each host 784 ns per packet byte to transmit and to receive, one frame at a time; TCP profile 1990s (no SACK, no timestamps: 1460-byte segments, Reno)",
        ),
        setting(
            "modern lab (labs/two-host-10m.toml)",
            "h1 - h2, 10 Mbit/s full duplex, 100 m, queue 100; no host cost, this host's TCP",
        ),
        setting(
            "buffers",
            "send = receive = 1..12 packets of 1460 bytes (-M 1460): SO_SNDBUF, SO_RCVBUF and TCP_WINDOW_CLAMP = K x 1460",
        ),
        setting(
            "transfer",
            format!("{bytes} bytes per point, one run (the seed: four of 8 MB)"),
        ),
    ];
    Ok(Reproduction::new(
        Name::VjBuffers,
        truth,
        comparisons,
        vec![
            "the host cost is derived from the 1-packet row alone (labs/seed-004-sun3.toml says how); rows 2..12 are predictions, not fits".into(),
            "the seed's Intel (3/280) column is a property of the 82586 chip and is not reproduced by an emulated link".into(),
        ],
    ))
}

/// One point of the diagonal as the sweep measured it.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct Point {
    pub kib_per_second: f64,
    pub wire_mbit_per_second: f64,
    pub percent_of_ceiling: f64,
    pub snd_granted: f64,
    pub rcv_granted: f64,
    pub window: f64,
    pub mss: f64,
    pub retransmits: f64,
    /// The emulator's mean release lateness during this point, summed over the two
    /// directions (a data frame and its ACK: what it added to each round trip), us.
    pub late_per_round_trip_us: f64,
    /// The machine's 1-minute load average at the end of this point (/proc/loadavg).
    pub load_average: f64,
    /// How long the receiver's data thread (the agent's) waited on a run queue for a CPU per
    /// wake-up during this point, us (NaN when /proc could not be read). One wake-up per
    /// window is on the window's path: the data's arrival wakes it, and its read reopens the
    /// clamped window.
    pub receiver_wait_per_wakeup_us: f64,
    /// The receiver's data thread's wake-ups per window of K packets.
    pub receiver_wakeups_per_window: f64,
    /// The same wait for the sender's data thread (the sweep's).
    pub sender_wait_per_wakeup_us: f64,
    /// How long the sender's socket stood empty per window, us (NaN if the kernel did not
    /// say): the sender's time less its `tcpi_busy_time`. Its buffer (twice the window, at
    /// least 4,608 bytes) holds the next segment while the sending thread runs in time; when
    /// that thread waits for a CPU longer than a round trip, the ACK finds nothing to send and
    /// the window waits for the sending thread too, which this counts.
    pub sender_empty_per_window_us: f64,
    /// Retransmission timeouts in the sender's namespace over this point (TcpExt
    /// `TCPTimeouts`; NaN if unread).
    pub rto_timeouts: f64,
    /// Times the receiving host pruned its queue for want of buffer over this point (TcpExt
    /// `PruneCalled` in the receiver's namespace; NaN if unread).
    pub receiver_prunes: f64,
    /// Windows of K packets this point moved.
    pub windows: f64,
}

/// The emulator's mean lateness between two readings of `node`'s ports, us (0 if no frame).
#[doc(hidden)]
pub fn mean_late_us(
    before: &[wirespeed_lab::PortStatus],
    after: &[wirespeed_lab::PortStatus],
    node: &str,
) -> f64 {
    let (mut sum, mut frames) = (0.0, 0u64);
    for a in after.iter().filter(|p| p.from == node) {
        let (bm, bf) = before
            .iter()
            .find(|b| b.link == a.link && b.from == a.from)
            .map_or((0.0, 0), |b| (b.lateness.mean_us, b.lateness.frames));
        let df = a.lateness.frames.saturating_sub(bf);
        if df > 0 {
            sum += a.lateness.mean_us * a.lateness.frames as f64 - bm * bf as f64;
            frames += df;
        }
    }
    if frames == 0 {
        0.0
    } else {
        (sum / frames as f64).max(0.0)
    }
}

/// The 1-minute load average (NaN if /proc/loadavg cannot be read).
pub(super) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Where the time a window lost went, us per window of K packets (one window per round trip,
/// the window being the buffer).
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct LostTime {
    /// How much longer each window took than at the seed's rate.
    pub excess_us: f64,
    /// The emulator's release lateness, data frame and ACK.
    emulator_us: f64,
    /// The receiver's data thread waiting on a run queue for a CPU, once per window (0 if
    /// unknown).
    cpu_wait_us: f64,
    /// The sender's socket standing empty, waiting for the sending thread (0 if unknown).
    sender_us: f64,
    /// Retransmission timeouts, each at least [`RTO_MIN_US`], spread over the point's windows
    /// (0 if unknown): a lower bound of what they stalled.
    rto_us: f64,
}

/// Linux's least retransmission timeout (`TCP_RTO_MIN`, 200 ms), us: each timeout that fired
/// stalled its window at least this long.
const RTO_MIN_US: f64 = 200_000.0;

impl LostTime {
    #[doc(hidden)]
    pub fn of(k: usize, p: &Point, paper_kib: f64) -> LostTime {
        let seconds = |rate_kib: f64| k as f64 * 1460.0 / (rate_kib * 1024.0);
        LostTime {
            excess_us: (seconds(p.kib_per_second) - seconds(paper_kib)) * 1e6,
            emulator_us: p.late_per_round_trip_us,
            cpu_wait_us: if p.receiver_wait_per_wakeup_us.is_finite() {
                p.receiver_wait_per_wakeup_us
            } else {
                0.0
            },
            sender_us: if p.sender_empty_per_window_us.is_finite() {
                p.sender_empty_per_window_us
            } else {
                0.0
            },
            rto_us: if p.rto_timeouts.is_finite() && p.windows > 0.0 {
                p.rto_timeouts * RTO_MIN_US / p.windows
            } else {
                0.0
            },
        }
    }

    /// The part of the loss the measurements account for (capped at the whole). They do not
    /// overlap: the sender's socket is empty only while nothing is in flight, the emulator's
    /// lateness and the receiver's wait fall while a segment or its ACK is, and a
    /// retransmission timer runs while the segment it resends is lost (the least timeout
    /// counted, not the wait for a CPU inside it).
    #[doc(hidden)]
    pub fn attributed_us(&self) -> f64 {
        (self.emulator_us + self.cpu_wait_us + self.sender_us + self.rto_us).min(self.excess_us)
    }

    fn share(&self, us: f64) -> f64 {
        us / self.excess_us
    }
}

/// Why a modelled point fell more than 25% below the seed, from what the run measured
/// (issue 21): each window of K packets took `excess` us longer than at the seed's rate; of
/// that, the emulator's release lateness (data frame + ACK) and the time the receiver's data
/// thread waited on a run queue for a CPU once per window (/proc/PID/task/TID/schedstat: its
/// mean wait per wake-up; the data's arrival wakes it and its read reopens the clamped
/// window) and the time the sender's socket stood empty waiting for its sending thread (its
/// `tcpi_busy_time` against its own time) are each printed. When the three together account
/// for at least half the loss, the machine's load is the measured cause, the emulator's
/// lateness and the receiver's wait in order of size; otherwise the figures are printed and
/// the rest named as not attributed.
fn below_reason(k: usize, p: &Point, paper_kib: f64) -> String {
    let lost = LostTime::of(k, p, paper_kib);
    let (late, wait) = (lost.emulator_us, lost.cpu_wait_us);
    let waited = if p.receiver_wait_per_wakeup_us.is_finite() {
        format!(
            "{wait:.0} us per window with the receiving thread waiting on a run queue for a CPU ({:.0}%: its mean wait per wake-up, {:.1} wake-ups per window, one on the window's path: its read reopens the clamped window)",
            lost.share(wait) * 100.0,
            p.receiver_wakeups_per_window
        )
    } else {
        "the processes' waits for a CPU not read (/proc)".to_string()
    };
    let emulator = format!(
        "the emulator released frames {late:.0} us late per round trip (data + ACK, {:.0}% of that)",
        lost.share(late) * 100.0
    );
    let (first, second) = if wait > late {
        (waited, emulator)
    } else {
        (emulator, waited)
    };
    let rest = lost.excess_us - lost.attributed_us();
    let figures = format!(
        "each window of {k} took {:.0} us longer than at the seed's rate: {first}; {second}; {}{}; load average {:.1}",
        lost.excess_us,
        sender_part(p, &lost),
        rto_part(p, &lost),
        p.load_average
    );
    if lost.share(lost.attributed_us()) >= 0.5 {
        format!(
            "below the seed: measured cause: the machine's load: {figures}; {rest:.0} us not attributed"
        )
    } else {
        format!(
            "below the seed: {figures}; the rest, {rest:.0} us per window, is neither (the modelled hosts, collisions on the shared medium, or the kernel's own work, not measured here)"
        )
    }
}

/// The sender's share of a window's loss: how long its socket stood empty waiting for the
/// sending thread, with that thread's wait for a CPU per wake-up (the likely reason).
fn sender_part(p: &Point, lost: &LostTime) -> String {
    if p.sender_empty_per_window_us.is_finite() {
        format!(
            "the sender's socket stood empty {:.0} us per window waiting for the sending thread ({:.0}%; that thread waited {:.0} us per wake-up for a CPU)",
            lost.sender_us,
            lost.share(lost.sender_us) * 100.0,
            p.sender_wait_per_wakeup_us
        )
    } else {
        format!(
            "the sender's idle time not reported by its kernel (tcpi_busy_time; the sending thread waited {:.0} us per wake-up for a CPU)",
            p.sender_wait_per_wakeup_us
        )
    }
}

/// Retransmission timeouts of a point, when any fired: how many, what they stalled at the
/// least, and the receiving host's prunes that lost the segments (a lab link that drops
/// nothing loses none). Empty when none fired or the counters were not read.
fn rto_part(p: &Point, lost: &LostTime) -> String {
    if !(p.rto_timeouts.is_finite() && p.rto_timeouts > 0.0) {
        return String::new();
    }
    let prunes = if p.receiver_prunes.is_finite() {
        format!(
            "the receiving host pruned its queue {:.0} time(s) for want of buffer (TcpExt PruneCalled): its reader, waiting for a CPU, left the segments of the first window it advertised, sized before its buffer was set, beyond what the buffer holds",
            p.receiver_prunes
        )
    } else {
        "the receiving host's counters not read".to_string()
    };
    format!(
        "; the sender's retransmission timer fired {:.0} time(s) (TcpExt TCPTimeouts), each at least 200 ms (TCP_RTO_MIN): at least {:.0} us per window ({:.0}%); {prunes}",
        p.rto_timeouts,
        lost.rto_us,
        lost.share(lost.rto_us) * 100.0
    )
}

/// A modelled point below the seed but within 25%: the same measured split of the time each
/// window lost, printed without naming a cause (so that every run shows what the waits were).
fn within_below_reason(k: usize, p: &Point, paper_kib: f64) -> String {
    let lost = LostTime::of(k, p, paper_kib);
    let waited = if p.receiver_wait_per_wakeup_us.is_finite() {
        format!(
            "the receiving thread {:.0} us waiting for a CPU per wake-up",
            lost.cpu_wait_us
        )
    } else {
        "waits for a CPU not read".to_string()
    };
    format!(
        "within 25% of the seed; each window {:.0} us longer than at the seed's rate: {waited}, {:.0} us the emulator's lateness, {} (per window, load average {:.1})",
        lost.excess_us,
        lost.emulator_us,
        sender_part(p, &lost),
        p.load_average
    )
}

/// One thread's scheduler statistics, `/proc/PID/task/TID/schedstat`: time on a CPU, time
/// waiting on a run queue (ns), and the number of times it ran on a CPU (each run follows a
/// wait on a run queue: a wake-up or a preemption); Documentation/scheduler/sched-stats.rst.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[doc(hidden)]
pub struct SchedStat {
    pub on_cpu_ns: u64,
    pub waiting_ns: u64,
    pub runs: u64,
}

impl SchedStat {
    fn since(self, before: SchedStat) -> SchedStat {
        SchedStat {
            on_cpu_ns: self.on_cpu_ns.saturating_sub(before.on_cpu_ns),
            waiting_ns: self.waiting_ns.saturating_sub(before.waiting_ns),
            runs: self.runs.saturating_sub(before.runs),
        }
    }
}

#[doc(hidden)]
pub fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some(SchedStat {
        on_cpu_ns: fields.next()??,
        waiting_ns: fields.next()??,
        runs: fields.next()??,
    })
}

/// At most this many threads of one process are read per sample (a bound on hostile /proc).
const MAX_THREADS: usize = 1024;

/// The threads of `pid` and their statistics; empty once it has exited.
fn thread_schedstats(pid: u32) -> Vec<(u32, SchedStat)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .take(MAX_THREADS)
        .filter_map(|e| {
            let tid: u32 = e.file_name().to_str()?.parse().ok()?;
            let text = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
            Some((tid, parse_schedstat(&text)?))
        })
        .collect()
}

/// How long the thread that moves a process's data waited for a CPU each time it was woken,
/// over an interval, from samples of its threads' schedstat: a thread alive at the start
/// counts from its figures then, one first seen later (born during the interval) from zero;
/// each counts to its last sample (20 ms apart). The data thread is the one that spent the
/// most time on a CPU over the interval: the other threads (the control connection, timers)
/// are not on the data's path, and a thread that polls can wait a long time in total while
/// nothing waits for it, so the total over all threads overstates what the data lost (it
/// was 2 to 10 times the lost time in a run at load 5.5); the wait per run of the data thread is
/// what each wake-up on the data's path cost.
#[derive(Debug, Default)]
#[doc(hidden)]
pub struct CpuWait {
    pub baseline: std::collections::HashMap<(u32, u32), SchedStat>,
    last: std::collections::HashMap<(u32, u32), SchedStat>,
}

impl CpuWait {
    #[doc(hidden)]
    pub fn start(pids: &[u32]) -> CpuWait {
        let mut w = CpuWait::default();
        for &pid in pids {
            for (tid, stat) in thread_schedstats(pid) {
                w.baseline.insert((pid, tid), stat);
                w.record(pid, tid, stat);
            }
        }
        w
    }

    fn sample(&mut self, pid: u32) {
        for (tid, stat) in thread_schedstats(pid) {
            self.record(pid, tid, stat);
        }
    }

    #[doc(hidden)]
    pub fn record(&mut self, pid: u32, tid: u32, stat: SchedStat) {
        self.last.insert((pid, tid), stat);
    }

    /// `pid`'s data thread over the interval (the most time on a CPU), if any was read.
    #[doc(hidden)]
    pub fn data_thread(&self, pid: u32) -> Option<SchedStat> {
        self.last
            .iter()
            .filter(|((p, _), _)| *p == pid)
            .map(|(key, now)| now.since(self.baseline.get(key).copied().unwrap_or_default()))
            .max_by_key(|d| d.on_cpu_ns)
    }

    /// The data thread's mean wait on a run queue per run, us (NaN if never read or never ran).
    #[doc(hidden)]
    pub fn wait_per_wakeup_us(&self, pid: u32) -> f64 {
        match self.data_thread(pid) {
            Some(d) if d.runs > 0 => d.waiting_ns as f64 / d.runs as f64 / 1e3,
            _ => f64::NAN,
        }
    }

    /// The data thread's runs over the interval (0 if never read).
    #[doc(hidden)]
    pub fn runs(&self, pid: u32) -> u64 {
        self.data_thread(pid).map_or(0, |d| d.runs)
    }
}

/// What the lab's MACs counted over a whole sweep (all twelve points): the sender's data
/// frames and the receiver's ACK frames, and the collisions each met.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[doc(hidden)]
pub struct MacTally {
    pub data_frames: u64,
    pub data_collisions: u64,
    pub ack_frames: u64,
    pub ack_collisions: u64,
}

impl MacTally {
    fn per_ack(&self) -> f64 {
        self.ack_collisions as f64 / self.ack_frames.max(1) as f64
    }
    fn per_data(&self) -> f64 {
        self.data_collisions as f64 / self.data_frames.max(1) as f64
    }
}

/// The MAC counters of `node`'s ports between two readings, summed.
fn tally(
    before: &[wirespeed_lab::PortStatus],
    after: &[wirespeed_lab::PortStatus],
    node: &str,
) -> (u64, u64) {
    let mut out = (0, 0);
    for a in after.iter().filter(|p| p.from == node) {
        let b = before
            .iter()
            .find(|b| b.link == a.link && b.from == a.from)
            .map(|b| b.counters)
            .unwrap_or_default();
        out.0 += a.counters.frames_out.saturating_sub(b.frames_out);
        out.1 += a.counters.collisions.saturating_sub(b.collisions);
    }
    out
}

/// The `TcpExt` counters of a /proc/net/netstat text: a header line of names and a line of
/// values, each starting `TcpExt:`. Anything else, or a value that is not a number, is left
/// out (the text comes from another namespace's /proc and is read with a bound).
#[doc(hidden)]
pub fn parse_tcp_ext(text: &str) -> std::collections::HashMap<String, u64> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return Default::default();
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .skip(1)
        .filter_map(|(n, v)| Some((n.to_string(), v.parse().ok()?)))
        .collect()
}

/// At most this much of a netstat text is read (a few KiB on Linux 6).
const NETSTAT_BOUND: usize = 64 * 1024;

/// The TcpExt counters of the namespace `pid` lives in (empty if unreadable).
#[doc(hidden)]
pub fn tcp_ext_of_pid(pid: u32) -> std::collections::HashMap<String, u64> {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open(format!("/proc/{pid}/net/netstat")) {
        let _ = f.take(NETSTAT_BOUND as u64).read_to_string(&mut text);
    }
    parse_tcp_ext(&text)
}

/// The TcpExt counters of the network namespace `ns`, read by `cat` started in it (empty if
/// that fails).
fn tcp_ext_of(ns: &str) -> std::collections::HashMap<String, u64> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "cat", "/proc/net/netstat"])
        .stderr(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let n = o.stdout.len().min(NETSTAT_BOUND);
            parse_tcp_ext(&String::from_utf8_lossy(&o.stdout[..n]))
        }
        _ => Default::default(),
    }
}

/// How much counter `name` rose between two readings (NaN if either lacks it).
#[doc(hidden)]
pub fn counter_delta(
    before: &std::collections::HashMap<String, u64>,
    after: &std::collections::HashMap<String, u64>,
    name: &str,
) -> f64 {
    match (before.get(name), after.get(name)) {
        (Some(&b), Some(&a)) => a.saturating_sub(b) as f64,
        _ => f64::NAN,
    }
}

/// Sweeps K = 1..12 across the lab in `file`: the first host sends, the second receives.
fn sweep_lab(file: &str, half_duplex: bool, bytes: u64) -> anyhow::Result<(Vec<Point>, MacTally)> {
    let lab = LabGuard::up(&super::lab_file(file)?)?;
    let hosts: Vec<String> = lab
        .record
        .nodes
        .iter()
        .filter(|n| n.kind == "host")
        .map(|n| n.name.clone())
        .collect();
    let [from, to] = hosts.as_slice() else {
        bail!("labs/{file} should have two hosts, has {}", hosts.len());
    };
    let to_ns = lab.namespace(to)?;
    let from_ns = lab.namespace(from)?;
    let addr = lab.ipv4(to)?;
    let mut agent = Command::new("ip")
        .args(["netns", "exec", &to_ns])
        .arg(super::exe()?)
        .args(["serve", "-p", "0", "-B", &addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the agent in the lab")?;
    let mut line = String::new();
    BufReader::new(agent.stdout.take().expect("piped"))
        .read_line(&mut line)
        .ok();
    let listening = line
        .split_whitespace()
        .find(|w| w.contains(&addr) && w.contains(':'))
        .map(str::to_string);
    let results =
        std::env::temp_dir().join(format!("ws-reproduce-vj-{}.jsonl", std::process::id()));
    let before = lab.ports()?;
    let mut last = before.clone();
    let points = (|| -> anyhow::Result<Vec<Point>> {
        let Some(listening) = listening else {
            bail!("the agent in {to} did not say where it listens: {line:?}");
        };
        let mut points = Vec::new();
        for k in 1..=LANCE.len() {
            let _ = std::fs::remove_file(&results);
            let mut args: Vec<String> = [
                "sweep",
                &listening,
                "--snd",
                &k.to_string(),
                "--rcv",
                &k.to_string(),
                "--reps",
                "1",
                "-n",
                &format!("{bytes}B"),
                "-M",
                "1460",
                "--link-rate",
                "10M",
                "--results",
                &results.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if half_duplex {
                // The ceiling of a shared medium: the ACKs take the wire from the data.
                args.push("--half-duplex".into());
            }
            // The slowest point (1 packet, ~384 KB/s) takes ~3 s per MB.
            let limit = Duration::from_secs(60 + bytes / 100_000);
            // The TCP counters of both hosts' namespaces around the point: the receiver's
            // through the agent, which lives in it; the sender's through a reader started there.
            let agent_pid = agent.id();
            let counters_before = (tcp_ext_of(&from_ns), tcp_ext_of_pid(agent_pid));
            // The agent's threads and the sweep's, sampled while the point runs.
            let mut waits = CpuWait::start(&[agent_pid]);
            let mut sweep_pid = None;
            let doc: Document<IgnoredAny, SweepReport> =
                super::run_json_watching(&from_ns, &args, limit, &mut |pid| {
                    sweep_pid = Some(pid);
                    waits.sample(pid);
                    waits.sample(agent_pid);
                })?;
            let d = doc
                .result
                .analysis
                .diagonal
                .first()
                .context("the sweep's document has no diagonal point")?;
            let run = doc
                .result
                .runs
                .first()
                .context("the sweep's document has no run")?;
            let kernel = run.kernel.as_ref();
            // The emulator's lateness over this point alone, and the load it ran under.
            let now = lab.ports()?;
            let late_per_round_trip_us =
                mean_late_us(&last, &now, from) + mean_late_us(&last, &now, to);
            last = now;
            // Windows of K packets this point moved.
            let windows = run.bytes as f64 / (k as f64 * 1460.0);
            let counters_after = (tcp_ext_of(&from_ns), tcp_ext_of_pid(agent_pid));
            let rto_timeouts = counter_delta(&counters_before.0, &counters_after.0, "TCPTimeouts");
            let receiver_prunes =
                counter_delta(&counters_before.1, &counters_after.1, "PruneCalled");
            points.push(Point {
                receiver_wait_per_wakeup_us: waits.wait_per_wakeup_us(agent_pid),
                receiver_wakeups_per_window: waits.runs(agent_pid) as f64 / windows.max(1.0),
                sender_wait_per_wakeup_us: sweep_pid
                    .map_or(f64::NAN, |pid| waits.wait_per_wakeup_us(pid)),
                sender_empty_per_window_us: kernel
                    .and_then(|k| k.empty_seconds)
                    .map_or(f64::NAN, |s| s * 1e6 / windows.max(1.0)),
                rto_timeouts,
                receiver_prunes,
                windows,
                late_per_round_trip_us,
                load_average: load_average(),
                kib_per_second: d.task_to_task_kib_per_second,
                wire_mbit_per_second: d.wire_mbit_per_second,
                percent_of_ceiling: d.percent_of_ceiling.context(
                    "the sweep gave no percentage of the ceiling (--link-rate was given)",
                )?,
                snd_granted: run.snd_granted_bytes as f64,
                rcv_granted: run.rcv_granted_bytes as f64,
                window: kernel.map_or(0.0, |k| f64::from(k.snd_window_bytes)),
                mss: kernel.map_or(0.0, |k| f64::from(k.snd_mss_bytes)),
                retransmits: kernel.map_or(0.0, |k| f64::from(k.total_retransmits)),
            });
        }
        Ok(points)
    })();
    wirespeed_lab::sys::terminate(agent.id());
    let _ = agent.wait();
    let _ = std::fs::remove_file(&results);
    let points = points?;
    let after = last;
    let (data_frames, data_collisions) = tally(&before, &after, from);
    let (ack_frames, ack_collisions) = tally(&before, &after, to);
    drop(lab);
    Ok((
        points,
        MacTally {
            data_frames,
            data_collisions,
            ack_frames,
            ack_collisions,
        },
    ))
}

/// Why hosts that answer at once rose with the buffer, which they should not: a 1-packet window
/// (stop and wait) that took longer than at the 12-packet rate, split as [`below_reason`]
/// splits a modelled point's loss, against the 12-packet rate instead of the seed's. Only when
/// the emulator's lateness, the receiver's wait for a CPU and the sender's empty socket
/// account for half of it is the machine's load named as the cause; otherwise the rise is
/// left unexplained, as it is.
fn unmodelled_rise_reason(one: &Point, plateau_kib: f64) -> String {
    let lost = LostTime::of(1, one, plateau_kib);
    let figures = format!(
        "the 1-packet window took {:.0} us longer than at the 12-packet rate: the emulator released frames {:.0} us late per round trip; the receiving thread waited {:.0} us per wake-up for a CPU; {}{}; load average {:.1}",
        lost.excess_us,
        lost.emulator_us,
        lost.cpu_wait_us,
        sender_part(one, &lost),
        rto_part(one, &lost),
        one.load_average
    );
    if lost.excess_us > 0.0 && lost.share(lost.attributed_us()) >= 0.5 {
        format!("measured cause: the machine's load: {figures}")
    } else {
        format!("{figures}; not attributed to the machine's load")
    }
}

/// The first buffer size (packets) whose rate reaches 90% of the best one.
fn knee(rates: &[f64]) -> f64 {
    let best = rates.iter().copied().fold(0.0, f64::max);
    rates
        .iter()
        .position(|&r| r >= 0.9 * best)
        .map_or(0.0, |i| i as f64 + 1.0)
}

/// The seed's column beside one lab's sweep, row by row, then the shape of the curve.
#[doc(hidden)]
pub fn table(
    title: &str,
    file: &str,
    points: &[Point],
    mac: &MacTally,
    bytes: u64,
    modelled: bool,
) -> Comparison {
    let mut rows = Vec::new();
    for (i, (p, (paper_kb, paper_mb))) in points.iter().zip(LANCE).enumerate() {
        let r = p.kib_per_second / paper_kb - 1.0;
        let reason = if r > 0.25 {
            if modelled {
                "above the seed: the modelled hosts overlap their work with the wire better than the 3/60s did"
            } else {
                "far above the seed: a host that answers at once needs little window on a 1.3 ms round trip, so a small buffer does not hold the rate down"
            }
        } else if r < -0.25 {
            if modelled {
                &below_reason(i + 1, p, paper_kb)
            } else {
                "below the seed"
            }
        } else if modelled && r < 0.0 {
            &within_below_reason(i + 1, p, paper_kb)
        } else {
            "within 25% of the seed"
        };
        rows.push(Row {
            quantity: format!("{} packet{}: task to task", i + 1, if i == 0 { "" } else { "s" }),
            unit: "KiB/s".into(),
            configured: None,
            paper: Some(paper_kb),
            ours: Some(p.kib_per_second),
            tolerance: "25%".into(),
            verdict: Verdict::of(r.abs() <= 0.25),
            why: format!(
                "{:+.0}%; {:.1} Mb/s on the wire (paper {paper_mb}), {:.0}% of the ceiling; {reason}",
                r * 100.0,
                p.wire_mbit_per_second,
                p.percent_of_ceiling,
            ),
        });
    }
    let rates: Vec<f64> = points.iter().map(|p| p.kib_per_second).collect();
    let paper: Vec<f64> = LANCE.iter().map(|l| l.0).collect();
    let rise = rates[rates.len() - 1] / rates[0];
    let paper_rise = paper[paper.len() - 1] / paper[0];
    rows.push(Row {
        quantity: "the diagonal: rate at 12 packets / rate at 1".into(),
        unit: "ratio".into(),
        configured: None,
        paper: Some(paper_rise),
        ours: Some(rise),
        tolerance: "25%".into(),
        verdict: Verdict::of((rise / paper_rise - 1.0).abs() <= 0.25),
        why: {
            let shape = if rise >= 1.5 {
                format!("the rate rises with the buffer, {rise:.2}x from 1 to 12 packets (the seed: {paper_rise:.2}x)")
            } else {
                format!("flat: {rise:.2}x from 1 to 12 packets against the seed's {paper_rise:.2}x; the buffer does not hold the rate down")
            };
            // Hosts that answer at once should be flat (about 1.1x): a rise past 25% is
            // explained from what the run measured, or said to be unexplained.
            if modelled || rise < 1.25 {
                shape
            } else {
                format!(
                    "{shape}; on hosts that answer at once: {}",
                    unmodelled_rise_reason(&points[0], rates[rates.len() - 1])
                )
            }
        },
    });
    let (k, paper_k) = (knee(&rates), knee(&paper));
    rows.push(Row {
        quantity: "buffer reaching 90% of the plateau".into(),
        unit: "packets".into(),
        configured: None,
        paper: Some(paper_k),
        ours: Some(k),
        tolerance: "+-2 packets".into(),
        verdict: Verdict::of((k - paper_k).abs() <= 2.0),
        why: "where the diagonal flattens: the window then covers the round trip".into(),
    });
    let best = points
        .iter()
        .map(|p| p.percent_of_ceiling)
        .fold(0.0, f64::max);
    rows.push(Row {
        quantity: "plateau, % of the ceiling".into(),
        unit: "%".into(),
        configured: Some(100.0),
        paper: Some(91.0),
        ours: Some(best),
        tolerance: "ours >= paper".into(),
        verdict: Verdict::of(best >= 91.0),
        why: format!(
            "the seed: \"the 3/60s get 91% of the theoretical max\" (1,104 KB/s); ours {best:.1}% of this link's envelope ({}){}",
            if modelled { "half duplex, an ACK per two segments" } else { "full duplex" },
            if modelled && best < 91.0 {
                format!(
                    "; short of the seed's, and sagging past 7 packets where the seed's keeps rising: measured cause: ACKs colliding with data on the half-duplex medium (the seed's own reason why send = receive was best), in this run {:.2} collisions per ACK frame ({} of the receiver's {} frames) and {:.2} per data frame (lab counters over the sweep); not the hosts' cost: with the same hosts on a full-duplex link the rate is flat at 1,152 KiB/s from 6 packets up (bench/vj-duplex.sh); how the seed's LANCEs met fewer the seed does not say",
                    mac.per_ack(),
                    mac.ack_collisions,
                    mac.ack_frames,
                    mac.per_data()
                )
            } else {
                String::new()
            }
        ),
    });
    Comparison {
        title: title.into(),
        source: "seed 004 table, left column (3/60 to 3/60, LANCE); ceiling 1,104 KB/s".into(),
        method: format!(
            "library: lifecycle::up({file}); subprocess: ip netns exec <receiver> wirespeed serve -p 0, ip netns exec <sender> wirespeed sweep ADDR:PORT --snd K --rcv K --reps 1 -n {bytes}B -M 1460 --link-rate 10M{} --json for K = 1..12",
            if modelled { " --half-duplex" } else { "" }
        ),
        rows,
    }
}

/// What Linux made of "a buffer of K packets" in the 3/60 lab: the window the sender saw must
/// be the seed's K packets, whatever the doubled buffers hold.
fn granted(points: &[Point]) -> Comparison {
    let mut rows = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let k = i as f64 + 1.0;
        let window_packets = if p.mss > 0.0 { p.window / p.mss } else { 0.0 };
        rows.push(Row {
            quantity: format!("{} packet{}: window the sender saw", i + 1, if i == 0 { "" } else { "s" }),
            unit: "packets".into(),
            configured: Some(k),
            paper: Some(k),
            ours: Some(window_packets),
            tolerance: "<= K".into(),
            verdict: Verdict::of(p.window > 0.0 && window_packets <= k + 1e-9),
            why: format!(
                "requested {} B each end; granted SO_SNDBUF {} B, SO_RCVBUF {} B (Linux doubles, floors 4,608 / 2,304); TCP_WINDOW_CLAMP holds the advertised window to K x 1460; MSS {}; {} retransmitted",
                i as u64 * 1460 + 1460,
                p.snd_granted,
                p.rcv_granted,
                p.mss,
                p.retransmits
            ),
        });
    }
    Comparison {
        title: "What a buffer of K packets is on Linux (3/60 lab)".into(),
        source: "seed 004: \"the sender and receiver socket buffer sizes (which control the amount of 'pipelining' possible between the sender, wire and receiver)\"".into(),
        method: "the sweep's own run record: granted sizes from getsockopt, the peer's window and MSS from the sender's TCP_INFO at the end".into(),
        rows,
    }
}
