//! `wirespeed load`: the coordinated many-host load test of Boggs, Mogul and Kent (seed 000
//! §3.3): a series of tests over host counts and packet lengths, each run by the agents at once
//! on a common schedule, results appended to a file as each test ends, `--resume` to go on.
//! Flags in (here), the series run by `wirespeed_net::load::controller` (`measure.rs`), rows
//! judged (`analysis.rs`) and shown (`text.rs`, `html.rs`).

mod analysis;
mod brief;
pub(crate) mod html;
mod measure;
mod metrics;
pub(crate) mod result;
pub(crate) mod text;
mod verdicts;

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
pub(crate) use result::RUNS_SCHEMA;
pub use result::{HostRecord, HostRow, Lengths, LoadPlan, LoadResult, Row, Stats, TestRecord};

#[derive(Debug, Clone, Args)]
pub(crate) struct LoadArgs {
    /// An agent (`wirespeed serve` on each host) as HOST or HOST:PORT; repeat it, one per
    /// transmitting host. Without any, --local in-process agents on loopback.
    #[arg(long = "agent", short = 'a', value_name = "HOST[:PORT]")]
    agents: Vec<String>,

    /// In-process agents on loopback when no --agent is given.
    #[arg(long, default_value_t = 4, value_name = "N", conflicts_with = "agents",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    local: u32,

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
    lengths: LengthList,

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
    sink: SinkArg,

    /// Raw Ethernet frames instead of UDP (root on every agent): each agent sends on IFACE, or
    /// without one on the interface holding its control address, frames addressed to its own
    /// MAC (the seed's receiver-off generators). Transmit stamps from the NIC where it has
    /// hardware stamping, else the kernel's software stamps; each agent says which.
    #[arg(long, value_name = "IFACE", num_args = 0..=1, default_missing_value = "",
          value_parser = parse_raw)]
    raw: Option<RawEthernet>,

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
pub(crate) enum SinkArg {
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

fn parse_sink(text: &str) -> Result<SinkArg, String> {
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
fn test_length(schedule: &Schedule) -> Duration {
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
    fn schedule(&self) -> Schedule {
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
    pub(crate) agents: AgentSource,
    pub(crate) plan: PlanSource,
    pub(crate) auth: Option<AuthKey>,
    /// Simulated time behind each row's shared-segment prediction; None: `--no-model`.
    pub(crate) model_time: Option<Duration>,
    /// How long a silent agent is waited for, beyond the schedule.
    pub(crate) timeout: Duration,
    /// `--plot DIR`, checked writable.
    pub(crate) plot: Option<PathBuf>,
    pub(crate) rate_format: RateFormat,
}

/// Who transmits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AgentSource {
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
pub(crate) enum PlanSource {
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

#[cfg(test)]
mod tests {
    use super::analysis::unmarked;
    use super::measure::{agent_address, deck, to_do, validate};
    use super::result::{HostRecord, mix_spec, parse_mix};
    use super::verdicts::LoadFinding;
    use super::*;
    use crate::common::runs_file::RunsFile;
    use clap::Parser;
    use wirespeed_net::load::LoadReport;
    use wirespeed_sim::LengthMix;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LoadArgs,
    }

    fn parse(argv: &[&str]) -> Result<LoadArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("load").chain(argv.iter().copied())).map(|c| c.args)
    }

    fn config(argv: &[&str]) -> anyhow::Result<Config> {
        Config::try_from(&parse(argv)?)
    }

    /// Issue 30: a library caller runs a series with the constructor and `measure` alone (two
    /// in-process agents, 512-byte packets, tests of 0.4 s) and gets one row per host count
    /// with what each host sent; a schedule no test can keep is refused before any agent.
    #[test]
    fn a_library_caller_runs_a_loopback_series() {
        let short = Schedule {
            settle_ns: 50_000_000,
            transmit_ns: 300_000_000,
            measure_ns: 150_000_000,
            cooldown_ns: 50_000_000,
        };
        let config = crate::load::Config::loopback(2, vec![LengthMix::Fixed { bytes: 512 }])
            .with_schedule(short)
            .without_model();
        let measured = crate::load::measure(&config).unwrap();
        assert!(!measured.interrupted);
        assert_eq!(measured.finished, 2);
        let rows: &[crate::load::Row] = &measured.doc.result.rows;
        assert_eq!(rows.iter().map(|r| r.hosts).collect::<Vec<_>>(), [1, 2]);
        for row in rows {
            assert!(row.complete && row.model_shared_10mbit.is_none(), "{row:?}");
            let sent = row.per_host.iter().map(|h| h.packets.unwrap_or(0));
            assert!(sent.clone().all(|p| p > 0), "{row:?}");
        }
        let empty_window = Schedule {
            measure_ns: 0,
            ..short
        };
        let err = crate::load::measure(
            &crate::load::Config::loopback(1, vec![LengthMix::Fixed { bytes: 64 }])
                .with_schedule(empty_window),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("--measure"), "{err:#}");
        let err = crate::load::measure(&crate::load::Config::loopback(0, Vec::new())).unwrap_err();
        assert!(format!("{err:#}").contains("--local 0"), "{err:#}");
        let err = crate::load::measure(&crate::load::Config::loopback(1, Vec::new())).unwrap_err();
        assert!(format!("{err:#}").contains("no packet lengths"), "{err:#}");
    }

    /// A new series' plan is the flags', for the agents given: hosts 1 to N by default,
    /// agents named by address (or "loopback"), the model's time carried as a duration.
    #[test]
    fn the_config_holds_the_plan_for_the_agents_given() {
        let c = config(&["--local", "3", "--seed", "9", "-b", "2M"]).unwrap();
        assert_eq!(c.agents, AgentSource::Local(3));
        let PlanSource::New { plan, results } = &c.plan else {
            panic!("a new plan")
        };
        assert_eq!(plan.hosts, [1, 2, 3]);
        assert_eq!(plan.agents, ["loopback"; 3]);
        assert_eq!((plan.seed, plan.rate_bits_per_second), (9, Some(2e6)));
        assert!(results.is_none());
        assert_eq!(c.model_time, Some(Duration::from_secs(2)));
        assert_eq!(config(&["--no-model"]).unwrap().model_time, None);
        let err = config(&["--model-time", "2h"]).unwrap_err().to_string();
        assert!(err.contains("--model-time 2h"), "{err}");
        assert!(config(&["--model-time", "2h", "--no-model"]).is_ok());
        let c = config(&["--agent", "127.0.0.1:7", "--agent", "::1"]).unwrap();
        let addrs: Vec<SocketAddr> = vec![
            "127.0.0.1:7".parse().unwrap(),
            "[::1]:5210".parse().unwrap(),
        ];
        assert_eq!(c.agents, AgentSource::Remote(addrs));
        let PlanSource::New { plan, .. } = &c.plan else {
            panic!("a new plan")
        };
        assert_eq!(plan.agents, ["127.0.0.1:7", "[::1]:5210"]);
        assert!(matches!(
            config(&["--resume", "r.jsonl"]).unwrap().plan,
            PlanSource::Resume(_)
        ));
    }

    /// What no agent could run is refused by the config, before any agent starts or any file
    /// is made.
    #[test]
    fn the_config_refuses_a_plan_the_agents_cannot_run() {
        let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
        assert!(refused(&["--local", "2", "--hosts", "1-3"]).contains("--hosts goes up to 3"));
        assert!(refused(&["--hosts", "2,3", "--sink", "3"]).contains("--sink 3"));
        assert!(refused(&["--raw", "--sink", "1"]).contains("leave out --sink"));
        assert!(refused(&["--measure", "3s", "-t", "1s"]).contains("--settle/--transmit"));
        assert!(refused(&["--agent", "[fe80::1%lo]:5210"]).contains("a zone names a link"));
        assert!(refused(&["--plot", "/nonexistent-dir/plots"]).contains("--plot"));
        let results = std::env::temp_dir().join(format!("ws-load-config-{}", std::process::id()));
        let path = results.to_str().unwrap();
        assert!(refused(&["--local", "1", "--hosts", "2", "--results", path]).contains("--hosts"));
        assert!(!results.exists(), "a refused series leaves no results file");
    }

    /// A plain `wirespeed load` (4 local agents: hosts 1 to 4, four lengths, 16 tests) ends
    /// within a minute; the seed's 30 s tests are one flag away, and a part given overrides it.
    #[test]
    fn the_default_series_fits_in_a_minute_and_the_seeds_is_one_flag_away() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.sink, SinkArg::Own);
        assert_eq!(a.local, 4);
        let tests = a.local as usize * a.lengths.0.len();
        assert_eq!(tests, 16);
        let series = test_length(&a.schedule()) * tests as u32;
        assert!(series <= Duration::from_secs(45), "{series:?}");
        a.schedule().validate().unwrap();
        let seed = parse(&["--seed-schedule"]).unwrap().schedule();
        assert_eq!(seed, Schedule::SEED);
        assert_eq!(test_length(&seed), Duration::from_secs(30));
        let mixed = parse(&["--seed-schedule", "-t", "4s"]).unwrap().schedule();
        assert_eq!(
            (mixed.settle_ns, mixed.transmit_ns, mixed.measure_ns),
            (5_000_000_000, 4_000_000_000, 2_000_000_000)
        );
        let window = parse(&["--measure", "0.5s"]).unwrap().schedule();
        assert_eq!(window.measure_ns, 500_000_000);
        assert!(parse(&["--resume", "f", "--seed-schedule"]).is_err());
    }

    /// The time left, counted down from the schedule over a whole series in which every test
    /// runs a little past its schedule (connections, clock reading, reports): it never rises,
    /// not while a test runs nor when one ends, and it reaches zero at the end.
    #[test]
    fn the_time_left_counts_down_over_a_series() {
        use crate::common::progress::scheduled_remaining;
        let a = parse(&["--hosts", "1-3", "--lengths", "64,1536"]).unwrap();
        let per_test = test_length(&a.schedule());
        let total = 6u64;
        let overrun = Duration::from_millis(300);
        let mut previous = scheduled_remaining(per_test, 0, total, Duration::ZERO);
        assert_eq!(previous, per_test * 6);
        for done in 0..total {
            let mut into = Duration::ZERO;
            while into <= per_test + overrun {
                let left = scheduled_remaining(per_test, done, total, into);
                assert!(
                    left <= previous,
                    "{done} done, {into:?} in: {left:?} after {previous:?}"
                );
                previous = left;
                into += Duration::from_millis(100);
            }
        }
        assert_eq!(
            scheduled_remaining(per_test, total, total, Duration::ZERO),
            Duration::ZERO
        );
    }

    #[test]
    fn agents_that_did_not_mark_are_named_once() {
        let report = |tos: Option<u8>| LoadReport {
            counters: Default::default(),
            delay_source: wirespeed_model::load::DelaySource::AroundSendCall,
            clock: "CLOCK_MONOTONIC".into(),
            start_lateness_s: 0.0,
            skipped_in_window_s: 0.0,
            sink: None,
            timestamping: None,
            interface: None,
            tos,
        };
        let host = |agent: &str, tos: Option<u8>| HostRecord {
            agent: agent.into(),
            clock: None,
            report: Some(report(tos)),
            error: None,
        };
        let test = TestRecord {
            hosts: 3,
            lengths: LengthMix::Fixed { bytes: 64 }.into(),
            complete: true,
            agents: vec![host("a", Some(0xb8)), host("b", None), host("c", Some(0))],
        };
        let done = vec![test.clone(), test];
        assert!(unmarked(None, &done).is_empty());
        let typed = unmarked(Some(0xb8), &done);
        assert_eq!(
            typed[1],
            LoadFinding::TosNotMarked {
                agent: "c".into(),
                asked_tos: 0xb8,
                sent_tos: Some(0),
            }
        );
        let w: Vec<String> = typed.iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("agent b") && w[0].contains("older than -S"),
            "{w:?}"
        );
        assert!(w[1].contains("agent c") && w[1].contains("0x00"), "{w:?}");
    }

    /// A results file as `load` wrote it before its plan was typed (mixes as text) resumes: its
    /// mixes read back typed, its finished test is matched to the plan by value and not run
    /// again, and the plan writes back to the same line.
    #[test]
    fn a_results_file_written_with_text_mixes_resumes() {
        let plan_line = r#"{"schema":"wirespeed.load-runs.v1","agents":["loopback","loopback"],"hosts":[1,2],"lengths":["64","6/2","64:6+1536:2"],"schedule":{"settle_ns":0,"transmit_ns":300000000,"measure_ns":100000000,"cooldown_ns":100000000},"rate_bits_per_second":1000000.0,"sink_host":null,"seed":7}"#;
        let test_line = r#"{"hosts":2,"lengths":"6/2","complete":true,"agents":[{"agent":"127.0.0.1:1","clock":null,"report":null,"error":null}]}"#;
        let dir = std::env::temp_dir().join(format!("ws-load-old-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.jsonl");
        std::fs::write(&path, format!("{plan_line}\n{test_line}\n")).unwrap();
        let resumed = RunsFile::resume::<LoadPlan, TestRecord>(&path);
        let _ = std::fs::remove_dir_all(&dir);
        let resumed = resumed.unwrap();
        let plan = resumed.plan;
        assert_eq!(
            plan.lengths,
            [
                LengthMix::Fixed { bytes: 64 }.into(),
                LengthMix::seed_ratio(6, 2).into(),
                Lengths(LengthMix::Weighted {
                    lengths: vec![(64, 6.0), (1536, 2.0)]
                }),
            ]
        );
        assert!(validate(&plan, 2).is_ok());
        let todo: Vec<String> = to_do(&plan, &resumed.runs)
            .iter()
            .map(|(h, m)| format!("{h}x{m}"))
            .collect();
        assert_eq!(
            todo,
            ["1x64", "2x64", "1x6/2", "1x64:6+1536:2", "2x64:6+1536:2"]
        );
        assert_eq!(serde_json::to_string(&plan).unwrap(), plan_line);
        assert_eq!(serde_json::to_string(&resumed.runs[0]).unwrap(), test_line);
    }

    #[test]
    fn sinks_agents_and_mixes_parse() {
        assert_eq!(parse_sink("2"), Ok(SinkArg::Host(2)));
        assert!(parse_sink("0").is_err() && parse_sink("here").is_err());
        assert!(parse(&["--lengths", "64,huge"]).is_err());
        // The plan of a resumed series is the file's; flags that would change it are refused.
        assert!(parse(&["--resume", "f", "--local", "2", "--no-model"]).is_ok());
        assert!(parse(&["--resume", "f", "--lengths", "64"]).is_err());
        assert!(parse(&["--resume", "f", "--transmit", "1s"]).is_err());
        assert!(parse(&["--agent", "::1", "--local", "2"]).is_err());
        assert!(parse(&["--agent", "::1"]).is_ok());
        assert_eq!(
            parse(&["--raw"]).unwrap().raw,
            Some(RawEthernet { interface: None })
        );
        assert_eq!(
            parse(&["--raw", "eth0"]).unwrap().raw,
            Some(RawEthernet {
                interface: Some("eth0".into())
            })
        );
        assert!(parse(&["--raw", "a/b"]).is_err());
        assert!(parse(&["--resume", "f", "--raw"]).is_err());
        assert!(parse(&["--resume", "f", "-S", "ef"]).is_err());
        assert_eq!(parse(&[]).unwrap().raw, None);
        assert_eq!(
            agent_address("127.0.0.1").unwrap(),
            "127.0.0.1:5210".parse().unwrap()
        );
        assert_eq!(
            agent_address("[::1]:7").unwrap(),
            "[::1]:7".parse().unwrap()
        );
        let mix = LengthMix::Weighted {
            lengths: vec![(64, 6.0), (1536, 2.0)],
        };
        assert_eq!(mix_spec(&mix), "64:6+1536:2");
        assert_eq!(parse_mix(&mix_spec(&mix)).unwrap(), mix);
        assert_eq!(deck(&LengthMix::seed_ratio(6, 2)).unwrap().cards.len(), 8);
    }
}
