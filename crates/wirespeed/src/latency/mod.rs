//! `wirespeed latency [HOST]`: latency under load. An idle phase, then a loaded phase with bulk
//! TCP flows, while probes on flows of their own measure round trips the whole time: UDP echo
//! (kernel timestamps where the socket gives them, as `probe --udp`), the TCP handshake and a
//! request/response on a new connection (the responsiveness draft's foreign-flow probes), and
//! a request/response on a kept connection. It reports idle and loaded latency per probe kind,
//! the increase (bufferbloat), RPM, the throughput meanwhile, and where the extra delay waits.
//!
//! `--rr` is the request/response test alone (netperf's TCP_RR; `--connect`: TCP_CRR):
//! transactions per second and their latency for fixed sizes.

mod brief;
pub(crate) mod html;
mod metrics;
pub(crate) mod queues;
mod text;
mod verdicts;

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::stats::quantile;
use wirespeed_model::units::{ByteSize, parse_duration};
use wirespeed_net::control::echo::Residence;
use wirespeed_net::probe::echo::UdpEcho;
use wirespeed_net::rr::RrSession;
use wirespeed_net::spec::{Amount, Direction, Protocol, TestSpec};
use wirespeed_report::{Document, Finding, Render, Severity};

use crate::common::exit_status::NOT_MEASURED;
use crate::common::output::OutputArgs;
use crate::throughput::analysis::LinkRate;

/// The longest idle or loaded phase, and the longest `--rr` run.
const MAX_PHASE: Duration = Duration::from_secs(3600);
/// How long a UDP echo probe's answer is waited for before it counts as lost (longer than a
/// 1000-frame queue at 10 Mbit/s, 1.23 s; the probes are pipelined, so the wait holds up none).
const UDP_TIMEOUT: Duration = Duration::from_secs(2);
/// How often this host's queues (the load's sockets, the qdisc, the NIC ring) are sampled
/// while the load runs.
const HOST_SAMPLE_PERIOD: Duration = Duration::from_millis(100);
/// How long the control connections wait for the agent.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
/// Probes kept, four times this in all: a bound on memory whatever the run's length and probe
/// interval.
const MAX_PROBES_PER_KIND: usize = 200_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LoadDirection {
    /// The client sends (upload).
    Up,
    /// The agent sends (download).
    Down,
    /// Both at once.
    Both,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct LatencyArgs {
    /// The agent (`wirespeed serve`), HOST or HOST:PORT; none = an agent in this process on
    /// loopback.
    #[arg(value_name = "HOST")]
    host: Option<String>,

    /// The agent's port.
    #[arg(long, short = 'p', value_name = "PORT")]
    port: Option<u16>,

    /// The idle phase before the load starts.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    idle: Duration,

    /// The loaded phase (with --rr: the whole test).
    #[arg(long, short = 't', default_value = "8s", value_name = "DURATION",
          value_parser = parse_duration)]
    time: Duration,

    /// Bulk TCP flows of the load (per direction).
    #[arg(long, short = 'P', default_value_t = 4, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=128))]
    parallel: u32,

    /// Which way the load flows.
    #[arg(long, value_enum, default_value = "both")]
    direction: LoadDirection,

    /// The load's TCP congestion control at both ends (e.g. cubic, reno, bbr); default: the
    /// system's. Loss-based ones (cubic, reno) fill drop-tail queues, bbr mostly does not.
    #[arg(long, short = 'C', value_name = "ALGO")]
    congestion: Option<String>,

    /// Mark the probes this end sends (UDP echoes, connects, requests) with this IP TOS byte
    /// or DSCP name (ef, af41, cs1: see tcp -S); the load stays unmarked, so a class-aware
    /// queue shows as lower loaded latency for the marked probes.
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Time between probes of each kind (the TCP handshake probes: five times this).
    #[arg(long, default_value = "40ms", value_name = "DURATION", value_parser = parse_duration)]
    probe_interval: Duration,

    /// The load is UDP at this rate per flow (e.g. 12M) instead of TCP: a rate above the path's
    /// holds its queue full, the drop-tail ground truth.
    #[arg(long, value_name = "RATE", conflicts_with = "congestion")]
    udp_load: Option<wirespeed_model::BitRate>,

    /// Print one JSON object per second of the run as it ends (`{"interval": ...}`), then the
    /// document.
    #[arg(long, conflicts_with = "rr")]
    json_stream: bool,

    /// Write the round trips over time and their CDF, idle against loaded, as SVG files in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "rr")]
    plot: Option<std::path::PathBuf>,

    /// The request/response test alone (netperf's TCP_RR): transactions per second and their
    /// latency, for -t.
    #[arg(long)]
    rr: bool,

    /// With --rr: a new TCP connection for every transaction (netperf's TCP_CRR).
    #[arg(long, requires = "rr")]
    connect: bool,

    /// With --rr: bytes per request.
    #[arg(long, default_value = "1", value_name = "BYTES", requires = "rr")]
    request: ByteSize,

    /// With --rr: bytes per response.
    #[arg(long, default_value = "1", value_name = "BYTES", requires = "rr")]
    response: ByteSize,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    #[command(flatten)]
    schedule: crate::common::schedule::ScheduleArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// The probes, by what they measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProbeKind {
    /// A UDP datagram to the agent's echo and back.
    UdpEcho,
    /// The TCP handshake of a new connection to the agent.
    TcpConnect,
    /// A 1-byte request and response on that new connection.
    RrNewConnection,
    /// A 1-byte request and response on one connection kept open.
    RrKeptConnection,
}

impl ProbeKind {
    const ALL: [ProbeKind; 4] = [
        ProbeKind::UdpEcho,
        ProbeKind::TcpConnect,
        ProbeKind::RrNewConnection,
        ProbeKind::RrKeptConnection,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            ProbeKind::UdpEcho => "UDP echo",
            ProbeKind::TcpConnect => "TCP connect",
            ProbeKind::RrNewConnection => "request/response, new connection",
            ProbeKind::RrKeptConnection => "request/response, kept connection",
        }
    }

    /// Bits on an Ethernet wire per probe, (this end's way out, the way back): each frame's IP
    /// packet plus 38 bytes (header, FCS, preamble, gap), at least 84. The frames are those the
    /// lab counts per probe in an idle phase (IPv4, TCP timestamps; IPv6 adds 20 bytes a frame):
    /// a UDP echo is one datagram each way; a request on the kept connection the request and
    /// the response's ACK out (acknowledged at once, so that the delayed-ACK timer does not race
    /// the next probe) and the response back (carrying the request's ACK); a probe on a new
    /// connection is SYN, ACK, the session cookie, the request, FIN and the last ACK out, and
    /// SYN-ACK, the response, FIN and an ACK back, split here between the handshake and the
    /// request (`lab::latency::latency_probes_own_load_stays_under_one_percent_of_the_link`).
    fn wire_bits(self, udp_ip_bytes: usize, v6: bool) -> (f64, f64) {
        let extra = if v6 { 20 } else { 0 };
        let wire = |ip: &[usize]| -> f64 {
            ip.iter()
                .map(|&b| ((b + extra + 38).max(84) * 8) as f64)
                .sum()
        };
        let udp = udp_ip_bytes - extra;
        match self {
            ProbeKind::UdpEcho => (wire(&[udp]), wire(&[udp])),
            // SYN (with its options), ACK, FIN, ACK; SYN-ACK, FIN.
            ProbeKind::TcpConnect => (wire(&[60, 52, 52, 52]), wire(&[60, 52])),
            // The 16-byte cookie, the 1-byte request; the response, an ACK.
            ProbeKind::RrNewConnection => (wire(&[68, 53]), wire(&[53, 52])),
            // The request and the response's ACK (sent at once: `set_ack_at_once`); the
            // response.
            ProbeKind::RrKeptConnection => (wire(&[53, 52]), wire(&[53])),
        }
    }
}

/// One probe: when it was sent and its round trip (`None`: no answer in time).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct ProbeSample {
    pub(crate) kind: ProbeKind,
    pub(crate) at_seconds: f64,
    pub(crate) rtt_ms: Option<f64>,
    /// UDP echo against an agent that reports it: the agent's residence time (its kernel's
    /// receive stamp to its reply's send), accepted as within `0..=rtt_ms`; the network's
    /// round trip is `rtt_ms` less this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_residence_ms: Option<f64>,
    /// The reply carried a residence time that cannot be true (negative, or longer than the
    /// round trip): refused, and the round trip kept raw.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) residence_rejected: bool,
    /// The residence ends at the agent's kernel transmit stamp (its follow-up arrived), not
    /// just before its `sendmsg`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) residence_to_transmit: bool,
}

impl ProbeSample {
    fn new(kind: ProbeKind, at_seconds: f64, rtt_ms: Option<f64>) -> ProbeSample {
        ProbeSample {
            kind,
            at_seconds,
            rtt_ms,
            agent_residence_ms: None,
            residence_rejected: false,
            residence_to_transmit: false,
        }
    }

    /// The round trip less the agent's residence time, where the agent reported one.
    fn network_rtt_ms(&self) -> Option<f64> {
        Some(self.rtt_ms? - self.agent_residence_ms?)
    }
}

/// Round trips of one probe kind in one phase, ms.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LatencyStats {
    pub(crate) probes: usize,
    pub(crate) lost: usize,
    pub(crate) min_ms: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p90_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    /// The mean of the round trips at or below the 95th percentile (the draft's trimmed mean).
    pub(crate) trimmed_mean_ms: f64,
}

impl LatencyStats {
    pub(crate) fn of(rtts_ms: &[f64], lost: usize) -> LatencyStats {
        let q = |p: f64| quantile(rtts_ms, p);
        let p95 = q(0.95);
        let kept: Vec<f64> = rtts_ms.iter().copied().filter(|r| *r <= p95).collect();
        LatencyStats {
            probes: rtts_ms.len() + lost,
            lost,
            min_ms: q(0.0),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            max_ms: q(1.0),
            trimmed_mean_ms: if kept.is_empty() {
                f64::NAN
            } else {
                kept.iter().sum::<f64>() / kept.len() as f64
            },
        }
    }
}

/// One probe kind, idle against loaded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct KindReport {
    pub(crate) kind: ProbeKind,
    /// The raw round trips, as the client's kernel stamped them (the agent's turnaround in).
    pub(crate) idle: LatencyStats,
    pub(crate) loaded: LatencyStats,
    /// Loaded minus idle median: the delay the load added.
    pub(crate) increase_p50_ms: f64,
    /// UDP echo against an agent that reports its residence time (RFC 8762's T3 - T2): the
    /// network's round trip, each probe's raw round trip less the agent's residence, over the
    /// probes that carried an accepted one. `None` for other kinds and older agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) network_round_trip: Option<NetworkRoundTrip>,
}

/// The round trip without the far end's own processing, and that processing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NetworkRoundTrip {
    /// Raw round trip less the agent's residence, idle and loaded.
    pub(crate) idle: LatencyStats,
    pub(crate) loaded: LatencyStats,
    /// The agent's residence times (receive stamp to send), idle.
    pub(crate) agent_residence_idle: LatencyStats,
    /// Replies whose residence was refused (negative or longer than the round trip).
    pub(crate) residence_rejected: usize,
    /// Idle probes whose residence ends at the agent's kernel transmit stamp (its follow-up
    /// arrived), as the client's own stamps are taken; the others' ends just before the
    /// agent's `sendmsg`, leaving its send path in the network's round trip.
    #[serde(default)]
    pub(crate) idle_to_transmit_stamp: usize,
    /// The echo's IP packet, bytes (with the residence and follow-up fields), whose
    /// serialization each way belongs to the round trip.
    #[serde(default)]
    pub(crate) probe_ip_bytes: usize,
}

/// One second of the run: its phase and each kind's median.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyInterval {
    pub(crate) start_seconds: f64,
    pub(crate) end_seconds: f64,
    pub(crate) phase: Phase,
    pub(crate) p50_ms: Vec<(ProbeKind, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    Idle,
    /// The load's first moments (slow start), left out of both phases.
    Settling,
    Loaded,
    After,
}

/// Where the delay the load added waits, as far as the run can tell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Queue {
    /// Loaded minus idle median UDP echo round trip.
    pub(crate) delay_ms: f64,
    /// That delay at the load's measured rate: the bytes standing in the queue.
    pub(crate) bytes: f64,
    /// The queue, in words.
    pub(crate) location: String,
    /// What would shrink it.
    pub(crate) remedy: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyResult {
    pub(crate) idle_seconds: f64,
    pub(crate) loaded_seconds: f64,
    /// Left out at the start of the load (slow start) from the loaded statistics.
    pub(crate) settle_seconds: f64,
    /// When the load started and stopped, seconds from the start of the run as its own
    /// clock read them (the load starts after the idle phase plus the time a connection
    /// takes): the report's phase markers are drawn from these, not from the plan.
    #[serde(default)]
    pub(crate) load_started_seconds: Option<f64>,
    #[serde(default)]
    pub(crate) load_ended_seconds: Option<f64>,
    pub(crate) kinds: Vec<KindReport>,
    /// Round trips per minute (the responsiveness draft), idle and loaded.
    pub(crate) rpm_idle: f64,
    pub(crate) rpm_loaded: f64,
    /// The load's goodput each way over the loaded window (the receiving end's intervals
    /// after the first `settle_seconds`; the whole transfer when none fits), bit/s.
    pub(crate) upload_bits_per_second: Option<f64>,
    pub(crate) download_bits_per_second: Option<f64>,
    /// The probes' own load on the wire during the loaded phase (Ethernet framing), bit/s,
    /// both ways together and each way, and the larger way's share of the load's rate.
    pub(crate) probe_bits_per_second: f64,
    #[serde(default)]
    pub(crate) probe_out_bits_per_second: f64,
    #[serde(default)]
    pub(crate) probe_back_bits_per_second: f64,
    pub(crate) probe_share_percent: f64,
    /// The larger of the two ways' shares of the link's rate that way, where the link's rate
    /// is known (a lab, a NIC that reports its speed).
    #[serde(default)]
    pub(crate) probe_share_of_link_percent: Option<f64>,
    pub(crate) link_rate: LinkRate,
    pub(crate) queue: Option<Queue>,
    /// Inside a wirespeed lab: the link's queue as the lab's emulator sampled it while the
    /// load ran, beside the probes' round trips in the same window.
    #[serde(default)]
    pub(crate) link_queue: Option<crate::latency::queues::LinkQueueWindow>,
    /// Inside a lab: the probes' own load on the link as the lab counted it in the idle phase.
    #[serde(default)]
    pub(crate) probe_load_on_link: Option<crate::latency::queues::ProbeLoadCount>,
    /// Where the load's bytes waited over the loaded window, queue by queue, as measured.
    #[serde(default)]
    pub(crate) queues: Vec<crate::latency::queues::QueueShare>,
    pub(crate) intervals: Vec<LatencyInterval>,
    pub(crate) samples: Vec<ProbeSample>,
    pub(crate) partial: bool,
    pub(crate) partial_reason: Option<String>,
    #[serde(skip)]
    pub(crate) rate_format: RateFormat,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyParams {
    pub(crate) agent: String,
    pub(crate) in_process_agent: bool,
    pub(crate) streams: u32,
    pub(crate) direction: LoadDirection,
    pub(crate) probe_interval_seconds: f64,
    #[serde(default)]
    pub(crate) congestion: Option<String>,
    /// `-S`: the TOS byte the probes carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tos: Option<u8>,
}

/// `--rr`: the request/response test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RrResult {
    pub(crate) request_bytes: u32,
    pub(crate) response_bytes: u32,
    /// TCP_CRR: a new connection per transaction.
    pub(crate) new_connection: bool,
    pub(crate) transactions: u64,
    pub(crate) seconds: f64,
    pub(crate) transactions_per_second: f64,
    /// From the request's first byte to the response's last.
    pub(crate) round_trip: LatencyStats,
    /// With a new connection: its handshake.
    pub(crate) connect: Option<LatencyStats>,
    /// What the agent counted.
    pub(crate) agent_transactions: Option<u64>,
    pub(crate) partial: bool,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The samples of one probe loop, kept up to [`MAX_PROBES_PER_KIND`].
type Samples = Arc<Mutex<Vec<ProbeSample>>>;

fn push(samples: &Samples, s: ProbeSample) {
    let mut v = samples.lock().unwrap_or_else(|e| e.into_inner());
    // A bound on the whole, checked in constant time (this runs for every probe).
    if v.len() < MAX_PROBES_PER_KIND * ProbeKind::ALL.len() {
        v.push(s);
    }
}

/// Runs `probe` every `gap` until `stop`, the first `offset` after `t0`, each probe's start
/// measured from `t0`.
fn probe_loop(
    name: &str,
    (gap, offset): (Duration, Duration),
    t0: Instant,
    stop: Arc<AtomicBool>,
    samples: Samples,
    mut probe: impl FnMut(f64) -> Vec<ProbeSample> + Send + 'static,
) -> io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let next = t0 + offset;
            while Instant::now() < next && !stop.load(Ordering::Acquire) {
                std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
            }
            let mut next = Instant::now();
            while !stop.load(Ordering::Acquire) {
                let at = t0.elapsed().as_secs_f64();
                for s in probe(at) {
                    push(&samples, s);
                }
                next += gap;
                let now = Instant::now();
                if next > now {
                    // Sleep in short steps so a stop is seen within 50 ms.
                    let wait = (next - now).min(Duration::from_millis(50));
                    std::thread::sleep(wait);
                    while Instant::now() < next && !stop.load(Ordering::Acquire) {
                        std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                    }
                } else {
                    next = now;
                }
            }
        })
}

/// What one latency test produced: its document and why it is partial.
enum Measured {
    Latency(Box<Document<LatencyParams, LatencyResult>>, Option<String>),
    Rr(Box<Document<LatencyParams, RrResult>>, Option<String>),
}

pub(crate) fn run(args: LatencyArgs) -> anyhow::Result<()> {
    args.schedule.check_unused("--count")?;
    check(&args)?;
    if args.schedule.active() {
        return run_scheduled(&args);
    }
    match measure(&args, !args.brief.brief)? {
        Measured::Latency(doc, partial) => {
            if args.json_stream {
                println!("{}", serde_json::to_string(&doc)?);
            } else {
                crate::common::brief::show(&args.brief, &args.output, &doc)?;
            }
            if let Some(why) = partial {
                return Err(crate::common::exit_status::Exit::cut_short(format!(
                    "partial result: {why}"
                ))
                .into());
            }
        }
        Measured::Rr(doc, partial) => {
            crate::common::brief::show(&args.brief, &args.output, &doc)?;
            if let Some(why) = partial {
                return Err(crate::common::exit_status::Exit::cut_short(why).into());
            }
        }
    }
    Ok(())
}

/// `--every`: the test on a schedule; the headline is the loaded median round trip of the UDP
/// echo (with --rr, the transactions' median round trip).
fn run_scheduled(args: &LatencyArgs) -> anyhow::Result<()> {
    if args.json_stream || args.plot.is_some() || args.brief.brief {
        bail!(
            "--every prints one line per run and a summary: drop --json-stream/--plot/--brief (each run's whole document is in the results file)"
        );
    }
    let mut one = || {
        Ok(match measure(args, false)? {
            Measured::Latency(doc, failure) => crate::common::schedule::RunOutput {
                headline: doc
                    .result
                    .kinds
                    .iter()
                    .find(|k| k.kind == ProbeKind::UdpEcho)
                    .map(|k| k.loaded.p50_ms)
                    .filter(|v| v.is_finite()),
                document: serde_json::to_value(&doc)?,
                failure,
            },
            Measured::Rr(doc, failure) => crate::common::schedule::RunOutput {
                headline: Some(doc.result.round_trip.p50_ms).filter(|v| v.is_finite()),
                document: serde_json::to_value(&doc)?,
                failure,
            },
        })
    };
    crate::common::schedule::run(
        &args.schedule,
        crate::common::schedule::Job {
            command: "latency",
            count_flag: "--count",
            seed: None,
            headline: if args.rr {
                "request/response median round trip"
            } else {
                "loaded UDP echo median round trip"
            },
            unit: crate::common::schedule::Unit::Milliseconds,
            output: &args.output,
            run: &mut one,
        },
    )
}

/// The flags' ranges, checked before any test (and before a schedule's first run).
fn check(args: &LatencyArgs) -> anyhow::Result<()> {
    for (flag, d) in [("--idle", args.idle), ("-t", args.time)] {
        if d > MAX_PHASE {
            bail!("{flag} {d:?} is too long: at most 1h (for example {flag} 10s)");
        }
    }
    args.brief
        .check(&args.output, &[(args.json_stream, "--json-stream")])?;
    if args.time < Duration::from_millis(500) {
        bail!(
            "-t must be at least 500ms (for example -t 8s): the load needs time to fill the path"
        );
    }
    if args.probe_interval < Duration::from_millis(1)
        || args.probe_interval > Duration::from_secs(10)
    {
        bail!("--probe-interval must be between 1ms and 10s (for example --probe-interval 20ms)");
    }
    if let Some(dir) = &args.plot {
        crate::common::output::check_output_dir("--plot", dir)?;
    }
    if let Some(r) = args.udp_load
        && r.bits_per_second() == 0
    {
        bail!("--udp-load 0: give a rate such as --udp-load 12M");
    }
    args.key.load().context("--auth-key-file")?;
    Ok(())
}

/// One test (latency under load, or --rr), printing live lines only when `live`.
fn measure(args: &LatencyArgs, live: bool) -> anyhow::Result<Measured> {
    let key = args.key.load().context("--auth-key-file")?;
    crate::common::interrupt::watch();
    let remote = match &args.host {
        Some(h) => Some(crate::throughput::resolve_agent(
            h, args.port, false, false,
        )?),
        None => None,
    };
    let mut local_agent = None;
    let agent = match remote {
        Some(a) => a,
        None => {
            let (addr, agent) = crate::throughput::start_local_agent(false, key.clone())?;
            local_agent = Some(agent);
            addr
        }
    };
    let outcome = if args.rr {
        run_rr(args, agent, key.as_ref())
    } else {
        run_latency(args, agent, remote.is_none(), key.clone(), live)
    };
    if let Some((handle, thread)) = local_agent {
        handle.stop();
        let _ = thread.join();
    }
    outcome
}

fn run_rr(
    args: &LatencyArgs,
    agent: SocketAddr,
    key: Option<&wirespeed_net::auth::AuthKey>,
) -> anyhow::Result<Measured> {
    let size = |flag: &str, b: ByteSize| -> anyhow::Result<u32> {
        let max = wirespeed_net::control::rr::MAX_RR_BYTES;
        u32::try_from(b.bytes())
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                anyhow::anyhow!("{flag} {b}: give 1 to {max} bytes (for example {flag} 1)")
            })
    };
    let request = size("--request", args.request)?;
    let response = size("--response", args.response)?;
    let seconds = args.time.as_secs_f64();
    let mut session = RrSession::open(
        agent,
        key,
        request,
        response,
        seconds + 10.0,
        CONTROL_TIMEOUT,
    )
    .with_context(|| format!("the request/response service of {agent}"))?;
    if let Some(tos) = args.tos {
        session.set_tos(tos);
    }
    let started = Instant::now();
    let mut rtts = Vec::new();
    let mut connects = Vec::new();
    let mut failure = None;
    while started.elapsed() < args.time && !crate::common::interrupt::requested() {
        let t = if args.connect {
            session.transaction_on_new_connection()
        } else {
            session.transaction()
        };
        match t {
            Ok(t) => {
                if rtts.len() < MAX_PROBES_PER_KIND * 10 {
                    rtts.push(ms(t.round_trip));
                    if let Some(c) = t.connect {
                        connects.push(ms(c));
                    }
                }
            }
            Err(e) => {
                failure = Some(format!("a transaction failed: {e}"));
                break;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let transactions = rtts.len() as u64;
    let agent_count = session.close().ok().map(|t| t.transactions);
    let interrupted = crate::common::interrupt::requested();
    let partial = interrupted || failure.is_some();
    let result = RrResult {
        request_bytes: request,
        response_bytes: response,
        new_connection: args.connect,
        transactions,
        seconds: elapsed,
        transactions_per_second: transactions as f64 / elapsed.max(1e-9),
        round_trip: LatencyStats::of(&rtts, 0),
        connect: args.connect.then(|| LatencyStats::of(&connects, 0)),
        agent_transactions: agent_count,
        partial,
    };
    let params = LatencyParams {
        agent: agent.to_string(),
        in_process_agent: args.host.is_none(),
        streams: 0,
        direction: args.direction,
        probe_interval_seconds: 0.0,
        congestion: None,
        tos: args.tos,
    };
    let mut doc = Document::new("latency-rr", params, result);
    if let Some(why) = failure.clone() {
        // The failure's own message, already a sentence naming its cause.
        doc.push(Finding::plain(Severity::Warning, "run_failed", why));
    } else if interrupted {
        doc.warning(&verdicts::LatencyFinding::Interrupted);
    } else {
        let r = &doc.result;
        let finding = verdicts::LatencyFinding::RequestResponse {
            transactions_per_second: r.transactions_per_second,
            request_bytes: request,
            response_bytes: response,
            new_connection: args.connect,
            median_round_trip_seconds: r.round_trip.p50_ms / 1e3,
        };
        doc.verdict(&finding);
    }
    let partial = partial.then(|| failure.unwrap_or_else(|| "interrupted".into()));
    Ok(Measured::Rr(Box::new(doc), partial))
}

fn run_latency(
    args: &LatencyArgs,
    agent: SocketAddr,
    in_process: bool,
    key: Option<wirespeed_net::auth::AuthKey>,
    live: bool,
) -> anyhow::Result<Measured> {
    let total = args.idle + args.time;
    let service_seconds = total.as_secs_f64() + 10.0;
    let mut echo = UdpEcho::open(agent, key.as_ref(), service_seconds, CONTROL_TIMEOUT)
        .with_context(|| format!("the UDP echo of {agent}"))?;
    let mut kept = RrSession::open(agent, key.as_ref(), 1, 1, service_seconds, CONTROL_TIMEOUT)
        .with_context(|| format!("the request/response service of {agent}"))?;
    let mut fresh = RrSession::open(agent, key.as_ref(), 1, 1, service_seconds, CONTROL_TIMEOUT)
        .with_context(|| format!("the request/response service of {agent}"))?;
    // One probe, the same frames every time (the probes' own load is counted per probe).
    kept.set_ack_at_once(true);
    if let Some(tos) = args.tos {
        echo.set_tos(tos)
            .with_context(|| format!("-S {}", wirespeed_model::dscp::describe(tos)))?;
        kept.set_tos(tos);
        fresh.set_tos(tos);
    }
    // With the agent's residence field when it reports one.
    let udp_ip_bytes = echo.pipelined_min_size();
    // The interface towards the agent and, inside a lab, the link it is an end of, whose
    // queue the lab's emulator samples.
    let interface = crate::latency::queues::interface_to(agent);
    let lab_port = crate::latency::queues::lab_port(interface.as_deref());
    let qdisc_kind = interface
        .as_deref()
        .and_then(wirespeed_net::iface::root_qdisc);
    let samples: Samples = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let gap = args.probe_interval;
    let threads = vec![
        {
            // Pipelined: a probe lost behind a full queue does not hold up the next one.
            let (stop, samples) = (stop.clone(), samples.clone());
            std::thread::Builder::new()
                .name("ws-lat-udp".into())
                .spawn(move || {
                    let _ = echo.pipelined(udp_ip_bytes, gap, t0, UDP_TIMEOUT, &stop, |s, r| {
                        let mut sample = ProbeSample::new(
                            ProbeKind::UdpEcho,
                            s.sent_at_ns as f64 / 1e9,
                            s.rtt_kernel_ns.or(s.rtt_user_ns).map(|ns| ns as f64 / 1e6),
                        );
                        match r {
                            Residence::Accepted(ns) => {
                                sample.agent_residence_ms = Some(ns as f64 / 1e6);
                            }
                            Residence::ToTransmit(ns) => {
                                sample.agent_residence_ms = Some(ns as f64 / 1e6);
                                sample.residence_to_transmit = true;
                            }
                            Residence::Rejected => sample.residence_rejected = true,
                            Residence::Absent => {}
                        }
                        push(&samples, sample)
                    });
                })?
        },
        // The kinds take turns within the interval instead of starting together, so that on
        // a slow link no probe waits behind another's frame (at 10 Mbit/s a small frame holds
        // the wire 70 us): the kept connection half an interval after the UDP echo, the new
        // connection a quarter.
        probe_loop(
            "ws-lat-rr",
            (gap, gap / 2),
            t0,
            stop.clone(),
            samples.clone(),
            move |at| {
                let rtt = kept.transaction().ok().map(|t| ms(t.round_trip));
                if rtt.is_none() {
                    // A broken kept connection is opened again on the next probe.
                    let _ = kept.transaction();
                }
                vec![ProbeSample::new(ProbeKind::RrKeptConnection, at, rtt)]
            },
        )?,
        probe_loop(
            "ws-lat-crr",
            (gap * 5, gap / 4),
            t0,
            stop.clone(),
            samples.clone(),
            move |at| {
                let t = fresh.transaction_on_new_connection().ok();
                vec![
                    ProbeSample::new(ProbeKind::TcpConnect, at, t.and_then(|t| t.connect).map(ms)),
                    ProbeSample::new(ProbeKind::RrNewConnection, at, t.map(|t| ms(t.round_trip))),
                ]
            },
        )?,
    ];
    let human = live && !args.output.json && !args.json_stream;
    let stream = live && args.json_stream;
    if human {
        println!(
            "latency to {} ({}): {} idle, then {} with {}; probes every {}",
            agent,
            if in_process {
                "in-process agent"
            } else {
                "agent"
            },
            humantime::format_duration(args.idle),
            humantime::format_duration(args.time),
            verdicts::load_words(
                args.parallel,
                args.udp_load.map(|r| r.bits_per_second()),
                args.direction
            ),
            humantime::format_duration(args.probe_interval),
        );
        println!(
            "{:>11}  {:<8}  {:>11}  {:>11}  {:>11}",
            "interval", "phase", "UDP echo", "kept RR", "connect"
        );
    }
    // Live lines, one per second, while the idle phase runs and then the load.
    let mut printed = 0usize;
    let mut live = |upto: f64, load: Option<(f64, f64)>, settle: f64| {
        while (printed as f64 + 1.0) <= upto {
            let (a, b) = (printed as f64, printed as f64 + 1.0);
            printed += 1;
            if stream {
                let rtts = second_of(&samples.lock().unwrap_or_else(|e| e.into_inner()), a);
                let phase = phase_of(a, args.idle.as_secs_f64(), load, settle);
                let line = Some(interval_of(a, phase, &rtts));
                if let Some(line) = line {
                    let text = serde_json::json!({ "interval": line });
                    println!("{text}");
                }
                continue;
            }
            if !human {
                continue;
            }
            let rtts = second_of(&samples.lock().unwrap_or_else(|e| e.into_inner()), a);
            let median = |k: ProbeKind| {
                let r = &rtts[ProbeKind::ALL.iter().position(|&x| x == k).expect("a kind")];
                if r.is_empty() {
                    "-".to_string()
                } else {
                    time_ms(quantile(r, 0.5))
                }
            };
            println!(
                "{:>4.1}-{:<4.1} s  {:<8}  {:>11}  {:>11}  {:>11}",
                a,
                b,
                phase_name(phase_of(a, args.idle.as_secs_f64(), load, settle)),
                median(ProbeKind::UdpEcho),
                median(ProbeKind::RrKeptConnection),
                median(ProbeKind::TcpConnect),
            );
        }
    };
    let idle_end = args.idle.as_secs_f64();
    // Inside a lab, the lab's count of the idle phase's frames: the probes' own load.
    let mut idle_snapshots = (None, None);
    let mut idle_tried = (false, false);
    while t0.elapsed() < args.idle && !crate::common::interrupt::requested() {
        std::thread::sleep(Duration::from_millis(50));
        let now = t0.elapsed().as_secs_f64();
        if let Some(port) = lab_port.as_ref().filter(|_| idle_end >= 1.0) {
            if !idle_tried.0 && now >= 0.2 {
                idle_tried.0 = true;
                idle_snapshots.0 = crate::latency::queues::snapshot(port, t0);
            }
            if !idle_tried.1 && now >= idle_end - 0.25 {
                idle_tried.1 = true;
                idle_snapshots.1 = crate::latency::queues::snapshot(port, t0);
            }
        }
        live(now, None, 0.0);
    }
    // The load: bulk TCP flows against the same agent, in a thread of their own.
    let protocol = if args.udp_load.is_some() {
        Protocol::Udp
    } else {
        Protocol::Tcp
    };
    let spec = TestSpec {
        protocol,
        rate_bits_per_second: args.udp_load.map_or(0, |r| r.bits_per_second()),
        direction: match args.direction {
            LoadDirection::Up => Direction::Send,
            LoadDirection::Down => Direction::Receive,
            LoadDirection::Both => Direction::Both,
        },
        streams: args.parallel,
        amount: Amount::Seconds(args.time.as_secs_f64()),
        length_bytes: if args.udp_load.is_some() {
            1472
        } else {
            128 * 1024
        },
        congestion: args.congestion.clone(),
        ..TestSpec::default()
    };
    let mut config = crate::throughput::Config::loopback_tcp(args.time.as_secs_f64());
    config.protocol = protocol;
    config.spec = spec;
    config.remote = Some(agent);
    config.auth = key.clone();
    let load_start = t0.elapsed().as_secs_f64();
    let settle = (args.time.as_secs_f64() / 4.0).min(1.0);
    let mut snapshots = (None, None);
    let mut tried = (false, false);
    // This host's queues, sampled over the loaded window.
    let host_samples: Arc<Mutex<Vec<crate::latency::queues::HostSample>>> = Arc::default();
    let host_sampler = {
        let (stop, host_samples, interface) =
            (stop.clone(), host_samples.clone(), interface.clone());
        let (from, until) = (load_start + settle, load_start + args.time.as_secs_f64());
        std::thread::Builder::new()
            .name("ws-lat-queues".into())
            .spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    let now = t0.elapsed().as_secs_f64();
                    if now >= until {
                        break;
                    }
                    if now >= from {
                        let s = crate::latency::queues::sample_host(agent, interface.as_deref());
                        host_samples
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(s);
                    }
                    std::thread::sleep(HOST_SAMPLE_PERIOD);
                }
            })?
    };
    // Interrupted while idle: no load is started.
    let measured = if crate::common::interrupt::requested() {
        Err(anyhow::anyhow!("interrupted before the load"))
    } else {
        let config = config.clone();
        let bulk = std::thread::Builder::new()
            .name("ws-lat-load".into())
            .spawn(move || {
                let mut silent = crate::throughput::text::LiveLines::new(
                    config.rate_format,
                    &config.spec,
                    false,
                    false,
                );
                crate::throughput::measure(&config, &mut silent)
            })?;
        while !bulk.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            let now = t0.elapsed().as_secs_f64();
            // The lab's counters at the two ends of the loaded window.
            if let Some(port) = &lab_port {
                if !tried.0 && now >= load_start + settle {
                    tried.0 = true;
                    snapshots.0 = crate::latency::queues::snapshot(port, t0);
                }
                if !tried.1 && now >= load_start + args.time.as_secs_f64() {
                    tried.1 = true;
                    snapshots.1 = crate::latency::queues::snapshot(port, t0);
                }
            }
            live(now, Some((load_start, now)), settle);
        }
        bulk.join()
            .map_err(|_| anyhow::anyhow!("the load's thread panicked"))?
    };
    // The transfer itself lasts -t from a little after `load_start` (its handshake); what
    // follows (the results exchange) has no load, and the queue drains: not the loaded phase.
    let load_end = t0
        .elapsed()
        .as_secs_f64()
        .min(load_start + args.time.as_secs_f64());
    if let (Some(port), Some(_), false) = (&lab_port, &snapshots.0, tried.1) {
        // The load ended before its -t (it failed, or its end was late to be seen).
        snapshots.1 = crate::latency::queues::snapshot(port, t0);
    }
    stop.store(true, Ordering::Release);
    for t in threads {
        let _ = t.join();
    }
    let _ = host_sampler.join();
    let samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|e| e.into_inner()));
    let interrupted = crate::common::interrupt::requested();
    let (bulk_doc, bulk_partial) = match measured {
        Ok(m) => (Some(m.doc), m.partial_reason),
        Err(e) => (None, Some(format!("the load failed: {e:#}"))),
    };
    let partial_reason = bulk_partial.or(interrupted.then(|| "interrupted".to_string()));
    let mut result = analyse(
        &samples,
        idle_end,
        (load_start, load_end),
        settle,
        bulk_doc.as_ref().map(|d| &d.result),
        udp_ip_bytes,
        agent.ip(),
        partial_reason.clone(),
        args,
    );
    if let (Some(port), (Some(a), Some(b))) = (&lab_port, &snapshots) {
        let udp: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.kind == ProbeKind::UdpEcho)
            .filter_map(|s| s.rtt_ms.map(|r| (s.at_seconds, r)))
            .collect();
        let idle_p50 = result
            .kinds
            .iter()
            .find(|k| k.kind == ProbeKind::UdpEcho)
            .map_or(f64::NAN, |k| k.idle.p50_ms);
        result.link_queue = Some(crate::latency::queues::window(port, a, b, &udp, idle_p50));
    }
    if let (Some(port), (Some(a), Some(b))) = (&lab_port, &idle_snapshots) {
        let sent: Vec<&ProbeSample> = samples
            .iter()
            .filter(|s| s.at_seconds >= a.at_seconds && s.at_seconds < b.at_seconds)
            .collect();
        let bits = sent.iter().fold((0.0, 0.0), |(o, r), s| {
            let (x, y) = s.kind.wire_bits(udp_ip_bytes, agent.ip().is_ipv6());
            (o + x, r + y)
        });
        result.probe_load_on_link = crate::latency::queues::probe_load(port, a, b, bits);
    }
    let host = std::mem::take(&mut *host_samples.lock().unwrap_or_else(|e| e.into_inner()));
    let rate = result
        .upload_bits_per_second
        .unwrap_or(0.0)
        .max(result.download_bits_per_second.unwrap_or(0.0));
    let rise = result
        .kinds
        .iter()
        .find(|k| k.kind == ProbeKind::UdpEcho)
        .map_or(f64::NAN, |k| k.increase_p50_ms);
    result.queues = crate::latency::queues::split(
        &host,
        HOST_SAMPLE_PERIOD.as_secs_f64() * 1e3,
        interface.as_deref(),
        qdisc_kind.as_deref(),
        lab_port.as_ref().zip(result.link_queue.as_ref()),
        rate,
        rise,
    );
    let params = LatencyParams {
        agent: agent.to_string(),
        in_process_agent: in_process,
        streams: args.parallel,
        direction: args.direction,
        probe_interval_seconds: args.probe_interval.as_secs_f64(),
        congestion: args.congestion.clone(),
        tos: args.tos,
    };
    let mut doc = Document::new("latency", params, result);
    verdicts::verdicts(&mut doc);
    if let Some(dir) = &args.plot {
        html::write_plots(dir, &doc.result)?;
    }
    Ok(Measured::Latency(Box::new(doc), partial_reason))
}

fn phase_of(at: f64, idle_end: f64, load: Option<(f64, f64)>, settle: f64) -> Phase {
    match load {
        _ if at < idle_end => Phase::Idle,
        Some((start, _)) if at < start + settle => Phase::Settling,
        Some((_, end)) if at < end => Phase::Loaded,
        Some(_) => Phase::After,
        None => Phase::Idle,
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Idle => "idle",
        Phase::Settling => "settling",
        Phase::Loaded => "loaded",
        Phase::After => "after",
    }
}

/// A round trip in the unit that reads best.
pub(super) fn time_ms(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 1.0 {
        format!("{:.0} us", v * 1e3)
    } else if v < 100.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.0} ms")
    }
}

/// RPM after the responsiveness draft: 60 s over the weighted mean of the trimmed means, with
/// the weights the draft gives its probes (foreign-flow TCP handshake and request 1/6 each of
/// the three foreign probes, self probes 1/2). wirespeed has no TLS probe and no probe on the
/// load's own connections, so the foreign half is split between the handshake and the
/// request on the new connection, and the kept connection stands for the self half.
fn rpm(kinds: &[KindReport], pick: impl Fn(&KindReport) -> &LatencyStats) -> f64 {
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

#[allow(clippy::too_many_arguments)]
fn analyse(
    samples: &[ProbeSample],
    idle_end: f64,
    load: (f64, f64),
    settle: f64,
    bulk: Option<&crate::throughput::ThroughputResult>,
    udp_ip_bytes: usize,
    agent_ip: IpAddr,
    partial_reason: Option<String>,
    args: &LatencyArgs,
) -> LatencyResult {
    let of = |kind: ProbeKind, phase: Phase| {
        let picked: Vec<&ProbeSample> = samples
            .iter()
            .filter(|s| {
                s.kind == kind && phase_of(s.at_seconds, idle_end, Some(load), settle) == phase
            })
            .collect();
        let rtts: Vec<f64> = picked.iter().filter_map(|s| s.rtt_ms).collect();
        LatencyStats::of(&rtts, picked.len() - rtts.len())
    };
    let in_phase = |kind: ProbeKind, phase: Phase| {
        samples.iter().filter(move |s| {
            s.kind == kind && phase_of(s.at_seconds, idle_end, Some(load), settle) == phase
        })
    };
    // The network's round trip, over the probes whose reply carried an accepted residence.
    let network = |kind: ProbeKind| -> Option<NetworkRoundTrip> {
        let all = || samples.iter().filter(|s| s.kind == kind);
        all().any(|s| s.agent_residence_ms.is_some()).then(|| {
            let stats = |phase| {
                let v: Vec<f64> = in_phase(kind, phase)
                    .filter_map(ProbeSample::network_rtt_ms)
                    .collect();
                LatencyStats::of(&v, 0)
            };
            let residence: Vec<f64> = in_phase(kind, Phase::Idle)
                .filter_map(|s| s.agent_residence_ms)
                .collect();
            NetworkRoundTrip {
                idle: stats(Phase::Idle),
                loaded: stats(Phase::Loaded),
                agent_residence_idle: LatencyStats::of(&residence, 0),
                residence_rejected: all().filter(|s| s.residence_rejected).count(),
                idle_to_transmit_stamp: in_phase(kind, Phase::Idle)
                    .filter(|s| s.residence_to_transmit)
                    .count(),
                probe_ip_bytes: udp_ip_bytes,
            }
        })
    };
    let kinds: Vec<KindReport> = ProbeKind::ALL
        .iter()
        .map(|&kind| {
            let idle = of(kind, Phase::Idle);
            let loaded = of(kind, Phase::Loaded);
            KindReport {
                kind,
                increase_p50_ms: loaded.p50_ms - idle.p50_ms,
                idle,
                loaded,
                network_round_trip: network(kind),
            }
        })
        .collect();
    let (up, down) = match bulk {
        Some(r) => {
            let e = &r.end;
            let rev = e
                .sum_received_bidir_reverse
                .as_ref()
                .map(|s| s.bits_per_second);
            let whole = match args.direction {
                LoadDirection::Up => (Some(e.sum_received.bits_per_second), None),
                LoadDirection::Down => (None, Some(e.sum_received.bits_per_second)),
                LoadDirection::Both => (Some(e.sum_received.bits_per_second), rev),
            };
            // Over the loaded window, as the receiving end counted it: the agent for the
            // upload, this end for the download; the whole transfer when no interval fits.
            (
                whole
                    .0
                    .map(|w| goodput_after(&r.agent_intervals, settle).unwrap_or(w)),
                whole
                    .1
                    .map(|w| goodput_after(&r.intervals, settle).unwrap_or(w)),
            )
        }
        None => (None, None),
    };
    let load_rate = up.unwrap_or(0.0).max(down.unwrap_or(0.0));
    let loaded_seconds = (load.1 - load.0 - settle).max(0.0);
    let (probe_out, probe_back) = samples
        .iter()
        .filter(|s| phase_of(s.at_seconds, idle_end, Some(load), settle) == Phase::Loaded)
        .map(|s| s.kind.wire_bits(udp_ip_bytes, agent_ip.is_ipv6()))
        .fold((0.0, 0.0), |(o, b), (x, y)| (o + x, b + y));
    let per_second = |bits: f64| {
        if loaded_seconds > 0.0 {
            bits / loaded_seconds
        } else {
            f64::NAN
        }
    };
    let (probe_out, probe_back) = (per_second(probe_out), per_second(probe_back));
    let link_rate = bulk.map(|r| r.link_rate.clone()).unwrap_or_default();
    // Each way against the link's rate that way, where the link is known.
    let probe_share_of_link = match &link_rate {
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
    };
    let udp = kinds.iter().find(|k| k.kind == ProbeKind::UdpEcho);
    let queue = udp
        .filter(|u| u.increase_p50_ms.is_finite() && load_rate > 0.0)
        .map(|u| {
            let bytes = (u.increase_p50_ms / 1e3 * load_rate / 8.0).max(0.0);
            let (location, remedy) = where_it_waits(agent_ip, &link_rate);
            Queue {
                delay_ms: u.increase_p50_ms,
                bytes,
                location,
                remedy,
            }
        });
    let intervals = intervals(samples, idle_end, load, settle);
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
        probe_share_of_link_percent: probe_share_of_link,
        link_rate,
        queue,
        link_queue: None,
        probe_load_on_link: None,
        queues: Vec::new(),
        intervals,
        samples: samples.to_vec(),
        partial: partial_reason.is_some(),
        partial_reason,
        rate_format: args.output.rate_format,
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
fn interval_of(start: f64, phase: Phase, rtts: &[Vec<f64>; 4]) -> LatencyInterval {
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
fn second_of(samples: &[ProbeSample], start: f64) -> [Vec<f64>; 4] {
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

fn intervals(
    samples: &[ProbeSample],
    idle_end: f64,
    load: (f64, f64),
    settle: f64,
) -> Vec<LatencyInterval> {
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
            interval_of(a, phase_of(a, idle_end, Some(load), settle), rtts)
        })
        .collect()
}

#[cfg(test)]
mod tests;
