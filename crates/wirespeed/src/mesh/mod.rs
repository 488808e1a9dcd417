//! `wirespeed mesh`: every ordered pair of a fleet of agents, a TCP test and latency probes
//! each, scheduled as a round-robin tournament so that no agent is in two tests at once (issue
//! 19). The controller asks each test's source agent to test the destination agent
//! (`wirespeed_net::mesh`, which follows the agents' traffic rules); the schedule, the
//! prediction of its length and the outlier analysis are `wirespeed_model::mesh`.

mod brief;
pub(crate) mod evidence;
pub(crate) mod html;
mod metrics;
mod sampling;
mod text;
pub(crate) mod verdicts;
mod wait;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use wirespeed_model::RateFormat;
use wirespeed_model::mesh::faults::{Fault, HostEvidence};
use wirespeed_model::mesh::{
    self as model, Analysis, Finding, PairMeasure, TestTiming, Thresholds,
};
use wirespeed_model::units::{format_seconds, parse_duration};
use wirespeed_net::agent::AgentHandle;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::control::DEFAULT_PORT;
use wirespeed_net::control::mesh::{
    MAX_PROBE_GAP_SECONDS, MAX_PROBES, MESH_VERSION, MIN_PROBE_GAP_SECONDS, PairResult, PairTest,
};
use wirespeed_net::{Agent, AgentConfig};
use wirespeed_report::Document;
use wirespeed_report::{Finding as Said, Severity};

use crate::common::flags::KeyArgs;
use crate::common::output::OutputArgs;
use crate::common::runs_file::{RunsFile, RunsPlan};

/// The schema of a mesh results file's plan line.
pub(crate) const RUNS_SCHEMA: &str = "wirespeed.mesh-runs.v1";

/// What a test costs beyond its measuring time (connections, handshakes, the destination's
/// consent, the results exchange), as measured on loopback and a lab (docs/mesh.md).
pub(crate) const OVERHEAD_SECONDS: f64 = 0.15;

/// The probes' gap when `--probe-gap` is not given (the Job of `deploy kubernetes` too).
pub(crate) const DEFAULT_PROBE_GAP: &str = "10ms";

/// The most agents one mesh takes (a mesh of N has N(N-1) tests: 1000 agents is a million).
pub(crate) const MAX_AGENTS: usize = 1000;
/// The most tests one agent may be in at once (`--concurrency`).
pub(crate) const MAX_CONCURRENCY: usize = 64;
/// The most tests the controller runs at once (one thread each): N/2 x `--concurrency`.
pub(crate) const MAX_PARALLEL_TESTS: usize = 1024;

#[derive(Debug, Args)]
pub(crate) struct MeshArgs {
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

/// One agent of the mesh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AgentEntry {
    /// A short name (the file's, or the address).
    pub(crate) name: String,
    /// Its control address.
    pub(crate) address: SocketAddr,
}

/// Everything that fixes a mesh: the results file's first line and the document's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MeshPlan {
    pub(crate) schema: String,
    pub(crate) agents: Vec<AgentEntry>,
    pub(crate) tcp_seconds: f64,
    pub(crate) probes: u32,
    pub(crate) probe_gap_seconds: f64,
    pub(crate) concurrency: usize,
    /// The agents were in-process on loopback (`--local`).
    #[serde(default)]
    pub(crate) local: bool,
    /// The TCP tests' TOS byte (`-S`), at both ends of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tos: Option<u8>,
    /// A sample of the pairs (`--pairs`, `--seed`) instead of every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sample: Option<sampling::Sample>,
}

impl RunsPlan for MeshPlan {
    const SCHEMA: &'static str = RUNS_SCHEMA;
    fn schema(&self) -> &str {
        &self.schema
    }
}

/// What each test of a mesh costs by plan: `-t`, the probes, and beyond them the set-up and
/// results ([`OVERHEAD_SECONDS`]) and the grace the receiver counts after `-t`.
pub(crate) fn test_timing(tcp_seconds: f64, probes: u32, probe_gap_seconds: f64) -> TestTiming {
    TestTiming {
        tcp_seconds,
        latency_seconds: f64::from(probes) * probe_gap_seconds,
        overhead_seconds: OVERHEAD_SECONDS + wirespeed_net::spec::NO_DRAIN_GRACE.as_secs_f64(),
    }
}

/// The one prediction of how long the tests of `slots` take (the mesh's, and the deadline of
/// `deploy kubernetes`'s Job): the critical path of the dispatch ([`model::critical_path`])
/// when each test lasts its plan and `tail(pair)`, the time its data still arrived after
/// `-t` and the grace (the destination waits for it: the measured figure after a run, 0
/// before it, [`wirespeed_net::spec::NO_DRAIN_CAP`] for a bound).
pub(crate) fn predict(
    slots: &[Vec<model::Pair>],
    timing: &TestTiming,
    tail: impl Fn(model::Pair) -> f64,
) -> f64 {
    let per_test = timing.per_test_seconds();
    model::critical_path(slots, |_, pair| per_test + tail(pair))
}

impl MeshPlan {
    fn timing(&self) -> TestTiming {
        test_timing(self.tcp_seconds, self.probes, self.probe_gap_seconds)
    }

    fn slots(&self) -> Vec<Vec<model::Pair>> {
        model::slots(&self.rounds(), self.concurrency)
    }
}

/// One finished test: a line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PairRecord {
    /// Source agent index.
    pub(crate) source: usize,
    /// Destination agent index.
    pub(crate) destination: usize,
    /// The slot (round) it ran in, from 0, in this run of the command.
    pub(crate) slot: usize,
    /// When the schedule planned it, seconds from this run's start.
    pub(crate) planned_start_seconds: f64,
    pub(crate) planned_end_seconds: f64,
    /// When the controller asked the source and when the answer came, seconds from this
    /// run's start.
    pub(crate) start_seconds: f64,
    pub(crate) end_seconds: f64,
    /// The same two moments, seconds since the Unix epoch (the controller's clock).
    pub(crate) start_unix_seconds: f64,
    pub(crate) end_unix_seconds: f64,
    /// What the source agent measured.
    pub(crate) result: Option<PairResult>,
    /// Why it has no result (a refusal, an unreachable agent), verbatim.
    pub(crate) error: Option<String>,
}

impl PairRecord {
    fn rate(&self) -> Option<f64> {
        self.result.as_ref().and_then(|r| r.tcp_bits_per_second)
    }

    /// The pair's best round trip: the path's idle delay, to which queues and busy CPUs only
    /// add. The median of a few probes is not a property of the path: in a 16-host lab of
    /// identical links under its own load, 10 of 240 medians sat 1-1.8 ms above the others
    /// (probes waiting for a busy core) and were named "high round trip"; their minimums were
    /// within 0.9 ms of the fleet's.
    fn rtt(&self) -> Option<f64> {
        self.result
            .as_ref()
            .and_then(|r| r.latency.as_ref())
            .and_then(|l| l.min_seconds)
    }

    /// The destination's tail: how long the test's data still arrived after its counted time.
    fn tail(&self) -> Option<wirespeed_net::report::DrainReport> {
        self.result.as_ref().and_then(|r| r.tcp_drain)
    }

    /// The test's errors: the controller's, or the parts the source reported.
    fn problems(&self) -> Vec<String> {
        let mut p: Vec<String> = self.error.iter().cloned().collect();
        if let Some(r) = &self.result {
            p.extend(r.errors.iter().cloned());
        }
        p
    }
}

/// The most round trips the controller looks at a second time after the mesh.
pub(crate) const MAX_RECHECKS: usize = 32;

/// A second look at a figure the mesh would flag, after every test has ended, so that no
/// other test's traffic or load is beside it: a round trip's probes alone (no TCP test), or a
/// low rate's TCP test alone (no probes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Recheck {
    pub(crate) source: usize,
    pub(crate) destination: usize,
    /// When the controller asked and when the answer came, seconds from this run's start.
    pub(crate) start_seconds: f64,
    pub(crate) end_seconds: f64,
    /// A rate's second look: the TCP test's rate at the destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rate_bits_per_second: Option<f64>,
    /// A round trip's second look: the probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) latency: Option<wirespeed_net::control::mesh::PairLatency>,
    pub(crate) error: Option<String>,
    /// Whether it looked at the rate (else the round trip).
    pub(crate) rate: bool,
}

impl Recheck {
    fn is_of(&self, a: usize, b: usize) -> bool {
        (self.source, self.destination) == (a, b) || (self.source, self.destination) == (b, a)
    }

    fn best(&self) -> Option<f64> {
        self.latency.as_ref().and_then(|l| l.min_seconds)
    }
}

/// Both directions of one unordered pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PairFigures {
    pub(crate) a: usize,
    pub(crate) b: usize,
    pub(crate) a_to_b_bits_per_second: Option<f64>,
    pub(crate) b_to_a_bits_per_second: Option<f64>,
    /// (slower - faster) / faster: 0 equal, -1 one way carried nothing.
    pub(crate) asymmetry: Option<f64>,
    pub(crate) a_to_b_rtt_seconds: Option<f64>,
    pub(crate) b_to_a_rtt_seconds: Option<f64>,
}

/// The `mesh` document's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MeshResult {
    pub(crate) agents: Vec<AgentEntry>,
    /// Tests planned in all (N(N-1)) and finished with figures.
    pub(crate) tests_planned: usize,
    #[serde(default)]
    pub(crate) tests_failed: usize,
    /// Slots (rounds) this run scheduled, and how long the schedule says they take: each
    /// test its plan and its tail as measured (the time its data still arrived after `-t` and
    /// the grace, which the test waited for).
    pub(crate) slots: usize,
    pub(crate) predicted_seconds: f64,
    /// The same before the run: each test its plan alone.
    #[serde(default)]
    pub(crate) planned_seconds: f64,
    /// Tests whose round trip is not judged: their probes started right after a test of one
    /// of their agents whose data was still arriving at its cap (`rtt_behind_queue`).
    #[serde(default)]
    pub(crate) rtt_not_judged: usize,
    /// How long this run took.
    pub(crate) elapsed_seconds: f64,
    /// `rate_matrix_bits_per_second[source][destination]`.
    pub(crate) rate_matrix_bits_per_second: Vec<Vec<Option<f64>>>,
    /// The probes' best round trip, same layout.
    pub(crate) rtt_matrix_seconds: Vec<Vec<Option<f64>>>,
    pub(crate) pairs: Vec<PairFigures>,
    /// The hosts' medians and the latency figures (`wirespeed_model::mesh::analyse`).
    pub(crate) analysis: Analysis,
    /// The fleet's verdicts (`wirespeed_model::mesh::faults::judge`): each host judged by
    /// the best rate it reaches against the fleet's best-connected quarter (or its own link's
    /// capacity where known), a duplex mismatch by its signature and counters, then pairs.
    #[serde(default)]
    pub(crate) faults: Vec<Fault>,
    /// Each host's best test, bit/s (`None`: none finished).
    #[serde(default)]
    pub(crate) reach_bits_per_second: Vec<Option<f64>>,
    /// The fleet's yardstick: the upper quartile of the reaches (`None` under three hosts).
    #[serde(default)]
    pub(crate) yardstick_bits_per_second: Option<f64>,
    /// What was known of each host's own port beside its tests (link ceiling, collision and
    /// CRC counters over the mesh), and where it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) host_evidence: Vec<HostEvidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) host_evidence_source: Option<String>,
    /// Every test, in the order they finished.
    pub(crate) tests: Vec<PairRecord>,
    /// The second looks at the rates and round trips that the tests alone would have flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) rechecks: Vec<Recheck>,
    pub(crate) results_file: Option<String>,
    #[serde(skip, default = "default_format")]
    pub(crate) rate_format: RateFormat,
    #[serde(skip)]
    pub(crate) csv: bool,
    /// The text view's line on a sample (`--pairs`); the JSON has the sample in its parameters.
    #[serde(skip)]
    pub(crate) sample_line: Option<String>,
}

fn default_format() -> RateFormat {
    RateFormat::Adaptive
}

/// `HOST`, `HOST:PORT`, `[V6]:PORT` or `V6`, with every address a name resolves to.
fn resolve(text: &str, default_port: u16) -> anyhow::Result<Vec<SocketAddr>> {
    let host = crate::common::host::Host::parse(text, "agent")?;
    host.addresses(host.port().unwrap_or(default_port), "agent")
}

/// The agents named by `--agents` and `--agents-file`, in order.
fn named_agents(args: &MeshArgs) -> anyhow::Result<Vec<AgentEntry>> {
    let mut out = Vec::new();
    let mut add = |name: Option<&str>, spec: &str| -> anyhow::Result<()> {
        let addrs = resolve(spec, args.port)?;
        let many = addrs.len() > 1;
        for a in addrs {
            let name = match (name, many) {
                (Some(n), false) => n.to_string(),
                (Some(n), true) => format!("{n}/{}", a.ip()),
                (None, _) => a.to_string(),
            };
            out.push(AgentEntry { name, address: a });
        }
        Ok(())
    };
    for a in &args.agents {
        add(None, a).with_context(|| "--agents".to_string())?;
    }
    if let Some(path) = &args.agents_file {
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .with_context(|| format!("--agents-file {shown}: cannot read it"))?;
        if meta.len() > 4 << 20 {
            bail!(
                "--agents-file {shown}: {} bytes is too large for a list of agents (at most 4 MiB)",
                meta.len()
            );
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--agents-file {shown}: cannot read it"))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let r = match words.as_slice() {
                [spec] => add(None, spec),
                [name, spec] => add(Some(name), spec),
                _ => Err(anyhow::anyhow!(
                    "{} words; a line is HOST[:PORT] or NAME HOST[:PORT]",
                    words.len()
                )),
            };
            r.with_context(|| format!("{shown}:{}", i + 1))?;
        }
    }
    Ok(out)
}

/// In-process agents on loopback, stopped when dropped.
struct LocalAgents(Vec<AgentHandle>);

impl Drop for LocalAgents {
    fn drop(&mut self) {
        for h in &self.0 {
            h.stop();
        }
    }
}

fn local_agents(n: usize, key: &AuthKey) -> anyhow::Result<(Vec<AgentEntry>, LocalAgents)> {
    let mut entries = Vec::new();
    let mut handles = LocalAgents(Vec::new());
    for i in 0..n {
        let a = Agent::bind(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            AgentConfig {
                auth: Some(key.clone()),
                ..AgentConfig::default()
            },
        )
        .context("starting an in-process agent on loopback")?;
        entries.push(AgentEntry {
            name: format!("local{}", i + 1),
            address: a.local_addr()?,
        });
        let (h, _thread) = a.spawn()?;
        handles.0.push(h);
    }
    Ok((entries, handles))
}

fn random_key() -> anyhow::Result<AuthKey> {
    let mut k = [0u8; 32];
    wirespeed_net::auth::random_bytes(&mut k).context("drawing a key for the local agents")?;
    Ok(AuthKey::from_bytes(&k))
}

impl MeshArgs {
    /// The flags' own checks, before any agent is asked anything.
    fn check(&self) -> anyhow::Result<()> {
        self.brief.check(&self.output, &[])?;
        if self.brief.brief && self.csv {
            bail!("--brief prints one line of text and --csv a table: drop one of them");
        }
        if self.brief.brief && self.every.is_some() {
            bail!(
                "--every prints one line per run already: drop --brief (each mesh's whole document is in the results file)"
            );
        }
        let t = self.time.as_secs_f64();
        if !(wirespeed_net::spec::MIN_TEST_SECONDS..=3600.0).contains(&t) {
            bail!(
                "-t {} s is out of range: give each test 100ms to 1h (e.g. -t 2s)",
                t
            );
        }
        if self.probes > MAX_PROBES {
            bail!(
                "--probes {} is too many: at most {MAX_PROBES} per test",
                self.probes
            );
        }
        let gap = self.probe_gap.as_secs_f64();
        if !(MIN_PROBE_GAP_SECONDS..=MAX_PROBE_GAP_SECONDS).contains(&gap) {
            bail!("--probe-gap {gap} s is out of range: use 1ms to 1s (e.g. --probe-gap 10ms)");
        }
        if self.concurrency == 0 || self.concurrency > MAX_CONCURRENCY {
            bail!(
                "--concurrency {} is out of range: use 1 (no agent in two tests at once) to {MAX_CONCURRENCY}",
                self.concurrency
            );
        }
        if self.timeout < Duration::from_millis(100) {
            bail!(
                "--timeout is too short for any agent to answer: use at least 100ms (e.g. --timeout 10s)"
            );
        }
        if let Some(w) = self.wait_for_agents
            && w > wait::MAX_WAIT
        {
            bail!(
                "--wait-for-agents {} is too long: at most 1h (e.g. --wait-for-agents 5m)",
                format_seconds(w.as_secs_f64())
            );
        }
        if let Some(n) = self.local
            && !(2..=16).contains(&n)
        {
            bail!("--local {n} is out of range: use 2 to 16 in-process agents");
        }
        let schedule = self.every.is_some() || self.resume.as_deref().is_some_and(is_schedule_file);
        self.sample
            .check(self.resume.is_some() && !schedule, schedule)?;
        Ok(())
    }
}

fn check_agents(agents: &[AgentEntry]) -> anyhow::Result<()> {
    if agents.len() < 2 {
        bail!(
            "a mesh needs at least 2 agents, {} given: name them with --agents a,b,c or --agents-file FILE (or try --local 3)",
            agents.len()
        );
    }
    if agents.len() > MAX_AGENTS {
        bail!(
            "{} agents is more than one mesh takes ({MAX_AGENTS}: a million tests); split the fleet",
            agents.len()
        );
    }
    for (i, a) in agents.iter().enumerate() {
        // Agents test each other: a link-local address's zone is an interface of one host (the
        // controller's), which means nothing on the source agent's host.
        if wirespeed_net::address::is_link_local(a.address.ip()) {
            bail!(
                "agent {} is link-local: its zone names an interface of this host only, and agents test each other from their own hosts; give each agent a routable address",
                a.name
            );
        }
        if let Some(b) = agents[..i].iter().find(|b| b.address == a.address) {
            bail!(
                "agent {} is named twice ({} and {}): each agent once",
                a.address,
                b.name,
                a.name
            );
        }
    }
    Ok(())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
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

/// The agents of a new mesh: in-process ones (`--local`, whose handles must outlive the
/// mesh) or those named; sets `key` to the local agents' key.
fn agents_of(
    args: &MeshArgs,
    key: &mut Option<AuthKey>,
    waited: &mut Option<verdicts::MeshWarning>,
) -> anyhow::Result<(Vec<AgentEntry>, Option<LocalAgents>)> {
    let agents = match args.local {
        Some(n) => {
            let k = match key {
                Some(k) => k.clone(),
                None => random_key()?,
            };
            let (entries, handles) = local_agents(n, &k)?;
            *key = Some(k);
            return check_agents(&entries).map(|()| (entries, Some(handles)));
        }
        None => match args.wait_for_agents {
            Some(wait) => agents_when_up(args, wait, waited)?,
            None => named_agents(args)?,
        },
    };
    check_agents(&agents)?;
    Ok((agents, None))
}

/// `--wait-for-agents`: the named agents once their names resolve (a headless Service lists
/// a pod only once it is Ready) and each accepts a connection, or at the end of `wait` with a
/// warning naming the silent ones in `waited`.
fn agents_when_up(
    args: &MeshArgs,
    wait: Duration,
    waited: &mut Option<verdicts::MeshWarning>,
) -> anyhow::Result<Vec<AgentEntry>> {
    let started = Instant::now();
    let deadline = started + wait;
    let agents = loop {
        match named_agents(args) {
            Ok(a) if a.len() >= 2 => break a,
            other if Instant::now() >= deadline => break other?,
            _ => std::thread::sleep(
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_secs(1)),
            ),
        }
    };
    *waited = wait_until_up(&agents, started, wait);
    Ok(agents)
}

/// Waits until `started + wait` for each of `agents` to accept a connection; the warning
/// naming those that stayed silent. It goes into the document, not to stderr: a Job's log
/// (stdout and stderr together) must stay one JSON document.
fn wait_until_up(
    agents: &[AgentEntry],
    started: Instant,
    wait: Duration,
) -> Option<verdicts::MeshWarning> {
    let addresses: Vec<SocketAddr> = agents.iter().map(|a| a.address).collect();
    let up = wait::wait_for(
        &addresses,
        (started + wait).saturating_duration_since(Instant::now()),
        wait::accepts,
    );
    let silent: Vec<String> = agents
        .iter()
        .zip(&up)
        .filter(|(_, u)| !**u)
        .map(|(a, _)| a.name.clone())
        .collect();
    (!silent.is_empty()).then_some(verdicts::MeshWarning::AgentsNotAnswering {
        silent,
        agents: agents.len(),
        wait_seconds: wait.as_secs_f64(),
    })
}

impl MeshPlan {
    fn new(args: &MeshArgs, agents: Vec<AgentEntry>) -> MeshPlan {
        MeshPlan {
            schema: RUNS_SCHEMA.into(),
            agents,
            tcp_seconds: args.time.as_secs_f64(),
            probes: args.probes,
            probe_gap_seconds: args.probe_gap.as_secs_f64(),
            concurrency: args.concurrency,
            local: args.local.is_some(),
            tos: args.tos,
            sample: args.sample.sample(),
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

/// One mesh run: the tests it finished (those resumed included), how it went.
struct Executed {
    done: Vec<PairRecord>,
    rechecks: Vec<Recheck>,
    evidence: Vec<HostEvidence>,
    evidence_source: Option<String>,
    slots: usize,
    planned: f64,
    predicted: f64,
    elapsed: f64,
    interrupted: bool,
    failed_first: Option<String>,
}

impl Executed {
    fn result(
        &self,
        plan: &MeshPlan,
        results_file: Option<String>,
        rate_format: RateFormat,
        csv: bool,
    ) -> MeshResult {
        build_result(
            plan,
            &self.done,
            self.slots,
            (self.planned, self.predicted),
            self.elapsed,
            &self.rechecks,
            results_file,
            rate_format,
            csv,
        )
        .judged(self.evidence.clone(), self.evidence_source.clone())
    }
}

/// Runs the tests of `plan` not in `done`, appending each to `file` as it ends. A test starts
/// as soon as both its agents have ended their tests of earlier slots
/// ([`model::Dispatch`]): no agent is in two tests at once (at `--concurrency 1`), and a
/// slot's slowest test holds up only the tests of its own two agents, not the whole next slot.
/// A test's recorded start is taken in its thread after the controller saw its agents' last
/// tests end, so the recorded times of one agent's tests never overlap.
fn execute(
    plan: &MeshPlan,
    mut done: Vec<PairRecord>,
    mut file: Option<&mut RunsFile>,
    key: Option<&AuthKey>,
    idle: Duration,
) -> anyhow::Result<Executed> {
    let timing = plan.timing();
    let per_test = timing.per_test_seconds();
    // The slots still to run: the tournament's, less the tests already saved.
    let todo: Vec<Vec<model::Pair>> = plan
        .slots()
        .into_iter()
        .map(|slot| {
            slot.into_iter()
                .filter(|&(s, d)| !done.iter().any(|r| r.source == s && r.destination == d))
                .collect::<Vec<_>>()
        })
        .filter(|slot| !slot.is_empty())
        .collect();
    let planned = predict(&todo, &timing, |_| 0.0);
    let mut dispatch = model::Dispatch::new(&todo);
    let bar = crate::common::progress::Progress::start(
        "mesh",
        "tests",
        dispatch.len() as u64,
        Some(Duration::from_secs_f64(
            per_test / todo.first().map_or(1, Vec::len).max(1) as f64,
        )),
        false,
    );
    // The agents' ports as a lab configured them, and their counters before the first test.
    let ports = evidence::lab_ports(&plan.agents);
    let counted_before = evidence::counters(&ports, false);
    let start = Instant::now();
    let mut interrupted = false;
    let mut failed_first: Option<String> = None;
    let (tx, rx) = mpsc::channel::<(usize, PairRecord)>();
    // Starts test `i` (slot `slot`, `s` to `d`) in a thread of its own.
    let launch = |i: usize, slot: usize, (s, d): model::Pair| -> anyhow::Result<()> {
        let tx = tx.clone();
        let source = plan.agents[s].address;
        let test = PairTest {
            mesh_version: MESH_VERSION,
            destination: plan.agents[d].address,
            tcp_seconds: plan.tcp_seconds,
            probes: plan.probes,
            probe_gap_seconds: plan.probe_gap_seconds,
            tos: plan.tos,
        };
        let key = key.cloned();
        let planned_start = slot as f64 * per_test;
        std::thread::Builder::new()
            .name("mesh-test".into())
            .spawn(move || {
                let t0 = start.elapsed().as_secs_f64();
                let u0 = unix_now();
                // A panic would leave the controller waiting for this record: it becomes the
                // test's error instead.
                let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    wirespeed_net::mesh::run_pair(source, key.as_ref(), &test, idle)
                }))
                .unwrap_or_else(|_| {
                    Err(wirespeed_net::mesh::MeshError::Refused(
                        "the controller's thread for this test panicked (please report it)".into(),
                    ))
                });
                let record = PairRecord {
                    source: s,
                    destination: d,
                    slot,
                    planned_start_seconds: planned_start,
                    planned_end_seconds: planned_start + per_test,
                    start_seconds: t0,
                    end_seconds: start.elapsed().as_secs_f64(),
                    start_unix_seconds: u0,
                    end_unix_seconds: unix_now(),
                    error: got.as_ref().err().map(ToString::to_string),
                    result: got.ok(),
                };
                let _ = tx.send((i, record));
            })
            .context("starting a test's thread")?;
        Ok(())
    };
    let mut running = 0usize;
    loop {
        if crate::common::interrupt::requested() {
            interrupted = true;
            break;
        }
        for i in dispatch.ready() {
            let (slot, pair) = dispatch.test(i);
            launch(i, slot, pair)?;
            running += 1;
        }
        if running == 0 {
            // Nothing runs and nothing is ready: every test has ended.
            break;
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((i, record)) => {
                running -= 1;
                // The agents' next tests start first; the bookkeeping runs beside them.
                dispatch.end(i);
                for j in dispatch.ready() {
                    let (slot, pair) = dispatch.test(j);
                    launch(j, slot, pair)?;
                    running += 1;
                }
                if let Some(f) = file.as_deref_mut() {
                    f.append(&record)?;
                }
                if failed_first.is_none()
                    && let Some(p) = record.problems().first()
                {
                    failed_first = Some(format!(
                        "{} -> {}: {p}",
                        plan.agents[record.source].name, plan.agents[record.destination].name
                    ));
                }
                done.push(record);
                bar.inc();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!("a test's thread ended without a record (a panic: please report it)")
            }
        }
    }
    bar.finish();
    // The prediction with what each test measured of its own: its data's tail.
    let mut predicted = predict(&todo, &timing, |(s, d)| {
        done.iter()
            .find(|r| r.source == s && r.destination == d)
            .and_then(PairRecord::tail)
            .map_or(0.0, |t| t.seconds)
    });
    let rechecks = if interrupted {
        Vec::new()
    } else {
        recheck_round_trips(plan, &done, key, idle, start)
    };
    // The second looks run one after the other, each a test's set-up and its TCP test or its
    // probes (with the TCP test's grace and tail as measured).
    predicted += rechecks
        .iter()
        .map(|c| {
            OVERHEAD_SECONDS
                + if c.rate {
                    timing.tcp_seconds + wirespeed_net::spec::NO_DRAIN_GRACE.as_secs_f64()
                } else {
                    timing.latency_seconds
                }
        })
        .sum::<f64>();
    let counted_after = evidence::counters(&ports, true);
    Ok(Executed {
        done,
        rechecks,
        evidence: evidence::evidence(&ports, &counted_before, &counted_after),
        evidence_source: evidence::source(&ports),
        slots: todo.len(),
        planned,
        predicted,
        elapsed: start.elapsed().as_secs_f64(),
        interrupted,
        failed_first,
    })
}

/// The pairs whose round trip the tests alone would flag, probed again one at a time after
/// every test has ended: a busy core or a passing queue delays the probes of one test, a slow
/// path delays them all, so a finding stands only if the second look agrees. At most
/// [`MAX_RECHECKS`], each bounded like a test (`idle` and the probes' time).
fn recheck_round_trips(
    plan: &MeshPlan,
    done: &[PairRecord],
    key: Option<&AuthKey>,
    idle: Duration,
    start: Instant,
) -> Vec<Recheck> {
    let first = build_result(
        plan,
        done,
        0,
        (f64::NAN, f64::NAN),
        f64::NAN,
        &[],
        None,
        RateFormat::Adaptive,
        false,
    );
    // (source, destination, a rate's look): a low test, the slower direction of an
    // asymmetric pair, a high round trip; each once.
    let mut looks: Vec<(usize, usize, bool)> = Vec::new();
    for f in &first.analysis.findings {
        let look = match *f {
            Finding::BadPair {
                source,
                destination,
                ..
            } => (source, destination, true),
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                ..
            } => (fast_destination, fast_source, true),
            Finding::HighLatencyPair {
                source,
                destination,
                ..
            } if plan.probes > 0 => (source, destination, false),
            _ => continue,
        };
        if !looks.contains(&look) {
            looks.push(look);
        }
    }
    // The fleet judge's low pairs too (judged against what both hosts reach).
    for f in &first.faults {
        let look = match *f {
            Fault::BadPair {
                source,
                destination,
                ..
            } => (source, destination, true),
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                ..
            } => (fast_destination, fast_source, true),
            _ => continue,
        };
        if !looks.contains(&look) {
            looks.push(look);
        }
    }
    looks.truncate(MAX_RECHECKS);
    let mut out = Vec::new();
    for (s, d, rate) in looks {
        if crate::common::interrupt::requested() {
            break;
        }
        let test = PairTest {
            mesh_version: MESH_VERSION,
            destination: plan.agents[d].address,
            // The TCP test alone, or the probes alone (-t 0).
            tcp_seconds: if rate { plan.tcp_seconds } else { 0.0 },
            probes: if rate { 0 } else { plan.probes },
            probe_gap_seconds: plan.probe_gap_seconds,
            tos: plan.tos,
        };
        let t0 = start.elapsed().as_secs_f64();
        let got = wirespeed_net::mesh::run_pair(plan.agents[s].address, key, &test, idle);
        let (got, error) = match got {
            Ok(r) => {
                let e = (!r.errors.is_empty()).then(|| r.errors.join("; "));
                (Some(r), e)
            }
            Err(e) => (None, Some(e.to_string())),
        };
        out.push(Recheck {
            source: s,
            destination: d,
            start_seconds: t0,
            end_seconds: start.elapsed().as_secs_f64(),
            rate_bits_per_second: got.as_ref().and_then(|r| r.tcp_bits_per_second),
            latency: got.and_then(|r| r.latency),
            error,
            rate,
        });
    }
    out
}

impl MeshResult {
    /// The document of a finished (or cut) mesh, with its verdicts and warnings.
    fn document(self, plan: &MeshPlan) -> Document<MeshPlan, MeshResult> {
        let mut doc = Document::new("mesh", plan.clone(), self);
        for v in doc.result.verdicts() {
            let v = doc.result.worded(v);
            doc.verdict(&v);
        }
        for w in doc.result.warnings() {
            let w = doc.result.worded(w);
            doc.warning(&w);
        }
        doc
    }

    /// The median of the pairs' TCP rates: a scheduled mesh's headline.
    fn median_rate(&self) -> Option<f64> {
        let mut rates: Vec<f64> = self
            .tests
            .iter()
            .filter_map(PairRecord::rate)
            .filter(|r| r.is_finite())
            .collect();
        rates.sort_by(f64::total_cmp);
        let n = rates.len();
        (n > 0).then(|| {
            if n % 2 == 1 {
                rates[n / 2]
            } else {
                (rates[n / 2 - 1] + rates[n / 2]) / 2.0
            }
        })
    }
}

pub(crate) fn run(args: MeshArgs) -> anyhow::Result<()> {
    args.check()?;
    if args.every.is_some() || args.resume.as_deref().is_some_and(is_schedule_file) {
        return run_scheduled(&args);
    }
    for (given, flag) in [
        (args.count.is_some(), "--count"),
        (args.until.is_some(), "--until"),
        (args.slip.is_some(), "--slip"),
    ] {
        if given {
            bail!(
                "{flag} belongs to a schedule: add --every DURATION to measure the mesh again and again"
            );
        }
    }
    let mut key = args.key.load().context("--auth-key-file")?;
    let mut _local = None;
    let mut repair = None;
    let mut waited = None;
    let (plan, done, mut file) = match &args.resume {
        Some(path) => {
            if !args.agents.is_empty() || args.agents_file.is_some() || args.local.is_some() {
                bail!(
                    "--resume {}: the file names its agents; drop --agents, --agents-file and --local",
                    path.display()
                );
            }
            let resumed = RunsFile::resume::<MeshPlan, PairRecord>(path)?;
            if let Some(r) = &resumed.repair {
                eprintln!("wirespeed: warning: {r}");
            }
            repair = resumed.repair;
            if resumed.plan.local {
                bail!(
                    "{}: its agents were in-process (--local) and are gone; start a new mesh",
                    path.display()
                );
            }
            if let Some(wait) = args.wait_for_agents {
                waited = wait_until_up(&resumed.plan.agents, Instant::now(), wait);
            }
            (resumed.plan, resumed.runs, Some(resumed.file))
        }
        None => {
            let (agents, local) = agents_of(&args, &mut key, &mut waited)?;
            _local = local;
            let plan = MeshPlan::new(&args, agents);
            (plan, Vec::new(), None)
        }
    };
    check_agents(&plan.agents)?;
    plan.check_sample()?;
    plan.check_parallel()?;
    // The results file only once every flag has been checked: a refused run leaves no file.
    if args.resume.is_none()
        && let Some(p) = args.results.as_deref()
    {
        file = Some(RunsFile::create(p, &plan)?);
    }
    crate::common::interrupt::watch();
    let ex = execute(&plan, done, file.as_mut(), key.as_ref(), args.timeout)?;
    let result = ex.result(
        &plan,
        file.as_ref().map(|f| f.path().display().to_string()),
        args.output.rate_format,
        args.csv,
    );
    let mut doc = result.document(&plan);
    if let Some(repair) = repair {
        doc.push(Said::plain(
            Severity::Warning,
            "results_file_repaired",
            repair,
        ));
    }
    if let Some(waited) = waited {
        doc.warning(&waited);
    }
    if ex.interrupted {
        let planned = doc.result.tests_planned;
        let finished = ex.done.len();
        let what = format!("interrupted after {finished} of {planned} tests");
        crate::common::brief::show_partial(&args.brief, &args.output, &doc, &what)?;
        let saved = doc.result.results_file.clone();
        return Err(crate::common::interrupt::Interrupted {
            message: match &saved {
                Some(path) => format!("{finished} of {planned} tests are saved in {path}"),
                None => format!(
                    "{finished} of {planned} tests finished; none is saved (add --results FILE to keep them)"
                ),
            },
            resume: saved.map(|path| {
                crate::common::interrupt::command_line(&[
                    "mesh".into(),
                    "--resume".into(),
                    path,
                ])
            }),
        }
        .into());
    }
    if args.csv {
        // The CSV stays one table: verdicts and warnings go to stderr.
        for f in doc.findings.drain(..) {
            match f.severity {
                Severity::Verdict => eprintln!("verdict: {}", f.sentence),
                Severity::Warning => eprintln!("warning: {}", f.sentence),
            }
        }
        doc.verdicts.clear();
        doc.warnings.clear();
    }
    crate::common::brief::show(&args.brief, &args.output, &doc)?;
    if doc.result.tests_failed > 0 {
        bail!(
            "{} of {} tests failed (first: {})",
            doc.result.tests_failed,
            doc.result.tests.len(),
            ex.failed_first.unwrap_or_else(|| "see the warnings".into())
        );
    }
    Ok(())
}

/// `--every`: the whole mesh on a schedule (`crate::common::schedule`), each mesh's document one
/// record of the schedule's results file. A mesh cut by Ctrl-C is not recorded; `--resume`
/// runs its slot again, whole.
fn run_scheduled(args: &MeshArgs) -> anyhow::Result<()> {
    if args.wait_for_agents.is_some() {
        bail!(
            "--wait-for-agents is for one mesh started beside its agents: drop it for a schedule (each scheduled mesh names its failed tests)"
        );
    }
    if args.csv {
        bail!(
            "--every prints one line per mesh and a summary: drop --csv (each mesh's whole document is in the results file)"
        );
    }
    if args.resume.is_some()
        && (args.every.is_some() || args.until.is_some() || args.slip.is_some())
    {
        bail!(
            "--every, --until and --slip are in the schedule's plan: drop them beside --resume, and give the mesh's other arguments as before"
        );
    }
    let mut key = args.key.load().context("--auth-key-file")?;
    let (agents, _local) = agents_of(args, &mut key, &mut None)?;
    let plan = MeshPlan::new(args, agents);
    plan.check_sample()?;
    plan.check_parallel()?;
    let schedule = crate::common::schedule::ScheduleArgs {
        every: args.every,
        runs: args.count,
        until: args.until.clone(),
        slip: args.slip,
        results: args.results.clone(),
        resume: args.resume.clone(),
    };
    let mut one = || {
        let ex = execute(&plan, Vec::new(), None, key.as_ref(), args.timeout)?;
        let result = ex.result(&plan, None, args.output.rate_format, false);
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
        let doc = result.document(&plan);
        Ok(crate::common::schedule::RunOutput {
            document: serde_json::to_value(&doc)?,
            headline,
            failure,
        })
    };
    crate::common::schedule::run(
        &schedule,
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

/// For each test of `done`: whether its probes may have waited behind another test's data.
/// The last test before it of its source or its destination (by the controller's clock) was
/// still receiving when its tail reached the cap, or its tail ended on a socket error, so data
/// may still have been on the path when the probes went out. A tail that ended with the
/// sender's reset, its FIN or a quiet gap left the path empty before the test ended, and the
/// agents' next tests started after that.
fn behind_queue(done: &[PairRecord], n: usize) -> Vec<bool> {
    use wirespeed_net::report::DrainEnd;
    // Per agent, its tests' (end, index), by end.
    let mut by_agent: Vec<Vec<(f64, usize)>> = vec![Vec::new(); n];
    for (i, r) in done.iter().enumerate() {
        for a in [r.source, r.destination] {
            if a < n {
                by_agent[a].push((r.end_unix_seconds, i));
            }
        }
    }
    for list in &mut by_agent {
        list.sort_by(|x, y| x.0.total_cmp(&y.0));
    }
    let unsound = |i: usize| {
        done[i]
            .tail()
            .is_some_and(|t| matches!(t.ended_by, DrainEnd::Cap | DrainEnd::Error))
    };
    done.iter()
        .enumerate()
        .map(|(i, r)| {
            [r.source, r.destination].into_iter().any(|a| {
                let Some(list) = by_agent.get(a) else {
                    return false;
                };
                let k = list.partition_point(|&(end, _)| end <= r.start_unix_seconds);
                list[..k]
                    .iter()
                    .rev()
                    .find(|&&(_, j)| j != i)
                    .is_some_and(|&(_, j)| unsound(j))
            })
        })
        .collect()
}

/// The tests as the judge weighs them: each pair's rate the better of its test and a second
/// look, its round trip the best of both, and whether its probes waited behind a queue.
fn measures_of(done: &[PairRecord], rechecks: &[Recheck], n: usize) -> Vec<PairMeasure> {
    let behind = behind_queue(done, n);
    done.iter()
        .zip(&behind)
        .filter(|(r, _)| r.source < n && r.destination < n)
        .map(|(r, &behind)| PairMeasure {
            source: r.source,
            destination: r.destination,
            // The path's rate: the better of the test and its second look (a busy host or
            // another test's traffic lowers a rate, a slow link lowers both).
            rate_bits_per_second: rechecks
                .iter()
                .filter(|c| c.rate && (c.source, c.destination) == (r.source, r.destination))
                .filter_map(|c| c.rate_bits_per_second)
                .chain(r.rate())
                .reduce(f64::max),
            // The path's best round trip: a second look's probes count as the tests' do.
            rtt_seconds: rechecks
                .iter()
                .filter(|c| !c.rate && c.is_of(r.source, r.destination))
                .filter_map(Recheck::best)
                .chain(r.rtt())
                .reduce(f64::min),
            rtt_behind_queue: behind,
            retransmit_share: r.result.as_ref().and_then(|x| {
                let segments = x.tcp_bytes? as f64 / SEGMENT_BYTES;
                (segments >= 1.0).then(|| x.retransmits.unwrap_or(0) as f64 / segments)
            }),
        })
        .collect()
}

/// The payload of one TCP segment on the paths a mesh judges (MTU 1500, timestamps): the
/// retransmitted share counts segments from the bytes a test carried.
const SEGMENT_BYTES: f64 = 1448.0;

/// The document's result from the plan and the finished tests.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_result(
    plan: &MeshPlan,
    done: &[PairRecord],
    slots: usize,
    (planned, predicted): (f64, f64),
    elapsed: f64,
    rechecks: &[Recheck],
    results_file: Option<String>,
    rate_format: RateFormat,
    csv: bool,
) -> MeshResult {
    let n = plan.agents.len();
    let mut rates = vec![vec![None; n]; n];
    let mut rtts = vec![vec![None; n]; n];
    for r in done {
        if r.source < n && r.destination < n {
            rates[r.source][r.destination] = r.rate();
            rtts[r.source][r.destination] = r.rtt();
        }
    }
    let mut pairs = Vec::new();
    let sampled = plan.sampled_pairs();
    for a in 0..n {
        for b in a + 1..n {
            if sampled
                .as_ref()
                .is_some_and(|p| !p.contains(&(a, b)) && !p.contains(&(b, a)))
            {
                continue;
            }
            pairs.push(PairFigures {
                a,
                b,
                a_to_b_bits_per_second: rates[a][b],
                b_to_a_bits_per_second: rates[b][a],
                asymmetry: model::asymmetry(rates[a][b], rates[b][a]),
                a_to_b_rtt_seconds: rtts[a][b],
                b_to_a_rtt_seconds: rtts[b][a],
            });
        }
    }
    let measures = measures_of(done, rechecks, n);
    let rtt_not_judged = measures
        .iter()
        .filter(|m| m.rtt_behind_queue && m.rtt_seconds.is_some())
        .count();
    MeshResult {
        agents: plan.agents.clone(),
        tests_planned: plan.tests_planned(),
        tests_failed: done.iter().filter(|r| r.rate().is_none()).count(),
        slots,
        predicted_seconds: predicted,
        planned_seconds: planned,
        rtt_not_judged,
        elapsed_seconds: elapsed,
        rate_matrix_bits_per_second: rates,
        rtt_matrix_seconds: rtts,
        pairs,
        analysis: model::analyse(n, &measures, &Thresholds::default()),
        faults: Vec::new(),
        reach_bits_per_second: Vec::new(),
        yardstick_bits_per_second: None,
        host_evidence: Vec::new(),
        host_evidence_source: None,
        tests: done.to_vec(),
        rechecks: rechecks.to_vec(),
        results_file,
        rate_format,
        csv,
        sample_line: plan.sample_line(),
    }
    .judged(Vec::new(), None)
}

#[cfg(test)]
mod tests;
