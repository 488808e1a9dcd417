//! What each end measured, as sent over the control connection and printed in `--json`.
//! Field names carry their units.

use serde::{Deserialize, Serialize};

use crate::spec::Flow;

/// CPU time used, from `getrusage` (per thread, summed over a side's stream threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTime {
    /// Time in user space.
    pub user_seconds: f64,
    /// Time in the kernel.
    pub system_seconds: f64,
}

impl CpuTime {
    /// User plus system.
    pub fn total_seconds(&self) -> f64 {
        self.user_seconds + self.system_seconds
    }

    /// `self - earlier`.
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user_seconds: (self.user_seconds - earlier.user_seconds).max(0.0),
            system_seconds: (self.system_seconds - earlier.system_seconds).max(0.0),
        }
    }

    /// Adds another thread's time.
    pub fn add(&mut self, other: &CpuTime) {
        self.user_seconds += other.user_seconds;
        self.system_seconds += other.system_seconds;
    }
}

/// Whether this end wrote or read the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Wrote.
    Sender,
    /// Read.
    Receiver,
}

/// Socket facts: what was asked for and what the kernel granted (Linux doubles a `SO_SNDBUF` /
/// `SO_RCVBUF` request for its bookkeeping and clamps it to `net.core.wmem_max`/`rmem_max`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketReport {
    /// `-w`, if given.
    pub buffer_requested_bytes: Option<u64>,
    /// `SO_SNDBUF` as read back at the end of the test.
    pub send_buffer_granted_bytes: u64,
    /// `SO_RCVBUF` as read back at the end of the test.
    pub receive_buffer_granted_bytes: u64,
    /// `-M`, if given.
    pub mss_requested_bytes: Option<u32>,
    /// The congestion control the socket used (TCP).
    pub congestion: Option<String>,
    /// This end's address.
    pub local_address: String,
    /// The other end's address.
    pub peer_address: String,
    /// The CPU the stream's thread was on when it finished.
    pub cpu: Option<u32>,
    /// With `--bind-dev`: the interface the socket was bound to, read back from the kernel
    /// (`SO_BINDTODEVICE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_device: Option<String>,
    /// With `-S`: the TOS byte / traffic class the socket's packets carried, read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
    /// With `--mptcp`: whether the connection ran Multipath TCP end to end (false: it fell
    /// back to TCP, because the other end or a middlebox does not speak it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mptcp: Option<bool>,
    /// TCP: whether the kernel paces the socket on this end's asking (`SO_MAX_PACING_RATE` set,
    /// as every sending end does but on loopback: `sockopt::PACING_UNCAPPED`); absent in reports
    /// of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<bool>,
    /// TCP: the pacing cap the socket held at the end, read back from the kernel (`tcp -b`),
    /// in bit/s; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pacing_rate_bits_per_second: Option<u64>,
}

/// The kernel's view of a TCP connection (`TCP_INFO`, linux/tcp.h), read at the end of the test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpInfoReport {
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`), less those
    /// of the `-O` warm-up.
    pub retransmits: u32,
    /// Smoothed RTT (`tcpi_rtt`).
    pub rtt_seconds: f64,
    /// RTT variation (`tcpi_rttvar`).
    pub rttvar_seconds: f64,
    /// Lowest RTT seen (`tcpi_min_rtt`), if the kernel reports it.
    pub min_rtt_seconds: Option<f64>,
    /// Congestion window in segments (`tcpi_snd_cwnd`).
    pub cwnd_segments: u32,
    /// Sender MSS (`tcpi_snd_mss`).
    pub mss_bytes: u32,
    /// Path MTU (`tcpi_pmtu`).
    pub pmtu_bytes: u32,
    /// Most recent delivery-rate sample (`tcpi_delivery_rate`), if reported.
    pub delivery_rate_bits_per_second: Option<f64>,
    /// Pacing rate (`tcpi_pacing_rate`), if reported.
    pub pacing_rate_bits_per_second: Option<f64>,
    /// Time the connection had data to send (`tcpi_busy_time`).
    pub busy_seconds: Option<f64>,
    /// Time limited by the receiver's window (`tcpi_rwnd_limited`).
    pub rwnd_limited_seconds: Option<f64>,
    /// Time limited by the send buffer (`tcpi_sndbuf_limited`).
    pub sndbuf_limited_seconds: Option<f64>,
    /// The peer's advertised window (`tcpi_snd_wnd`), if reported.
    pub peer_window_bytes: Option<u32>,
}

/// UDP counts. The sender fills `datagrams`; the receiver all of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpReport {
    /// Datagrams sent or received (unique, for the receiver).
    pub datagrams: u64,
    /// Receiver: datagrams that never arrived (sent minus received, when the sender's count
    /// is known; else the gaps in the sequence numbers).
    pub lost: Option<u64>,
    /// Receiver: loss as a percentage of datagrams sent.
    pub lost_percent: Option<f64>,
    /// Receiver: datagrams that arrived more than once.
    pub duplicates: Option<u64>,
    /// Receiver: datagrams that arrived after a later one.
    pub out_of_order: Option<u64>,
    /// Receiver: RFC 3550 interarrival jitter.
    pub jitter_seconds: Option<f64>,
    /// Receiver: the timestamp source for jitter.
    pub clock: Option<String>,
    /// How this end moved datagrams through its socket: the system call and the offload, e.g.
    /// "sendmsg with UDP_SEGMENT (GSO, 64-byte segments)" or "recvmmsg with UDP_GRO".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_method: Option<String>,
    /// Datagrams per system call, the mean over the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams_per_call: Option<f64>,
    /// Receiver: datagrams that arrived in a coalesced buffer (UDP_GRO: several datagrams in one
    /// receive, split here by the segment size the kernel reports; they share its arrival time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesced_datagrams: Option<u64>,
}

/// `--zerocopy` (MSG_ZEROCOPY, Linux 4.14): how many sends the kernel completed, and how many
/// it had to copy anyway (always, on loopback: the receiver cannot hold pages of the sender).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ZeroCopyReport {
    /// Sends with MSG_ZEROCOPY.
    pub sends: u64,
    /// Completion notifications received for them.
    pub completed: u64,
    /// Of those, the ones the kernel copied instead (`SO_EE_CODE_ZEROCOPY_COPIED`).
    pub copied: u64,
}

/// What ended a [`TestSpec::no_drain`](crate::spec::TestSpec::no_drain) receiver's tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainEnd {
    /// The sender's reset arrived: it follows the sender's data through the same queues, so
    /// nothing of the test is on the path any more.
    Reset,
    /// The sender closed (a FIN, which follows its data the same way).
    Closed,
    /// No data for [`NO_DRAIN_QUIET`](crate::spec::NO_DRAIN_QUIET) (a reset lost to a full
    /// queue, or a sender that never reset).
    Quiet,
    /// [`NO_DRAIN_CAP`](crate::spec::NO_DRAIN_CAP) passed with data still arriving: the path
    /// may still carry the test's tail.
    Cap,
    /// The socket failed otherwise.
    Error,
}

/// A `no_drain` receiver's tail: after its counted time (`-t` and the grace) it reads on,
/// uncounted, until the test's data stopped arriving, so that the test is over only when its
/// data no longer holds the path's queues (a mesh's next test on this host would otherwise
/// send its latency probes behind them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DrainReport {
    /// From the end of the counted time to the end of the tail.
    pub seconds: f64,
    /// Payload bytes read in the tail (not in the stream's `bytes`).
    pub bytes: u64,
    /// What ended it.
    pub ended_by: DrainEnd,
}

/// One stream at one end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamReport {
    /// Stream number.
    pub id: u32,
    /// Which way it flowed.
    pub flow: Flow,
    /// Whether this end wrote or read.
    pub role: Role,
    /// Payload bytes written or read.
    pub bytes: u64,
    /// System calls that moved data (write/read; sendmmsg/recvmmsg).
    pub calls: u64,
    /// From the start signal to the last byte, at this end.
    pub seconds: f64,
    /// The stream thread's CPU time.
    pub cpu: CpuTime,
    /// Socket options asked and granted.
    pub socket: SocketReport,
    /// TCP only.
    pub tcp_info: Option<TcpInfoReport>,
    /// UDP only.
    pub udp: Option<UdpReport>,
    /// TCP sender with `--zerocopy` only.
    #[serde(default)]
    pub zerocopy: Option<ZeroCopyReport>,
    /// TCP sender: the longest single write() call. A writer that waits on a full send buffer
    /// shows it here (seed 004's sweep uses it to explain collapsed cells).
    #[serde(default)]
    pub longest_call_seconds: Option<f64>,
    /// A TCP sender capped by `-b`: the seconds of its measured time that its socket stood
    /// empty because this end's writer was late (descheduled), time the kernel's pacing does
    /// not make up afterwards (`tcp::Behind`). 0 when the writer kept up; absent for other
    /// streams, where the kernel does not report unsent data, and from peers that predate it.
    /// A peer's figure: [`SideReport::with_peer_figures_checked`] keeps it within the stream's
    /// time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_in_window_seconds: Option<f64>,
    /// A `no_drain` TCP receiver: the tail it read after its counted time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<DrainReport>,
    /// What ended the stream early, if anything did.
    pub error: Option<String>,
}

impl StreamReport {
    /// Bits per second over the stream's own time.
    pub fn bits_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 * 8.0 / self.seconds
        } else {
            f64::NAN
        }
    }
}

/// The most intervals one end keeps in its report: it crosses the control connection, whose
/// messages are bounded ([`crate::control::MAX_FRAME_BYTES`]), so a longer test's intervals are
/// merged pairwise (each then spans two, four, ... ticks) rather than cut off.
pub const MAX_SIDE_INTERVALS: usize = 128;

/// Everything one end measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideReport {
    /// `wirespeed 0.1.0`.
    pub software: String,
    /// Each stream.
    pub streams: Vec<StreamReport>,
    /// This end's own totals per interval, on the client's `-i` ticks (`sum_sent` is what this
    /// end sent): the agent's view of every interval travels in its report, as iperf3's
    /// `--get-server-output` but always. Sums only, at most [`MAX_SIDE_INTERVALS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    /// Sum of the stream threads' CPU time.
    pub cpu: CpuTime,
    /// From the start signal to the last stream's end.
    pub wall_seconds: f64,
    /// This end's kernel settings.
    pub environment: Option<Environment>,
}

impl SideReport {
    /// The report with the figures a peer states about its own schedule checked: a capped
    /// sender's time given up ([`StreamReport::skipped_in_window_seconds`]) that is not a time
    /// (NaN, infinite, negative) is dropped, and more than the stream's own time is that time,
    /// so that no share of the window is over 100%.
    pub fn with_peer_figures_checked(mut self) -> SideReport {
        for s in &mut self.streams {
            let window = if s.seconds.is_finite() && s.seconds > 0.0 {
                s.seconds
            } else {
                0.0
            };
            s.skipped_in_window_seconds = s
                .skipped_in_window_seconds
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| v.min(window));
        }
        self
    }

    /// The report with the free text a peer wrote in it escaped
    /// ([`wirespeed_model::peer::escape`]).
    pub fn with_peer_text_escaped(mut self) -> SideReport {
        use wirespeed_model::peer::escape;
        self.software = escape(&self.software);
        for s in &mut self.streams {
            if let Some(e) = &mut s.error {
                *e = escape(e);
            }
            if let Some(c) = &mut s.socket.congestion {
                *c = escape(c);
            }
            for a in [&mut s.socket.local_address, &mut s.socket.peer_address] {
                *a = escape(a);
            }
        }
        self
    }

    /// Whether every figure of a peer's report can be true: finite and not negative, rates
    /// consistent with the bytes and the time, lost datagrams within those counted. The
    /// refusal names `peer` and the figure ("agent 127.0.0.1:5210 reported an impossible
    /// rate").
    pub fn check(&self, peer: &str) -> Result<(), wirespeed_model::peer::Impossible> {
        let f = wirespeed_model::peer::Figures::of(peer);
        f.quantity("wall time", self.wall_seconds)?;
        f.quantity("CPU time", self.cpu.user_seconds)?;
        f.quantity("CPU time", self.cpu.system_seconds)?;
        for s in &self.streams {
            f.quantity("stream time", s.seconds)?;
            f.quantity("CPU time", s.cpu.user_seconds)?;
            f.quantity("CPU time", s.cpu.system_seconds)?;
            if let Some(t) = &s.tcp_info {
                f.quantity("round-trip time", t.rtt_seconds)?;
                f.quantity("round-trip time", t.rttvar_seconds)?;
                f.maybe("round-trip time", t.min_rtt_seconds)?;
                f.maybe("delivery rate", t.delivery_rate_bits_per_second)?;
                f.maybe("pacing rate", t.pacing_rate_bits_per_second)?;
            }
            if let Some(u) = &s.udp {
                f.maybe("jitter", u.jitter_seconds)?;
                if let Some(p) = u.lost_percent
                    && !(0.0..=100.0).contains(&p)
                {
                    f.quantity("loss", -1.0).map_err(|mut e| {
                        e.why = format!("{p}% lost");
                        e
                    })?;
                }
                if let Some(lost) = u.lost {
                    f.answered(u.datagrams.saturating_add(lost), lost)?;
                }
            }
        }
        for i in &self.intervals {
            f.quantity("interval", i.start_seconds)?;
            f.quantity("interval", i.end_seconds)?;
            f.ordered("interval", &[Some(i.start_seconds), Some(i.end_seconds)])?;
            let length = i.end_seconds - i.start_seconds;
            for sum in [&i.sum_sent, &i.sum_received].into_iter().flatten() {
                f.rate(sum.bits_per_second, sum.bytes, length)?;
            }
            for st in &i.streams {
                f.rate(st.bits_per_second, st.bytes, length)?;
            }
        }
        Ok(())
    }

    /// CPU use as a percentage of one core over the test.
    pub fn cpu_percent_of_one_core(&self) -> f64 {
        if self.wall_seconds > 0.0 {
            self.cpu.total_seconds() / self.wall_seconds * 100.0
        } else {
            f64::NAN
        }
    }
}

/// One stream over one reporting interval (`-i`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalStream {
    /// Stream number.
    pub id: u32,
    /// Which way.
    pub flow: Flow,
    /// The client's role on it.
    pub role: Role,
    /// Bytes in the interval.
    pub bytes: u64,
    /// Rate over the interval.
    pub bits_per_second: f64,
    /// Datagrams in the interval (UDP).
    pub datagrams: Option<u64>,
    /// Sender: retransmits in the interval (TCP).
    pub retransmits: Option<u32>,
    /// Sender: congestion window at the end of the interval, bytes (TCP).
    pub cwnd_bytes: Option<u64>,
    /// Sender: smoothed RTT at the end of the interval (TCP).
    pub rtt_seconds: Option<f64>,
}

/// A direction's total over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSum {
    /// Bytes.
    pub bytes: u64,
    /// Rate.
    pub bits_per_second: f64,
    /// Datagrams (UDP).
    pub datagrams: Option<u64>,
    /// Retransmits (TCP sender).
    pub retransmits: Option<u32>,
}

/// One reporting interval as the client saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Start, seconds since the test began.
    pub start_seconds: f64,
    /// End.
    pub end_seconds: f64,
    /// Whether this interval is inside the `-O` warm-up (left out of the totals).
    pub omitted: bool,
    /// Each stream.
    pub streams: Vec<IntervalStream>,
    /// Streams the client sends on.
    pub sum_sent: Option<IntervalSum>,
    /// Streams the client receives on.
    pub sum_received: Option<IntervalSum>,
}

impl IntervalSum {
    fn merged(
        a: &Option<IntervalSum>,
        b: &Option<IntervalSum>,
        seconds: f64,
    ) -> Option<IntervalSum> {
        let add = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
        };
        match (a, b) {
            (None, None) => None,
            (Some(s), None) | (None, Some(s)) => Some(IntervalSum {
                bits_per_second: s.bytes as f64 * 8.0 / seconds,
                ..s.clone()
            }),
            (Some(x), Some(y)) => {
                let bytes = x.bytes + y.bytes;
                Some(IntervalSum {
                    bytes,
                    bits_per_second: bytes as f64 * 8.0 / seconds,
                    datagrams: add(x.datagrams, y.datagrams),
                    retransmits: add(x.retransmits.map(u64::from), y.retransmits.map(u64::from))
                        .map(|r| r.min(u64::from(u32::MAX)) as u32),
                })
            }
        }
    }
}

impl Interval {
    /// This interval's totals only, without the per-stream lines.
    pub fn sums_only(mut self) -> Interval {
        self.streams.clear();
        self
    }

    /// One interval spanning `self` and the `next` one (totals only).
    pub fn merged(&self, next: &Interval) -> Interval {
        let seconds = next.end_seconds - self.start_seconds;
        Interval {
            start_seconds: self.start_seconds,
            end_seconds: next.end_seconds,
            omitted: self.omitted && next.omitted,
            streams: Vec::new(),
            sum_sent: IntervalSum::merged(&self.sum_sent, &next.sum_sent, seconds),
            sum_received: IntervalSum::merged(&self.sum_received, &next.sum_received, seconds),
        }
    }
}

impl Interval {
    /// `self` stretched over the `tail` that follows it, streams included: how a test's last
    /// slice too short to be an interval of its own (under a millisecond: its rate would be
    /// noise) still counts, so that the intervals hold every byte of the test.
    pub fn extended(&self, tail: &Interval) -> Interval {
        let seconds = tail.end_seconds - self.start_seconds;
        let mut streams = self.streams.clone();
        for t in &tail.streams {
            match streams
                .iter_mut()
                .find(|s| s.id == t.id && s.flow == t.flow && s.role == t.role)
            {
                Some(s) => {
                    s.bytes += t.bytes;
                    s.datagrams = match (s.datagrams, t.datagrams) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                    };
                    s.retransmits = match (s.retransmits, t.retransmits) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
                    };
                    s.cwnd_bytes = t.cwnd_bytes.or(s.cwnd_bytes);
                    s.rtt_seconds = t.rtt_seconds.or(s.rtt_seconds);
                }
                None => streams.push(t.clone()),
            }
        }
        for s in &mut streams {
            s.bits_per_second = s.bytes as f64 * 8.0 / seconds;
        }
        Interval {
            start_seconds: self.start_seconds,
            end_seconds: tail.end_seconds,
            omitted: self.omitted && tail.omitted,
            streams,
            sum_sent: IntervalSum::merged(&self.sum_sent, &tail.sum_sent, seconds),
            sum_received: IntervalSum::merged(&self.sum_received, &tail.sum_received, seconds),
        }
    }
}

impl IntervalStream {
    /// The share of its congestion window a TCP sender kept in flight over this interval: the
    /// bytes in flight the interval's rate needs at the smoothed RTT (rate x srtt, Little's
    /// law) over the window at the interval's end. Near 1 the window was full (window-limited:
    /// a loss-based congestion control grows it until a queue on the path overflows); well
    /// below 1 something else set the rate (the sender's own writes or the receiver's window),
    /// and the path's queue was not tested. `None` for receivers, UDP, and an interval without
    /// a window or an RTT.
    pub fn window_use(&self) -> Option<f64> {
        if self.role != Role::Sender {
            return None;
        }
        let (cwnd, rtt) = (self.cwnd_bytes?, self.rtt_seconds?);
        (cwnd > 0 && rtt > 0.0 && self.bits_per_second.is_finite())
            .then(|| self.bits_per_second / 8.0 * rtt / cwnd as f64)
    }
}

/// The median [`IntervalStream::window_use`] of stream `id` (`flow`) over the counted intervals
/// (the `-O` warm-up left out), with the number of intervals it is the median of; `None` when
/// no interval has one.
pub fn median_window_use<'a>(
    intervals: impl IntoIterator<Item = &'a Interval>,
    id: u32,
    flow: Flow,
) -> Option<(f64, usize)> {
    let mut uses: Vec<f64> = intervals
        .into_iter()
        .filter(|iv| !iv.omitted)
        .flat_map(|iv| &iv.streams)
        .filter(|s| s.id == id && s.flow == flow)
        .filter_map(IntervalStream::window_use)
        .collect();
    if uses.is_empty() {
        return None;
    }
    uses.sort_by(f64::total_cmp);
    let n = uses.len();
    let median = if n % 2 == 1 {
        uses[n / 2]
    } else {
        (uses[n / 2 - 1] + uses[n / 2]) / 2.0
    };
    Some((median, n))
}

/// Appends `interval` (totals only) to `kept`, merging neighbours pairwise whenever
/// [`MAX_SIDE_INTERVALS`] would be passed, so that the list always covers the whole test.
pub fn keep_interval(kept: &mut Vec<Interval>, interval: Interval) {
    kept.push(interval.sums_only());
    if kept.len() > MAX_SIDE_INTERVALS {
        let merged: Vec<Interval> = kept
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => a.merged(b),
                [a] => a.clone(),
                _ => unreachable!("chunks of at most 2"),
            })
            .collect();
        *kept = merged;
    }
}

/// Kernel network settings of one end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `net.ipv4.tcp_congestion_control`.
    pub default_congestion: Option<String>,
    /// `net.ipv4.tcp_available_congestion_control`.
    pub available_congestion: Option<String>,
    /// `net.core.default_qdisc` (loopback itself has no queue: `noqueue`).
    pub default_qdisc: Option<String>,
    /// The interface that carries the test, when it can be found (`lo` on loopback).
    pub interface: Option<String>,
    /// The queueing discipline actually on that interface (`tc qdisc show`): `noqueue` on
    /// loopback, whatever `default_qdisc` says.
    #[serde(default)]
    pub qdisc: Option<String>,
    /// Its MTU.
    pub mtu_bytes: Option<u32>,
    /// Its speed from sysfs, only for a NIC with a physical layer that reports one (see
    /// `iface::Reader::trusted_speed`: virtual interfaces report a constant, not a wire).
    pub link_speed_bits_per_second: Option<u64>,
    /// What the interface is, for people ("TAP device", "NIC (e1000e)").
    #[serde(default)]
    pub interface_kind: Option<String>,
    /// `net.core.rmem_max`.
    pub rmem_max_bytes: Option<u64>,
    /// `net.core.wmem_max`.
    pub wmem_max_bytes: Option<u64>,
    /// `net.ipv4.tcp_rmem` (min default max).
    pub tcp_rmem: Option<String>,
    /// `net.ipv4.tcp_wmem` (min default max).
    pub tcp_wmem: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Hypervisor, if the CPU says it runs under one (`/sys/class/dmi/id/sys_vendor`).
    pub virtualization: Option<String>,
    /// CPUs online.
    pub cpus: usize,
}
