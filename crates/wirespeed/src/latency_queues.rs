//! Where the load's bytes wait during `wirespeed latency`'s loaded phase, measured rather than
//! inferred: inside a wirespeed lab, the emulated link's queue as the lab's emulator samples
//! it (every millisecond, [`wirespeed_lab::emulator::occupancy`]), read through `lab status`
//! at the two ends of the loaded window; the probes' round trips in the same window are
//! compared with it.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use wirespeed_lab::emulator::link::DirectionCounters;
use wirespeed_lab::inside::InterfaceTruth;

/// The lab link this end leaves by towards `agent`, when this process runs inside a wirespeed
/// lab (`None` on loopback and anywhere else).
pub(crate) fn lab_port(agent: SocketAddr) -> Option<InterfaceTruth> {
    if agent.ip().is_loopback() {
        return None;
    }
    let any: SocketAddr = match agent.ip() {
        IpAddr::V4(_) => "0.0.0.0:0".parse().expect("an address"),
        IpAddr::V6(_) => "[::]:0".parse().expect("an address"),
    };
    // A connected UDP socket sends nothing: it only asks the routing table for the source.
    let socket = UdpSocket::bind(any).ok()?;
    socket.connect(agent).ok()?;
    let local = socket.local_addr().ok()?.ip();
    let interface = wirespeed_net::env::Environment::collect(Some(local)).interface?;
    wirespeed_lab::inside::lookup(&interface)
}

/// Bytes in words, to three figures with a decimal prefix (`117 kB`, `1.2 MB`).
pub(crate) fn bytes_text(bytes: f64) -> String {
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
pub(crate) struct LinkSnapshot {
    /// Seconds from the run's start.
    pub(crate) at_seconds: f64,
    pub(crate) out: DirectionCounters,
    pub(crate) back: Option<DirectionCounters>,
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

/// What the lab's emulator saw of the link between two snapshots: the ground truth the
/// probes' round trips are compared with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LinkQueueWindow {
    pub(crate) lab: String,
    pub(crate) link: String,
    /// The window, seconds from the run's start.
    pub(crate) from_seconds: f64,
    pub(crate) to_seconds: f64,
    /// The emulator's samples of the way out's queue in the window (one per millisecond).
    pub(crate) samples: u64,
    /// Mean queue delay of the way out (this end's egress), and of the way back, ms.
    pub(crate) out_mean_ms: f64,
    pub(crate) back_mean_ms: f64,
    /// The way out's queue in bytes: its mean delay at the link's rate.
    pub(crate) out_mean_bytes: f64,
    /// Frames the way out's queue dropped in the window (full).
    pub(crate) out_drops: u64,
    /// The UDP echo probes sent in the window that came back, and their mean round trip
    /// minus the idle phase's median: what the queues added to a probe on average.
    pub(crate) probes: usize,
    pub(crate) probe_mean_increase_ms: f64,
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
pub(crate) fn window(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(samples: u64, sum_ns: u64, drops: u64) -> DirectionCounters {
        DirectionCounters {
            queue_delay_samples: samples,
            queue_delay_sum_ns: sum_ns,
            drops_queue: drops,
            ..DirectionCounters::default()
        }
    }

    #[test]
    fn bytes_read_as_three_figures() {
        assert_eq!(bytes_text(0.0), "0 B");
        assert_eq!(bytes_text(999.4), "999 B");
        assert_eq!(bytes_text(116_941.0), "117 kB");
        assert_eq!(bytes_text(1_204_000.0), "1.2 MB");
        assert_eq!(bytes_text(f64::NAN), "-");
    }

    #[test]
    fn the_window_is_the_difference_of_two_readings() {
        let port = InterfaceTruth {
            lab: "l".into(),
            namespace: "ws-l-h1".into(),
            node: "h1".into(),
            interface: "eth0".into(),
            link: "h1-h2".into(),
            rate_bits_per_second: 10_000_000,
            receive_rate_bits_per_second: 10_000_000,
            layer: wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 },
            mtu: 1500,
            half_duplex: false,
            queue_packets: Some(100),
            queue_bytes: None,
            aqm: None,
        };
        let a = LinkSnapshot {
            at_seconds: 3.0,
            out: counters(1_000, 5_000_000_000, 7),
            back: Some(counters(1_000, 0, 0)),
        };
        // 4000 samples of 60 ms on the way out, 0.1 ms back.
        let b = LinkSnapshot {
            at_seconds: 7.0,
            out: counters(5_000, 5_000_000_000 + 4_000 * 60_000_000, 9),
            back: Some(counters(5_000, 4_000 * 100_000, 0)),
        };
        let udp = [(2.0, 20.0), (3.5, 80.0), (5.0, 82.0), (7.5, 90.0)];
        let w = window(&port, &a, &b, &udp, 20.0);
        assert_eq!(w.samples, 4_000);
        assert!((w.out_mean_ms - 60.0).abs() < 1e-9);
        assert!((w.back_mean_ms - 0.1).abs() < 1e-9);
        // 60 ms at 10 Mbit/s.
        assert!((w.out_mean_bytes - 75_000.0).abs() < 1e-6);
        assert_eq!((w.out_drops, w.probes), (2, 2));
        assert!((w.probe_mean_increase_ms - 61.0).abs() < 1e-9);
    }
}
