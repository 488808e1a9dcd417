//! From a run's probes and its load to the figures of its result: each probe kind's idle and
//! loaded round trips, RPM, the load's goodput over the loaded window, the probes' own load,
//! the queue the rise stands for and where it waits, and the lab's and this host's measured
//! queues beside them. Pure, but for the lab's ground truth that `where_it_waits` looks up.

use std::net::IpAddr;

use wirespeed_lab::inside::InterfaceTruth;
use wirespeed_model::RateFormat;
use wirespeed_model::stats::quantile;
use wirespeed_model::units::ByteSize;

use super::queues::{self, HostSample, LinkSnapshot};
use super::result::{
    KindReport, LatencyInterval, LatencyResult, LatencyStats, LoadDirection, NetworkRoundTrip,
    Phase, ProbeKind, ProbeSample, Queue,
};
use super::text::time_ms;
use crate::throughput::ThroughputResult;
use crate::throughput::analysis::LinkRate;

/// The run's timeline: the idle phase's end, the load's start and end, and the settling time
/// left out at the load's start, seconds from the run's start.
#[derive(Debug, Clone, Copy)]
pub(super) struct Phases {
    pub(super) idle_end: f64,
    pub(super) load: (f64, f64),
    pub(super) settle: f64,
}

impl Phases {
    /// The phase a probe sent at `at` belongs to.
    pub(super) fn of(&self, at: f64) -> Phase {
        phase_of(at, self.idle_end, Some(self.load), self.settle)
    }
}

#[doc(hidden)]
pub fn phase_of(at: f64, idle_end: f64, load: Option<(f64, f64)>, settle: f64) -> Phase {
    match load {
        _ if at < idle_end => Phase::Idle,
        Some((start, _)) if at < start + settle => Phase::Settling,
        Some((_, end)) if at < end => Phase::Loaded,
        Some(_) => Phase::After,
        None => Phase::Idle,
    }
}

/// What one run observed, for its analysis: the probes and the phases they fell in, the path
/// they took, and the load's own document.
pub(super) struct Observed<'a> {
    pub(super) samples: &'a [ProbeSample],
    pub(super) phases: Phases,
    /// The UDP echo's IP packet, bytes (the probes' own load is counted from it).
    pub(super) udp_ip_bytes: usize,
    pub(super) agent_ip: IpAddr,
    pub(super) direction: LoadDirection,
    pub(super) bulk: Option<&'a ThroughputResult>,
}

impl Observed<'_> {
    fn in_phase(&self, kind: ProbeKind, phase: Phase) -> impl Iterator<Item = &ProbeSample> {
        self.samples
            .iter()
            .filter(move |s| s.kind == kind && self.phases.of(s.at_seconds) == phase)
    }

    /// Round trips of `kind` in `phase`, unanswered probes counted as lost.
    fn stats(&self, kind: ProbeKind, phase: Phase) -> LatencyStats {
        let picked: Vec<&ProbeSample> = self.in_phase(kind, phase).collect();
        let rtts: Vec<f64> = picked.iter().filter_map(|s| s.rtt_ms).collect();
        LatencyStats::of(&rtts, picked.len() - rtts.len())
    }

    /// The network's round trip, over the probes whose reply carried an accepted residence.
    fn network_round_trip(&self, kind: ProbeKind) -> Option<NetworkRoundTrip> {
        let all = || self.samples.iter().filter(move |s| s.kind == kind);
        all().any(|s| s.agent_residence_ms.is_some()).then(|| {
            let stats = |phase| {
                let v: Vec<f64> = self
                    .in_phase(kind, phase)
                    .filter_map(ProbeSample::network_rtt_ms)
                    .collect();
                LatencyStats::of(&v, 0)
            };
            let residence: Vec<f64> = self
                .in_phase(kind, Phase::Idle)
                .filter_map(|s| s.agent_residence_ms)
                .collect();
            NetworkRoundTrip {
                idle: stats(Phase::Idle),
                loaded: stats(Phase::Loaded),
                agent_residence_idle: LatencyStats::of(&residence, 0),
                residence_rejected: all().filter(|s| s.residence_rejected).count(),
                idle_to_transmit_stamp: self
                    .in_phase(kind, Phase::Idle)
                    .filter(|s| s.residence_to_transmit)
                    .count(),
                probe_ip_bytes: self.udp_ip_bytes,
            }
        })
    }

    /// Each probe kind, idle against loaded.
    fn kind_reports(&self) -> Vec<KindReport> {
        ProbeKind::ALL
            .iter()
            .map(|&kind| {
                let idle = self.stats(kind, Phase::Idle);
                let loaded = self.stats(kind, Phase::Loaded);
                KindReport {
                    kind,
                    increase_p50_ms: loaded.p50_ms - idle.p50_ms,
                    idle,
                    loaded,
                    network_round_trip: self.network_round_trip(kind),
                }
            })
            .collect()
    }

    /// The load's goodput each way (upload, download), bit/s, over the loaded window as the
    /// receiving end counted it: the agent for the upload, this end for the download; the
    /// whole transfer when no interval fits.
    fn load_goodput(&self) -> (Option<f64>, Option<f64>) {
        let Some(r) = self.bulk else {
            return (None, None);
        };
        let e = &r.end;
        let rev = e
            .sum_received_bidir_reverse
            .as_ref()
            .map(|s| s.bits_per_second);
        let whole = match self.direction {
            LoadDirection::Up => (Some(e.sum_received.bits_per_second), None),
            LoadDirection::Down => (None, Some(e.sum_received.bits_per_second)),
            LoadDirection::Both => (Some(e.sum_received.bits_per_second), rev),
        };
        let settle = self.phases.settle;
        (
            whole
                .0
                .map(|w| goodput_after(&r.agent_intervals, settle).unwrap_or(w)),
            whole
                .1
                .map(|w| goodput_after(&r.intervals, settle).unwrap_or(w)),
        )
    }

    /// The probes' own load on the wire over the loaded phase (Ethernet framing), bits this
    /// end sent and bits that came back.
    fn probe_wire_bits(&self) -> (f64, f64) {
        self.samples
            .iter()
            .filter(|s| self.phases.of(s.at_seconds) == Phase::Loaded)
            .map(|s| s.kind.wire_bits(self.udp_ip_bytes, self.agent_ip.is_ipv6()))
            .fold((0.0, 0.0), |(o, b), (x, y)| (o + x, b + y))
    }
}

/// The result's figures from what the run observed (the lab's and this host's queues are
/// added after, by [`lab_ground_truth`] and [`host_queues`]).
pub(super) fn analyse(
    seen: &Observed<'_>,
    partial_reason: Option<String>,
    rate_format: RateFormat,
) -> LatencyResult {
    let Phases {
        idle_end,
        load,
        settle,
    } = seen.phases;
    let kinds = seen.kind_reports();
    let (up, down) = seen.load_goodput();
    let load_rate = up.unwrap_or(0.0).max(down.unwrap_or(0.0));
    let loaded_seconds = (load.1 - load.0 - settle).max(0.0);
    let per_second = |bits: f64| {
        if loaded_seconds > 0.0 {
            bits / loaded_seconds
        } else {
            f64::NAN
        }
    };
    let (probe_out, probe_back) = seen.probe_wire_bits();
    let (probe_out, probe_back) = (per_second(probe_out), per_second(probe_back));
    let link_rate = seen.bulk.map(|r| r.link_rate.clone()).unwrap_or_default();
    let queue = queue_of_the_rise(&kinds, load_rate, seen.agent_ip, &link_rate);
    let rpm_idle = rpm(&kinds, |k| &k.idle);
    let rpm_loaded = rpm(&kinds, |k| &k.loaded);
    LatencyResult {
        idle_seconds: idle_end,
        loaded_seconds,
        settle_seconds: settle,
        load_started_seconds: Some(load.0),
        load_ended_seconds: Some(load.1),
        kinds,
        rpm_idle,
        rpm_loaded,
        upload_bits_per_second: up,
        download_bits_per_second: down,
        probe_bits_per_second: probe_out + probe_back,
        probe_out_bits_per_second: probe_out,
        probe_back_bits_per_second: probe_back,
        probe_share_percent: if load_rate > 0.0 {
            probe_out.max(probe_back) / load_rate * 100.0
        } else {
            f64::NAN
        },
        probe_share_of_link_percent: probe_share_of_link(&link_rate, probe_out, probe_back),
        link_rate,
        queue,
        link_queue: None,
        probe_load_on_link: None,
        queues: Vec::new(),
        intervals: intervals(seen.samples, &seen.phases),
        samples: seen.samples.to_vec(),
        partial: partial_reason.is_some(),
        partial_reason,
        rate_format,
    }
}

/// The probes' own load each way against the link's rate that way, percent, where the link
/// is known.
fn probe_share_of_link(link_rate: &LinkRate, probe_out: f64, probe_back: f64) -> Option<f64> {
    match link_rate {
        LinkRate::Lab {
            bits_per_second,
            receive_bits_per_second,
            ..
        } => Some(
            (probe_out / *bits_per_second.max(&1) as f64)
                .max(probe_back / *receive_bits_per_second.max(&1) as f64)
                * 100.0,
        ),
        LinkRate::Given { bits_per_second }
        | LinkRate::Nic {
            bits_per_second, ..
        } => Some(probe_out.max(probe_back) / *bits_per_second.max(&1) as f64 * 100.0),
        LinkRate::Unknown { .. } => None,
    }
}

/// The delay the load added to the UDP echo, the bytes it stands for at the load's rate, and
/// where they wait.
fn queue_of_the_rise(
    kinds: &[KindReport],
    load_rate: f64,
    agent_ip: IpAddr,
    link_rate: &LinkRate,
) -> Option<Queue> {
    kinds
        .iter()
        .find(|k| k.kind == ProbeKind::UdpEcho)
        .filter(|u| u.increase_p50_ms.is_finite() && load_rate > 0.0)
        .map(|u| {
            let bytes = (u.increase_p50_ms / 1e3 * load_rate / 8.0).max(0.0);
            let (location, remedy) = where_it_waits(agent_ip, link_rate);
            Queue {
                delay_ms: u.increase_p50_ms,
                bytes,
                location,
                remedy,
            }
        })
}

/// The lab's own counts read at the two ends of a window, each `None` when unread.
pub(super) type LabWindow = (Option<LinkSnapshot>, Option<LinkSnapshot>);

/// Inside a lab: the link's queue over the loaded window beside the UDP probes' round trips,
/// and the probes' own load on the link as the lab counted it over the idle window.
pub(super) fn lab_ground_truth(
    result: &mut LatencyResult,
    port: &InterfaceTruth,
    (loaded, idle): (LabWindow, LabWindow),
    seen: &Observed<'_>,
) {
    if let (Some(a), Some(b)) = loaded {
        let udp: Vec<(f64, f64)> = seen
            .samples
            .iter()
            .filter(|s| s.kind == ProbeKind::UdpEcho)
            .filter_map(|s| s.rtt_ms.map(|r| (s.at_seconds, r)))
            .collect();
        let idle_p50 = result
            .kinds
            .iter()
            .find(|k| k.kind == ProbeKind::UdpEcho)
            .map_or(f64::NAN, |k| k.idle.p50_ms);
        result.link_queue = Some(queues::window(port, &a, &b, &udp, idle_p50));
    }
    if let (Some(a), Some(b)) = idle {
        let bits = seen
            .samples
            .iter()
            .filter(|s| s.at_seconds >= a.at_seconds && s.at_seconds < b.at_seconds)
            .fold((0.0, 0.0), |(o, r), s| {
                let (x, y) = s.kind.wire_bits(seen.udp_ip_bytes, seen.agent_ip.is_ipv6());
                (o + x, r + y)
            });
        result.probe_load_on_link = queues::probe_load(port, &a, &b, bits);
    }
}

/// This host's queues, the lab link's and the path's share of the load's bytes over the
/// loaded window, from this host's samples every `sample_period_ms`.
pub(super) fn host_queues(
    result: &mut LatencyResult,
    host: &[HostSample],
    sample_period_ms: f64,
    (interface, qdisc_kind): (Option<&str>, Option<&str>),
    lab_port: Option<&InterfaceTruth>,
) {
    let rate = result
        .upload_bits_per_second
        .unwrap_or(0.0)
        .max(result.download_bits_per_second.unwrap_or(0.0));
    let rise = result
        .kinds
        .iter()
        .find(|k| k.kind == ProbeKind::UdpEcho)
        .map_or(f64::NAN, |k| k.increase_p50_ms);
    result.queues = queues::split(
        host,
        sample_period_ms,
        interface,
        qdisc_kind,
        lab_port.zip(result.link_queue.as_ref()),
        rate,
        rise,
    );
}

/// RPM after the responsiveness draft: 60 s over the weighted mean of the trimmed means, with
/// the weights the draft gives its probes (foreign-flow TCP handshake and request 1/6 each of
/// the three foreign probes, self probes 1/2). wirespeed has no TLS probe and no probe on the
/// load's own connections, so the foreign half is split between the handshake and the
/// request on the new connection, and the kept connection stands for the self half.
#[doc(hidden)]
pub fn rpm(kinds: &[KindReport], pick: impl Fn(&KindReport) -> &LatencyStats) -> f64 {
    let tm = |k: ProbeKind| {
        kinds
            .iter()
            .find(|r| r.kind == k)
            .map_or(f64::NAN, |r| pick(r).trimmed_mean_ms)
    };
    let weighted = 0.25 * tm(ProbeKind::TcpConnect)
        + 0.25 * tm(ProbeKind::RrNewConnection)
        + 0.5 * tm(ProbeKind::RrKeptConnection);
    if weighted.is_finite() && weighted > 0.0 {
        60_000.0 / weighted
    } else {
        f64::NAN
    }
}

/// The rate received over the intervals that start `settle` seconds or more into the transfer
/// (the loaded window, slow start left out), bit/s; `None` when none does.
fn goodput_after(intervals: &[wirespeed_net::report::Interval], settle: f64) -> Option<f64> {
    let (bytes, seconds) = intervals
        .iter()
        .filter(|i| !i.omitted && i.start_seconds >= settle - 1e-6)
        .filter_map(|i| {
            let s = i.sum_received.as_ref()?;
            Some((s.bytes, i.end_seconds - i.start_seconds))
        })
        .fold((0u64, 0.0), |(b, t), (x, d)| (b + x, t + d));
    (seconds > 0.0).then(|| bytes as f64 * 8.0 / seconds)
}

/// Which queue holds the packets, from what the run knows of the path.
fn where_it_waits(agent_ip: IpAddr, link: &LinkRate) -> (String, String) {
    if agent_ip.is_loopback() {
        return (
            "loopback has no link or qdisc queue: the bytes wait in the TCP sockets' own buffers (the senders' unsent data and the receivers' queues), which the probes on other flows share the CPU with".into(),
            "a smaller net.ipv4.tcp_notsent_lowat (or TCP_NOTSENT_LOWAT on the load's sockets) keeps less unsent data queued in the sender".into(),
        );
    }
    match link {
        LinkRate::Lab {
            link,
            lab,
            interface,
            bits_per_second,
            ..
        } => {
            let truth = wirespeed_lab::inside::lookup(interface);
            let limit = truth.as_ref().and_then(|t| match (t.queue_packets, t.queue_bytes) {
                // A full queue of full frames, at the link's rate.
                (Some(n), _) => Some((
                    format!("{n} frames"),
                    f64::from(n) * 1538.0 * 8.0 / *bits_per_second as f64 * 1e3,
                )),
                (_, Some(b)) => Some((
                    ByteSize::from_bytes(b).to_string(),
                    b as f64 * 8.0 / *bits_per_second as f64 * 1e3,
                )),
                _ => None,
            });
            let limit = limit.map_or_else(String::new, |(what, ms)| {
                format!(" (it holds {what}: {} when full)", time_ms(ms))
            });
            match truth.and_then(|t| t.aqm) {
                Some(aqm) => (
                    format!("the emulated link {link} of lab {lab}: its queue{limit}, managed by {aqm}"),
                    "an AQM manages it (how much it held, and whether the probes waited in it, is the lab's own count below)".into(),
                ),
                None => (
                    format!("the emulated link {link} of lab {lab}: its drop-tail queue{limit} fills ahead of the serializer"),
                    "an AQM on the link (aqm = \"fq_codel\" or \"codel\" in the lab file) keeps the standing queue near its target; a shorter `queue` caps it".into(),
                ),
            }
        }
        _ => (
            "a queue along the path: the sender's qdisc and NIC ring, or a queue at the path's bottleneck".into(),
            "at this host: fq_codel as the qdisc and BQL on the NIC keep the host's share short; at the bottleneck: an AQM (fq_codel, CAKE)".into(),
        ),
    }
}

/// One second's interval: its phase and each kind's median of the round trips in `rtts`
/// (indexed as [`ProbeKind::ALL`]).
pub(super) fn interval_of(start: f64, phase: Phase, rtts: &[Vec<f64>; 4]) -> LatencyInterval {
    LatencyInterval {
        start_seconds: start,
        end_seconds: start + 1.0,
        phase,
        p50_ms: ProbeKind::ALL
            .iter()
            .zip(rtts)
            .filter(|(_, r)| !r.is_empty())
            .map(|(&k, r)| (k, quantile(r, 0.5)))
            .collect(),
    }
}

/// The round trips of each kind sent in `[start, start + 1)`.
pub(super) fn second_of(samples: &[ProbeSample], start: f64) -> [Vec<f64>; 4] {
    let mut rtts: [Vec<f64>; 4] = Default::default();
    for s in samples
        .iter()
        .filter(|s| s.at_seconds >= start && s.at_seconds < start + 1.0)
    {
        if let (Some(r), Some(k)) = (s.rtt_ms, ProbeKind::ALL.iter().position(|&k| k == s.kind)) {
            rtts[k].push(r);
        }
    }
    rtts
}

/// The run second by second.
fn intervals(samples: &[ProbeSample], phases: &Phases) -> Vec<LatencyInterval> {
    let end = samples.iter().map(|s| s.at_seconds).fold(0.0, f64::max);
    let seconds = (end.ceil() as usize).min(7200);
    // One pass over the samples, into one bucket per second and kind.
    let mut buckets: Vec<[Vec<f64>; 4]> = vec![Default::default(); seconds];
    for s in samples {
        let (Some(r), Some(k)) = (s.rtt_ms, ProbeKind::ALL.iter().position(|&k| k == s.kind))
        else {
            continue;
        };
        if let Some(b) = buckets.get_mut(s.at_seconds as usize) {
            b[k].push(r);
        }
    }
    buckets
        .iter()
        .enumerate()
        .map(|(i, rtts)| {
            let a = i as f64;
            interval_of(a, phases.of(a), rtts)
        })
        .collect()
}
