//! `wirespeed serve`: the agent, the far end of `wirespeed tcp` and `wirespeed udp`.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, ByteSize};
use wirespeed_net::agent::SessionRecord;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::load::consent::Cidr;
use wirespeed_net::metrics::{
    AgentRoutes, BearerToken, ListenerConfig, MetricsListener, Module, ProbeSettings, Prober,
    SessionTotals,
};
use wirespeed_net::{Agent, AgentConfig, Limits, daemon};

use wirespeed_net::control::DEFAULT_PORT;

#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (default: every IPv4 and IPv6 address).
    #[arg(long, short = 'B', value_name = "ADDR")]
    bind: Option<IpAddr>,

    /// Control and data port.
    #[arg(long, short = 'p', default_value_t = DEFAULT_PORT)]
    port: u16,

    /// Serve one session, then exit.
    #[arg(long, short = '1')]
    one_off: bool,

    /// Require clients to prove they hold this pre-shared key (HMAC-SHA256 challenge).
    #[arg(long, value_name = "FILE")]
    auth_key_file: Option<PathBuf>,

    /// Longest test a client may ask for.
    #[arg(long, default_value = "1h", value_parser = parse_duration, value_name = "DURATION")]
    max_duration: Duration,

    /// Highest UDP rate per stream (then -b 0, unlimited, is refused).
    #[arg(long, value_name = "RATE")]
    max_rate: Option<BitRate>,

    /// Sessions served at once.
    #[arg(long, default_value_t = 64, value_name = "N")]
    max_sessions: usize,

    /// Sessions one client address may hold at once (default: half of --max-sessions).
    #[arg(long, value_name = "N")]
    max_sessions_per_address: Option<usize>,

    /// Echo sessions (probe --udp) one client address may hold at once (default: a quarter
    /// of --max-sessions).
    #[arg(long, value_name = "N")]
    max_echo_per_address: Option<usize>,

    /// Consent datagrams (load tests' nonces, 20 a destination) this agent sends for one
    /// client address in a minute.
    #[arg(long, value_name = "N")]
    max_consent_datagrams: Option<u32>,

    /// Largest socket buffer (-w) a client may ask for.
    #[arg(long, value_name = "BYTES")]
    max_window: Option<ByteSize>,

    /// Most parallel streams (-P) per session.
    #[arg(long, default_value_t = 128, value_name = "N")]
    max_streams: u32,

    /// Let load tests send to these address blocks too (besides this agent's own address and
    /// its client's), when the destination is a wirespeed agent that proves it takes part in
    /// the test (docs/traffic-rules.md). Example: --allow-destination 198.18.0.0/15.
    #[arg(long, value_name = "CIDR", num_args = 1.., value_parser = parse_cidr)]
    allow_destination: Vec<Cidr>,

    /// How long a silent client is waited for.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    idle_timeout: Duration,

    /// How long a new connection has to complete its hello (and key challenge).
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DURATION")]
    handshake_timeout: Duration,

    /// Connections in their handshake at once; beyond it the one waiting longest is closed.
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_pending: usize,

    /// Memory budget of the whole agent (sessions, streams, buffers); tests over it are refused.
    #[arg(long, default_value = "1GiB", value_name = "BYTES")]
    max_memory: ByteSize,

    /// Log each finished session as one JSON object per line (wirespeed.serve.v1) on stdout.
    #[arg(long, short = 'J')]
    json: bool,

    /// Serve the agent's counters to Prometheus on http://ADDR:PORT/metrics, `/healthz` for
    /// the kubelet, and `/probe` with --probe-targets (docs/serve.md). Client addresses are
    /// shown only with --metrics-clients; --metrics-token-file requires a bearer token.
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_metrics_address)]
    metrics: Option<SocketAddr>,

    /// With --metrics: every page but /healthz needs `Authorization: Bearer TOKEN`, the
    /// token in this file (Prometheus' `authorization: credentials_file`).
    #[arg(long, value_name = "FILE", requires = "metrics")]
    metrics_token_file: Option<PathBuf>,

    /// With --metrics: show each client's address and last rate on /metrics.
    #[arg(long, requires = "metrics")]
    metrics_clients: bool,

    /// With --metrics: connections held at once; a newcomer beyond it closes the oldest one
    /// still sending its request.
    #[arg(long, default_value_t = 1024, value_name = "N", requires = "metrics")]
    metrics_max_connections: usize,

    /// With --metrics: let Prometheus run probes (/probe) from this agent to agents in these
    /// blocks (none by default). Example: --probe-targets 198.18.0.0/15.
    #[arg(long, value_name = "CIDR", num_args = 1.., value_parser = parse_cidr, requires = "metrics")]
    probe_targets: Vec<Cidr>,

    /// A probe module, NAME=KIND:DURATION (kinds tcp, rr, latency; at most 60 s); repeat it.
    /// Default: tcp_5s=tcp:5s, latency_10s=latency:10s, rr=rr:2s.
    #[arg(long = "probe-module", value_name = "NAME=KIND:DURATION", value_parser = Module::parse,
          requires = "probe_targets")]
    probe_modules: Vec<Module>,

    /// Probe modules from a file, one NAME=KIND:DURATION a line.
    #[arg(
        long,
        value_name = "FILE",
        requires = "probe_targets",
        conflicts_with = "probe_modules"
    )]
    probe_modules_file: Option<PathBuf>,

    /// Probes running at once; one more is answered 503.
    #[arg(
        long,
        default_value_t = 2,
        value_name = "N",
        requires = "probe_targets"
    )]
    probe_max: usize,

    /// Listen with Multipath TCP (RFC 8684), so that clients' `tcp --mptcp` data connections
    /// run MPTCP end to end; plain TCP clients are served as before.
    #[arg(long)]
    mptcp: bool,

    /// Run one test at a time: a test that arrives while another runs waits in a queue and
    /// starts when it ends (tests are told apart by the client's address).
    #[arg(long)]
    exclusive: bool,

    /// With --exclusive: tests that may wait at once; one more is refused.
    #[arg(long, default_value_t = 16, value_name = "N", requires = "exclusive")]
    queue_max: usize,

    /// Also answer iperf3 3.x clients (`iperf3 -c`) on PORT (TCP and UDP; default 5201),
    /// one test at a time as iperf3's own server does, under this agent's limits and memory
    /// budget; data streams are taken only from the test's own client (docs/iperf3.md).
    #[arg(long, value_name = "PORT", num_args = 0..=1,
          default_missing_value = "5201")]
    iperf3: Option<u16>,

    /// With --exclusive: the longest a test waits before it is refused.
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "DURATION",
          requires = "exclusive")]
    queue_timeout: std::time::Duration,

    /// Run in the background, detached from the terminal (iperf3's -D): the agent binds its
    /// ports, prints where it listens and its pid, and the command returns; the session log
    /// goes to --logfile, or nowhere. Stop it with `kill PID` (SIGTERM).
    #[arg(long, short = 'D')]
    daemon: bool,

    /// Write the agent's pid to FILE (replaced whole) once its ports are bound, and remove it
    /// when the agent stops; refused if FILE names a process that runs (iperf3's -I).
    #[arg(long, short = 'I', value_name = "FILE")]
    pidfile: Option<PathBuf>,

    /// Append the session log and the agent's notices to FILE (created with mode 0640)
    /// instead of writing them to the terminal.
    #[arg(long, value_name = "FILE")]
    logfile: Option<PathBuf>,
}

fn parse_cidr(text: &str) -> Result<Cidr, String> {
    text.parse()
}

/// `--metrics ADDR:PORT`. An address that is missing is refused, never read as "every
/// address": in a manifest the address comes from a variable (`$(POD_IP):9210`), and a variable
/// that expanded to nothing (a node without an address) leaves `:9210`, which a bind would
/// take as all of the host's addresses, the metrics and `/probe` then open on interfaces
/// the operator never chose.
fn parse_metrics_address(text: &str) -> Result<SocketAddr, String> {
    let host = match text.rsplit_once(':') {
        Some((host, _)) => host,
        None => text,
    };
    if host.contains("$(") || host.contains("${") {
        return Err(format!(
            "'{text}': the address is a variable that was never expanded ({host}): the shell or the kubelet did not substitute it; give the address itself (e.g. --metrics 127.0.0.1:9210)"
        ));
    }
    if host.trim().is_empty() {
        return Err(format!(
            "'{text}': there is no address before the port: a variable meant to give it expanded to nothing (in Kubernetes, $(POD_IP) of a pod on a node without an address); give the address to listen on (e.g. --metrics 127.0.0.1:9210, or 0.0.0.0:9210 for every address on purpose)"
        ));
    }
    text.parse().map_err(|_| {
        format!("'{text}' is not an address and port: give ADDR:PORT with a numeric address (e.g. --metrics 127.0.0.1:9210 or [::1]:9210)")
    })
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
    let value = serde_json::json!({
        "schema": "wirespeed.serve.v1",
        "wirespeed_version": env!("CARGO_PKG_VERSION"),
        "session": r,
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    // The pid and log files are checked before any port is taken: a second agent started on
    // the same pid file is refused before it competes for the first one's ports.
    let pidfile = args
        .pidfile
        .as_deref()
        .map(daemon::check_pid_file)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--pidfile {e}"))?;
    let logfile = args
        .logfile
        .as_deref()
        .map(|path| {
            daemon::open_log(path).map_err(|e| {
                anyhow::anyhow!(
                    "--logfile {}: cannot append to it ({e}); give a file in a writable directory",
                    path.display()
                )
            })
        })
        .transpose()?;
    if let Some(p) = args.iperf3
        && p == args.port
        && p != 0
    {
        anyhow::bail!(
            "--iperf3 {p} is the agent's own port (-p): give iperf3 another one (iperf3's is 5201)"
        );
    }
    // The metrics port is taken first: a port in use is refused before the agent listens.
    let metrics = args
        .metrics
        .map(|addr| {
            std::net::TcpListener::bind(addr).map_err(|e| {
                anyhow::anyhow!("--metrics {addr}: cannot listen there ({e}); pick another port")
            })
        })
        .transpose()?;
    let totals = Arc::new(std::sync::Mutex::new(SessionTotals::default()));
    let bearer = args
        .metrics_token_file
        .as_deref()
        .map(BearerToken::from_file)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let probe_modules = match &args.probe_modules_file {
        Some(file) => Module::from_file(file).map_err(anyhow::Error::msg)?,
        None if args.probe_modules.is_empty() => Module::defaults(),
        None => {
            wirespeed_net::metrics::probe::check_modules(&args.probe_modules)
                .map_err(|e| anyhow::anyhow!("--probe-module: {e}"))?;
            args.probe_modules.clone()
        }
    };
    if args.probe_max == 0 || args.metrics_max_connections == 0 {
        anyhow::bail!("--probe-max and --metrics-max-connections must be at least 1");
    }
    let auth = args
        .auth_key_file
        .as_deref()
        .map(AuthKey::from_file)
        .transpose()?;
    // The agent's key, also used toward the targets of /probe.
    let auth_for_probes = auth.clone();
    let config = AgentConfig {
        limits: Limits {
            max_duration: args.max_duration,
            max_rate_bits_per_second: args.max_rate.map(BitRate::bits_per_second),
            max_sessions: args.max_sessions,
            max_window_bytes: args.max_window.map(ByteSize::bytes),
            max_streams: args.max_streams,
            max_pending: args.max_pending,
            max_memory_bytes: args.max_memory.bytes(),
            max_sessions_per_address: args.max_sessions_per_address,
            max_echo_per_address: args.max_echo_per_address,
            max_consent_datagrams: args.max_consent_datagrams,
        },
        auth,
        idle_timeout: args.idle_timeout,
        handshake_timeout: args.handshake_timeout,
        on_notice: Some(Arc::new(|line: &str| eprintln!("wirespeed agent: {line}"))),
        one_off: args.one_off,
        handle_signals: true,
        on_session: Some({
            let totals = totals.clone();
            let json = args.json;
            Arc::new(move |r: &SessionRecord| {
                if let Ok(mut t) = totals.lock() {
                    t.record(r);
                }
                if json { log_json(r) } else { log_text(r) }
            })
        }),
        allow_destinations: args.allow_destination.clone(),
        mptcp: args.mptcp,
        exclusive: args
            .exclusive
            .then_some(wirespeed_net::agent_config::Exclusive {
                queue_max: args.queue_max,
                queue_timeout: args.queue_timeout,
            }),
    };
    config.check().map_err(anyhow::Error::msg)?;
    // The iperf3 service keeps the agent's limits, timeouts and session log (its records say
    // `iperf3`; the metrics count its tests from the service's own counts, not these), not
    // its key.
    let config_for_iperf3 = AgentConfig {
        on_session: Some({
            let json = args.json;
            Arc::new(move |r: &SessionRecord| if json { log_json(r) } else { log_text(r) })
        }),
        on_notice: None,
        auth: None,
        one_off: false,
        ..config.clone()
    };
    let addr = SocketAddr::new(
        args.bind.unwrap_or("::".parse().expect("an address")),
        args.port,
    );
    let agent = match Agent::bind(addr, config.clone()) {
        Err(e) if args.bind.is_none() && e.kind() != std::io::ErrorKind::AddrInUse => {
            // No IPv6 on this host: IPv4 only.
            Agent::bind(
                SocketAddr::new("0.0.0.0".parse().expect("an address"), args.port),
                config,
            )
        }
        other => other,
    }
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrNotAvailable {
            // EADDRNOTAVAIL: the -B address belongs to no interface of this host.
            anyhow::anyhow!(
                "-B {}: not an address of this host; give one of its own addresses, or leave -B out to listen on all",
                addr.ip()
            )
        } else if e.kind() == std::io::ErrorKind::AddrInUse {
            anyhow::anyhow!(
                "cannot listen on port {}: it is in use (is another agent running? pick one with -p)",
                args.port
            )
        } else {
            anyhow::Error::new(e).context(format!("cannot listen on {addr}"))
        }
    })?;
    let local = agent.local_addr()?;
    // iperf3's service, beside the agent on the same address, drawing on its memory budget.
    let iperf3_server = match args.iperf3 {
        Some(port) => Some(bind_iperf3(&agent, local, port, &config_for_iperf3)?),
        None => None,
    };
    // Every port is bound and every flag checked: a daemon detaches now, before any thread
    // starts, and the process that was started says where it listens and returns.
    let _pid_guard = match (&pidfile, args.daemon) {
        (_, true) => {
            let iperf3_at = iperf3_server.as_ref().map(|(_, at)| *at);
            let metrics_at = metrics.as_ref().and_then(|l| l.local_addr().ok());
            match daemon::detach(logfile.as_ref()).context("--daemon")? {
                daemon::Detached::Parent { daemon: pid } => {
                    if let Some(path) = &pidfile
                        && let Err(e) = daemon::write_pid_file(path, pid)
                    {
                        let _ = rustix::process::kill_process(
                            rustix::process::Pid::from_raw(pid as i32).expect("a child's pid"),
                            rustix::process::Signal::TERM,
                        );
                        anyhow::bail!("--pidfile {e}");
                    }
                    announce_daemon(&args, local, iperf3_at, metrics_at, pid);
                    // No destructor runs here: the sockets are the daemon's too.
                    std::process::exit(0);
                }
                daemon::Detached::Daemon => pidfile
                    .clone()
                    .map(|path| daemon::PidFileGuard::new(path, std::process::id())),
            }
        }
        (Some(path), false) => {
            if let Some(log) = &logfile {
                daemon::redirect_output(log).context("--logfile")?;
            }
            daemon::write_pid_file(path, std::process::id())
                .map_err(|e| anyhow::anyhow!("--pidfile {e}"))?;
            Some(daemon::PidFileGuard::new(path.clone(), std::process::id()))
        }
        (None, false) => {
            if let Some(log) = &logfile {
                daemon::redirect_output(log).context("--logfile")?;
            }
            None
        }
    };
    let iperf3 = match iperf3_server {
        Some((server, at)) => {
            let (handle, thread) = server.spawn()?;
            Some((handle, thread, at))
        }
        None => None,
    };
    let iperf3_handle = iperf3.as_ref().map(|(h, _, _)| h.clone());
    // Held until the agent stops: dropping it stops the listener.
    let mut _metrics_listener = None;
    if let Some(listener) = metrics {
        let handle = agent.handle();
        let iperf3_handle = iperf3_handle.clone();
        let config = ListenerConfig {
            max_connections: args.metrics_max_connections,
            bearer,
            ..ListenerConfig::default()
        };
        let prober = (!args.probe_targets.is_empty()).then(|| {
            Prober::new(ProbeSettings {
                modules: probe_modules,
                targets: args.probe_targets.clone(),
                max_at_once: args.probe_max,
                auth: auth_for_probes.clone(),
                default_port: DEFAULT_PORT,
            })
        });
        let routes = AgentRoutes {
            stats: Box::new(move || {
                let mut s = handle.stats();
                s.iperf3 = iperf3_handle.as_ref().map(|h| h.stats().counts());
                s
            }),
            totals: totals.clone(),
            listener: config.stats.clone(),
            show_clients: args.metrics_clients,
            prober,
        };
        let l = MetricsListener::spawn(listener, config, Arc::new(routes))?;
        eprintln!(
            "wirespeed agent: metrics on http://{}/metrics",
            l.local_addr()
        );
        _metrics_listener = Some(l);
    }
    if args.json {
        log_json_start(local, iperf3.as_ref().map(|(_, _, at)| *at));
    } else {
        let mptcp = if args.mptcp { ", Multipath TCP" } else { "" };
        let stop = if args.daemon {
            "SIGTERM stops it"
        } else {
            "Ctrl-C stops it"
        };
        say(&format!(
            "wirespeed agent listening on {local} (control and data{mptcp}); {stop}"
        ));
        if let Some((_, _, at)) = &iperf3 {
            say(&format!(
                "wirespeed agent answering iperf3 clients on {at} (TCP and UDP), one test at a time"
            ));
        }
    }
    let served = agent.serve().context("serving");
    // The iperf3 service ends with the agent, whatever ended it.
    if let Some((handle, thread, _)) = iperf3 {
        handle.stop();
        let _ = thread.join();
    }
    served?;
    if !args.json {
        say("wirespeed agent stopped");
    }
    Ok(())
}

/// The iperf3 service bound on the agent's address at `port`; it serves once spawned.
fn bind_iperf3(
    agent: &Agent,
    agent_addr: SocketAddr,
    port: u16,
    config: &AgentConfig,
) -> anyhow::Result<(wirespeed_net::iperf3::server::Server, SocketAddr)> {
    let at = SocketAddr::new(agent_addr.ip(), port);
    let server = wirespeed_net::iperf3::server::Server::bind(at, config.clone())
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                anyhow::anyhow!(
                    "--iperf3 {port}: the port is in use (is iperf3 -s running?); pick another with --iperf3 PORT"
                )
            } else {
                anyhow::anyhow!("--iperf3 {port}: cannot listen on {at} ({e})")
            }
        })?
        .share_budget(agent.memory_budget())
        .share_sessions(agent.session_slots());
    let bound = server.local_addr()?;
    Ok((server, bound))
}

/// What the command that started a daemon prints before it returns: where the agent listens,
/// as the foreground agent says it, and the daemon's pid.
fn announce_daemon(
    args: &ServeArgs,
    local: SocketAddr,
    iperf3: Option<SocketAddr>,
    metrics: Option<SocketAddr>,
    pid: u32,
) {
    if args.json {
        let mut value = start_document(local, iperf3);
        value["daemon_pid"] = pid.into();
        if let Some(m) = metrics {
            value["metrics_listening"] = m.to_string().into();
        }
        say(&value.to_string());
        return;
    }
    say(&format!(
        "wirespeed agent listening on {local} (control and data), in the background as pid {pid}; `kill {pid}` stops it"
    ));
    if let Some(at) = iperf3 {
        say(&format!("wirespeed agent answering iperf3 clients on {at}"));
    }
    if let Some(m) = metrics {
        say(&format!("wirespeed agent: metrics on http://{m}/metrics"));
    }
    if let Some(log) = &args.logfile {
        say(&format!("session log: {}", log.display()));
    }
}

/// A line on stdout that nobody may be reading any more: a script that read the "listening"
/// line and closed the pipe must not make the agent panic on its last words.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

fn start_document(local: SocketAddr, iperf3: Option<SocketAddr>) -> serde_json::Value {
    let mut value = serde_json::json!({
        "schema": "wirespeed.serve.v1",
        "wirespeed_version": env!("CARGO_PKG_VERSION"),
        "listening": local.to_string(),
    });
    if let Some(at) = iperf3 {
        value["iperf3_listening"] = at.to_string().into();
    }
    value
}

fn log_json_start(local: SocketAddr, iperf3: Option<SocketAddr>) {
    say(&start_document(local, iperf3).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(argv: &[&str]) -> Result<ServeArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("serve").chain(argv.iter().copied()))
            .map(|w| w.args)
    }

    #[test]
    fn limits_parse_with_units() {
        let a = parse(&[
            "--max-duration",
            "30s",
            "--max-rate",
            "100M",
            "--max-window",
            "1MiB",
            "-1",
        ])
        .unwrap();
        assert_eq!(a.max_duration, Duration::from_secs(30));
        assert_eq!(a.max_rate.unwrap().bits_per_second(), 100_000_000);
        assert_eq!(a.max_window.unwrap().bytes(), 1 << 20);
        assert!(a.one_off);
        assert_eq!(parse(&[]).unwrap().port, DEFAULT_PORT);
        assert!(parse(&["--max-rate", "fast"]).is_err());
    }

    #[test]
    fn iperf3_port_defaults_to_5201_when_bare() {
        assert_eq!(parse(&[]).unwrap().iperf3, None);
        assert_eq!(parse(&["--iperf3"]).unwrap().iperf3, Some(5201));
        assert_eq!(parse(&["--iperf3", "15201"]).unwrap().iperf3, Some(15201));
        assert!(parse(&["--iperf3", "x"]).is_err());
    }

    #[test]
    fn hostile_peer_limits_parse_with_defaults() {
        let d = parse(&[]).unwrap();
        assert_eq!(d.handshake_timeout, Duration::from_secs(5));
        assert_eq!(d.max_pending, 256);
        assert_eq!(d.max_memory.bytes(), 1 << 30);
        let a = parse(&[
            "--handshake-timeout",
            "500ms",
            "--max-pending",
            "8",
            "--max-memory",
            "64MiB",
        ])
        .unwrap();
        assert_eq!(a.handshake_timeout, Duration::from_millis(500));
        assert_eq!(a.max_pending, 8);
        assert_eq!(a.max_memory.bytes(), 64 << 20);
        assert!(parse(&["--max-memory", "lots"]).is_err());
    }

    #[test]
    fn allowed_destinations_parse_as_blocks() {
        let a = parse(&["--allow-destination", "198.18.0.0/15", "2001:2::/48", "-1"]).unwrap();
        let shown: Vec<String> = a
            .allow_destination
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(shown, ["198.18.0.0/15", "2001:2::/48"]);
        assert!(parse(&[]).unwrap().allow_destination.is_empty());
        let e = parse(&["--allow-destination", "198.18.0.0/99"]).unwrap_err();
        assert!(e.to_string().contains("examples: 198.18.0.0/15"), "{e}");
    }
}
