//! The agent's side of a load test: answer clock queries, accept (or refuse) an announcement,
//! open the sink, take part in the consent exchange (as generator or sink, [`super::consent`]),
//! wait for the common start, transmit on the schedule and report.

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::consent::{
    LOAD_CONSENT_CONTEXT, MAX_NONCE_SENDS, NONCE_BYTES, NonceBudget, consent_bytes, consent_proof,
    destination_allowed, keyless_allows, nonce_datagram, same_nonce,
};
use super::generator::drain_sink;
use super::raw::RawSender;
use super::sink::{MAX_HOSTS, SinkBook};
use super::{LoadMessage, LoadTest, generator, monotonic_ns, raw};
use crate::agent_config::AgentConfig;
use crate::auth::{hex, unhex};
use crate::control::Message;
use crate::session::{Control, SessionError};

fn io_err(text: String) -> SessionError {
    SessionError::Io(io::Error::other(text))
}

/// Why an announcement is refused, or `None`. Every number in it came from the client.
fn check(test: &LoadTest, cfg: &AgentConfig) -> Option<String> {
    // Overflow and the agent's --max-duration (issue 13, finding 7).
    if let Err(e) = test.schedule.validate_within(cfg.limits.max_duration) {
        return Some(e.to_string());
    }
    if let Err(e) = test.deck.validate() {
        return Some(e.to_string());
    }
    if test.tos.is_some() && test.raw.is_some() {
        return Some(
            "a TOS byte marks IP packets, and a raw Ethernet test sends frames with no IP header: drop -S or --raw".into(),
        );
    }
    if test.hosts == 0 || test.hosts > MAX_HOSTS || test.host >= test.hosts {
        return Some(format!(
            "host {} of a {}-host test: a load test has 1 to {MAX_HOSTS} hosts, each numbered below the count",
            test.host, test.hosts
        ));
    }
    if let Some(r) = test.rate_bits_per_second
        && !(r.is_finite() && r > 0.0)
    {
        return Some(format!(
            "offered load {r} bit/s is not a positive rate (example: --rate 2M)"
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
    /// The counting sink's book, when this agent counts.
    book: Option<SinkBook>,
    raw: Option<RawSender>,
    /// Where this generator was asked to send, and whether it consented.
    target: Option<Target>,
}

/// A destination other than the agent's own sink, on its way to consent ([`super::consent`]).
struct Target {
    /// Connected to the destination: the nonce and, once consented, the test go through it.
    tx: UdpSocket,
    to: SocketAddr,
    nonce: [u8; NONCE_BYTES],
    sends: u32,
    last_send_ns: u64,
    consented: bool,
}

impl Target {
    /// Sends the nonce again if it is due (every 100 ms, [`MAX_NONCE_SENDS`] in all).
    fn resend(&mut self, tag: u64, host: u32, budget: &NonceBudget, client: IpAddr) {
        if self.consented || self.sends >= MAX_NONCE_SENDS {
            return;
        }
        let now = monotonic_ns();
        if self.sends > 0 && now.saturating_sub(self.last_send_ns) < 100_000_000 {
            return;
        }
        if !budget.take(client) {
            return;
        }
        // A refused datagram (nothing listening yet) is sent again like a lost one.
        let _ = self.tx.send(&nonce_datagram(tag, host, &self.nonce));
        self.sends += 1;
        self.last_send_ns = now;
    }
}

/// A socket bound beside `local_ip` (the same family as `to`, else any address) and connected
/// to `to`.
fn connected(local_ip: IpAddr, to: SocketAddr) -> io::Result<UdpSocket> {
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
    Ok(tx)
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
    nonces: &NonceBudget,
) -> Result<Option<String>, SessionError> {
    let idle = cfg.idle_timeout;
    let local_ip = ctl.stream.local_addr()?.ip();
    let client_ip = ctl.stream.peer_addr()?.ip();
    let mut prepared: Option<Prepared> = None;
    // One destination per session: nonces (and so datagrams to an address) stay bounded
    // however often a client announces or targets.
    let mut targeted = false;
    let mut message = first;
    let refuse = |ctl: &mut Control, reason: String| -> Result<Option<String>, SessionError> {
        ctl.send(&Message::Refused {
            reason: reason.clone(),
        })?;
        Ok(Some(reason))
    };
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
                let raw = match raw {
                    Ok(raw) => raw,
                    Err(reason) => return refuse(ctl, format!("refused by the agent: {reason}")),
                };
                let sink = UdpSocket::bind(SocketAddr::new(local_ip, 0))?;
                let sink_port = sink.local_addr()?.port();
                let book = test
                    .count_sink
                    .then(|| SinkBook::new(&test, local_ip.to_canonical().is_ipv6()));
                prepared = Some(Prepared {
                    test,
                    sink,
                    book,
                    raw,
                    target: None,
                });
                ctl.send(&Message::Load(LoadMessage::Ready { sink_port }))?;
            }
            LoadMessage::Target { destination } => {
                let p = prepared
                    .as_mut()
                    .ok_or_else(|| io_err("'target' before a test was announced".into()))?;
                if std::mem::replace(&mut targeted, true) {
                    return refuse(
                        ctl,
                        "refused by the agent: a load session has one destination; 'target' came twice".into(),
                    );
                }
                if p.raw.is_some() {
                    return refuse(
                        ctl,
                        "refused by the agent: a raw test sends to the agent's own address, never to a destination".into(),
                    );
                }
                if let Err(reason) = destination_allowed(
                    destination.ip(),
                    client_ip,
                    local_ip,
                    &cfg.allow_destinations,
                )
                .and_then(|()| match cfg.auth {
                    Some(_) => Ok(()),
                    None => keyless_allows(destination.ip(), client_ip, local_ip),
                }) {
                    return refuse(ctl, reason);
                }
                if nonces.left(client_ip) < MAX_NONCE_SENDS {
                    return refuse(
                        ctl,
                        format!(
                            "refused by the agent: {} has had its {} consent datagrams of this minute ({} a destination; --max-consent-datagrams on the agent); try again in a minute",
                            client_ip.to_canonical(),
                            nonces.per_minute(),
                            MAX_NONCE_SENDS
                        ),
                    );
                }
                let mut nonce = [0u8; NONCE_BYTES];
                crate::auth::random_bytes(&mut nonce).map_err(SessionError::Io)?;
                let mut target = Target {
                    tx: connected(local_ip, destination)?,
                    to: destination,
                    nonce,
                    sends: 0,
                    last_send_ns: 0,
                    consented: false,
                };
                target.resend(p.test.tag, p.test.host, nonces, client_ip);
                p.target = Some(target);
                ctl.send(&Message::Load(LoadMessage::NonceSent))?;
            }
            LoadMessage::NonceQuery { host } => {
                let book = prepared
                    .as_mut()
                    .and_then(|p| p.book.as_mut().map(|b| (&p.sink, b)));
                let Some((sink, book)) = book else {
                    return Err(io_err(
                        "'nonce_query' to an agent that is not the test's counting sink".into(),
                    ));
                };
                drain_sink(sink, book, 1024)?;
                let nonce = book.nonce_of(host);
                let tag = prepared.as_ref().map_or(0, |p| p.test.tag);
                ctl.send(&Message::Load(LoadMessage::NonceSeen {
                    nonce: nonce.map(|n| hex(&n)),
                    proof: nonce
                        .zip(cfg.auth.as_ref())
                        .map(|(n, key)| hex(&consent_proof(key, tag, host, &n))),
                }))?;
            }
            LoadMessage::Nonce { nonce, proof } => {
                let p = prepared
                    .as_mut()
                    .ok_or_else(|| io_err("'nonce' before a 'target'".into()))?;
                let (tag, host) = (p.test.tag, p.test.host);
                let target = p
                    .target
                    .as_mut()
                    .ok_or_else(|| io_err("'nonce' before a 'target'".into()))?;
                let relayed = unhex(&nonce).unwrap_or_default();
                // With a key, the nonce alone is not enough: the sink's agent must have proved
                // under the key that it received it (an observer on the path sees the nonce).
                let proven = match &cfg.auth {
                    None => true,
                    Some(key) => proof.as_deref().and_then(unhex).is_some_and(|p| {
                        key.check_proof(
                            LOAD_CONSENT_CONTEXT,
                            &consent_bytes(tag, host, &target.nonce),
                            &p,
                        )
                    }),
                };
                if !proven || !same_nonce(&relayed, &target.nonce) {
                    return refuse(
                        ctl,
                        format!(
                            "refused by the agent: {} did not prove that it takes part in this test (the nonce this agent sent it did not come back through a wirespeed agent's control connection); nothing was sent there but the nonce",
                            target.to
                        ),
                    );
                }
                target.consented = true;
                ctl.send(&Message::Load(LoadMessage::Consented))?;
            }
            LoadMessage::Go {
                start_at_ns,
                destination,
            } => {
                let mut p = prepared
                    .take()
                    .ok_or_else(|| io_err("'go' before a test was announced".into()))?;
                let tx = match destination {
                    None => {
                        let tx = connected(local_ip, p.sink.local_addr()?)?;
                        if let Some(book) = p.book.as_mut() {
                            book.admit(p.test.host, tx.local_addr()?);
                        }
                        tx
                    }
                    Some(d) => match p.target.take() {
                        Some(t) if t.consented && t.to == d => t.tx,
                        _ => {
                            return refuse(
                                ctl,
                                format!(
                                    "refused by the agent: {d} did not consent to this test's traffic; an agent sends only to its own sink or to a wirespeed agent's sink that proved, by the nonce exchange, that it takes part (and, beyond its client's address, only with `wirespeed serve --allow-destination CIDR`; see docs/traffic-rules.md)"
                                ),
                            );
                        }
                    },
                };
                let lead = start_at_ns.saturating_sub(monotonic_ns());
                let horizon = idle.saturating_add(cfg.limits.max_duration);
                if Duration::from_nanos(lead) > horizon {
                    return Err(io_err(format!(
                        "the start is {} s away, beyond this agent's limits",
                        lead as f64 * 1e-9
                    )));
                }
                run(ctl, p, tx, start_at_ns, idle, stopping)?;
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
        message = next_load_message(ctl, idle, stopping, &mut || {
            if let Some(p) = prepared.as_mut() {
                let (tag, host) = (p.test.tag, p.test.host);
                if let Some(t) = p.target.as_mut() {
                    t.resend(tag, host, nonces, client_ip);
                }
            }
        })?;
    }
}

/// The controller's next load message, waited for at most `idle`; `tick` runs every 100 ms
/// meanwhile.
fn next_load_message(
    ctl: &mut Control,
    idle: Duration,
    stopping: &dyn Fn() -> bool,
    tick: &mut dyn FnMut(),
) -> Result<LoadMessage, SessionError> {
    let deadline =
        monotonic_ns().saturating_add(u64::try_from(idle.as_nanos()).unwrap_or(u64::MAX));
    loop {
        tick();
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
    tx: UdpSocket,
    start_at_ns: u64,
    idle: Duration,
    stopping: &dyn Fn() -> bool,
) -> Result<(), SessionError> {
    let stop_tx = AtomicBool::new(false);
    let stop_rx = AtomicBool::new(false);
    let failed = AtomicBool::new(false);
    let report_at = start_at_ns.saturating_add(p.test.schedule.report_at_ns());
    let give_up = report_at.saturating_add(u64::try_from(idle.as_nanos()).unwrap_or(u64::MAX));
    let Prepared {
        test,
        sink,
        book,
        raw,
        ..
    } = p;
    std::thread::scope(|s| {
        let sink = book.map(|book| s.spawn(|| generator::count_sink(&sink, book, &stop_rx)));
        let sender = s.spawn(|| {
            let r = match &raw {
                Some(raw_sender) => raw::transmit(raw_sender, &test, start_at_ns, &stop_tx),
                None => generator::transmit(&tx, &test, start_at_ns, &stop_tx),
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
