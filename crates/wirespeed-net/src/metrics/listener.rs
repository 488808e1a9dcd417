//! The metrics listener: HTTP/1.x for Prometheus, the kubelet's probes and `/probe`, that one
//! slow or silent peer cannot hold up another.
//!
//! One thread waits on every connection at once (epoll), reads request heads without blocking
//! and answers cheap pages (`/metrics`, `/healthz`) itself; slow answers (a `/probe` runs a
//! test) get a thread of their own, bounded by whoever hands them out. Every connection has
//! one deadline for its whole request, from accept to the last byte of the answer, and at most
//! [`ListenerConfig::max_connections`] are held: a newcomer beyond that closes the oldest one
//! still sending its head. So 10,000 idle connections, or a slowloris trickling a byte a
//! second on each, cost at most `max_connections` descriptors and 8 KiB each, and a scraper
//! that sends its request at once is answered within milliseconds. Every answer closes its
//! connection (`Connection: close`): no idle keep-alive to hold.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::epoll;
use sha2::{Digest, Sha256};

use super::http::{HEAD_MAX, Method, Request, parse_head};

/// How the listener bounds what its peers may hold.
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// Connections held at once; a newcomer beyond it closes the oldest still reading.
    pub max_connections: usize,
    /// From accept to the answer written: the whole request's deadline.
    pub request_timeout: Duration,
    /// The token every path but `/healthz` needs (`Authorization: Bearer TOKEN`).
    pub bearer: Option<BearerToken>,
    /// Where the listener counts what it has seen (shared with the page that shows it).
    pub stats: Arc<ListenerStats>,
}

impl Default for ListenerConfig {
    fn default() -> ListenerConfig {
        ListenerConfig {
            max_connections: 1024,
            request_timeout: Duration::from_secs(5),
            bearer: None,
            stats: Arc::default(),
        }
    }
}

/// A bearer token read from a file, compared in constant time.
#[derive(Clone)]
pub struct BearerToken([u8; 32]);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl BearerToken {
    /// The token in `path`: its text without trailing whitespace, 16 to 512 characters of
    /// RFC 6750's `b64token` alphabet (what Prometheus' `bearer_token_file` sends as is).
    pub fn from_file(path: &Path) -> Result<BearerToken, String> {
        let shown = path.display();
        let mut bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read the bearer token file {shown}: {e}"))?;
        while bytes.last().is_some_and(u8::is_ascii_whitespace) {
            bytes.pop();
        }
        let b64token = |b: &u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(b);
        if !(16..=512).contains(&bytes.len()) || !bytes.iter().all(b64token) {
            return Err(format!(
                "the bearer token file {shown} must hold one token of 16 to 512 letters, digits or -._~+/= (e.g. head -c 32 /dev/urandom | base64 > {shown})"
            ));
        }
        Ok(BearerToken::from_text(&bytes))
    }

    /// A token from its text.
    pub fn from_text(text: &[u8]) -> BearerToken {
        BearerToken(Sha256::digest(text).into())
    }

    /// Whether `offered` is the token; the time taken does not depend on where they differ.
    pub fn matches(&self, offered: &str) -> bool {
        let offered: [u8; 32] = Sha256::digest(offered.as_bytes()).into();
        self.0
            .iter()
            .zip(offered)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

/// An answer: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// `200 OK`, `404 Not Found`...
    pub status: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Response {
    /// A plain-text answer.
    pub fn text(status: &'static str, body: impl Into<String>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }

    fn bytes(&self, with_body: bool, extra: &str) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            self.status,
            self.content_type,
            self.body.len()
        )
        .into_bytes();
        if with_body {
            out.extend_from_slice(self.body.as_bytes());
        }
        out
    }
}

/// A slow answer, computed on a thread of its own.
pub type Deferred = Box<dyn FnOnce() -> Response + Send>;

/// What the routes give for a request.
pub enum Answer {
    /// An answer ready now (it must be cheap: the listener's one thread computes it).
    Now(Response),
    /// An answer that takes time (it bounds its own time).
    Later(Deferred),
}

/// The pages behind the listener.
pub trait Routes: Send + Sync + 'static {
    /// The answer to an authorized request (the listener checks the bearer token first).
    fn answer(&self, request: &Request, peer: SocketAddr) -> Answer;
}

/// What the listener has seen, for its own metrics.
#[derive(Debug, Default)]
pub struct ListenerStats {
    /// Connections accepted.
    pub accepted: AtomicU64,
    /// Connections closed to make room for a newer one.
    pub evicted: AtomicU64,
    /// Connections closed at their deadline before their answer was written.
    pub timed_out: AtomicU64,
    /// Requests refused: a malformed or oversized head, or a missing or wrong token.
    pub refused: AtomicU64,
}

/// A running listener; dropping it stops it.
pub struct MetricsListener {
    stop: Arc<AtomicBool>,
    addr: SocketAddr,
    stats: Arc<ListenerStats>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MetricsListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsListener")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MetricsListener {
    /// Serves `routes` on `listener` from a thread of its own.
    pub fn spawn(
        listener: TcpListener,
        config: ListenerConfig,
        routes: Arc<dyn Routes>,
    ) -> io::Result<MetricsListener> {
        listener.set_nonblocking(true)?;
        // The standard library listens with a backlog of 128: a burst of connections beyond
        // it between two accepts has its SYNs dropped, and a scraper caught in one waits 1 s
        // for its retransmit. Listening again only raises the backlog (to `somaxconn`).
        rustix::net::listen(&listener, ACCEPT_BACKLOG)?;
        let addr = listener.local_addr()?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(
            &epoll,
            &listener,
            epoll::EventData::new_u64(LISTENER),
            epoll::EventFlags::IN,
        )?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = config.stats.clone();
        let mut lp = Loop {
            epoll,
            listener,
            config: ListenerConfig {
                max_connections: config.max_connections.max(1),
                ..config
            },
            routes,
            conns: BTreeMap::new(),
            next: LISTENER + 1,
            stats: stats.clone(),
        };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || lp.run(&flag))?;
        Ok(MetricsListener {
            stop,
            addr,
            stats,
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its counts so far.
    pub fn stats(&self) -> &Arc<ListenerStats> {
        &self.stats
    }
}

impl Drop for MetricsListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

const LISTENER: u64 = 0;
/// The accept queue asked for (the kernel caps it at `net.core.somaxconn`, 4096 by default).
const ACCEPT_BACKLOG: i32 = 4096;
/// The loop looks at its stop flag and deadlines at least this often.
const TICK: Duration = Duration::from_millis(100);
/// Connections accepted per wake-up before the others are served (a connection storm must
/// not starve the requests already in).
const ACCEPT_BATCH: usize = 64;

enum State {
    Reading(Vec<u8>),
    Writing(Vec<u8>, usize),
}

struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    deadline: Instant,
    state: State,
}

struct Loop {
    epoll: std::os::fd::OwnedFd,
    listener: TcpListener,
    config: ListenerConfig,
    routes: Arc<dyn Routes>,
    /// By token, which grows with accept time: the first is the oldest, and since every
    /// connection has the same timeout, the first to reach its deadline.
    conns: BTreeMap<u64, Conn>,
    next: u64,
    stats: Arc<ListenerStats>,
}

impl Loop {
    fn run(&mut self, stop: &AtomicBool) {
        let mut events: Vec<epoll::Event> = Vec::with_capacity(256);
        while !stop.load(Ordering::Relaxed) {
            self.expire();
            let wait = self
                .conns
                .values()
                .next()
                .map_or(TICK, |c| {
                    c.deadline.saturating_duration_since(Instant::now())
                })
                .min(TICK);
            let timeout = rustix::event::Timespec {
                tv_sec: 0,
                // Rounded up: a deadline a few microseconds away must not spin.
                tv_nsec: i64::from(wait.subsec_micros().max(1000)) * 1000,
            };
            events.clear();
            match epoll::wait(
                &self.epoll,
                rustix::buffer::spare_capacity(&mut events),
                Some(&timeout),
            ) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => {
                    std::thread::sleep(TICK);
                    continue;
                }
            }
            for ev in &events {
                let token = ev.data.u64();
                if token == LISTENER {
                    self.accept();
                } else {
                    self.serve(token);
                }
            }
        }
    }

    fn close(&mut self, token: u64) {
        if let Some(c) = self.conns.remove(&token) {
            let _ = epoll::delete(&self.epoll, &c.stream);
        }
    }

    fn expire(&mut self) {
        let now = Instant::now();
        while let Some((&token, c)) = self.conns.iter().next()
            && c.deadline <= now
        {
            self.stats.timed_out.fetch_add(1, Ordering::Relaxed);
            self.close(token);
        }
    }

    /// Closes the oldest connection still sending its head; false if none is.
    fn evict_oldest_reading(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .find(|(_, c)| matches!(c.state, State::Reading(_)))
            .map(|(&t, _)| t);
        match oldest {
            Some(t) => {
                self.stats.evicted.fetch_add(1, Ordering::Relaxed);
                self.close(t);
                true
            }
            None => false,
        }
    }

    fn accept(&mut self) {
        for _ in 0..ACCEPT_BATCH {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // Out of descriptors (EMFILE, ENFILE) or memory: free one held by the
                    // oldest reader, or let the others be served before trying again.
                    if !self.evict_oldest_reading() {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    return;
                }
            };
            self.stats.accepted.fetch_add(1, Ordering::Relaxed);
            if self.conns.len() >= self.config.max_connections && !self.evict_oldest_reading() {
                // Every slot is writing an answer: the newcomer waits for none of them.
                continue;
            }
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let _ = stream.set_nodelay(true);
            let token = self.next;
            self.next += 1;
            if epoll::add(
                &self.epoll,
                &stream,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
            )
            .is_err()
            {
                continue;
            }
            self.conns.insert(
                token,
                Conn {
                    stream,
                    peer,
                    deadline: Instant::now() + self.config.request_timeout,
                    state: State::Reading(Vec::new()),
                },
            );
        }
    }

    fn serve(&mut self, token: u64) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        match &mut c.state {
            State::Reading(buf) => {
                let mut chunk = [0u8; 2048];
                // A client may send its request and close its side at once (`curl` does not,
                // a script may): what came before the end is still answered.
                let mut ended = false;
                loop {
                    match c.stream.read(&mut chunk) {
                        Ok(0) => {
                            ended = true;
                            break;
                        }
                        Ok(n) => {
                            let room = HEAD_MAX - buf.len();
                            buf.extend_from_slice(&chunk[..n.min(room)]);
                            if buf.len() >= HEAD_MAX || n < chunk.len() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => return self.close(token),
                    }
                }
                let parsed = parse_head(buf);
                let (request, peer) = match parsed {
                    Ok(None) if ended => return self.close(token),
                    Ok(None) => return,
                    Ok(Some((request, _))) => (request, c.peer),
                    Err(e) => {
                        self.stats.refused.fetch_add(1, Ordering::Relaxed);
                        let r = Response::text("400 Bad Request", format!("{e}\n"));
                        return self.respond(token, &r, true, "");
                    }
                };
                self.route(token, &request, peer);
            }
            State::Writing(..) => self.write(token),
        }
    }

    fn route(&mut self, token: u64, request: &Request, peer: SocketAddr) {
        let with_body = request.method != Method::Head;
        if request.method == Method::Other {
            let r = Response::text(
                "405 Method Not Allowed",
                "wirespeed agent: only GET and HEAD\n",
            );
            return self.respond(token, &r, with_body, "Allow: GET, HEAD\r\n");
        }
        if request.path != "/healthz"
            && let Some(token_wanted) = &self.config.bearer
            && !request
                .bearer
                .as_deref()
                .is_some_and(|b| token_wanted.matches(b))
        {
            self.stats.refused.fetch_add(1, Ordering::Relaxed);
            let r = Response::text(
                "401 Unauthorized",
                "wirespeed agent: this page needs the bearer token (Authorization: Bearer ...; the agent's --metrics-token-file)\n",
            );
            return self.respond(token, &r, with_body, "WWW-Authenticate: Bearer\r\n");
        }
        match self.routes.answer(request, peer) {
            Answer::Now(r) => self.respond(token, &r, with_body, ""),
            Answer::Later(work) => {
                let Some(c) = self.conns.remove(&token) else {
                    return;
                };
                let _ = epoll::delete(&self.epoll, &c.stream);
                let stream = c.stream;
                // The thread writes the answer itself, in blocking mode, within its own
                // deadline; the loop no longer holds the connection.
                let spawned = std::thread::Builder::new()
                    .name("metrics-slow".into())
                    .spawn(move || {
                        let r = work();
                        let write_timeout = Duration::from_secs(5);
                        if stream.set_nonblocking(false).is_ok()
                            && stream.set_write_timeout(Some(write_timeout)).is_ok()
                        {
                            let mut stream = stream;
                            let _ = stream.write_all(&r.bytes(with_body, ""));
                        }
                    });
                if spawned.is_err() {
                    self.stats.refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    fn respond(&mut self, token: u64, r: &Response, with_body: bool, extra: &str) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        c.state = State::Writing(r.bytes(with_body, extra), 0);
        // Only writability matters from now on (a half-closed peer's RDHUP would wake the
        // loop again and again while the answer waits for room).
        let _ = epoll::modify(
            &self.epoll,
            &c.stream,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::OUT,
        );
        self.write(token);
    }

    fn write(&mut self, token: u64) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let State::Writing(bytes, done) = &mut c.state else {
            return;
        };
        while *done < bytes.len() {
            match c.stream.write(&bytes[*done..]) {
                Ok(0) => return self.close(token),
                Ok(n) => *done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.close(token),
            }
        }
        self.close(token);
    }
}
