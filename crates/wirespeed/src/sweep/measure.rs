//! The sweep itself: the plan (resumed from its results file, or drawn new after a first
//! transfer probed the path and its duration was estimated against `--budget`), the runs it
//! lacks, each appended to the results file as it ends, and the report with its verdicts. It
//! prints nothing: the progress bar it advances is the caller's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use wirespeed_lab::inside::RoutePair;
use wirespeed_lab::truth::{Element, FlowShape};
use wirespeed_model::sweep::{self, PathFacts, PlanEstimate, PlannedRun, RunRecord};
use wirespeed_model::{BitRate, Duplex, EnvelopeParams, IpVersion, LinkLayer, Transport};
use wirespeed_report::{Document, Finding, Severity};

use super::result::{RUNS_SCHEMA, SweepPlan, SweepReport};
use super::{Config, LinkGiven, NewPlan, PlanSource, Transfer, text, verdicts};
use crate::common::progress::Progress;
use crate::common::runs_file::RunsFile;

/// What one run is asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct PointRequest {
    pub snd_bytes: u64,
    pub rcv_bytes: u64,
    pub transfer_bytes: Option<u64>,
    pub(crate) transfer_time: Option<Duration>,
    pub(crate) mss: Option<u32>,
}

/// What a short transfer before the first run found of the path.
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct PathProbe {
    /// The MSS a packet stands for when none was asked for.
    pub mss: u64,
    /// The lowest round trip its kernel saw (a small packet's), seconds.
    pub lowest_rtt_seconds: Option<f64>,
    /// The payload rate it reached, bytes/s.
    pub bytes_per_second: Option<f64>,
}

/// Runs one transfer at one grid point; the loop fills in the indices.
#[doc(hidden)]
pub trait PointRunner {
    /// A name for the target ("loopback", "host:port").
    fn target(&self) -> String;
    /// A short transfer before the plan: the path's MSS, round trip and rate.
    fn probe(&mut self) -> anyhow::Result<PathProbe>;
    /// The route to the target as a wirespeed lab configured it, when the sweep runs in one.
    fn lab_route(&self) -> Option<RoutePair> {
        None
    }
    /// One run.
    fn run(&mut self, point: &PointRequest) -> anyhow::Result<RunRecord>;
}

/// Why a sweep stopped before the end of its plan.
#[derive(Debug)]
pub enum Stop {
    /// A run failed (the peer went away, the disk filled).
    Failed(anyhow::Error),
    /// SIGINT or SIGTERM: the run in flight, if any, was abandoned.
    Interrupted,
}

/// A sweep ready to run: its plan, the runs it consists of and those it lacks, and where the
/// runs are kept.
#[doc(hidden)]
pub struct Planned {
    pub(crate) plan: SweepPlan,
    /// Every run of the plan, in order.
    pub(crate) order: Vec<PlannedRun>,
    /// The runs not done yet.
    pub(crate) todo: Vec<PlannedRun>,
    /// The runs a resumed results file holds.
    done: Vec<RunRecord>,
    pub(crate) file: Results,
    /// The plan's duration, estimated before its first run (a new sweep only).
    pub(crate) estimate: Option<PlanEstimate>,
    /// What was repaired in a resumed results file.
    pub(crate) repair: Option<String>,
}

/// What a sweep measured: its document, why it stopped early (`None`: every planned run is
/// in it), and its results file, which `--resume` continues.
#[derive(Debug)]
pub struct Measured {
    pub doc: Document<serde_json::Value, SweepReport>,
    pub stopped: Option<Stop>,
    pub path: PathBuf,
}

/// The plan: resumed from its results file, or drawn new after a first transfer probed the
/// path. `stop` says whether Ctrl-C arrived during that transfer.
pub(crate) fn plan(
    config: &Config,
    runner: &mut dyn PointRunner,
    route: &Option<RoutePair>,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<Planned> {
    let (plan, done, file, estimate, repair) = match &config.plan {
        PlanSource::Resume(path) => {
            let resumed = RunsFile::resume::<SweepPlan, RunRecord>(path)?;
            let file = Results::Open(resumed.file);
            (resumed.plan, resumed.runs, file, None, resumed.repair)
        }
        PlanSource::New(new) => {
            let (plan, estimate, path) = new_plan(new, &config.link, runner, route, stop)?;
            (
                plan,
                Vec::new(),
                Results::Pending(path),
                Some(estimate),
                None,
            )
        }
    };
    let order = sweep::plan(plan.snd.0.len(), plan.rcv.0.len(), plan.reps, plan.seed);
    let todo = sweep::remaining(&order, &done);
    Ok(Planned {
        plan,
        order,
        todo,
        done,
        file,
        estimate,
        repair,
    })
}

/// A new plan: the path probed by a first transfer, the seed drawn, the results file's path
/// found free, and the plan's duration held to `--budget`.
fn new_plan(
    new: &NewPlan,
    link: &LinkGiven,
    runner: &mut dyn PointRunner,
    route: &Option<RoutePair>,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<(SweepPlan, PlanEstimate, PathBuf)> {
    let seed = new.seed.unwrap_or_else(random_seed);
    let probe = match runner.probe() {
        Ok(p) => p,
        Err(_) if stop() => {
            return Err(crate::common::interrupt::Interrupted {
                message: "stopped before the first run; nothing was saved".into(),
                resume: None,
            }
            .into());
        }
        Err(e) => return Err(e),
    };
    let mss = new.mss.map_or(probe.mss, u64::from);
    let plan = SweepPlan {
        schema: RUNS_SCHEMA.to_string(),
        target: runner.target(),
        snd: new.snd.clone(),
        rcv: new.rcv.clone(),
        reps: new.reps,
        seed,
        mss_bytes: mss,
        set_mss: new.mss.is_some(),
        transfer_bytes: match new.transfer {
            Transfer::Bytes(b) => Some(b),
            Transfer::Time(_) => None,
        },
        transfer_seconds: match new.transfer {
            Transfer::Time(t) => Some(t.as_secs_f64()),
            Transfer::Bytes(_) => None,
        },
    };
    let path = new
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("sweep-{seed}.jsonl")));
    // Created by the first run kept: an agent that never answers leaves no file.
    RunsFile::check_new(&path)?;
    let facts = path_facts(link, route, mss);
    let e = plan_estimate(&plan, &facts.facts, probe);
    if e.seconds > new.budget.as_secs_f64() {
        bail!(
            "the plan's {} runs would take about {} on this path ({}), more than \
             --budget {}: give a smaller grid (for example --snd 1..17:4 --reps 1 -n \
             1MiB) or a longer budget, --budget {}h",
            e.runs,
            text::hours(e.seconds),
            estimate_basis(&e, &facts),
            text::hours(new.budget.as_secs_f64()),
            (e.seconds / 3600.0).ceil(),
        );
    }
    Ok((plan, e, path))
}

/// Runs what the plan lacks and makes the document. A sweep that kept no run (the agent never
/// answered, or the signal came first) measured nothing: that is an error, and no file is left.
pub(crate) fn measure(
    config: &Config,
    route: &Option<RoutePair>,
    planned: Planned,
    runner: &mut dyn PointRunner,
    stop: &dyn Fn() -> bool,
    bar: &Progress,
) -> anyhow::Result<Measured> {
    let Planned {
        plan,
        order,
        todo,
        mut done,
        mut file,
        estimate,
        repair,
    } = planned;
    let stopped = execute(&plan, &todo, runner, &mut file, &mut done, stop, bar);
    // Nothing kept: nothing on stdout and no file (docs/exit-status.md, status 2 or 130/143).
    if let Results::Pending(_) = file {
        match stopped {
            Some(Stop::Failed(err)) => return Err(err),
            Some(Stop::Interrupted) => {
                return Err(crate::common::interrupt::Interrupted {
                    message: "stopped before the first run; nothing was saved".into(),
                    resume: None,
                }
                .into());
            }
            None => {}
        }
    }
    let mut report = build_report(config, route, plan, order.len(), done, file.path());
    report.estimate = estimate;
    let mut doc = Document::new("sweep", parameters(config), report);
    for verdict in verdicts::verdicts(&doc.result) {
        doc.verdict(&verdict);
    }
    if let Some(repair) = repair {
        doc.push(Finding::plain(
            Severity::Warning,
            "results_file_repaired",
            repair,
        ));
    }
    if let Some(Stop::Failed(err)) = &stopped {
        doc.push(Finding::plain(
            Severity::Warning,
            "stopped_early",
            format!(
                "the sweep stopped early: {err:#}; finished runs are kept, continue with --resume"
            ),
        ));
    }
    Ok(Measured {
        doc,
        stopped,
        path: file.path().to_path_buf(),
    })
}

/// The results file of a sweep, created by the first run that has something to keep.
#[doc(hidden)]
pub enum Results {
    /// Not created yet: the path, found free when the sweep started.
    Pending(PathBuf),
    Open(RunsFile),
}

impl Results {
    pub(crate) fn path(&self) -> &Path {
        match self {
            Results::Pending(path) => path.as_path(),
            Results::Open(file) => file.path(),
        }
    }

    fn append(&mut self, plan: &SweepPlan, record: &RunRecord) -> anyhow::Result<()> {
        if let Results::Pending(path) = self {
            let file = RunsFile::create(path, plan)?;
            *self = Results::Open(file);
        }
        match self {
            Results::Open(file) => file.append(record),
            Results::Pending(_) => unreachable!("opened above"),
        }
    }
}

/// Runs the planned points in order, appending each; stops at the first failure and returns it.
#[doc(hidden)]
pub fn execute(
    plan: &SweepPlan,
    todo: &[PlannedRun],
    runner: &mut dyn PointRunner,
    file: &mut Results,
    done: &mut Vec<RunRecord>,
    stop: &dyn Fn() -> bool,
    bar: &Progress,
) -> Option<Stop> {
    for planned in todo {
        if stop() {
            return Some(Stop::Interrupted);
        }
        let request = PointRequest {
            snd_bytes: plan.snd.0[planned.snd_index].bytes(plan.mss_bytes),
            rcv_bytes: plan.rcv.0[planned.rcv_index].bytes(plan.mss_bytes),
            transfer_bytes: plan.transfer_bytes,
            transfer_time: plan.transfer_seconds.map(Duration::from_secs_f64),
            mss: if plan.set_mss {
                u32::try_from(plan.mss_bytes).ok()
            } else {
                None
            },
        };
        bar.set_message(format!(
            "{} x {}",
            plan.snd.0[planned.snd_index], plan.rcv.0[planned.rcv_index]
        ));
        let mut record = match runner.run(&request) {
            Ok(r) => r,
            Err(_) if stop() => {
                return Some(Stop::Interrupted);
            }
            Err(err) => {
                return Some(Stop::Failed(err));
            }
        };
        record.snd_index = planned.snd_index;
        record.rcv_index = planned.rcv_index;
        record.rep = planned.rep;
        if let Err(err) = file.append(plan, &record) {
            return Some(Stop::Failed(err));
        }
        done.push(record);
        bar.inc();
    }
    None
}

/// The report of the runs kept, analysed against what is known of the path.
#[doc(hidden)]
pub fn build_report(
    config: &Config,
    route: &Option<RoutePair>,
    plan: SweepPlan,
    planned: usize,
    runs: Vec<RunRecord>,
    path: &Path,
) -> SweepReport {
    let known = path_facts(&config.link, route, plan.mss_bytes);
    let analysis = sweep::analyse(&plan.snd, &plan.rcv, plan.mss_bytes, &runs, known.facts);
    SweepReport {
        complete: runs.len() == planned,
        plan,
        results_file: path.display().to_string(),
        runs_planned: planned,
        runs,
        ceiling_bytes_per_second: known.facts.ceiling_bytes_per_second,
        ceiling_source: known.source,
        estimate: None,
        analysis,
        rate_format: config.rate_format,
    }
}

/// What is known of the path, and where the ceiling comes from in words.
#[doc(hidden)]
pub struct KnownPath {
    pub facts: PathFacts,
    pub source: Option<String>,
}

/// The path's ceiling, wire overhead and full-segment round trip: from `--link-rate` (an
/// Ethernet of that rate; a full segment's serialization added to the lowest round trip a
/// kernel saw), else from the lab's configured route, as `tcp` reads it (its bottleneck's
/// ceiling, its whole round trip), else nothing but the runs.
#[doc(hidden)]
pub fn path_facts(link: &LinkGiven, route: &Option<RoutePair>, mss: u64) -> KnownPath {
    if let Some(rate) = link.rate {
        let (ceiling, factor) = ethernet(link, rate, mss);
        // A SYN: the IP header, TCP's 20 bytes and 20 of options (MSS, SACK, timestamps,
        // window scale).
        let frame = |packet: u64| LinkLayer::Ethernet { vlan_tags: 0 }.frame(packet).wire;
        let full = frame(mss + 20 + 32);
        let syn = frame(20 + 40);
        return KnownPath {
            facts: PathFacts {
                ceiling_bytes_per_second: ceiling,
                wire_bytes_per_payload_byte: factor,
                segment_serialization_seconds: Some(
                    full.saturating_sub(syn) as f64 * 8.0 / rate.bits_per_second() as f64,
                ),
                ..PathFacts::default()
            },
            source: Some(format!("--link-rate {rate} Ethernet")),
        };
    }
    if let Some(pair) = route
        && let Some(known) = lab_path(pair)
    {
        return known;
    }
    let (_, factor) = ethernet(link, BitRate::from_bits_per_second(10_000_000), mss);
    KnownPath {
        facts: PathFacts {
            wire_bytes_per_payload_byte: factor,
            ..PathFacts::default()
        },
        source: None,
    }
}

/// The lab's route as the sweep's path: the data go there (the sweep's client sends).
fn lab_path(pair: &RoutePair) -> Option<KnownPath> {
    let route = &pair.there;
    let ip = match route.address.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(_) => IpVersion::V4_PLAIN,
        std::net::IpAddr::V6(_) => IpVersion::V6,
    };
    let b = route.bottleneck(FlowShape::tcp(ip)).ok()?;
    let hop = match b.element.element {
        Element::Link { hop }
        | Element::ReturnLink { hop }
        | Element::Router { hop }
        | Element::ReturnRouter { hop } => hop,
        Element::SourceHost | Element::DestinationHost => 0,
    };
    let factor = route.hops.get(hop).and_then(|h| {
        EnvelopeParams {
            rate: BitRate::from_bits_per_second(h.rate_bits_per_second),
            link: h.layer,
            mtu: b.path_mtu,
            ip,
            transport: Transport::Tcp { timestamps: true },
            duplex: Duplex::Full,
            ack_every: 2,
            udp_payload: None,
            rtt: None,
        }
        .compute()
        .ok()
        .map(|e| e.cycle_wire_bytes as f64 / e.cycle_payload_bytes as f64)
    });
    Some(KnownPath {
        facts: PathFacts {
            ceiling_bytes_per_second: Some(b.element.ceiling_bits_per_second / 8.0),
            wire_bytes_per_payload_byte: factor.unwrap_or(1.0),
            segment_round_trip_seconds: Some(route.segment_round_trip_seconds(ip)),
            segment_serialization_seconds: None,
        },
        source: Some(format!(
            "{}, the slowest of the {} element(s) of route {} -> {} ({} hop(s)) of lab {} as \
             configured",
            b.element.describe,
            b.all.len(),
            route.from,
            route.to,
            route.hops.len(),
            pair.lab
        )),
    })
}

/// The envelope ceiling (when a rate was given) and wire bytes per payload byte for an
/// Ethernet carrying this MSS.
#[doc(hidden)]
pub fn ethernet(link: &LinkGiven, rate: BitRate, mss: u64) -> (Option<f64>, f64) {
    let header = 20 + 32;
    let params = EnvelopeParams {
        rate,
        link: LinkLayer::Ethernet { vlan_tags: 0 },
        mtu: (mss + header).clamp(576, 9216),
        ip: IpVersion::V4_PLAIN,
        transport: Transport::Tcp { timestamps: true },
        duplex: if link.half_duplex {
            Duplex::Half
        } else {
            Duplex::Full
        },
        ack_every: link.ack_every,
        udp_payload: None,
        rtt: None,
    };
    match params.compute() {
        Ok(e) => {
            // What the data direction's wire carries per payload byte: the data frames, and
            // the ACKs only where they share the medium (half duplex; the envelope's cycle
            // already holds them then). On full duplex the ACKs use the other direction.
            let factor = e.cycle_wire_bytes as f64 / e.cycle_payload_bytes as f64;
            (link.rate.map(|_| e.goodput_bytes_per_second), factor)
        }
        Err(_) => (None, 1.0),
    }
}

/// The plan's duration before its first run: window / RTT at a full segment's round trip,
/// capped by the path's ceiling, else by the rate the probe reached (a short transfer, so a
/// floor of what the path carries: the estimate errs long).
fn plan_estimate(plan: &SweepPlan, facts: &PathFacts, probe: PathProbe) -> PlanEstimate {
    let rtt =
        sweep::segment_round_trip_from(probe.lowest_rtt_seconds, *facts).map_or(0.0, |r| r.seconds);
    let transfer = match (plan.transfer_seconds, plan.transfer_bytes) {
        (Some(t), _) => sweep::Transfer::Seconds(t),
        (None, b) => sweep::Transfer::Bytes(b.unwrap_or(8 << 20)),
    };
    sweep::estimate(
        &plan.snd,
        &plan.rcv,
        plan.reps,
        plan.mss_bytes,
        transfer,
        rtt,
        facts.ceiling_bytes_per_second.or(probe.bytes_per_second),
    )
}

/// What an estimate assumed, in words.
fn estimate_basis(e: &PlanEstimate, known: &KnownPath) -> String {
    let cap = match (e.cap_bytes_per_second, &known.source) {
        (Some(c), Some(source)) => format!("at most {:.1} KB/s, the ceiling of {source}", c / 1e3),
        (Some(c), None) => format!("at most {:.1} KB/s, what a first transfer reached", c / 1e3),
        (None, _) => "no rate known".to_string(),
    };
    format!(
        "a full segment's round trip {}, {cap}; the longest run {}",
        text::round_trip(e.round_trip_seconds),
        text::hours(e.longest_run_seconds)
    )
}

/// The parameters as recorded in the document.
fn parameters(config: &Config) -> serde_json::Value {
    let link = &config.link;
    serde_json::json!({
        "link_rate_bits_per_second": link.rate.map(|r| r.bits_per_second()),
        "half_duplex": link.half_duplex,
        "ack_every": link.ack_every,
        "resumed_from": match &config.plan {
            PlanSource::Resume(p) => Some(p.display().to_string()),
            PlanSource::New(_) => None,
        },
    })
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
