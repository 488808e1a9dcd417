//! `wirespeed probe HOST`: the best-case delay of a path, and of every hop on it (seed 001).
//! The flags become a checked [`Config`] here; `measure` runs it, `result` is its schema,
//! `text`, `html`, `brief` and `metrics` its views.

#[doc(hidden)]
pub mod brief;
pub(crate) mod html;
#[doc(hidden)]
pub mod measure;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod result;
#[doc(hidden)]
pub mod text;
#[doc(hidden)]
pub mod verdicts;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use clap::{Args, ValueEnum};
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, RateFormat};
use wirespeed_net::SocketChoice;
use wirespeed_net::probe::UdpTarget;

use crate::common::output::OutputArgs;

pub use self::measure::measure;
pub use self::result::{HopReport, Parameters, ProbeReport, Timestamps, Transit};

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct ProbeArgs {
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

    /// Adaptive: repeat rounds of -c probes per size until every hop's 95% interval over
    /// independent time blocks of the one-way delay at the largest size (fixed width +
    /// per-byte width x size) is narrower than this (e.g. 5us), at most 20 rounds and
    /// --max-time.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    until_width: Option<Duration>,

    /// Adaptive, with --hops: after the first round of -c probes a size, repeat rounds until
    /// every own cost the probe can separate is known within its tolerance (fixed 30 us, per
    /// byte 2%, answer per byte 5%) across independent stretches of the run, or until the
    /// budget holds no further round of at least 8 probes a size (at most 20 rounds and
    /// --max-time). Without BUDGET the budget is planned from the path after the first round:
    /// the time its widest figure projects to settle, at most --max-time. The output says
    /// what the path asked for and what stopped the rounds.
    #[arg(long, value_name = "BUDGET", num_args = 0..=1,
          value_parser = parse_duration, requires = "hops", conflicts_with = "until_width")]
    until_stable: Option<Option<Duration>>,

    /// Seed of the probe order and of the bootstrap (runs with one seed repeat exactly).
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Bootstrap replicates for the confidence intervals.
    #[arg(long, default_value_t = 400, value_name = "N")]
    bootstrap: usize,

    /// Probe with UDP datagrams that a wirespeed agent on HOST echoes (`wirespeed serve`),
    /// instead of ICMP echo: for paths that filter ICMP, or to time a known far end. The agent
    /// answers only this session's datagrams, with the same bytes. With --hops the hops are
    /// probed with ICMP as always, and the destination also by the agent, with whole echoes
    /// and short replies of fixed size: its per byte sent and returned apart.
    #[arg(long)]
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
#[doc(hidden)]
pub enum ClockArg {
    Auto,
    Kernel,
    User,
}

/// Probe sizes as given.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct Sizes(pub Vec<usize>);

/// Parses `TTL=RATE`.
#[doc(hidden)]
pub fn parse_wire(text: &str) -> Result<(u8, BitRate), String> {
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
#[doc(hidden)]
pub fn parse_sizes(text: &str) -> Result<Sizes, String> {
    let sizes = wirespeed_model::units::parse_number_list(text, 1, 65535, 1000)
        .map_err(|e| format!("--sizes: {e}"))?;
    Ok(Sizes(sizes.into_iter().map(|s| s as usize).collect()))
}

/// A checked probe: each setting once, in its memory type; what a library caller builds
/// without flags ([`Config::new`] and its setters), and what the flags become.
#[derive(Clone)]
pub struct Config {
    /// As given (a name is resolved by each run, so a schedule follows its changes).
    pub(crate) host: String,
    /// None: the default sizes, from the path MTU.
    pub(crate) sizes: Option<Vec<usize>>,
    pub(crate) tos: Option<u8>,
    pub(crate) count: u32,
    pub(crate) hops: bool,
    pub(crate) max_ttl: u8,
    pub(crate) gap: Duration,
    pub(crate) hop_interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) max_time: Duration,
    pub(crate) host_baseline: bool,
    pub(crate) wire: Vec<(u8, BitRate)>,
    pub(crate) until_width: Option<Duration>,
    /// `--until-stable`: the time budget of the adaptive rounds (the most they may take when
    /// `budget_from_path`).
    pub(crate) until_stable: Option<Duration>,
    /// The bare `--until-stable`: the budget is planned from the path after the first round,
    /// at most `until_stable` (then `--max-time`).
    pub(crate) budget_from_path: bool,
    pub(crate) seed: u64,
    pub(crate) bootstrap: usize,
    /// With --udp: the agent to echo from.
    pub(crate) udp: Option<UdpTarget>,
    pub(crate) socket: SocketChoice,
    pub(crate) clock: ClockArg,
    pub(crate) allow_cpu_idle: bool,
    pub(crate) rate_format: RateFormat,
    /// The progress line on stderr: the command's, never a library caller's.
    pub(crate) show_progress: bool,
}

impl Config {
    /// ICMP echoes to `host` (an address or a name, resolved when the probe runs) with the
    /// command's defaults: the destination alone, 32 probes a size, 16 sizes from 46 bytes to
    /// the path MTU, 1 ms between probes, 1 s to wait for each answer, 10 minutes at most, seed
    /// 1. Nothing is printed while it runs.
    pub fn new(host: impl Into<String>) -> Config {
        Config {
            host: host.into(),
            sizes: None,
            tos: None,
            count: 32,
            hops: false,
            max_ttl: 30,
            gap: Duration::from_millis(1),
            hop_interval: Duration::ZERO,
            timeout: Duration::from_secs(1),
            max_time: Duration::from_secs(600),
            host_baseline: false,
            wire: Vec::new(),
            until_width: None,
            until_stable: None,
            budget_from_path: false,
            seed: 1,
            bootstrap: 400,
            udp: None,
            socket: SocketChoice::Auto,
            clock: ClockArg::Auto,
            allow_cpu_idle: false,
            rate_format: RateFormat::default(),
            show_progress: false,
        }
    }

    /// The probe sizes in IP packet bytes (`--sizes`): 1 to 65535 bytes, at most 1000 sizes.
    pub fn with_sizes(mut self, sizes: Vec<usize>) -> anyhow::Result<Config> {
        if sizes.is_empty() || sizes.len() > 1000 {
            bail!(
                "--sizes: {} sizes: give 1 to 1000, e.g. --sizes 46..1500:64",
                sizes.len()
            );
        }
        if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s > 65535) {
            bail!("--sizes: {bad} bytes is not an IP packet size: give 1 to 65535");
        }
        self.sizes = Some(sizes);
        Ok(self)
    }

    /// Probes per size, per hop (`-c`): at least 1.
    pub fn with_count(mut self, count: u32) -> anyhow::Result<Config> {
        if count == 0 {
            bail!("--count 0 sends nothing: give at least 1 probe per size, e.g. -c 32");
        }
        self.count = count;
        Ok(self)
    }

    /// Every hop up to `max_ttl` (`--hops --max-ttl`, 1 to 64), not only the destination.
    pub fn per_hop(mut self, max_ttl: u8) -> anyhow::Result<Config> {
        if !(1..=64).contains(&max_ttl) {
            bail!("--max-ttl {max_ttl}: give 1 to 64");
        }
        self.hops = true;
        self.max_ttl = max_ttl;
        Ok(self)
    }

    /// `--until-stable BUDGET` (with [`Config::per_hop`]): rounds until every own cost the
    /// probe can separate is within its tolerance, or until another round would not end within
    /// the budget.
    pub fn until_stable(mut self, budget: Duration) -> anyhow::Result<Config> {
        if !self.hops {
            bail!("--until-stable needs --hops: call per_hop first");
        }
        if budget.is_zero() {
            bail!(
                "--until-stable 0: a budget of nothing allows no round past the first; give one such as --until-stable 60s, or leave the flag out for one round"
            );
        }
        if budget > self.max_time {
            bail!(
                "--until-stable {}: the budget is longer than --max-time {}, which would end the rounds first; raise --max-time or lower the budget",
                wirespeed_model::units::format_seconds(budget.as_secs_f64()),
                wirespeed_model::units::format_seconds(self.max_time.as_secs_f64())
            );
        }
        self.until_stable = Some(budget);
        self.budget_from_path = false;
        Ok(self)
    }

    /// The bare `--until-stable` (with [`Config::per_hop`]): rounds as [`Config::until_stable`]
    /// with a budget planned from the path after the first round (its pace, and the rounds its
    /// widest figure projects to settle), at most the `--max-time` set so far.
    pub fn until_stable_from_path(mut self) -> anyhow::Result<Config> {
        let most = self.max_time;
        self = self.until_stable(most)?;
        self.budget_from_path = true;
        Ok(self)
    }

    /// The seed of the probe order and of the bootstrap (`--seed`): one seed, one order.
    pub fn with_seed(mut self, seed: u64) -> Config {
        self.seed = seed;
        self
    }
}

impl ProbeArgs {
    /// The flags, checked before any probe is sent.
    pub(crate) fn config(&self) -> anyhow::Result<Config> {
        let mut config = Config::new(self.host.clone())
            .with_count(self.count)?
            .with_seed(self.seed);
        if self.until_width.is_some_and(|w| w.is_zero()) {
            bail!(
                "--until-width 0: no interval is ever that narrow, so the rounds would run to their \
                 limit; give a width such as --until-width 5us"
            );
        }
        if let Some(sizes) = &self.sizes {
            config = config.with_sizes(sizes.0.clone())?;
        }
        if self.hops {
            config = config.per_hop(self.max_ttl)?;
        }
        config.max_time = self.max_time;
        match self.until_stable {
            Some(Some(budget)) => config = config.until_stable(budget)?,
            Some(None) => config = config.until_stable_from_path()?,
            None => {}
        }
        if self.udp && !self.hops && (self.host_baseline || !matches!(self.socket, SocketArg::Auto))
        {
            bail!(
                "--udp probes the agent alone, with no ICMP socket or loopback line: drop --host-baseline and --socket, or add --hops (ICMP to the hops, the agent at the destination)"
            );
        }
        let auth = self.key.load()?;
        Ok(Config {
            tos: self.tos,
            gap: self.gap,
            hop_interval: self.hop_interval,
            timeout: self.timeout,
            host_baseline: self.host_baseline,
            wire: self.wire.clone(),
            until_width: self.until_width,
            bootstrap: self.bootstrap,
            udp: self.udp.then_some(UdpTarget {
                port: self.port,
                auth,
            }),
            socket: match self.socket {
                SocketArg::Auto => SocketChoice::Auto,
                SocketArg::Dgram => SocketChoice::Datagram,
                SocketArg::Raw => SocketChoice::Raw,
            },
            clock: self.clock,
            allow_cpu_idle: self.allow_cpu_idle,
            rate_format: self.output.rate_format,
            show_progress: true,
            ..config
        })
    }
}

pub(crate) fn run(args: ProbeArgs) -> anyhow::Result<()> {
    args.schedule.check_unused("--max-runs")?;
    let config = args.config()?;
    args.brief.check(&args.output, &[])?;
    if args.schedule.active() {
        if args.brief.brief {
            bail!(
                "--every prints one line per run already: drop --brief (each run's whole document is in the results file)"
            );
        }
        return run_scheduled(&args, &config);
    }
    if let Some(plot) = &args.plot {
        crate::common::output::check_output_file("--plot", plot)?;
    }
    let (doc, interrupted) = measure::measure(&config)?;
    if let Some(file) = &args.plot {
        write_plot(&doc.result, file)?;
    }
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

/// `--plot`: minimum round trip against bytes crossed, per hop, with the fitted lines.
fn write_plot(report: &ProbeReport, file: &PathBuf) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::write(file, text::plot(report)?)
        .with_context(|| format!("cannot write the plot to {}", file.display()))
}

/// `--every`: the probe on a schedule; the headline is the last hop's least round trip at
/// the smallest size.
fn run_scheduled(args: &ProbeArgs, config: &Config) -> anyhow::Result<()> {
    if args.plot.is_some() {
        bail!(
            "--plot draws one run: drop it with --every (wirespeed report draws the runs of the results file)"
        );
    }
    let mut one = || {
        let (doc, interrupted) = measure::measure(config)?;
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
