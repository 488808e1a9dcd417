//! `wirespeed load`: the coordinated many-host load test of Boggs, Mogul and Kent (seed 000
//! §3.3): a series of tests over host counts and packet lengths, each run by the agents at once
//! on a common schedule, results appended to a file as each test ends, `--resume` to go on.
//! Flags in (here), the series run by `wirespeed_net::load::controller` (`measure.rs`), rows
//! judged (`analysis.rs`) and shown (`text.rs`, `html.rs`).

#[doc(hidden)]
pub mod analysis;
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

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use wirespeed_model::load::Schedule;
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, RateFormat};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::load::RawEthernet;
use wirespeed_sim::LengthMix;

use crate::common::flags::{HostList, LengthList, parse_hosts, parse_lengths};
use crate::common::output::OutputArgs;
use crate::load::text::write_plots;
pub(crate) use analysis::rows;
pub use measure::Measured;
#[doc(hidden)]
pub use result::RUNS_SCHEMA;
pub use result::{HostRecord, HostRow, Lengths, LoadPlan, LoadResult, Row, Stats, TestRecord};

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct LoadArgs {
    /// An agent (`wirespeed serve` on each host) as HOST or HOST:PORT; repeat it, one per
    /// transmitting host. Without any, --local in-process agents on loopback.
    #[arg(long = "agent", short = 'a', value_name = "HOST[:PORT]")]
    agents: Vec<String>,

    /// In-process agents on loopback when no --agent is given.
    #[arg(long, default_value_t = 4, value_name = "N", conflicts_with = "agents",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub local: u32,

    /// Host counts of the series, such as 1-24 or 1,2,4 (default: 1 to the number of agents).
    #[arg(long = "hosts", value_name = "LIST", value_parser = parse_hosts)]
    hosts: Option<HostList>,

    #[arg(short = 'n', hide = true, value_name = "LIST",
          value_parser = crate::common::flags::moved_to(crate::common::flags::MOVED_N, "--hosts for host counts"))]
    moved_n: Option<String>,

    /// Packet lengths, comma-separated (header and data, as the seed counted): "seed" (its nine,
    /// 64 to 4000 bytes), a length in bytes, a 64/1536 ratio such as 6/2, or a weighted mix such
    /// as 64:6+576:1+1536:3.
    #[arg(long = "lengths", short = 'l', default_value = "64,512,1536,6/2", value_name = "LIST",
          value_parser = parse_lengths)]
    pub lengths: LengthList,

    /// Wait from the common start before transmitting [default: 0.25s; the seed's 5 s with
    /// --seed-schedule].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    settle: Option<Duration>,

    /// Transmission time of each test [default: 2s; the seed's 20 s with --seed-schedule].
    #[arg(long, short = 't', visible_alias = "time", value_name = "DURATION",
          value_parser = parse_duration)]
    transmit: Option<Duration>,

    /// The measured middle of the transmission [default: half of --transmit, as the seed
    /// measured 10 s of 20].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    measure: Option<Duration>,

    /// Wait after transmitting before reporting [default: 0.25s; the seed's 5 s with
    /// --seed-schedule].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    cooldown: Option<Duration>,

    /// The seed's schedule: 5 s settle, 20 s transmission with the middle 10 s measured, 5 s
    /// cool-down (30 s a test); --settle, --transmit, --measure and --cooldown still override
    /// its parts.
    #[arg(long)]
    seed_schedule: bool,

    /// Offered load per host, bits per second with the seed's 24 byte times per packet (such as
    /// 2M); without it each host sends as fast as it can, as the seed's did.
    #[arg(long, short = 'b', value_name = "RATE")]
    rate: Option<BitRate>,

    /// Where packets go: "self" (each host to its own socket, never read: the seed's receiver
    /// off) or a host number whose agent counts what every host's packets deliver (loss at
    /// the sink).
    #[arg(long, default_value = "self", value_name = "self|HOST", value_parser = parse_sink)]
    pub sink: SinkArg,

    /// Raw Ethernet frames instead of UDP (root on every agent): each agent sends on IFACE, or
    /// without one on the interface holding its control address, frames addressed to its own
    /// MAC (the seed's receiver-off generators). Transmit stamps from the NIC where it has
    /// hardware stamping, else the kernel's software stamps; each agent says which.
    #[arg(long, value_name = "IFACE", num_args = 0..=1, default_missing_value = "",
          value_parser = parse_raw)]
    pub raw: Option<RawEthernet>,

    /// IP TOS byte (IPv6: traffic class) of every datagram the agents send, as a number or a
    /// DSCP name (ef, af41, cs1; iperf3's -S): each agent reads its socket's value back and a
    /// warning names any agent whose packets were not marked (one older than -S).
    #[arg(long = "tos", short = 'S', value_name = "TOS", conflicts_with = "raw",
          value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Append each finished test to this file (JSON lines); it must not exist.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    results: Option<PathBuf>,

    /// Continue the series of a results file: its plan (hosts, lengths, schedule, rate, sink,
    /// seed, raw, TOS), the tests it lacks.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "hosts", "lengths", "settle", "transmit", "measure", "cooldown", "seed_schedule", "rate",
        "sink", "seed", "raw", "tos",
    ])]
    resume: Option<PathBuf>,

    /// Write the seed's figures 3-3 to 3-9 (x = hosts, one curve per length) as SVG files in DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,

    /// Simulated time behind each row's shared-segment prediction.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    model_time: Duration,

    /// Leave out the shared-segment prediction.
    #[arg(long)]
    no_model: bool,

    /// Seed of the length deals and of the model.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    /// How long a silent agent is waited for, beyond the schedule.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum SinkArg {
    Own,
    /// 1-based host number.
    Host(usize),
}

fn parse_raw(text: &str) -> Result<RawEthernet, String> {
    if text.len() >= 16 || text.contains(['/', ' ', '\0']) {
        return Err(format!(
            "{text:?} is not an interface name (examples: --raw eth0, or --raw alone for the agent's own)"
        ));
    }
    Ok(RawEthernet {
        interface: (!text.is_empty()).then(|| text.to_string()),
    })
}

#[doc(hidden)]
pub fn parse_sink(text: &str) -> Result<SinkArg, String> {
    match text {
        "self" => Ok(SinkArg::Own),
        n => match n.parse::<usize>() {
            Ok(h) if h >= 1 => Ok(SinkArg::Host(h)),
            _ => Err(format!(
                "{text:?} is not a sink (examples: self, 1 for the first host's agent)"
            )),
        },
    }
}

/// A duration in nanoseconds; one past 2^64 ns becomes `u64::MAX`, which the schedule's
/// validation then refuses as an overflow (a cast would wrap it to a short test).
fn saturating_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The schedule of a plain `wirespeed load`: the seed's proportions (a quiet wait, the middle
/// half of the transmission measured, a quiet wait) at 2.5 s a test, so that the default
/// series of 16 tests (hosts 1 to 4, four lengths) ends within a minute; the seed's 30 s
/// tests (16 of them: 8 minutes) are `--seed-schedule`.
const QUICK_SCHEDULE: Schedule = Schedule {
    settle_ns: 250_000_000,
    transmit_ns: 2_000_000_000,
    measure_ns: 1_000_000_000,
    cooldown_ns: 250_000_000,
};

/// How long one test of `schedule` lasts from its common start: settle, transmit, cool down
/// (the measured window lies within the transmission).
#[doc(hidden)]
pub fn test_length(schedule: &Schedule) -> Duration {
    Duration::from_nanos(
        schedule
            .settle_ns
            .saturating_add(schedule.transmit_ns)
            .saturating_add(schedule.cooldown_ns),
    )
}

impl LoadArgs {
    /// The schedule the flags ask for: each part given, else `--seed-schedule`'s or the quick
    /// default's; the measured window, when not given, is the middle half of the transmission.
    #[doc(hidden)]
    pub fn schedule(&self) -> Schedule {
        let base = if self.seed_schedule {
            Schedule::SEED
        } else {
            QUICK_SCHEDULE
        };
        let transmit_ns = self.transmit.map_or(base.transmit_ns, saturating_ns);
        Schedule {
            settle_ns: self.settle.map_or(base.settle_ns, saturating_ns),
            transmit_ns,
            measure_ns: self.measure.map_or(transmit_ns / 2, saturating_ns),
            cooldown_ns: self.cooldown.map_or(base.cooldown_ns, saturating_ns),
        }
    }

    /// A new series' plan for these agents; `measure::validate` says whether they can run it.
    fn plan(&self, agents: &AgentSource) -> LoadPlan {
        let n = agents.count();
        let hosts = self
            .hosts
            .as_ref()
            .map_or_else(|| (1..=n).collect(), |h| h.0.clone());
        LoadPlan {
            schema: RUNS_SCHEMA.into(),
            agents: agents.names(),
            hosts,
            lengths: self.lengths.0.iter().cloned().map(Lengths).collect(),
            schedule: self.schedule(),
            rate_bits_per_second: self.rate.map(|r| r.bps()),
            sink_host: match self.sink {
                SinkArg::Own => None,
                SinkArg::Host(h) => Some(h),
            },
            seed: self.seed,
            raw: self.raw.clone(),
            tos: self.tos,
        }
    }
}

/// A validated load series: what `wirespeed load`'s flags mean once the output directory, the
/// key file, the agents' addresses and a new series' plan (its schedule, host counts, sink,
/// rate and length mixes against the agents there are) are checked. A resumed series' plan is
/// its results file's, checked when the file is read.
#[derive(Debug, Clone)]
pub struct Config {
    #[doc(hidden)]
    pub agents: AgentSource,
    #[doc(hidden)]
    pub plan: PlanSource,
    pub(crate) auth: Option<AuthKey>,
    /// Simulated time behind each row's shared-segment prediction; None: `--no-model`.
    #[doc(hidden)]
    pub model_time: Option<Duration>,
    /// How long a silent agent is waited for, beyond the schedule.
    pub(crate) timeout: Duration,
    /// `--plot DIR`, checked writable.
    pub(crate) plot: Option<PathBuf>,
    pub(crate) rate_format: RateFormat,
}

/// Who transmits.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum AgentSource {
    /// `--agent`, each resolved.
    Remote(Vec<SocketAddr>),
    /// `--local N` agents in this process on loopback.
    Local(usize),
}

impl AgentSource {
    pub(crate) fn count(&self) -> usize {
        match self {
            AgentSource::Remote(addrs) => addrs.len(),
            AgentSource::Local(n) => *n,
        }
    }

    /// The agents as a plan names them.
    fn names(&self) -> Vec<String> {
        match self {
            AgentSource::Remote(addrs) => addrs.iter().map(ToString::to_string).collect(),
            AgentSource::Local(n) => vec!["loopback".to_string(); *n],
        }
    }
}

/// The most in-process agents (`--local`).
const MAX_LOCAL_AGENTS: usize = 64;

/// The simulator's own bound, checked before any agent starts rather than after the first
/// row's tests.
fn check_model_time(model_time: Duration) -> anyhow::Result<()> {
    if model_time > Duration::from_nanos(wirespeed_sim::MAX_SIMULATED_NS) {
        anyhow::bail!(
            "--model-time {}: the shared-segment prediction simulates at most 1h per row; give a shorter time or --no-model",
            humantime::format_duration(model_time)
        );
    }
    Ok(())
}

impl Config {
    /// A load series over loopback: `agents` in-process agents (`--local N`, 1 to 64), the
    /// series every host count from 1 to `agents` for each length mix of `lengths`
    /// (`--lengths`). The rest is the command's defaults: the quick schedule (0.25 s settle,
    /// 2 s transmission with its middle 1 s measured, 0.25 s cool-down: 2.5 s a test), each
    /// host sending as fast as it can to its own socket, seed 1, the shared-segment prediction
    /// over 2 s of simulated time, a silent agent waited for 5 s, and no results file.
    pub fn loopback(agents: usize, lengths: Vec<LengthMix>) -> Config {
        let source = AgentSource::Local(agents);
        Config {
            plan: PlanSource::New {
                plan: LoadPlan {
                    schema: RUNS_SCHEMA.into(),
                    agents: source.names(),
                    hosts: (1..=agents).collect(),
                    lengths: lengths.into_iter().map(Lengths).collect(),
                    schedule: QUICK_SCHEDULE,
                    rate_bits_per_second: None,
                    sink_host: None,
                    seed: 1,
                    raw: None,
                    tos: None,
                },
                results: None,
            },
            agents: source,
            auth: None,
            model_time: Some(Duration::from_secs(2)),
            timeout: Duration::from_secs(5),
            plot: None,
            rate_format: RateFormat::Adaptive,
        }
    }

    /// `--settle`, `--transmit`, `--measure`, `--cooldown`: each test's schedule (checked by
    /// [`measure`]).
    pub fn with_schedule(mut self, schedule: Schedule) -> Config {
        if let PlanSource::New { plan, .. } = &mut self.plan {
            plan.schedule = schedule;
        }
        self
    }

    /// `--no-model`: leave out each row's shared-segment prediction.
    pub fn without_model(mut self) -> Config {
        self.model_time = None;
        self
    }

    /// What the flags' parser and [`Config::try_from`] hold a series to, for a config a
    /// library caller built.
    fn check(&self) -> anyhow::Result<()> {
        if let AgentSource::Local(n) = self.agents
            && !(1..=MAX_LOCAL_AGENTS).contains(&n)
        {
            anyhow::bail!("--local {n}: give 1 to {MAX_LOCAL_AGENTS} in-process agents");
        }
        if let Some(t) = self.model_time {
            check_model_time(t)?;
        }
        if let PlanSource::New { plan, .. } = &self.plan {
            // The flags cannot say no length; a list built in code can, and would run nothing.
            if plan.lengths.is_empty() {
                anyhow::bail!(
                    "no packet lengths: give the series at least one (as --lengths 64 would)"
                );
            }
            measure::validate(plan, self.agents.count())?;
        }
        Ok(())
    }
}

/// Where the series' plan comes from.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub enum PlanSource {
    /// The flags' plan, checked; each finished test goes to `results` (created once the
    /// agents are up, so a refused run leaves no file).
    New {
        plan: LoadPlan,
        results: Option<PathBuf>,
    },
    /// `--resume FILE`: its plan and the tests it holds.
    Resume(PathBuf),
}

impl TryFrom<&LoadArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &LoadArgs) -> anyhow::Result<Config> {
        args.brief.check(&args.output, &[])?;
        if let Some(dir) = &args.plot {
            crate::common::output::check_output_dir("--plot", dir)?;
        }
        if !args.no_model {
            check_model_time(args.model_time)?;
        }
        let auth = args.key.load().context("--auth-key-file")?;
        let agents = if args.agents.is_empty() {
            AgentSource::Local(args.local as usize)
        } else {
            AgentSource::Remote(
                args.agents
                    .iter()
                    .map(|a| measure::agent_address(a))
                    .collect::<anyhow::Result<Vec<_>>>()?,
            )
        };
        let plan = match &args.resume {
            Some(path) => PlanSource::Resume(path.clone()),
            None => {
                let plan = args.plan(&agents);
                measure::validate(&plan, agents.count())?;
                PlanSource::New {
                    plan,
                    results: args.results.clone(),
                }
            }
        };
        Ok(Config {
            agents,
            plan,
            auth,
            model_time: (!args.no_model).then_some(args.model_time),
            timeout: args.timeout,
            plot: args.plot.clone(),
            rate_format: args.output.rate_format,
        })
    }
}

/// Runs the series `config` describes and returns its document, printing nothing (no
/// progress bar, no plots: `--plot` is the command's). Ctrl-C ends it between tests with the
/// finished ones kept ([`Measured::interrupted`]).
pub fn measure(config: &Config) -> anyhow::Result<Measured> {
    config.check()?;
    let agents = measure::agents(&config.agents)?;
    crate::common::interrupt::watch();
    let series = measure::series(config, &agents)?;
    let quiet = crate::common::progress::Progress::start_scheduled(
        "load",
        "tests",
        measure::to_do(&series.plan, &series.done).len() as u64,
        test_length(&series.plan.schedule),
        true,
    );
    measure::measure(config, &agents, series, &quiet)
}

/// `wirespeed load`: flags -> config -> agents and series -> the tests it lacks -> rows, plots
/// and the document out.
pub(crate) fn run(args: LoadArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    let agents = measure::agents(&config.agents)?;
    crate::common::interrupt::watch();
    let series = measure::series(&config, &agents)?;
    if let Some(r) = &series.repair {
        eprintln!("wirespeed: warning: {r}");
    }
    // Every test lasts its schedule, so the time left is counted down from it (an estimate
    // from the tests finished so far rose while each test ran).
    let bar = crate::common::progress::Progress::start_scheduled(
        "load",
        "tests",
        measure::to_do(&series.plan, &series.done).len() as u64,
        test_length(&series.plan.schedule),
        false,
    );
    let planned = series.plan.lengths.len() * series.plan.hosts.len();
    let measured = measure::measure(&config, &agents, series, &bar)?;
    if let Some(dir) = &config.plot {
        write_plots(dir, &measured.doc.result)?;
    }
    show(&args, measured, planned)
}

/// The document out; a series cut short says how far it got and the command that resumes it.
fn show(args: &LoadArgs, measured: measure::Measured, planned: usize) -> anyhow::Result<()> {
    let measure::Measured {
        doc,
        interrupted,
        finished,
    } = measured;
    if !interrupted {
        return crate::common::brief::show(&args.brief, &args.output, &doc);
    }
    let what = format!(
        "interrupted after {finished} of {planned} tests; the rows below are from those tests"
    );
    crate::common::brief::show_partial(&args.brief, &args.output, &doc, &what)?;
    let saved = doc.result.results_file.clone();
    Err(crate::common::interrupt::Interrupted {
        message: match &saved {
            Some(path) => format!("{finished} of {planned} tests are saved in {path}"),
            None => format!(
                "{finished} of {planned} tests finished; none is saved (add --results FILE to keep them)"
            ),
        },
        resume: saved.map(|path| resume_command(args, &path)),
    }
    .into())
}

/// The command that continues this series: the flags its plan does not hold, and `--resume`.
fn resume_command(args: &LoadArgs, path: &str) -> String {
    use crate::common::interrupt::{command_line, duration_word, output_words, path_word};
    let mut words = vec!["load".to_string()];
    if args.agents.is_empty() {
        words.extend(["--local".into(), args.local.to_string()]);
    }
    for a in &args.agents {
        words.extend(["--agent".into(), a.clone()]);
    }
    if let Some(dir) = &args.plot {
        words.extend(["--plot".into(), path_word(dir)]);
    }
    if args.no_model {
        words.push("--no-model".into());
    } else {
        words.extend(["--model-time".into(), duration_word(args.model_time)]);
    }
    words.extend(["--timeout".into(), duration_word(args.timeout)]);
    if let Some(f) = &args.key.auth_key_file {
        words.extend(["--auth-key-file".into(), path_word(f)]);
    }
    words.extend(output_words(&args.output));
    words.extend(["--resume".into(), path.to_string()]);
    command_line(&words)
}
