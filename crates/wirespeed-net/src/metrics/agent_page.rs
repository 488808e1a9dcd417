//! The agent's page for Prometheus (`/metrics`) and the routes of its metrics listener.
//!
//! Counters carry every label value from the start (zero for each outcome and refusal
//! reason), so that `rate()` and `increase()` see a series before its first event; test bytes
//! and datagrams come from the agent's live totals, which running tests feed several times a
//! second ([`crate::agent::LIVE_TICK`]), so a `rate()` over a test moves while it runs. Client
//! addresses appear only when the operator asks (`--metrics-clients`): the page may be read by
//! anyone who reaches the port.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::http::Request;
use super::listener::{Answer, ListenerStats, Response, Routes};
use super::probe::Prober;
use crate::agent::AgentStats;
use crate::agent_config::SessionRecord;
use crate::report::Role;

/// Clients whose last result is kept (the oldest is forgotten first).
const CLIENTS_MAX: usize = 64;

/// Session outcomes, each a series from the start.
pub const OUTCOMES: [&str; 3] = ["completed", "refused", "failed"];
/// Refusal reasons, each a series from the start.
pub const REASONS: [&str; 10] = [
    "authentication",
    "version",
    "sessions",
    "memory",
    "limit",
    "queue",
    "destination",
    "pending",
    "thread",
    "other",
];

/// What the agent's sessions added up to, fed by its session log.
#[derive(Debug, Default)]
pub struct SessionTotals {
    outcomes: BTreeMap<&'static str, u64>,
    refusals: BTreeMap<&'static str, u64>,
    /// The last completed test per client address: its rate (bit/s) and when it ended.
    #[doc(hidden)]
    pub last: VecDeque<(String, f64, f64)>,
}

/// The reason class of a refusal message ("refused by the agent: the memory budget ...").
pub fn refusal_reason(message: &str) -> &'static str {
    let text = message
        .strip_prefix("refused by the agent: ")
        .unwrap_or(message);
    if text.contains("--exclusive") {
        "queue"
    } else if text.contains("authentication") {
        "authentication"
    } else if text.contains("protocol version") {
        "version"
    } else if text.contains("memory") {
        "memory"
    } else if text.contains("sessions") {
        "sessions"
    } else if text.contains("--max-") {
        "limit"
    } else if text.contains("consent") || text.contains("destination") {
        "destination"
    } else {
        "other"
    }
}

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl SessionTotals {
    /// Counts one finished session.
    pub fn record(&mut self, r: &SessionRecord) {
        let outcome = OUTCOMES
            .iter()
            .find(|o| **o == r.outcome)
            .copied()
            .unwrap_or("failed");
        *self.outcomes.entry(outcome).or_default() += 1;
        if outcome == "refused" {
            let reason = r.message.as_deref().map_or("other", refusal_reason);
            *self.refusals.entry(reason).or_default() += 1;
        }
        let Some(report) = r.report.as_ref().filter(|_| outcome == "completed") else {
            return;
        };
        // The rate as the agent measured it: what it received, or else what it sent.
        let by = |role: Role| {
            report
                .streams
                .iter()
                .filter(|s| s.role == role)
                .fold((0u64, 0f64), |(b, t), s| (b + s.bytes, t.max(s.seconds)))
        };
        let (received, seconds) = by(Role::Receiver);
        let (bytes, seconds) = if received > 0 {
            (received, seconds)
        } else {
            by(Role::Sender)
        };
        if seconds > 0.0 {
            let client = r
                .peer
                .parse::<SocketAddr>()
                .map_or_else(|_| r.peer.clone(), |a| a.ip().to_string());
            self.last.retain(|(c, _, _)| *c != client);
            if self.last.len() == CLIENTS_MAX {
                self.last.pop_front();
            }
            self.last
                .push_back((client, bytes as f64 * 8.0 / seconds, now_seconds()));
        }
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn single(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    family(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

fn escape(v: &str) -> String {
    v.chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The process's own resources, from /proc/self, in the client libraries' standard names.
fn process_metrics(out: &mut String) {
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let page = rustix::param::page_size() as f64;
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // Fields after the command name (which may hold spaces) start at its closing ')'.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<f64>().ok());
        if let (Some(utime), Some(stime)) = (field(14), field(15)) {
            single(
                out,
                "process_cpu_seconds_total",
                "counter",
                "User and system CPU time spent, seconds.",
                (utime + stime) / ticks,
            );
        }
        if let Some(threads) = field(20) {
            single(out, "process_threads", "gauge", "Threads.", threads);
        }
        if let Some(rss) = field(24) {
            single(
                out,
                "process_resident_memory_bytes",
                "gauge",
                "Resident memory, bytes.",
                rss * page,
            );
        }
        if let (Some(start), Ok(uptime)) = (field(22), std::fs::read_to_string("/proc/uptime")) {
            let since_boot: f64 = uptime
                .split_whitespace()
                .next()
                .and_then(|u| u.parse().ok())
                .unwrap_or(0.0);
            single(
                out,
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since the epoch, seconds.",
                now_seconds() - since_boot + start / ticks,
            );
        }
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        single(
            out,
            "process_open_fds",
            "gauge",
            "Open file descriptors.",
            fds.count() as f64,
        );
    }
    if let Some(limit) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        single(
            out,
            "process_max_fds",
            "gauge",
            "Most file descriptors the process may open.",
            limit as f64,
        );
    }
}

/// The whole page: the agent's counters, its metrics listener's and the process's.
pub fn page(
    stats: &AgentStats,
    totals: &SessionTotals,
    listener: &ListenerStats,
    show_clients: bool,
) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let mut out = String::new();
    let o = &mut out;
    // iperf3 tests (`serve --iperf3`) count in the agent's series like its own sessions, and
    // again on their own in the `wirespeed_agent_iperf3_*` series. Each holds one of the
    // agent's --max-sessions slots, so `stats.sessions` has them already.
    let ip = stats.iperf3.unwrap_or_default();
    single(
        o,
        "wirespeed_agent_sessions",
        "gauge",
        "Sessions past their handshake now (iperf3 tests included).",
        stats.sessions as f64,
    );
    single(
        o,
        "wirespeed_agent_pending_connections",
        "gauge",
        "Connections in their handshake now.",
        stats.pending as f64,
    );
    single(
        o,
        "wirespeed_agent_memory_reserved_bytes",
        "gauge",
        "Bytes reserved from the agent's memory budget (--max-memory) now.",
        stats.memory_reserved_bytes as f64,
    );
    family(
        o,
        "wirespeed_agent_sessions_finished_total",
        "counter",
        "Sessions finished, by outcome.",
    );
    for outcome in OUTCOMES {
        let n = totals.outcomes.get(outcome).copied().unwrap_or(0)
            + match outcome {
                "completed" => ip.completed,
                "refused" => ip.refused,
                _ => 0,
            };
        let _ = writeln!(
            o,
            "wirespeed_agent_sessions_finished_total{{outcome=\"{outcome}\"}} {n}"
        );
    }
    family(
        o,
        "wirespeed_agent_refused_total",
        "counter",
        "Connections and sessions refused, by reason.",
    );
    for reason in REASONS {
        let mut n = totals.refusals.get(reason).copied().unwrap_or(0);
        n += match reason {
            "pending" => stats.refused_pending,
            "thread" => stats.refused_spawn,
            "memory" => stats.refused_memory,
            "sessions" => ip.refused_sessions,
            _ => 0,
        };
        let _ = writeln!(
            o,
            "wirespeed_agent_refused_total{{reason=\"{reason}\"}} {n}"
        );
    }
    single(
        o,
        "wirespeed_agent_queued_tests",
        "gauge",
        "Tests waiting for another to end now (serve --exclusive).",
        stats.queued as f64,
    );
    single(
        o,
        "wirespeed_agent_queued_tests_total",
        "counter",
        "Tests that waited for another to end (serve --exclusive).",
        stats.queued_total as f64,
    );
    single(
        o,
        "wirespeed_agent_queue_wait_seconds_total",
        "counter",
        "Time tests waited for another to end, in all (serve --exclusive).",
        stats.queue_wait_micros_total as f64 / 1e6,
    );
    single(
        o,
        "wirespeed_agent_accept_errors_total",
        "counter",
        "Failed accept calls (EMFILE and the like) that made the agent back off.",
        stats.accept_errors as f64,
    );
    family(
        o,
        "wirespeed_agent_test_bytes_total",
        "counter",
        "Bytes moved by this agent's test streams, by direction, counted while tests run (iperf3 tests included).",
    );
    let _ = writeln!(
        o,
        "wirespeed_agent_test_bytes_total{{direction=\"sent\"}} {}\nwirespeed_agent_test_bytes_total{{direction=\"received\"}} {}",
        stats.test_bytes_sent + ip.bytes_sent,
        stats.test_bytes_received + ip.bytes_received
    );
    if let Some(ip) = stats.iperf3 {
        single(
            o,
            "wirespeed_agent_iperf3_sessions",
            "gauge",
            "iperf3 tests running now (serve --iperf3).",
            ip.sessions as f64,
        );
        family(
            o,
            "wirespeed_agent_iperf3_sessions_finished_total",
            "counter",
            "iperf3 tests finished, by outcome (serve --iperf3); refused includes failed.",
        );
        let _ = writeln!(
            o,
            "wirespeed_agent_iperf3_sessions_finished_total{{outcome=\"completed\"}} {}\nwirespeed_agent_iperf3_sessions_finished_total{{outcome=\"refused\"}} {}",
            ip.completed, ip.refused
        );
        family(
            o,
            "wirespeed_agent_iperf3_test_bytes_total",
            "counter",
            "Bytes moved by iperf3 tests, by direction, counted while tests run (serve --iperf3).",
        );
        let _ = writeln!(
            o,
            "wirespeed_agent_iperf3_test_bytes_total{{direction=\"sent\"}} {}\nwirespeed_agent_iperf3_test_bytes_total{{direction=\"received\"}} {}",
            ip.bytes_sent, ip.bytes_received
        );
    }
    family(
        o,
        "wirespeed_agent_test_datagrams_total",
        "counter",
        "UDP datagrams moved by this agent's test streams, by direction, counted while tests run.",
    );
    let _ = writeln!(
        o,
        "wirespeed_agent_test_datagrams_total{{direction=\"sent\"}} {}\nwirespeed_agent_test_datagrams_total{{direction=\"received\"}} {}",
        stats.test_datagrams_sent, stats.test_datagrams_received
    );
    if show_clients {
        family(
            o,
            "wirespeed_agent_last_test_bits_per_second",
            "gauge",
            "The rate of each client's last completed test, as the agent measured it.",
        );
        for (client, bps, _) in &totals.last {
            let _ = writeln!(
                o,
                "wirespeed_agent_last_test_bits_per_second{{client=\"{}\"}} {bps}",
                escape(client)
            );
        }
        family(
            o,
            "wirespeed_agent_last_test_end_timestamp_seconds",
            "gauge",
            "When each client's last completed test ended.",
        );
        for (client, _, at) in &totals.last {
            let _ = writeln!(
                o,
                "wirespeed_agent_last_test_end_timestamp_seconds{{client=\"{}\"}} {at}",
                escape(client)
            );
        }
    }
    for (name, help, value) in [
        (
            "wirespeed_metrics_connections_accepted_total",
            "Connections the metrics listener accepted.",
            &listener.accepted,
        ),
        (
            "wirespeed_metrics_connections_evicted_total",
            "Connections closed to make room for newer ones (--metrics-max-connections).",
            &listener.evicted,
        ),
        (
            "wirespeed_metrics_connections_timed_out_total",
            "Connections closed at their request deadline.",
            &listener.timed_out,
        ),
        (
            "wirespeed_metrics_requests_refused_total",
            "Requests refused: malformed, oversized, or without the bearer token.",
            &listener.refused,
        ),
    ] {
        single(o, name, "counter", help, value.load(Relaxed) as f64);
    }
    let _ = writeln!(
        o,
        "# HELP wirespeed_agent_info The agent's version.\n# TYPE wirespeed_agent_info gauge\nwirespeed_agent_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    process_metrics(o);
    out
}

/// The routes of the agent's metrics listener: `/metrics`, `/healthz` and `/probe`.
pub struct AgentRoutes {
    /// The agent's counters now.
    pub stats: Box<dyn Fn() -> AgentStats + Send + Sync>,
    /// What its sessions added up to.
    pub totals: Arc<Mutex<SessionTotals>>,
    /// The listener's own counts.
    pub listener: Arc<ListenerStats>,
    /// Client addresses on the page (`--metrics-clients`).
    pub show_clients: bool,
    /// `/probe`, if the operator allowed it.
    pub prober: Option<Prober>,
}

impl Routes for AgentRoutes {
    fn answer(&self, request: &Request, _peer: SocketAddr) -> Answer {
        match request.path.as_str() {
            "/metrics" => {
                let totals = self
                    .totals
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let body = page(&(self.stats)(), &totals, &self.listener, self.show_clients);
                Answer::Now(Response {
                    status: "200 OK",
                    content_type: "text/plain; version=0.0.4; charset=utf-8",
                    body,
                })
            }
            // The kubelet's readiness and liveness probes: the listener's loop answered, so
            // the process is alive and not wedged; nothing is locked or read to say so.
            "/healthz" => Answer::Now(Response::text("200 OK", "ok\n")),
            "/probe" => match &self.prober {
                Some(p) => p.answer(request),
                None => Answer::Now(Response::text(
                    "404 Not Found",
                    "wirespeed agent: /probe is off; start the agent with --probe-targets CIDR\n",
                )),
            },
            _ => Answer::Now(Response::text(
                "404 Not Found",
                "wirespeed agent: the pages are /metrics, /healthz and /probe\n",
            )),
        }
    }
}
