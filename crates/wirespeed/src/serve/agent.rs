//! The agent run from a checked [`Config`]: its ports bound (the metrics port first, then the
//! agent's, then iperf3's beside it), the process detached or kept in the foreground, the
//! metrics listener and the iperf3 service started, and the sessions served until a signal or
//! `--one-off` ends them. It writes nothing itself: the session log is the one it is handed.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;
use wirespeed_net::agent_config::SessionLog;
use wirespeed_net::iperf3::server::{Handle as Iperf3Handle, Server as Iperf3Server};
use wirespeed_net::metrics::{AgentRoutes, MetricsListener, Prober, SessionTotals};
use wirespeed_net::{Agent, AgentConfig, daemon};

use super::Config;

/// The agent's ports, bound and not yet served.
pub(crate) struct Bound {
    pub(crate) agent: Agent,
    pub(crate) local: SocketAddr,
    iperf3: Option<(Iperf3Server, SocketAddr)>,
    metrics: Option<TcpListener>,
    totals: Arc<Mutex<SessionTotals>>,
}

impl Bound {
    pub(crate) fn iperf3_at(&self) -> Option<SocketAddr> {
        self.iperf3.as_ref().map(|(_, at)| *at)
    }

    pub(crate) fn metrics_at(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }
}

/// Binds every port the agent serves on, `log` writing each finished session.
pub(crate) fn bind(config: &Config, log: SessionLog) -> anyhow::Result<Bound> {
    // The metrics port is taken first: a port in use is refused before the agent listens.
    let metrics = config
        .metrics
        .as_ref()
        .map(|m| {
            TcpListener::bind(m.address).map_err(|e| {
                anyhow::anyhow!(
                    "--metrics {}: cannot listen there ({e}); pick another port",
                    m.address
                )
            })
        })
        .transpose()?;
    let totals = Arc::new(Mutex::new(SessionTotals::default()));
    let agent_config = AgentConfig {
        on_session: Some({
            let totals = totals.clone();
            let log = log.clone();
            Arc::new(move |r: &wirespeed_net::agent::SessionRecord| {
                if let Ok(mut t) = totals.lock() {
                    t.record(r);
                }
                log(r)
            })
        }),
        ..config.agent.clone()
    };
    // The iperf3 service keeps the agent's limits, timeouts and session log (its records say
    // `iperf3`; the metrics count its tests from the service's own counts, not these), not
    // its key.
    let config_for_iperf3 = AgentConfig {
        on_session: Some(log),
        on_notice: None,
        auth: None,
        one_off: false,
        ..config.agent.clone()
    };
    let agent = bind_agent(config, agent_config)?;
    let local = agent.local_addr()?;
    // iperf3's service, beside the agent on the same address, drawing on its memory budget.
    let iperf3 = match config.iperf3 {
        Some(port) => Some(bind_iperf3(&agent, local, port, &config_for_iperf3)?),
        None => None,
    };
    Ok(Bound {
        agent,
        local,
        iperf3,
        metrics,
        totals,
    })
}

/// The agent's listener on `-B` (or every IPv6 and IPv4 address, IPv4 only on a host without
/// IPv6), its failures said in the flags' words.
fn bind_agent(config: &Config, agent_config: AgentConfig) -> anyhow::Result<Agent> {
    let addr = SocketAddr::new(
        config.bind.unwrap_or("::".parse().expect("an address")),
        config.port,
    );
    match Agent::bind(addr, agent_config.clone()) {
        Err(e) if config.bind.is_none() && e.kind() != std::io::ErrorKind::AddrInUse => {
            // No IPv6 on this host: IPv4 only.
            Agent::bind(
                SocketAddr::new("0.0.0.0".parse().expect("an address"), config.port),
                agent_config,
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
                config.port
            )
        } else {
            anyhow::Error::new(e).context(format!("cannot listen on {addr}"))
        }
    })
}

/// The iperf3 service bound on the agent's address at `port`; it serves once spawned.
fn bind_iperf3(
    agent: &Agent,
    agent_addr: SocketAddr,
    port: u16,
    config: &AgentConfig,
) -> anyhow::Result<(Iperf3Server, SocketAddr)> {
    let at = SocketAddr::new(agent_addr.ip(), port);
    let server = Iperf3Server::bind(at, config.clone())
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

/// Where this process goes once every port is bound.
pub(crate) enum Placement {
    /// It serves, holding the pid file's guard when there is one.
    Serving(Option<daemon::PidFileGuard>),
    /// It started the daemon (this pid), whose pid file is written: it says so and returns.
    StartedDaemon(u32),
}

/// Every port is bound and every flag checked: a daemon detaches now, before any thread
/// starts; otherwise the log goes to `--logfile` and the pid to `--pidfile`.
pub(crate) fn place(config: &Config) -> anyhow::Result<Placement> {
    let log = config.logfile.as_ref().map(|(_, file)| file);
    if config.daemon {
        return match daemon::detach(log).context("--daemon")? {
            daemon::Detached::Parent { daemon: pid } => {
                if let Some(path) = &config.pidfile
                    && let Err(e) = daemon::write_pid_file(path, pid)
                {
                    let _ = rustix::process::kill_process(
                        rustix::process::Pid::from_raw(pid as i32).expect("a child's pid"),
                        rustix::process::Signal::TERM,
                    );
                    anyhow::bail!("--pidfile {e}");
                }
                Ok(Placement::StartedDaemon(pid))
            }
            daemon::Detached::Daemon => {
                Ok(Placement::Serving(config.pidfile.clone().map(|path| {
                    daemon::PidFileGuard::new(path, std::process::id())
                })))
            }
        };
    }
    redirect_to(log)?;
    let Some(path) = &config.pidfile else {
        return Ok(Placement::Serving(None));
    };
    daemon::write_pid_file(path, std::process::id())
        .map_err(|e| anyhow::anyhow!("--pidfile {e}"))?;
    Ok(Placement::Serving(Some(daemon::PidFileGuard::new(
        path.clone(),
        std::process::id(),
    ))))
}

fn redirect_to(log: Option<&File>) -> anyhow::Result<()> {
    if let Some(log) = log {
        daemon::redirect_output(log).context("--logfile")?;
    }
    Ok(())
}

/// The agent with its companions running: the iperf3 service's thread and the metrics
/// listener (held until the agent stops: dropping it stops the listener).
pub(crate) struct Running {
    agent: Agent,
    iperf3: Option<(Iperf3Handle, JoinHandle<()>, SocketAddr)>,
    _metrics: Option<MetricsListener>,
}

impl Running {
    pub(crate) fn iperf3_at(&self) -> Option<SocketAddr> {
        self.iperf3.as_ref().map(|(_, _, at)| *at)
    }
}

/// Starts the iperf3 service and the metrics listener beside the bound agent; `on_metrics`
/// is told where the metrics listen.
pub(crate) fn start(
    config: &Config,
    bound: Bound,
    on_metrics: impl FnOnce(SocketAddr),
) -> anyhow::Result<Running> {
    let iperf3 = match bound.iperf3 {
        Some((server, at)) => {
            let (handle, thread) = server.spawn()?;
            Some((handle, thread, at))
        }
        None => None,
    };
    let iperf3_handle = iperf3.as_ref().map(|(h, _, _)| h.clone());
    let mut metrics_listener = None;
    if let (Some(listener), Some(m)) = (bound.metrics, &config.metrics) {
        let handle = bound.agent.handle();
        let listener_config = m.listener();
        let routes = AgentRoutes {
            stats: Box::new(move || {
                let mut s = handle.stats();
                s.iperf3 = iperf3_handle.as_ref().map(|h| h.stats().counts());
                s
            }),
            totals: bound.totals.clone(),
            listener: listener_config.stats.clone(),
            show_clients: m.show_clients,
            prober: m.probes.clone().map(Prober::new),
        };
        let l = MetricsListener::spawn(listener, listener_config, Arc::new(routes))?;
        on_metrics(l.local_addr());
        metrics_listener = Some(l);
    }
    Ok(Running {
        agent: bound.agent,
        iperf3,
        _metrics: metrics_listener,
    })
}

/// Serves until the agent stops; the iperf3 service ends with it, whatever ended it.
pub(crate) fn serve(running: Running) -> anyhow::Result<()> {
    let served = running.agent.serve().context("serving");
    if let Some((handle, thread, _)) = running.iperf3 {
        handle.stop();
        let _ = thread.join();
    }
    served
}
