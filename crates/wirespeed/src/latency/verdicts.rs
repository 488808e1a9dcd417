//! The verdicts of `latency`: what the load added to the probes' round trips, where it
//! waited, and what would shrink it. Each must hold under every load kind (TCP flows or a UDP
//! stream) and direction (issue 31): with load both ways a round trip crosses both
//! directions' queues, and under fq_codel the probes' own rise, not the queue the load's
//! flows build, says what the probes waited.

use std::fmt;
use std::net::SocketAddr;

use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_report::{Document, Severity};

use super::queues::bytes_text;
use super::result::{LatencyParams, LatencyResult, LoadDirection, ProbeKind, QueueKind};
use super::text::time_ms;

/// fq_codel's and CoDel's target sojourn time (RFC 8289 section 4.4; RFC 8290): a standing
/// queue above twice it is not "held near its target".
const AQM_TARGET_MS: f64 = 5.0;

/// The load in words for the header: TCP flows, or a UDP stream per flow at its rate, and the
/// direction (issue 31: under `--udp-load` the header said "TCP flow(s)").
#[doc(hidden)]
pub fn load_words(
    flows: u32,
    udp_load_bits_per_second: Option<u64>,
    direction: LoadDirection,
) -> String {
    let way = match direction {
        LoadDirection::Up => "up",
        LoadDirection::Down => "down",
        LoadDirection::Both => "each way",
    };
    match udp_load_bits_per_second {
        Some(bps) => format!(
            "{flows} UDP flow(s) of {} each, {way}",
            RateFormat::Adaptive.format(bps as f64)
        ),
        None => format!("{flows} TCP flow(s) {way}"),
    }
}

/// Everything `latency` concludes, typed: the kind a script acts on and the figures it rests on
/// (seconds, bytes, bits per second, a share as a 0-1 ratio); the sentence a person reads is
/// its `Display`. Kinds are stable once released. A finding with many figures holds them in a
/// struct of its own, whose `Display` is its sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum LatencyFinding {
    /// Warning: the run ended early, so no verdict is drawn from its part-figures.
    PartialResult {
        reason: String,
    },
    /// Warning: no UDP echo came back in a phase, so there is no rise to judge.
    UdpEchoUnanswered,
    /// Warning: more than a tenth of one kind of probe went unanswered under load.
    ProbesLostUnderLoad {
        probe: ProbeKind,
        lost: usize,
        probes: usize,
    },
    NoAddedDelay(NoAddedDelay),
    LoadAddedDelay(LoadAddedDelay),
    LabLinkQueue(LabLinkQueue),
    QueuesWaited(QueuesWaited),
    QueueStanding(QueueStanding),
    /// Round trips per minute under load and idle (the responsiveness draft's RPM).
    Responsiveness {
        loaded_rpm: f64,
        idle_rpm: f64,
    },
    /// Warning: the probes' own packets are a percent or more of the link or measured rate.
    ProbeLoadHeavy {
        share: f64,
        share_of: ShareOf,
    },
    RequestResponse(RequestResponse),
    /// Warning (`--rr`): interrupted, the figures are of the transactions before it.
    Interrupted,
}

/// The loaded median is within the idle phase's own spread: no queue worth the name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct NoAddedDelay {
    pub idle_round_trip_seconds: f64,
    pub loaded_round_trip_seconds: f64,
    pub loaded_p99_round_trip_seconds: f64,
    pub idle_spread_seconds: f64,
}

/// The load raised the median UDP round trip: how much, the bytes that stands for at each
/// loaded direction's measured rate, where it waited and what would shrink it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct LoadAddedDelay {
    pub added_delay_seconds: f64,
    pub idle_round_trip_seconds: f64,
    pub loaded_round_trip_seconds: f64,
    pub loaded_p99_round_trip_seconds: f64,
    pub direction: LoadDirection,
    pub upload_bits_per_second: Option<f64>,
    pub download_bits_per_second: Option<f64>,
    pub location: String,
    pub remedy: String,
    #[serde(skip)]
    pub format: RateFormat,
}

/// The lab emulator's own samples of the link's queues over the loaded window: the ground
/// truth beside the probes' rise.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct LabLinkQueue {
    pub(crate) link: String,
    pub(crate) aqm: Option<String>,
    pub(crate) window_seconds: f64,
    pub(crate) out_queue_seconds: f64,
    pub(crate) out_queue_bytes: f64,
    pub(crate) out_drops: u64,
    pub(crate) back_queue_seconds: f64,
    pub(crate) probe_rise_seconds: f64,
}

/// Where the load's bytes waited, all the queues measured, and which the probes cross.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct QueuesWaited {
    pub(crate) rate_bits_per_second: f64,
    pub(crate) queues: Vec<QueueWait>,
    pub(crate) probes_cross: Vec<QueueKind>,
    pub(crate) loopback: bool,
    #[serde(skip)]
    pub(crate) format: RateFormat,
}

/// One queue held a kilobyte or more on average: its size and what would shrink it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct QueueStanding {
    pub queue: QueueKind,
    pub(crate) location: String,
    pub(crate) mean_bytes: f64,
    pub max_bytes: Option<f64>,
    pub(crate) mean_seconds: f64,
    pub probes_wait_here: bool,
    pub(crate) remedy: String,
}

/// `--rr`: the transaction rate and its median round trip.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct RequestResponse {
    pub(crate) transactions_per_second: f64,
    pub(crate) request_bytes: u32,
    pub(crate) response_bytes: u32,
    pub(crate) new_connection: bool,
    pub(crate) median_round_trip_seconds: f64,
}

/// One queue in the split of the load's bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct QueueWait {
    pub(crate) queue: QueueKind,
    pub(crate) location: String,
    pub(crate) mean_bytes: f64,
    pub(crate) mean_seconds: f64,
}

/// What the probes' own load is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[doc(hidden)]
pub enum ShareOf {
    /// The link's configured or negotiated rate.
    Link,
    /// The load's measured rate (the link's rate unknown).
    MeasuredRate,
}

impl LatencyFinding {
    /// Whether this is a verdict on the result or a warning about trusting it.
    #[doc(hidden)]
    pub fn severity(&self) -> Severity {
        match self {
            LatencyFinding::PartialResult { .. }
            | LatencyFinding::UdpEchoUnanswered
            | LatencyFinding::ProbesLostUnderLoad { .. }
            | LatencyFinding::ProbeLoadHeavy { .. }
            | LatencyFinding::Interrupted => Severity::Warning,
            _ => Severity::Verdict,
        }
    }
}

/// Seconds as `time_ms` writes milliseconds.
fn time_s(seconds: f64) -> String {
    time_ms(seconds * 1e3)
}

impl fmt::Display for LatencyFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LatencyFinding::PartialResult { reason } => {
                write!(f, "partial result ({reason}): no verdict")
            }
            LatencyFinding::UdpEchoUnanswered => f.write_str(
                "no UDP echo answered in one of the phases: no latency verdict (is UDP to the agent blocked?)",
            ),
            LatencyFinding::ProbesLostUnderLoad {
                probe,
                lost,
                probes,
            } => write!(
                f,
                "{}: {lost} of {probes} probes unanswered under load",
                probe.label()
            ),
            LatencyFinding::NoAddedDelay(n) => fmt::Display::fmt(n, f),
            LatencyFinding::LoadAddedDelay(d) => fmt::Display::fmt(d, f),
            LatencyFinding::LabLinkQueue(q) => fmt::Display::fmt(q, f),
            LatencyFinding::QueuesWaited(q) => fmt::Display::fmt(q, f),
            LatencyFinding::QueueStanding(q) => fmt::Display::fmt(q, f),
            LatencyFinding::Responsiveness {
                loaded_rpm,
                idle_rpm,
            } => write!(
                f,
                "responsiveness: {loaded_rpm:.0} RPM under load ({idle_rpm:.0} idle)"
            ),
            LatencyFinding::ProbeLoadHeavy { share, share_of } => write!(
                f,
                "the probes' own load is {:.1}% of {}: lengthen --probe-interval",
                share * 100.0,
                match share_of {
                    ShareOf::Link => "the link",
                    ShareOf::MeasuredRate => "the measured rate",
                }
            ),
            LatencyFinding::RequestResponse(r) => fmt::Display::fmt(r, f),
            LatencyFinding::Interrupted => {
                f.write_str("interrupted: the figures are of the transactions before it")
            }
        }
    }
}

impl fmt::Display for NoAddedDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the load added no measurable delay: median UDP round trip {} idle, {} loaded (p99 {}), a difference within the idle phase's own spread ({})",
            time_s(self.idle_round_trip_seconds),
            time_s(self.loaded_round_trip_seconds),
            time_s(self.loaded_p99_round_trip_seconds),
            time_s(self.idle_spread_seconds),
        )
    }
}

/// What the load added to the probes' median round trip, and the bytes it stands for.
/// Loaded one way, the rise waits in that direction's queue, at that direction's measured
/// rate. Loaded both ways, a round trip crosses both directions' queues: the rise is their
/// sum, and the round trips cannot split it, so each direction's figure is given as the
/// most it could hold (all of the rise in its queue, at its rate), never one sum at the
/// faster rate (issue 31: "147 kB standing in a queue" for two queues).
impl fmt::Display for LoadAddedDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LoadAddedDelay {
            added_delay_seconds,
            idle_round_trip_seconds,
            loaded_round_trip_seconds,
            loaded_p99_round_trip_seconds,
            direction,
            upload_bits_per_second: up,
            download_bits_per_second: down,
            location,
            remedy,
            format,
        } = self;
        let bytes_at = |bps: f64| bytes_text((added_delay_seconds * bps / 8.0).max(0.0));
        let medians = format!(
            "{} idle, {} loaded, p99 {}",
            time_s(*idle_round_trip_seconds),
            time_s(*loaded_round_trip_seconds),
            time_s(*loaded_p99_round_trip_seconds)
        );
        let one_way = |bps: Option<f64>, name: &str| match bps.filter(|b| b.is_finite() && *b > 0.0)
        {
            Some(b) => format!(
                "at the {name}'s {} that is {} standing in its queue",
                format.format(b),
                bytes_at(b)
            ),
            None => format!("the {name}'s rate was not measured, so its bytes are not known"),
        };
        match direction {
            LoadDirection::Up | LoadDirection::Down => {
                let (name, rate) = if *direction == LoadDirection::Up {
                    ("upload", *up)
                } else {
                    ("download", *down)
                };
                write!(
                    f,
                    "the load added {} to the median UDP round trip ({medians}): {}; where: {location}; {remedy}",
                    time_s(*added_delay_seconds),
                    one_way(rate, name)
                )
            }
            LoadDirection::Both => write!(
                f,
                "the load added {} to the median UDP round trip ({medians}): loaded both ways, a round trip crosses both directions' queues, so that is their sum, which round trips cannot split; were it all one way's: {}; or {}; where: {location}; {remedy}",
                time_s(*added_delay_seconds),
                one_way(*up, "upload"),
                one_way(*down, "download")
            ),
        }
    }
}

impl fmt::Display for LabLinkQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let both = self.out_queue_seconds + self.back_queue_seconds.max(0.0);
        write!(
            f,
            "the lab's own count: over the same {:.1} s of load its emulator, sampling the queue of link {} every 1 ms, found {} on average on the way out ({} at the link's rate; {} frames dropped at the full queue) and {} on the way back; the UDP probes' mean round trip rose by {} in that window ({:.0}% of the queues' {}){}",
            self.window_seconds,
            self.link,
            time_s(self.out_queue_seconds),
            bytes_text(self.out_queue_bytes),
            self.out_drops,
            time_s(self.back_queue_seconds),
            time_s(self.probe_rise_seconds),
            self.probe_rise_seconds / both * 100.0,
            time_s(both),
            if self
                .aqm
                .as_deref()
                .is_some_and(|a| a.starts_with("fq_codel"))
            {
                ": fq_codel serves a sparse flow such as the probes' ahead of the load's queue, so they wait less than it holds"
            } else {
                ""
            },
        )
    }
}

impl fmt::Display for QueuesWaited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list: Vec<String> = self
            .queues
            .iter()
            .map(|q| {
                format!(
                    "{}: {} ({})",
                    q.location,
                    bytes_text(q.mean_bytes),
                    time_s(q.mean_seconds)
                )
            })
            .collect();
        let crossed: Vec<&str> = self
            .probes_cross
            .iter()
            .map(|q| match q {
                QueueKind::Qdisc => "the qdisc",
                QueueKind::NicRing => "the ring",
                QueueKind::LabLink => "the emulated link",
                _ => "the path beyond this host",
            })
            .collect();
        write!(
            f,
            "where the load's bytes waited, on average over the loaded window (ms at the load's {}): {}; the probes cross {}{}",
            self.format.format(self.rate_bits_per_second),
            list.join("; "),
            if crossed.is_empty() {
                "none of these".to_string()
            } else {
                crossed.join(" and ")
            },
            if self.loopback {
                " (on loopback the qdisc is noqueue and there is no link: what delays the probes there is the CPU they share with the load)"
            } else {
                ""
            }
        )
    }
}

impl fmt::Display for QueueStanding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "queue: {} held {} on average ({}{}); {}; shrink it: {}",
            self.location,
            bytes_text(self.mean_bytes),
            if self.queue == QueueKind::LabLink {
                format!("{} of delay at the link's rate", time_s(self.mean_seconds))
            } else {
                format!("{} at the load's rate", time_s(self.mean_seconds))
            },
            match self.max_bytes {
                Some(max) => format!("; at most {}", bytes_text(max)),
                None => String::new(),
            },
            if self.probes_wait_here {
                "every packet that leaves this way waits in it, the probes included"
            } else {
                "only the load's own data waits in it, not the probes on flows of their own"
            },
            self.remedy,
        )
    }
}

impl fmt::Display for RequestResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.0} transactions/s of {} B out and {} B back{}: {} median round trip",
            self.transactions_per_second,
            self.request_bytes,
            self.response_bytes,
            if self.new_connection {
                ", each on a new connection"
            } else {
                ""
            },
            time_s(self.median_round_trip_seconds),
        )
    }
}

/// Adds the run's findings to its document, in the order `judge` gives them.
pub(super) fn verdicts(doc: &mut Document<LatencyParams, LatencyResult>) {
    for finding in judge(&doc.parameters, &doc.result) {
        match finding.severity() {
            Severity::Verdict => doc.verdict(&finding),
            Severity::Warning => doc.warning(&finding),
        }
    }
}

/// The run's verdicts and warnings, from its figures alone.
#[doc(hidden)]
pub fn judge(params: &LatencyParams, r: &LatencyResult) -> Vec<LatencyFinding> {
    let mut out = Vec::new();
    if let Some(why) = &r.partial_reason {
        out.push(LatencyFinding::PartialResult {
            reason: why.clone(),
        });
        return out;
    }
    let udp = r.kinds.iter().find(|k| k.kind == ProbeKind::UdpEcho);
    let Some(udp) = udp.filter(|u| u.idle.p50_ms.is_finite() && u.loaded.p50_ms.is_finite()) else {
        out.push(LatencyFinding::UdpEchoUnanswered);
        return out;
    };
    for k in &r.kinds {
        if k.loaded.probes > 0 && k.loaded.lost * 10 > k.loaded.probes {
            out.push(LatencyFinding::ProbesLostUnderLoad {
                probe: k.kind,
                lost: k.loaded.lost,
                probes: k.loaded.probes,
            });
        }
    }
    if let Some(q) = &r.queue {
        // Below the idle phase's own spread the difference is noise, not a queue.
        let noise = (udp.idle.p90_ms - udp.idle.p50_ms).max(0.05);
        if q.delay_ms <= noise {
            out.push(LatencyFinding::NoAddedDelay(NoAddedDelay {
                idle_round_trip_seconds: udp.idle.p50_ms / 1e3,
                loaded_round_trip_seconds: udp.loaded.p50_ms / 1e3,
                loaded_p99_round_trip_seconds: udp.loaded.p99_ms / 1e3,
                idle_spread_seconds: noise / 1e3,
            }));
        } else {
            out.push(LatencyFinding::LoadAddedDelay(LoadAddedDelay {
                added_delay_seconds: q.delay_ms / 1e3,
                idle_round_trip_seconds: udp.idle.p50_ms / 1e3,
                loaded_round_trip_seconds: udp.loaded.p50_ms / 1e3,
                loaded_p99_round_trip_seconds: udp.loaded.p99_ms / 1e3,
                direction: params.direction,
                upload_bits_per_second: r.upload_bits_per_second,
                download_bits_per_second: r.download_bits_per_second,
                location: q.location.clone(),
                remedy: q.remedy.clone(),
                format: r.rate_format,
            }));
        }
    }
    if let Some(w) = &r.link_queue
        && w.samples > 0
    {
        out.push(LatencyFinding::LabLinkQueue(LabLinkQueue {
            link: w.link.clone(),
            aqm: w.aqm.clone(),
            window_seconds: w.to_seconds - w.from_seconds,
            out_queue_seconds: w.out_mean_ms / 1e3,
            out_queue_bytes: w.out_mean_bytes,
            out_drops: w.out_drops,
            back_queue_seconds: w.back_mean_ms / 1e3,
            probe_rise_seconds: w.probe_mean_increase_ms / 1e3,
        }));
    }
    out.extend(queue_findings(params, r));
    if r.rpm_loaded.is_finite() {
        out.push(LatencyFinding::Responsiveness {
            loaded_rpm: r.rpm_loaded,
            idle_rpm: r.rpm_idle,
        });
    }
    match r.probe_share_of_link_percent {
        Some(share) if share >= 1.0 => out.push(LatencyFinding::ProbeLoadHeavy {
            share: share / 100.0,
            share_of: ShareOf::Link,
        }),
        None if r.probe_share_percent.is_finite() && r.probe_share_percent >= 1.0 => {
            out.push(LatencyFinding::ProbeLoadHeavy {
                share: r.probe_share_percent / 100.0,
                share_of: ShareOf::MeasuredRate,
            })
        }
        _ => {}
    }
    out
}

/// The split of the load's bytes between the queues the run measured: one finding naming them
/// all, then one per queue that held at least a kilobyte, with what would shrink it.
fn queue_findings(params: &LatencyParams, r: &LatencyResult) -> Vec<LatencyFinding> {
    if r.queues.is_empty() {
        return Vec::new();
    }
    let loopback = params
        .agent
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.ip().is_loopback());
    let rate = r
        .upload_bits_per_second
        .unwrap_or(0.0)
        .max(r.download_bits_per_second.unwrap_or(0.0));
    let mut out = vec![LatencyFinding::QueuesWaited(QueuesWaited {
        rate_bits_per_second: rate,
        queues: r
            .queues
            .iter()
            .map(|q| QueueWait {
                queue: q.queue,
                location: q.location.clone(),
                mean_bytes: q.mean_bytes,
                mean_seconds: q.mean_ms / 1e3,
            })
            .collect(),
        probes_cross: r
            .queues
            .iter()
            .filter(|q| q.probes_wait_here)
            .map(|q| q.queue)
            .collect(),
        loopback,
        format: r.rate_format,
    })];
    for q in r.queues.iter().filter(|q| q.mean_bytes >= 1000.0) {
        out.push(LatencyFinding::QueueStanding(QueueStanding {
            queue: q.queue,
            location: q.location.clone(),
            mean_bytes: q.mean_bytes,
            max_bytes: q.max_bytes.is_finite().then_some(q.max_bytes),
            mean_seconds: q.mean_ms / 1e3,
            probes_wait_here: q.probes_wait_here,
            remedy: q.remedy.clone(),
        }));
    }
    out
}

/// Whether the probes wait in a queue of `queue_ms` managed by `aqm`, judged by their own rise
/// (issue 31): fq_codel serves a sparse flow such as the probes' ahead of the load's queue, so
/// probes that rose by less than half of what the queue holds did not wait in it. Without a
/// measured rise, or with a single-queue discipline, every packet that leaves waits in it.
#[doc(hidden)]
pub fn probes_wait_in(aqm: Option<&str>, queue_ms: f64, probe_rise_ms: f64) -> bool {
    let fair = aqm.is_some_and(|a| a.starts_with("fq"));
    !(fair && probe_rise_ms.is_finite() && queue_ms.is_finite() && probe_rise_ms < 0.5 * queue_ms)
}

/// What would shrink an emulated link's queue of `queue_ms`, from its discipline and the
/// probes' own rise: "held near its target" only when it is (issue 31: said of a 30.75 ms
/// queue under fq_codel's 5 ms target, whose probes rose 0.7 ms).
#[doc(hidden)]
pub fn link_queue_remedy(aqm: Option<&str>, queue_ms: f64, probe_rise_ms: f64) -> String {
    match aqm {
        None => "an AQM on the link (aqm = \"fq_codel\" or \"codel\" in the lab file) keeps it near 5 ms; a shorter `queue` caps it".into(),
        Some(a) if queue_ms <= 2.0 * AQM_TARGET_MS => format!(
            "{a} already holds the standing queue near its {AQM_TARGET_MS:.0} ms target"
        ),
        Some(a) if !probes_wait_in(aqm, queue_ms, probe_rise_ms) => format!(
            "{a} lets the load's own flows keep {} standing, above its {AQM_TARGET_MS:.0} ms target, but serves the probes' sparse flow ahead of it (they rose {}): only the load waits; ECN on the load's flows or a shorter `queue` shortens its wait",
            time_ms(queue_ms),
            time_ms(probe_rise_ms)
        ),
        Some(a) => format!(
            "{a} holds {}, above its {AQM_TARGET_MS:.0} ms target, and the probes wait in it (they rose {}): a shorter `queue` caps it",
            time_ms(queue_ms),
            time_ms(probe_rise_ms)
        ),
    }
}
