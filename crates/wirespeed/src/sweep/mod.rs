//! `wirespeed sweep`: Van Jacobson's socket-buffer experiment (seed 004) on any path.
//!
//! The plan (axes, repetitions, seed) fixes every run and its order; each finished run is
//! appended to the results file at once (`measure.rs`); the analysis comes from
//! `wirespeed_model::sweep`, the schema is `result.rs` and the printing [`text`]. Running one
//! point is a [`PointRunner`]'s job, so the loop can be tested without a network.

mod agent_runner;
mod brief;
pub(crate) mod html;
mod measure;
mod metrics;
pub(crate) mod result;
pub(crate) mod text;
mod verdicts;

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
pub(crate) struct SweepArgs {
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
    snd: Axis,

    /// Receive-buffer sizes, same syntax (default: the same as --snd).
    #[arg(long, value_name = "AXIS")]
    rcv: Option<Axis>,

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
    bytes: ByteSize,

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
    link_rate: Option<BitRate>,

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
    pub(crate) agent: Option<SocketAddr>,
    /// With no agent given: the in-process one on ::1 instead of 127.0.0.1.
    pub(crate) ipv6: bool,
    pub(crate) auth: Option<AuthKey>,
    /// `-l`: bytes per write() and read() call, at least 1.
    pub(crate) length_bytes: u32,
    pub(crate) congestion: Option<String>,
    /// `-S`: the class of every run's data.
    pub(crate) tos: Option<u8>,
    pub(crate) plan: PlanSource,
    pub(crate) link: LinkGiven,
    /// `--csv`, `--heatmap`, `--plot`: checked writable before the first run.
    pub(crate) csv: Option<PathBuf>,
    pub(crate) heatmap: Option<PathBuf>,
    pub(crate) plot: Option<PathBuf>,
    pub(crate) rate_format: RateFormat,
}

/// Where the sweep's plan comes from.
#[derive(Debug, Clone)]
pub(crate) enum PlanSource {
    /// A new grid, drawn after a first transfer probed the path.
    New(NewPlan),
    /// `--resume FILE`: the plan and the finished runs that file holds.
    Resume(PathBuf),
}

/// The flags a new plan is drawn from (`--resume` refuses each of them).
#[derive(Debug, Clone)]
pub(crate) struct NewPlan {
    pub(crate) snd: Axis,
    pub(crate) rcv: Axis,
    pub(crate) reps: u32,
    pub(crate) transfer: Transfer,
    /// `-M`: bytes in one packet of the axes, also set as TCP_MAXSEG.
    pub(crate) mss: Option<u32>,
    pub(crate) seed: Option<u64>,
    pub(crate) results: Option<PathBuf>,
    pub(crate) budget: Duration,
}

/// How much each run sends: `-n` bytes (at least 1) or `-t` time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Transfer {
    Bytes(u64),
    Time(Duration),
}

/// What the flags say of the link, for the envelope ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LinkGiven {
    /// `--link-rate`; None: the lab's configured route, else no ceiling.
    pub(crate) rate: Option<BitRate>,
    pub(crate) half_duplex: bool,
    pub(crate) ack_every: u32,
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
pub(crate) fn run(
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

#[cfg(test)]
mod tests {
    use super::measure::{Results, build_report, ethernet, execute, path_facts};
    use super::result::RUNS_SCHEMA;
    use super::*;
    use crate::common::runs_file::RunsFile;
    use clap::Parser;
    use wirespeed_lab::inside::RoutePair;
    use wirespeed_model::IpVersion;
    use wirespeed_model::sweep::{BufferSize, PlannedRun, RunRecord};

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: SweepArgs,
    }

    fn parse(argv: &[&str]) -> Result<SweepArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("sweep").chain(argv.iter().copied()))
            .map(|w| w.args)
    }

    /// The command's glue without its agent: the flags checked, then the sweep on `runner`.
    fn run(
        args: SweepArgs,
        runner: &mut dyn PointRunner,
        stop: &dyn Fn() -> bool,
    ) -> anyhow::Result<()> {
        let config = Config::try_from(&args)?;
        super::run(&args, &config, runner, stop)
    }

    fn config(argv: &[&str]) -> anyhow::Result<Config> {
        Config::try_from(&parse(argv)?)
    }

    /// Each setting is carried once, in its type: the receive axis defaults to the send
    /// axis, -t replaces -n, and --resume leaves the plan to its file.
    #[test]
    fn the_config_holds_the_plan_the_flags_ask_for() {
        let c = config(&["--snd", "1,2,4", "-n", "1MiB", "-l", "64KiB", "--seed", "3"]).unwrap();
        assert_eq!(c.length_bytes, 65536);
        assert!(c.agent.is_none() && c.auth.is_none());
        let PlanSource::New(new) = &c.plan else {
            panic!("a new plan")
        };
        assert_eq!(new.rcv.0.len(), 3, "--rcv defaults to --snd");
        assert_eq!(new.transfer, Transfer::Bytes(1 << 20));
        assert_eq!(new.seed, Some(3));
        assert_eq!(new.budget, Duration::from_secs(3600));
        let PlanSource::New(new) = config(&["-t", "2s"]).unwrap().plan else {
            panic!("a new plan")
        };
        assert_eq!(new.transfer, Transfer::Time(Duration::from_secs(2)));
        let resumed = config(&["--resume", "f.jsonl"]).unwrap();
        assert!(matches!(&resumed.plan, PlanSource::Resume(p) if p == Path::new("f.jsonl")));
        let link = config(&["--link-rate", "10M", "--half-duplex", "--ack-every", "1"])
            .unwrap()
            .link;
        assert_eq!(
            link,
            LinkGiven {
                rate: Some(BitRate::from_bits_per_second(10_000_000)),
                half_duplex: true,
                ack_every: 1,
            }
        );
    }

    /// The refusals a flag needs, each before any run, in one line naming the fix.
    #[test]
    fn the_config_refuses_what_no_sweep_can_run() {
        let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
        assert!(refused(&["-n", "0"]).contains("-n 0 sends nothing"));
        assert!(refused(&["-l", "0"]).contains("-l must be between 1 byte and 4 GiB"));
        assert!(refused(&["-l", "5GiB"]).contains("-l must be between"));
        assert!(refused(&["--csv", "/nonexistent-dir/x.csv"]).contains("--csv"));
        assert!(refused(&["-6", "127.0.0.1"]).contains("-6 asks for IPv6"));
        assert!(refused(&["127.0.0.1:9", "-p", "10"]).contains("two ports"));
        // --resume sends what its plan says: -n is not asked about.
        assert!(config(&["--resume", "f", "-l", "1"]).is_ok());
        let c = config(&["127.0.0.1:7000"]).unwrap();
        assert_eq!(c.agent, Some("127.0.0.1:7000".parse().unwrap()));
    }

    /// Issue 31: on loopback the BDP verdict read "the lowest round trip the kernel saw,
    /// 0.00 ms": a round trip under a millisecond is printed in microseconds.
    #[test]
    fn a_round_trip_under_a_millisecond_is_printed_in_microseconds() {
        assert_eq!(text::round_trip(22e-6), "22 us");
        assert_eq!(text::round_trip(4.5e-6), "4.5 us");
        assert_eq!(text::round_trip(999.4e-6), "999 us");
        assert_eq!(text::round_trip(34.85e-3), "34.85 ms");
        assert_eq!(text::round_trip(1e-3), "1.00 ms");
    }

    /// Issue 15 item 4: at the ceiling, the data direction's wire runs at the link rate, not
    /// above it (full duplex: the ACKs go the other way; half duplex: they share the medium).
    #[test]
    fn the_wire_rate_at_the_ceiling_is_the_link_rate() {
        for duplex in [&[][..], &["--half-duplex"][..]] {
            let mut argv = vec!["--link-rate", "10M"];
            argv.extend_from_slice(duplex);
            let args = parse(&argv).unwrap();
            let config = Config::try_from(&args).unwrap();
            let (ceiling, factor) = ethernet(&config.link, args.link_rate.unwrap(), 1448);
            let wire_bits = ceiling.unwrap() * factor * 8.0;
            assert!((wire_bits - 10e6).abs() < 1.0, "{duplex:?}: {wire_bits}");
        }
    }

    /// A runner whose rate is window-limited: rate = min(snd, rcv) / 1 ms, capped at 100 MB/s.
    struct WindowModel {
        calls: Vec<PointRequest>,
        fail_after: Option<usize>,
    }

    impl PointRunner for WindowModel {
        fn target(&self) -> String {
            "model".into()
        }
        fn probe(&mut self) -> anyhow::Result<PathProbe> {
            Ok(PathProbe {
                mss: 1000,
                lowest_rtt_seconds: Some(1e-3),
                bytes_per_second: Some(1e8),
            })
        }
        fn run(&mut self, point: &PointRequest) -> anyhow::Result<RunRecord> {
            if self.fail_after == Some(self.calls.len()) {
                bail!("peer went away");
            }
            self.calls.push(*point);
            let rate = (point.snd_bytes.min(point.rcv_bytes) as f64 / 1e-3).min(1e8);
            let bytes = point.transfer_bytes.unwrap_or(1_000_000);
            Ok(RunRecord {
                snd_index: 0,
                rcv_index: 0,
                rep: 0,
                snd_requested_bytes: point.snd_bytes,
                rcv_requested_bytes: point.rcv_bytes,
                snd_granted_bytes: 2 * point.snd_bytes,
                rcv_granted_bytes: 2 * point.rcv_bytes,
                bytes,
                seconds: bytes as f64 / rate,
                kernel: None,
                max_write_seconds: 0.0,
                sender_cpu_percent: 5.0,
                receiver_cpu_percent: 5.0,
            })
        }
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ws-sweep-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        dir
    }

    /// Issue 30: a library caller runs a sweep with the constructor and `measure` alone (two
    /// buffer sizes on loopback, one 64 KiB run each), gets the typed document back, and finds
    /// every run in its results file; a config no sweep can run is refused before any run.
    #[test]
    fn a_library_caller_runs_a_loopback_sweep() {
        let path = temp("library");
        let config = crate::sweep::Config::loopback("2,4".parse().unwrap(), &path)
            .with_reps(1)
            .with_bytes_per_run(64 * 1024)
            .with_seed(7);
        let measured = crate::sweep::measure(&config).unwrap();
        assert!(measured.stopped.is_none());
        assert_eq!(measured.path, path);
        let report: &crate::sweep::SweepReport = &measured.doc.result;
        assert!(report.complete);
        assert_eq!((report.runs.len(), report.plan.seed), (4, 7));
        assert!(
            report
                .runs
                .iter()
                .all(|r| r.bytes >= 64 * 1024 && r.seconds > 0.0),
            "{:?}",
            report.runs
        );
        let kept = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
        assert_eq!(kept.runs.len(), 4);
        drop(kept);
        let _ = std::fs::remove_file(&path);
        let refused = temp("library-refused");
        for (config, said) in [
            (
                crate::sweep::Config::loopback("2".parse().unwrap(), &refused).with_reps(0),
                "--reps 0",
            ),
            (
                crate::sweep::Config::loopback("2".parse().unwrap(), &refused)
                    .with_bytes_per_run(0),
                "-n 0 sends nothing",
            ),
            (
                crate::sweep::Config::loopback(Axis(vec![BufferSize::Packets(1); 1025]), &refused),
                "a buffer axis of 1025 sizes",
            ),
        ] {
            let err = crate::sweep::measure(&config).unwrap_err();
            assert!(format!("{err:#}").contains(said), "{err:#}");
        }
        assert!(!refused.exists(), "a refused sweep leaves no file");
    }

    #[test]
    fn flags_parse() {
        let a = parse(&[
            "--snd", "1..4", "--rcv", "2,4", "--reps", "2", "-n", "1MiB", "--seed", "7",
        ])
        .unwrap();
        assert_eq!(a.snd.0.len(), 4);
        assert_eq!(a.rcv.unwrap().0.len(), 2);
        assert_eq!(a.bytes.bytes(), 1 << 20);
        assert!(
            parse(&["--snd", "5..1"])
                .unwrap_err()
                .to_string()
                .contains("buffer axis")
        );
        assert!(parse(&["--reps", "0"]).is_err());
        assert!(parse(&["-n", "1MiB", "-t", "1s"]).is_err());
        assert!(parse(&["--half-duplex"]).is_err(), "needs --link-rate");
    }

    #[test]
    fn every_point_runs_reps_times_and_resume_finishes_the_rest() {
        let path = temp("resume");
        let args = parse(&[
            "--snd",
            "1..3",
            "--reps",
            "2",
            "-n",
            "100kB",
            "--seed",
            "9",
            "--json",
            "--results",
            path.to_str().unwrap(),
        ])
        .unwrap();
        let mut failing = WindowModel {
            calls: Vec::new(),
            fail_after: Some(7),
        };
        let err = run(args.clone(), &mut failing, &|| false).unwrap_err();
        assert!(format!("{err:#}").contains("peer went away"));
        let kept = RunsFile::resume::<SweepPlan, RunRecord>(&path)
            .unwrap()
            .runs;
        assert_eq!(kept.len(), 7, "every finished run is kept");

        let resume = parse(&["--resume", path.to_str().unwrap(), "--json"]).unwrap();
        let mut rest = WindowModel {
            calls: Vec::new(),
            fail_after: None,
        };
        run(resume, &mut rest, &|| false).unwrap();
        assert_eq!(rest.calls.len(), 18 - 7, "resume runs only what is missing");
        let resumed = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
        let (plan, all) = (resumed.plan, resumed.runs);
        assert_eq!(plan.seed, 9);
        let mut seen: Vec<(usize, usize, u32)> = all
            .iter()
            .map(|r| (r.snd_index, r.rcv_index, r.rep))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 18, "3 x 3 points x 2 reps, each exactly once");
        let order: Vec<PlannedRun> = all
            .iter()
            .map(|r| PlannedRun {
                snd_index: r.snd_index,
                rcv_index: r.rcv_index,
                rep: r.rep,
            })
            .collect();
        assert_eq!(
            order,
            sweep::plan(3, 3, 2, 9),
            "the runs followed the seeded order"
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn an_interrupt_keeps_the_finished_runs_and_names_the_command_that_resumes() {
        let path = temp("interrupt");
        let args = parse(&[
            "--snd",
            "1..3",
            "--reps",
            "2",
            "-n",
            "100kB",
            "--seed",
            "5",
            "-f",
            "K",
            "--results",
            path.to_str().unwrap(),
        ])
        .unwrap();
        let mut model = WindowModel {
            calls: Vec::new(),
            fail_after: None,
        };
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 5
        };
        let err = run(args, &mut model, &stop).unwrap_err();
        let stopped = err
            .downcast_ref::<crate::common::interrupt::Interrupted>()
            .expect("an interrupt, not a failure");
        assert!(
            stopped.message.contains("5 of 18 runs"),
            "{}",
            stopped.message
        );
        let command = stopped.resume.clone().expect("sweep can resume");
        assert!(
            command.ends_with(&format!(
                "sweep -l 131072 --ack-every 2 -f K --resume {}",
                path.display()
            )),
            "{command}"
        );
        assert_eq!(model.calls.len(), 5, "no run starts after the interrupt");
        let resumed = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
        assert_eq!(resumed.runs.len(), 5);
        drop(resumed);
        // The printed command, fed back, finishes the sweep.
        let words: Vec<&str> = command.split(' ').skip(2).collect();
        let mut rest = WindowModel {
            calls: Vec::new(),
            fail_after: None,
        };
        run(parse(&words).unwrap(), &mut rest, &|| false).unwrap();
        assert_eq!(rest.calls.len(), 13);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn resume_refuses_the_flags_its_plan_fixes() {
        for flag in [
            &["--snd", "1..4"][..],
            &["--rcv", "1,2"],
            &["--reps", "2"],
            &["-n", "1MiB"],
            &["-t", "1s"],
            &["-M", "1460"],
            &["--seed", "3"],
        ] {
            let mut argv = vec!["--resume", "f"];
            argv.extend_from_slice(flag);
            assert!(parse(&argv).is_err(), "{flag:?} with --resume");
        }
    }

    /// A runner on a T1-like path: its probe says what issue 31's path said, and any run
    /// fails (the tests below only need to know whether one started).
    struct SlowPath {
        runs: usize,
        route: Option<RoutePair>,
    }

    impl PointRunner for SlowPath {
        fn target(&self) -> String {
            "slow".into()
        }
        fn probe(&mut self) -> anyhow::Result<PathProbe> {
            Ok(PathProbe {
                mss: 1448,
                lowest_rtt_seconds: Some(0.026),
                bytes_per_second: Some(150_000.0),
            })
        }
        fn lab_route(&self) -> Option<RoutePair> {
            self.route.clone()
        }
        fn run(&mut self, _: &PointRequest) -> anyhow::Result<RunRecord> {
            self.runs += 1;
            bail!("the run started")
        }
    }

    /// Issue 31: the seed's default grid on a 1.544 Mbit/s path is most of a day. It is
    /// refused before the first run, with the estimate and the flag that overrides it, and
    /// nothing is written; with a longer --budget it starts.
    #[test]
    fn a_plan_longer_than_the_budget_is_refused_before_any_run() {
        let path = temp("budget");
        let results = path.to_str().unwrap();
        let mut slow = SlowPath {
            runs: 0,
            route: None,
        };
        let err = run(
            parse(&["--seed", "1", "--results", results]).unwrap(),
            &mut slow,
            &|| false,
        )
        .unwrap_err();
        let message = format!("{err:#}");
        assert!(
            message.contains("1156 runs would take about")
                && message.contains("more than --budget 1.0 h")
                && message.contains("or a longer budget, --budget "),
            "{message}"
        );
        let hours: f64 = message
            .split("about ")
            .nth(1)
            .and_then(|t| t.split(" h").next())
            .and_then(|t| t.parse().ok())
            .expect("the estimate in hours");
        assert!((12.0..30.0).contains(&hours), "{message}");
        assert_eq!(slow.runs, 0, "no run before the refusal");
        assert!(!path.exists(), "nothing written");
        let err = run(
            parse(&["--seed", "1", "--results", results, "--budget", "40h"]).unwrap(),
            &mut slow,
            &|| false,
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("the run started"), "{err:#}");
        assert_eq!(slow.runs, 1);
        assert!(!path.exists(), "a first run that fails leaves no file");
        // --budget is the plan's: with --resume it is refused.
        assert!(parse(&["--resume", "f", "--budget", "2h"]).is_err());
    }

    /// Issue 31: inside a lab the configured route gives the ceiling (the T1, not the 10 Mbit/s
    /// link h1 leaves by) and a full segment's round trip; window / RTT divides by that round
    /// trip and is capped by the ceiling, and the verdicts say where each figure comes from.
    #[test]
    fn inside_a_lab_the_route_gives_the_ceiling_and_the_round_trip() {
        let file = format!("{}/../../labs/t1-path.toml", env!("CARGO_MANIFEST_DIR"));
        let t = wirespeed_lab::Topology::load(Path::new(&file)).unwrap();
        let plan = wirespeed_lab::addressing::plan(&t);
        let h2 = t.node_index("h2").unwrap();
        let address = plan
            .interfaces
            .iter()
            .find(|i| i.node == h2)
            .unwrap()
            .ipv4
            .addr;
        let there =
            wirespeed_lab::truth::route(&t, &plan, "h1", std::net::IpAddr::V4(address)).unwrap();
        let rtt = there.segment_round_trip_seconds(IpVersion::V4_PLAIN);
        let pair = Some(RoutePair {
            lab: "t1-path".into(),
            there,
            back: None,
        });
        let args = parse(&["--snd", "1,2,8", "--reps", "1"]).unwrap();
        let config = Config::try_from(&args).unwrap();
        let known = path_facts(&config.link, &pair, 1448);
        let ceiling = known.facts.ceiling_bytes_per_second.unwrap();
        // The T1's envelope: 1448 payload bytes of every 1500 on a serial line.
        assert!(
            (ceiling - 1.544e6 / 8.0 * 1448.0 / 1500.0).abs() < 1.0,
            "{ceiling}"
        );
        assert!(
            known.source.as_deref().unwrap().contains("r1-r2"),
            "{:?}",
            known.source
        );
        assert_eq!(known.facts.segment_round_trip_seconds, Some(rtt));
        // --link-rate wins over the lab, as in `tcp`.
        let given = parse(&["--link-rate", "10M"]).unwrap();
        assert!(
            path_facts(&Config::try_from(&given).unwrap().link, &pair, 1448)
                .source
                .unwrap()
                .starts_with("--link-rate")
        );
        // Runs whose kernel saw a SYN's 16 ms and the window the buffer asked for.
        let runs: Vec<RunRecord> = (0..3)
            .map(|i| {
                let asked = [1u64, 2, 8][i] * 1448;
                RunRecord {
                    snd_index: i,
                    rcv_index: i,
                    rep: 0,
                    snd_requested_bytes: asked,
                    rcv_requested_bytes: asked,
                    snd_granted_bytes: 2 * asked,
                    rcv_granted_bytes: 2 * asked,
                    bytes: 65536,
                    seconds: 65536.0 / (asked as f64 / rtt).min(ceiling),
                    kernel: Some(sweep::KernelView {
                        rtt_us: 30_000,
                        min_rtt_us: 16_000,
                        snd_window_bytes: u32::try_from(asked).unwrap(),
                        snd_mss_bytes: 1448,
                        ..sweep::KernelView::default()
                    }),
                    max_write_seconds: 0.0,
                    sender_cpu_percent: 1.0,
                    receiver_cpu_percent: 1.0,
                }
            })
            .collect();
        let sweep_plan = SweepPlan {
            schema: RUNS_SCHEMA.into(),
            target: "lab".into(),
            snd: args.snd.clone(),
            rcv: args.snd.clone(),
            reps: 1,
            seed: 1,
            mss_bytes: 1448,
            set_mss: false,
            transfer_bytes: Some(65536),
            transfer_seconds: None,
        };
        let report = build_report(&config, &pair, sweep_plan, 3, runs, Path::new("x"));
        for (cell, asked) in report.analysis.cells.iter().zip([1.0, 2.0, 8.0]) {
            let want = (asked * 1448.0 / rtt).min(ceiling);
            let got = cell.predicted_bytes_per_second.unwrap();
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
            assert!(got <= ceiling);
        }
        let typed = verdicts::verdicts(&report);
        assert!(
            typed.iter().any(|v| matches!(
                v,
                verdicts::SweepVerdict::BandwidthDelayProduct {
                    basis: wirespeed_model::sweep::RoundTripBasis::Path,
                    rate_is_ceiling: true,
                    ..
                }
            )),
            "{typed:?}"
        );
        let kinds: Vec<_> = typed
            .iter()
            .map(|v| serde_json::to_value(v).unwrap()["kind"].clone())
            .collect();
        assert!(
            kinds.contains(&"path_ceiling".into()) && kinds.contains(&"window_per_buffer".into()),
            "{kinds:?}"
        );
        let verdicts = typed
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            verdicts.contains("computed from the configured path"),
            "{verdicts}"
        );
        assert!(
            verdicts.contains("the window the sender saw was 1.00 x"),
            "{verdicts}"
        );
        assert!(
            verdicts.contains("ceiling is") && verdicts.contains("lab t1-path"),
            "{verdicts}"
        );
    }

    #[test]
    fn the_report_comes_from_the_runs() {
        let path = temp("report");
        let args = parse(&[
            "--snd",
            "1..4",
            "--reps",
            "1",
            "-n",
            "1MB",
            "--seed",
            "1",
            "--results",
            path.to_str().unwrap(),
            "--link-rate",
            "1G",
        ])
        .unwrap();
        let mut model = WindowModel {
            calls: Vec::new(),
            fail_after: None,
        };
        let mut done = Vec::new();
        let plan = SweepPlan {
            schema: RUNS_SCHEMA.into(),
            target: "model".into(),
            snd: args.snd.clone(),
            rcv: args.snd.clone(),
            reps: 1,
            seed: 1,
            mss_bytes: 1000,
            set_mss: false,
            transfer_bytes: Some(1_000_000),
            transfer_seconds: None,
        };
        let mut file = Results::Open(RunsFile::create(&path, &plan).unwrap());
        let order = sweep::plan(4, 4, 1, 1);
        assert!(
            execute(
                &plan,
                &order,
                &mut model,
                &mut file,
                &mut done,
                &|| false,
                &Progress::start("sweep", "runs", 16, None, true)
            )
            .is_none()
        );
        let report = build_report(
            &Config::try_from(&args).unwrap(),
            &None,
            plan,
            16,
            done,
            &path,
        );
        assert!(report.complete);
        // Window-limited: 1 packet of 1000 bytes per ms = 1 MB/s, 4 packets = 4 MB/s.
        let d = &report.analysis.diagonal;
        assert_eq!(d.len(), 4);
        assert!((d[0].task_to_task_kib_per_second * 1024.0 - 1e6).abs() < 1.0);
        assert!((d[3].task_to_task_kib_per_second * 1024.0 - 4e6).abs() < 1.0);
        let csv = report.csv();
        assert_eq!(csv.lines().count(), 17);
        assert!(report.heatmap().unwrap().contains("<svg"));
        assert!(report.diagonal_plot().unwrap().contains("envelope ceiling"));
        let mut text = Vec::new();
        wirespeed_report::Render::render(&report, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("the seed's table"), "{text}");
        let _ = std::fs::remove_file(&path);
    }
}
