//! `serve --metrics ADDR:PORT`: the agent's counters and the process's resources for Prometheus,
//! on `GET /metrics` in the Prometheus text format.
//!
//! The endpoint is read-only and serves one request at a time: a request line and headers of at
//! most 8 KiB, read within 2 s, else the connection is closed. So a scraper gets its page, and a
//! client that connects and says nothing, or sends a flood, holds one thread for 2 s at most and
//! costs no memory. It has no authentication: bind it to an address only the scraper reaches.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use wirespeed_net::agent::{AgentStats, SessionRecord};
use wirespeed_net::report::Role;

/// Longest request head read.
const REQUEST_MAX: usize = 8 * 1024;
/// Longest a connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Clients whose last result is kept (the oldest is forgotten first).
const CLIENTS_MAX: usize = 64;

/// What the agent's sessions added up to, fed by its session log.
#[derive(Debug, Default)]
pub(crate) struct SessionTotals {
    /// Sessions by outcome (`completed`, `refused`, `failed`).
    outcomes: BTreeMap<&'static str, u64>,
    /// Refusals by reason (the first words of the agent's message).
    refusals: BTreeMap<String, u64>,
    /// Bytes the agent sent and received in test streams.
    bytes_sent: u64,
    bytes_received: u64,
    /// The last completed test per client address: its rate as the agent measured it (bit/s)
    /// and when it ended.
    last: VecDeque<(String, f64, f64)>,
}

/// The reason class of a refusal message ("refused by the agent: the memory budget ...").
fn refusal_reason(message: &str) -> String {
    let text = message
        .strip_prefix("refused by the agent: ")
        .unwrap_or(message);
    let reason = if text.contains("--exclusive") {
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
    };
    reason.to_string()
}

impl SessionTotals {
    /// Counts one finished session.
    pub(crate) fn record(&mut self, r: &SessionRecord) {
        *self.outcomes.entry(r.outcome).or_default() += 1;
        if r.outcome == "refused" {
            let reason = r.message.as_deref().map_or("other".into(), refusal_reason);
            *self.refusals.entry(reason).or_default() += 1;
        }
        let Some(report) = &r.report else {
            return;
        };
        let mut received = 0u64;
        let mut seconds = 0f64;
        for s in &report.streams {
            match s.role {
                Role::Sender => self.bytes_sent += s.bytes,
                Role::Receiver => {
                    self.bytes_received += s.bytes;
                    received += s.bytes;
                    seconds = seconds.max(s.seconds);
                }
            }
        }
        let sent: u64 = report
            .streams
            .iter()
            .filter(|s| s.role == Role::Sender)
            .map(|s| s.bytes)
            .sum();
        let sent_seconds = report
            .streams
            .iter()
            .filter(|s| s.role == Role::Sender)
            .map(|s| s.seconds)
            .fold(0.0, f64::max);
        let (bytes, secs) = if received > 0 {
            (received, seconds)
        } else {
            (sent, sent_seconds)
        };
        if r.outcome == "completed" && secs > 0.0 {
            let client = r
                .peer
                .parse::<SocketAddr>()
                .map_or_else(|_| r.peer.clone(), |a| a.ip().to_string());
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            self.last.retain(|(c, _, _)| *c != client);
            if self.last.len() == CLIENTS_MAX {
                self.last.pop_front();
            }
            self.last
                .push_back((client, bytes as f64 * 8.0 / secs, now));
        }
    }
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
            gauge_or_counter(
                out,
                "process_cpu_seconds_total",
                "counter",
                "User and system CPU time spent, seconds.",
                (utime + stime) / ticks,
            );
        }
        if let Some(threads) = field(20) {
            gauge_or_counter(out, "process_threads", "gauge", "Threads.", threads);
        }
        if let Some(rss) = field(24) {
            gauge_or_counter(
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
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            gauge_or_counter(
                out,
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since the epoch, seconds.",
                now - since_boot + start / ticks,
            );
        }
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        gauge_or_counter(
            out,
            "process_open_fds",
            "gauge",
            "Open file descriptors.",
            fds.count() as f64,
        );
    }
    if let Some(limit) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        gauge_or_counter(
            out,
            "process_max_fds",
            "gauge",
            "Most file descriptors the process may open.",
            limit as f64,
        );
    }
}

fn gauge_or_counter(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The whole page.
pub(crate) fn page(stats: &AgentStats, totals: &SessionTotals) -> String {
    let mut out = String::new();
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_sessions",
        "gauge",
        "Sessions past their handshake now.",
        stats.sessions as f64,
    );
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_pending_connections",
        "gauge",
        "Connections in their handshake now.",
        stats.pending as f64,
    );
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_memory_reserved_bytes",
        "gauge",
        "Bytes reserved from the agent's memory budget (--max-memory) now.",
        stats.memory_reserved_bytes as f64,
    );
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_sessions_finished_total Sessions finished, by outcome.\n# TYPE wirespeed_agent_sessions_finished_total counter"
    );
    for outcome in ["completed", "refused", "failed"] {
        let n = totals.outcomes.get(outcome).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "wirespeed_agent_sessions_finished_total{{outcome=\"{outcome}\"}} {n}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_refused_total Connections and sessions refused, by reason.\n# TYPE wirespeed_agent_refused_total counter"
    );
    let mut reasons: BTreeMap<String, u64> = totals.refusals.clone();
    *reasons.entry("pending".into()).or_default() += stats.refused_pending;
    *reasons.entry("thread".into()).or_default() += stats.refused_spawn;
    *reasons.entry("memory".into()).or_default() += stats.refused_memory;
    for (reason, n) in &reasons {
        let _ = writeln!(
            out,
            "wirespeed_agent_refused_total{{reason=\"{}\"}} {n}",
            escape(reason)
        );
    }
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_queued_tests",
        "gauge",
        "Tests waiting for another to end now (serve --exclusive).",
        stats.queued as f64,
    );
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_queued_tests_total",
        "counter",
        "Tests that waited for another to end (serve --exclusive).",
        stats.queued_total as f64,
    );
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_queue_wait_seconds_total",
        "counter",
        "Time tests waited for another to end, in all (serve --exclusive).",
        stats.queue_wait_micros_total as f64 / 1e6,
    );
    gauge_or_counter(
        &mut out,
        "wirespeed_agent_accept_errors_total",
        "counter",
        "Failed accept calls (EMFILE and the like) that made the agent back off.",
        stats.accept_errors as f64,
    );
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_test_bytes_total Bytes moved in test streams, by this agent's role.\n# TYPE wirespeed_agent_test_bytes_total counter\nwirespeed_agent_test_bytes_total{{role=\"sent\"}} {}\nwirespeed_agent_test_bytes_total{{role=\"received\"}} {}",
        totals.bytes_sent, totals.bytes_received
    );
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_last_test_bytes_per_second The rate of each client's last completed test, as the agent measured it.\n# TYPE wirespeed_agent_last_test_bytes_per_second gauge"
    );
    for (client, bps, _) in &totals.last {
        let _ = writeln!(
            out,
            "wirespeed_agent_last_test_bytes_per_second{{client=\"{}\"}} {}",
            escape(client),
            bps / 8.0
        );
    }
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_last_test_end_timestamp_seconds When each client's last completed test ended.\n# TYPE wirespeed_agent_last_test_end_timestamp_seconds gauge"
    );
    for (client, _, at) in &totals.last {
        let _ = writeln!(
            out,
            "wirespeed_agent_last_test_end_timestamp_seconds{{client=\"{}\"}} {at}",
            escape(client)
        );
    }
    let _ = writeln!(
        out,
        "# HELP wirespeed_agent_info The agent's version.\n# TYPE wirespeed_agent_info gauge\nwirespeed_agent_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    process_metrics(&mut out);
    out
}

/// Answers one connection: the page for `GET /metrics`, 404 for other paths, 405 for other
/// methods, nothing for a request that is too long, too slow or not HTTP.
fn answer(mut conn: TcpStream, render: &dyn Fn() -> String) {
    let _ = conn.set_read_timeout(Some(REQUEST_TIMEOUT));
    let _ = conn.set_write_timeout(Some(REQUEST_TIMEOUT));
    let deadline = std::time::Instant::now() + REQUEST_TIMEOUT;
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() >= REQUEST_MAX || std::time::Instant::now() > deadline {
            return;
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n.min(REQUEST_MAX - head.len())]),
        }
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, body, kind) = match (method, path) {
        ("GET", "/metrics") => (
            "200 OK",
            render(),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        ("GET", _) => (
            "404 Not Found",
            "wirespeed agent: the metrics are at /metrics\n".to_string(),
            "text/plain; charset=utf-8",
        ),
        _ => (
            "405 Method Not Allowed",
            "wirespeed agent: only GET /metrics\n".to_string(),
            "text/plain; charset=utf-8",
        ),
    };
    let _ = write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Serves the page on `listener` in a thread of its own, until the process ends.
pub(crate) fn spawn(
    listener: TcpListener,
    render: Arc<dyn Fn() -> String + Send + Sync>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for conn in listener.incoming() {
                match conn {
                    Ok(conn) => answer(conn, render.as_ref()),
                    // EMFILE and the like: the agent's own accept loop backs off too.
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        })
        .map(|_| ())
}

/// The shared state the agent's session log feeds and the page reads.
pub(crate) type Totals = Arc<Mutex<SessionTotals>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &[u8]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(request).unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    }

    #[test]
    fn metrics_path_answers_others_do_not_and_a_flood_is_cut() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        spawn(listener, Arc::new(|| "x_metric 1\n".to_string())).unwrap();
        let ok = get(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nx_metric 1\n"), "{ok}");
        assert!(get(addr, b"GET / HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        // 64 KiB without an end of headers: closed without an answer, and the next scrape works.
        let mut flood = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        flood.extend(std::iter::repeat_n(b'a', 64 * 1024));
        let mut c = TcpStream::connect(addr).unwrap();
        let _ = c.write_all(&flood);
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        assert!(out.is_empty(), "{out}");
        assert!(get(addr, b"GET /metrics HTTP/1.1\r\n\r\n").contains("x_metric 1"));
    }

    #[test]
    fn refusal_messages_fall_into_reasons() {
        assert_eq!(
            refusal_reason("refused by the agent: authentication failed (x)"),
            "authentication"
        );
        assert_eq!(
            refusal_reason("refused by the agent: -P 16 is over --max-streams 8"),
            "limit"
        );
        assert_eq!(refusal_reason("something else"), "other");
    }

    #[test]
    fn the_page_names_every_family_once() {
        let page = page(&AgentStats::default(), &SessionTotals::default());
        for family in [
            "wirespeed_agent_sessions ",
            "wirespeed_agent_refused_total ",
            "wirespeed_agent_test_bytes_total ",
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
        ] {
            assert_eq!(
                page.matches(&format!("# TYPE {family}")).count(),
                1,
                "{family} in {page}"
            );
        }
    }
}
