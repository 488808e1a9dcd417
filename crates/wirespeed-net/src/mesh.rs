//! Agent-to-agent tests (`wirespeed mesh`, issue 19): the agent's two roles and the
//! controller's one call.
//!
//! A controller asks a **source** agent to test a **destination** agent. The source is the one
//! that sends, so it follows the traffic rules of docs/traffic-rules.md before a byte of test
//! traffic leaves:
//!
//! 1. it must hold a key (`serve --auth-key-file`): an unkeyed agent would let anyone who
//!    reaches its port point it at any address, so it refuses to be a source;
//! 2. the destination's address must pass its allow rules (its own address, its client's,
//!    or `serve --allow-destination CIDR`), as a load generator's must;
//! 3. the destination must **consent** on its own control connection: the source connects to
//!    it as a client (the destination checks the source's key in the ordinary handshake),
//!    then sends a fresh 256-bit nonce, and the destination answers with an HMAC of the nonce
//!    and the source's address under the fleet's key, in a context of its own
//!    ([`CONSENT_CONTEXT`]). Only an agent holding the same key can answer; an unkeyed agent
//!    refuses to consent, a plain TCP or UDP service cannot, and the controller never sees the
//!    nonce. A refused destination receives one control connection and no test traffic.
//!
//! Then the source runs the latency probes (the UDP echo of `probe --udp` and `latency`,
//! [`UdpEcho`]) and the TCP test (the throughput client, [`crate::client::run`]), each a
//! session of its own with the destination, bounded by the request's duration, the source's
//! `--max-duration` and its memory budget, and by the destination's own limits; the
//! figures go back to the controller in one `result`.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::agent_config::AgentConfig;
use crate::auth::{AuthKey, hex, random_bytes, unhex};
use crate::budget::{self, Budget};
use crate::client::ClientConfig;
use crate::control::handshake::{self, HandshakeError};
use crate::control::mesh::{
    CONSENT_CONTEXT, MESH_VERSION, MeshMessage, PairLatency, PairResult, PairTest, consent_bytes,
};
use crate::control::{Message, Phase};
use crate::load::consent::destination_allowed;
use crate::probe::ReplyKind;
use crate::probe::echo::{UdpEcho, min_size};
use crate::session::{Control, SessionError};
use crate::spec::{Amount, Direction, Protocol, TestSpec};

/// Bytes of the source's consent nonce.
const NONCE_BYTES: usize = 32;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn refuse(ctl: &mut Control, reason: String) -> Result<Option<String>, SessionError> {
    ctl.send(&Message::Refused {
        reason: reason.clone(),
    })?;
    ctl.set_phase(Phase::Closed);
    Ok(Some(reason))
}

/// The agent's side of a mesh session: `run` from a controller (this agent is the source) or
/// `consent` from another agent (this agent is the destination). Returns the refusal, if
/// refused.
pub(crate) fn serve(
    ctl: &mut Control,
    first: MeshMessage,
    peer: SocketAddr,
    cfg: &AgentConfig,
    budget: &Arc<Budget>,
) -> Result<Option<String>, SessionError> {
    match first {
        MeshMessage::Consent {
            mesh_version,
            nonce,
        } => consent(ctl, mesh_version, &nonce, peer, cfg),
        MeshMessage::Run { test } => run_as_source(ctl, &test, peer, cfg, budget),
        other => refuse(
            ctl,
            format!(
                "refused by the agent: a mesh session starts with 'run' or 'consent', not '{}'",
                match other {
                    MeshMessage::Result { .. } => "result",
                    _ => "consented",
                }
            ),
        ),
    }
}

/// The destination's side: prove the key, or refuse.
fn consent(
    ctl: &mut Control,
    mesh_version: u32,
    nonce: &str,
    peer: SocketAddr,
    cfg: &AgentConfig,
) -> Result<Option<String>, SessionError> {
    let Some(key) = &cfg.auth else {
        return refuse(
            ctl,
            "refused by the agent: it holds no key, so it does not consent to tests from other agents; start it with `wirespeed serve --auth-key-file FILE` holding the fleet's key".into(),
        );
    };
    if mesh_version != MESH_VERSION {
        return refuse(
            ctl,
            format!(
                "refused by the agent: mesh messages of version {mesh_version} (this agent speaks {MESH_VERSION}); run the same wirespeed release on every agent"
            ),
        );
    }
    let Some(nonce) = unhex(nonce).filter(|n| n.len() == NONCE_BYTES) else {
        return refuse(
            ctl,
            "refused by the agent: a consent nonce is 64 hex digits".into(),
        );
    };
    let proof = key.prove(CONSENT_CONTEXT, &consent_bytes(&nonce, peer.ip()));
    ctl.send(&Message::Mesh(MeshMessage::Consented {
        proof: hex(&proof),
    }))?;
    Ok(None)
}

/// Why the source did not test the destination (the controller prints it verbatim).
fn ask_consent(destination: SocketAddr, key: &AuthKey, timeout: Duration) -> Result<(), String> {
    let fail = |why: String| format!("{destination} did not consent: {why}");
    let stream = TcpStream::connect_timeout(&destination, timeout)
        .map_err(|e| fail(format!("cannot connect ({e})")))?;
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().map_err(|e| fail(e.to_string()))?;
    let mut ctl = Control::new(stream, &[], false, false);
    handshake::greet(&mut ctl, Some(key), timeout).map_err(|e| {
        fail(match e {
            HandshakeError::Refused(r) | HandshakeError::Agent(r) => r,
            other => other.to_string(),
        })
    })?;
    let mut nonce = [0u8; NONCE_BYTES];
    random_bytes(&mut nonce).map_err(|e| fail(e.to_string()))?;
    ctl.send(&Message::Mesh(MeshMessage::Consent {
        mesh_version: MESH_VERSION,
        nonce: hex(&nonce),
    }))
    .map_err(|e| fail(e.to_string()))?;
    let answer = ctl
        .recv(timeout, "waiting for the destination's consent")
        .map_err(|e| fail(e.to_string()))?;
    let proof = match answer {
        Message::Mesh(MeshMessage::Consented { proof }) => proof,
        Message::Refused { reason } => return Err(fail(reason)),
        Message::Error { message } => return Err(fail(format!("it reported: {message}"))),
        other => return Err(fail(format!("it answered '{}'", other.kind()))),
    };
    let ok = unhex(&proof)
        .is_some_and(|p| key.check_proof(CONSENT_CONTEXT, &consent_bytes(&nonce, local.ip()), &p));
    if !ok {
        return Err(fail(
            "its proof does not match this agent's key (the agents hold different --auth-key-file keys)"
                .into(),
        ));
    }
    Ok(())
}

/// The source's side: the rules, the consent, the probes and the test.
fn run_as_source(
    ctl: &mut Control,
    test: &PairTest,
    peer: SocketAddr,
    cfg: &AgentConfig,
    budget: &Arc<Budget>,
) -> Result<Option<String>, SessionError> {
    let Some(key) = &cfg.auth else {
        return refuse(
            ctl,
            "refused by the agent: it holds no key, so it does not send tests to other agents (anyone reaching its port could aim it anywhere); start it with `wirespeed serve --auth-key-file FILE` holding the fleet's key".into(),
        );
    };
    if let Some(reason) = test.check() {
        return refuse(ctl, reason);
    }
    let max = cfg.limits.max_duration.as_secs_f64();
    if test.tcp_seconds + test.probe_seconds() > max {
        return refuse(
            ctl,
            format!(
                "refused by the agent: a mesh test of {} s (-t) and {} s of probes exceeds this agent's limit of {max} s (--max-duration on the agent)",
                test.tcp_seconds,
                test.probe_seconds()
            ),
        );
    }
    let own = ctl.stream.local_addr()?.ip();
    if destination_allowed(
        test.destination.ip(),
        peer.ip(),
        own,
        &cfg.allow_destinations,
    )
    .is_err()
    {
        return refuse(
            ctl,
            format!(
                "refused by the agent: it sends test traffic only to its own address and its client's ({}), and {} is neither; to test other agents its operator must start it with `wirespeed serve --allow-destination CIDR` (see docs/traffic-rules.md)",
                peer.ip().to_canonical(),
                test.destination.ip().to_canonical()
            ),
        );
    }
    let spec = TestSpec {
        protocol: Protocol::Tcp,
        direction: Direction::Send,
        amount: Amount::Seconds(test.tcp_seconds),
        // A tournament's slots are as long as their tests: a test must end at its -t, not
        // after draining seconds of buffered data from a slow path.
        no_drain: true,
        tos: test.tos,
        ..TestSpec::default()
    };
    let _memory = match budget.reserve(budget::streams_cost(&spec, 1)) {
        Ok(m) => m,
        Err(e) => return refuse(ctl, e.refusal("a mesh test")),
    };
    let idle = cfg.idle_timeout;
    if let Err(why) = ask_consent(test.destination, key, idle) {
        return refuse(ctl, format!("refused by the agent: {why}"));
    }
    let started = unix_now();
    let mut result = PairResult {
        started_unix_seconds: started,
        ..PairResult::default()
    };
    let mut closing = None;
    if test.probes > 0 {
        match probe(test, key, idle) {
            Ok((l, c)) => {
                result.latency = Some(l);
                closing = c;
            }
            Err(e) => result.errors.push(format!("latency probes: {e}")),
        }
    }
    if test.probes_only() {
        if let Some(c) = closing {
            let _ = c.join();
        }
        result.ended_unix_seconds = unix_now();
        ctl.send(&Message::Mesh(MeshMessage::Result { result }))?;
        return Ok(None);
    }
    let client = ClientConfig {
        agent: test.destination,
        // The route to the destination picks the source address, not the controller's path.
        bind: None,
        spec,
        auth: Some(key.clone()),
        cpu: None,
        idle_timeout: idle,
        interrupt: None,
        source: None,
    };
    result.tcp_started_unix_seconds = Some(unix_now());
    let outcome = crate::client::run(&client, &mut |_: &crate::report::Interval| {});
    result.tcp_ended_unix_seconds = Some(unix_now());
    match outcome {
        Ok(outcome) => {
            let end = crate::summary::end(&outcome, Direction::Send);
            let r = &end.sum_received;
            if r.bytes > 0 && r.seconds > 0.0 {
                result.tcp_bits_per_second = Some(r.bits_per_second);
                result.tcp_bytes = Some(r.bytes);
                result.tcp_seconds = Some(r.seconds);
            } else if outcome.error.is_none() {
                // A test without a rate is a failed test; without this it failed with no
                // reason (seen under load at -t 0.2 s: "1 of 2 tests failed (first: see the
                // warnings)"), so say what the destination counted.
                result.errors.push(format!(
                    "tcp test: the destination counted {} bytes in {:.3} s of a {:.3} s test, so there is no rate",
                    r.bytes, r.seconds, test.tcp_seconds
                ));
            }
            result.retransmits = end.sum_sent.retransmits;
            result.tcp_drain = outcome
                .agent
                .as_ref()
                .and_then(|a| a.streams.iter().find_map(|s| s.drain));
            result.tcp_rtt_seconds = outcome
                .client
                .streams
                .iter()
                .find_map(|s| s.tcp_info.as_ref().map(|t| t.rtt_seconds));
            if test.tos.is_some() {
                let tos = |streams: &[crate::report::StreamReport]| {
                    streams.iter().find_map(|s| s.socket.tos)
                };
                result.source_tos = tos(&outcome.client.streams);
                result.destination_tos = outcome.agent.as_ref().and_then(|a| tos(&a.streams));
            }
            if let Some(e) = outcome.error {
                result.errors.push(format!("tcp test: {e}"));
            }
        }
        Err(e) => result.errors.push(format!("tcp test: {e}")),
    }
    // The probes' session has long ended (its close ran beside the TCP test's set-up); the
    // test is over only when it has.
    if let Some(c) = closing {
        let _ = c.join();
    }
    result.ended_unix_seconds = unix_now();
    ctl.send(&Message::Mesh(MeshMessage::Result { result }))?;
    Ok(None)
}

/// The latency probes: one UDP echo probe every gap, each waited for at most 250 ms, all of
/// them within the probes' time and a second. Returns the figures and the thread that closes
/// the echo session: the destination agent ends its echo only when its responder's read
/// times out (up to 50 ms after the close), which the TCP test's set-up need not wait for.
fn probe(
    test: &PairTest,
    key: &AuthKey,
    idle: Duration,
) -> Result<(PairLatency, Option<std::thread::JoinHandle<()>>), String> {
    let gap = Duration::from_secs_f64(test.probe_gap_seconds);
    let budget = test.probe_seconds() + 1.0;
    let mut echo = UdpEcho::open(test.destination, Some(key), budget + 1.0, idle)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(budget);
    let size = min_size(test.destination.ip());
    let mut rtts = Vec::new();
    let mut sent = 0u32;
    while sent < test.probes && Instant::now() < deadline {
        let t0 = Instant::now();
        let left = deadline.saturating_duration_since(t0);
        let sample = echo
            .one(size, start, Duration::from_millis(250).min(left))
            .map_err(|e| e.to_string())?;
        sent += 1;
        if sample.reply == ReplyKind::EchoReply
            && let Some(ns) = sample.rtt_kernel_ns.or(sample.rtt_user_ns)
        {
            rtts.push(ns as f64 * 1e-9);
        }
        std::thread::sleep(gap.saturating_sub(t0.elapsed()));
    }
    // If no thread can be had, the echo is dropped here: its connection closes, which ends
    // the destination's echo as well.
    let closing = std::thread::Builder::new()
        .name("mesh-echo-close".into())
        .spawn(move || {
            let _ = echo.close(idle);
        })
        .ok();
    Ok((latency_of(sent, &rtts), closing))
}

#[doc(hidden)]
pub fn latency_of(sent: u32, rtts: &[f64]) -> PairLatency {
    let q = |p: f64| (!rtts.is_empty()).then(|| wirespeed_model::stats::quantile(rtts, p));
    PairLatency {
        sent,
        answered: rtts.len() as u32,
        min_seconds: q(0.0),
        median_seconds: q(0.5),
        p90_seconds: q(0.9),
        max_seconds: q(1.0),
    }
}

/// Why the controller did not get a test's figures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeshError {
    /// The source agent could not be reached or greeted.
    #[error(transparent)]
    Service(#[from] crate::service::ServiceError),
    /// The source agent refused (its sentence).
    #[error("{0}")]
    Refused(String),
    /// The source agent is of a release without mesh tests.
    #[error("the agent at {0} does not run mesh tests (an older wirespeed release): upgrade it")]
    TooOld(SocketAddr),
    /// The session broke.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Something out of place.
    #[error("the agent answered '{0}' where the test's result was expected")]
    Unexpected(&'static str),
}

/// The controller's call: asks the source agent at `source` to run `test` and waits for the
/// figures, at most the test's time and `idle` beyond it (twice: consent and the test's end).
pub fn run_pair(
    source: SocketAddr,
    auth: Option<&AuthKey>,
    test: &PairTest,
    idle: Duration,
) -> Result<PairResult, MeshError> {
    let mut ctl = crate::service::open(source, auth, idle)?;
    ctl.send(&Message::Mesh(MeshMessage::Run { test: test.clone() }))
        .map_err(SessionError::Io)?;
    let wait = Duration::from_secs_f64(test.tcp_seconds + test.probe_seconds() + 1.0) + idle * 3;
    match ctl.recv(wait, "waiting for the mesh test's result")? {
        Message::Mesh(MeshMessage::Result { result }) => {
            result
                .check(&format!("agent {source}"))
                .map_err(|e| MeshError::Refused(e.to_string()))?;
            Ok(result)
        }
        Message::Refused { reason } => Err(MeshError::Refused(reason)),
        Message::Error { message } if message.contains("unknown variant `mesh`") => {
            Err(MeshError::TooOld(source))
        }
        Message::Error { message } => {
            Err(MeshError::Refused(format!("the agent reported: {message}")))
        }
        other => Err(MeshError::Unexpected(other.kind())),
    }
}
