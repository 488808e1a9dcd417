//! The series itself: the agents (the user's, or in-process ones on loopback), the plan
//! (resumed from its results file, or the flags'), each test the plan lacks run by
//! `wirespeed_net::load::controller` and appended to the file as it ends, and the document with
//! its warnings and verdicts. It prints nothing: the progress bar it advances is the caller's.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail};
use wirespeed_model::load::LengthDeck;
use wirespeed_net::agent::AgentHandle;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::control::DEFAULT_PORT;
use wirespeed_net::load::controller::{self, LoadConfig, Sink};
use wirespeed_net::{Agent, AgentConfig};
use wirespeed_report::{Document, Finding, Severity};
use wirespeed_sim::LengthMix;

use super::analysis::{rows, unmarked};
use super::result::{HostRecord, Lengths, LoadPlan, LoadResult, TestRecord, mix_spec};
use super::{AgentSource, Config, PlanSource};
use crate::common::progress::Progress;
use crate::common::runs_file::RunsFile;

/// The deck the generators deal from.
#[doc(hidden)]
pub fn deck(mix: &LengthMix) -> anyhow::Result<LengthDeck> {
    let deck = match mix {
        LengthMix::Fixed { bytes } => LengthDeck::from_counts(&[(*bytes, 1)]),
        LengthMix::Ratio {
            short,
            long,
            short_count,
            long_count,
        } => LengthDeck::from_counts(&[(*short, *short_count), (*long, *long_count)]),
        LengthMix::Weighted { lengths } => LengthDeck::from_weights(lengths),
    };
    deck.with_context(|| format!("--lengths {}", mix_spec(mix)))
}

#[doc(hidden)]
pub fn agent_address(text: &str) -> anyhow::Result<SocketAddr> {
    if text.contains('%') {
        bail!(
            "--agent {text}: a zone names a link of this host, which the other agents cannot use to reach it; give the agents routable addresses"
        );
    }
    crate::common::host::resolve_one(text, DEFAULT_PORT, "--agent")
}

/// The agents of the run: the user's, or in-process ones on loopback (stopped on drop).
pub(crate) struct Agents {
    pub(crate) addrs: Vec<SocketAddr>,
    pub(crate) local: Vec<AgentHandle>,
}

impl Drop for Agents {
    fn drop(&mut self) {
        for h in &self.local {
            h.stop();
        }
    }
}

pub(crate) fn agents(source: &AgentSource) -> anyhow::Result<Agents> {
    let count = match source {
        AgentSource::Remote(addrs) => {
            return Ok(Agents {
                addrs: addrs.clone(),
                local: Vec::new(),
            });
        }
        AgentSource::Local(n) => *n,
    };
    let mut out = Agents {
        addrs: Vec::new(),
        local: Vec::new(),
    };
    for _ in 0..count {
        let a = Agent::bind(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            AgentConfig::default(),
        )
        .context("starting an in-process agent on loopback")?;
        out.addrs.push(a.local_addr()?);
        let (h, _thread) = a.spawn()?;
        out.local.push(h);
    }
    Ok(out)
}

/// A series ready to run: its plan, the tests a resumed file holds, and where tests go.
pub(crate) struct Series {
    pub(crate) plan: LoadPlan,
    pub(crate) done: Vec<TestRecord>,
    pub(crate) file: Option<RunsFile>,
    /// What was repaired in a resumed results file.
    pub(crate) repair: Option<String>,
}

/// The series: resumed from its results file (whose plan is checked against the agents
/// there are, as the flags' was), or the config's plan with its results file created.
pub(crate) fn series(config: &Config, agents: &Agents) -> anyhow::Result<Series> {
    Ok(match &config.plan {
        PlanSource::Resume(path) => {
            let resumed = RunsFile::resume::<LoadPlan, TestRecord>(path)?;
            validate(&resumed.plan, agents.addrs.len())?;
            Series {
                plan: resumed.plan,
                done: resumed.runs,
                file: Some(resumed.file),
                repair: resumed.repair,
            }
        }
        PlanSource::New { plan, results } => Series {
            file: results
                .as_deref()
                .map(|p| RunsFile::create(p, plan))
                .transpose()?,
            plan: plan.clone(),
            done: Vec::new(),
            repair: None,
        },
    })
}

/// What a series measured: its document, and whether a signal cut it short.
#[derive(Debug)]
pub struct Measured {
    pub doc: Document<LoadPlan, LoadResult>,
    pub interrupted: bool,
    /// The tests finished, resumed ones included.
    pub finished: usize,
}

/// Runs the tests the series lacks and makes the document.
pub(crate) fn measure(
    config: &Config,
    agents: &Agents,
    mut series: Series,
    bar: &Progress,
) -> anyhow::Result<Measured> {
    let interrupted = run_tests(&mut series, agents, &config.auth, config.timeout, bar)?;
    bar.finish();
    let Series {
        plan,
        done,
        file,
        repair,
    } = series;
    let finished = done.len();
    let model_ns = config.model_time.map(super::saturating_ns);
    let rows = rows(&plan, &done, model_ns)?;
    let result = LoadResult {
        results_file: file.map(|f| f.path().display().to_string()),
        rows,
        rate_format: config.rate_format,
    };
    let mut doc = Document::new("load", plan, result);
    for warning in doc.result.warnings(!agents.local.is_empty()) {
        doc.warning(&warning);
    }
    // The results file's own note of what it repaired on resume, a sentence of its making.
    doc.extend(repair.map(|r| Finding::plain(Severity::Warning, "results_file_repaired", r)));
    for warning in unmarked(doc.parameters.tos, &done) {
        doc.warning(&warning);
    }
    for verdict in doc.result.verdicts() {
        doc.verdict(&verdict);
    }
    Ok(Measured {
        doc,
        interrupted,
        finished,
    })
}

/// Each test the plan lacks, in plan order, appended as it ends; true when a signal stopped
/// the series before its end.
fn run_tests(
    series: &mut Series,
    agents: &Agents,
    auth: &Option<AuthKey>,
    timeout: Duration,
    bar: &Progress,
) -> anyhow::Result<bool> {
    let plan = &series.plan;
    for (hosts, mix) in to_do(plan, &series.done) {
        if crate::common::interrupt::requested() {
            return Ok(true);
        }
        bar.set_message(format!("{hosts} hosts x {mix}"));
        let cfg = LoadConfig {
            agents: agents.addrs[..hosts].to_vec(),
            auth: auth.clone(),
            schedule: plan.schedule,
            deck: deck(&mix.0)?,
            rate_bits_per_second: plan.rate_bits_per_second,
            sink: plan.sink_host.map_or(Sink::Own, |h| Sink::Host(h - 1)),
            seed: plan.seed,
            idle_timeout: timeout,
            clock_probes: 8,
            raw: plan.raw.clone(),
            tos: plan.tos,
        };
        let Some(outcome) = run_test(cfg, &crate::common::interrupt::requested)? else {
            return Ok(true);
        };
        let record = TestRecord {
            hosts,
            lengths: mix.clone(),
            complete: outcome.complete,
            agents: outcome
                .agents
                .into_iter()
                .map(|a| HostRecord {
                    agent: a.agent.to_string(),
                    clock: a.clock,
                    report: a.report,
                    error: a.error,
                })
                .collect(),
        };
        if let Some(f) = &mut series.file {
            f.append(&record)?;
        }
        series.done.push(record);
        bar.inc();
    }
    Ok(false)
}

/// A plan the agents can run, checked before any test (and before a new results file).
#[doc(hidden)]
pub fn validate(plan: &LoadPlan, agents: usize) -> anyhow::Result<()> {
    plan.schedule
        .validate()
        .context("--settle/--transmit/--measure/--cooldown")?;
    let largest = plan.hosts.iter().copied().max().unwrap_or(0);
    if largest > agents {
        bail!(
            "--hosts goes up to {largest} but there are {agents} agents: add --agent (or raise --local)"
        );
    }
    if let Some(h) = plan.sink_host {
        let smallest = plan.hosts.iter().copied().min().unwrap_or(0);
        if h > smallest {
            bail!(
                "--sink {h}: the sink must be a host of every test, 1 to {smallest} (the smallest in --hosts)"
            );
        }
    }
    if plan.raw.is_some() && plan.sink_host.is_some() {
        bail!(
            "--raw sends each host's frames to its own address: leave out --sink (or use --sink self)"
        );
    }
    if let Some(r) = plan.rate_bits_per_second
        && r <= 0.0
    {
        bail!(
            "--rate 0: give a positive offered load per host (such as 2M), or leave it out to saturate"
        );
    }
    for m in &plan.lengths {
        deck(&m.0)?;
    }
    Ok(())
}

/// The plan's tests that `done` does not hold yet, in plan order (each mix, then each host
/// count), matched by host count and length mix.
#[doc(hidden)]
pub fn to_do<'p>(plan: &'p LoadPlan, done: &[TestRecord]) -> Vec<(usize, &'p Lengths)> {
    plan.lengths
        .iter()
        .flat_map(|m| plan.hosts.iter().map(move |&h| (h, m)))
        .filter(|(h, m)| !done.iter().any(|t| t.hosts == *h && t.lengths == **m))
        .collect()
}

/// Runs one test in a thread of its own and waits for it, asking `stop` every 50 ms: on Ctrl-C
/// the test in flight is abandoned (its agents see the control connection close when this
/// process ends) and `None` comes back.
fn run_test(
    cfg: LoadConfig,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<Option<controller::LoadOutcome>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("load-test".into())
        .spawn(move || {
            let _ = tx.send(controller::run(&cfg));
        })
        .context("starting the test's thread")?;
    loop {
        if stop() {
            return Ok(None);
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(outcome) => return Ok(Some(outcome?)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                bail!("the test's thread ended without an outcome (a panic: please report it)")
            }
        }
    }
}
