//! `wirespeed report` reads what `iperf3 -J` printed, so a user's old iperf3 runs sit beside
//! new wirespeed runs: the document is decoded with iperf3's own keys and units (rates in bits
//! per second, `rtt` in microseconds, `jitter_ms` in milliseconds) and its headline figures
//! carry the same labels and units as a wirespeed `tcp`/`udp` result, so the report's
//! comparison table puts both in one row. The write side (`--json-format iperf3`) is
//! `json.rs`.
//!
//! Older iperf3 versions (3.1 to 3.9) have no UDP `sum_received`: the UDP `sum` (the
//! receiver's loss and jitter as reported back to the client) stands in for it.
//!
//! A `--bidir` run (3.7 and later) says so only by its second set of sums: `sum_bidir_reverse`
//! in each interval and `sum_sent_bidir_reverse`/`sum_received_bidir_reverse` at the end
//! (`test_start` has no flag for it), each stream's `sender` telling its direction. Warm-up
//! intervals (`-O`) carry `omitted: true`, and iperf3 restarts its clock after them; the
//! report puts them before the counted ones on one time line, as wirespeed numbers its own.

use serde::Deserialize;
use wirespeed_net::report::{Interval, IntervalStream, Role};
use wirespeed_net::spec::Flow;
use wirespeed_report::html::markup::{Cell, HtmlTable, Markup, number, rate, seconds};

/// An `iperf3 -J` document, as far as the report reads it.
#[derive(Debug, Clone, Deserialize)]
#[doc(hidden)]
pub struct Iperf3Run {
    start: Start,
    #[serde(default)]
    intervals: Vec<Iperf3Interval>,
    #[serde(default)]
    end: End,
    /// Set when iperf3 itself reports the test as failed.
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Start {
    /// "iperf 3.12".
    version: String,
    #[serde(default)]
    system_info: Option<String>,
    #[serde(default)]
    timestamp: Option<Timestamp>,
    #[serde(default)]
    connecting_to: Option<ConnectingTo>,
    #[serde(default)]
    test_start: Option<TestStart>,
}

#[derive(Debug, Clone, Deserialize)]
struct Timestamp {
    time: String,
}

#[derive(Debug, Clone, Deserialize)]
struct ConnectingTo {
    host: String,
    port: u16,
}

#[derive(Debug, Clone, Deserialize)]
struct TestStart {
    protocol: String,
    num_streams: u32,
    #[serde(default)]
    blksize: u64,
    #[serde(default)]
    duration: f64,
    /// 1 when the server sent (`-R`).
    #[serde(default)]
    reverse: u8,
    #[serde(default)]
    tos: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
struct Iperf3Interval {
    #[serde(default)]
    streams: Vec<IntervalEntry>,
    sum: IntervalEntry,
    /// `--bidir`: the other direction's sum (`sender` says whose).
    #[serde(default)]
    sum_bidir_reverse: Option<IntervalEntry>,
}

#[derive(Debug, Clone, Deserialize)]
struct IntervalEntry {
    #[serde(default)]
    socket: u32,
    start: f64,
    end: f64,
    bytes: u64,
    bits_per_second: f64,
    #[serde(default)]
    retransmits: Option<u32>,
    #[serde(default)]
    packets: Option<u64>,
    #[serde(default)]
    snd_cwnd: Option<u64>,
    /// Smoothed RTT, microseconds.
    #[serde(default)]
    rtt: Option<u64>,
    #[serde(default)]
    omitted: bool,
    /// Absent before iperf 3.7: the client sent then unless the test was reversed.
    #[serde(default)]
    sender: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct End {
    #[serde(default)]
    streams: Vec<EndStream>,
    #[serde(default)]
    sum_sent: Option<EndSum>,
    #[serde(default)]
    sum_received: Option<EndSum>,
    /// UDP: the receiver's loss and jitter as the client learned them.
    #[serde(default)]
    sum: Option<EndSum>,
    /// `--bidir`: the server-to-client direction, as its sender and its receiver counted it.
    #[serde(default)]
    sum_sent_bidir_reverse: Option<EndSum>,
    #[serde(default)]
    sum_received_bidir_reverse: Option<EndSum>,
    #[serde(default)]
    cpu_utilization_percent: Option<Cpu>,
    #[serde(default)]
    sender_tcp_congestion: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct EndSum {
    seconds: f64,
    bytes: u64,
    bits_per_second: f64,
    #[serde(default)]
    retransmits: Option<u64>,
    #[serde(default)]
    jitter_ms: Option<f64>,
    #[serde(default)]
    lost_packets: Option<u64>,
    #[serde(default)]
    packets: Option<u64>,
    #[serde(default)]
    lost_percent: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
struct EndStream {
    #[serde(default)]
    sender: Option<SenderEnd>,
}

#[derive(Debug, Clone, Deserialize)]
struct SenderEnd {
    socket: u32,
    #[serde(default)]
    retransmits: Option<u64>,
    #[serde(default)]
    max_snd_cwnd: Option<u64>,
    /// Microseconds, as every iperf3 RTT.
    #[serde(default)]
    min_rtt: Option<u64>,
    #[serde(default)]
    mean_rtt: Option<u64>,
    #[serde(default)]
    max_rtt: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
struct Cpu {
    host_total: f64,
    #[serde(default)]
    remote_total: Option<f64>,
}

fn micros(us: u64) -> f64 {
    us as f64 * 1e-6
}

impl Iperf3Run {
    /// The wirespeed command the test corresponds to: "tcp" or "udp" (iperf3's SCTP, or a
    /// failed test that never started, has no wirespeed counterpart: "iperf3").
    #[doc(hidden)]
    pub fn command(&self) -> &'static str {
        match self.start.test_start.as_ref().map(|t| t.protocol.as_str()) {
            Some("TCP") => "tcp",
            Some("UDP") => "udp",
            _ => "iperf3",
        }
    }

    /// What the receiving side counted: `sum_received`, or an old UDP run's `sum`.
    fn received(&self) -> Option<&EndSum> {
        self.end.sum_received.as_ref().or(self.end.sum.as_ref())
    }

    /// Both ways at once (`--bidir`): told by the second direction's sums.
    #[doc(hidden)]
    pub fn bidir(&self) -> bool {
        self.end.sum_sent_bidir_reverse.is_some()
            || self.end.sum_received_bidir_reverse.is_some()
            || self
                .intervals
                .iter()
                .any(|iv| iv.sum_bidir_reverse.is_some())
    }

    /// Whether the client sent in the test's main direction (not `-R`).
    fn client_sends(&self) -> bool {
        self.start
            .test_start
            .as_ref()
            .is_none_or(|t| t.reverse != 1)
    }

    /// The figures a wirespeed `tcp`/`udp` result is compared by, under the same labels and
    /// units (`ThroughputResult::headlines`), converted from iperf3's units.
    #[doc(hidden)]
    pub fn headlines(&self) -> Vec<(String, &'static str, f64)> {
        let mut out = Vec::new();
        if let Some(r) = self.received() {
            out.push(("received rate".into(), "bits_per_second", r.bits_per_second));
        }
        if let Some(s) = &self.end.sum_sent {
            out.push(("sent rate".into(), "bits_per_second", s.bits_per_second));
        }
        if let Some(r) = &self.end.sum_received_bidir_reverse {
            out.push((
                "received rate, way back (--bidir)".into(),
                "bits_per_second",
                r.bits_per_second,
            ));
        }
        let tcp = self.command() == "tcp";
        let received = self.received();
        let optional = [
            (
                "retransmits",
                "",
                self.end
                    .sum_sent
                    .as_ref()
                    .and_then(|s| s.retransmits)
                    .filter(|_| tcp)
                    .map(|r| r as f64),
            ),
            (
                "lost",
                "lost_percent",
                received.and_then(|r| r.lost_percent).filter(|_| !tcp),
            ),
            (
                "jitter",
                "jitter_seconds",
                received
                    .and_then(|r| r.jitter_ms)
                    .filter(|_| !tcp)
                    .map(|ms| ms / 1e3),
            ),
            (
                "CPU here",
                "host_percent",
                self.end
                    .cpu_utilization_percent
                    .as_ref()
                    .map(|c| c.host_total),
            ),
            (
                "CPU at the agent",
                "remote_percent",
                self.end
                    .cpu_utilization_percent
                    .as_ref()
                    .and_then(|c| c.remote_total),
            ),
        ];
        out.extend(
            optional
                .into_iter()
                .filter_map(|(label, unit, v)| Some((label.to_string(), unit, v?))),
        );
        out
    }

    /// The report's section: where and when the test ran, its totals, each stream's RTT, and
    /// the rate over time drawn as wirespeed draws its own intervals.
    #[doc(hidden)]
    pub fn html(&self) -> Markup {
        let mut m = Markup::new();
        let mut about = format!(
            "in iperf3's JSON layout, written by {}: read with iperf3's own keys and units, compared with wirespeed's {} runs by the same figures",
            self.start.version,
            self.command()
        );
        if let Some(t) = &self.start.timestamp {
            about.push_str(&format!("; started {}", t.time));
        }
        if let Some(c) = &self.start.connecting_to {
            about.push_str(&format!("; server {} port {}", c.host, c.port));
        }
        m.note(&about);
        if let Some(e) = &self.error {
            m.note(&format!("iperf3 reported the test as failed: {e}"));
        }
        m.push(&self.test_table());
        m.push(&self.totals());
        m.push(&self.streams_table());
        let intervals = self.intervals();
        m.push(&intervals_table(&intervals, self.bidir()));
        m.push(&crate::throughput::html::intervals_plot(&intervals));
        m
    }

    fn test_table(&self) -> Markup {
        let mut m = Markup::new();
        let Some(t) = &self.start.test_start else {
            return m;
        };
        let mut table = HtmlTable::new(["setting", "value"]);
        let mut row = |k: &str, v: String| {
            table.row(vec![Cell::text(k), Cell::text(v)]);
        };
        row("protocol", t.protocol.clone());
        row("streams", t.num_streams.to_string());
        row("block size", format!("{} bytes", t.blksize));
        row("duration", format!("{} s", number(t.duration)));
        row(
            "direction",
            if self.bidir() {
                "both ways at once (--bidir)".into()
            } else if t.reverse == 1 {
                "server to client (-R)".into()
            } else {
                "client to server".into()
            },
        );
        if let Some(tos) = t.tos.filter(|&v| v != 0) {
            row("TOS", format!("0x{tos:02x}"));
        }
        if let Some(cc) = &self.end.sender_tcp_congestion {
            row("congestion control", cc.clone());
        }
        if let Some(s) = &self.start.system_info {
            row("system", s.clone());
        }
        m.heading("Test");
        m.push(&table.markup());
        m
    }

    fn totals(&self) -> Markup {
        let mut t = HtmlTable::new([
            "direction",
            "bytes",
            "seconds",
            "bit rate",
            "retransmits",
            "datagrams",
            "lost",
            "jitter",
        ]);
        let received = self.received();
        // With --bidir each direction has a sender's and a receiver's count.
        let (sent_label, received_label) = match (self.bidir(), self.client_sends()) {
            (false, _) => ("sent", "received"),
            (true, true) => ("client to server: sent", "client to server: received"),
            (true, false) => ("server to client: sent", "server to client: received"),
        };
        let (back_sent, back_received) = if self.client_sends() {
            ("server to client: sent", "server to client: received")
        } else {
            ("client to server: sent", "client to server: received")
        };
        for (sum, label) in [
            (self.end.sum_sent.as_ref(), sent_label),
            (received, received_label),
            (self.end.sum_sent_bidir_reverse.as_ref(), back_sent),
            (self.end.sum_received_bidir_reverse.as_ref(), back_received),
        ] {
            let Some(s) = sum else { continue };
            t.row(vec![
                Cell::text(label),
                Cell::num(number(s.bytes as f64)),
                Cell::num(seconds(s.seconds)),
                Cell::num(rate(s.bits_per_second)),
                Cell::opt(s.retransmits.map(|r| number(r as f64))),
                Cell::opt(s.packets.map(|p| number(p as f64))),
                Cell::opt(s.lost_percent.map(|p| {
                    format!(
                        "{} % ({} datagrams)",
                        number(p),
                        number(s.lost_packets.unwrap_or(0) as f64)
                    )
                })),
                Cell::opt(s.jitter_ms.map(|ms| seconds(ms / 1e3))),
            ]);
        }
        let mut m = Markup::new();
        if t.is_empty() {
            return m;
        }
        m.heading("Totals");
        m.push(&t.markup());
        if let Some(c) = &self.end.cpu_utilization_percent {
            let mut cpu = HtmlTable::new(["CPU", "percent of one core"]);
            cpu.row(vec![
                Cell::text("client total"),
                Cell::num(number(c.host_total)),
            ]);
            if let Some(r) = c.remote_total {
                cpu.row(vec![Cell::text("server total"), Cell::num(number(r))]);
            }
            m.push(&cpu.markup());
        }
        m
    }

    fn streams_table(&self) -> Markup {
        let mut t = HtmlTable::new([
            "socket",
            "retransmits",
            "min RTT",
            "mean RTT",
            "max RTT",
            "largest cwnd",
        ]);
        for s in self.end.streams.iter().filter_map(|s| s.sender.as_ref()) {
            if s.min_rtt.is_none() && s.retransmits.is_none() {
                continue;
            }
            t.row(vec![
                Cell::num(s.socket.to_string()),
                Cell::opt(s.retransmits.map(|r| number(r as f64))),
                Cell::opt(s.min_rtt.map(|v| seconds(micros(v)))),
                Cell::opt(s.mean_rtt.map(|v| seconds(micros(v)))),
                Cell::opt(s.max_rtt.map(|v| seconds(micros(v)))),
                Cell::opt(
                    s.max_snd_cwnd
                        .map(|b| format!("{} bytes", number(b as f64))),
                ),
            ]);
        }
        let mut m = Markup::new();
        if !t.is_empty() {
            m.heading("Streams (sender)");
            m.push(&t.markup());
        }
        m
    }

    /// iperf3's intervals in wirespeed's shape, so both are drawn by one plot: the client's
    /// sums as `sum_sent`/`sum_received` by each sum's `sender`, each stream by its own, and
    /// the counted intervals after the warm-up's on one time line (iperf3 restarts its clock
    /// when the warm-up ends).
    #[doc(hidden)]
    pub fn intervals(&self) -> Vec<Interval> {
        let client_sends = self.client_sends();
        let warmup = self
            .intervals
            .iter()
            .filter(|iv| iv.sum.omitted)
            .map(|iv| iv.sum.end)
            .fold(0.0, f64::max);
        let restarts = self
            .intervals
            .iter()
            .find(|iv| !iv.sum.omitted)
            .is_some_and(|iv| iv.sum.start < warmup);
        let shift = |omitted: bool, t: f64| if restarts && !omitted { t + warmup } else { t };
        self.intervals
            .iter()
            .map(|iv| {
                let streams = iv
                    .streams
                    .iter()
                    .map(|s| {
                        let sends = s.sender.unwrap_or(client_sends);
                        IntervalStream {
                            id: s.socket,
                            // Upload: client to server, whichever end counted it.
                            flow: if sends { Flow::Upload } else { Flow::Download },
                            role: if sends { Role::Sender } else { Role::Receiver },
                            bytes: s.bytes,
                            bits_per_second: s.bits_per_second,
                            datagrams: s.packets,
                            retransmits: s.retransmits,
                            cwnd_bytes: s.snd_cwnd,
                            rtt_seconds: s.rtt.map(micros),
                        }
                    })
                    .collect();
                let sum = |e: &IntervalEntry| wirespeed_net::report::IntervalSum {
                    bytes: e.bytes,
                    bits_per_second: e.bits_per_second,
                    datagrams: e.packets,
                    retransmits: e.retransmits,
                };
                let (mut sum_sent, mut sum_received) = (None, None);
                for e in std::iter::once(&iv.sum).chain(iv.sum_bidir_reverse.as_ref()) {
                    if e.sender.unwrap_or(client_sends) {
                        sum_sent = Some(sum(e));
                    } else {
                        sum_received = Some(sum(e));
                    }
                }
                let omitted = iv.sum.omitted;
                Interval {
                    start_seconds: shift(omitted, iv.sum.start),
                    end_seconds: shift(omitted, iv.sum.end),
                    omitted,
                    streams,
                    sum_sent,
                    sum_received,
                }
            })
            .collect()
    }
}

/// The most interval rows a report shows per document (the plot has them all).
const MAX_INTERVAL_ROWS: usize = 300;

/// Each interval's sums, the warm-up's marked as iperf3 marks them: they are left out of the
/// totals, and a reader comparing an interval with the totals must see which.
fn intervals_table(intervals: &[Interval], bidir: bool) -> Markup {
    let mut m = Markup::new();
    if intervals.is_empty() {
        return m;
    }
    let mut columns = vec!["interval", "sent by the client"];
    if bidir {
        columns.push("received by the client (--bidir)");
    } else {
        columns.push("received by the client (-R)");
    }
    columns.push("counted");
    let mut t = HtmlTable::new(columns);
    for iv in intervals.iter().take(MAX_INTERVAL_ROWS) {
        let r = |s: &Option<wirespeed_net::report::IntervalSum>| {
            Cell::opt(s.as_ref().map(|s| rate(s.bits_per_second)))
        };
        t.row(vec![
            Cell::text(format!(
                "{}-{} s",
                number(iv.start_seconds),
                number(iv.end_seconds)
            )),
            r(&iv.sum_sent),
            r(&iv.sum_received),
            Cell::text(if iv.omitted {
                "omitted (warm-up, -O)"
            } else {
                "yes"
            }),
        ]);
    }
    m.heading("Intervals");
    let omitted = intervals.iter().filter(|iv| iv.omitted).count();
    if omitted > 0 {
        m.note(&format!(
            "{omitted} warm-up interval(s) omitted (-O): shown, not counted in the totals"
        ));
    }
    m.push(&t.markup());
    if intervals.len() > MAX_INTERVAL_ROWS {
        m.note(&format!(
            "{MAX_INTERVAL_ROWS} of {} intervals listed; the plot draws them all",
            intervals.len()
        ));
    }
    m
}
