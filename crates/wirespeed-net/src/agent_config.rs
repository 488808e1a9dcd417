//! What the operator allows an agent (`wirespeed serve`'s flags): the limits of every session,
//! the key, the timeouts, the address blocks load tests may send to. Plain settings with their
//! checks, below both the agent and the session kinds it serves, which all read them.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::auth::AuthKey;
use crate::report::SideReport;
use crate::spec::{Amount, Protocol, TestSpec};

/// How long past its `-t` a timed test may take to drain and report before the agent stops it,
/// and, while it drains, how long its data may stop moving before the path is called stalled.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// The longest a timed test whose data still moves may drain past its `-t`: what an autotuned
/// sender queued at its end (its socket buffer and the bottleneck's queue) takes seconds to
/// deliver on a slow path (about 10 s at 64 kbit/s after `-t 2`, 20 s at 56 kbit/s after
/// `-t 8`), and a test cut short of it ends partial, without a verdict.
pub const DRAIN_CAP: Duration = Duration::from_secs(60);

/// Why the agent stopped a test at its [`Limits::test_end`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The agent's `--max-duration`, or an untimed test's own limit.
    Limit,
    /// A timed test whose data did not move for [`END_GRACE`] past its `-t`.
    Stalled,
    /// A timed test still draining [`DRAIN_CAP`] past its `-t`.
    StillDraining,
}

/// What the agent allows one session, and all of them together.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    /// The wall-clock cap on every test, of every kind (`-t`, `-n`, reverse, load, echo):
    /// a longer `-t` is refused, and the agent stops anything still running at this time.
    /// Session handlers read it from the [`AgentConfig`] they receive.
    pub max_duration: Duration,
    /// Highest UDP `-b` per stream, if limited (then `-b 0`, unlimited, is refused).
    pub max_rate_bits_per_second: Option<u64>,
    /// Sessions at once.
    pub max_sessions: usize,
    /// Largest `-w`.
    pub max_window_bytes: Option<u64>,
    /// Largest `-P`.
    pub max_streams: u32,
    /// Connections still in their handshake at once; more are closed on accept.
    pub max_pending: usize,
    /// The memory budget of the whole agent: sessions, streams and their buffers.
    pub max_memory_bytes: u64,
    /// Sessions one client address may hold at once (`--max-sessions-per-address`); `None`:
    /// half of `max_sessions`, so that one address leaves the other half to everyone else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sessions_per_address: Option<usize>,
    /// Echo sessions (`probe --udp`) one client address may hold at once
    /// (`--max-echo-per-address`); `None`: a quarter of `max_sessions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_echo_per_address: Option<usize>,
    /// Consent datagrams the agent sends for one client address in a minute
    /// (`--max-consent-datagrams`); `None`: ten destinations' worth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_consent_datagrams: Option<u32>,
}

/// Consent datagrams one destination costs at most (the generator's resends of its nonce).
pub const CONSENT_DATAGRAMS_PER_DESTINATION: u32 = 20;

/// The most `--max-consent-datagrams` may allow: 100 a second, a sixth of the 600 a second
/// that issue 32 made an agent send to a port of the attacker's choosing.
pub const MOST_CONSENT_DATAGRAMS: u32 = 6_000;

/// The smallest `--max-memory` that serves one default test (a session and a 128 KiB stream).
pub const MIN_MEMORY_BYTES: u64 = 16 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_duration: Duration::from_secs(3600),
            max_rate_bits_per_second: None,
            max_sessions: 64,
            max_window_bytes: None,
            max_streams: 128,
            max_pending: 256,
            max_memory_bytes: 1 << 30,
            max_sessions_per_address: None,
            max_echo_per_address: None,
            max_consent_datagrams: None,
        }
    }
}

impl Limits {
    /// Sessions one client address may hold at once: the flag's, or half of `max_sessions`.
    pub fn sessions_per_address(&self) -> usize {
        self.max_sessions_per_address
            .unwrap_or(self.max_sessions.div_ceil(2))
    }

    /// Echo sessions one client address may hold at once: the flag's, or a quarter of
    /// `max_sessions`.
    pub fn echo_per_address(&self) -> usize {
        self.max_echo_per_address
            .unwrap_or(self.max_sessions.div_ceil(4))
    }

    /// Consent datagrams per client address per minute: the flag's, or ten destinations'.
    pub fn consent_datagrams(&self) -> u32 {
        self.max_consent_datagrams
            .unwrap_or(10 * CONSENT_DATAGRAMS_PER_DESTINATION)
    }

    /// `Err` with one sentence naming the flag and a usable value when a per-address cap
    /// cannot hold (zero, or above the cap it is a share of).
    fn check_per_address(&self) -> Result<(), String> {
        let most = self.max_sessions;
        if let Some(n) = self.max_sessions_per_address
            && (n == 0 || n > most)
        {
            return Err(format!(
                "--max-sessions-per-address {n}: one address may hold 1 to --max-sessions ({most}) sessions (e.g. --max-sessions-per-address {})",
                most.div_ceil(2)
            ));
        }
        let sessions = self.sessions_per_address();
        if let Some(n) = self.max_echo_per_address
            && (n == 0 || n > sessions)
        {
            return Err(format!(
                "--max-echo-per-address {n}: echo sessions are sessions, so one address may hold 1 to {sessions} of them (its sessions' cap) (e.g. --max-echo-per-address {})",
                sessions.div_ceil(2)
            ));
        }
        if let Some(n) = self.max_consent_datagrams
            && !(CONSENT_DATAGRAMS_PER_DESTINATION..=MOST_CONSENT_DATAGRAMS).contains(&n)
        {
            return Err(format!(
                "--max-consent-datagrams {n}: give {CONSENT_DATAGRAMS_PER_DESTINATION} (one destination's consent) to {MOST_CONSENT_DATAGRAMS} (100 a second) a client address a minute (e.g. --max-consent-datagrams 200)"
            ));
        }
        Ok(())
    }

    /// How long after its start the agent lets a test run before it stops it: a timed test
    /// (`asked` = its `-t`, at most the limit) gets [`END_GRACE`] beyond it to drain and
    /// report; an untimed one (`-n`, a load or echo session's own clock) gets the limit itself.
    pub fn test_cap(&self, asked: Option<Duration>) -> Duration {
        match asked {
            Some(t) => t.min(self.max_duration) + END_GRACE,
            None => self.max_duration,
        }
    }

    /// When the agent stops a timed test (`asked` = its `-t`) whose data last moved at
    /// `last_moved` (both from the test's start), and why: [`END_GRACE`] after `-t` or after
    /// the data last moved, whichever is later, so that a slow path drains what was queued
    /// while a stalled one is called so [`END_GRACE`] after it stopped; never more than
    /// [`DRAIN_CAP`] past `-t`, nor [`END_GRACE`] past the agent's limit. An untimed test
    /// (`None`) ends at the limit.
    pub fn test_end(&self, asked: Option<Duration>, last_moved: Duration) -> (Duration, Stopped) {
        let Some(t) = asked else {
            return (self.max_duration, Stopped::Limit);
        };
        let t = t.min(self.max_duration);
        let limit = self.max_duration + END_GRACE;
        let draining_cap = t + DRAIN_CAP;
        let stalled = t.max(last_moved) + END_GRACE;
        if stalled <= draining_cap.min(limit) {
            (stalled, Stopped::Stalled)
        } else if draining_cap <= limit {
            (draining_cap, Stopped::StillDraining)
        } else {
            (limit, Stopped::Limit)
        }
    }

    /// The sentence a client is told when its test is stopped at its [`Limits::test_end`].
    pub fn stopped(&self, asked: Option<Duration>, why: Stopped) -> String {
        match (asked, why) {
            (Some(t), Stopped::Stalled) => format!(
                "the data stopped moving for {} s after the test's -t ({} s) and the test was stopped: a stalled path, or the client never said it had finished",
                END_GRACE.as_secs_f64(),
                t.as_secs_f64()
            ),
            (Some(t), Stopped::StillDraining) => format!(
                "the data was still draining {} s after the test's -t ({} s) and the test was stopped: the path is too slow for what the sender queued (ask for a shorter -t, or a window with -w)",
                DRAIN_CAP.as_secs_f64(),
                t.as_secs_f64()
            ),
            _ => self.cap_reached(None),
        }
    }

    /// The sentence a client is told when its test (`asked` = its `-t`) is stopped at the cap:
    /// the agent's limit, or a timed test that did not end within [`END_GRACE`] of its time.
    pub fn cap_reached(&self, asked: Option<Duration>) -> String {
        match asked {
            Some(t) if t < self.max_duration => format!(
                "the test did not end within {} s of its -t ({} s) and was stopped: the data stopped moving (a stalled path) or the client never said it had finished",
                END_GRACE.as_secs_f64(),
                t.as_secs_f64()
            ),
            _ => format!(
                "the test reached this agent's limit of {} s and was stopped (--max-duration on the agent; ask for less with -t or -n)",
                self.max_duration.as_secs_f64()
            ),
        }
    }

    /// `None` if the spec fits, else the refusal the client prints.
    pub fn check(&self, spec: &TestSpec) -> Option<String> {
        let refuse = |what: String, flag: &str| {
            Some(format!(
                "refused by the agent: {what} ({flag} on the agent)"
            ))
        };
        if spec.streams > self.max_streams {
            return refuse(
                format!(
                    "-P {} exceeds this agent's limit of {} parallel streams",
                    spec.streams, self.max_streams
                ),
                "--max-streams",
            );
        }
        match spec.amount {
            Amount::Seconds(s) if s > self.max_duration.as_secs_f64() => {
                return refuse(
                    format!(
                        "-t {s} s exceeds this agent's limit of {} s",
                        self.max_duration.as_secs_f64()
                    ),
                    "--max-duration",
                );
            }
            _ => {}
        }
        let largest = [
            spec.window_bytes,
            spec.send_buffer_bytes,
            spec.receive_buffer_bytes,
        ]
        .into_iter()
        .flatten()
        .max();
        if let (Some(max), Some(w)) = (self.max_window_bytes, largest)
            && w > max
        {
            return refuse(
                format!("-w {w} bytes exceeds this agent's limit of {max} bytes"),
                "--max-window",
            );
        }
        if let (Some(max), Protocol::Udp) = (self.max_rate_bits_per_second, spec.protocol) {
            let b = spec.rate_bits_per_second;
            if b == 0 || b > max {
                let asked = if b == 0 {
                    "unlimited (-b 0)".to_string()
                } else {
                    format!("-b {b} bit/s")
                };
                return refuse(
                    format!("rate {asked} exceeds this agent's limit of {max} bit/s per stream"),
                    "--max-rate",
                );
            }
        }
        None
    }
}

/// How the agent runs.
#[derive(Clone)]
pub struct AgentConfig {
    /// How long a new connection has to complete its handshake (hello, and the key's
    /// challenge when one is set) before it is closed.
    pub handshake_timeout: Duration,
    /// Told one line when the agent refuses connections (pending cap, failed thread spawn,
    /// accept errors such as EMFILE): once at the start of each burst, once when it ends.
    pub on_notice: Option<NoticeLog>,
    /// The limits.
    pub limits: Limits,
    /// The pre-shared key, if clients must prove they know it.
    pub auth: Option<AuthKey>,
    /// How long a silent peer is waited for.
    pub idle_timeout: Duration,
    /// Serve one session, then exit (`--one-off`).
    pub one_off: bool,
    /// Stop on SIGINT/SIGTERM (the binary's agent; not an in-process one).
    pub handle_signals: bool,
    /// Called with a record of every session when it ends (`--json` session log).
    pub on_session: Option<SessionLog>,
    /// Where load tests may send besides the agent's own address and its client's
    /// (`--allow-destination`; the destination must still prove consent, docs/traffic-rules.md).
    pub allow_destinations: Vec<Cidr>,
    /// Listen with Multipath TCP (`serve --mptcp`): clients' `--mptcp` data connections run
    /// MPTCP end to end; plain TCP clients are served as before (the listener falls back).
    pub mptcp: bool,
    /// `--exclusive`: one test at a time, the others queued (None: every test at once).
    pub exclusive: Option<Exclusive>,
}

/// `--exclusive`: the agent runs one test at a time (tests are told apart by the client's
/// address, so that the several sessions of one `latency` run together); the others wait in
/// a bounded queue, first come first served, each for a bounded time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exclusive {
    /// Tests waiting at most; one more is refused (`--queue-max`).
    pub queue_max: usize,
    /// The longest a test waits before it is refused (`--queue-timeout`).
    pub queue_timeout: Duration,
}

impl Default for Exclusive {
    fn default() -> Self {
        Exclusive {
            queue_max: 16,
            queue_timeout: Duration::from_secs(600),
        }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            limits: Limits::default(),
            auth: None,
            idle_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(5),
            on_notice: None,
            one_off: false,
            handle_signals: false,
            on_session: None,
            allow_destinations: Vec::new(),
            mptcp: false,
            exclusive: None,
        }
    }
}

/// Receives each finished session's record.
pub type SessionLog = Arc<dyn Fn(&SessionRecord) + Send + Sync>;

/// Receives the agent's notices (one line each).
pub type NoticeLog = Arc<dyn Fn(&str) + Send + Sync>;

impl AgentConfig {
    /// `Err` with one sentence (naming the flag and a usable value) if a setting makes no
    /// sense: a zero timeout fails every session, a zero cap serves nobody.
    pub fn check(&self) -> Result<(), String> {
        let least = Duration::from_millis(100);
        let timeouts = [
            (self.idle_timeout, "--idle-timeout", "10s"),
            (self.handshake_timeout, "--handshake-timeout", "5s"),
            (self.limits.max_duration, "--max-duration", "1h"),
        ];
        for (value, flag, example) in timeouts {
            if value < least {
                return Err(format!(
                    "{flag} {} s is too short for any session to complete; use at least 100ms (e.g. {flag} {example})",
                    value.as_secs_f64()
                ));
            }
        }
        let counts = [
            (self.limits.max_sessions, "--max-sessions", 64),
            (self.limits.max_streams as usize, "--max-streams", 128),
            (self.limits.max_pending, "--max-pending", 256),
        ];
        for (value, flag, example) in counts {
            if value == 0 {
                return Err(format!(
                    "{flag} 0 would serve nobody; use at least 1 (e.g. {flag} {example})"
                ));
            }
        }
        if let Some(x) = &self.exclusive {
            if x.queue_timeout < Duration::from_secs(1)
                || x.queue_timeout > Duration::from_secs(86_400)
            {
                return Err(format!(
                    "--queue-timeout {} s: a queued test must wait 1 s to 24 h (e.g. --queue-timeout 10m)",
                    x.queue_timeout.as_secs_f64()
                ));
            }
            if x.queue_max > 1024 {
                return Err(format!(
                    "--queue-max {}: at most 1024 tests may wait (e.g. --queue-max 16)",
                    x.queue_max
                ));
            }
        }
        if self.limits.max_memory_bytes < MIN_MEMORY_BYTES {
            return Err(format!(
                "--max-memory {} bytes cannot hold one session; use at least 16MiB (e.g. --max-memory 1GiB)",
                self.limits.max_memory_bytes
            ));
        }
        if self.limits.max_rate_bits_per_second == Some(0) {
            return Err("--max-rate 0 would refuse every UDP test; give a rate (e.g. --max-rate 1G) or leave the flag out".into());
        }
        if self.limits.max_window_bytes == Some(0) {
            return Err("--max-window 0 would refuse every -w; give a size (e.g. --max-window 16MiB) or leave the flag out".into());
        }
        self.limits.check_per_address()
    }
}

/// An address block, as `--allow-destination` takes it: `198.18.0.0/15`, `2001:2::/48`, or one
/// address (a /32 or /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Whether `ip` lies in the block (an IPv4-mapped IPv6 address counts as its IPv4 one).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u128::from(u32::from(ip)), 32, self.prefix) == u128::from(u32::from(net))
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(ip), 128, self.prefix) == u128::from(net)
            }
            _ => false,
        }
    }
}

/// `value` of `bits` bits with all but the top `prefix` cleared.
fn masked(value: u128, bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let keep = u128::MAX << (128 - u32::from(prefix));
    ((value << (128 - u32::from(bits))) & keep) >> (128 - u32::from(bits))
}

impl FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Cidr, String> {
        let bad = || {
            format!(
                "{text:?} is not an address block (examples: 198.18.0.0/15, 2001:2::/48, 192.0.2.7)"
            )
        };
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let addr = addr.to_canonical();
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= bits)
                .ok_or_else(bad)?,
        };
        // Host bits are cleared: 198.18.0.1/15 is the block 198.18.0.0/15.
        let addr = match addr {
            IpAddr::V4(a) => {
                IpAddr::V4((masked(u128::from(u32::from(a)), 32, prefix) as u32).into())
            }
            IpAddr::V6(a) => IpAddr::V6(masked(u128::from(a), 128, prefix).into()),
        };
        Ok(Cidr { addr, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// What happened in one session, for the agent's log.
#[derive(Debug, Clone, Serialize)]
pub struct SessionRecord {
    /// Agent-wide session number, from 1.
    pub session: u64,
    /// The client's control address.
    pub peer: String,
    /// `completed`, `refused` or `failed`.
    pub outcome: &'static str,
    /// The refusal or error, verbatim.
    pub message: Option<String>,
    /// What the client asked for, if it got that far.
    pub spec: Option<TestSpec>,
    /// The agent's measurements, if the test ran.
    pub report: Option<SideReport>,
    /// How long the session lasted.
    pub seconds: f64,
    /// `--exclusive`: how long it waited for another test to end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_seconds: Option<f64>,
    /// `iperf3` for a test of the agent's iperf3 service (`serve --iperf3`, numbered apart
    /// from the agent's own sessions); absent for wirespeed's protocol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<&'static str>,
}
