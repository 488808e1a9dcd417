//! `wirespeed mesh`: every ordered pair of a fleet of agents, a TCP test and latency probes
//! each, scheduled as a round-robin tournament so that no agent is in two tests at once (issue
//! 19). The controller asks each test's source agent to test the destination agent
//! (`wirespeed_net::mesh`, which follows the agents' traffic rules); the schedule, the
//! prediction of its length and the outlier analysis are `wirespeed_model::mesh`.
//!
//! The command's shape (issue 30): the flags and their check here, the schema in `result.rs`,
//! the tests and second looks in `measure.rs`, the matrices and the judge in `analysis.rs`,
//! the typed verdicts and warnings in `verdicts.rs`, the agents in `agents.rs`, and the views
//! in `text.rs`, `html.rs`, `brief.rs` and `metrics.rs`.

#[doc(hidden)]
pub mod agents;
#[doc(hidden)]
pub mod analysis;
#[doc(hidden)]
pub mod brief;
#[doc(hidden)]
pub mod evidence;
pub(crate) mod html;
#[doc(hidden)]
pub mod measure;
mod metrics;
#[doc(hidden)]
pub mod result;
mod sampling;
mod text;
#[doc(hidden)]
pub mod verdicts;
#[doc(hidden)]
pub mod wait;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, parse_duration};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::control::DEFAULT_PORT;
use wirespeed_net::control::mesh::{MAX_PROBE_GAP_SECONDS, MAX_PROBES, MIN_PROBE_GAP_SECONDS};
use wirespeed_report::{Finding as Said, Severity};

use crate::common::flags::KeyArgs;
use crate::common::output::OutputArgs;
use crate::common::runs_file::{RunsFile, RunsPlan};

pub(crate) use analysis::build_result;
pub(crate) use measure::{predict, test_timing};
pub(crate) use result::*;
pub use result::{AgentEntry, MeshPlan, MeshResult, PairFigures, PairRecord, Recheck, Sample};

use agents::{agents_of, wait_until_up};
use measure::Mesh;

/// What a test costs beyond its measuring time (connections, handshakes, the destination's
/// consent, the results exchange), as measured on loopback and a lab (docs/mesh.md).
pub(crate) const OVERHEAD_SECONDS: f64 = 0.15;

/// The probes' gap when `--probe-gap` is not given (the Job of `deploy kubernetes` too).
#[doc(hidden)]
pub const DEFAULT_PROBE_GAP: &str = "10ms";

/// The most agents one mesh takes (a mesh of N has N(N-1) tests: 1000 agents is a million).
pub(crate) const MAX_AGENTS: usize = 1000;
/// The most tests one agent may be in at once (`--concurrency`).
pub(crate) const MAX_CONCURRENCY: usize = 64;
/// The most tests the controller runs at once (one thread each): N/2 x `--concurrency`.
pub(crate) const MAX_PARALLEL_TESTS: usize = 1024;

#[derive(Debug, Args)]
#[doc(hidden)]
pub struct MeshArgs {
    /// The agents (`wirespeed serve --auth-key-file` on each host), comma-separated HOST or
    /// HOST:PORT; a name that resolves to several addresses (a headless Service) is one agent
    /// per address.
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    agents: Vec<String>,

    /// A file of agents, one per line: HOST[:PORT], or NAME HOST[:PORT]; `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,

    /// N in-process agents on loopback sharing a random key, instead of --agents (to try the
    /// command on one machine).
    #[arg(long, value_name = "N", conflicts_with_all = ["agents", "agents_file"])]
    local: Option<usize>,

    /// The port of agents named without one.
    #[arg(long, short = 'p', default_value_t = DEFAULT_PORT)]
    port: u16,

    /// Each TCP test's duration.
    #[arg(long = "time", short = 't', default_value = "2s", value_parser = parse_duration)]
    time: Duration,

    /// Latency probes (UDP echo) per test, before its TCP test; 0 for none.
    #[arg(long, default_value_t = 20, value_name = "N")]
    probes: u32,

    /// Gap between latency probes.
    #[arg(long, default_value = DEFAULT_PROBE_GAP, value_parser = parse_duration, value_name = "DURATION")]
    probe_gap: Duration,

    /// IP TOS byte (IPv6: traffic class) of every TCP test's data packets, at both ends
    /// (iperf3's -S): a number (184, 0xb8, 0270) or a DSCP name (ef, af11..af43, cs0..cs7, le).
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Tests an agent may be in at once (1: a round-robin tournament, no agent in two tests).
    #[arg(long, default_value_t = 1, value_name = "K")]
    concurrency: usize,

    /// How long a silent agent is waited for.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    timeout: Duration,

    /// Before the first test, wait up to DURATION for every agent's name to resolve and its
    /// port to accept a connection (a mesh started beside its agents, as a Kubernetes Job
    /// is); agents still silent then are named and their tests fail.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "local")]
    wait_for_agents: Option<Duration>,

    /// Append each finished test to FILE (JSON lines; docs/results-files.md). Never overwrites.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    results: Option<PathBuf>,

    /// Continue the mesh saved in FILE: run only the tests it lacks; or continue the schedule
    /// (`--every`) saved in FILE, given the same arguments as before.
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,

    /// Measure the whole mesh again every DURATION (pScheduler's --repeat), each mesh's
    /// document appended to the --results file; needs --count or --until.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    every: Option<Duration>,

    /// With --every: at most N meshes.
    #[arg(long = "count", value_name = "N")]
    count: Option<u64>,

    /// With --every: start no mesh after TIME, an RFC 3339 UTC time (2026-11-25T20:00:00Z) or
    /// a duration from now (8h).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,

    /// With --every: start each mesh a uniformly random 0 to DURATION after its slot
    /// (pScheduler's --slip).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    slip: Option<Duration>,

    /// One CSV row per test instead of the text view.
    #[arg(long, conflicts_with = "json")]
    csv: bool,

    #[command(flatten)]
    sample: sampling::SampleArgs,

    #[command(flatten)]
    key: KeyArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// A validated mesh: what `wirespeed mesh`'s flags mean once every range and combination, the
/// key file and the schedule are checked, each setting held once in its type. The agents are
/// resolved (or started, or waited for) when the mesh starts, and the plan they make is
/// checked by [`measure::Mesh::new`]; a library caller builds this and skips the flags.
#[derive(Debug, Clone)]
pub struct Config {
    #[doc(hidden)]
    pub fleet: Fleet,
    #[doc(hidden)]
    pub tests: PairTests,
    pub(crate) key: Option<AuthKey>,
    /// How long a silent agent is waited for.
    pub(crate) timeout: Duration,
    /// `--results`: a new mesh's file (never overwritten).
    pub(crate) results: Option<PathBuf>,
    /// `--resume` of a mesh's own results file: its plan and finished tests.
    #[doc(hidden)]
    pub resume: Option<PathBuf>,
    /// `--every` and its flags (or a schedule's file resumed): the mesh again and again.
    #[doc(hidden)]
    pub schedule: Option<crate::common::schedule::ScheduleArgs>,
    /// `--csv`: one row per test, the findings on stderr.
    pub(crate) csv: bool,
    pub(crate) rate_format: RateFormat,
}

/// Whose agents the mesh tests.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum Fleet {
    Named(agents::Named),
    /// `--local N` in-process agents on loopback, sharing a key.
    Local(usize),
}

/// What each test of the mesh is: its plan's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct PairTests {
    /// `-t`: each TCP test, 100 ms to 1 h.
    pub time: Duration,
    /// Latency probes per test, at most `MAX_PROBES`.
    pub(crate) probes: u32,
    pub probe_gap: Duration,
    /// Tests an agent may be in at once.
    pub(crate) concurrency: usize,
    pub(crate) tos: Option<u8>,
    /// `--pairs` (its seed drawn when not given).
    pub sample: Option<Sample>,
}

impl TryFrom<&MeshArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &MeshArgs) -> anyhow::Result<Config> {
        let schedule = args.every.is_some() || args.resume.as_deref().is_some_and(is_schedule_file);
        args.check(schedule)?;
        if schedule {
            args.check_schedule()?;
        } else {
            args.check_single()?;
        }
        let key = args.key.load().context("--auth-key-file")?;
        if !schedule
            && let Some(path) = &args.resume
            && (!args.agents.is_empty() || args.agents_file.is_some() || args.local.is_some())
        {
            bail!(
                "--resume {}: the file names its agents; drop --agents, --agents-file and --local",
                path.display()
            );
        }
        Ok(Config {
            fleet: match args.local {
                Some(n) => Fleet::Local(n),
                None => Fleet::Named(agents::Named {
                    specs: args.agents.clone(),
                    file: args.agents_file.clone(),
                    port: args.port,
                    wait: args.wait_for_agents,
                }),
            },
            tests: PairTests {
                time: args.time,
                probes: args.probes,
                probe_gap: args.probe_gap,
                concurrency: args.concurrency,
                tos: args.tos,
                sample: args.sample.sample(),
            },
            key,
            timeout: args.timeout,
            results: args.results.clone(),
            resume: args.resume.clone(),
            schedule: schedule.then(|| crate::common::schedule::ScheduleArgs {
                every: args.every,
                runs: args.count,
                until: args.until.clone(),
                slip: args.slip,
                results: args.results.clone(),
                resume: args.resume.clone(),
            }),
            csv: args.csv,
            rate_format: args.output.rate_format,
        })
    }
}

impl MeshArgs {
    /// The flags' own checks, before any agent is asked anything; `schedule`: the mesh runs
    /// on one (`--every`, or a schedule's file resumed).
    fn check(&self, schedule: bool) -> anyhow::Result<()> {
        self.brief.check(&self.output, &[])?;
        if self.brief.brief && self.csv {
            bail!("--brief prints one line of text and --csv a table: drop one of them");
        }
        if self.brief.brief && self.every.is_some() {
            bail!(
                "--every prints one line per run already: drop --brief (each mesh's whole document is in the results file)"
            );
        }
        check_tests(
            self.time,
            self.probes,
            self.probe_gap,
            self.concurrency,
            self.timeout,
        )?;
        if let Some(w) = self.wait_for_agents
            && w > wait::MAX_WAIT
        {
            bail!(
                "--wait-for-agents {} is too long: at most 1h (e.g. --wait-for-agents 5m)",
                format_seconds(w.as_secs_f64())
            );
        }
        if let Some(n) = self.local {
            check_local(n)?;
        }
        self.sample
            .check(self.resume.is_some() && !schedule, schedule)?;
        Ok(())
    }

    /// A single mesh: the schedule's own flags are refused.
    fn check_single(&self) -> anyhow::Result<()> {
        for (given, flag) in [
            (self.count.is_some(), "--count"),
            (self.until.is_some(), "--until"),
            (self.slip.is_some(), "--slip"),
        ] {
            if given {
                bail!(
                    "{flag} belongs to a schedule: add --every DURATION to measure the mesh again and again"
                );
            }
        }
        Ok(())
    }

    /// A schedule: what only a single mesh does is refused.
    fn check_schedule(&self) -> anyhow::Result<()> {
        if self.wait_for_agents.is_some() {
            bail!(
                "--wait-for-agents is for one mesh started beside its agents: drop it for a schedule (each scheduled mesh names its failed tests)"
            );
        }
        if self.csv {
            bail!(
                "--every prints one line per mesh and a summary: drop --csv (each mesh's whole document is in the results file)"
            );
        }
        if self.resume.is_some()
            && (self.every.is_some() || self.until.is_some() || self.slip.is_some())
        {
            bail!(
                "--every, --until and --slip are in the schedule's plan: drop them beside --resume, and give the mesh's other arguments as before"
            );
        }
        Ok(())
    }
}

/// The ranges of each test's settings (`-t`, `--probes`, `--probe-gap`, `--concurrency`) and
/// of `--timeout`.
fn check_tests(
    time: Duration,
    probes: u32,
    probe_gap: Duration,
    concurrency: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    let t = time.as_secs_f64();
    if !(wirespeed_net::spec::MIN_TEST_SECONDS..=3600.0).contains(&t) {
        bail!(
            "-t {} s is out of range: give each test 100ms to 1h (e.g. -t 2s)",
            t
        );
    }
    if probes > MAX_PROBES {
        bail!("--probes {probes} is too many: at most {MAX_PROBES} per test");
    }
    let gap = probe_gap.as_secs_f64();
    if !(MIN_PROBE_GAP_SECONDS..=MAX_PROBE_GAP_SECONDS).contains(&gap) {
        bail!("--probe-gap {gap} s is out of range: use 1ms to 1s (e.g. --probe-gap 10ms)");
    }
    if concurrency == 0 || concurrency > MAX_CONCURRENCY {
        bail!(
            "--concurrency {concurrency} is out of range: use 1 (no agent in two tests at once) to {MAX_CONCURRENCY}"
        );
    }
    if timeout < Duration::from_millis(100) {
        bail!(
            "--timeout is too short for any agent to answer: use at least 100ms (e.g. --timeout 10s)"
        );
    }
    Ok(())
}

/// `--local N`: in-process agents, 2 to 16.
fn check_local(n: usize) -> anyhow::Result<()> {
    if !(2..=16).contains(&n) {
        bail!("--local {n} is out of range: use 2 to 16 in-process agents");
    }
    Ok(())
}

impl Config {
    /// A mesh of `agents` in-process agents on loopback sharing a random key (`--local N`, 2
    /// to 16): every ordered pair tested once. The rest is the command's defaults: a 2 s TCP
    /// test per pair after 20 latency probes 10 ms apart, no agent in two tests at once, every
    /// pair (no `--pairs` sample), a silent agent waited for 10 s, and no results file.
    pub fn local(agents: usize) -> Config {
        Config {
            fleet: Fleet::Local(agents),
            tests: PairTests {
                time: Duration::from_secs(2),
                probes: 20,
                probe_gap: parse_duration(DEFAULT_PROBE_GAP)
                    .expect("the default probe gap is a duration"),
                concurrency: 1,
                tos: None,
                sample: None,
            },
            key: None,
            timeout: Duration::from_secs(10),
            results: None,
            resume: None,
            schedule: None,
            csv: false,
            rate_format: RateFormat::Adaptive,
        }
    }

    /// `-t`: each TCP test's duration, 100 ms to 1 h (checked by [`measure`]).
    pub fn with_test_time(mut self, time: Duration) -> Config {
        self.tests.time = time;
        self
    }

    /// `--probes N`: latency probes per test before its TCP test, 0 for none (checked by
    /// [`measure`]).
    pub fn with_probes(mut self, probes: u32) -> Config {
        self.tests.probes = probes;
        self
    }
}

/// What one mesh measured: its document, whether Ctrl-C cut it short, and the tests finished.
#[derive(Debug)]
pub struct Measured {
    pub doc: wirespeed_report::Document<MeshPlan, MeshResult>,
    pub interrupted: bool,
    /// The tests with a record, resumed ones included.
    pub finished: usize,
    /// The first failed test's error, for a caller that stops at failures (the command's exit
    /// status); every failure is also in `doc.result.tests`.
    pub failed_first: Option<String>,
}

/// Runs the one mesh `config` describes and returns its document, printing nothing: no
/// progress bar, and a failed test is in the document rather than an error. A schedule
/// (`--every`) is the command's.
pub fn measure(config: &Config) -> anyhow::Result<Measured> {
    if config.schedule.is_some() {
        bail!("a schedule (--every) runs from the command: measure runs one mesh");
    }
    let t = &config.tests;
    check_tests(t.time, t.probes, t.probe_gap, t.concurrency, config.timeout)?;
    if let Fleet::Local(n) = config.fleet {
        check_local(n)?;
    }
    one_mesh(config, &mut |_| {}, true)
}

/// One mesh: its agents and plan (new, or resumed with `repaired` told what its file's
/// reading repaired), its tests, and the document with its warnings; `quiet`: no progress bar.
fn one_mesh(
    config: &Config,
    repaired: &mut dyn FnMut(&str),
    quiet: bool,
) -> anyhow::Result<Measured> {
    let mut key = config.key.clone();
    // In-process agents (`--local`) live until the mesh is measured.
    let mut _local = None;
    let mut start = match &config.resume {
        Some(path) => resumed(config, path, repaired)?,
        None => {
            let mut waited = None;
            let (agents, local) = agents_of(&config.fleet, &mut key, &mut waited)?;
            let is_local = local.is_some();
            _local = local;
            Start {
                plan: MeshPlan::new(&config.tests, agents, is_local),
                done: Vec::new(),
                file: None,
                repair: None,
                waited,
            }
        }
    };
    let mesh = Mesh::new(start.plan, key, config.timeout)?;
    // The results file only once every flag has been checked: a refused run leaves no file.
    if config.resume.is_none()
        && let Some(p) = config.results.as_deref()
    {
        start.file = Some(RunsFile::create(p, &mesh.plan)?);
    }
    crate::common::interrupt::watch();
    let ex = measure::measure(&mesh, start.done, start.file.as_mut(), quiet)?;
    let result = ex.result(
        &mesh.plan,
        start.file.as_ref().map(|f| f.path().display().to_string()),
        config.rate_format,
        config.csv,
    );
    let mut doc = result.document(&mesh.plan);
    if let Some(repair) = start.repair {
        doc.push(Said::plain(
            Severity::Warning,
            "results_file_repaired",
            repair,
        ));
    }
    if let Some(waited) = start.waited {
        doc.warning(&waited);
    }
    Ok(Measured {
        doc,
        interrupted: ex.interrupted,
        finished: ex.done.len(),
        failed_first: ex.failed_first,
    })
}

/// Whether FILE is a schedule's results file (`--every`), not a mesh's own: its plan line's
/// schema says so.
fn is_schedule_file(path: &std::path::Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    // A plan line is a few KiB per agent; a bounded read of the first line is enough.
    let mut first = String::new();
    let _ = std::io::BufReader::new(f.take(8 << 20)).read_line(&mut first);
    serde_json::from_str::<serde_json::Value>(&first).is_ok_and(|v| {
        v["schema"].as_str() == Some(<crate::common::schedule::Plan as RunsPlan>::SCHEMA)
    })
}

impl MeshPlan {
    /// A new mesh's plan: these agents, each test as `tests` says.
    fn new(tests: &PairTests, agents: Vec<AgentEntry>, local: bool) -> MeshPlan {
        MeshPlan {
            schema: RUNS_SCHEMA.into(),
            agents,
            tcp_seconds: tests.time.as_secs_f64(),
            probes: tests.probes,
            probe_gap_seconds: tests.probe_gap.as_secs_f64(),
            concurrency: tests.concurrency,
            local,
            tos: tests.tos,
            sample: tests.sample,
        }
    }

    /// Refuses a plan whose slots would need more threads than the controller runs.
    fn check_parallel(&self) -> anyhow::Result<()> {
        let parallel = self.agents.len() / 2 * self.concurrency;
        if parallel > MAX_PARALLEL_TESTS {
            bail!(
                "{} agents at --concurrency {} would run {parallel} tests at once; the controller runs at most {MAX_PARALLEL_TESTS}: lower --concurrency",
                self.agents.len(),
                self.concurrency
            );
        }
        Ok(())
    }
}

/// `wirespeed mesh`: flags -> config -> agents and plan -> the tests -> the document out.
pub(crate) fn run(args: MeshArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    if config.schedule.is_some() {
        return run_scheduled(&args, &config);
    }
    let Measured {
        mut doc,
        interrupted: cut,
        finished,
        failed_first,
    } = one_mesh(
        &config,
        &mut |repair| eprintln!("wirespeed: warning: {repair}"),
        false,
    )?;
    if cut {
        return interrupted(&args, &doc, finished);
    }
    if config.csv {
        findings_to_stderr(&mut doc);
    }
    crate::common::brief::show(&args.brief, &args.output, &doc)?;
    if doc.result.tests_failed > 0 {
        bail!(
            "{} of {} tests failed (first: {})",
            doc.result.tests_failed,
            doc.result.tests.len(),
            failed_first.unwrap_or_else(|| "see the warnings".into())
        );
    }
    Ok(())
}

/// A mesh about to run: its plan, the tests already saved, its results file, and what the
/// run says of them beside its own figures.
struct Start {
    /// Checked by [`Mesh::new`] before any test.
    plan: MeshPlan,
    done: Vec<PairRecord>,
    file: Option<RunsFile>,
    /// How the results file was repaired on reading (a torn last line).
    repair: Option<String>,
    /// `--wait-for-agents`: the agents that did not answer in time.
    waited: Option<verdicts::MeshWarning>,
}

/// `--resume FILE`: the mesh the file holds, with its finished tests.
fn resumed(
    config: &Config,
    path: &std::path::Path,
    repaired: &mut dyn FnMut(&str),
) -> anyhow::Result<Start> {
    let resumed = RunsFile::resume::<MeshPlan, PairRecord>(path)?;
    if let Some(r) = &resumed.repair {
        repaired(r);
    }
    if resumed.plan.local {
        bail!(
            "{}: its agents were in-process (--local) and are gone; start a new mesh",
            path.display()
        );
    }
    let wait = match &config.fleet {
        Fleet::Named(named) => named.wait,
        Fleet::Local(_) => None,
    };
    let waited = wait.and_then(|wait| wait_until_up(&resumed.plan.agents, Instant::now(), wait));
    Ok(Start {
        plan: resumed.plan,
        done: resumed.runs,
        file: Some(resumed.file),
        repair: resumed.repair,
        waited,
    })
}

/// A mesh cut by Ctrl-C: what it measured, marked partial, then the error that says what is
/// saved and how to go on.
fn interrupted(
    args: &MeshArgs,
    doc: &wirespeed_report::Document<MeshPlan, MeshResult>,
    finished: usize,
) -> anyhow::Result<()> {
    let planned = doc.result.tests_planned;
    let what = format!("interrupted after {finished} of {planned} tests");
    crate::common::brief::show_partial(&args.brief, &args.output, doc, &what)?;
    let saved = doc.result.results_file.clone();
    Err(crate::common::interrupt::Interrupted {
        message: match &saved {
            Some(path) => format!("{finished} of {planned} tests are saved in {path}"),
            None => format!(
                "{finished} of {planned} tests finished; none is saved (add --results FILE to keep them)"
            ),
        },
        resume: saved.map(|path| {
            crate::common::interrupt::command_line(&["mesh".into(), "--resume".into(), path])
        }),
    }
    .into())
}

/// `--csv`: the CSV stays one table, so the verdicts and warnings go to stderr.
fn findings_to_stderr(doc: &mut wirespeed_report::Document<MeshPlan, MeshResult>) {
    for f in doc.findings.drain(..) {
        match f.severity {
            Severity::Verdict => eprintln!("verdict: {}", f.sentence),
            Severity::Warning => eprintln!("warning: {}", f.sentence),
        }
    }
    doc.verdicts.clear();
    doc.warnings.clear();
}

/// `--every`: the whole mesh on a schedule (`crate::common::schedule`), each mesh's document one
/// record of the schedule's results file. A mesh cut by Ctrl-C is not recorded; `--resume`
/// runs its slot again, whole.
fn run_scheduled(args: &MeshArgs, config: &Config) -> anyhow::Result<()> {
    let mut key = config.key.clone();
    let (agents, local) = agents_of(&config.fleet, &mut key, &mut None)?;
    let plan = MeshPlan::new(&config.tests, agents, local.is_some());
    let mesh = Mesh::new(plan, key, config.timeout)?;
    let schedule = config
        .schedule
        .as_ref()
        .context("a scheduled mesh's config holds its schedule")?;
    let mut one = || {
        let ex = measure::measure(&mesh, Vec::new(), None, false)?;
        let result = ex.result(&mesh.plan, None, config.rate_format, false);
        let failure = (result.tests_failed > 0).then(|| {
            format!(
                "{} of {} tests failed (first: {})",
                result.tests_failed,
                result.tests.len(),
                ex.failed_first
                    .clone()
                    .unwrap_or_else(|| "see the warnings".into())
            )
        });
        let headline = result.median_rate();
        let doc = result.document(&mesh.plan);
        Ok(crate::common::schedule::RunOutput {
            document: serde_json::to_value(&doc)?,
            headline,
            failure,
        })
    };
    crate::common::schedule::run(
        schedule,
        crate::common::schedule::Job {
            command: "mesh",
            count_flag: "--count",
            seed: None,
            headline: "median pair rate",
            unit: crate::common::schedule::Unit::BitsPerSecond,
            output: &args.output,
            run: &mut one,
        },
    )
}
