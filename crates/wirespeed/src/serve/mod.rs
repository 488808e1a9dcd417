//! `wirespeed serve`: the agent, the far end of `wirespeed tcp` and `wirespeed udp`.
//!
//! The command's shape: the flags and their checked [`Config`] here (every file read and every
//! flag checked before a port is taken); the `wirespeed.serve.v1` lines in `result.rs`; the
//! agent bound, placed (daemon or foreground) and served in `agent.rs`, which writes nothing
//! itself; and what the agent says (where it listens, the session log) in `text.rs`.

use std::fs::File;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, ByteSize};
use wirespeed_net::agent::SessionRecord;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::load::consent::Cidr;
use wirespeed_net::metrics::{BearerToken, ListenerConfig, Module, ProbeSettings};
use wirespeed_net::{AgentConfig, Limits, daemon};

use wirespeed_net::control::DEFAULT_PORT;

mod agent;
mod result;
mod text;

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct ServeArgs {
    /// Address to listen on (default: every IPv4 and IPv6 address).
    #[arg(long, short = 'B', value_name = "ADDR")]
    bind: Option<IpAddr>,

    /// Control and data port.
    #[arg(long, short = 'p', default_value_t = DEFAULT_PORT)]
    pub port: u16,

    /// Serve one session, then exit.
    #[arg(long, short = '1')]
    pub one_off: bool,

    /// Require clients to prove they hold this pre-shared key (HMAC-SHA256 challenge).
    #[arg(long, value_name = "FILE")]
    auth_key_file: Option<PathBuf>,

    /// Longest test a client may ask for.
    #[arg(long, default_value = "1h", value_parser = parse_duration, value_name = "DURATION")]
    pub max_duration: Duration,

    /// Highest UDP rate per stream (then -b 0, unlimited, is refused).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<BitRate>,

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
    pub max_window: Option<ByteSize>,

    /// Most parallel streams (-P) per session.
    #[arg(long, default_value_t = 128, value_name = "N")]
    max_streams: u32,

    /// Let load tests send to these address blocks too (besides this agent's own address and
    /// its client's), when the destination is a wirespeed agent that proves it takes part in
    /// the test (docs/traffic-rules.md). Example: --allow-destination 198.18.0.0/15.
    #[arg(long, value_name = "CIDR", num_args = 1.., value_parser = parse_cidr)]
    pub allow_destination: Vec<Cidr>,

    /// How long a silent client is waited for.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    idle_timeout: Duration,

    /// How long a new connection has to complete its hello (and key challenge).
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DURATION")]
    pub handshake_timeout: Duration,

    /// Connections in their handshake at once; beyond it the one waiting longest is closed.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_pending: usize,

    /// Memory budget of the whole agent (sessions, streams, buffers); tests over it are refused.
    #[arg(long, default_value = "1GiB", value_name = "BYTES")]
    pub max_memory: ByteSize,

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
    pub iperf3: Option<u16>,

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

/// The metrics listener `--metrics` asks for, its flags checked.
#[derive(Clone)]
pub(crate) struct MetricsConfig {
    pub(crate) address: SocketAddr,
    pub(crate) max_connections: usize,
    pub(crate) bearer: Option<BearerToken>,
    pub(crate) show_clients: bool,
    /// `/probe`, when `--probe-targets` allows it.
    pub(crate) probes: Option<ProbeSettings>,
}

impl MetricsConfig {
    /// The listener's settings, with fresh counts.
    pub(crate) fn listener(&self) -> ListenerConfig {
        ListenerConfig {
            max_connections: self.max_connections,
            bearer: self.bearer.clone(),
            ..ListenerConfig::default()
        }
    }
}

/// What `serve` runs, every flag and file checked: the agent's own settings (its limits and
/// key; the session log is attached when it runs), where it listens, the metrics listener,
/// the iperf3 service's port, and how the process is kept (daemon, pid file, log file).
pub(crate) struct Config {
    pub(crate) bind: Option<IpAddr>,
    pub(crate) port: u16,
    pub(crate) agent: AgentConfig,
    pub(crate) json: bool,
    pub(crate) metrics: Option<MetricsConfig>,
    pub(crate) iperf3: Option<u16>,
    pub(crate) daemon: bool,
    /// `--pidfile`, checked: it names no process that runs.
    pub(crate) pidfile: Option<PathBuf>,
    /// `--logfile` and the file opened for appending.
    pub(crate) logfile: Option<(PathBuf, File)>,
}

impl ServeArgs {
    /// Every flag checked and every file read, before any port is taken: the pid and log files
    /// first, so that a second agent started on the same pid file is refused before it
    /// competes for the first one's ports.
    pub(crate) fn config(&self) -> anyhow::Result<Config> {
        let pidfile = self
            .pidfile
            .as_deref()
            .map(daemon::check_pid_file)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--pidfile {e}"))?;
        let logfile = self
            .logfile
            .as_deref()
            .map(|path| {
                daemon::open_log(path)
                    .map(|file| (path.to_path_buf(), file))
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "--logfile {}: cannot append to it ({e}); give a file in a writable directory",
                            path.display()
                        )
                    })
            })
            .transpose()?;
        if let Some(p) = self.iperf3
            && p == self.port
            && p != 0
        {
            anyhow::bail!(
                "--iperf3 {p} is the agent's own port (-p): give iperf3 another one (iperf3's is 5201)"
            );
        }
        let mut metrics = self.metrics_config()?;
        let auth = self
            .auth_key_file
            .as_deref()
            .map(AuthKey::from_file)
            .transpose()?;
        // The agent's key, also used toward the targets of /probe.
        if let Some(probes) = metrics.as_mut().and_then(|m| m.probes.as_mut()) {
            probes.auth = auth.clone();
        }
        let agent = self.agent_config(auth);
        agent.check().map_err(anyhow::Error::msg)?;
        Ok(Config {
            bind: self.bind,
            port: self.port,
            agent,
            json: self.json,
            metrics,
            iperf3: self.iperf3,
            daemon: self.daemon,
            pidfile,
            logfile,
        })
    }

    /// The metrics listener's settings: its token, and `/probe`'s modules and targets (the
    /// probes' key, the agent's, is added when it is read).
    fn metrics_config(&self) -> anyhow::Result<Option<MetricsConfig>> {
        let bearer = self
            .metrics_token_file
            .as_deref()
            .map(BearerToken::from_file)
            .transpose()
            .map_err(anyhow::Error::msg)?;
        let probe_modules = match &self.probe_modules_file {
            Some(file) => Module::from_file(file).map_err(anyhow::Error::msg)?,
            None if self.probe_modules.is_empty() => Module::defaults(),
            None => {
                wirespeed_net::metrics::probe::check_modules(&self.probe_modules)
                    .map_err(|e| anyhow::anyhow!("--probe-module: {e}"))?;
                self.probe_modules.clone()
            }
        };
        if self.probe_max == 0 || self.metrics_max_connections == 0 {
            anyhow::bail!("--probe-max and --metrics-max-connections must be at least 1");
        }
        Ok(self.metrics.map(|address| MetricsConfig {
            address,
            max_connections: self.metrics_max_connections,
            bearer,
            show_clients: self.metrics_clients,
            probes: (!self.probe_targets.is_empty()).then(|| ProbeSettings {
                modules: probe_modules,
                targets: self.probe_targets.clone(),
                max_at_once: self.probe_max,
                auth: None,
                default_port: DEFAULT_PORT,
            }),
        }))
    }

    /// The agent's limits, key and timeouts; its session log is attached when it runs.
    fn agent_config(&self, auth: Option<AuthKey>) -> AgentConfig {
        AgentConfig {
            limits: Limits {
                max_duration: self.max_duration,
                max_rate_bits_per_second: self.max_rate.map(BitRate::bits_per_second),
                max_sessions: self.max_sessions,
                max_window_bytes: self.max_window.map(ByteSize::bytes),
                max_streams: self.max_streams,
                max_pending: self.max_pending,
                max_memory_bytes: self.max_memory.bytes(),
                max_sessions_per_address: self.max_sessions_per_address,
                max_echo_per_address: self.max_echo_per_address,
                max_consent_datagrams: self.max_consent_datagrams,
            },
            auth,
            idle_timeout: self.idle_timeout,
            handshake_timeout: self.handshake_timeout,
            on_notice: Some(Arc::new(|line: &str| eprintln!("wirespeed agent: {line}"))),
            one_off: self.one_off,
            handle_signals: true,
            on_session: None,
            allow_destinations: self.allow_destination.clone(),
            mptcp: self.mptcp,
            exclusive: self
                .exclusive
                .then_some(wirespeed_net::agent_config::Exclusive {
                    queue_max: self.queue_max,
                    queue_timeout: self.queue_timeout,
                }),
        }
    }
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = args.config()?;
    let json = config.json;
    let log = Arc::new(move |r: &SessionRecord| text::log_session(json, r));
    let bound = agent::bind(&config, log)?;
    let _pid_guard = match agent::place(&config)? {
        agent::Placement::Serving(guard) => guard,
        agent::Placement::StartedDaemon(pid) => {
            text::announce_daemon(
                json,
                &text::DaemonStarted {
                    local: bound.local,
                    iperf3: bound.iperf3_at(),
                    metrics: bound.metrics_at(),
                    logfile: config.logfile.as_ref().map(|(path, _)| path.as_path()),
                    pid,
                },
            );
            // No destructor runs here: the sockets are the daemon's too.
            std::process::exit(0);
        }
    };
    let local = bound.local;
    let running = agent::start(&config, bound, |at| {
        eprintln!("wirespeed agent: metrics on http://{at}/metrics");
    })?;
    text::announce_listening(
        json,
        local,
        running.iperf3_at(),
        config.agent.mptcp,
        config.daemon,
    );
    agent::serve(running)?;
    if !json {
        text::say("wirespeed agent stopped");
    }
    Ok(())
}
