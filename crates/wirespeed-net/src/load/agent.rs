//! The agent's side of a load test: answer clock queries, accept (or refuse) an announcement,
//! open the sink, wait for the common start, transmit on the schedule and report.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::raw::RawSender;
use super::{LoadMessage, LoadTest, generator, monotonic_ns, raw};
use crate::agent::AgentConfig;
use crate::control::Message;
use crate::session::{Control, SessionError};

fn io_err(text: String) -> SessionError {
    SessionError::Io(io::Error::other(text))
}

/// Why an announcement is refused, or `None`.
fn check(test: &LoadTest, cfg: &AgentConfig) -> Option<String> {
    if let Err(e) = test.schedule.validate() {
        return Some(e.to_string());
    }
    if let Err(e) = test.deck.validate() {
        return Some(e.to_string());
    }
    let total = Duration::from_nanos(test.schedule.report_at_ns());
    if total > cfg.limits.max_duration {
        return Some(format!(
            "a load test of {} s exceeds this agent's limit of {} s (--max-duration on the agent)",
            total.as_secs_f64(),
            cfg.limits.max_duration.as_secs_f64()
        ));
    }
    if let Some(max) = cfg.limits.max_rate_bits_per_second {
        match test.rate_bits_per_second {
            Some(r) if r > 0.0 && r <= max as f64 => {}
            Some(r) if r <= 0.0 => return Some(format!("offered load {r} bit/s is not positive")),
            asked => {
                let asked = asked.map_or("saturating".into(), |r| format!("{r} bit/s"));
                return Some(format!(
                    "offered load {asked} exceeds this agent's limit of {max} bit/s (--max-rate on the agent)"
                ));
            }
        }
    }
    None
}

struct Prepared {
    test: LoadTest,
    sink: UdpSocket,
    raw: Option<RawSender>,
}

/// Opens the raw sender a raw test needs, on the named interface or the one holding the
/// control connection's address; the refusal is one sentence.
fn open_raw(test: &LoadTest, local_ip: std::net::IpAddr) -> Result<Option<RawSender>, String> {
    let Some(r) = &test.raw else {
        return Ok(None);
    };
    let interface = match &r.interface {
        Some(name) => name.clone(),
        None => crate::env::interface_of(local_ip).ok_or_else(|| {
            format!("no interface holds the agent's address {local_ip}: name one with --raw IFACE")
        })?,
    };
    let sender = RawSender::open(&interface).map_err(|e| e.to_string())?;
    let longest = test.deck.cards.iter().copied().max().unwrap_or(0);
    let shortest = test.deck.cards.iter().copied().min().unwrap_or(0);
    sender.check(longest, shortest).map_err(|e| e.to_string())?;
    Ok(Some(sender))
}

/// Serves a load session whose first load message is `first`. `Ok(Some(reason))` when the test
/// was refused (the refusal is already sent).
pub(crate) fn serve(
    ctl: &mut Control,
    first: LoadMessage,
    cfg: &AgentConfig,
    stopping: &dyn Fn() -> bool,
) -> Result<Option<String>, SessionError> {
    let idle = cfg.idle_timeout;
    let local_ip = ctl.stream.local_addr()?.ip();
    let mut prepared: Option<Prepared> = None;
    let mut message = first;
    loop {
        match message {
            LoadMessage::ClockQuery => ctl.send(&Message::Load(LoadMessage::ClockReply {
                agent_ns: monotonic_ns(),
            }))?,
            LoadMessage::Announce { test } => {
                let raw = match check(&test, cfg) {
                    Some(reason) => Err(reason),
                    None => open_raw(&test, local_ip),
                };
                if let Err(reason) = &raw {
                    let reason = format!("refused by the agent: {reason}");
                    ctl.send(&Message::Refused {
                        reason: reason.clone(),
                    })?;
                    return Ok(Some(reason));
                }
                let sink = UdpSocket::bind(SocketAddr::new(local_ip, 0))?;
                let sink_port = sink.local_addr()?.port();
                prepared = Some(Prepared {
                    test,
                    sink,
                    raw: raw.ok().flatten(),
                });
                ctl.send(&Message::Load(LoadMessage::Ready { sink_port }))?;
            }
            LoadMessage::Go {
                start_at_ns,
                destination,
            } => {
                let p = prepared
                    .take()
                    .ok_or_else(|| io_err("'go' before a test was announced".into()))?;
                let lead = start_at_ns.saturating_sub(monotonic_ns());
                if Duration::from_nanos(lead) > idle + cfg.limits.max_duration {
                    return Err(io_err(format!(
                        "the start is {} s away, beyond this agent's limits",
                        lead as f64 * 1e-9
                    )));
                }
                run(ctl, p, start_at_ns, destination, local_ip, idle, stopping)?;
                return Ok(None);
            }
            other => {
                return Err(io_err(format!(
                    "unexpected load message '{}' from the controller",
                    serde_json::to_value(&other)
                        .ok()
                        .and_then(|v| v["load"].as_str().map(String::from))
                        .unwrap_or_default()
                )));
            }
        }
        message = next_load_message(ctl, idle, stopping)?;
    }
}

fn next_load_message(
    ctl: &mut Control,
    idle: Duration,
    stopping: &dyn Fn() -> bool,
) -> Result<LoadMessage, SessionError> {
    let deadline = monotonic_ns() + idle.as_nanos() as u64;
    loop {
        if stopping() {
            return Err(io_err("the agent is shutting down".into()));
        }
        if monotonic_ns() > deadline {
            return Err(SessionError::Timeout {
                what: "waiting for the controller",
                after: idle,
            });
        }
        match ctl.poll(Duration::from_millis(100))? {
            None => {}
            Some(Message::Load(m)) => return Ok(m),
            Some(Message::Error { message }) => {
                return Err(io_err(format!("the controller ended the test: {message}")));
            }
            Some(other) => {
                return Err(io_err(format!(
                    "unexpected control message '{}' in a load test",
                    other.kind()
                )));
            }
        }
    }
}

fn run(
    ctl: &mut Control,
    p: Prepared,
    start_at_ns: u64,
    destination: Option<SocketAddr>,
    local_ip: std::net::IpAddr,
    idle: Duration,
    stopping: &dyn Fn() -> bool,
) -> Result<(), SessionError> {
    let own = p.sink.local_addr()?;
    let to = destination.unwrap_or(own);
    let tx = UdpSocket::bind(SocketAddr::new(
        if to.is_ipv6() == local_ip.is_ipv6() {
            local_ip
        } else if to.is_ipv6() {
            std::net::Ipv6Addr::UNSPECIFIED.into()
        } else {
            std::net::Ipv4Addr::UNSPECIFIED.into()
        },
        0,
    ))?;
    tx.connect(to)?;
    let stop_tx = AtomicBool::new(false);
    let stop_rx = AtomicBool::new(false);
    let failed = AtomicBool::new(false);
    let report_at = start_at_ns + p.test.schedule.report_at_ns();
    let give_up = report_at + idle.as_nanos() as u64;
    std::thread::scope(|s| {
        let sink = p
            .test
            .count_sink
            .then(|| s.spawn(|| generator::count_sink(&p.sink, p.test.tag, &stop_rx)));
        let sender = s.spawn(|| {
            let r = match &p.raw {
                Some(raw_sender) => raw::transmit(raw_sender, &p.test, start_at_ns, &stop_tx),
                None => {
                    generator::transmit(&tx, &p.test, start_at_ns, destination.is_some(), &stop_tx)
                }
            };
            failed.store(r.is_err(), Ordering::Relaxed);
            r
        });
        let stop_all = || {
            stop_tx.store(true, Ordering::Relaxed);
            stop_rx.store(true, Ordering::Relaxed);
        };
        // Watch the controller while the test runs: a closed connection or an error aborts.
        loop {
            if sender.is_finished()
                && (monotonic_ns() >= report_at || failed.load(Ordering::Relaxed))
            {
                break;
            }
            if stopping() {
                stop_all();
                return Err(io_err("the agent is shutting down".into()));
            }
            if monotonic_ns() > give_up {
                stop_all();
                return Err(io_err("the load test overran its schedule".into()));
            }
            match ctl.poll(Duration::from_millis(50)) {
                Ok(None) => {}
                Ok(Some(Message::Error { message })) => {
                    stop_all();
                    return Err(io_err(format!("the controller ended the test: {message}")));
                }
                Ok(Some(other)) => {
                    stop_all();
                    return Err(io_err(format!(
                        "unexpected control message '{}' during a load test",
                        other.kind()
                    )));
                }
                Err(e) => {
                    stop_all();
                    return Err(e);
                }
            }
        }
        stop_all();
        let mut report = sender
            .join()
            .map_err(|_| io_err("the generator thread panicked".into()))??;
        if let Some(sink) = sink {
            report.sink = Some(
                sink.join()
                    .map_err(|_| io_err("the sink thread panicked".into()))??,
            );
        }
        ctl.send(&Message::Load(LoadMessage::Report { report }))?;
        Ok(())
    })
}
