//! `/probe?target=HOST[:PORT]&module=NAME`: Prometheus schedules a test from this agent to
//! another, in the blackbox exporter's shape (its multi-target pattern: the target is a query
//! parameter, the answer is one page of the probe's figures, `probe_success` first).
//!
//! What a probe may do is the operator's: the modules are named with their limits (a module
//! is `NAME=KIND:DURATION`, at most [`MODULE_SECONDS_MAX`] s), the targets must lie in the
//! blocks the agent was given (none by default, so nothing is probed without consent), at
//! most `max_at_once` probes run at once (one more is answered 503 at once), the agent's key
//! is used toward the target, and a probe ends before the scrape timeout Prometheus sends in
//! `X-Prometheus-Scrape-Timeout-Seconds`: its test is shortened to fit within it, one second
//! kept for connecting and the results.
//!
//! The kinds: `tcp` (a TCP throughput test: rate, bytes, retransmits), `rr` (TCP request/
//! response round trips: a summary with quantiles, and RPM, round trips per minute), and
//! `latency` (round trips idle, then under a TCP load to the same target: the responsiveness
//! a user feels when the link is busy, with the loaded RPM).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::http::Request;
use super::listener::{Answer, Response};
use crate::agent_config::Cidr;
use crate::auth::AuthKey;
use crate::client::{self, ClientConfig};
use crate::report::{Interval, Role};
use crate::rr::RrSession;
use crate::spec::{Amount, TestSpec};

/// The longest test a module may name.
pub const MODULE_SECONDS_MAX: f64 = 60.0;
/// The shortest.
pub const MODULE_SECONDS_MIN: f64 = 0.5;
/// Most modules an agent holds.
pub const MODULES_MAX: usize = 64;
/// Round trips kept per phase: beyond it the phase ends early (a bound on memory).
const ROUND_TRIPS_MAX: usize = 200_000;
/// Kept out of the scrape timeout for connecting and for the results.
const OVERHEAD: Duration = Duration::from_secs(1);
/// The content type of the answer (OpenMetrics 1.0 text).
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What a module runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// A TCP throughput test, this agent sending.
    Tcp,
    /// TCP request/response round trips.
    Rr,
    /// Round trips idle, then under a TCP load.
    Latency,
}

/// A named probe and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// Its name in `module=`.
    pub name: String,
    /// What it runs.
    pub kind: ProbeKind,
    /// How long its test runs at most.
    pub seconds: f64,
}

impl Module {
    /// A module from `NAME=KIND:DURATION` (`tcp_5s=tcp:5s`).
    pub fn parse(text: &str) -> Result<Module, String> {
        let example = "give NAME=KIND:DURATION, e.g. tcp_5s=tcp:5s (kinds: tcp, rr, latency)";
        let (name, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("probe module {text:?}: {example}"))?;
        let (kind, duration) = rest
            .split_once(':')
            .ok_or_else(|| format!("probe module {text:?}: {example}"))?;
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "probe module {text:?}: a name is 1 to 64 letters, digits, _ or -"
            ));
        }
        let kind = match kind {
            "tcp" => ProbeKind::Tcp,
            "rr" => ProbeKind::Rr,
            "latency" => ProbeKind::Latency,
            other => {
                return Err(format!(
                    "probe module {text:?}: unknown kind {other:?}; the kinds are tcp, rr and latency"
                ));
            }
        };
        let seconds = wirespeed_model::units::parse_duration(duration)
            .map_err(|e| format!("probe module {text:?}: {e}"))?
            .as_secs_f64();
        if !(MODULE_SECONDS_MIN..=MODULE_SECONDS_MAX).contains(&seconds) {
            return Err(format!(
                "probe module {text:?}: its duration must be {MODULE_SECONDS_MIN} s to {MODULE_SECONDS_MAX} s"
            ));
        }
        Ok(Module {
            name: name.to_string(),
            kind,
            seconds,
        })
    }

    /// The modules an agent offers when none are named: `tcp_5s`, `latency_10s` and `rr`.
    pub fn defaults() -> Vec<Module> {
        ["tcp_5s=tcp:5s", "latency_10s=latency:10s", "rr=rr:2s"]
            .iter()
            .map(|m| Module::parse(m).expect("a valid default"))
            .collect()
    }

    /// The modules in a file: one `NAME=KIND:DURATION` a line; `#` starts a comment.
    pub fn from_file(path: &Path) -> Result<Vec<Module>, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .map_err(|e| format!("cannot read the probe module file {shown}: {e}"))?;
        if meta.len() > 64 * 1024 {
            return Err(format!(
                "the probe module file {shown} is over 64 KiB; it holds one short line per module"
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the probe module file {shown}: {e}"))?;
        let mut modules = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                modules.push(Module::parse(line).map_err(|e| format!("{shown}:{}: {e}", n + 1))?);
            }
        }
        check_modules(&modules).map_err(|e| format!("{shown}: {e}"))?;
        Ok(modules)
    }
}

/// Names unique, at least one, at most [`MODULES_MAX`].
pub fn check_modules(modules: &[Module]) -> Result<(), String> {
    if modules.is_empty() || modules.len() > MODULES_MAX {
        return Err(format!("name 1 to {MODULES_MAX} probe modules"));
    }
    for (i, m) in modules.iter().enumerate() {
        if modules[..i].iter().any(|o| o.name == m.name) {
            return Err(format!("the probe module {} is named twice", m.name));
        }
    }
    Ok(())
}

/// What the operator lets Prometheus do through `/probe`.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    /// The modules.
    pub modules: Vec<Module>,
    /// The blocks targets must lie in (empty: no probe is allowed).
    pub targets: Vec<Cidr>,
    /// Probes running at once.
    pub max_at_once: usize,
    /// The key toward the targets (the agent's own `--auth-key-file`).
    pub auth: Option<AuthKey>,
    /// A target's port when it names none.
    pub default_port: u16,
}

/// Runs probes within the operator's settings.
#[derive(Debug)]
pub struct Prober {
    settings: ProbeSettings,
    running: Arc<AtomicUsize>,
}

/// A probe's slot, given back however the probe ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn refuse(status: &'static str, why: String) -> Answer {
    Answer::Now(Response::text(status, format!("wirespeed agent: {why}\n")))
}

/// `HOST[:PORT]` with HOST an IP address (`[v6]:port` for IPv6 with a port); no names, so
/// that what the operator allowed is what is probed.
pub fn parse_target(text: &str, default_port: u16) -> Result<SocketAddr, String> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    bare.parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, default_port))
        .map_err(|_| {
            format!(
                "target {:?} is not IP[:PORT]; give an address, e.g. target=198.18.0.2:5201",
                text.chars().take(80).collect::<String>()
            )
        })
}

impl Prober {
    /// A prober with these settings.
    pub fn new(settings: ProbeSettings) -> Prober {
        Prober {
            settings,
            running: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The answer to `/probe`: a refusal now (bad parameters, a target not allowed, too
    /// many probes), or the probe, run on its own thread.
    pub fn answer(&self, request: &Request) -> Answer {
        let s = &self.settings;
        let Some(name) = request.param("module") else {
            return refuse("400 Bad Request", "/probe needs module=NAME".into());
        };
        let Some(module) = s.modules.iter().find(|m| m.name == name).cloned() else {
            let known: Vec<&str> = s.modules.iter().map(|m| m.name.as_str()).collect();
            return refuse(
                "400 Bad Request",
                format!(
                    "no probe module named {name:?}; this agent has {}",
                    known.join(", ")
                ),
            );
        };
        let target = match request
            .param("target")
            .ok_or_else(|| "/probe needs target=IP[:PORT]".to_string())
            .and_then(|t| parse_target(t, s.default_port))
        {
            Ok(t) => t,
            Err(e) => return refuse("400 Bad Request", e),
        };
        if !s.targets.iter().any(|c| c.contains(target.ip())) {
            return refuse(
                "403 Forbidden",
                format!(
                    "target {} is outside the agent's --probe-targets; the operator allows probes with --probe-targets CIDR",
                    target.ip()
                ),
            );
        }
        let before = self.running.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(self.running.clone());
        if before >= s.max_at_once {
            return refuse(
                "503 Service Unavailable",
                format!(
                    "{} probes run already (--probe-max {}); try again when one ends",
                    before, s.max_at_once
                ),
            );
        }
        let budget = request
            .scrape_timeout_seconds
            .map(|t| Duration::from_secs_f64(t.min(3600.0)));
        let auth = s.auth.clone();
        Answer::Later(Box::new(move || {
            let _slot = slot;
            let body = run(&module, target, auth.as_ref(), budget);
            Response {
                status: "200 OK",
                content_type: OPENMETRICS,
                body,
            }
        }))
    }
}

/// Figures of one probe, each a line family.
#[derive(Default)]
struct Page {
    out: String,
}

impl Page {
    fn gauge(&mut self, name: &str, help: &str, value: f64) {
        let _ = writeln!(
            self.out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
        );
    }

    /// A summary of round trips, seconds: quantiles, count and sum, per phase if given.
    fn round_trips(&mut self, name: &str, help: &str, phases: &[(Option<&str>, &[f64])]) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} summary");
        for (phase, rtts) in phases {
            let phase_label = phase.map_or(String::new(), |p| format!("phase=\"{p}\","));
            let mut sorted = rtts.to_vec();
            sorted.sort_by(f64::total_cmp);
            for q in [0.5, 0.9, 0.99] {
                if let Some(v) = quantile(&sorted, q) {
                    let _ = writeln!(self.out, "{name}{{{phase_label}quantile=\"{q}\"}} {v}");
                }
            }
            let plain = phase.map_or(String::new(), |p| format!("{{phase=\"{p}\"}}"));
            let _ = writeln!(self.out, "{name}_count{plain} {}", sorted.len());
            let _ = writeln!(self.out, "{name}_sum{plain} {}", sorted.iter().sum::<f64>());
        }
    }
}

/// Nearest-rank quantile of sorted values.
#[doc(hidden)]
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// RPM: round trips per minute at the median round trip.
#[doc(hidden)]
pub fn rpm(rtts: &[f64]) -> Option<f64> {
    let mut sorted = rtts.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile(&sorted, 0.5)
        .filter(|m| *m > 0.0)
        .map(|m| 60.0 / m)
}

/// A failure's reason as a label value: one line, no control characters, short.
#[doc(hidden)]
pub fn reason_label(why: &str) -> String {
    why.chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// Runs `module` toward `target` within `budget` (the scrape timeout) and renders the page.
#[doc(hidden)]
pub fn run(
    module: &Module,
    target: SocketAddr,
    auth: Option<&AuthKey>,
    budget: Option<Duration>,
) -> String {
    let began = Instant::now();
    let seconds = match budget {
        Some(b) => module.seconds.min(b.saturating_sub(OVERHEAD).as_secs_f64()),
        None => module.seconds,
    };
    let deadline = began + Duration::from_secs_f64(seconds) + OVERHEAD;
    let mut page = Page::default();
    let result = if seconds < 0.2 {
        Err(format!(
            "the scrape timeout ({:.1} s) leaves no time for a test; raise scrape_timeout",
            budget.unwrap_or_default().as_secs_f64()
        ))
    } else {
        match module.kind {
            ProbeKind::Tcp => tcp(target, auth, seconds, deadline).map(|t| {
                t.render(&mut page, "probe_tcp");
            }),
            ProbeKind::Rr => round_trips(target, auth, seconds, deadline).map(|rtts| {
                page.round_trips(
                    "probe_rr_round_trip_seconds",
                    "TCP request/response round trips (1 byte each way), seconds.",
                    &[(None, &rtts)],
                );
                if let Some(r) = rpm(&rtts) {
                    page.gauge(
                        "probe_rr_round_trips_per_minute",
                        "RPM: round trips per minute at the median round trip.",
                        r,
                    );
                }
            }),
            ProbeKind::Latency => latency(target, auth, seconds, deadline, &mut page),
        }
    };
    let mut out = String::new();
    let ok = result.is_ok();
    let _ = writeln!(
        out,
        "# HELP probe_success Whether the probe's test ran to its end.\n# TYPE probe_success gauge\nprobe_success {}",
        u8::from(ok)
    );
    let _ = writeln!(
        out,
        "# HELP probe_duration_seconds How long the probe took.\n# TYPE probe_duration_seconds gauge\nprobe_duration_seconds {}",
        began.elapsed().as_secs_f64()
    );
    if let Err(why) = result {
        let _ = writeln!(
            out,
            "# HELP probe_failure Why the probe failed.\n# TYPE probe_failure info\nprobe_failure_info{{reason=\"{}\"}} 1",
            reason_label(&why)
        );
    } else {
        out.push_str(&page.out);
    }
    out.push_str("# EOF\n");
    out
}

/// A TCP test's figures.
struct TcpFigures {
    received_bytes: u64,
    seconds: f64,
    retransmits: u64,
}

impl TcpFigures {
    fn render(&self, page: &mut Page, prefix: &str) {
        page.gauge(
            &format!("{prefix}_received_bits_per_second"),
            "The rate the target received, bits per second.",
            if self.seconds > 0.0 {
                self.received_bytes as f64 * 8.0 / self.seconds
            } else {
                0.0
            },
        );
        page.gauge(
            &format!("{prefix}_received_bytes"),
            "Bytes the target received.",
            self.received_bytes as f64,
        );
        page.gauge(
            &format!("{prefix}_seconds"),
            "How long the target received, seconds.",
            self.seconds,
        );
        page.gauge(
            &format!("{prefix}_retransmits"),
            "TCP segments this agent sent again.",
            self.retransmits as f64,
        );
    }
}

fn left(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100))
}

fn tcp(
    target: SocketAddr,
    auth: Option<&AuthKey>,
    seconds: f64,
    deadline: Instant,
) -> Result<TcpFigures, String> {
    let cfg = ClientConfig {
        agent: target,
        bind: None,
        spec: TestSpec {
            amount: Amount::Seconds(seconds),
            ..TestSpec::default()
        },
        auth: auth.cloned(),
        cpu: None,
        idle_timeout: left(deadline).min(Duration::from_secs(5)),
        interrupt: None,
        source: None,
    };
    let out = client::run(&cfg, &mut |_: &Interval| {}).map_err(|e| e.to_string())?;
    if let Some(e) = out.error {
        return Err(e);
    }
    let agent = out.agent.ok_or("the target sent no report")?;
    let receivers = agent.streams.iter().filter(|s| s.role == Role::Receiver);
    let received_bytes = receivers.clone().map(|s| s.bytes).sum();
    let seconds = receivers.map(|s| s.seconds).fold(0.0, f64::max);
    let retransmits = out
        .client
        .streams
        .iter()
        .filter_map(|s| s.tcp_info.as_ref())
        .map(|t| u64::from(t.retransmits))
        .sum();
    Ok(TcpFigures {
        received_bytes,
        seconds,
        retransmits,
    })
}

/// Round trips of 1-byte transactions for `seconds`, in seconds each.
fn round_trips(
    target: SocketAddr,
    auth: Option<&AuthKey>,
    seconds: f64,
    deadline: Instant,
) -> Result<Vec<f64>, String> {
    let timeout = left(deadline).min(Duration::from_secs(5));
    let mut s =
        RrSession::open(target, auth, 1, 1, seconds + 1.0, timeout).map_err(|e| e.to_string())?;
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut rtts = Vec::new();
    while Instant::now() < until && rtts.len() < ROUND_TRIPS_MAX {
        let t = s
            .transaction()
            .map_err(|e| format!("a round trip failed: {e}"))?;
        rtts.push(t.round_trip.as_secs_f64());
    }
    s.close().map_err(|e| e.to_string())?;
    if rtts.is_empty() {
        return Err("no round trip completed".into());
    }
    Ok(rtts)
}

/// Round trips idle for the first 30% of the time, then under a TCP load for the rest.
fn latency(
    target: SocketAddr,
    auth: Option<&AuthKey>,
    seconds: f64,
    deadline: Instant,
    page: &mut Page,
) -> Result<(), String> {
    let idle_seconds = seconds * 0.3;
    let load_seconds = seconds - idle_seconds;
    let idle = round_trips(target, auth, idle_seconds, deadline)?;
    let load_auth = auth.cloned();
    let load = std::thread::Builder::new()
        .name("probe-load".into())
        .spawn(move || tcp(target, load_auth.as_ref(), load_seconds, deadline))
        .map_err(|e| format!("cannot start the load: {e}"))?;
    // The load's first 20% is its start-up; the round trips stop before it ends.
    std::thread::sleep(Duration::from_secs_f64(load_seconds * 0.2));
    let loaded = round_trips(target, auth, load_seconds * 0.7, deadline);
    let load = load.join().map_err(|_| "the load failed".to_string())??;
    let loaded = loaded?;
    page.round_trips(
        "probe_latency_round_trip_seconds",
        "TCP request/response round trips idle and under a TCP load, seconds.",
        &[(Some("idle"), &idle), (Some("loaded"), &loaded)],
    );
    if let Some(r) = rpm(&loaded) {
        page.gauge(
            "probe_latency_loaded_round_trips_per_minute",
            "RPM under load: round trips per minute at the median loaded round trip.",
            r,
        );
    }
    load.render(page, "probe_latency_load");
    Ok(())
}
