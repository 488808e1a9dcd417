//! Where the load's bytes wait during `wirespeed latency`'s loaded phase, measured rather than
//! inferred: inside a wirespeed lab, the emulated link's queue as the lab's emulator samples
//! it (every millisecond, [`wirespeed_lab::emulator::occupancy`]), read through `lab status`
//! at the two ends of the loaded window; the probes' round trips in the same window are
//! compared with it.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use wirespeed_lab::emulator::link::DirectionCounters;
use wirespeed_lab::inside::InterfaceTruth;

pub(crate) use super::result::{LinkQueueWindow, ProbeLoadCount, QueueKind, QueueShare};

/// The interface this end leaves by towards `agent` (`lo` on loopback).
pub(crate) fn interface_to(agent: SocketAddr) -> Option<String> {
    if agent.ip().is_loopback() {
        return Some("lo".into());
    }
    let any: SocketAddr = match agent.ip() {
        IpAddr::V4(_) => "0.0.0.0:0".parse().expect("an address"),
        IpAddr::V6(_) => "[::]:0".parse().expect("an address"),
    };
    // A connected UDP socket sends nothing: it only asks the routing table for the source.
    let socket = UdpSocket::bind(any).ok()?;
    socket.connect(agent).ok()?;
    let local = socket.local_addr().ok()?.ip();
    wirespeed_net::env::Environment::collect(Some(local)).interface
}

/// The lab link `interface` is an end of, when this process runs inside a wirespeed lab
/// (`None` on loopback and anywhere else).
pub(crate) fn lab_port(interface: Option<&str>) -> Option<InterfaceTruth> {
    interface
        .filter(|i| *i != "lo")
        .and_then(wirespeed_lab::inside::lookup)
}

/// One look at what this host holds queued of the load.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HostSample {
    /// Written to the load's sockets here and not yet sent (`None`: the kernel does not say).
    pub(crate) unsent: Option<u64>,
    /// Received by the load's sockets here and not yet read.
    pub(crate) unread: u64,
    /// The qdisc of the interface towards the agent.
    pub(crate) qdisc: Option<u64>,
    /// The NIC's ring, as BQL counts it.
    pub(crate) ring: Option<u64>,
}

/// Samples what this host holds of a load against `agent` (its TCP connections to the agent's
/// port, and on loopback the agent's own ends) and the queues of `interface`.
pub(crate) fn sample_host(agent: SocketAddr, interface: Option<&str>) -> HostSample {
    let ours = |a: SocketAddr| a.ip() == agent.ip() && a.port() == agent.port();
    let mut s = HostSample::default();
    if let Some(sockets) = wirespeed_net::iface::tcp_queues() {
        for q in sockets.iter().filter(|q| ours(q.remote) || ours(q.local)) {
            if let Some(u) = q.unsent_bytes {
                *s.unsent.get_or_insert(0) += u;
            }
            s.unread += q.unread_bytes;
        }
    }
    if let Some(i) = interface {
        s.qdisc = wirespeed_net::iface::qdisc_backlog(i).map(|b| b.bytes);
        s.ring = wirespeed_net::iface::bql_inflight(i);
    }
    s
}

fn mean_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut n, mut sum, mut max) = (0usize, 0.0, 0.0f64);
    for v in values {
        n += 1;
        sum += v;
        max = max.max(v);
    }
    (n > 0).then(|| (sum / n as f64, max))
}

/// The split: each queue the run could see, from the host samples (taken every
/// `period_ms` over the loaded window), the lab's window, the interface's qdisc kind, the load's
/// measured rate (bit/s) and the probes' rise (ms, the UDP echo's median).
pub(crate) fn split(
    host: &[HostSample],
    period_ms: f64,
    interface: Option<&str>,
    qdisc_kind: Option<&str>,
    lab: Option<(&InterfaceTruth, &LinkQueueWindow)>,
    rate_bits_per_second: f64,
    probe_rise_ms: f64,
) -> Vec<QueueShare> {
    let at_rate = |bytes: f64| {
        if rate_bits_per_second > 0.0 {
            bytes * 8.0 / rate_bits_per_second * 1e3
        } else {
            f64::NAN
        }
    };
    let sampled = format!(
        "{} samples, one every {period_ms:.0} ms over the loaded window",
        host.len()
    );
    let mut out = Vec::new();
    let mut push =
        |queue, location: String, mm: Option<(f64, f64)>, probes, source: &str, remedy: &str| {
            if let Some((mean, max)) = mm {
                out.push(QueueShare {
                    queue,
                    location,
                    mean_bytes: mean,
                    max_bytes: max,
                    mean_ms: at_rate(mean),
                    probes_wait_here: probes,
                    source: source.to_string(),
                    remedy: remedy.to_string(),
                });
            }
        };
    push(
        QueueKind::SenderSocketBuffers,
        "the senders' socket buffers (the load's sockets here: written, not yet sent)".into(),
        mean_max(host.iter().filter_map(|s| s.unsent.map(|u| u as f64))),
        false,
        &format!("tcp_info's notsent bytes through sock_diag (as ss -tin), {sampled}"),
        "a smaller tcp_notsent_lowat (sysctl net.ipv4.tcp_notsent_lowat, or TCP_NOTSENT_LOWAT on the sending sockets, e.g. 128 KiB) keeps less unsent data queued; only the load's own next bytes wait behind it, not other flows",
    );
    push(
        QueueKind::ReceiverSocketBuffers,
        "the receivers' socket buffers (the load's sockets here: received, not yet read)".into(),
        mean_max(host.iter().map(|s| s.unread as f64)),
        false,
        &format!("the sockets' receive queues through sock_diag, {sampled}"),
        "the receiving application reading sooner (a core of its own) empties it; it delays only the load's own data",
    );
    let iface = interface.unwrap_or("the interface");
    push(
        QueueKind::Qdisc,
        format!(
            "the qdisc of {iface} ({})",
            qdisc_kind.unwrap_or("unknown kind")
        ),
        mean_max(host.iter().filter_map(|s| s.qdisc.map(|b| b as f64))),
        true,
        &format!("its backlog through rtnetlink (as tc -s qdisc), {sampled}"),
        "fq_codel as the qdisc (tc qdisc replace dev IF root fq_codel; net.core.default_qdisc) keeps the standing queue near 5 ms and serves sparse flows first; with BQL on the NIC the queue stays in the qdisc, where that works",
    );
    push(
        QueueKind::NicRing,
        format!("the transmit ring of {iface} (BQL in flight)"),
        mean_max(host.iter().filter_map(|s| s.ring.map(|b| b as f64))),
        true,
        &format!("byte_queue_limits/inflight in sysfs, {sampled}"),
        "BQL caps the ring at what keeps the NIC busy (byte_queue_limits/limit_max); a smaller ring (ethtool -G) does so without BQL",
    );
    if let Some((port, w)) = lab {
        if w.samples > 0 {
            let limit = match (port.queue_packets, port.queue_bytes) {
                (Some(n), _) => format!("{n} frames"),
                (_, Some(b)) => bytes_text(b as f64),
                _ => "its limit".into(),
            };
            let queue = match &port.aqm {
                Some(aqm) => format!("queue ({limit}, managed by {aqm})"),
                None => format!("drop-tail queue ({limit})"),
            };
            out.push(QueueShare {
                queue: QueueKind::LabLink,
                location: format!(
                    "the emulated link {}'s {queue} on the way out (lab {})",
                    port.link, port.lab
                ),
                mean_bytes: w.out_mean_bytes,
                max_bytes: f64::NAN,
                mean_ms: w.out_mean_ms,
                probes_wait_here: super::verdicts::probes_wait_in(
                    port.aqm.as_deref(),
                    w.out_mean_ms,
                    probe_rise_ms,
                ),
                source: format!(
                    "the lab's emulator, {} samples of its queue delay, one every 1 ms (lab status)",
                    w.samples
                ),
                remedy: super::verdicts::link_queue_remedy(
                    port.aqm.as_deref(),
                    w.out_mean_ms,
                    probe_rise_ms,
                ),
            });
        }
    } else if interface != Some("lo") && probe_rise_ms.is_finite() && rate_bits_per_second > 0.0 {
        // What the probes' rise leaves unexplained by this host's queues on their path.
        let here: f64 = out
            .iter()
            .filter(|q| q.probes_wait_here)
            .map(|q| q.mean_ms)
            .filter(|v| v.is_finite())
            .sum();
        let beyond = (probe_rise_ms - here).max(0.0);
        out.push(QueueShare {
            queue: QueueKind::Path,
            location: "beyond this host: the path's bottleneck queue (a switch, a router, the far host's NIC)".into(),
            mean_bytes: beyond / 1e3 * rate_bits_per_second / 8.0,
            max_bytes: f64::NAN,
            mean_ms: beyond,
            probes_wait_here: true,
            source: "inferred: the UDP probes' median rise less this host's qdisc and ring".into(),
            remedy: "an AQM at the bottleneck (fq_codel, CAKE) or, where the bottleneck is a host's NIC, BQL and fq_codel there".into(),
        });
    }
    out
}

/// Bytes in words, to three figures with a decimal prefix (`117 kB`, `1.2 MB`).
#[doc(hidden)]
pub fn bytes_text(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "-".into();
    }
    let bytes = bytes.max(0.0);
    let (v, unit) = match bytes {
        b if b >= 1e9 => (b / 1e9, "GB"),
        b if b >= 1e6 => (b / 1e6, "MB"),
        b if b >= 1e3 => (b / 1e3, "kB"),
        b => return format!("{b:.0} B"),
    };
    format!("{} {unit}", wirespeed_model::units::significant(v, 3))
}

/// The counters of this end's way out on the lab link and of the way back, at one instant.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct LinkSnapshot {
    /// Seconds from the run's start.
    pub at_seconds: f64,
    pub out: DirectionCounters,
    pub back: Option<DirectionCounters>,
}

/// Reads the lab's counters (`lab status`) as the emulator next writes them, within 200 ms.
pub(crate) fn snapshot(port: &InterfaceTruth, t0: Instant) -> Option<LinkSnapshot> {
    let status =
        wirespeed_lab::lifecycle::next_status(&port.lab, Duration::from_millis(500)).ok()?;
    // The emulator wrote it within the 5 ms before it was seen.
    let at = t0.elapsed().as_secs_f64() - 0.0025;
    let out = status
        .ports
        .iter()
        .find(|p| p.from == port.node && p.interface == port.interface)?;
    let back = status
        .ports
        .iter()
        .find(|p| p.link == out.link && p.to == port.node && p.from == out.to);
    Some(LinkSnapshot {
        at_seconds: at,
        out: out.counters,
        back: back.map(|p| p.counters),
    })
}

/// Mean sampled delay, ms, between two readings of one direction's counters.
fn mean_ms(a: &DirectionCounters, b: &DirectionCounters) -> (u64, f64) {
    let n = b.queue_delay_samples.saturating_sub(a.queue_delay_samples);
    let sum = b.queue_delay_sum_ns.saturating_sub(a.queue_delay_sum_ns);
    (
        n,
        if n == 0 {
            f64::NAN
        } else {
            sum as f64 / n as f64 / 1e6
        },
    )
}

/// The window between `a` and `b`, with the UDP echo round trips (`(sent at, rtt ms)`) sent in
/// it and the idle phase's median `idle_p50_ms`.
#[doc(hidden)]
pub fn window(
    port: &InterfaceTruth,
    a: &LinkSnapshot,
    b: &LinkSnapshot,
    udp: &[(f64, f64)],
    idle_p50_ms: f64,
) -> LinkQueueWindow {
    let (samples, out_mean_ms) = mean_ms(&a.out, &b.out);
    let back_mean_ms = match (&a.back, &b.back) {
        (Some(x), Some(y)) => mean_ms(x, y).1,
        _ => f64::NAN,
    };
    let inside: Vec<f64> = udp
        .iter()
        .filter(|(at, _)| *at >= a.at_seconds && *at < b.at_seconds)
        .map(|(_, rtt)| *rtt)
        .collect();
    let probe_mean = inside.iter().sum::<f64>() / inside.len() as f64;
    LinkQueueWindow {
        lab: port.lab.clone(),
        link: port.link.clone(),
        aqm: port.aqm.clone(),
        from_seconds: a.at_seconds,
        to_seconds: b.at_seconds,
        samples,
        out_mean_ms,
        back_mean_ms,
        out_mean_bytes: out_mean_ms / 1e3 * port.rate_bits_per_second as f64 / 8.0,
        out_drops: b.out.drops_queue.saturating_sub(a.out.drops_queue),
        probes: inside.len(),
        probe_mean_increase_ms: probe_mean - idle_p50_ms,
    }
}

/// Wire bits and frames one direction carried between two readings (Ethernet: each TAP frame
/// plus its FCS, preamble and inter-frame gap; frames this small need no padding).
fn wire_between(a: &DirectionCounters, b: &DirectionCounters, ethernet: bool) -> (f64, f64) {
    let frames = b.frames_in.saturating_sub(a.frames_in) as f64;
    let bytes = b.bytes_in.saturating_sub(a.bytes_in) as f64;
    let wire = if ethernet {
        bytes + frames * 24.0
    } else {
        bytes - frames * 14.0
    };
    (wire * 8.0, frames)
}

/// The lab's count of the idle window between `a` and `b`, with the run's estimate (bits each
/// way) for the probes sent in it.
pub(crate) fn probe_load(
    port: &InterfaceTruth,
    a: &LinkSnapshot,
    b: &LinkSnapshot,
    estimate_bits: (f64, f64),
) -> Option<ProbeLoadCount> {
    let seconds = b.at_seconds - a.at_seconds;
    if seconds <= 0.0 {
        return None;
    }
    let ethernet = matches!(port.layer, wirespeed_model::LinkLayer::Ethernet { .. });
    let (out_bits, out_frames) = wire_between(&a.out, &b.out, ethernet);
    let (back_bits, back_frames) = match (&a.back, &b.back) {
        (Some(x), Some(y)) => wire_between(x, y, ethernet),
        _ => (f64::NAN, f64::NAN),
    };
    let share = |bits: f64, rate: u64| bits / seconds / rate.max(1) as f64 * 100.0;
    Some(ProbeLoadCount {
        from_seconds: a.at_seconds,
        to_seconds: b.at_seconds,
        out_bits_per_second: out_bits / seconds,
        back_bits_per_second: back_bits / seconds,
        out_frames_per_second: out_frames / seconds,
        back_frames_per_second: back_frames / seconds,
        out_share_percent: share(out_bits, port.rate_bits_per_second),
        back_share_percent: share(back_bits, port.receive_rate_bits_per_second),
        estimate_out_bits_per_second: estimate_bits.0 / seconds,
        estimate_back_bits_per_second: estimate_bits.1 / seconds,
    })
}
