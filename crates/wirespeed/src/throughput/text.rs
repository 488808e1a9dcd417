//! Human output of `wirespeed tcp` / `wirespeed udp`: iperf3-style interval and summary lines,
//! seed 002's ttcp lines, both ends' CPU, TCP_INFO, buffers and the environment.

use std::io::{self, Write};
use std::net::SocketAddr;

use wirespeed_model::RateFormat;
use wirespeed_model::units::significant;
use wirespeed_net::Progress;
use wirespeed_net::report::{Interval, Role};
use wirespeed_net::spec::Flow;
use wirespeed_net::summary::{StreamPair, Sum, Ttcp};
use wirespeed_net::{Amount, Direction, Protocol, TestSpec};
use wirespeed_report::Render;

use crate::throughput::ThroughputResult;

/// A transfer in the byte unit `-f` asked for (`-f K`: KiB, `-f MB`: MB), as iperf3's transfer
/// column follows its `-f`; bits and `a` keep decimal bytes scaled to the amount.
#[doc(hidden)]
pub fn transfer(n: u64, fmt: RateFormat) -> String {
    let scaled = |size: f64, unit: &str| format!("{} {unit}", significant(n as f64 / size, 4));
    match fmt {
        RateFormat::Bytes => format!("{n} B"),
        RateFormat::Kibibytes => scaled(1024.0, "KiB"),
        RateFormat::Mebibytes => scaled(1024.0 * 1024.0, "MiB"),
        RateFormat::Gibibytes => scaled(1024.0 * 1024.0 * 1024.0, "GiB"),
        RateFormat::Kilobytes => scaled(1e3, "kB"),
        RateFormat::Megabytes => scaled(1e6, "MB"),
        RateFormat::Gigabytes => scaled(1e9, "GB"),
        _ => bytes(n),
    }
}

fn bytes(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{} GB", significant(n / 1e9, 4))
    } else if n >= 1e6 {
        format!("{} MB", significant(n / 1e6, 4))
    } else if n >= 1e3 {
        format!("{} kB", significant(n / 1e3, 4))
    } else {
        format!("{n} B")
    }
}

fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} us", s * 1e6)
    }
}

fn flow_name(flow: Flow) -> &'static str {
    match flow {
        Flow::Upload => "client->agent",
        Flow::Download => "agent->client",
    }
}

/// The first lines: who tests what.
pub(crate) fn header(spec: &TestSpec, agent: SocketAddr, in_process: bool) -> String {
    let proto = match spec.protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
    };
    let dir = match spec.direction {
        Direction::Send => "client transmits",
        Direction::Receive => "agent transmits (-R)",
        Direction::Both => "both transmit (--bidir)",
    };
    let amount = match spec.amount {
        Amount::Seconds(s) => format!("{s} s"),
        Amount::Bytes(b) => format!("{b} bytes per stream"),
    };
    let agent = if in_process {
        format!("{agent} (in-process agent on loopback: this host's own ceiling)")
    } else {
        agent.to_string()
    };
    let mut extra = String::new();
    if spec.protocol == Protocol::Udp {
        if spec.rate_bits_per_second == 0 {
            extra.push_str(", -b 0 (as fast as possible)");
        } else {
            extra.push_str(&format!(
                ", target {} per stream",
                RateFormat::Adaptive.format(spec.rate_bits_per_second as f64)
            ));
        }
    }
    if let Some(cap) = spec.max_pacing_rate_bits_per_second {
        extra.push_str(&format!(
            ", capped at {} per stream (-b)",
            RateFormat::Adaptive.format(cap as f64)
        ));
    }
    if let Some(tos) = spec.tos {
        extra.push_str(&format!(", TOS {}", wirespeed_model::dscp::describe(tos)));
    }
    if spec.mptcp {
        extra.push_str(", Multipath TCP");
    }
    format!(
        "wirespeed {proto} -> {agent}\n  {dir}, {} stream(s), {amount}, {} byte {}{extra}",
        spec.streams,
        spec.length_bytes,
        if spec.protocol == Protocol::Udp {
            "datagrams"
        } else {
            "buffers"
        },
    )
}

/// Live interval lines (`-i`) or JSON objects (`--json-stream`) as the test runs.
pub struct LiveLines {
    format: RateFormat,
    human: bool,
    json: bool,
    udp: bool,
    multi: bool,
    header: Option<String>,
    columns_done: bool,
    /// `serve --exclusive`: the wait last said on stderr, whole seconds.
    queue_said: Option<u64>,
    /// `-T`, `--timestamps`: before each text line.
    prefix: crate::common::line_prefix::LinePrefix,
}

impl LiveLines {
    /// Silent unless `human` (interval lines) or `json` (one object per interval).
    pub fn new(format: RateFormat, spec: &TestSpec, human: bool, json: bool) -> LiveLines {
        LiveLines {
            header: None,
            columns_done: false,
            queue_said: None,
            prefix: Default::default(),
            format,
            human,
            json,
            udp: spec.protocol == Protocol::Udp,
            multi: spec.flows().len() > 1,
        }
    }

    /// Text lines start with `prefix` (`-T`, `--timestamps`).
    pub(crate) fn with_prefix(mut self, prefix: crate::common::line_prefix::LinePrefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// The test's first lines, known once its agent listens: printed before the first interval
    /// (or by [`LiveLines::finish_header`]), so that a test refused before it starts prints
    /// nothing on stdout.
    pub(crate) fn announce(&mut self, header: String) {
        if self.human {
            self.header = Some(header);
        }
    }

    /// `--repeat`: the line that starts run `k` of `runs`.
    pub(crate) fn run_header(&mut self, k: u32, runs: u32) {
        if self.human {
            self.finish_header();
            let _ = writeln!(self.prefix.wrap(io::stdout().lock()), "run {k} of {runs}");
        }
    }

    /// Prints the header if no interval did.
    pub(crate) fn finish_header(&mut self) {
        if let Some(h) = self.header.take() {
            let _ = writeln!(self.prefix.wrap(io::stdout().lock()), "{h}");
        }
    }

    /// One interval line; a warm-up interval (`-O`) is marked as iperf3 marks it, since it
    /// is left out of the summary below.
    #[doc(hidden)]
    pub fn line(&self, id: &str, iv: &Interval, bytes_: u64, bps: f64, tail: &str) -> String {
        format!(
            "[{id:>4}] {:>6.2}-{:<6.2} s  {:>10}  {:>14}{tail}{}",
            iv.start_seconds,
            iv.end_seconds,
            transfer(bytes_, self.format),
            self.format.format(bps),
            if iv.omitted { "  (omitted)" } else { "" }
        )
    }
}

impl Progress for LiveLines {
    /// On stderr, whatever the output: when the wait starts and every 5 s after.
    fn queued(&mut self, position: u32, waited: std::time::Duration) {
        let secs = waited.as_secs();
        if self.queue_said.is_some_and(|said| secs < said + 5) {
            return;
        }
        self.queue_said = Some(secs);
        let ahead = if position > 0 {
            format!(", {position} more ahead")
        } else {
            String::new()
        };
        eprintln!("waiting for the agent: another test is running ({secs} s{ahead})");
    }

    fn interval(&mut self, iv: &Interval) {
        let mut out = io::stdout().lock();
        if self.json {
            if let Ok(text) = serde_json::to_string(&serde_json::json!({ "interval": iv })) {
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
            return;
        }
        if !self.human {
            return;
        }
        self.finish_header();
        let prefix = self.prefix.clone();
        let mut out = prefix.wrap(out);
        if !self.columns_done {
            let tail = if self.udp {
                "  datagrams"
            } else {
                "  role      retr    cwnd       rtt"
            };
            let _ = writeln!(
                out,
                "[  ID] interval          transfer         bitrate{tail}"
            );
            self.columns_done = true;
        }
        for s in &iv.streams {
            let tail = if self.udp {
                format!("  {}", s.datagrams.unwrap_or(0))
            } else {
                let role = match s.role {
                    Role::Sender => "sender",
                    Role::Receiver => "receiver",
                };
                match (s.retransmits, s.cwnd_bytes, s.rtt_seconds) {
                    (Some(r), Some(c), Some(rtt)) => {
                        format!("  {role:<8} {r:>5}  {:>9}  {:>8}", bytes(c), seconds(rtt))
                    }
                    _ => format!("  {role}"),
                }
            };
            let _ = writeln!(
                out,
                "{}",
                self.line(&s.id.to_string(), iv, s.bytes, s.bits_per_second, &tail)
            );
        }
        // An iperf3 server's test has each direction's sums only (docs/iperf3.md).
        if self.multi || iv.streams.is_empty() {
            for (label, sum) in [("SUM>", &iv.sum_sent), ("SUM<", &iv.sum_received)] {
                if let Some(s) = sum {
                    let _ = writeln!(
                        out,
                        "{}",
                        self.line(label, iv, s.bytes, s.bits_per_second, "")
                    );
                }
            }
        }
        let _ = out.flush();
    }
}

fn sum_line(
    out: &mut dyn Write,
    fmt: RateFormat,
    label: &str,
    s: &Sum,
    udp: bool,
) -> io::Result<()> {
    if s.streams == 0 {
        // No stream of this end reported (a test cut short before the agent sent its count):
        // zeros here would read as "nothing arrived".
        let end = if label == "sent" {
            "sending"
        } else {
            "receiving"
        };
        return writeln!(
            out,
            "  {label:<26} not known: the {end} end's count did not come back before the test ended"
        );
    }
    write!(
        out,
        "  {label:<26} {:>10} in {:>8}  {:>14}",
        transfer(s.bytes, fmt),
        seconds(s.seconds),
        fmt.format(s.bits_per_second)
    )?;
    // Retransmissions are TCP's; a UDP sum never has any to show.
    if let Some(r) = s.retransmits.filter(|_| !udp) {
        write!(out, "  retr {r}")?;
    }
    if udp {
        if let Some(d) = s.datagrams {
            write!(
                out,
                "  {d} datagrams ({:.0}/s)",
                d as f64 / s.seconds.max(1e-9)
            )?;
        }
        if let (Some(l), Some(p)) = (s.lost, s.lost_percent) {
            write!(out, ", lost {l} ({p:.3}%)")?;
        }
        if let Some(j) = s.jitter_seconds {
            write!(out, ", jitter {}", seconds(j))?;
        }
        if let (Some(d), Some(o)) = (s.duplicates, s.out_of_order)
            && (d > 0 || o > 0)
        {
            write!(out, ", {d} duplicate, {o} out of order")?;
        }
    }
    writeln!(out)
}

fn ttcp_lines(out: &mut dyn Write, t: &Ttcp) -> io::Result<()> {
    let role = match t.role {
        Role::Sender => "-t",
        Role::Receiver => "-r",
    };
    writeln!(
        out,
        "  ttcp {role} {}: {} bytes in {:.2} real seconds = {:.2} MB/sec +++ (MB = 2^20 bytes)",
        flow_name(t.flow),
        t.bytes,
        t.real_seconds,
        t.bytes_per_second / 1_048_576.0
    )?;
    writeln!(
        out,
        "  ttcp {role} {}: numCalls: {}; msec/call: {:.3}; calls/sec: {:.2}",
        flow_name(t.flow),
        t.calls,
        t.ms_per_call,
        t.calls_per_second
    )
}

fn stream_lines(out: &mut dyn Write, fmt: RateFormat, p: &StreamPair) -> io::Result<()> {
    for (what, s) in [("sender", &p.sender), ("receiver", &p.receiver)] {
        if let Some(s) = s {
            write!(
                out,
                "  [{:>2}] {:<13} {what:<8} {:>10} in {:>8}  {:>14}",
                p.id,
                flow_name(p.flow),
                transfer(s.bytes, fmt),
                seconds(s.seconds),
                fmt.format(s.bits_per_second())
            )?;
            if let Some(e) = &s.error {
                write!(out, "  ERROR: {e}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

impl Render for ThroughputResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "- - - - - - - - - - - - - - - - - - - - - - - - -")?;
        if let Some(why) = &self.partial_reason {
            writeln!(
                out,
                "PARTIAL RESULT: {why}; the figures below are what was counted before, and no \
                 verdict is given"
            )?;
        }
        self.per_stream_lines(out)?;
        self.summary_lines(out)?;
        if let Some(p) = &self.iperf3 {
            crate::throughput::iperf3::peer::render(out, p, self.rate_format)?;
        }
        for t in &self.end.ttcp {
            ttcp_lines(out, t)?;
        }
        self.repeat_line(out)?;
        self.cpu_line(out)?;
        self.tcp_info_lines(out)?;
        self.udp_io_lines(out)?;
        self.socket_lines(out)?;
        self.environment_line(out)
    }
}

/// The summary's parts, in the order it prints them.
impl ThroughputResult {
    /// Each stream's own totals, when there are several or one failed.
    fn per_stream_lines(&self, out: &mut dyn Write) -> io::Result<()> {
        let fmt = self.rate_format;
        let e = &self.end;
        if e.streams.len() > 1
            || e.streams.iter().any(|p| {
                p.sender
                    .as_ref()
                    .or(p.receiver.as_ref())
                    .is_some_and(|s| s.error.is_some())
            })
        {
            writeln!(out, "per stream:")?;
            for p in &e.streams {
                stream_lines(out, fmt, p)?;
            }
        }
        Ok(())
    }

    /// The totals of each way the data went.
    fn summary_lines(&self, out: &mut dyn Write) -> io::Result<()> {
        let fmt = self.rate_format;
        let udp = self.spec.protocol == Protocol::Udp;
        let e = &self.end;
        let primary = if self.spec.direction == Direction::Receive {
            Flow::Download
        } else {
            Flow::Upload
        };
        writeln!(out, "summary ({}):", flow_name(primary))?;
        sum_line(out, fmt, "sent", &e.sum_sent, udp)?;
        sum_line(out, fmt, "received", &e.sum_received, udp)?;
        if let (Some(s), Some(r)) = (&e.sum_sent_bidir_reverse, &e.sum_received_bidir_reverse) {
            writeln!(out, "summary (agent->client, --bidir):")?;
            sum_line(out, fmt, "sent", s, udp)?;
            sum_line(out, fmt, "received", r, udp)?;
        }
        Ok(())
    }

    /// `--repeat`: the received rate of every run, summarised.
    fn repeat_line(&self, out: &mut dyn Write) -> io::Result<()> {
        let fmt = self.rate_format;
        if let Some(r) = &self.repeat {
            let f = |v: f64| fmt.format(v);
            writeln!(
                out,
                "repeat: {} runs, received rate median {} (95% bootstrap interval {} to {}), min {}, max {}, spread {:.1}%",
                r.values.len(),
                f(r.median),
                f(r.ci95_low),
                f(r.ci95_high),
                f(r.min),
                f(r.max),
                r.spread_percent
            )?;
        }
        Ok(())
    }

    /// Each end's CPU.
    fn cpu_line(&self, out: &mut dyn Write) -> io::Result<()> {
        let e = &self.end;
        let c = &e.cpu_utilization_percent;
        let agent = match (c.remote_total, c.remote_user, c.remote_system) {
            (Some(t), Some(u), Some(s)) => format!("agent {t:.1}% (user {u:.1}%, system {s:.1}%)"),
            _ => "agent: unknown (no results from the agent)".into(),
        };
        writeln!(
            out,
            "cpu (percent of one core): client {:.1}% (user {:.1}%, system {:.1}%); {agent}",
            c.host_total, c.host_user, c.host_system
        )?;
        Ok(())
    }

    /// Each TCP sender's kernel view (`tcp_info`): why the rate is what it is.
    fn tcp_info_lines(&self, out: &mut dyn Write) -> io::Result<()> {
        let e = &self.end;
        for p in &e.streams {
            if let Some(t) = p.sender.as_ref().and_then(|s| s.tcp_info.as_ref()) {
                let opt_rate =
                    |r: Option<f64>| r.map_or("n/a".into(), |r| RateFormat::Adaptive.format(r));
                // From the sender's intervals (the client's; the agent's when it sent them).
                let window_use = wirespeed_net::report::median_window_use(
                    self.intervals.iter().chain(&self.agent_intervals),
                    p.id,
                    p.flow,
                )
                .map_or(String::new(), |(u, n)| {
                    format!(", window use {u:.2} (rate x srtt / cwnd, median of {n} intervals)")
                });
                writeln!(
                    out,
                    "tcp_info [{}] sender: retransmits {}, srtt {} (min {}), cwnd {} segments x {} bytes, delivery rate {}, busy {}, rwnd-limited {}, sndbuf-limited {}{window_use}",
                    p.id,
                    t.retransmits,
                    seconds(t.rtt_seconds),
                    t.min_rtt_seconds.map_or("n/a".into(), seconds),
                    t.cwnd_segments,
                    t.mss_bytes,
                    opt_rate(t.delivery_rate_bits_per_second),
                    t.busy_seconds.map_or("n/a".into(), seconds),
                    t.rwnd_limited_seconds.map_or("n/a".into(), seconds),
                    t.sndbuf_limited_seconds.map_or("n/a".into(), seconds),
                )?;
            }
        }
        Ok(())
    }

    /// How each UDP stream's datagrams crossed the system-call boundary at both ends.
    fn udp_io_lines(&self, out: &mut dyn Write) -> io::Result<()> {
        let e = &self.end;
        for p in &e.streams {
            let io = |s: &Option<wirespeed_net::StreamReport>| {
                s.as_ref().and_then(|s| s.udp.as_ref()).and_then(|u| {
                    let method = u.io_method.as_deref()?;
                    let per_call = u
                        .datagrams_per_call
                        .map_or(String::new(), |d| format!(", {d:.1} datagrams per call"));
                    let coalesced = match u.coalesced_datagrams {
                        Some(c) if u.datagrams > 0 => format!(
                            ", {:.1}% of datagrams in coalesced buffers",
                            c as f64 * 100.0 / u.datagrams as f64
                        ),
                        _ => String::new(),
                    };
                    Some(format!("{method}{per_call}{coalesced}"))
                })
            };
            if let (Some(tx), Some(rx)) = (io(&p.sender), io(&p.receiver)) {
                writeln!(out, "udp i/o [{}]: sender {tx}; receiver {rx}", p.id)?;
            }
        }
        Ok(())
    }

    /// The first stream's socket buffers and CPU placement.
    fn socket_lines(&self, out: &mut dyn Write) -> io::Result<()> {
        let udp = self.spec.protocol == Protocol::Udp;
        let e = &self.end;
        if let Some(p) = e.streams.first() {
            // TCP grows its buffers as the window needs (tcp_rmem/tcp_wmem autotuning); a UDP
            // socket keeps what it was created with, except the receive buffer wirespeed asks
            // for itself (the kernel doubles a request, up to twice net.core.rmem_max), so say
            // so: "the kernel's default" beside a granted 8 MiB reads as a contradiction.
            let unset = if udp {
                format!(
                    "not set (receive: wirespeed asks for {} MiB, doubled by the kernel up to twice net.core.rmem_max; send: net.core.wmem_default)",
                    wirespeed_net::sockopt::UDP_DEFAULT_RCVBUF >> 20
                )
            } else {
                "not set (kernel autotuning)".to_string()
            };
            let requested = self
                .spec
                .window_bytes
                .map_or(unset, |w| format!("{w} bytes"));
            let show = |s: &Option<wirespeed_net::StreamReport>| {
                s.as_ref().map_or("?".to_string(), |s| {
                    // An iperf3 server reports no socket facts: zero is "not known" there.
                    if s.socket.send_buffer_granted_bytes == 0
                        && s.socket.receive_buffer_granted_bytes == 0
                    {
                        return "not reported".to_string();
                    }
                    format!(
                        "send {} / receive {}",
                        s.socket.send_buffer_granted_bytes, s.socket.receive_buffer_granted_bytes
                    )
                })
            };
            writeln!(
                out,
                "socket buffers [{}]: -w {requested}; granted at the sender {}, at the receiver {}",
                p.id,
                show(&p.sender),
                show(&p.receiver)
            )?;
            let cpu = |s: &Option<wirespeed_net::StreamReport>| {
                s.as_ref()
                    .and_then(|s| s.socket.cpu)
                    .map_or("?".into(), |c| c.to_string())
            };
            let cc = p.sender.as_ref().and_then(|s| s.socket.congestion.clone());
            let placement = match (
                p.sender.as_ref().and_then(|s| s.socket.cpu),
                p.receiver.as_ref().and_then(|s| s.socket.cpu),
            ) {
                (Some(a), Some(b)) if a == b => " (same CPU)",
                (Some(_), Some(_)) => " (cross-CPU)",
                _ => "",
            };
            writeln!(
                out,
                "placement [{}]: sender on CPU {}, receiver on CPU {}{placement}{}",
                p.id,
                cpu(&p.sender),
                cpu(&p.receiver),
                cc.map_or(String::new(), |c| format!("; congestion control {c}"))
            )?;
        }
        Ok(())
    }

    /// The client's network settings, which bound what any test here can reach.
    fn environment_line(&self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(env) = &self.start.client_environment {
            writeln!(
                out,
                "environment (client): {} MTU {}, qdisc {} (default {}), default cc {}, tcp_rmem {}, tcp_wmem {}, rmem_max {}, wmem_max {}, kernel {}{}",
                env.interface.as_deref().unwrap_or("?"),
                env.mtu_bytes.map_or("?".into(), |m| m.to_string()),
                env.qdisc.as_deref().unwrap_or("?"),
                env.default_qdisc.as_deref().unwrap_or("?"),
                env.default_congestion.as_deref().unwrap_or("?"),
                env.tcp_rmem.as_deref().unwrap_or("?"),
                env.tcp_wmem.as_deref().unwrap_or("?"),
                env.rmem_max_bytes.map_or("?".into(), |m| m.to_string()),
                env.wmem_max_bytes.map_or("?".into(), |m| m.to_string()),
                env.kernel.as_deref().unwrap_or("?"),
                env.virtualization
                    .as_deref()
                    .map_or(String::new(), |v| format!(", virtualised ({v})")),
            )?;
        }
        Ok(())
    }
}
