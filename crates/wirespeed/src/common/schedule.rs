//! `--every DURATION [--count N | --until TIME] [--slip DURATION]` on `tcp`, `udp`, `probe`,
//! `latency` and `mesh`: the same test run repeatedly on a fixed schedule, as perfSONAR's pScheduler runs
//! tests (`--repeat`, `--max-runs`, `--until`, `--slip`), each run appended to a results file.
//!
//! The schedule is a grid of slots `start + k x every`. Run k starts at its slot plus a slip
//! drawn uniformly from `[0, slip)` (seeded: the command's `--seed` when it has one, else the
//! OS; the seed is recorded, and the slip of slot k is a function of the seed and k alone, so
//! a resumed schedule draws the same slips). Runs never overlap: a run that ends after the
//! next run's planned start makes the next one start at once, in the slot it ends in, and the
//! slots passed over without a run are counted as skipped ([`Slots::next`]; property tests
//! below). Every schedule is bounded (`--count` or `--until`, one of them required).
//!
//! The results file is the crash-safe one of `sweep` and `load` ([`crate::common::runs_file`]): a plan
//! line (`wirespeed.schedule-runs.v1`: the command, its arguments, every, count, until, slip,
//! seed, the start of slot 0), then one record per run with its slot, its scheduled, actual
//! start and end times, and the run's whole document or its error. A failed run (the peer
//! down) is recorded and the schedule goes on; the exit status is then 3. `--resume FILE`
//! continues from the plan (the recorded runs count toward `--count`). Ctrl-C stops between
//! runs or abandons the run in flight, prints the summary of the runs kept, marked partial,
//! and names the command that resumes.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, parse_duration};
use wirespeed_report::{Document, Render};

use crate::common::exit_status::Exit;
use crate::common::output::OutputArgs;
use crate::common::runs_file::{RunsFile, RunsPlan};

/// The shortest `--every`: each run is a test with a handshake of its own.
pub(crate) const MIN_EVERY: Duration = Duration::from_secs(1);
/// The longest `--every`, and the furthest `--until`.
pub(crate) const MAX_SPAN: Duration = Duration::from_secs(366 * 24 * 3600);
/// The most runs one schedule may plan: a bound on the results file and on the summary.
pub(crate) const MAX_RUNS: u64 = 100_000;
/// How often the wait for the next slot looks at the Ctrl-C flag.
const WAIT_POLL: Duration = Duration::from_millis(50);

/// The schedule's flags, flattened into each command that repeats.
#[derive(Debug, Clone, Default, Args)]
#[doc(hidden)]
pub struct ScheduleArgs {
    /// Run the test repeatedly, one run per DURATION (pScheduler's --repeat), each appended to
    /// a results file; needs --count or --until.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub every: Option<Duration>,

    /// With --every: run at most N times (pScheduler's --max-runs).
    #[arg(long = "count", value_name = "N")]
    pub runs: Option<u64>,

    /// With --every: start no run after TIME, an RFC 3339 UTC time (2026-11-25T20:00:00Z) or
    /// a duration from now (2h).
    #[arg(long, value_name = "TIME")]
    pub(crate) until: Option<String>,

    /// With --every: start each run a uniformly random 0 to DURATION after its slot
    /// (pScheduler's --slip), so that schedules on many hosts do not start together.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) slip: Option<Duration>,

    /// With --every: the results file the runs are appended to (never overwritten; default
    /// COMMAND-schedule-TIME.jsonl, named on stderr).
    #[arg(long, value_name = "FILE")]
    pub(crate) results: Option<PathBuf>,

    /// Continue the schedule saved in FILE (its plan holds --every, --count, --until and
    /// --slip; the runs recorded count toward --count). Give the same arguments as before.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["every", "until", "slip", "results"])]
    pub(crate) resume: Option<PathBuf>,
}

impl ScheduleArgs {
    /// Whether the command runs on a schedule.
    pub(crate) fn active(&self) -> bool {
        self.every.is_some() || self.resume.is_some()
    }

    /// Refuses the schedule's flags without `--every` (or `--resume`): they would be ignored.
    pub(crate) fn check_unused(&self, count_flag: &str) -> anyhow::Result<()> {
        if self.active() {
            return Ok(());
        }
        for (given, flag) in [
            (self.runs.is_some(), count_flag),
            (self.until.is_some(), "--until"),
            (self.slip.is_some(), "--slip"),
            (self.results.is_some(), "--results"),
        ] {
            if given {
                bail!("{flag} belongs to a schedule: add --every DURATION to repeat the test");
            }
        }
        Ok(())
    }
}

/// The slots of a schedule and their slips, in nanoseconds from the start of slot 0: the
/// arithmetic, pure, apart from any clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct Slots {
    pub every_ns: u64,
    pub slip_ns: u64,
    pub seed: u64,
}

/// Where the next run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct Next {
    /// Its slot.
    pub slot: u64,
    /// When it was planned to start: its slot plus its slip.
    pub planned_ns: u128,
    /// When it starts: the planned time, or at once when the previous run overran it.
    pub start_ns: u128,
    /// Slots passed over without a run since the previous one (an overrun, or a schedule
    /// stopped and resumed).
    pub skipped: u64,
}

/// SplitMix64's finaliser: a well-mixed 64-bit value of each (seed, slot).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Slots {
    /// The start of slot `k`.
    #[doc(hidden)]
    pub fn slot(&self, k: u64) -> u128 {
        u128::from(k) * u128::from(self.every_ns)
    }

    /// Slot `k`'s slip: uniform in `[0, slip)`, a function of the seed and `k` alone.
    #[doc(hidden)]
    pub fn slip(&self, k: u64) -> u64 {
        let u = mix(self.seed ^ mix(k));
        ((u128::from(u) * u128::from(self.slip_ns)) >> 64) as u64
    }

    /// The next run after the one in slot `previous` (None: the first), when the earliest it
    /// may start is `free_ns` (the previous run's end, or now).
    #[doc(hidden)]
    pub fn next(&self, previous: Option<u64>, free_ns: u128) -> Next {
        let first = previous.map_or(0, |k| k + 1);
        let planned = self.slot(first) + u128::from(self.slip(first));
        if free_ns <= planned {
            return Next {
                slot: first,
                planned_ns: planned,
                start_ns: planned,
                skipped: 0,
            };
        }
        // Overrun: start right away, in the slot that holds this instant (never an earlier
        // one); the slots between were passed over whole.
        let holding = u64::try_from(free_ns / u128::from(self.every_ns.max(1))).unwrap_or(u64::MAX);
        let slot = holding.max(first);
        Next {
            slot,
            planned_ns: self.slot(slot) + u128::from(self.slip(slot)),
            start_ns: free_ns,
            skipped: slot - first,
        }
    }
}

/// The plan line of a schedule's results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Plan {
    pub(crate) schema: String,
    /// `tcp`, `udp`, `probe` or `latency`.
    pub(crate) command: String,
    /// The command's arguments, without the schedule's and the output's flags.
    pub(crate) arguments: Vec<String>,
    pub(crate) every_seconds: f64,
    /// `--count`: the most runs.
    pub(crate) count: Option<u64>,
    /// `--until`: no run starts after it, RFC 3339.
    pub(crate) until: Option<String>,
    pub(crate) slip_seconds: f64,
    /// The seed of the slips.
    pub(crate) seed: u64,
    /// Where the seed came from: `--seed` or `os`.
    pub(crate) seed_source: String,
    /// The start of slot 0, RFC 3339 (ns).
    pub(crate) start: String,
}

impl RunsPlan for Plan {
    const SCHEMA: &'static str = "wirespeed.schedule-runs.v1";
    fn schema(&self) -> &str {
        &self.schema
    }
}

/// One run, as the results file records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct RunRecord {
    /// 1, 2, ... in the order the runs started.
    pub(crate) run: u64,
    pub(crate) slot: u64,
    /// Slots passed over without a run before this one.
    pub(crate) skipped_slots: u64,
    /// The slot's start plus its slip, RFC 3339.
    pub(crate) scheduled: String,
    pub(crate) started: String,
    pub(crate) ended: String,
    /// The headline figure (`headline_unit` of the summary), when the run measured it.
    pub(crate) headline: Option<f64>,
    /// Why the run failed or is partial.
    pub(crate) error: Option<String>,
    /// The run's whole document, as the command's `--json` prints it.
    pub(crate) document: Option<serde_json::Value>,
}

/// What one run of the command produced.
pub(crate) struct RunOutput {
    /// Its document, as the command's `--json` prints it.
    pub(crate) document: serde_json::Value,
    /// The headline figure, in the job's unit.
    pub(crate) headline: Option<f64>,
    /// Why the run is partial or failed, if it is.
    pub(crate) failure: Option<String>,
}

/// The unit of a job's headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[doc(hidden)]
pub enum Unit {
    /// bit/s, shown with `-f`.
    BitsPerSecond,
    /// Milliseconds.
    Milliseconds,
}

/// A command as the schedule runs it.
pub(crate) struct Job<'a> {
    /// `tcp`, `udp`, `probe`, `latency`.
    pub(crate) command: &'static str,
    /// The command's flag for the number of runs (`--count`; `--max-runs` for probe, whose
    /// `--count` is probes per size).
    pub(crate) count_flag: &'static str,
    /// The command's own `--seed`, which seeds the slips too.
    pub(crate) seed: Option<u64>,
    /// What the headline figure is ("received rate").
    pub(crate) headline: &'static str,
    pub(crate) unit: Unit,
    pub(crate) output: &'a OutputArgs,
    /// One run of the test.
    pub(crate) run: &'a mut dyn FnMut() -> anyhow::Result<RunOutput>,
}

/// The schedule's summary, the `result` of `wirespeed.schedule.v1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[doc(hidden)]
pub struct ScheduleResult {
    pub command: String,
    pub results_file: String,
    /// Runs recorded in the file (those of earlier invocations included).
    pub runs: u64,
    /// Of those, runs that failed or are partial.
    pub failed: u64,
    /// Slots passed over without a run.
    pub skipped_slots: u64,
    pub headline: String,
    pub headline_unit: Unit,
    pub headline_min: Option<f64>,
    pub headline_median: Option<f64>,
    pub headline_max: Option<f64>,
    /// Why the schedule ended: `count`, `until` or `interrupted`.
    pub ended_by: String,
    /// Each run without its document.
    pub run_list: Vec<RunRecord>,
    #[serde(skip)]
    pub rate_format: RateFormat,
}

/// `--every ... --metrics-file`: the schedule's counts and its headline figure's spread.
impl crate::common::metrics::Metrics for ScheduleResult {
    fn metrics(&self, m: &mut crate::common::metrics::Exposition) {
        let job = [("command", self.command.as_str())];
        m.gauge(
            "runs",
            "runs recorded in the results file",
            &job,
            self.runs as f64,
        );
        m.gauge(
            "failed_runs",
            "runs that failed or are partial",
            &job,
            self.failed as f64,
        );
        m.gauge(
            "skipped_slots",
            "slots passed over without a run",
            &job,
            self.skipped_slots as f64,
        );
        let (name, factor) = match self.headline_unit {
            Unit::BitsPerSecond => ("headline_bits_per_second", 1.0),
            Unit::Milliseconds => ("headline_seconds", 1e-3),
        };
        for (statistic, v) in [
            ("min", self.headline_min),
            ("median", self.headline_median),
            ("max", self.headline_max),
        ] {
            m.maybe(
                name,
                "the runs' headline figure (named by the headline label), per statistic",
                &[
                    ("command", self.command.as_str()),
                    ("headline", self.headline.as_str()),
                    ("statistic", statistic),
                ],
                v.map(|v| v * factor),
            );
        }
    }
}

fn format_figure(unit: Unit, value: f64, format: RateFormat) -> String {
    match unit {
        Unit::BitsPerSecond => format.format(value),
        Unit::Milliseconds => format!("{} ms", wirespeed_model::units::significant(value, 4)),
    }
}

impl Render for ScheduleResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let f = |v: Option<f64>| {
            v.map_or("-".to_string(), |v| {
                format_figure(self.headline_unit, v, self.rate_format)
            })
        };
        writeln!(
            out,
            "schedule of {}: {} run(s), {} failed, {} slot(s) skipped; saved in {}",
            self.command, self.runs, self.failed, self.skipped_slots, self.results_file
        )?;
        writeln!(
            out,
            "{}: min {}, median {}, max {}",
            self.headline,
            f(self.headline_min),
            f(self.headline_median),
            f(self.headline_max)
        )
    }
}

/// The time `ns` after `start`, RFC 3339 to the microsecond.
#[doc(hidden)]
pub fn at(start: SystemTime, ns: u128) -> SystemTime {
    start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

#[doc(hidden)]
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_micros(t).to_string()
}

/// Slot 0 starts on a whole microsecond, the precision every record is written at, so that a
/// record's scheduled time read back is never before its slot.
#[doc(hidden)]
pub fn whole_microseconds(t: SystemTime) -> SystemTime {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_micros()).ok())
        .map_or(t, |us| SystemTime::UNIX_EPOCH + Duration::from_micros(us))
}

/// Nanoseconds from `start` to `t` (0 if before).
fn since(start: SystemTime, t: SystemTime) -> u128 {
    t.duration_since(start).map_or(0, |d| d.as_nanos())
}

/// `--until`: an RFC 3339 UTC time or a duration from `now`.
#[doc(hidden)]
pub fn parse_until(text: &str, now: SystemTime) -> anyhow::Result<SystemTime> {
    if let Ok(d) = parse_duration(text) {
        return Ok(now + d);
    }
    humantime::parse_rfc3339_weak(text.trim_end_matches('Z')).map_err(|_| {
        anyhow::anyhow!(
            "--until {text} is neither an RFC 3339 UTC time nor a duration: give e.g. --until 2026-11-25T20:00:00Z or --until 2h"
        )
    })
}

/// The words of this command line after the command's name, without the schedule's flags
/// (and their values) and the output's: what the plan records as the command's arguments.
#[doc(hidden)]
pub fn command_words(argv: &[String], count_flag: &str) -> Vec<String> {
    let schedule = [
        "--every",
        count_flag,
        "--until",
        "--slip",
        "--results",
        "--resume",
    ];
    let output_with_value = ["--format", "-f", "--metrics-file"];
    let output_alone = ["--json", "-J"];
    let mut words = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let w = argv[i].as_str();
        let name = w.split_once('=').map_or(w, |(n, _)| n);
        if schedule.contains(&name) || output_with_value.contains(&name) {
            // `--flag value` takes the next word too; `--flag=value` is one word.
            i += if w.contains('=') { 1 } else { 2 };
            continue;
        }
        if output_alone.contains(&w) || (w.starts_with("-f") && !w.starts_with("--") && w.len() > 2)
        {
            i += 1;
            continue;
        }
        words.push(argv[i].clone());
        i += 1;
    }
    words
}

/// A schedule's state: the plan, the file, the runs so far.
struct State {
    plan: Plan,
    slots: Slots,
    start: SystemTime,
    until: Option<SystemTime>,
    file: RunsFile,
    records: Vec<RunRecord>,
}

/// Checks the flags and opens (or resumes) the results file.
fn open(args: &ScheduleArgs, job: &Job<'_>, words: Vec<String>) -> anyhow::Result<State> {
    if let Some(path) = &args.resume {
        if args.runs.is_some() {
            bail!(
                "{} is in the plan of {}: drop it beside --resume (the runs recorded there count toward it)",
                job.count_flag,
                path.display()
            );
        }
        let resumed = RunsFile::resume::<Plan, RunRecord>(path)?;
        if let Some(repair) = &resumed.repair {
            eprintln!("wirespeed: warning: {repair}");
        }
        let plan = resumed.plan;
        if plan.command != job.command {
            bail!(
                "{} is a schedule of `wirespeed {}`: resume it with that command",
                path.display(),
                plan.command
            );
        }
        if plan.arguments != words {
            let mut again = vec![plan.command.clone()];
            again.extend(plan.arguments.iter().cloned());
            again.extend(crate::common::interrupt::output_words(job.output));
            again.extend(["--resume".into(), crate::common::interrupt::path_word(path)]);
            bail!(
                "--resume {}: the arguments differ from the schedule's plan; give the same ones: {}",
                path.display(),
                crate::common::interrupt::command_line(&again)
            );
        }
        let start = humantime::parse_rfc3339(&plan.start)
            .with_context(|| format!("{}: the plan's start is not a time", path.display()))?;
        let until = plan
            .until
            .as_deref()
            .map(humantime::parse_rfc3339)
            .transpose()
            .with_context(|| format!("{}: the plan's --until is not a time", path.display()))?;
        let slots = slots_of(&plan)?;
        return Ok(State {
            plan,
            slots,
            start,
            until,
            file: resumed.file,
            records: resumed.runs,
        });
    }
    let every = args.every.expect("active without --resume has --every");
    if every < MIN_EVERY || every > MAX_SPAN {
        bail!(
            "--every {}: give 1 s to 366 days between runs (e.g. --every 10m)",
            format_seconds(every.as_secs_f64())
        );
    }
    let now = SystemTime::now();
    let until = args
        .until
        .as_deref()
        .map(|t| parse_until(t, now))
        .transpose()?;
    match (args.runs, until) {
        (None, None) => bail!(
            "--every needs a bound: add {} N (runs) or --until TIME (e.g. --until 1h)",
            job.count_flag
        ),
        (Some(_), Some(_)) => bail!(
            "{} and --until both bound the schedule: give one of them",
            job.count_flag
        ),
        (Some(n), None) if n == 0 || n > MAX_RUNS => {
            bail!("{} {n}: give 1 to {MAX_RUNS} runs", job.count_flag)
        }
        (None, Some(u)) => {
            let span = u.duration_since(now).map_err(|_| {
                anyhow::anyhow!(
                    "--until {} is in the past: give a later time or a duration (--until 1h)",
                    args.until.as_deref().unwrap_or_default()
                )
            })?;
            if span > MAX_SPAN {
                bail!("--until is more than 366 days away: give a nearer time");
            }
            if span.as_nanos() / every.as_nanos().max(1) >= u128::from(MAX_RUNS) {
                bail!(
                    "--until and --every plan more than {MAX_RUNS} runs: give a longer --every or a nearer --until"
                );
            }
        }
        _ => {}
    }
    let slip = args.slip.unwrap_or_default();
    if slip > every {
        bail!(
            "--slip {} exceeds --every {}: give a slip at most the interval",
            format_seconds(slip.as_secs_f64()),
            format_seconds(every.as_secs_f64())
        );
    }
    let (seed, seed_source) = match job.seed {
        Some(s) => (s, "--seed"),
        None => {
            let mut b = [0u8; 8];
            wirespeed_net::auth::random_bytes(&mut b).context("cannot draw a seed for --slip")?;
            (u64::from_le_bytes(b), "os")
        }
    };
    let path = match &args.results {
        Some(p) => p.clone(),
        None => {
            let stamp = humantime::format_rfc3339_seconds(now)
                .to_string()
                .replace(['-', ':'], "");
            let p = PathBuf::from(format!("{}-schedule-{stamp}.jsonl", job.command));
            eprintln!(
                "wirespeed: the runs are saved in {} (--results names another file)",
                p.display()
            );
            p
        }
    };
    crate::common::output::check_output_file("--results", &path)?;
    let start = whole_microseconds(now);
    let plan = Plan {
        schema: Plan::SCHEMA.into(),
        command: job.command.into(),
        arguments: words,
        every_seconds: every.as_secs_f64(),
        count: args.runs,
        until: until.map(rfc3339),
        slip_seconds: slip.as_secs_f64(),
        seed,
        seed_source: seed_source.into(),
        start: rfc3339(start),
    };
    let slots = slots_of(&plan)?;
    let file = RunsFile::create(&path, &plan)?;
    Ok(State {
        plan,
        slots,
        start,
        // What the file says, so that a resumed schedule ends at the same instant.
        until: until.map(|u| humantime::parse_rfc3339(&rfc3339(u)).unwrap_or(u)),
        file,
        records: Vec::new(),
    })
}

fn slots_of(plan: &Plan) -> anyhow::Result<Slots> {
    let ns = |s: f64| (s * 1e9).round();
    let every = ns(plan.every_seconds);
    let slip = ns(plan.slip_seconds);
    if !(every >= 1e9 && every <= MAX_SPAN.as_nanos() as f64 && slip >= 0.0 && slip <= every) {
        bail!(
            "the schedule's plan has an --every or --slip out of range: start again with --results"
        );
    }
    Ok(Slots {
        every_ns: every as u64,
        slip_ns: slip as u64,
        seed: plan.seed,
    })
}

/// Sleeps until `t`, looking at the Ctrl-C flag; false if it was set.
fn wait_until(t: SystemTime) -> bool {
    loop {
        if crate::common::interrupt::requested() {
            return false;
        }
        match t.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(WAIT_POLL)),
            _ => return true,
        }
    }
}

/// Runs `job` on the schedule of `args` (the command checked `args.active()`), then prints
/// the summary; an error if any run failed or the schedule was interrupted.
pub(crate) fn run(args: &ScheduleArgs, job: Job<'_>) -> anyhow::Result<()> {
    let argv: Vec<String> = std::env::args().skip(2).collect();
    let words = command_words(&argv, job.count_flag);
    crate::common::interrupt::watch();
    let mut state = open(args, &job, words)?;
    let human = !job.output.json;
    let format = job.output.rate_format;
    let ended_by = loop {
        let done = state.records.len() as u64;
        if state.plan.count.is_some_and(|n| done >= n) {
            break "count";
        }
        let previous = state.records.last().map(|r| r.slot);
        let free = since(state.start, SystemTime::now());
        let next = state.slots.next(previous, free);
        let start_at = at(state.start, next.start_ns);
        if state.until.is_some_and(|u| start_at > u) {
            break "until";
        }
        if !wait_until(start_at) {
            break "interrupted";
        }
        let started = SystemTime::now();
        let outcome = (job.run)();
        let ended = SystemTime::now();
        if crate::common::interrupt::requested() {
            // The run in flight was cut short: not recorded; --resume runs its slot again.
            break "interrupted";
        }
        let (document, headline, error) = match outcome {
            Ok(o) => (Some(o.document), o.headline, o.failure),
            Err(e) => (None, None, Some(format!("{e:#}"))),
        };
        let record = RunRecord {
            run: done + 1,
            slot: next.slot,
            skipped_slots: next.skipped,
            scheduled: rfc3339(at(state.start, next.planned_ns)),
            started: rfc3339(started),
            ended: rfc3339(ended),
            headline,
            error,
            document,
        };
        state.file.append(&record)?;
        if human {
            print_line(&record, state.plan.count, job.unit, format)?;
        }
        state.records.push(record);
    };
    finish(state, &job, ended_by)
}

fn print_line(r: &RunRecord, count: Option<u64>, unit: Unit, format: RateFormat) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let of = count.map_or(String::new(), |n| format!("/{n}"));
    let what = match (&r.error, r.headline) {
        (Some(e), _) => format!("failed: {e}"),
        (None, Some(v)) => format_figure(unit, v, format),
        (None, None) => "-".into(),
    };
    let mut notes = Vec::new();
    if r.skipped_slots > 0 {
        notes.push(format!("{} slot(s) skipped", r.skipped_slots));
    }
    // `serve --exclusive`: the run waited for another client's test.
    if let Some(q) = r
        .document
        .as_ref()
        .and_then(|d| d["result"]["queued_seconds"].as_f64())
        .filter(|q| *q > 0.0)
    {
        notes.push(format!("waited {q:.1} s for the agent"));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    writeln!(out, "run {}{of}  {}  {what}{notes}", r.run, r.started)?;
    out.flush()
}

/// The summary of the runs in the file.
fn summary(state: &State, job: &Job<'_>, ended_by: &str) -> ScheduleResult {
    let mut figures: Vec<f64> = state
        .records
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| r.headline)
        .filter(|v| v.is_finite())
        .collect();
    figures.sort_by(f64::total_cmp);
    let median = (!figures.is_empty()).then(|| {
        let n = figures.len();
        if n % 2 == 1 {
            figures[n / 2]
        } else {
            (figures[n / 2 - 1] + figures[n / 2]) / 2.0
        }
    });
    ScheduleResult {
        command: job.command.into(),
        results_file: state.file.path().display().to_string(),
        runs: state.records.len() as u64,
        failed: state.records.iter().filter(|r| r.error.is_some()).count() as u64,
        skipped_slots: state.records.iter().map(|r| r.skipped_slots).sum(),
        headline: job.headline.into(),
        headline_unit: job.unit,
        headline_min: figures.first().copied(),
        headline_median: median,
        headline_max: figures.last().copied(),
        ended_by: ended_by.into(),
        run_list: state
            .records
            .iter()
            .map(|r| RunRecord {
                document: None,
                ..r.clone()
            })
            .collect(),
        rate_format: job.output.rate_format,
    }
}

fn finish(state: State, job: &Job<'_>, ended_by: &str) -> anyhow::Result<()> {
    let result = summary(&state, job, ended_by);
    let (runs, failed) = (result.runs, result.failed);
    let path = state.file.path().to_path_buf();
    let doc = Document::new("schedule", state.plan.clone(), result);
    if ended_by == "interrupted" {
        let what = format!(
            "interrupted after {runs} run(s); every finished run is saved in {}",
            path.display()
        );
        crate::common::interrupt::print_partial(job.output, &doc, &what)
            .context("writing the result")?;
        return Err(crate::common::interrupt::Interrupted {
            message: format!("{runs} run(s) are saved in {}", path.display()),
            resume: Some(resume_command(&state.plan, job.output, &path)),
        }
        .into());
    }
    crate::common::output::print(job.output, &doc).context("writing the result")?;
    if failed > 0 {
        return Err(Exit::partial(format!(
            "{failed} of {runs} scheduled run(s) failed (their errors are recorded in {})",
            path.display()
        ))
        .into());
    }
    Ok(())
}

fn resume_command(plan: &Plan, output: &OutputArgs, path: &Path) -> String {
    let mut words = vec![plan.command.clone()];
    words.extend(plan.arguments.iter().cloned());
    words.extend(crate::common::interrupt::output_words(output));
    words.extend(["--resume".into(), crate::common::interrupt::path_word(path)]);
    crate::common::interrupt::command_line(&words)
}
