//! The controller: one control session per agent, the clock handshake, the announcement, the
//! common start, and the reports, with every agent's failure kept to that agent.
//!
//! A refusal or another protocol version is the user's problem to fix and ends the whole run
//! ([`LoadError`]); an agent that cannot be reached, goes silent or dies is recorded in its
//! [`AgentOutcome`] and the test goes on with the others, marked incomplete.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde::Serialize;
use wirespeed_model::load::{ClockEstimate, ClockSample, LengthDeck, Schedule};

use super::{LoadMessage, LoadReport, LoadTest, RawEthernet, monotonic_ns};
use crate::auth::AuthKey;
use crate::control::handshake::{self, HandshakeError};
use crate::control::{Message, PROTOCOL_VERSION};
use crate::session::{Control, SessionError};

/// Where the generators send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "host")]
pub enum Sink {
    /// Each to its own socket, never read (the seed's receiver off).
    Own,
    /// All to the counting sink of this host of the test (from 0).
    Host(usize),
}

/// One test of a series.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The agents of this test, one per transmitting host.
    pub agents: Vec<SocketAddr>,
    /// The pre-shared key, if the agents ask for one.
    pub auth: Option<AuthKey>,
    /// The timetable.
    pub schedule: Schedule,
    /// Packet lengths.
    pub deck: LengthDeck,
    /// Offered load per host (charged bits per second), `None` to saturate.
    pub rate_bits_per_second: Option<f64>,
    /// Where packets go.
    pub sink: Sink,
    /// Seed of the deals (host `h` deals with `seed + h`).
    pub seed: u64,
    /// How long a silent agent is waited for, beyond the schedule.
    pub idle_timeout: Duration,
    /// Clock exchanges per agent.
    pub clock_probes: usize,
    /// Raw Ethernet frames to each agent's own address instead of UDP (root on the agents).
    pub raw: Option<RawEthernet>,
    /// The IP TOS byte of every datagram (`-S`); `None` leaves the system's default.
    pub tos: Option<u8>,
}

/// Why a load test cannot run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The agent speaks another version of the control protocol.
    #[error(
        "agent {agent} speaks control protocol version {theirs}, this controller version {PROTOCOL_VERSION}; run the same wirespeed release on the agents and the controller"
    )]
    Version {
        /// The agent.
        agent: SocketAddr,
        /// Its version.
        theirs: u32,
    },
    /// The agent refused (its sentence, verbatim).
    #[error("agent {agent}: {reason}")]
    Refused {
        /// The agent.
        agent: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The agent wants a key and none was given.
    #[error("agent {0} requires authentication: pass --auth-key-file with the agents' key")]
    KeyRequired(SocketAddr),
    /// No agent could be reached.
    #[error("no agent could be reached: {0}")]
    NoAgents(String),
}

/// What became of one agent in one test.
#[derive(Debug, Clone, Serialize)]
pub struct AgentOutcome {
    /// Its control address.
    pub agent: SocketAddr,
    /// Its host number in the test, from 0.
    pub host: usize,
    /// Its clock against the controller's.
    pub clock: Option<ClockEstimate>,
    /// Its report, if it came.
    pub report: Option<LoadReport>,
    /// Why not.
    pub error: Option<String>,
}

/// One test's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct LoadOutcome {
    /// Every agent, in host order.
    pub agents: Vec<AgentOutcome>,
    /// Every agent reported.
    pub complete: bool,
}

struct Link {
    ctl: Control,
    clock: ClockEstimate,
    sink_port: u16,
}

enum Fail {
    Fatal(LoadError),
    Agent(String),
}

impl From<SessionError> for Fail {
    fn from(e: SessionError) -> Self {
        Fail::Agent(e.to_string())
    }
}

fn open(addr: SocketAddr, cfg: &LoadConfig) -> Result<Control, Fail> {
    let stream = TcpStream::connect_timeout(&addr, cfg.idle_timeout)
        .map_err(|e| Fail::Agent(format!("cannot connect: {e}")))?;
    let _ = stream.set_nodelay(true);
    let mut ctl = Control::new(stream, &[], false, false);
    match handshake::greet(&mut ctl, cfg.auth.as_ref(), cfg.idle_timeout) {
        Ok(_) => Ok(ctl),
        Err(HandshakeError::KeyRequired) => Err(Fail::Fatal(LoadError::KeyRequired(addr))),
        Err(HandshakeError::Version { theirs, .. }) => Err(Fail::Fatal(LoadError::Version {
            agent: addr,
            theirs,
        })),
        Err(HandshakeError::Refused(reason)) => Err(Fail::Fatal(LoadError::Refused {
            agent: addr,
            reason,
        })),
        Err(HandshakeError::Agent(message)) => Err(Fail::Agent(message)),
        Err(HandshakeError::Channel(e)) => Err(Fail::from(e)),
        Err(other) => Err(Fail::Agent(other.to_string())),
    }
}

fn expect_load(
    ctl: &mut Control,
    addr: SocketAddr,
    wait: Duration,
    what: &'static str,
) -> Result<LoadMessage, Fail> {
    match ctl.recv(wait, what)? {
        Message::Load(m) => Ok(m),
        Message::Refused { reason } => Err(Fail::Fatal(LoadError::Refused {
            agent: addr,
            reason,
        })),
        Message::Error { message } => Err(Fail::Agent(format!("the agent reported: {message}"))),
        other => Err(Fail::Agent(format!("unexpected '{}'", other.kind()))),
    }
}

/// Connects, reads the clock, announces: the agent's part before the common start.
fn prepare(addr: SocketAddr, host: usize, cfg: &LoadConfig, tag: u64) -> Result<Link, Fail> {
    let mut ctl = open(addr, cfg)?;
    let mut samples = Vec::with_capacity(cfg.clock_probes);
    for _ in 0..cfg.clock_probes.max(1) {
        let sent_ns = monotonic_ns();
        ctl.send(&Message::Load(LoadMessage::ClockQuery))
            .map_err(SessionError::Io)?;
        match expect_load(
            &mut ctl,
            addr,
            cfg.idle_timeout,
            "reading the agent's clock",
        )? {
            LoadMessage::ClockReply { agent_ns } => samples.push(ClockSample {
                sent_ns,
                agent_ns,
                received_ns: monotonic_ns(),
            }),
            _ => return Err(Fail::Agent("expected a clock reply".into())),
        }
    }
    let clock = ClockEstimate::from_samples(&samples)
        .ok_or(Fail::Agent("no usable clock exchange".into()))?;
    let test = LoadTest {
        tag,
        host: host as u32,
        hosts: u32::try_from(cfg.agents.len()).unwrap_or(u32::MAX),
        schedule: cfg.schedule,
        deck: cfg.deck.clone(),
        rate_bits_per_second: cfg.rate_bits_per_second,
        count_sink: cfg.sink == Sink::Host(host),
        seed: cfg.seed.wrapping_add(host as u64),
        raw: cfg.raw.clone(),
        tos: cfg.tos,
    };
    ctl.send(&Message::Load(LoadMessage::Announce { test }))
        .map_err(SessionError::Io)?;
    match expect_load(
        &mut ctl,
        addr,
        cfg.idle_timeout,
        "waiting for the agent to accept",
    )? {
        LoadMessage::Ready { sink_port } => Ok(Link {
            ctl,
            clock,
            sink_port,
        }),
        _ => Err(Fail::Agent("expected 'ready'".into())),
    }
}

/// How long the sink's agent is asked for a generator's nonce before that generator is given up.
const CONSENT_WAIT: Duration = Duration::from_secs(3);

/// The consent exchange ([`super::consent`]): each generator checks the traffic rule and sends
/// its nonce to `to`; the sink's agent says what it received from each; the controller relays
/// that, and the generator compares. A generator whose nonce never arrives is recorded and
/// dropped; a refusal (the rule) ends the run.
fn consent(
    links: &mut Vec<(usize, Link)>,
    outcomes: &mut [AgentOutcome],
    to: SocketAddr,
    cfg: &LoadConfig,
) -> Result<(), LoadError> {
    let Sink::Host(sink_host) = cfg.sink else {
        return Ok(());
    };
    let wait = cfg.idle_timeout;
    let mut failed: Vec<(usize, String)> = Vec::new();
    for (h, link) in links.iter_mut() {
        let addr = cfg.agents[*h];
        let r = link
            .ctl
            .send(&Message::Load(LoadMessage::Target { destination: to }))
            .map_err(|e| Fail::Agent(e.to_string()))
            .and_then(|()| expect_load(&mut link.ctl, addr, wait, "waiting for 'nonce_sent'"));
        match r {
            Ok(LoadMessage::NonceSent) => {}
            Ok(_) => failed.push((*h, "expected 'nonce_sent'".into())),
            Err(Fail::Fatal(e)) => return Err(e),
            Err(Fail::Agent(e)) => failed.push((*h, e)),
        }
    }
    let hosts: Vec<usize> = links
        .iter()
        .map(|(h, _)| *h)
        .filter(|h| !failed.iter().any(|(f, _)| f == h))
        .collect();
    for h in hosts {
        let sink_addr = cfg.agents[sink_host];
        let deadline = monotonic_ns() + CONSENT_WAIT.as_nanos() as u64;
        let seen = loop {
            let Some((_, sink)) = links.iter_mut().find(|(x, _)| *x == sink_host) else {
                break Err("the sink's agent is gone".to_string());
            };
            let r = sink
                .ctl
                .send(&Message::Load(LoadMessage::NonceQuery { host: h as u32 }))
                .map_err(|e| Fail::Agent(e.to_string()))
                .and_then(|()| {
                    expect_load(&mut sink.ctl, sink_addr, wait, "waiting for 'nonce_seen'")
                });
            match r {
                Ok(LoadMessage::NonceSeen {
                    nonce: Some(n),
                    proof,
                }) => break Ok((n, proof)),
                Ok(LoadMessage::NonceSeen { nonce: None, .. }) if monotonic_ns() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(LoadMessage::NonceSeen { nonce: None, .. }) => {
                    break Err(format!(
                        "its consent nonce never reached the sink at {to} within {} s (is UDP from this agent to the sink blocked?); nothing was sent",
                        CONSENT_WAIT.as_secs()
                    ));
                }
                Ok(_) => break Err("the sink's agent did not answer 'nonce_query'".into()),
                Err(Fail::Fatal(e)) => return Err(e),
                Err(Fail::Agent(e)) => break Err(format!("the sink's agent: {e}")),
            }
        };
        let result = seen.and_then(|(nonce, proof)| {
            let (_, link) = links
                .iter_mut()
                .find(|(x, _)| *x == h)
                .expect("a live link");
            let addr = cfg.agents[h];
            link.ctl
                .send(&Message::Load(LoadMessage::Nonce { nonce, proof }))
                .map_err(|e| e.to_string())?;
            match expect_load(&mut link.ctl, addr, wait, "waiting for 'consented'") {
                Ok(LoadMessage::Consented) => Ok(()),
                Ok(_) => Err("expected 'consented'".into()),
                Err(Fail::Fatal(e)) => Err(e.to_string()),
                Err(Fail::Agent(e)) => Err(e),
            }
        });
        if let Err(e) = result {
            failed.push((h, e));
        }
    }
    for (h, e) in failed {
        outcomes[h].error = Some(e);
        links.retain(|(x, _)| *x != h);
    }
    Ok(())
}

/// Runs one test on every agent of `cfg`. Agents that fail are recorded and the others go on.
pub fn run(cfg: &LoadConfig) -> Result<LoadOutcome, LoadError> {
    let mut tag_bytes = [0u8; 8];
    crate::auth::random_bytes(&mut tag_bytes).map_err(|e| LoadError::NoAgents(e.to_string()))?;
    let tag = u64::from_be_bytes(tag_bytes);
    let prepared: Vec<Result<Link, Fail>> = std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .agents
            .iter()
            .enumerate()
            .map(|(h, &a)| s.spawn(move || prepare(a, h, cfg, tag)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Fail::Agent("panicked".into()))))
            .collect()
    });
    let mut outcomes: Vec<AgentOutcome> = cfg
        .agents
        .iter()
        .enumerate()
        .map(|(host, &agent)| AgentOutcome {
            agent,
            host,
            clock: None,
            report: None,
            error: None,
        })
        .collect();
    let mut links: Vec<(usize, Link)> = Vec::new();
    for (h, p) in prepared.into_iter().enumerate() {
        match p {
            Ok(link) => {
                outcomes[h].clock = Some(link.clock);
                links.push((h, link));
            }
            Err(Fail::Fatal(e)) => return Err(e),
            Err(Fail::Agent(e)) => outcomes[h].error = Some(e),
        }
    }
    if links.is_empty() {
        let why = outcomes
            .iter()
            .filter_map(|o| o.error.as_ref().map(|e| format!("{}: {e}", o.agent)))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(LoadError::NoAgents(why));
    }
    let destination = match cfg.sink {
        Sink::Own => None,
        // If the sink is gone, everyone sends to their own; the test is incomplete anyway.
        Sink::Host(h) => links
            .iter()
            .find(|(host, _)| *host == h)
            .map(|(_, l)| crate::address::with_port(cfg.agents[h], l.sink_port)),
    };
    if let Some(to) = destination {
        consent(&mut links, &mut outcomes, to, cfg)?;
        if links.is_empty() {
            return Err(LoadError::NoAgents(
                "no generator obtained its sink's consent".into(),
            ));
        }
    }
    // The common start: far enough ahead that the slowest 'go' arrives before it.
    let slowest_rtt = links.iter().map(|(_, l)| l.clock.rtt_ns).max().unwrap_or(0);
    let start = monotonic_ns() + 50_000_000 + 4 * slowest_rtt;
    let wait =
        Duration::from_nanos((start + cfg.schedule.report_at_ns()).saturating_sub(monotonic_ns()))
            + cfg.idle_timeout;
    let reports: Vec<(usize, Result<LoadReport, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = links
            .iter_mut()
            .map(|(h, link)| {
                let h = *h;
                s.spawn(move || {
                    let go = Message::Load(LoadMessage::Go {
                        start_at_ns: link.clock.to_agent(start),
                        destination,
                    });
                    let r = (|| {
                        link.ctl.send(&go).map_err(|e| e.to_string())?;
                        match link.ctl.recv(wait, "waiting for the agent's report") {
                            Ok(Message::Load(LoadMessage::Report { report })) => Ok(report),
                            Ok(Message::Error { message }) => {
                                Err(format!("the agent reported: {message}"))
                            }
                            Ok(other) => Err(format!("unexpected '{}'", other.kind())),
                            Err(SessionError::Timeout { .. }) => Err(format!(
                                "no report within {} s of the start (slow or dead agent)",
                                wait.as_secs_f64().round()
                            )),
                            Err(SessionError::Closed) => {
                                Err("the agent closed the connection mid-test (dead agent?)".into())
                            }
                            Err(e) => Err(e.to_string()),
                        }
                    })();
                    (h, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("report thread"))
            .collect()
    });
    for (h, r) in reports {
        match r {
            Ok(report) => outcomes[h].report = Some(report),
            Err(e) => outcomes[h].error = Some(e),
        }
    }
    let complete = outcomes.iter().all(|o| o.report.is_some());
    Ok(LoadOutcome {
        agents: outcomes,
        complete,
    })
}
