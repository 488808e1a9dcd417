//! What `serve` writes: where it listens, the session log (a line of text or of
//! `wirespeed.serve.v1` JSON per finished session), and what a command that started a daemon
//! says before it returns.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use wirespeed_net::agent::SessionRecord;

use super::result::{Listening, SCHEMA, SessionLine};

/// A line on stdout that nobody may be reading any more: a script that read the "listening"
/// line and closed the pipe must not make the agent panic on its last words.
pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// One finished session, as text or as a JSON line.
pub(crate) fn log_session(json: bool, r: &SessionRecord) {
    if json { log_json(r) } else { log_text(r) }
}

fn log_text(r: &SessionRecord) {
    let what = match (&r.spec, r.outcome) {
        (Some(spec), "completed") => {
            let bytes: u64 = r
                .report
                .as_ref()
                .map_or(0, |rep| rep.streams.iter().map(|s| s.bytes).sum());
            format!(
                "completed: {:?} {:?}, {} stream(s), {bytes} bytes at this end",
                spec.protocol, spec.direction, spec.streams
            )
        }
        _ => format!("{}: {}", r.outcome, r.message.as_deref().unwrap_or("")),
    };
    let mut out = std::io::stdout().lock();
    let queued = r
        .queued_seconds
        .map_or(String::new(), |q| format!(", after {q:.2} s in the queue"));
    let protocol = r.protocol.map_or(String::new(), |p| format!("{p} "));
    let _ = writeln!(
        out,
        "{protocol}session {} from {} {what} ({:.2} s{queued})",
        r.session, r.peer, r.seconds
    );
}

fn log_json(r: &SessionRecord) {
    let line = SessionLine {
        schema: SCHEMA,
        session: r,
        wirespeed_version: env!("CARGO_PKG_VERSION"),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", json_line(&line));
    let _ = out.flush();
}

fn listening_line(local: SocketAddr, iperf3: Option<SocketAddr>) -> Listening {
    Listening {
        daemon_pid: None,
        iperf3_listening: iperf3.map(|at| at.to_string()),
        listening: local.to_string(),
        metrics_listening: None,
        schema: SCHEMA,
        wirespeed_version: env!("CARGO_PKG_VERSION"),
    }
}

/// A line of the log as JSON, through a `serde_json::Value` so that every object's keys are
/// sorted, as they have always been written.
fn json_line(line: &impl serde::Serialize) -> String {
    serde_json::to_value(line)
        .expect("a line of the log serializes")
        .to_string()
}

/// Where the agent in the foreground listens, once every port is bound.
pub(crate) fn announce_listening(
    json: bool,
    local: SocketAddr,
    iperf3: Option<SocketAddr>,
    mptcp: bool,
    daemon: bool,
) {
    if json {
        say(&json_line(&listening_line(local, iperf3)));
        return;
    }
    let mptcp = if mptcp { ", Multipath TCP" } else { "" };
    let stop = if daemon {
        "SIGTERM stops it"
    } else {
        "Ctrl-C stops it"
    };
    say(&format!(
        "wirespeed agent listening on {local} (control and data{mptcp}); {stop}"
    ));
    if let Some(at) = iperf3 {
        say(&format!(
            "wirespeed agent answering iperf3 clients on {at} (TCP and UDP), one test at a time"
        ));
    }
}

/// Where a daemon's agent listens: what the command that started it prints before it
/// returns, as the foreground agent says it, and the daemon's pid.
pub(crate) struct DaemonStarted<'a> {
    pub(crate) local: SocketAddr,
    pub(crate) iperf3: Option<SocketAddr>,
    pub(crate) metrics: Option<SocketAddr>,
    pub(crate) logfile: Option<&'a Path>,
    pub(crate) pid: u32,
}

pub(crate) fn announce_daemon(json: bool, d: &DaemonStarted) {
    let pid = d.pid;
    if json {
        let line = Listening {
            daemon_pid: Some(pid),
            metrics_listening: d.metrics.map(|m| m.to_string()),
            ..listening_line(d.local, d.iperf3)
        };
        say(&json_line(&line));
        return;
    }
    say(&format!(
        "wirespeed agent listening on {} (control and data), in the background as pid {pid}; `kill {pid}` stops it",
        d.local
    ));
    if let Some(at) = d.iperf3 {
        say(&format!("wirespeed agent answering iperf3 clients on {at}"));
    }
    if let Some(m) = d.metrics {
        say(&format!("wirespeed agent: metrics on http://{m}/metrics"));
    }
    if let Some(log) = d.logfile {
        say(&format!("session log: {}", log.display()));
    }
}
