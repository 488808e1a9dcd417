//! `wirespeed serve`: the agent, the far end of every test.
//!
//! One listening port carries control and data connections (a data connection opens with
//! [`DATA_MAGIC`](crate::control::DATA_MAGIC) and the session cookie). Every control connection
//! gets its own thread, so one client's test never waits for another's (iperf3 serves one client
//! at a time). Limits are checked before anything is opened and refused with a sentence the
//! client prints verbatim; a silent peer times out; a malformed or out-of-order message gets an
//! error reply and closes that session only. SIGINT/SIGTERM (or [`AgentHandle::stop`]) stop the
//! accept loop, tell live sessions and shut their sockets.
//!
//! Hostile peers (issue 13) meet the limits of sshd's pre-authentication stage: at most
//! `max_pending` connections may be in their handshake at once (fewer when `ulimit -n` leaves
//! less room beside every session slot: [`descriptors`]; a new one closes the one that has
//! waited longest), the
//! handshake (hello, and the key's challenge when one is set) has its own short deadline, and a
//! session slot is taken only once it completes, so unauthenticated peers cannot lock keyed
//! clients out. A failed thread spawn or accept error refuses that one connection and backs
//! off; nothing one connection does ends the agent. Memory is reserved from one
//! [`Budget`] before it is allocated. Every test, of every kind, is stopped at the agent's
//! `max_duration` by the agent itself.

// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
#[doc(hidden)]
pub mod descriptors;
#[doc(hidden)]
pub mod echo;
#[doc(hidden)]
pub mod queue;
mod rr;
mod supervise;

use crate::address::with_port;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use serde::Serialize;

use crate::auth::{HANDSHAKE_NONCE_BYTES, Role, hex, random_bytes, unhex};
use crate::budget::{self, Budget, Reservation};
use crate::control::{Cookie, DATA_MAGIC, Message, PROTOCOL_VERSION, Phase, parse_greeting_rest};
use crate::engine::{DataSocket, Moved, Running, Side};
use crate::env::Environment;
use crate::report::{Interval, keep_interval};
use crate::session::{Control, SessionError};
use crate::sockopt;
use crate::spec::{Flow, Protocol, TestSpec};

pub use crate::agent_config::{
    AgentConfig, END_GRACE, Limits, NoticeLog, SessionLog, SessionRecord,
};

/// What the agent holds and has refused, for tests and the operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AgentStats {
    /// Connections in their handshake now.
    pub pending: usize,
    /// Sessions past their handshake now.
    pub sessions: usize,
    /// Bytes reserved from the memory budget now.
    pub memory_reserved_bytes: u64,
    /// Connections closed because `max_pending` were in their handshake (the oldest waiting
    /// one is closed to make room).
    pub refused_pending: u64,
    /// Connections closed because their thread could not be created.
    pub refused_spawn: u64,
    /// Connections closed because the memory budget could not hold their handshake.
    pub refused_memory: u64,
    /// Accept calls that failed (EMFILE and the like) and made the loop back off.
    pub accept_errors: u64,
    /// Sessions closed because they had not asked for a test within [`IDLE_SLOT_GRACE`] of
    /// their hello when another client needed their slot (or the agent a descriptor or thread).
    pub evicted_idle: u64,
    /// `--exclusive`: tests waiting for another to end now.
    pub queued: usize,
    /// `--exclusive`: tests that waited, in all.
    pub queued_total: u64,
    /// `--exclusive`: tests refused because the queue was full or they waited too long.
    pub refused_queue: u64,
    /// `--exclusive`: time tests waited in the queue, in all, microseconds.
    pub queue_wait_micros_total: u64,
    /// Bytes this agent's test streams sent, in all, counted as they move (at most
    /// [`LIVE_TICK`] late).
    pub test_bytes_sent: u64,
    /// Bytes this agent's test streams received, in all, counted as they move.
    pub test_bytes_received: u64,
    /// UDP datagrams this agent's test streams sent, in all, counted as they move.
    pub test_datagrams_sent: u64,
    /// UDP datagrams this agent's test streams received (unique sequence numbers), in all.
    pub test_datagrams_received: u64,
    /// The iperf3 service beside the agent (`serve --iperf3`), when it runs; its caller
    /// fills it in, the agent knows nothing of it.
    pub iperf3: Option<Iperf3Counts>,
}

/// What the iperf3 service (`crate::iperf3::server`) has done, for the agent's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Iperf3Counts {
    /// Tests running now.
    pub sessions: usize,
    /// Tests that ran to their results, in all.
    pub completed: u64,
    /// Clients refused or tests that failed (busy, limits, bad parameters, timeouts), in all.
    pub refused: u64,
    /// Of those, clients refused because the agent's `--max-sessions` were all taken.
    pub refused_sessions: u64,
    /// Payload bytes sent to clients, in all, counted while tests run.
    pub bytes_sent: u64,
    /// Payload bytes received from clients, in all, counted while tests run.
    pub bytes_received: u64,
}

/// How often a running test adds what its streams moved to the agent's totals: a
/// Prometheus `rate()` over a test must see it move, at least once a second.
pub const LIVE_TICK: Duration = Duration::from_millis(250);

/// What every test moved, in all, fed by the running sessions as they go.
#[derive(Debug, Default)]
struct LiveTotals {
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    datagrams_sent: AtomicU64,
    datagrams_received: AtomicU64,
}

impl LiveTotals {
    /// Adds what moved since `told`, and remembers `now` as told.
    fn add(&self, now: Moved, told: &mut Moved) {
        let add = |total: &AtomicU64, now: u64, before: u64| {
            total.fetch_add(now.saturating_sub(before), Ordering::Relaxed);
        };
        add(&self.bytes_sent, now.bytes_sent, told.bytes_sent);
        add(
            &self.bytes_received,
            now.bytes_received,
            told.bytes_received,
        );
        add(
            &self.datagrams_sent,
            now.datagrams_sent,
            told.datagrams_sent,
        );
        add(
            &self.datagrams_received,
            now.datagrams_received,
            told.datagrams_received,
        );
        *told = Moved {
            bytes_sent: now.bytes_sent.max(told.bytes_sent),
            bytes_received: now.bytes_received.max(told.bytes_received),
            datagrams_sent: now.datagrams_sent.max(told.datagrams_sent),
            datagrams_received: now.datagrams_received.max(told.datagrams_received),
        };
    }
}

type DataConn = (u32, TcpStream);

/// Where a session awaiting its data connections takes them: the client's address, the
/// session's channel, and how many more of them may still pass a full pending cap (one per
/// stream: a test's own data connections never count against the cap, issue 32).
struct DataRoute {
    ip: IpAddr,
    tx: Sender<DataConn>,
    spare: usize,
}

struct Shared {
    config: AgentConfig,
    stop: AtomicBool,
    sessions: AtomicUsize,
    pending: AtomicUsize,
    next_id: AtomicU64,
    budget: Arc<Budget>,
    refused_pending: AtomicU64,
    refused_spawn: AtomicU64,
    refused_memory: AtomicU64,
    accept_errors: AtomicU64,
    data_routes: Mutex<HashMap<Cookie, DataRoute>>,
    controls: Mutex<HashMap<u64, TcpStream>>,
    /// The connections in their handshake, oldest first, with their peer's address (a second
    /// handle to each, to close the oldest when the cap is reached).
    waiting: Mutex<VecDeque<(u64, Instant, TcpStream, IpAddr)>>,
    /// Connections in their handshake per peer address now.
    pending_by_address: Mutex<HashMap<IpAddr, usize>>,
    next_conn: AtomicU64,
    /// `--exclusive`: the test that runs and the queue.
    gate: Option<queue::Gate>,
    /// Sessions past their handshake that have not asked for a test yet, oldest first (a
    /// second handle to each, to free its slot for a client that needs one).
    idle: Mutex<VecDeque<(u64, Instant, TcpStream)>>,
    /// Sessions and echo sessions per client address now.
    per_address: Mutex<HashMap<IpAddr, (usize, usize)>>,
    /// Consent datagrams sent per client address this minute.
    nonces: crate::load::consent::NonceBudget,
    /// Sessions closed because they sat idle after their hello while another client needed
    /// the slot.
    evicted_idle: AtomicU64,
    /// What the tests moved, as they move it.
    live: LiveTotals,
    /// Descriptors open when the agent bound its port (its listener's number plus one).
    open_at_start: u64,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || (self.config.handle_signals && crate::signal::requested())
    }

    fn notice(&self, line: &str) {
        if let Some(log) = &self.config.on_notice {
            log(line);
        }
    }

    fn stats(&self) -> AgentStats {
        let q = self
            .gate
            .as_ref()
            .map(queue::Gate::stats)
            .unwrap_or_default();
        AgentStats {
            queued: q.waiting,
            queued_total: q.queued_total,
            refused_queue: q.refused_total,
            queue_wait_micros_total: q.waited_micros_total,
            pending: self.pending.load(Ordering::Acquire),
            sessions: self.sessions.load(Ordering::Acquire),
            memory_reserved_bytes: self.budget.used(),
            refused_pending: self.refused_pending.load(Ordering::Relaxed),
            refused_spawn: self.refused_spawn.load(Ordering::Relaxed),
            refused_memory: self.refused_memory.load(Ordering::Relaxed),
            accept_errors: self.accept_errors.load(Ordering::Relaxed),
            evicted_idle: self.evicted_idle.load(Ordering::Relaxed),
            test_bytes_sent: self.live.bytes_sent.load(Ordering::Relaxed),
            test_bytes_received: self.live.bytes_received.load(Ordering::Relaxed),
            test_datagrams_sent: self.live.datagrams_sent.load(Ordering::Relaxed),
            test_datagrams_received: self.live.datagrams_received.load(Ordering::Relaxed),
            iperf3: None,
        }
    }
}

/// A mutex's contents even if a thread panicked while holding it: one connection's panic
/// must not take the others (and the accept loop) with it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection counted as pending (and its memory held) until its handshake ends.
struct Pending {
    shared: Arc<Shared>,
    conn: u64,
    ip: IpAddr,
    _memory: Reservation,
}

impl Pending {
    /// Counts a connection from `ip` as in its handshake.
    fn count(shared: &Arc<Shared>, conn: u64, ip: IpAddr, memory: Reservation) -> Pending {
        shared.pending.fetch_add(1, Ordering::AcqRel);
        *lock(&shared.pending_by_address).entry(ip).or_default() += 1;
        Pending {
            shared: shared.clone(),
            conn,
            ip,
            _memory: memory,
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        lock(&self.shared.waiting).retain(|(c, _, _, _)| *c != self.conn);
        {
            let mut by = lock(&self.shared.pending_by_address);
            if let Some(n) = by.get_mut(&self.ip) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    by.remove(&self.ip);
                }
            }
        }
        self.shared.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long a connection must have waited in its handshake before a newcomer may close it: a
/// burst of a test's own data connections (up to 128 at once) must not close each other.
#[doc(hidden)]
pub const EVICT_AFTER: Duration = Duration::from_millis(250);

/// Closes the connection that has waited longest in its handshake, if it has waited at least
/// [`EVICT_AFTER`]. A full house of idle peers then cannot lock a legitimate client out: to
/// keep it out, an attacker must keep opening `max_pending` connections every 250 ms.
fn close_oldest_waiting(shared: &Shared) -> bool {
    close_oldest_waiting_of(shared, None)
}

/// As [`close_oldest_waiting`], among the connections from `from` only when given (an
/// address at its share of the cap replaces only its own).
fn close_oldest_waiting_of(shared: &Shared, from: Option<IpAddr>) -> bool {
    let mut waiting = lock(&shared.waiting);
    let at = waiting
        .iter()
        .position(|(_, _, _, ip)| from.is_none_or(|f| f == *ip));
    let Some(at) = at else {
        return false;
    };
    if waiting[at].1.elapsed() < EVICT_AFTER {
        return false;
    }
    waiting.remove(at).is_some_and(|(_, _, s, _)| {
        let _ = s.shutdown(std::net::Shutdown::Both);
        true
    })
}

/// The handshake cap under the descriptor limit now; says so once each time the limit moves
/// it below `--max-pending` (`capped_at`: the cap last said).
fn handshake_cap(shared: &Shared, nofile: Option<u64>, capped_at: &mut usize) -> usize {
    let limits = &shared.config.limits;
    let cap = descriptors::handshake_cap(
        limits.max_pending,
        limits.max_sessions,
        nofile,
        shared.open_at_start,
    );
    if cap != *capped_at {
        *capped_at = cap;
        if cap < limits.max_pending {
            shared.notice(&format!(
                "ulimit -n {} leaves room for {cap} connection(s) in their handshake beside {} session(s) (--max-pending {}): raise ulimit -n or lower --max-sessions",
                nofile.unwrap_or_default(),
                limits.max_sessions,
                limits.max_pending
            ));
        }
    }
    cap
}

/// Connections one address may hold in their handshake at once: half of `--max-pending`, so
/// that a storm from one address leaves the other half to everyone else (issue 32: a storm
/// kept the whole cap full of fresh newcomers and closed a keyed test's connections).
fn pending_share(max_pending: usize) -> usize {
    max_pending.div_ceil(2)
}

/// How long a session may sit after its welcome without asking for a test before a client
/// that needs its slot may take it ("a few seconds": a real client asks at once).
pub const IDLE_SLOT_GRACE: Duration = Duration::from_secs(2);

/// How long a newcomer waits for an evicted session's slot to come free.
const ROOM_WAIT: Duration = Duration::from_secs(2);

/// Closes the session that has sat longest after its hello without asking for a test, if it
/// has sat [`IDLE_SLOT_GRACE`]. Its thread sees the shutdown and frees its slot.
fn evict_idle_session(shared: &Shared) -> bool {
    let victim = {
        let mut idle = lock(&shared.idle);
        let old_enough = idle
            .front()
            .is_some_and(|(_, since, _)| since.elapsed() >= IDLE_SLOT_GRACE);
        if old_enough { idle.pop_front() } else { None }
    };
    victim.is_some_and(|(_, _, s)| {
        let _ = s.shutdown(std::net::Shutdown::Both);
        shared.evicted_idle.fetch_add(1, Ordering::Relaxed);
        true
    })
}

/// When descriptors or threads run out (a `ulimit -n`, a cgroup's `pids.max`): closes the
/// peer that holds one for least reason, a connection still in its handshake or else an idle
/// session, so that the next client gets in instead of the idlers keeping every resource.
fn evict_for_resources(shared: &Shared) -> bool {
    close_oldest_waiting(shared) || evict_idle_session(shared)
}

/// A session at the `--max-sessions` cap: frees an idle session's slot and waits (bounded)
/// for it. True when this session (already counted) fits.
fn make_room(shared: &Shared, max: usize) -> bool {
    if !evict_idle_session(shared) {
        return false;
    }
    let deadline = Instant::now() + ROOM_WAIT;
    while Instant::now() < deadline {
        if shared.sessions.load(Ordering::Acquire) <= max {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// A session's share of the per-address counts, given back when it ends.
struct AddressShare<'a> {
    shared: &'a Shared,
    ip: IpAddr,
    echo: bool,
}

impl<'a> AddressShare<'a> {
    fn session(shared: &'a Shared, ip: IpAddr) -> Result<AddressShare<'a>, String> {
        let ip = ip.to_canonical();
        let cap = shared.config.limits.sessions_per_address();
        let mut map = lock(&shared.per_address);
        let entry = map.entry(ip).or_default();
        if entry.0 >= cap {
            return Err(format!(
                "refused by the agent: {ip} holds {cap} sessions already, the most one address may (--max-sessions-per-address; by default half of --max-sessions); end one first"
            ));
        }
        entry.0 += 1;
        Ok(AddressShare {
            shared,
            ip,
            echo: false,
        })
    }

    fn echo(&mut self) -> Result<(), String> {
        let cap = self.shared.config.limits.echo_per_address();
        let mut map = lock(&self.shared.per_address);
        let entry = map.entry(self.ip).or_default();
        if entry.1 >= cap {
            return Err(format!(
                "refused by the agent: {} holds {cap} echo sessions already, the most one address may (--max-echo-per-address; by default a quarter of --max-sessions); end one first",
                self.ip
            ));
        }
        entry.1 += 1;
        self.echo = true;
        Ok(())
    }
}

impl Drop for AddressShare<'_> {
    fn drop(&mut self) {
        let mut map = lock(&self.shared.per_address);
        if let Some(entry) = map.get_mut(&self.ip) {
            entry.0 = entry.0.saturating_sub(1);
            if self.echo {
                entry.1 = entry.1.saturating_sub(1);
            }
            if *entry == (0, 0) {
                map.remove(&self.ip);
            }
        }
    }
}

/// Whether `stream` (just accepted, over the pending cap or its address's share) is a test's
/// own data connection, which never counts against the cap (issue 32: a storm of newcomers
/// closed one): its greeting already carries the cookie of a session awaiting its data
/// connections from the same address, or (the greeting not yet arrived, looked at without
/// waiting) such a session still awaits one of its streams from this address. Each session
/// lets at most one connection a stream pass this way.
fn awaited_data_connection(shared: &Shared, stream: &TcpStream, peer: SocketAddr) -> bool {
    let mut greeting = [0u8; 24];
    let peeked = stream
        .set_nonblocking(true)
        .and_then(|()| stream.peek(&mut greeting));
    let _ = stream.set_nonblocking(false);
    let mut routes = lock(&shared.data_routes);
    let route = if matches!(peeked, Ok(24)) && greeting[..4] == DATA_MAGIC {
        let rest: [u8; 20] = greeting[4..].try_into().expect("20 bytes");
        let (cookie, _) = parse_greeting_rest(&rest);
        routes.get_mut(&cookie).filter(|r| r.ip == peer.ip())
    } else if matches!(peeked, Ok(n) if n > 0 && greeting[..n.min(4)] != DATA_MAGIC[..n.min(4)]) {
        // Something else already arrived (a hello, junk): not a data connection.
        None
    } else {
        routes
            .values_mut()
            .find(|r| r.ip == peer.ip() && r.spare > 0)
    };
    route.is_some_and(|r| {
        r.spare = r.spare.saturating_sub(1);
        true
    })
}

/// Counts refusals of one kind and says so once when they start and once when they stop,
/// so that a flood writes two lines, not one per connection.
struct Burst {
    what: &'static str,
    count: u64,
}

impl Burst {
    fn new(what: &'static str) -> Burst {
        Burst { what, count: 0 }
    }

    fn hit(&mut self, shared: &Shared, why: impl FnOnce() -> String) {
        if self.count == 0 {
            shared.notice(&format!("{}: {} (said once per burst)", self.what, why()));
        }
        self.count += 1;
    }

    fn clear(&mut self, shared: &Shared) {
        if self.count > 0 {
            shared.notice(&format!(
                "{}: over, {} connection(s) refused in that burst",
                self.what, self.count
            ));
            self.count = 0;
        }
    }
}

/// How long the accept loop waits for a connection before it looks at its stop flag again.
const ACCEPT_POLL: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 200_000_000,
};

/// The accept loop's pause after a failed accept (EMFILE, ENFILE, ENOBUFS, ENOMEM): the
/// connection stays in the backlog, so retrying at once spins a core (issue 13 finding 6).
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
const BACKOFF_MOST: Duration = Duration::from_millis(100);

/// Thread creations tried for one connection, each after freeing an idler's thread.
const SPAWN_TRIES: u32 = 4;
/// The pause for an evicted idler's thread to end before the next try.
const SPAWN_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// A bound agent, ready to serve.
pub struct Agent {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// The agent's `--max-sessions` slots, for a service beside it whose tests count against the
/// same cap (`serve --iperf3`): an operator's cap on concurrent tests means every test, whatever
/// protocol asked for it.
#[derive(Clone)]
pub struct SessionSlots {
    shared: Arc<Shared>,
}

/// One slot of the agent's `--max-sessions`, given back when dropped.
pub struct SessionSlot {
    shared: Arc<Shared>,
}

impl SessionSlots {
    /// A slot when one is free, or made free as for a native session (an idle session past
    /// its grace is closed for it); `None` at the cap.
    pub fn take(&self) -> Option<SessionSlot> {
        let max = self.shared.config.limits.max_sessions;
        let active = self.shared.sessions.fetch_add(1, Ordering::AcqRel);
        let slot = SessionSlot {
            shared: self.shared.clone(),
        };
        (active < max || make_room(&self.shared, max)).then_some(slot)
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.shared.config.limits.max_sessions
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.shared.sessions.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Stops an agent running in another thread.
#[derive(Clone)]
pub struct AgentHandle {
    shared: Arc<Shared>,
}

impl AgentHandle {
    /// Asks the agent to stop; `serve` returns soon after.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
    }

    /// What the agent holds and has refused so far.
    pub fn stats(&self) -> AgentStats {
        self.shared.stats()
    }
}

impl Agent {
    /// Binds the control port. `[::]:port` serves IPv4 and IPv6 alike. A configuration that
    /// [`AgentConfig::check`] refuses is an `InvalidInput` error.
    pub fn bind(addr: SocketAddr, config: AgentConfig) -> io::Result<Agent> {
        config
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let domain = socket2::Domain::for_address(addr);
        let protocol = if config.mptcp {
            socket2::Protocol::MPTCP
        } else {
            socket2::Protocol::TCP
        };
        let s = socket2::Socket::new(domain, socket2::Type::STREAM, Some(protocol)).map_err(|e| {
            if config.mptcp {
                io::Error::new(
                    e.kind(),
                    format!("this kernel does not open Multipath TCP sockets ({e}): enable it (sysctl net.mptcp.enabled=1) or drop --mptcp"),
                )
            } else {
                e
            }
        })?;
        s.set_reuse_address(true)?;
        if addr.is_ipv6() && addr.ip().is_unspecified() {
            s.set_only_v6(false)?;
        }
        s.bind(&addr.into())?;
        s.listen(1024)?;
        if config.handle_signals {
            crate::signal::install();
        }
        let budget = Budget::new(config.limits.max_memory_bytes);
        let gate = config.exclusive.map(queue::Gate::new);
        let nonces = crate::load::consent::NonceBudget::new(config.limits.consent_datagrams());
        let open_at_start = {
            use std::os::fd::AsRawFd;
            u64::try_from(s.as_raw_fd()).map_or(0, |fd| fd + 1)
        };
        Ok(Agent {
            listener: s.into(),
            shared: Arc::new(Shared {
                config,
                stop: AtomicBool::new(false),
                sessions: AtomicUsize::new(0),
                pending: AtomicUsize::new(0),
                next_id: AtomicU64::new(1),
                budget,
                refused_pending: AtomicU64::new(0),
                refused_spawn: AtomicU64::new(0),
                refused_memory: AtomicU64::new(0),
                accept_errors: AtomicU64::new(0),
                data_routes: Mutex::new(HashMap::new()),
                controls: Mutex::new(HashMap::new()),
                waiting: Mutex::new(VecDeque::new()),
                pending_by_address: Mutex::new(HashMap::new()),
                next_conn: AtomicU64::new(0),
                gate,
                idle: Mutex::new(VecDeque::new()),
                per_address: Mutex::new(HashMap::new()),
                nonces,
                evicted_idle: AtomicU64::new(0),
                live: LiveTotals::default(),
                open_at_start,
            }),
        })
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The agent's memory budget (`--max-memory`), for a service beside it that must draw
    /// from the same one (`serve --iperf3`).
    pub fn memory_budget(&self) -> Arc<Budget> {
        self.shared.budget.clone()
    }

    /// Its `--max-sessions` slots, for a service beside it whose tests must count against the
    /// same cap (`serve --iperf3`).
    pub fn session_slots(&self) -> SessionSlots {
        SessionSlots {
            shared: self.shared.clone(),
        }
    }

    /// A handle that stops this agent.
    pub fn handle(&self) -> AgentHandle {
        AgentHandle {
            shared: self.shared.clone(),
        }
    }

    /// Runs `serve` in a thread.
    pub fn spawn(self) -> io::Result<(AgentHandle, JoinHandle<io::Result<()>>)> {
        let handle = self.handle();
        let thread = std::thread::Builder::new()
            .name("ws-agent".into())
            .spawn(move || self.serve())?;
        Ok((handle, thread))
    }

    /// Accepts connections until stopped (or after one session with `one_off`). No error of
    /// one connection ends it: failed accepts back off and retry, a connection over the
    /// pending cap or whose thread cannot be created is closed and counted.
    pub fn serve(self) -> io::Result<()> {
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let shared = &self.shared;
        let mut backoff = BACKOFF_FIRST;
        let mut accept_burst = Burst::new("accept failing, backing off");
        let mut pending_burst = Burst::new("too many connections in their handshake");
        let mut share_burst = Burst::new("one address holds its share of the handshakes");
        let mut spawn_burst = Burst::new("cannot create a thread for a connection");
        let mut memory_burst = Burst::new("memory budget full");
        let mut capped_at = shared.config.limits.max_pending;
        while !shared.stopping() {
            let mut pfd = [PollFd::new(&self.listener, PollFlags::IN)];
            let ready = poll(&mut pfd, Some(&ACCEPT_POLL));
            threads.retain(|t| !t.is_finished());
            if !matches!(ready, Ok(n) if n > 0) {
                continue;
            }
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e)
                    if e.kind() == io::ErrorKind::Interrupted
                        || e.raw_os_error() == Some(libc::ECONNABORTED) =>
                {
                    continue;
                }
                Err(e) => {
                    shared.accept_errors.fetch_add(1, Ordering::Relaxed);
                    accept_burst.hit(shared, || e.to_string());
                    // Out of descriptors: free one held by an idler, so that the connection
                    // waiting in the backlog (perhaps a real client) gets in on the retry.
                    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                        evict_for_resources(shared);
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(BACKOFF_MOST);
                    continue;
                }
            };
            backoff = BACKOFF_FIRST;
            accept_burst.clear(shared);
            let nofile = descriptors::limit();
            {
                use std::os::fd::AsRawFd;
                let fd = u64::try_from(stream.as_raw_fd()).unwrap_or(u64::MAX);
                for _ in 0..descriptors::short_of_headroom(fd, nofile) {
                    if !evict_for_resources(shared) {
                        break;
                    }
                }
            }
            let max_pending = handshake_cap(shared, nofile, &mut capped_at);
            let ip = peer.ip();
            let share = pending_share(max_pending);
            let held = lock(&shared.pending_by_address)
                .get(&ip)
                .copied()
                .unwrap_or(0);
            let at_share = held >= share;
            if (at_share || shared.pending.load(Ordering::Acquire) >= max_pending)
                && !awaited_data_connection(shared, &stream, peer)
            {
                shared.refused_pending.fetch_add(1, Ordering::Relaxed);
                let burst = if at_share {
                    &mut share_burst
                } else {
                    &mut pending_burst
                };
                burst.hit(shared, || {
                    if at_share {
                        format!(
                            "{ip} holds {share}, half of --max-pending {max_pending}; closing its oldest, or its newcomer (--max-pending)"
                        )
                    } else {
                        format!(
                            "{max_pending} at once; closing the oldest, or the newcomer (--max-pending)"
                        )
                    }
                });
                if !close_oldest_waiting_of(shared, at_share.then_some(ip)) {
                    continue;
                }
            } else {
                pending_burst.clear(shared);
                share_burst.clear(shared);
            }
            let memory = match shared.budget.reserve(budget::PENDING_BYTES) {
                Ok(r) => r,
                Err(e) => {
                    shared.refused_memory.fetch_add(1, Ordering::Relaxed);
                    memory_burst.hit(shared, || {
                        format!(
                            "{} free of {}; closing new connections (--max-memory)",
                            budget::mib(e.free),
                            budget::mib(e.limit)
                        )
                    });
                    continue;
                }
            };
            memory_burst.clear(shared);
            let conn = shared.next_conn.fetch_add(1, Ordering::Relaxed);
            let pending = Pending::count(shared, conn, ip, memory);
            if let Ok(second) = stream.try_clone() {
                lock(&shared.waiting).push_back((conn, Instant::now(), second, ip));
            }
            // The connection waits in a cell the thread takes it from, so that a failed spawn
            // (a task limit) leaves it here to try again once an idler's thread is gone.
            let cell = Arc::new(Mutex::new(Some((stream, pending))));
            let mut tries = 0;
            loop {
                let conn_shared = shared.clone();
                let conn_cell = cell.clone();
                let spawned = std::thread::Builder::new()
                    .name("ws-conn".into())
                    .spawn(move || {
                        if let Some((stream, pending)) = lock(&conn_cell).take() {
                            handle_connection(stream, peer, &conn_shared, pending);
                        }
                    });
                match spawned {
                    Ok(t) => {
                        threads.push(t);
                        spawn_burst.clear(shared);
                        break;
                    }
                    Err(e) => {
                        tries += 1;
                        if tries < SPAWN_TRIES && evict_for_resources(shared) {
                            std::thread::sleep(SPAWN_RETRY_PAUSE);
                            continue;
                        }
                        // That one connection is closed with its pending count.
                        lock(&cell).take();
                        shared.refused_spawn.fetch_add(1, Ordering::Relaxed);
                        spawn_burst.hit(shared, || e.to_string());
                        break;
                    }
                }
            }
        }
        // Unblock live sessions: a read on a socket shut for reading returns at once, and the
        // session's own thread says why in its next frame. Not a write from here: a keyed
        // session's frames are sealed, and an unsealed one reads as a forgery at the client
        // (and could interleave with the session's own frame).
        for (_, c) in lock(&shared.controls).drain() {
            let _ = c.shutdown(std::net::Shutdown::Read);
        }
        // And connections still in their handshake, whose threads wait on the peer for up to
        // the handshake timeout: closed as an evicted one is, so that they end now rather than
        // hold `serve` for the grace below (3 s with two silent peers pending, before).
        for (_, _, s, _) in lock(&shared.waiting).drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

/// Fills `buf` from `stream` before `deadline`, however slowly the peer trickles it.
fn read_by(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        match stream.read(&mut buf[got..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if crate::control::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn handle_connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    pending: Pending,
) {
    let deadline = Instant::now() + shared.config.handshake_timeout;
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 4];
    if read_by(&mut stream, &mut first, deadline).is_err() {
        return;
    }
    if first == DATA_MAGIC {
        let mut rest = [0u8; 20];
        if read_by(&mut stream, &mut rest, deadline).is_err() {
            return;
        }
        let (cookie, id) = parse_greeting_rest(&rest);
        let routes = lock(&shared.data_routes);
        // Unknown cookies and foreign addresses are dropped without a word.
        if let Some(route) = routes.get(&cookie)
            && route.ip == peer.ip()
        {
            let _ = route.tx.send((id, stream));
        }
        return;
    }
    let session = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let mut record = SessionRecord {
        session,
        peer: peer.to_string(),
        outcome: "failed",
        message: None,
        spec: None,
        report: None,
        seconds: 0.0,
        queued_seconds: None,
        protocol: None,
    };
    let auth = shared.config.auth.is_some();
    let mut ctl = Control::new(stream, &first, true, auth);
    let greeted = handshake(&mut ctl, shared, deadline);
    drop(pending);
    let completed_handshake = greeted.is_ok();
    let end = match greeted {
        Err(end) => Err(end),
        Ok(words) => serve_session(&mut ctl, peer, shared, session, &mut record, words),
    };
    match end {
        Ok(()) => {}
        Err(SessionEnd::Refused(reason)) => {
            let _ = ctl.send(&Message::Refused {
                reason: reason.clone(),
            });
            record.outcome = "refused";
            record.message = Some(reason);
        }
        Err(SessionEnd::Failed(e)) => {
            // A session whose read was shut by the agent's stop ended because of it.
            let stopped = shared.stopping() && matches!(e, SessionError::Closed);
            let message = if stopped {
                "the agent is shutting down".to_string()
            } else {
                e.to_string()
            };
            if stopped || !matches!(e, SessionError::Closed) {
                let _ = ctl.send(&Message::Error {
                    message: message.clone(),
                });
            }
            record.outcome = "failed";
            record.message = Some(message);
        }
    }
    let _ = ctl.stream.shutdown(std::net::Shutdown::Both);
    record.seconds = started.elapsed().as_secs_f64();
    if let Some(log) = &shared.config.on_session {
        log(&record);
    }
    // `--one-off` counts a session that completed its handshake, not a stray connection.
    if shared.config.one_off && completed_handshake {
        shared.stop.store(true, Ordering::Release);
    }
}

/// The hello, and the key's challenge when one is set, before `deadline`
/// (`--handshake-timeout`, apart from `--idle-timeout`). True if the client reads `queued`
/// notices (its hello names [`crate::control::QUEUE_FEATURE`]), and whether it asks for echo
/// residence times ([`crate::control::RESIDENCE_FEATURE`]).
fn handshake(
    ctl: &mut Control,
    shared: &Shared,
    deadline: Instant,
) -> Result<ClientWords, SessionEnd> {
    let cfg = &shared.config;
    let timed_out = |e: SessionError| match e {
        SessionError::Timeout { what, .. } => SessionEnd::Failed(SessionError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the handshake did not complete within {} s ({what}; --handshake-timeout on the agent)",
                cfg.handshake_timeout.as_secs_f64()
            ),
        ))),
        other => SessionEnd::Failed(other),
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let (protocol_version, software, client_nonce, words) = match ctl
        .recv(left(), "waiting for hello")
        .map_err(timed_out)?
    {
        Message::Hello {
            protocol_version,
            software,
            nonce,
        } => (
            protocol_version,
            software.clone(),
            nonce,
            ClientWords {
                notices: crate::control::names_feature(&software, crate::control::QUEUE_FEATURE),
                residence: crate::control::names_feature(
                    &software,
                    crate::control::RESIDENCE_FEATURE,
                ),
                follow_up: crate::control::names_feature(
                    &software,
                    crate::control::FOLLOW_UP_FEATURE,
                ),
                short_reply: crate::control::names_feature(
                    &software,
                    crate::control::SHORT_REPLY_FEATURE,
                ),
            },
        ),
        other => return Err(client_ended(other)),
    };
    if protocol_version != PROTOCOL_VERSION {
        return Err(SessionEnd::Refused(format!(
            "refused by the agent: the client speaks control protocol version {protocol_version}, this agent version {PROTOCOL_VERSION}; run the same wirespeed release at both ends"
        )));
    }
    if let Some(key) = &cfg.auth {
        let mut agent_nonce = [0u8; HANDSHAKE_NONCE_BYTES];
        random_bytes(&mut agent_nonce).map_err(SessionError::Io)?;
        let client_nonce = client_nonce
            .and_then(|n| unhex(&n))
            .filter(|n| n.len() == HANDSHAKE_NONCE_BYTES);
        // The agent proves the key first, for this session only; a client without a nonce
        // (no key, or an older release) gets a challenge without a proof and is refused below.
        let session = client_nonce
            .as_ref()
            .map(|c| key.handshake(protocol_version, &software, c, &agent_nonce));
        ctl.send(&Message::Challenge {
            nonce: hex(&agent_nonce),
            proof: session.as_ref().map(|h| hex(&h.proof(Role::Agent))),
        })?;
        // A client without the key gives up at the challenge (it closes, or says why): for
        // the operator that is a refusal for want of authentication, not a failed session.
        let mac = match ctl.recv(left(), "waiting for the authentication response") {
            Ok(Message::AuthResponse { mac }) => mac,
            _ => {
                return Err(SessionEnd::Refused(
                    "refused by the agent: authentication required (the client did not answer the key challenge; give it the agent's key with --auth-key-file)".into(),
                ));
            }
        };
        let Some(session) = session else {
            return Err(SessionEnd::Refused(
                "refused by the agent: the client answered with the one-way key check of an older wirespeed release, which a relay can pass; run the same wirespeed release at both ends".into(),
            ));
        };
        if !unhex(&mac).is_some_and(|mac| session.verify(Role::Client, &mac)) {
            return Err(SessionEnd::Refused(
                "refused by the agent: authentication failed (the client's --auth-key-file does not match the agent's)".into(),
            ));
        }
        ctl.secure(session.seal(Role::Agent));
    }
    Ok(words)
}

/// The features a client's hello named.
#[derive(Debug, Clone, Copy)]
struct ClientWords {
    /// It reads `queued` notices.
    notices: bool,
    /// It asks for the residence time in echo replies.
    residence: bool,
    /// It asks for follow-ups of the replies' send paths (with the residence).
    follow_up: bool,
    /// It may ask for short echo replies.
    short_reply: bool,
}

impl From<ClientWords> for echo::Stamps {
    fn from(w: ClientWords) -> echo::Stamps {
        echo::Stamps {
            residence: w.residence,
            follow_up: w.residence && w.follow_up,
            short_reply: w.short_reply,
        }
    }
}

/// A session past its handshake: takes a slot and the session's memory, or refuses.
fn serve_session(
    ctl: &mut Control,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    session: u64,
    record: &mut SessionRecord,
    words: ClientWords,
) -> Result<(), SessionEnd> {
    struct Slot<'a>(&'a AtomicUsize);
    impl Drop for Slot<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    let max = shared.config.limits.max_sessions;
    let active = shared.sessions.fetch_add(1, Ordering::AcqRel);
    let _slot = Slot(&shared.sessions);
    if active >= max && !make_room(shared, max) {
        return Err(SessionEnd::Refused(format!(
            "refused by the agent: it is serving its limit of {max} concurrent sessions; try again later (--max-sessions on the agent)"
        )));
    }
    let mut share = AddressShare::session(shared, peer.ip()).map_err(SessionEnd::Refused)?;
    let _memory = shared
        .budget
        .reserve(budget::SESSION_OVERHEAD_BYTES)
        .map_err(|e| SessionEnd::Refused(e.refusal("a session")))?;
    if let Ok(c) = ctl.stream.try_clone() {
        lock(&shared.controls).insert(session, c);
    }
    let result = run_session(ctl, peer, shared, record, words, &mut share);
    lock(&shared.controls).remove(&session);
    result
}

/// A session on the idle list from its welcome until its first request.
struct Idle<'a> {
    shared: &'a Shared,
    session: u64,
}

impl<'a> Idle<'a> {
    fn enter(shared: &'a Shared, session: u64, stream: &TcpStream) -> Idle<'a> {
        if let Ok(s) = stream.try_clone() {
            lock(&shared.idle).push_back((session, Instant::now(), s));
        }
        Idle { shared, session }
    }
}

impl Drop for Idle<'_> {
    fn drop(&mut self) {
        lock(&self.shared.idle).retain(|(s, _, _)| *s != self.session);
    }
}

enum SessionEnd {
    Refused(String),
    Failed(SessionError),
}

/// The end of a handshake by a message the phase admits but the handshake cannot use: the
/// only such message is the client's own error.
fn client_ended(m: Message) -> SessionEnd {
    let why = match m {
        Message::Error { message } => format!("the client ended the session: {message}"),
        other => format!("unexpected control message '{}'", other.kind()),
    };
    SessionEnd::Failed(SessionError::Io(io::Error::other(why)))
}

impl<E: Into<SessionError>> From<E> for SessionEnd {
    fn from(e: E) -> Self {
        SessionEnd::Failed(e.into())
    }
}

/// Whether the client hung up (its control connection reads end-of-file or fails).
fn client_gone(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let gone = match stream.peek(&mut [0u8; 1]) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != io::ErrorKind::WouldBlock && e.kind() != io::ErrorKind::Interrupted,
    };
    stream.set_nonblocking(false).is_err() || gone
}

/// `--exclusive`: waits for this test's turn (None without `--exclusive`), telling a client
/// that reads notices that it waits; the wait goes in the session's record.
fn wait_turn<'a>(
    shared: &'a Shared,
    ctl: &mut Control,
    peer: SocketAddr,
    notices: bool,
    record: &mut SessionRecord,
) -> Result<Option<queue::Turn<'a>>, SessionEnd> {
    let Some(gate) = &shared.gate else {
        return Ok(None);
    };
    let probe = ctl.stream.try_clone().map_err(SessionError::Io)?;
    let mut notify = |position: u32, waited: Duration| {
        !notices
            || ctl
                .send(&Message::Queued {
                    position,
                    waited_seconds: waited.as_secs_f64(),
                })
                .is_ok()
    };
    match gate.wait(peer.ip(), &mut notify, &|| client_gone(&probe), &|| {
        shared.stopping()
    }) {
        queue::Wait::Go(turn) => {
            record.queued_seconds = turn.waited.map(|d| d.as_secs_f64());
            Ok(Some(turn))
        }
        queue::Wait::Refused(reason, waited) => {
            record.queued_seconds = Some(waited.as_secs_f64());
            Err(SessionEnd::Refused(reason))
        }
        queue::Wait::Gone(waited) => {
            record.queued_seconds = Some(waited.as_secs_f64());
            Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                "the client left while its test waited for another to end (--exclusive)",
            ))))
        }
    }
}

fn run_session(
    ctl: &mut Control,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    record: &mut SessionRecord,
    words: ClientWords,
    share: &mut AddressShare<'_>,
) -> Result<(), SessionEnd> {
    let notices = words.notices;
    let cfg = &shared.config;
    let idle = cfg.idle_timeout;
    ctl.send(&Message::Welcome {
        protocol_version: PROTOCOL_VERSION,
        // The features this agent has, named for clients that look for them.
        software: format!(
            "{} {} {} {} {}",
            crate::control::handshake::software(),
            crate::control::RESIDENCE_FEATURE,
            crate::control::FOLLOW_UP_FEATURE,
            crate::control::MAX_PACING_FEATURE,
            crate::control::SHORT_REPLY_FEATURE
        ),
    })?;
    let waiting = Idle::enter(shared, record.session, &ctl.stream);
    let request = ctl.recv(idle, "waiting for the test request");
    drop(waiting);
    let request = request?;
    // The services (load, echo, request/response) wait for their turn here; a throughput
    // test once its limits are checked, so that a test the agent refuses is not kept waiting.
    let mut turn = None;
    if !matches!(request, Message::Request { .. }) {
        turn = wait_turn(shared, ctl, peer, notices, record)?;
    }
    if let Message::Load(first) = request {
        let refused = crate::load::serve(ctl, first, cfg, &|| shared.stopping(), &shared.nonces)?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused;
        return Ok(());
    }
    if let Message::Echo(first) = request {
        share.echo().map_err(SessionEnd::Refused)?;
        let (refused, totals) =
            echo::serve(ctl, first, peer, cfg, words.into(), &|| shared.stopping())?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused.or(Some(format!(
            "udp echo: {} answered, {} dropped",
            totals.answered, totals.dropped
        )));
        return Ok(());
    }
    if let Message::Mesh(first) = request {
        let refused = crate::mesh::serve(ctl, first, peer, cfg, &shared.budget)?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused;
        return Ok(());
    }
    if let Message::Rr(first) = request {
        let refused = rr::serve(ctl, first, peer, cfg, &|| shared.stopping())?;
        record.outcome = if refused.is_some() {
            "refused"
        } else {
            "completed"
        };
        record.message = refused;
        return Ok(());
    }
    let Message::Request {
        spec,
        client_udp_ports,
    } = request
    else {
        return Err(SessionEnd::Failed(SessionError::Closed));
    };
    record.spec = Some(spec.clone());
    if let Err(e) = spec.validate() {
        return Err(SessionEnd::Refused(format!("refused by the agent: {e}")));
    }
    if let Some(reason) = cfg.limits.check(&spec) {
        return Err(SessionEnd::Refused(reason));
    }
    if let Some(reason) = spec
        .agent_cpu
        .and_then(|cpu| crate::sockopt::cpu_refusal(cpu, "the agent"))
    {
        return Err(SessionEnd::Refused(reason));
    }
    if turn.is_none() {
        turn = wait_turn(shared, ctl, peer, notices, record)?;
    }
    let _turn = turn;
    let flows = spec.flows();
    let _memory = shared
        .budget
        .reserve(budget::streams_cost(&spec, flows.len()))
        .map_err(|e| {
            SessionEnd::Refused(e.refusal(&format!(
                "this test ({} stream(s) with -l {} bytes)",
                flows.len(),
                spec.length_bytes
            )))
        })?;
    let local = ctl.stream.local_addr().map_err(SessionError::Io)?;
    let cookie = Cookie::random().map_err(SessionError::Io)?;
    let mut udp_sockets = Vec::new();
    if spec.protocol == Protocol::Udp {
        if client_udp_ports.len() != flows.len() {
            return Err(SessionEnd::Refused(format!(
                "refused by the agent: a UDP request needs {} client ports, it named {}",
                flows.len(),
                client_udp_ports.len()
            )));
        }
        for (&(id, flow), &port) in flows.iter().zip(&client_udp_ports) {
            let s = udp_socket(local, &spec).map_err(SessionError::Io)?;
            s.connect(with_port(peer, port)).map_err(SessionError::Io)?;
            udp_sockets.push((id, flow, s));
        }
    }
    let (tx, rx) = mpsc::channel();
    // The route goes when the session does, however it ends.
    struct Route<'a>(&'a Shared, Cookie);
    impl Drop for Route<'_> {
        fn drop(&mut self) {
            lock(&self.0.data_routes).remove(&self.1);
        }
    }
    let mut route = None;
    if spec.protocol == Protocol::Tcp {
        lock(&shared.data_routes).insert(
            cookie,
            DataRoute {
                ip: peer.ip(),
                tx,
                spare: flows.len(),
            },
        );
        route = Some(Route(shared, cookie));
    }
    let agent_udp_ports = udp_sockets
        .iter()
        .map(|(_, _, s)| s.local_addr().map(|a| a.port()))
        .collect::<io::Result<Vec<_>>>()
        .map_err(SessionError::Io)?;
    ctl.send(&Message::Accepted {
        cookie,
        agent_udp_ports,
    })?;
    ctl.set_phase(Phase::CreateStreams);
    let sockets = if spec.protocol == Protocol::Tcp {
        let got = collect_data_connections(&rx, &flows, &spec, idle);
        drop(route);
        got?
    } else {
        udp_sockets
            .into_iter()
            .map(|(id, flow, s)| (id, flow, DataSocket::Udp(s)))
            .collect()
    };
    let running = Running::start(
        &spec,
        Side::Agent,
        sockets,
        cookie.tag(),
        spec.agent_cpu,
        None,
        Instant::now(),
    )
    .map_err(SessionError::Io)?;
    ctl.send(&Message::Start)?;
    ctl.set_phase(Phase::Running);
    // A test that ends at its -t (`no_drain`, a mesh's) reads this host's facts while it
    // runs, not after the client's view came: each of a mesh's hundreds of tests would
    // otherwise wait for those reads before its results.
    let facts = spec
        .no_drain
        .then(|| {
            std::thread::Builder::new()
                .name("session-env".into())
                .spawn(move || Environment::collect(Some(local.ip())))
                .ok()
        })
        .flatten();
    let mut intervals = Vec::new();
    let mut told = Moved::default();
    let outcome = supervise::supervise(ctl, &running, &spec, shared, &mut intervals, &mut told);
    if outcome.is_err() {
        running.abort();
    }
    shared.live.add(running.moved(), &mut told);
    let mut report = running.finish();
    report.intervals = intervals;
    report.environment = Some(
        facts
            .and_then(|f| f.join().ok())
            .unwrap_or_else(|| Environment::collect(Some(local.ip()))),
    );
    record.report = Some(report.clone());
    outcome?;
    ctl.send(&Message::Results { report })?;
    record.outcome = "completed";
    Ok(())
}

fn udp_socket(local: SocketAddr, spec: &TestSpec) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind(with_port(local, 0))?;
    sockopt::apply_options(&s, spec, false).map_err(|e| io::Error::other(e.to_string()))?;
    crate::udp::enable_gro(&s);
    Ok(s)
}

/// Waits for one TCP data connection per stream, each with the session's cookie.
fn collect_data_connections(
    rx: &Receiver<DataConn>,
    flows: &[(u32, Flow)],
    spec: &TestSpec,
    idle: Duration,
) -> Result<Vec<(u32, Flow, DataSocket)>, SessionEnd> {
    let mut slots: Vec<Option<TcpStream>> = (0..flows.len()).map(|_| None).collect();
    let deadline = Instant::now() + idle;
    while slots.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        let (id, s) = rx.recv_timeout(left).map_err(|_| SessionError::Timeout {
            what: "waiting for the data connections",
            after: idle,
        })?;
        if let Some(slot) = slots.get_mut(id as usize)
            && slot.is_none()
        {
            sockopt::apply_options(&s, spec, true)
                .map_err(|e| SessionError::Io(io::Error::other(e.to_string())))?;
            sockopt::set_timeouts(&s, idle).map_err(SessionError::Io)?;
            s.set_read_timeout(Some(idle)).map_err(SessionError::Io)?;
            *slot = Some(s);
        }
    }
    Ok(flows
        .iter()
        .zip(slots)
        .map(|(&(id, flow), s)| (id, flow, DataSocket::Tcp(s.expect("all filled"))))
        .collect())
}
