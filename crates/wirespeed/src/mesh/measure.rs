//! One mesh from a checked [`Mesh`]: the tests of its plan dispatched as their agents come
//! free, each asked of its source agent in a thread of its own and appended to the results
//! file as it ends, then the second looks at what the tests alone would flag. It prints
//! nothing but the progress bar on a terminal; the caller renders what it returns.

use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use wirespeed_model::RateFormat;
use wirespeed_model::mesh::faults::{Fault, HostEvidence};
use wirespeed_model::mesh::{self as model, Finding, TestTiming};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::control::mesh::{MESH_VERSION, PairTest};

use super::OVERHEAD_SECONDS;
use super::analysis::build_result;
use super::evidence;
use super::result::{MAX_RECHECKS, MeshPlan, MeshResult, PairRecord, Recheck};
use crate::common::progress::Progress;
use crate::common::runs_file::RunsFile;

/// One mesh to run: its plan, the key its agents share, and how long a silent agent is
/// waited for (`--timeout`). Made only by [`Mesh::new`], which checks the plan (new, or read
/// back from a results file) against what one mesh can run.
#[doc(hidden)]
pub struct Mesh {
    pub(crate) plan: MeshPlan,
    pub(crate) key: Option<AuthKey>,
    pub(crate) timeout: Duration,
}

impl Mesh {
    /// The plan's checks, in one place: 2 to [`super::MAX_AGENTS`] routable agents each named
    /// once, a sample within the mesh, and no more tests at once than the controller runs.
    pub(crate) fn new(
        plan: MeshPlan,
        key: Option<AuthKey>,
        timeout: Duration,
    ) -> anyhow::Result<Mesh> {
        super::agents::check_agents(&plan.agents)?;
        plan.check_sample()?;
        plan.check_parallel()?;
        Ok(Mesh { plan, key, timeout })
    }
}

/// What each test of a mesh costs by plan: `-t`, the probes, and beyond them the set-up and
/// results ([`OVERHEAD_SECONDS`]) and the grace the receiver counts after `-t`.
#[doc(hidden)]
pub fn test_timing(tcp_seconds: f64, probes: u32, probe_gap_seconds: f64) -> TestTiming {
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
#[doc(hidden)]
pub fn predict(
    slots: &[Vec<model::Pair>],
    timing: &TestTiming,
    tail: impl Fn(model::Pair) -> f64,
) -> f64 {
    let per_test = timing.per_test_seconds();
    model::critical_path(slots, |_, pair| per_test + tail(pair))
}

impl MeshPlan {
    pub(super) fn timing(&self) -> TestTiming {
        test_timing(self.tcp_seconds, self.probes, self.probe_gap_seconds)
    }

    pub(super) fn slots(&self) -> Vec<Vec<model::Pair>> {
        model::slots(&self.rounds(), self.concurrency)
    }
}

pub(super) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One mesh run: the tests it finished (those resumed included), how it went.
pub(crate) struct Executed {
    pub(super) done: Vec<PairRecord>,
    rechecks: Vec<Recheck>,
    evidence: Vec<HostEvidence>,
    evidence_source: Option<String>,
    slots: usize,
    planned: f64,
    predicted: f64,
    elapsed: f64,
    pub(super) interrupted: bool,
    pub(super) failed_first: Option<String>,
}

impl Executed {
    pub(super) fn result(
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

/// Runs the tests of the plan not in `done`, appending each to `file` as it ends, then the
/// second looks. A test starts as soon as both its agents have ended their tests of earlier
/// slots ([`model::Dispatch`]): no agent is in two tests at once (at `--concurrency 1`), and
/// a slot's slowest test holds up only the tests of its own two agents, not the whole next
/// slot.
pub(crate) fn measure(
    config: &Mesh,
    mut done: Vec<PairRecord>,
    file: Option<&mut RunsFile>,
    quiet: bool,
) -> anyhow::Result<Executed> {
    let plan = &config.plan;
    let timing = plan.timing();
    let per_test = timing.per_test_seconds();
    let todo = slots_to_run(plan, &done);
    let planned = predict(&todo, &timing, |_| 0.0);
    let mut dispatch = model::Dispatch::new(&todo);
    let bar = Progress::start(
        "mesh",
        "tests",
        dispatch.len() as u64,
        Some(Duration::from_secs_f64(
            per_test / todo.first().map_or(1, Vec::len).max(1) as f64,
        )),
        quiet,
    );
    // The agents' ports as a lab configured them, and their counters before the first test.
    let ports = evidence::lab_ports(&plan.agents);
    let counted_before = evidence::counters(&ports, false);
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let controller = Controller {
        config,
        per_test,
        start,
        tx,
        rx,
    };
    let ran = controller.run(&mut dispatch, &bar, &mut done, file)?;
    bar.finish();
    // The prediction with what each test measured of its own: its data's tail.
    let mut predicted = predict(&todo, &timing, |(s, d)| {
        done.iter()
            .find(|r| r.source == s && r.destination == d)
            .and_then(PairRecord::tail)
            .map_or(0.0, |t| t.seconds)
    });
    let rechecks = if ran.interrupted {
        Vec::new()
    } else {
        recheck(config, &done, start)
    };
    predicted += rechecks_seconds(&rechecks, &timing);
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
        interrupted: ran.interrupted,
        failed_first: ran.failed_first,
    })
}

/// The slots still to run: the tournament's, less the tests already saved.
fn slots_to_run(plan: &MeshPlan, done: &[PairRecord]) -> Vec<Vec<model::Pair>> {
    plan.slots()
        .into_iter()
        .map(|slot| {
            slot.into_iter()
                .filter(|&(s, d)| !done.iter().any(|r| r.source == s && r.destination == d))
                .collect::<Vec<_>>()
        })
        .filter(|slot| !slot.is_empty())
        .collect()
}

/// The second looks run one after the other, each a test's set-up and its TCP test or its
/// probes (with the TCP test's grace and tail as measured).
fn rechecks_seconds(rechecks: &[Recheck], timing: &TestTiming) -> f64 {
    rechecks
        .iter()
        .map(|c| {
            OVERHEAD_SECONDS
                + if c.rate {
                    timing.tcp_seconds + wirespeed_net::spec::NO_DRAIN_GRACE.as_secs_f64()
                } else {
                    timing.latency_seconds
                }
        })
        .sum::<f64>()
}

/// The controller's side of the tests: it starts each in a thread of its own, and each sends
/// its record back when it ends.
struct Controller<'a> {
    config: &'a Mesh,
    per_test: f64,
    start: Instant,
    tx: mpsc::Sender<(usize, PairRecord)>,
    rx: mpsc::Receiver<(usize, PairRecord)>,
}

/// How the dispatch of the tests ended.
struct Dispatched {
    interrupted: bool,
    /// The first test's problem, named by its agents.
    failed_first: Option<String>,
}

impl Controller<'_> {
    /// Starts test `i` (slot `slot`, `s` to `d`) in a thread of its own. Its recorded start is
    /// taken in its thread after the controller saw its agents' last tests end, so the
    /// recorded times of one agent's tests never overlap.
    fn launch(&self, i: usize, slot: usize, (s, d): model::Pair) -> anyhow::Result<()> {
        let plan = &self.config.plan;
        let tx = self.tx.clone();
        let source = plan.agents[s].address;
        let test = PairTest {
            mesh_version: MESH_VERSION,
            destination: plan.agents[d].address,
            tcp_seconds: plan.tcp_seconds,
            probes: plan.probes,
            probe_gap_seconds: plan.probe_gap_seconds,
            tos: plan.tos,
        };
        let (key, idle) = (self.config.key.clone(), self.config.timeout);
        let (start, per_test) = (self.start, self.per_test);
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
    }

    /// Starts every test whose agents are free; how many it started.
    fn launch_ready(&self, dispatch: &mut model::Dispatch) -> anyhow::Result<usize> {
        let ready = dispatch.ready();
        for &i in &ready {
            let (slot, pair) = dispatch.test(i);
            self.launch(i, slot, pair)?;
        }
        Ok(ready.len())
    }

    /// Dispatches the tests until all have ended or Ctrl-C, each record into `done` (and
    /// `file`) as it comes.
    fn run(
        &self,
        dispatch: &mut model::Dispatch,
        bar: &Progress,
        done: &mut Vec<PairRecord>,
        mut file: Option<&mut RunsFile>,
    ) -> anyhow::Result<Dispatched> {
        let plan = &self.config.plan;
        let mut ran = Dispatched {
            interrupted: false,
            failed_first: None,
        };
        let mut running = 0usize;
        loop {
            if crate::common::interrupt::requested() {
                ran.interrupted = true;
                break;
            }
            running += self.launch_ready(dispatch)?;
            if running == 0 {
                // Nothing runs and nothing is ready: every test has ended.
                break;
            }
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok((i, record)) => {
                    running -= 1;
                    // The agents' next tests start first; the bookkeeping runs beside them.
                    dispatch.end(i);
                    running += self.launch_ready(dispatch)?;
                    if let Some(f) = file.as_deref_mut() {
                        f.append(&record)?;
                    }
                    if ran.failed_first.is_none()
                        && let Some(p) = record.problems().first()
                    {
                        ran.failed_first = Some(format!(
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
        Ok(ran)
    }
}

/// The second looks the tests ask for, each once as (source, destination, a rate's look): a
/// low test, the slower direction of an asymmetric pair, a high round trip; then the fleet
/// judge's low pairs (judged against what both hosts reach). At most [`MAX_RECHECKS`].
fn second_looks(plan: &MeshPlan, done: &[PairRecord]) -> Vec<(usize, usize, bool)> {
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
    looks
}

/// The pairs whose rate or round trip the tests alone would flag, tested again one at a time
/// after every test has ended: a busy core or a passing queue delays the probes of one test,
/// a slow path delays them all, so a finding stands only if the second look agrees. Each is
/// bounded like a test (`--timeout` and the probes' time).
fn recheck(config: &Mesh, done: &[PairRecord], start: Instant) -> Vec<Recheck> {
    let plan = &config.plan;
    let mut out = Vec::new();
    for (s, d, rate) in second_looks(plan, done) {
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
        let got = wirespeed_net::mesh::run_pair(
            plan.agents[s].address,
            config.key.as_ref(),
            &test,
            config.timeout,
        );
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
