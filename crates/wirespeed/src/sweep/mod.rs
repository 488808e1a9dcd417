//! `wirespeed sweep`: Van Jacobson's socket-buffer experiment (seed 004) on any path.
//!
//! The plan (axes, repetitions, seed) fixes every run and its order; each finished run is
//! appended to the results file at once (`measure.rs`); the analysis comes from
//! `wirespeed_model::sweep`, the schema is `result.rs` and the printing [`text`]. Running one
//! point is a [`PointRunner`]'s job, so the loop can be tested without a network.

#[doc(hidden)]
pub mod agent_runner;
#[doc(hidden)]
pub mod brief;
#[doc(hidden)]
pub mod html;
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

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_model::sweep::{self, Axis};
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, ByteSize, RateFormat};
use wirespeed_net::auth::AuthKey;

use crate::common::exit_status::Exit;
use crate::common::output::OutputArgs;
use crate::common::progress::Progress;
use measure::Planned;
pub use measure::{Measured, Stop};
pub(crate) use measure::{PathProbe, PointRequest, PointRunner};
pub use result::{SweepPlan, SweepReport};

#[derive(Debug, Clone, Args)]
#[command(after_long_help = BUFFER_HELP)]
#[doc(hidden)]
pub struct SweepArgs {
    /// The agent (`wirespeed serve`) to send to; without HOST, an agent in this process on
    /// loopback.
    host: Option<String>,

    /// The agent's control port.
    #[arg(long, short = 'p', default_value_t = wirespeed_net::control::DEFAULT_PORT)]
    port: u16,

    /// Use IPv4.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    ipv4: bool,

    /// Use IPv6 (loopback ::1 without HOST).
    #[arg(short = '6', long = "ipv6")]
    ipv6: bool,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    /// Bytes per write() and read() call.
    #[arg(
        short = 'l',
        long = "len",
        visible_alias = "length",
        default_value = "128KiB",
        value_name = "BYTES"
    )]
    length: ByteSize,

    /// TCP congestion control at both ends (e.g. cubic, reno, bbr).
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    congestion: Option<String>,

    /// IP TOS byte (IPv6: traffic class) of every run's data at both ends: a number (0xb8) or
    /// a DSCP name (ef, af21, cs1); see tcp -S.
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Send-buffer sizes: packets (1..17, 1,2,4) or bytes (16KiB..1MiB:x2).
    #[arg(long, default_value = "1..17", value_name = "AXIS")]
    pub snd: Axis,

    /// Receive-buffer sizes, same syntax (default: the same as --snd).
    #[arg(long, value_name = "AXIS")]
    pub rcv: Option<Axis>,

    /// Runs per point (the seed: 4).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    reps: u32,

    /// Bytes per run (the seed: 8 MB, so the clock's 10 ms is ~0.1% of the run).
    #[arg(
        short = 'n',
        long = "bytes",
        visible_alias = "num",
        default_value = "8MiB",
        value_name = "BYTES",
        conflicts_with = "time"
    )]
    pub bytes: ByteSize,

    /// Run for a time instead of a byte count.
    #[arg(short = 't', long = "time", value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,

    /// Bytes in one "packet" of the axes, also set as TCP_MAXSEG (the seed: 1460); default:
    /// the connection's own MSS.
    #[arg(short = 'M', long = "mss", value_name = "BYTES", value_parser = crate::common::flags::parse_mss)]
    mss: Option<u32>,

    /// Seed of the run order; printed, so that `--seed` replays a sweep in the same order.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Results file, one JSON line per run (default: sweep-SEED.jsonl).
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    results: Option<PathBuf>,

    /// Continue the partial sweep in FILE: its plan is reused, its finished runs are kept (a
    /// run torn by a crash is cut off, said on stderr, and run again).
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "snd", "rcv", "reps", "bytes", "time", "mss", "seed", "budget",
    ])]
    resume: Option<PathBuf>,

    /// Refuse a new sweep whose plan is estimated to take longer than this (the estimate is
    /// printed before the first run; give a longer budget to run it anyway).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    budget: Duration,

    /// Link rate, for the envelope ceiling and on-the-wire figures (e.g. 10M); inside a
    /// wirespeed lab the configured route's bottleneck is read without it.
    #[arg(long, value_name = "RATE")]
    pub link_rate: Option<BitRate>,

    /// The link is half duplex (ACKs share the medium) for the ceiling.
    #[arg(long, requires = "link_rate")]
    half_duplex: bool,

    /// Data segments per ACK for the ceiling (the seed's figure needs 1 with --half-duplex).
    #[arg(long, default_value_t = 2, value_name = "N")]
    ack_every: u32,

    /// Write the matrix as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Write the matrix as an SVG heatmap to FILE.
    #[arg(long, value_name = "FILE")]
    heatmap: Option<PathBuf>,

    /// Write the diagonal (send = receive) as an SVG line plot to FILE.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

const BUFFER_HELP: &str = "\
How a buffer of N packets is made real on Linux: before connect (sender) and listen (receiver),
SO_SNDBUF and SO_RCVBUF are set to N x MSS bytes, which stops autotuning for that socket. The
kernel stores twice the request (half is for its own bookkeeping), never less than 4608 (send)
or 2304 (receive) bytes, and caps the request at net.core.wmem_max / rmem_max (as root the
cap is bypassed with SO_SNDBUFFORCE / SO_RCVBUFFORCE). The receiver also sets TCP_WINDOW_CLAMP
to N x MSS so the advertised window is exactly N packets; with -M it sets the clamp again after
each read, because Linux 6.x resets it from the buffer once data flows. Every run records the requested and
granted sizes and what TCP_INFO showed. See docs/sweep.md.";

/// A validated sweep: what `wirespeed sweep`'s flags mean once every range, combination,
/// output path, the key file and the agent's address are checked, each setting held once in
/// its own type. The plan (a new grid, or a results file to resume) fixes the runs; the link
/// given fixes the ceiling the runs are judged against.
#[derive(Debug, Clone)]
pub struct Config {
    /// The agent; None: an agent in this process on loopback.
    #[doc(hidden)]
    pub agent: Option<SocketAddr>,
    /// With no agent given: the in-process one on ::1 instead of 127.0.0.1.
    pub(crate) ipv6: bool,
    #[doc(hidden)]
    pub auth: Option<AuthKey>,
    /// `-l`: bytes per write() and read() call, at least 1.
    #[doc(hidden)]
    pub length_bytes: u32,
    pub(crate) congestion: Option<String>,
    /// `-S`: the class of every run's data.
    pub(crate) tos: Option<u8>,
    #[doc(hidden)]
    pub plan: PlanSource,
    #[doc(hidden)]
    pub link: LinkGiven,
    /// `--csv`, `--heatmap`, `--plot`: checked writable before the first run.
    pub(crate) csv: Option<PathBuf>,
    pub(crate) heatmap: Option<PathBuf>,
    pub(crate) plot: Option<PathBuf>,
    pub(crate) rate_format: RateFormat,
}

/// Where the sweep's plan comes from.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub enum PlanSource {
    /// A new grid, drawn after a first transfer probed the path.
    New(NewPlan),
    /// `--resume FILE`: the plan and the finished runs that file holds.
    Resume(PathBuf),
}

/// The flags a new plan is drawn from (`--resume` refuses each of them).
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct NewPlan {
    pub(crate) snd: Axis,
    pub rcv: Axis,
    pub(crate) reps: u32,
    pub transfer: Transfer,
    /// `-M`: bytes in one packet of the axes, also set as TCP_MAXSEG.
    pub(crate) mss: Option<u32>,
    pub seed: Option<u64>,
    pub(crate) results: Option<PathBuf>,
    pub budget: Duration,
}

/// How much each run sends: `-n` bytes (at least 1) or `-t` time.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub enum Transfer {
    Bytes(u64),
    Time(Duration),
}

/// What the flags say of the link, for the envelope ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct LinkGiven {
    /// `--link-rate`; None: the lab's configured route, else no ceiling.
    pub rate: Option<BitRate>,
    pub half_duplex: bool,
    pub ack_every: u32,
}

impl Config {
    /// A sweep over loopback against an agent in this process: `snd` the send-buffer sizes
    /// and the receive-buffer sizes alike (`--snd AXIS`), each run kept in the new file
    /// `results` (`--results FILE`) as it ends. The rest is the command's defaults: the seed's
    /// 4 runs per point of 8 MiB each, 128 KiB per write and read, a packet of the
    /// connection's own MSS, the system's congestion control, a seed drawn at random, a plan
    /// refused beyond 1 h, and no link ceiling.
    pub fn loopback(snd: Axis, results: impl Into<PathBuf>) -> Config {
        Config {
            agent: None,
            ipv6: false,
            auth: None,
            length_bytes: 128 * 1024,
            congestion: None,
            tos: None,
            plan: PlanSource::New(NewPlan {
                rcv: snd.clone(),
                snd,
                reps: 4,
                transfer: Transfer::Bytes(8 << 20),
                mss: None,
                seed: None,
                results: Some(results.into()),
                budget: Duration::from_secs(3600),
            }),
            link: LinkGiven {
                rate: None,
                half_duplex: false,
                ack_every: 2,
            },
            csv: None,
            heatmap: None,
            plot: None,
            rate_format: RateFormat::Adaptive,
        }
    }

    /// `--reps N`: runs per point, 1 to 100 (checked by [`measure`]).
    pub fn with_reps(mut self, reps: u32) -> Config {
        if let PlanSource::New(new) = &mut self.plan {
            new.reps = reps;
        }
        self
    }

    /// `-n BYTES`: bytes each run sends, at least 1 (checked by [`measure`]).
    pub fn with_bytes_per_run(mut self, bytes: u64) -> Config {
        if let PlanSource::New(new) = &mut self.plan {
            new.transfer = Transfer::Bytes(bytes);
        }
        self
    }

    /// `--seed N`: the run order of an earlier sweep again.
    pub fn with_seed(mut self, seed: u64) -> Config {
        if let PlanSource::New(new) = &mut self.plan {
            new.seed = Some(seed);
        }
        self
    }
}

impl NewPlan {
    /// What the flags' parser and [`Config::try_from`] hold a new plan to, for a config a
    /// library caller built.
    fn check(&self) -> anyhow::Result<()> {
        if self.snd.0.is_empty() || self.rcv.0.is_empty() {
            bail!("an empty buffer axis: give at least one size, for example --snd 1..17");
        }
        // The parser's bound; an axis built in code has none, and the plan is their product.
        let most = self.snd.0.len().max(self.rcv.0.len());
        if most > sweep::MAX_AXIS_POINTS {
            bail!(
                "a buffer axis of {most} sizes: give at most {} (for example --snd 1..17)",
                sweep::MAX_AXIS_POINTS
            );
        }
        if !(1..=100).contains(&self.reps) {
            bail!("--reps {}: give 1 to 100 runs per point", self.reps);
        }
        if self.transfer == Transfer::Bytes(0) {
            bail!("-n 0 sends nothing: give each run at least 1 byte, for example -n 1MiB");
        }
        Ok(())
    }
}

impl TryFrom<&SweepArgs> for Config {
    type Error = anyhow::Error;

    /// Bad grids, output paths, agents and key files are refused before any run starts.
    fn try_from(args: &SweepArgs) -> anyhow::Result<Config> {
        args.brief.check(&args.output, &[])?;
        if args.snd.0.is_empty() || args.rcv.as_ref().is_some_and(|a| a.0.is_empty()) {
            bail!("an empty buffer axis: give at least one size, for example --snd 1..17");
        }
        if args.resume.is_none() && args.time.is_none() && args.bytes.bytes() == 0 {
            bail!("-n 0 sends nothing: give each run at least 1 byte, for example -n 1MiB");
        }
        for (flag, path) in [
            ("--csv", &args.csv),
            ("--heatmap", &args.heatmap),
            ("--plot", &args.plot),
        ] {
            if let Some(path) = path {
                crate::common::output::check_output_file(flag, path)?;
            }
        }
        let agent = args
            .host
            .as_deref()
            .map(|h| {
                crate::throughput::resolve_agent(
                    h,
                    (args.port != wirespeed_net::control::DEFAULT_PORT).then_some(args.port),
                    args.ipv4,
                    args.ipv6,
                )
            })
            .transpose()?;
        let auth = args.key.load()?;
        let length_bytes = u32::try_from(args.length.bytes())
            .ok()
            .filter(|&l| l > 0)
            .context("-l must be between 1 byte and 4 GiB, for example -l 128KiB")?;
        let plan = match &args.resume {
            Some(path) => PlanSource::Resume(path.clone()),
            None => PlanSource::New(NewPlan {
                snd: args.snd.clone(),
                rcv: args.rcv.clone().unwrap_or_else(|| args.snd.clone()),
                reps: args.reps,
                transfer: match args.time {
                    Some(t) => Transfer::Time(t),
                    None => Transfer::Bytes(args.bytes.bytes()),
                },
                mss: args.mss,
                seed: args.seed,
                results: args.results.clone(),
                budget: args.budget,
            }),
        };
        Ok(Config {
            agent,
            ipv6: args.ipv6,
            auth,
            length_bytes,
            congestion: args.congestion.clone(),
            tos: args.tos,
            plan,
            link: LinkGiven {
                rate: args.link_rate,
                half_duplex: args.half_duplex,
                ack_every: args.ack_every,
            },
            csv: args.csv.clone(),
            heatmap: args.heatmap.clone(),
            plot: args.plot.clone(),
            rate_format: args.output.rate_format,
        })
    }
}

/// `wirespeed sweep`: the flags checked, the runner for the agent given (or an in-process
/// one), the sweep.
pub(crate) fn command(args: SweepArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    let mut runner = runner(&config)?;
    run(
        &args,
        &config,
        &mut runner,
        &crate::common::interrupt::requested,
    )
}

/// The runner for the config's agent (or an in-process one), ending its run in flight on
/// Ctrl-C.
fn runner(config: &Config) -> anyhow::Result<agent_runner::AgentRunner> {
    let interrupt = crate::common::interrupt::watch();
    agent_runner::AgentRunner::new(
        config.agent,
        config.ipv6,
        config.auth.clone(),
        config.length_bytes,
        config.congestion.clone(),
        config.tos,
        Some(interrupt),
    )
}

/// Runs the sweep `config` describes and returns its document, printing nothing: no start
/// line, no progress bar, and no file but the results file (what `--csv`, `--heatmap` and
/// `--plot` write is [`SweepReport::csv`], [`SweepReport::heatmap`] and
/// [`SweepReport::diagonal_plot`], for the caller to save). A run that fails, or
/// Ctrl-C, ends the sweep early with the finished runs kept: [`Measured::stopped`] says which,
/// and a sweep that kept no run is an error.
pub fn measure(config: &Config) -> anyhow::Result<Measured> {
    if let PlanSource::New(new) = &config.plan {
        new.check()?;
    }
    let mut runner = runner(config)?;
    let stop = &crate::common::interrupt::requested;
    let route = if config.link.rate.is_none() {
        runner.lab_route()
    } else {
        None
    };
    let planned = measure::plan(config, &mut runner, &route, stop)?;
    let quiet = Progress::start("sweep", "runs", planned.todo.len() as u64, None, true);
    measure::measure(config, &route, planned, &mut runner, stop, &quiet)
}

/// The sweep: plan (new or resumed), the runs it lacks, the report. `stop` says whether Ctrl-C
/// arrived; it is asked before each run and after a failed one.
#[doc(hidden)]
pub fn run(
    args: &SweepArgs,
    config: &Config,
    runner: &mut dyn PointRunner,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<()> {
    let route = if config.link.rate.is_none() {
        runner.lab_route()
    } else {
        None
    };
    let planned = measure::plan(config, runner, &route, stop)?;
    if let Some(r) = &planned.repair {
        eprintln!("wirespeed: warning: {r}");
    }
    // On a terminal only, and not with --json: a script reads the document, not this line.
    if !args.output.json && std::io::stderr().is_terminal() {
        eprintln!("{}", text::start_line(&planned));
    }
    let bar = progress_bar(&planned);
    let measured = measure::measure(config, &route, planned, runner, stop, &bar);
    bar.finish();
    let measured = measured?;
    write_files(config, &measured.doc.result)?;
    show(args, measured)
}

/// The runs as they go, on stderr even with --json: a long series is never silent.
fn progress_bar(planned: &Planned) -> Progress {
    let per_run = planned
        .estimate
        .filter(|e| e.runs > 0)
        .map(|e| Duration::from_secs_f64(e.seconds / e.runs as f64))
        .or_else(|| {
            planned
                .plan
                .transfer_seconds
                .map(|t| Duration::from_secs_f64(t + sweep::RUN_SETUP_SECONDS))
        });
    Progress::start("sweep", "runs", planned.todo.len() as u64, per_run, false)
}

/// The document out, and how the sweep ended: whole, failed part-way (status 3), or
/// interrupted (the command that resumes it).
fn show(args: &SweepArgs, measured: Measured) -> anyhow::Result<()> {
    let Measured { doc, stopped, path } = measured;
    let (saved, planned) = (doc.result.runs.len(), doc.result.runs_planned);
    match stopped {
        None => crate::common::brief::show(&args.brief, &args.output, &doc),
        Some(Stop::Failed(err)) => {
            crate::common::brief::show(&args.brief, &args.output, &doc)?;
            // Some runs are kept and printed: a partial result, status 3.
            Err(Exit::partial(format!("sweep incomplete: {err:#}")).into())
        }
        Some(Stop::Interrupted) => {
            let what = format!(
                "interrupted after {saved} of {planned} runs; the table below is from those runs"
            );
            crate::common::brief::show_partial(&args.brief, &args.output, &doc, &what)?;
            Err(crate::common::interrupt::Interrupted {
                message: format!("{saved} of {planned} runs are saved in {}", path.display()),
                resume: Some(resume_command(args, &path)),
            }
            .into())
        }
    }
}

/// The command that continues this sweep: the flags the plan does not hold, and `--resume`.
fn resume_command(args: &SweepArgs, path: &Path) -> String {
    use crate::common::interrupt::{command_line, output_words, path_word};
    let mut words = vec!["sweep".to_string()];
    if let Some(host) = &args.host {
        words.push(host.clone());
    }
    if args.port != wirespeed_net::control::DEFAULT_PORT {
        words.extend(["-p".into(), args.port.to_string()]);
    }
    if args.ipv4 {
        words.push("-4".into());
    }
    if args.ipv6 {
        words.push("-6".into());
    }
    if let Some(f) = &args.key.auth_key_file {
        words.extend(["--auth-key-file".into(), path_word(f)]);
    }
    words.extend(["-l".into(), args.length.bytes().to_string()]);
    if let Some(c) = &args.congestion {
        words.extend(["-C".into(), c.clone()]);
    }
    if let Some(t) = args.tos {
        words.extend(["-S".into(), format!("0x{t:02x}")]);
    }
    if let Some(r) = args.link_rate {
        words.extend(["--link-rate".into(), r.bits_per_second().to_string()]);
    }
    if args.half_duplex {
        words.push("--half-duplex".into());
    }
    words.extend(["--ack-every".into(), args.ack_every.to_string()]);
    for (flag, file) in [
        ("--csv", &args.csv),
        ("--heatmap", &args.heatmap),
        ("--plot", &args.plot),
    ] {
        if let Some(f) = file {
            words.extend([flag.to_string(), path_word(f)]);
        }
    }
    words.extend(output_words(&args.output));
    words.extend(["--resume".into(), path_word(path)]);
    command_line(&words)
}

fn write_files(config: &Config, report: &SweepReport) -> anyhow::Result<()> {
    let write = |path: &PathBuf, text: String| {
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    if let Some(path) = &config.csv {
        write(path, report.csv())?;
    }
    if let Some(path) = &config.heatmap {
        write(path, report.heatmap()?)?;
    }
    if let Some(path) = &config.plot {
        write(path, report.diagonal_plot()?)?;
    }
    Ok(())
}
