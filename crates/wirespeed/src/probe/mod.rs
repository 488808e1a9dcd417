//! `wirespeed probe HOST`: the best-case delay of a path, and of every hop on it (seed 001).

mod brief;
pub(crate) mod html;
mod metrics;
mod verdicts;

use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use wirespeed_model::BitRate;
use wirespeed_model::bestcase::{self, AnalysisParams, HopAnalysis, HopFit, Observation};
use wirespeed_model::delay::Cost;
use wirespeed_model::perhop::Separation;
use wirespeed_model::units::{format_seconds, parse_duration};

use self::verdicts::ProbeFinding;
use wirespeed_net::probe::{self, Hop, ProbeConfig, ReplyKind, Sample};
use wirespeed_net::{SocketChoice, SocketKind};
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Document, Render, Severity, Table};

use crate::common::output::OutputArgs;

#[derive(Debug, Clone, Args)]
pub(crate) struct ProbeArgs {
    /// The host: an IPv4 or IPv6 address or a name.
    #[arg(value_name = "HOST")]
    host: String,

    /// Probe sizes in IP packet bytes: a range FIRST..LAST:STEP (e.g. 46..1500:64) or a list
    /// (e.g. 64,512,1024). Default: 16 sizes from 46 bytes (the smallest packet Ethernet does
    /// not pad) to the path MTU (at most 1500).
    #[arg(long, value_name = "SIZES", value_parser = parse_sizes)]
    sizes: Option<Sizes>,

    /// Mark every probe with this IP TOS byte or DSCP name (ef, af41, cs1; see tcp -S), as
    /// ping's -Q: a path that treats classes differently shows it in the per-hop costs.
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Probes per size (per hop), as ping's -c.
    #[arg(long, short = 'c', default_value_t = 32, value_name = "N")]
    count: u32,

    #[arg(short = 'n', hide = true, value_name = "N",
          value_parser = crate::common::flags::moved_to(crate::common::flags::MOVED_N, "-c/--count for probes per size"))]
    moved_n: Option<String>,

    /// Probe every hop up to --max-ttl with TTL-limited echoes (each router answers with ICMP
    /// time exceeded), not only the destination.
    #[arg(long)]
    hops: bool,

    /// Highest TTL tried with --hops.
    #[arg(long, default_value_t = 30, value_name = "TTL", requires = "hops",
          value_parser = clap::value_parser!(u8).range(1..=64))]
    max_ttl: u8,

    /// Pause after each probe's answer (e.g. 1ms, 0).
    #[arg(long, default_value = "1ms", value_name = "DURATION", value_parser = parse_duration)]
    gap: Duration,

    /// Least time between two probes to the same hop: routers rate-limit the ICMP errors they
    /// send (Linux: about 1 per second per source), so 1s keeps under it.
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration)]
    hop_interval: Duration,

    /// How long to wait for each answer.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,

    /// Stop sending after this long; what was measured is analysed and the result says so.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration)]
    max_time: Duration,

    /// First probe this host's own loopback (127.0.0.1 or ::1) with the same sizes and count,
    /// and subtract its line from the first hop's: the seed's `keeper - roc`, so that hop 1's
    /// own cost no longer includes this host's sending and receiving.
    #[arg(long)]
    host_baseline: bool,

    /// The rate of the link into hop TTL, as TTL=RATE (repeatable, e.g. --wire 1=10M --wire
    /// 2=56k): that hop's transit cost is then reported as the seed computes it, path through
    /// it - path to it - wire serialization (8 / rate per byte).
    #[arg(long, value_name = "TTL=RATE", value_parser = parse_wire)]
    wire: Vec<(u8, BitRate)>,

    /// Adaptive: repeat rounds of -n probes per size until every hop's 95% interval of the
    /// one-way delay at the largest size (fixed width + per-byte width x size) is narrower than
    /// this (e.g. 5us), at most 20 rounds and --max-time.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    until_width: Option<Duration>,

    /// Seed of the probe order and of the bootstrap (runs with one seed repeat exactly).
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Bootstrap replicates for the confidence intervals.
    #[arg(long, default_value_t = 400, value_name = "N")]
    bootstrap: usize,

    /// Probe with UDP datagrams that a wirespeed agent on HOST echoes (`wirespeed serve`),
    /// instead of ICMP echo: for paths that filter ICMP, or to time a known far end. The agent
    /// answers only this session's datagrams, with the same bytes.
    #[arg(long, conflicts_with_all = ["hops", "host_baseline", "socket"])]
    udp: bool,

    /// The agent's control port with --udp.
    #[arg(
        long,
        short = 'p',
        default_value_t = wirespeed_net::control::DEFAULT_PORT,
        requires = "udp",
        value_name = "PORT"
    )]
    port: u16,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    /// ICMP socket: auto (datagram, else raw), dgram (unprivileged ping socket), raw (root).
    #[arg(long, value_enum, default_value_t = SocketArg::Auto)]
    socket: SocketArg,

    /// Which clock to fit: auto (kernel software timestamps when every answer has them, else
    /// CLOCK_MONOTONIC around the syscalls), kernel, or user.
    #[arg(long, value_enum, default_value_t = ClockArg::Auto)]
    clock: ClockArg,

    /// Let idle CPUs halt during the run. By default (as root) the probe holds
    /// /dev/cpu_dma_latency at 0 us, as cyclictest does, so that no CPU's wake-up from halt
    /// (tens of microseconds, more on a virtual machine) is measured as path delay.
    #[arg(long)]
    allow_cpu_idle: bool,

    /// Also write an SVG plot: minimum round trip against bytes crossed, per hop, with the fitted
    /// lines (the seed's figures 2-4).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,

    #[command(flatten)]
    schedule: crate::common::schedule::ScheduleArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SocketArg {
    Auto,
    Dgram,
    Raw,
}

#[derive(Debug, Clone, Copy, PartialEq, ValueEnum)]
enum ClockArg {
    Auto,
    Kernel,
    User,
}

/// Probe sizes as given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sizes(pub(crate) Vec<usize>);

/// Parses `TTL=RATE`.
fn parse_wire(text: &str) -> Result<(u8, BitRate), String> {
    let bad = |why: String| format!("'{text}' is not TTL=RATE ({why}), for example 1=10M or 2=56k");
    let (ttl, rate) = text.split_once('=').ok_or_else(|| bad("no '='".into()))?;
    let ttl: u8 = ttl
        .trim()
        .parse()
        .map_err(|_| bad("TTL is 1 to 255".into()))?;
    let rate: BitRate = rate.trim().parse().map_err(|e| bad(format!("{e}")))?;
    if ttl == 0 || rate.bits_per_second() == 0 {
        return Err(bad("TTL and rate must be above 0".into()));
    }
    Ok((ttl, rate))
}

/// Probe sizes in the number-list syntax every command shares: `28..1500:64`, `64,512,1024`,
/// `100-200` (IP packet bytes, at most 65535, at most 1000 sizes).
pub(crate) fn parse_sizes(text: &str) -> Result<Sizes, String> {
    let sizes = wirespeed_model::units::parse_number_list(text, 1, 65535, 1000)
        .map_err(|e| format!("--sizes: {e}"))?;
    Ok(Sizes(sizes.into_iter().map(|s| s as usize).collect()))
}

/// The destination and, for a link-local one, its link (`fe80::1%eth0`).
fn resolve(host: &str) -> anyhow::Result<(IpAddr, u32)> {
    let parsed = crate::common::host::Host::parse(host, "probe")?;
    if parsed.port().is_some() {
        bail!("{host}: probe takes a host, not a port; give the agent's port with -p");
    }
    let addr = parsed.addresses(0, "probe")?.remove(0);
    let scope = match addr {
        std::net::SocketAddr::V6(v6) => v6.scope_id(),
        std::net::SocketAddr::V4(_) => 0,
    };
    Ok((addr.ip(), scope))
}

/// Which clock the fits used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Timestamps {
    /// SO_TIMESTAMPING software stamps: transmit (driver) to receive (stack).
    KernelSoftware,
    /// CLOCK_MONOTONIC before sendto and after recvmsg.
    Monotonic,
}

#[derive(Debug, Serialize, Deserialize)]
struct Parameters {
    host: String,
    target: IpAddr,
    sizes_bytes: Vec<usize>,
    probes_per_size: u32,
    pub(crate) per_hop: bool,
    max_ttl: Option<u8>,
    gap_seconds: f64,
    hop_interval_seconds: f64,
    timeout_seconds: f64,
    seed: u64,
    bootstrap_replicates: usize,
    until_width_seconds: Option<f64>,
    host_baseline: bool,
    /// (TTL, bit/s) of --wire.
    wire: Vec<(u8, u64)>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HopReport {
    pub(crate) responder: Option<IpAddr>,
    pub(crate) destination: bool,
    /// With --wire: own cost minus the wire's serialization (the seed's transit formula).
    #[serde(skip_serializing_if = "Option::is_none")]
    transit: Option<Transit>,
    #[serde(flatten)]
    pub(crate) analysis: HopAnalysis,
}

/// `through - to - wire` for one hop.
#[derive(Debug, Serialize, Deserialize)]
struct Transit {
    wire_rate_bits_per_second: u64,
    wire: Cost,
    node: Cost,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ProbeReport {
    socket: SocketKind,
    /// With --udp: what the agent's echo counted (answered, dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    echo: Option<wirespeed_net::control::echo::EchoTotals>,
    timestamps: Timestamps,
    kernel_stamped_answers: usize,
    answers: usize,
    timer_floor_seconds: f64,
    clock_resolution_seconds: f64,
    /// Whether CPUs were kept from halting during the run (PM QoS), and if not, why.
    #[serde(default)]
    cpu_wakeup: String,
    path_mtu_bytes: Option<usize>,
    elapsed_seconds: f64,
    stopped_early: bool,
    /// Whether every hop was probed (else the destination alone, at TTL 64).
    pub(crate) per_hop: bool,
    /// This host's own line from --host-baseline (the seed's roc), subtracted from hop 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    host_baseline: Option<HopFit>,
    /// Rounds of probes sent (more than 1 with --until-width).
    rounds: u32,
    /// With --until-width: whether the intervals got narrow enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    converged: Option<bool>,
    /// Each hop; `fit.one_way` is the seed's `fixed + per_byte x size`, in ms.
    pub(crate) hops: Vec<HopReport>,
    /// Every probe, as sent.
    samples: Vec<Sample>,
    #[serde(skip, default = "unspecified")]
    target: IpAddr,
    /// `-f`: the unit of implied link rates in the text.
    #[serde(skip)]
    rate_format: wirespeed_model::RateFormat,
}

/// The target of a decoded document, which keeps it in its parameters instead.
fn unspecified() -> IpAddr {
    IpAddr::from([0, 0, 0, 0])
}

/// The smallest IP packet an Ethernet frame carries without padding (64-byte minimum frame less
/// header and FCS: 46 bytes). Smaller probes all cost one minimum frame on every Ethernet hop,
/// so they sit above the line of the others and bend the fit (86-245 us above it on a
/// three-hop lab path, per-byte costs 13-30% low).
fn unpadded_packet_bytes() -> usize {
    let ethernet = wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 };
    (ethernet.min_frame() - ethernet.frame_overhead()) as usize
}

/// 16 sizes from the smallest probe that no Ethernet hop pads up to the path MTU (at most 1500).
fn default_sizes(smallest_echo: usize, mtu: Option<usize>) -> Vec<usize> {
    let min = smallest_echo.max(unpadded_packet_bytes());
    let max = mtu.unwrap_or(1500).clamp(min + 15, 1500);
    (0..16).map(|i| min + (max - min) * i / 15).collect()
}

/// How a sentence names a hop: "the destination" when only the destination was probed (its
/// TTL, 64, is no hop number), else its hop number.
fn hop_name(h: &HopReport, per_hop: bool) -> String {
    match (h.destination, per_hop) {
        (true, false) => "the destination".to_string(),
        (true, true) => format!("hop {} (the destination)", h.analysis.ttl),
        (false, _) => format!("hop {}", h.analysis.ttl),
    }
}

/// Rounds of `--until-width` at most (each round is `-n` probes per size per hop).
const MAX_ROUNDS: u32 = 20;

/// Kernel stamps when every answer has one (or when asked), else the monotonic clock.
fn choose_clock(samples: &[Sample], clock: ClockArg) -> anyhow::Result<(Timestamps, usize, usize)> {
    let answered: Vec<&Sample> = samples.iter().filter(|s| s.rtt_user_ns.is_some()).collect();
    let stamped = answered
        .iter()
        .filter(|s| s.rtt_kernel_ns.is_some())
        .count();
    let timestamps = match clock {
        ClockArg::User => Timestamps::Monotonic,
        ClockArg::Kernel if stamped < answered.len() => bail!(
            "--clock kernel: only {stamped} of {} answers carried kernel timestamps on this socket; use --clock auto or user",
            answered.len()
        ),
        ClockArg::Kernel => Timestamps::KernelSoftware,
        ClockArg::Auto if stamped == answered.len() && stamped > 0 => Timestamps::KernelSoftware,
        ClockArg::Auto => Timestamps::Monotonic,
    };
    Ok((timestamps, stamped, answered.len()))
}

fn observations(samples: &[Sample], timestamps: Timestamps) -> Vec<Observation> {
    samples
        .iter()
        .map(|s| Observation {
            ttl: s.ttl,
            sent_bytes: s.sent_bytes,
            returned_bytes: s.returned_bytes,
            // A destination unreachable (a filter that woke up mid-run) times a different
            // path from the echo or time exceeded being fitted: count it as lost.
            rtt_ms: match (s.reply, timestamps) {
                (ReplyKind::Unreachable | ReplyKind::TooBig | ReplyKind::Lost, _) => None,
                (_, Timestamps::KernelSoftware) => s.rtt_kernel_ns,
                (_, Timestamps::Monotonic) => s.rtt_user_ns,
            }
            .map(|ns| ns as f64 / 1e6),
            sent_at_seconds: s.sent_at_ns as f64 / 1e9,
        })
        .collect()
}

/// Echoes to this host's own loopback with the same sizes and count: the seed's roc.
fn host_baseline(config: &ProbeConfig) -> anyhow::Result<Vec<Sample>> {
    let lo: IpAddr = match config.target {
        IpAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
        IpAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
    };
    let mut c = config.clone();
    c.target = lo;
    c.max_ttl = None;
    Ok(probe::run(&c)
        .context("--host-baseline: probing this host's loopback")?
        .samples)
}

/// The host's line from its loopback samples, read with the same clock as the path.
fn host_fit(
    samples: &[Sample],
    timestamps: Timestamps,
    params: &AnalysisParams,
) -> anyhow::Result<HopFit> {
    bestcase::analyze(&observations(samples, timestamps), params, None)
        .into_iter()
        .next()
        .and_then(|h| h.fit)
        .context("--host-baseline: the loopback probes gave no fit")
}

/// Whether every hop has a fit whose 95% bootstrap interval of the one-way delay at the largest
/// size (fixed width + per-byte width x size) is narrower than `width_ms`.
fn converged(hops: &[HopAnalysis], width_ms: f64, largest: f64) -> bool {
    !hops.is_empty()
        && hops.iter().all(|h| {
            h.fit.as_ref().and_then(|f| f.bootstrap).is_some_and(|b| {
                let width = b.intercept.width() + b.slope.width() * largest;
                // A zero width is resamples that tie (a few probes per size whose minima
                // repeat, seen in CI with 4 per size), not a precise line: probe on.
                width > 0.0 && width < width_ms
            })
        })
}

pub(crate) fn run(args: ProbeArgs) -> anyhow::Result<()> {
    args.schedule.check_unused("--max-runs")?;
    if args.count == 0 {
        bail!("--count 0 sends nothing: give at least 1 probe per size, e.g. -c 32");
    }
    if args.until_width.is_some_and(|w| w.is_zero()) {
        bail!(
            "--until-width 0: no interval is ever that narrow, so the rounds would run to their \
             limit; give a width such as --until-width 5us"
        );
    }
    args.key.load()?;
    args.brief.check(&args.output, &[])?;
    if args.schedule.active() {
        if args.brief.brief {
            bail!(
                "--every prints one line per run already: drop --brief (each run's whole document is in the results file)"
            );
        }
        return run_scheduled(&args);
    }
    let (doc, interrupted) = measure(&args)?;
    let Some(what) = interrupted else {
        return crate::common::brief::show(&args.brief, &args.output, &doc);
    };
    crate::common::brief::show_partial(&args.brief, &args.output, &doc, &what)?;
    Err(crate::common::interrupt::Interrupted {
        message: "the partial fit is printed above (probe keeps no results file: --json saves it, marked \"partial\": true)".into(),
        resume: None,
    }
    .into())
}

/// `--every`: the probe on a schedule; the headline is the last hop's least round trip at
/// the smallest size.
fn run_scheduled(args: &ProbeArgs) -> anyhow::Result<()> {
    if args.plot.is_some() {
        bail!(
            "--plot draws one run: drop it with --every (wirespeed report draws the runs of the results file)"
        );
    }
    let mut one = || {
        let (doc, interrupted) = measure(args)?;
        let headline = doc
            .result
            .hops
            .last()
            .and_then(|h| h.analysis.sizes.first())
            .map(|s| s.min_rtt_ms)
            .filter(|v| v.is_finite());
        let failure = interrupted.or_else(|| {
            doc.result
                .hops
                .last()
                .filter(|h| {
                    h.analysis
                        .sizes
                        .iter()
                        .all(|s| s.sent > 0 && s.lost == s.sent)
                })
                .map(|_| "no probe was answered".to_string())
        });
        Ok(crate::common::schedule::RunOutput {
            document: serde_json::to_value(&doc)?,
            headline,
            failure,
        })
    };
    crate::common::schedule::run(
        &args.schedule,
        crate::common::schedule::Job {
            command: "probe",
            count_flag: "--max-runs",
            seed: Some(args.seed),
            headline: "least round trip at the smallest size",
            unit: crate::common::schedule::Unit::Milliseconds,
            output: &args.output,
            run: &mut one,
        },
    )
}

/// One probe of the path: the document, and what was measured if Ctrl-C cut it short.
fn measure(
    args: &ProbeArgs,
) -> anyhow::Result<(Document<Parameters, ProbeReport>, Option<String>)> {
    if let Some(plot) = &args.plot {
        crate::common::output::check_output_file("--plot", plot)?;
    }
    let (target, scope_id) = resolve(&args.host)?;
    let min = if args.udp {
        wirespeed_net::probe::echo::min_size(target)
    } else {
        probe::min_size(target)
    };
    let udp = if args.udp {
        let auth = args.key.load()?;
        Some(probe::UdpTarget {
            port: args.port,
            auth,
        })
    } else {
        None
    };
    let mtu = wirespeed_net::icmp_socket::path_mtu(target).ok();
    let sizes = match &args.sizes {
        Some(s) => s.0.clone(),
        None => default_sizes(min, mtu),
    };
    if args.count == 0 {
        bail!("--count 0 sends nothing: give at least 1 probe per size, e.g. -c 32");
    }
    let config = ProbeConfig {
        target,
        scope_id,
        tos: args.tos,
        sizes: sizes.clone(),
        per_size: args.count,
        max_ttl: args.hops.then_some(args.max_ttl),
        gap: args.gap,
        hop_interval: args.hop_interval,
        timeout: args.timeout,
        seed: args.seed,
        max_duration: args.max_time,
        socket: match args.socket {
            SocketArg::Auto => SocketChoice::Auto,
            SocketArg::Dgram => SocketChoice::Datagram,
            SocketArg::Raw => SocketChoice::Raw,
        },
        udp,
        interrupt: Some(crate::common::interrupt::watch()),
        progress: None,
    };
    let mut config = config;
    // Probes take the time of their round trips, gaps and per-hop spacing: no estimate before
    // the first ones are answered.
    let progress = Arc::new(crate::common::progress::Progress::start(
        "probe", "probes", 0, None, false,
    ));
    let hook = Arc::clone(&progress);
    config.progress = Some(probe::ProgressHook(Arc::new(move |sent, planned| {
        hook.set_total(planned);
        hook.set_position(sent);
    })));
    // Held until the analysis is done: the host baseline and every adaptive round run under it.
    let (_cpu_hold, cpu_wakeup) = if args.allow_cpu_idle {
        (None, "CPUs allowed to halt (--allow-cpu-idle)".to_string())
    } else {
        match wirespeed_net::pmqos::hold(0) {
            Ok(h) => (
                Some(h),
                "CPUs kept from halting (/dev/cpu_dma_latency 0 us)".to_string(),
            ),
            Err(e) => (
                None,
                format!("CPUs may halt: /dev/cpu_dma_latency: {e} (root keeps them awake)"),
            ),
        }
    };
    let host_samples = if args.host_baseline {
        Some(host_baseline(&config).map_err(or_interrupted)?)
    } else {
        None
    };
    let mut run = probe::run(&config)?;
    if run.interrupted && run.samples.is_empty() {
        return Err(crate::common::interrupt::Interrupted {
            message: "stopped before any probe of the path was measured: nothing to print".into(),
            resume: None,
        }
        .into());
    }
    let (floor, resolution) = wirespeed_net::icmp_socket::timer_floor();
    let params = AnalysisParams {
        bootstrap_replicates: args.bootstrap,
        confidence: 0.95,
        seed: args.seed,
        // A step must exceed a few timer floors (and 1 us) to be told apart from clock noise.
        min_step_ms: (4.0 * floor.as_secs_f64() * 1e3).max(0.001),
    };
    let largest = sizes.iter().copied().max().unwrap_or(0) as f64;
    let mut rounds = 1u32;
    let (timestamps, stamped, answers, analyses, converged, host_line) = loop {
        let (timestamps, stamped, answers) =
            choose_clock(&run.samples, args.clock).map_err(or_interrupted)?;
        let host_line = match &host_samples {
            Some(samples) => Some(host_fit(samples, timestamps, &params).map_err(or_interrupted)?),
            None => None,
        };
        let analyses = bestcase::analyze(
            &observations(&run.samples, timestamps),
            &params,
            host_line.as_ref().map(|h| h.one_way),
        );
        let Some(width) = args.until_width else {
            break (timestamps, stamped, answers, analyses, None, host_line);
        };
        let done = converged(&analyses, width.as_secs_f64() * 1e3, largest);
        let left = args
            .max_time
            .saturating_sub(Duration::from_secs_f64(run.elapsed_seconds));
        if done || rounds >= MAX_ROUNDS || run.stopped_early || run.interrupted || left.is_zero() {
            break (
                timestamps,
                stamped,
                answers,
                analyses,
                Some(done),
                host_line,
            );
        }
        config.seed = args.seed.wrapping_add(u64::from(rounds));
        config.max_duration = left;
        let more = probe::run(&config)?;
        let offset = (run.elapsed_seconds * 1e9) as u64;
        run.samples.extend(more.samples.into_iter().map(|mut s| {
            s.sent_at_ns += offset;
            s
        }));
        for h in more.hops {
            if !run.hops.iter().any(|x| x.ttl == h.ttl) {
                run.hops.push(h);
            }
        }
        run.elapsed_seconds += more.elapsed_seconds;
        run.stopped_early |= more.stopped_early;
        run.interrupted |= more.interrupted;
        if let (Some(total), Some(round)) = (&mut run.echo, more.echo) {
            total.answered += round.answered;
            total.dropped += round.dropped;
        }
        rounds += 1;
    };
    progress.finish();
    let hops: Vec<HopReport> = analyses
        .into_iter()
        .map(|analysis| {
            let hop: Option<&Hop> = run.hops.iter().find(|h| h.ttl == analysis.ttl);
            let transit = args
                .wire
                .iter()
                .find(|(ttl, _)| *ttl == analysis.ttl)
                .zip(analysis.increment.as_ref())
                .map(|((_, rate), inc)| {
                    let wire = Cost::serialization(*rate);
                    Transit {
                        wire_rate_bits_per_second: rate.bits_per_second(),
                        wire,
                        node: inc.cost - wire,
                    }
                });
            HopReport {
                responder: hop.and_then(|h| h.responder),
                destination: hop.is_some_and(|h| h.destination),
                transit,
                analysis,
            }
        })
        .collect();
    let mut warnings = Vec::new();
    for h in &run.hops {
        if h.responder.is_none() {
            warnings.push(ProbeFinding::HopSilent { ttl: h.ttl });
        }
    }
    if args.hops && !run.hops.iter().any(|h| h.destination) {
        warnings.push(ProbeFinding::TargetNotReached {
            target,
            max_ttl: args.max_ttl,
        });
    }
    warnings.extend(verdicts::too_big(&run.samples));
    for h in &hops {
        let hop = hop_name(h, args.hops);
        warnings.extend(verdicts::mixed_responders(
            &run.samples,
            h.analysis.ttl,
            &hop,
        ));
        if let Some(r) = &h.analysis.rate_limit {
            warnings.push(ProbeFinding::HopRateLimited {
                hop: hop.clone(),
                reason: r.clone(),
            });
        }
        if let Some(r) = &h.analysis.no_fit_reason {
            warnings.push(ProbeFinding::HopNotFitted {
                hop,
                reason: r.clone(),
            });
        }
    }
    if run.stopped_early && !run.interrupted {
        warnings.push(ProbeFinding::StoppedAtMaxTime {
            max_time_seconds: args.max_time.as_secs_f64(),
        });
    }
    if timestamps == Timestamps::Monotonic && args.clock == ClockArg::Auto {
        warnings.push(ProbeFinding::UserSpaceTimestamps {
            kernel_stamped_answers: stamped,
            answers,
        });
    }
    let mut verdicts = Vec::new();
    for h in &hops {
        if let Some(step) = h.analysis.fit.as_ref().and_then(|f| f.step.as_ref()) {
            verdicts.push(ProbeFinding::BufferingStep {
                hop: hop_name(h, args.hops),
                jump_seconds: step.jump_ms / 1e3,
                between_bytes: step.between_bytes,
                f_statistic: step.f_statistic,
            });
        }
    }
    let run_interrupted = run.interrupted;
    // Every round plans the whole schedule again.
    let planned = run.hops.iter().filter(|h| h.responder.is_some()).count()
        * sizes.len()
        * args.count as usize
        * rounds as usize;
    let report = ProbeReport {
        socket: run.socket,
        echo: run.echo,
        timestamps,
        kernel_stamped_answers: stamped,
        answers,
        timer_floor_seconds: floor.as_secs_f64(),
        clock_resolution_seconds: resolution.as_secs_f64(),
        cpu_wakeup,
        path_mtu_bytes: run.path_mtu_bytes,
        elapsed_seconds: run.elapsed_seconds,
        stopped_early: run.stopped_early,
        per_hop: args.hops,
        rounds,
        converged,
        host_baseline: host_line,
        hops,
        samples: run.samples,
        target,
        rate_format: args.output.rate_format,
    };
    let parameters = Parameters {
        host: args.host.clone(),
        target,
        sizes_bytes: sizes,
        probes_per_size: args.count,
        per_hop: args.hops,
        max_ttl: args.hops.then_some(args.max_ttl),
        gap_seconds: args.gap.as_secs_f64(),
        hop_interval_seconds: args.hop_interval.as_secs_f64(),
        timeout_seconds: args.timeout.as_secs_f64(),
        seed: args.seed,
        bootstrap_replicates: args.bootstrap,
        until_width_seconds: args.until_width.map(|d| d.as_secs_f64()),
        host_baseline: args.host_baseline,
        wire: args
            .wire
            .iter()
            .map(|(t, r)| (*t, r.bits_per_second()))
            .collect(),
    };
    if let Some(file) = &args.plot {
        std::fs::write(file, plot(&report)?)
            .with_context(|| format!("cannot write the plot to {}", file.display()))?;
    }
    let mut doc = Document::new("probe", parameters, report);
    if doc.result.converged == Some(false) {
        warnings.push(ProbeFinding::IntervalsNotConverged {
            rounds: doc.result.rounds,
        });
    }
    for finding in warnings.iter().chain(&verdicts) {
        match finding.severity() {
            Severity::Verdict => doc.verdict(finding),
            Severity::Warning => doc.warning(finding),
        }
    }
    let what = run_interrupted.then(|| {
        format!(
            "interrupted after {} probes of the {planned} planned ({rounds} round(s)); the fits below are from those",
            doc.result.samples.len()
        )
    });
    Ok((doc, what))
}

/// An analysis that failed because Ctrl-C left too few probes is an interrupt, not an error.
fn or_interrupted(err: anyhow::Error) -> anyhow::Error {
    if crate::common::interrupt::requested() {
        crate::common::interrupt::Interrupted {
            message: format!("stopped before enough was measured for a fit ({err:#})"),
            resume: None,
        }
        .into()
    } else {
        err
    }
}

/// Minimum RTT against bytes crossed (sent + returned), one series per hop, with its line.
fn plot(report: &ProbeReport) -> anyhow::Result<String> {
    let title = format!("wirespeed probe {}: minimum round trip", report.target);
    let labels = Labels {
        title: &title,
        x: "bytes crossed (sent + returned)",
        y: "minimum RTT, ms",
    };
    let plot = report.hops.iter().fold(Plot::new(labels), |plot, h| {
        let who = h.responder.map_or("*".to_string(), |r| r.to_string());
        let series = Series {
            name: if report.per_hop {
                format!("hop {} {who}", h.analysis.ttl)
            } else {
                who
            },
            points: h
                .analysis
                .sizes
                .iter()
                .map(|r| ((r.sent_bytes + r.returned_bytes) as f64, r.min_rtt_ms))
                .collect(),
        };
        let curve = Curve::new(series, Mark::Points);
        plot.curve(match &h.analysis.fit {
            Some(f) => curve.with_fit(f.rtt_intercept_ms, f.rtt_slope_ms_per_byte),
            None => curve,
        })
    });
    Ok(plot.x_from_zero().svg()?)
}

/// The unit a time of `ms` milliseconds reads best in, and its size in milliseconds.
fn time_unit(ms: f64) -> (&'static str, f64) {
    match ms.abs() {
        m if m >= 1000.0 => ("s", 1000.0),
        m if m >= 1.0 => ("ms", 1.0),
        m if m >= 1e-3 => ("us", 1e-3),
        _ => ("ns", 1e-6),
    }
}

/// A time given in milliseconds, scaled to s, ms, us or ns with three significant digits
/// (a per-byte cost of 0.000000349 ms is "0.349 ns").
fn time_text(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".into();
    }
    let (unit, size) = time_unit(ms);
    format!(
        "{} {unit}",
        wirespeed_model::units::significant(ms / size, 3)
    )
}

/// An interval of times in one unit, chosen by its larger end.
fn interval_text(low_ms: f64, high_ms: f64) -> String {
    let (unit, size) = time_unit(low_ms.abs().max(high_ms.abs()));
    let v = |x: f64| wirespeed_model::units::significant(x / size, 3);
    format!("[{}, {}] {unit}", v(low_ms), v(high_ms))
}

/// `fixed + per_byte/byte x size` with the sign of the per-byte part folded in.
fn line(c: Cost) -> String {
    let sign = if c.per_byte_ms < 0.0 { '-' } else { '+' };
    format!(
        "{} {sign} {}/byte x size",
        time_text(c.fixed_ms),
        time_text(c.per_byte_ms.abs())
    )
}

fn ms(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "-".into()
    }
}

impl Render for ProbeReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let clock = match self.timestamps {
            Timestamps::KernelSoftware => "kernel software timestamps (SO_TIMESTAMPING)",
            Timestamps::Monotonic => "CLOCK_MONOTONIC around the syscalls",
        };
        let socket = match self.socket {
            SocketKind::Datagram => "ICMP datagram socket",
            SocketKind::Raw => "raw ICMP socket",
            SocketKind::UdpEcho => "UDP echo to the wirespeed agent",
        };
        writeln!(
            out,
            "probe {}: {} answers of {} probes, {socket}, {clock}",
            self.target,
            self.answers,
            self.samples.len()
        )?;
        writeln!(
            out,
            "timer floor {} (CLOCK_MONOTONIC resolution {}), {}, path MTU {}, {:.2} s",
            format_seconds(self.timer_floor_seconds),
            format_seconds(self.clock_resolution_seconds),
            self.cpu_wakeup,
            self.path_mtu_bytes
                .map_or("unknown".to_string(), |m| format!("{m} bytes")),
            self.elapsed_seconds
        )?;
        if let Some(b) = &self.host_baseline {
            writeln!(
                out,
                "this host (loopback baseline, the seed's roc): one-way {} ms, subtracted from hop 1",
                line(b.one_way)
            )?;
        }
        for h in &self.hops {
            let a = &h.analysis;
            let who = h.responder.map_or("*".to_string(), |r| r.to_string());
            let role = if h.destination {
                " (destination, echo)"
            } else {
                " (time exceeded)"
            };
            writeln!(out)?;
            if self.per_hop {
                writeln!(
                    out,
                    "hop {} {who}{role}, loss {:.1}%",
                    a.ttl,
                    a.loss_fraction * 100.0
                )?;
            } else {
                writeln!(out, "{who}, loss {:.1}%", a.loss_fraction * 100.0)?;
            }
            let mut t = Table::new([
                "  sent B",
                "returned B",
                "probes",
                "lost",
                "min RTT ms",
                "median ms",
                "resid us",
            ]);
            for r in &a.sizes {
                t.row([
                    format!("  {}", r.sent_bytes),
                    r.returned_bytes.to_string(),
                    r.sent.to_string(),
                    r.lost.to_string(),
                    ms(r.min_rtt_ms),
                    ms(r.median_rtt_ms),
                    if r.residual_ms.is_finite() {
                        format!("{:+.1}", r.residual_ms * 1e3)
                    } else {
                        "-".into()
                    },
                ]);
            }
            write!(out, "{t}")?;
            match &a.fit {
                None => writeln!(
                    out,
                    "  {}",
                    a.no_fit_reason.as_deref().unwrap_or("not fitted")
                )?,
                Some(f) => {
                    writeln!(
                        out,
                        "  fit of the minimums: RTT = {}, R^2 {:.4}, residual sd {:.1} us",
                        line(Cost::new(f.rtt_intercept_ms, f.rtt_slope_ms_per_byte))
                            .replace(" x size", " x (bytes sent + returned)"),
                        f.r_squared,
                        f.residual_std_ms * 1e3
                    )?;
                    writeln!(out, "  one-way best case: {}", line(f.one_way))?;
                    let l = &f.rtt_line;
                    writeln!(
                        out,
                        "  plane: RTT = {} + {}/byte x sent + {}/byte x returned ({})",
                        time_text(l.fixed_ms),
                        time_text(l.per_sent_byte_ms),
                        time_text(l.per_returned_byte_ms),
                        match f.separation {
                            Separation::Separated => "sent and returned bytes separated",
                            Separation::Echo => "an echo: one slope both ways",
                            Separation::Collinear =>
                                "one slope: the sizes lie on one side of the quote limit (548 bytes)",
                        }
                    )?;
                    if let Some(b) = &f.bootstrap {
                        writeln!(
                            out,
                            "    95% bootstrap: fixed {}, per byte {}",
                            interval_text(b.intercept.low, b.intercept.high),
                            interval_text(b.slope.low, b.slope.high)
                        )?;
                    }
                    if let Some(s) = &f.split_half {
                        writeln!(
                            out,
                            "    split-half (even/odd): fixed {}, per byte {}",
                            interval_text(s.intercept.low, s.intercept.high),
                            interval_text(s.slope.low, s.slope.high)
                        )?;
                    }
                    if let (Some(ts), Some(l)) = (&f.theil_sen, &f.least_median_of_squares) {
                        writeln!(
                            out,
                            "    robust: Theil-Sen {}; least median of squares {}",
                            line(*ts),
                            line(*l)
                        )?;
                    }
                }
            }
            if let Some(inc) = &a.increment {
                let rate = inc
                    .implied_bits_per_second
                    .map_or("none (per-byte cost not above 0)".to_string(), |b| {
                        self.rate_format.format(b)
                    });
                let from = if inc.from_ttl == 0 {
                    "this host".to_string()
                } else {
                    format!("hop {}", inc.from_ttl)
                };
                writeln!(
                    out,
                    "  own cost (from {from}): {}, implied link rate {rate}",
                    line(inc.cost)
                )?;
                if inc.answer_per_byte_ms != 0.0 {
                    writeln!(
                        out,
                        "    answer per returned byte at this hop: {}",
                        time_text(inc.answer_per_byte_ms)
                    )?;
                }
                if let Some(c) = &inc.caveat {
                    writeln!(out, "    note: {c}")?;
                }
                if let Some(t) = &h.transit {
                    writeln!(
                        out,
                        "  transit (own cost - {}/byte wire at {}): {}",
                        time_text(t.wire.per_byte_ms),
                        BitRate::from_bits_per_second(t.wire_rate_bits_per_second),
                        line(t.node)
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21 item 7: the default sizes are never padded by Ethernet (46 bytes and up).
    #[test]
    fn default_sizes_start_above_ethernet_padding() {
        assert_eq!(unpadded_packet_bytes(), 46);
        let sizes = default_sizes(28, Some(1500));
        assert_eq!((sizes[0], sizes[15], sizes.len()), (46, 1500, 16));
        // A UDP echo's smallest probe (52 bytes) is above it already.
        assert_eq!(default_sizes(52, None)[0], 52);
    }

    /// Issue 15 item 7: costs read in a unit that suits them, never nine decimals of ms.
    #[test]
    fn times_scale_to_a_readable_unit() {
        assert_eq!(time_text(0.000000349), "0.349 ns");
        assert_eq!(time_text(0.00104), "1.04 us");
        assert_eq!(time_text(0.696), "696 us");
        assert_eq!(time_text(12.5), "12.5 ms");
        assert_eq!(time_text(f64::NAN), "-");
        assert_eq!(interval_text(0.000606, 0.00259), "[0.606, 2.59] us");
        assert_eq!(
            line(Cost::new(0.00104, -0.000000349)),
            "1.04 us - 0.349 ns/byte x size"
        );
    }

    /// Issue 15 item 4: the destination probed alone (TTL 64) is "the destination", not hop 64.
    #[test]
    fn the_destination_alone_is_not_called_hop_64() {
        let report = |ttl: u8, destination: bool| HopReport {
            responder: None,
            destination,
            transit: None,
            analysis: HopAnalysis {
                ttl,
                sizes: Vec::new(),
                loss_fraction: 0.0,
                fit: None,
                no_fit_reason: None,
                rate_limit: None,
                increment: None,
            },
        };
        assert_eq!(hop_name(&report(64, true), false), "the destination");
        assert_eq!(hop_name(&report(3, true), true), "hop 3 (the destination)");
        assert_eq!(hop_name(&report(2, false), true), "hop 2");
    }

    #[test]
    fn wire_parses_ttl_and_rate() {
        assert_eq!(
            parse_wire("2=56k").unwrap(),
            (2, BitRate::from_bits_per_second(56_000))
        );
        for bad in ["2", "0=10M", "x=10M", "1=fast", "1=0"] {
            assert!(parse_wire(bad).unwrap_err().contains("1=10M"), "{bad}");
        }
    }

    #[test]
    fn sizes_parse_as_range_or_list() {
        assert_eq!(parse_sizes("28..100:32").unwrap().0, vec![28, 60, 92, 100]);
        assert_eq!(parse_sizes("40,1024").unwrap().0, vec![40, 1024]);
        assert_eq!(parse_sizes("64..128:64").unwrap().0, vec![64, 128]);
        // Issue 15 item 7: the syntaxes of the other commands' lists work here too.
        assert_eq!(parse_sizes("100-103").unwrap().0, vec![100, 101, 102, 103]);
        assert_eq!(parse_sizes("1..5").unwrap().0, vec![1, 2, 3, 4, 5]);
        for bad in ["", "a,b", "10..5:1", "1..5:0", "0,64", "70000"] {
            let e = parse_sizes(bad).unwrap_err();
            assert!(e.starts_with("--sizes: "), "{bad}: {e}");
        }
    }
}
