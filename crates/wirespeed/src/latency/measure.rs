//! One latency test from a validated [`Config`]: the idle phase, the loaded phase with its bulk
//! flows, and the probes on flows of their own the whole time; or the request/response test
//! alone. It returns the typed document and prints nothing itself: the seconds go to the
//! [`LiveLines`] it is handed, which a library caller makes silent.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use wirespeed_lab::inside::InterfaceTruth;
use wirespeed_model::{BitRate, RateFormat};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::control::echo::Residence;
use wirespeed_net::probe::echo::UdpEcho;
use wirespeed_net::rr::RrSession;
use wirespeed_net::spec::{Amount, Direction, Protocol, TestSpec};
use wirespeed_report::{Document, Finding, Severity};

use super::analysis::{
    LabWindow, Observed, Phases, analyse, host_queues, interval_of, lab_ground_truth, phase_of,
    second_of,
};
use super::queues::{self, HostSample, LinkSnapshot};
use super::result::{
    LatencyParams, LatencyResult, LatencyStats, LoadDirection, ProbeKind, ProbeSample, RrResult,
};
use super::text::LiveLines;
use super::verdicts;
use crate::common::interrupt;

/// How long a UDP echo probe's answer is waited for before it counts as lost (longer than a
/// 1000-frame queue at 10 Mbit/s, 1.23 s; the probes are pipelined, so the wait holds up none).
const UDP_TIMEOUT: Duration = Duration::from_secs(2);
/// How often this host's queues (the load's sockets, the qdisc, the NIC ring) are sampled
/// while the load runs.
const HOST_SAMPLE_PERIOD: Duration = Duration::from_millis(100);
/// How long the control connections wait for the agent.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
/// Probes kept, four times this in all: a bound on memory whatever the run's length and probe
/// interval.
const MAX_PROBES_PER_KIND: usize = 200_000;

/// Every setting of one latency test, each once and in its memory type: what
/// `LatencyArgs::config` makes of the flags, and what a library caller builds without them.
#[derive(Debug, Clone)]
pub struct Config {
    /// The agent; `None`: an agent in this process on loopback.
    pub(crate) agent: Option<SocketAddr>,
    pub(crate) key: Option<AuthKey>,
    pub(crate) idle: Duration,
    /// The loaded phase (the request/response test: the whole test).
    pub(crate) time: Duration,
    /// Bulk flows of the load, per direction.
    pub(crate) parallel: u32,
    pub(crate) direction: LoadDirection,
    pub(crate) congestion: Option<String>,
    /// The TOS byte the probes carry.
    pub(crate) tos: Option<u8>,
    pub(crate) probe_interval: Duration,
    /// The load is UDP at this rate per flow instead of TCP.
    pub(crate) udp_load: Option<BitRate>,
    /// The request/response test alone instead of latency under load.
    pub(crate) rr: Option<RrTest>,
    pub(crate) rate_format: RateFormat,
}

/// `--rr`: the request/response test's transactions.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct RrTest {
    /// TCP_CRR: a new connection per transaction.
    pub(crate) new_connection: bool,
    pub(crate) request_bytes: u32,
    pub(crate) response_bytes: u32,
}

impl Config {
    /// Latency under load through this host's loopback, as `wirespeed latency --idle IDLE -t
    /// TIME` measures it without HOST: the in-process agent, 4 TCP flows each way, probes
    /// every 40 ms.
    pub fn loopback(idle: Duration, time: Duration) -> Config {
        Config {
            agent: None,
            key: None,
            idle,
            time,
            parallel: 4,
            direction: LoadDirection::Both,
            congestion: None,
            tos: None,
            probe_interval: Duration::from_millis(40),
            udp_load: None,
            rr: None,
            rate_format: RateFormat::Adaptive,
        }
    }
}

/// One test's typed document, and why it is partial (`None`: it ran whole).
pub struct Measurement<R> {
    pub doc: Document<LatencyParams, R>,
    pub partial_reason: Option<String>,
}

/// What one test produced: latency under load, or the request/response test.
pub enum Measured {
    UnderLoad(Box<Measurement<LatencyResult>>),
    RequestResponse(Box<Measurement<RrResult>>),
}

/// Runs the test `config` describes against its agent (one in this process when it names
/// none) and returns its document with its verdicts; `live` shows the seconds as they end.
pub fn measure(config: &Config, live: &mut LiveLines) -> anyhow::Result<Measured> {
    interrupt::watch();
    let mut local_agent = None;
    let agent = match config.agent {
        Some(a) => a,
        None => {
            let (addr, agent) = crate::throughput::start_local_agent(false, config.key.clone())?;
            local_agent = Some(agent);
            addr
        }
    };
    let outcome = match &config.rr {
        Some(rr) => {
            request_response(config, rr, agent).map(|m| Measured::RequestResponse(Box::new(m)))
        }
        None => under_load(config, agent, live).map(|m| Measured::UnderLoad(Box::new(m))),
    };
    if let Some((handle, thread)) = local_agent {
        handle.stop();
        let _ = thread.join();
    }
    outcome
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The parameters of a test against `agent`, as the document gives them.
fn parameters(config: &Config, agent: SocketAddr) -> LatencyParams {
    let under_load = config.rr.is_none();
    LatencyParams {
        agent: agent.to_string(),
        in_process_agent: config.agent.is_none(),
        streams: if under_load { config.parallel } else { 0 },
        direction: config.direction,
        probe_interval_seconds: if under_load {
            config.probe_interval.as_secs_f64()
        } else {
            0.0
        },
        congestion: config.congestion.clone().filter(|_| under_load),
        tos: config.tos,
    }
}

/// `--rr`: back-to-back transactions for `config.time`, each timed from the request's first
/// byte to the response's last.
fn request_response(
    config: &Config,
    rr: &RrTest,
    agent: SocketAddr,
) -> anyhow::Result<Measurement<RrResult>> {
    let (request, response) = (rr.request_bytes, rr.response_bytes);
    let mut session = RrSession::open(
        agent,
        config.key.as_ref(),
        request,
        response,
        config.time.as_secs_f64() + 10.0,
        CONTROL_TIMEOUT,
    )
    .with_context(|| format!("the request/response service of {agent}"))?;
    if let Some(tos) = config.tos {
        session.set_tos(tos);
    }
    let started = Instant::now();
    let mut rtts = Vec::new();
    let mut connects = Vec::new();
    let mut failure = None;
    while started.elapsed() < config.time && !interrupt::requested() {
        let t = if rr.new_connection {
            session.transaction_on_new_connection()
        } else {
            session.transaction()
        };
        match t {
            Ok(t) => {
                if rtts.len() < MAX_PROBES_PER_KIND * 10 {
                    rtts.push(ms(t.round_trip));
                    if let Some(c) = t.connect {
                        connects.push(ms(c));
                    }
                }
            }
            Err(e) => {
                failure = Some(format!("a transaction failed: {e}"));
                break;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let transactions = rtts.len() as u64;
    let agent_count = session.close().ok().map(|t| t.transactions);
    let interrupted = interrupt::requested();
    let partial = interrupted || failure.is_some();
    let result = RrResult {
        request_bytes: request,
        response_bytes: response,
        new_connection: rr.new_connection,
        transactions,
        seconds: elapsed,
        transactions_per_second: transactions as f64 / elapsed.max(1e-9),
        round_trip: LatencyStats::of(&rtts, 0),
        connect: rr.new_connection.then(|| LatencyStats::of(&connects, 0)),
        agent_transactions: agent_count,
        partial,
    };
    let mut doc = Document::new("latency-rr", parameters(config, agent), result);
    if let Some(why) = failure.clone() {
        // The failure's own message, already a sentence naming its cause.
        doc.push(Finding::plain(Severity::Warning, "run_failed", why));
    } else if interrupted {
        doc.warning(&verdicts::LatencyFinding::Interrupted);
    } else {
        let finding = verdicts::LatencyFinding::RequestResponse(verdicts::RequestResponse {
            transactions_per_second: doc.result.transactions_per_second,
            request_bytes: request,
            response_bytes: response,
            new_connection: rr.new_connection,
            median_round_trip_seconds: doc.result.round_trip.p50_ms / 1e3,
        });
        doc.verdict(&finding);
    }
    let partial_reason = partial.then(|| failure.unwrap_or_else(|| "interrupted".into()));
    Ok(Measurement {
        doc,
        partial_reason,
    })
}

/// The samples of the probe loops, kept up to [`MAX_PROBES_PER_KIND`] of each kind.
type Samples = Arc<Mutex<Vec<ProbeSample>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn push(samples: &Samples, s: ProbeSample) {
    let mut v = lock(samples);
    // A bound on the whole, checked in constant time (this runs for every probe).
    if v.len() < MAX_PROBES_PER_KIND * ProbeKind::ALL.len() {
        v.push(s);
    }
}

/// What the phases of one run share: its settings and clock, the probes' samples, the flag
/// that stops its threads, and the lab link this end is on, if any.
struct Run<'a> {
    config: &'a Config,
    t0: Instant,
    samples: Samples,
    stop: Arc<AtomicBool>,
    lab_port: Option<InterfaceTruth>,
}

/// The probes' connections to the agent: the UDP echo, a kept connection, and the service
/// that each new-connection probe connects to.
struct ProbeSessions {
    echo: UdpEcho,
    kept: RrSession,
    fresh: RrSession,
    /// The UDP echo's IP packet, bytes (with the agent's residence field when it reports one).
    udp_ip_bytes: usize,
}

impl ProbeSessions {
    /// Opens them for `service_seconds`, marked with the configured TOS byte.
    fn open(config: &Config, agent: SocketAddr, service_seconds: f64) -> anyhow::Result<Self> {
        let key = config.key.as_ref();
        let echo = UdpEcho::open(agent, key, service_seconds, CONTROL_TIMEOUT)
            .with_context(|| format!("the UDP echo of {agent}"))?;
        let rr = || {
            RrSession::open(agent, key, 1, 1, service_seconds, CONTROL_TIMEOUT)
                .with_context(|| format!("the request/response service of {agent}"))
        };
        let mut kept = rr()?;
        let mut fresh = rr()?;
        // One probe, the same frames every time (the probes' own load is counted per probe).
        kept.set_ack_at_once(true);
        if let Some(tos) = config.tos {
            echo.set_tos(tos)
                .with_context(|| format!("-S {}", wirespeed_model::dscp::describe(tos)))?;
            kept.set_tos(tos);
            fresh.set_tos(tos);
        }
        let udp_ip_bytes = echo.pipelined_min_size();
        Ok(ProbeSessions {
            echo,
            kept,
            fresh,
            udp_ip_bytes,
        })
    }

    /// The three probe loops, each in a thread of its own until the run stops.
    fn spawn(self, run: &Run<'_>) -> io::Result<Vec<JoinHandle<()>>> {
        let ProbeSessions {
            mut echo,
            mut kept,
            mut fresh,
            udp_ip_bytes,
        } = self;
        let (t0, gap) = (run.t0, run.config.probe_interval);
        let udp = {
            // Pipelined: a probe lost behind a full queue does not hold up the next one.
            let (stop, samples) = (run.stop.clone(), run.samples.clone());
            std::thread::Builder::new()
                .name("ws-lat-udp".into())
                .spawn(move || {
                    let _ = echo.pipelined(udp_ip_bytes, gap, t0, UDP_TIMEOUT, &stop, |s, r| {
                        let rtt = s.rtt_kernel_ns.or(s.rtt_user_ns);
                        let at = s.sent_at_ns as f64 / 1e9;
                        push(&samples, echo_sample(at, rtt, r))
                    });
                })?
        };
        // The kinds take turns within the interval instead of starting together, so that on
        // a slow link no probe waits behind another's frame (at 10 Mbit/s a small frame holds
        // the wire 70 us): the kept connection half an interval after the UDP echo, the new
        // connection a quarter.
        let kept = probe_loop("ws-lat-rr", (gap, gap / 2), run, move |at| {
            let rtt = kept.transaction().ok().map(|t| ms(t.round_trip));
            if rtt.is_none() {
                // A broken kept connection is opened again on the next probe.
                let _ = kept.transaction();
            }
            vec![ProbeSample::new(ProbeKind::RrKeptConnection, at, rtt)]
        })?;
        let fresh = probe_loop("ws-lat-crr", (gap * 5, gap / 4), run, move |at| {
            let t = fresh.transaction_on_new_connection().ok();
            vec![
                ProbeSample::new(ProbeKind::TcpConnect, at, t.and_then(|t| t.connect).map(ms)),
                ProbeSample::new(ProbeKind::RrNewConnection, at, t.map(|t| ms(t.round_trip))),
            ]
        })?;
        Ok(vec![udp, kept, fresh])
    }
}

/// A UDP echo probe sent at `at` (seconds) with its round trip (ns) and what its reply said
/// of the agent's residence time.
fn echo_sample(at: f64, rtt_ns: Option<u64>, residence: Residence) -> ProbeSample {
    let mut sample = ProbeSample::new(ProbeKind::UdpEcho, at, rtt_ns.map(|ns| ns as f64 / 1e6));
    match residence {
        Residence::Accepted(ns) => {
            sample.agent_residence_ms = Some(ns as f64 / 1e6);
        }
        Residence::ToTransmit(ns) => {
            sample.agent_residence_ms = Some(ns as f64 / 1e6);
            sample.residence_to_transmit = true;
        }
        Residence::Rejected => sample.residence_rejected = true,
        Residence::Absent => {}
    }
    sample
}

/// Runs `probe` every `gap` until the run stops, the first `offset` after its start, each
/// probe's start measured from it.
fn probe_loop(
    name: &str,
    (gap, offset): (Duration, Duration),
    run: &Run<'_>,
    mut probe: impl FnMut(f64) -> Vec<ProbeSample> + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    let (t0, stop, samples) = (run.t0, run.stop.clone(), run.samples.clone());
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let next = t0 + offset;
            while Instant::now() < next && !stop.load(Ordering::Acquire) {
                std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
            }
            let mut next = Instant::now();
            while !stop.load(Ordering::Acquire) {
                let at = t0.elapsed().as_secs_f64();
                for s in probe(at) {
                    push(&samples, s);
                }
                next += gap;
                let now = Instant::now();
                if next > now {
                    // Sleep in short steps so a stop is seen within 50 ms.
                    let wait = (next - now).min(Duration::from_millis(50));
                    std::thread::sleep(wait);
                    while Instant::now() < next && !stop.load(Ordering::Acquire) {
                        std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                    }
                } else {
                    next = now;
                }
            }
        })
}

/// The lab's counters read once at each end of a window, as the run passes them.
#[derive(Default)]
struct LabReads {
    first: Option<LinkSnapshot>,
    last: Option<LinkSnapshot>,
    first_tried: bool,
    last_tried: bool,
}

impl LabReads {
    /// Reads the counters at `from` and at `until` (seconds from `t0`), each the first time
    /// `now` has passed it.
    fn read(&mut self, port: &InterfaceTruth, t0: Instant, now: f64, (from, until): (f64, f64)) {
        if !self.first_tried && now >= from {
            self.first_tried = true;
            self.first = queues::snapshot(port, t0);
        }
        if !self.last_tried && now >= until {
            self.last_tried = true;
            self.last = queues::snapshot(port, t0);
        }
    }

    /// The window ended before its planned end (the load failed, or its end was late to be
    /// seen): its last read now.
    fn close(&mut self, port: &InterfaceTruth, t0: Instant) {
        if self.first.is_some() && !self.last_tried {
            self.last = queues::snapshot(port, t0);
        }
    }

    fn window(self) -> LabWindow {
        (self.first, self.last)
    }
}

/// The loaded phase as it went: the load's own document, when it ended, and the lab's counts
/// over the loaded window.
struct Loaded {
    measured: anyhow::Result<crate::throughput::Measurement>,
    /// Seconds from the run's start.
    end: f64,
    lab: LabWindow,
}

impl Run<'_> {
    /// The seconds ended by `now` that `live` has not shown yet, with the load's window so far.
    fn show_seconds(&self, live: &mut LiveLines, now: f64, load: Option<(f64, f64)>, settle: f64) {
        if !live.wants_seconds() {
            return;
        }
        let idle_end = self.config.idle.as_secs_f64();
        for a in live.due(now) {
            let rtts = second_of(&lock(&self.samples), a);
            live.second(&interval_of(a, phase_of(a, idle_end, load, settle), &rtts));
        }
    }

    /// The idle phase: only the probes run. Inside a lab, the lab's count of its frames (the
    /// probes' own load), from 0.2 s in to a quarter second before its end.
    fn idle_phase(&self, live: &mut LiveLines) -> LabWindow {
        let idle_end = self.config.idle.as_secs_f64();
        let mut reads = LabReads::default();
        while self.t0.elapsed() < self.config.idle && !interrupt::requested() {
            std::thread::sleep(Duration::from_millis(50));
            let now = self.t0.elapsed().as_secs_f64();
            if let Some(port) = self.lab_port.as_ref().filter(|_| idle_end >= 1.0) {
                reads.read(port, self.t0, now, (0.2, idle_end - 0.25));
            }
            self.show_seconds(live, now, None, 0.0);
        }
        reads.window()
    }

    /// This host's queues, sampled in a thread of its own over `[from, until)` seconds.
    fn sample_host_queues(
        &self,
        agent: SocketAddr,
        interface: Option<String>,
        (from, until): (f64, f64),
        into: Arc<Mutex<Vec<HostSample>>>,
    ) -> io::Result<JoinHandle<()>> {
        let (stop, t0) = (self.stop.clone(), self.t0);
        std::thread::Builder::new()
            .name("ws-lat-queues".into())
            .spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    let now = t0.elapsed().as_secs_f64();
                    if now >= until {
                        break;
                    }
                    if now >= from {
                        lock(&into).push(queues::sample_host(agent, interface.as_deref()));
                    }
                    std::thread::sleep(HOST_SAMPLE_PERIOD);
                }
            })
    }

    /// The loaded phase: `load` in a thread of its own from `load_start`, the probes beside it,
    /// the lab's counters read at the ends of the loaded window (`settle` in, to its end).
    fn loaded_phase(
        &self,
        live: &mut LiveLines,
        load: &crate::throughput::Config,
        load_start: f64,
        settle: f64,
    ) -> anyhow::Result<Loaded> {
        let time = self.config.time.as_secs_f64();
        let mut reads = LabReads::default();
        // Interrupted while idle: no load is started.
        let measured = if interrupt::requested() {
            Err(anyhow::anyhow!("interrupted before the load"))
        } else {
            let load = load.clone();
            let bulk = std::thread::Builder::new()
                .name("ws-lat-load".into())
                .spawn(move || {
                    let mut silent = crate::throughput::text::LiveLines::new(
                        load.rate_format,
                        &load.spec,
                        false,
                        false,
                    );
                    crate::throughput::measure(&load, &mut silent)
                })?;
            while !bulk.is_finished() {
                std::thread::sleep(Duration::from_millis(50));
                let now = self.t0.elapsed().as_secs_f64();
                if let Some(port) = &self.lab_port {
                    reads.read(port, self.t0, now, (load_start + settle, load_start + time));
                }
                self.show_seconds(live, now, Some((load_start, now)), settle);
            }
            bulk.join()
                .map_err(|_| anyhow::anyhow!("the load's thread panicked"))?
        };
        // The transfer itself lasts -t from a little after `load_start` (its handshake); what
        // follows (the results exchange) has no load, and the queue drains: not the loaded
        // phase.
        let end = self.t0.elapsed().as_secs_f64().min(load_start + time);
        if let Some(port) = &self.lab_port {
            reads.close(port, self.t0);
        }
        Ok(Loaded {
            measured,
            end,
            lab: reads.window(),
        })
    }
}

/// The load: bulk flows against the same agent for `-t`, TCP or UDP at `--udp-load`.
fn load_test(config: &Config, agent: SocketAddr) -> crate::throughput::Config {
    let protocol = if config.udp_load.is_some() {
        Protocol::Udp
    } else {
        Protocol::Tcp
    };
    let spec = TestSpec {
        protocol,
        rate_bits_per_second: config.udp_load.map_or(0, |r| r.bits_per_second()),
        direction: match config.direction {
            LoadDirection::Up => Direction::Send,
            LoadDirection::Down => Direction::Receive,
            LoadDirection::Both => Direction::Both,
        },
        streams: config.parallel,
        amount: Amount::Seconds(config.time.as_secs_f64()),
        length_bytes: if config.udp_load.is_some() {
            1472
        } else {
            128 * 1024
        },
        congestion: config.congestion.clone(),
        ..TestSpec::default()
    };
    let mut load = crate::throughput::Config::loopback_tcp(config.time.as_secs_f64());
    load.protocol = protocol;
    load.spec = spec;
    load.remote = Some(agent);
    load.auth = config.key.clone();
    load
}

/// Latency under load: the probes through an idle phase and a loaded one, then the analysis
/// of what they and the load measured, and the verdicts.
fn under_load(
    config: &Config,
    agent: SocketAddr,
    live: &mut LiveLines,
) -> anyhow::Result<Measurement<LatencyResult>> {
    let time = config.time.as_secs_f64();
    let service_seconds = (config.idle + config.time).as_secs_f64() + 10.0;
    let probes = ProbeSessions::open(config, agent, service_seconds)?;
    let udp_ip_bytes = probes.udp_ip_bytes;
    // The interface towards the agent and, inside a lab, the link it is an end of, whose
    // queue the lab's emulator samples.
    let interface = queues::interface_to(agent);
    let qdisc_kind = interface
        .as_deref()
        .and_then(wirespeed_net::iface::root_qdisc);
    let run = Run {
        config,
        lab_port: queues::lab_port(interface.as_deref()),
        samples: Arc::default(),
        stop: Arc::default(),
        t0: Instant::now(),
    };
    let threads = probes.spawn(&run)?;
    live.header(agent, config.agent.is_none(), config);
    let idle_reads = run.idle_phase(live);
    let load = load_test(config, agent);
    let load_start = run.t0.elapsed().as_secs_f64();
    let settle = (time / 4.0).min(1.0);
    let host_samples: Arc<Mutex<Vec<HostSample>>> = Arc::default();
    let host_sampler = run.sample_host_queues(
        agent,
        interface.clone(),
        (load_start + settle, load_start + time),
        host_samples.clone(),
    )?;
    let loaded = run.loaded_phase(live, &load, load_start, settle)?;
    run.stop.store(true, Ordering::Release);
    for t in threads {
        let _ = t.join();
    }
    let _ = host_sampler.join();
    let samples = std::mem::take(&mut *lock(&run.samples));
    let interrupted = interrupt::requested();
    let (bulk_doc, bulk_partial) = match loaded.measured {
        Ok(m) => (Some(m.doc), m.partial_reason),
        Err(e) => (None, Some(format!("the load failed: {e:#}"))),
    };
    let partial_reason = bulk_partial.or(interrupted.then(|| "interrupted".to_string()));
    let seen = Observed {
        samples: &samples,
        phases: Phases {
            idle_end: config.idle.as_secs_f64(),
            load: (load_start, loaded.end),
            settle,
        },
        udp_ip_bytes,
        agent_ip: agent.ip(),
        direction: config.direction,
        bulk: bulk_doc.as_ref().map(|d| &d.result),
    };
    let mut result = analyse(&seen, partial_reason.clone(), config.rate_format);
    if let Some(port) = &run.lab_port {
        lab_ground_truth(&mut result, port, (loaded.lab, idle_reads), &seen);
    }
    host_queues(
        &mut result,
        &std::mem::take(&mut *lock(&host_samples)),
        HOST_SAMPLE_PERIOD.as_secs_f64() * 1e3,
        (interface.as_deref(), qdisc_kind.as_deref()),
        run.lab_port.as_ref(),
    );
    let mut doc = Document::new("latency", parameters(config, agent), result);
    verdicts::verdicts(&mut doc);
    Ok(Measurement {
        doc,
        partial_reason,
    })
}
