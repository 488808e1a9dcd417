//! The agent's request/response service (TCP_RR, TCP_CRR; the latency probes of `wirespeed
//! latency`): a TCP port of the session's own where every connection from the session's peer
//! that starts with the cookie gets `response_bytes` back for every `request_bytes` it sends.
//!
//! Everything a client drives is bounded: sizes by [`MAX_RR_BYTES`], open connections by
//! [`MAX_RR_CONNECTIONS`], time by the session's duration (itself capped by `--max-duration`),
//! and a connection that goes silent by the agent's idle timeout. Requests are counted, not
//! kept (a 4 KiB scratch buffer), and every response is the same shared zero buffer, so a
//! session holds a few KiB per connection whatever the sizes.

use crate::address::with_port;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::agent_config::AgentConfig;
use crate::control::rr::{MAX_RR_CONNECTIONS, RrMessage, open_is_valid};
use crate::control::{Cookie, Message, Phase};
use crate::session::{Control, SessionError};

/// How often a blocked read or accept looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Counters shared by the acceptor and the connections.
#[derive(Default)]
struct Totals {
    transactions: AtomicU64,
    connections: AtomicU64,
    refused: AtomicU64,
    open: AtomicUsize,
}

/// Serves one request/response session; returns the refusal sentence, if it was refused.
pub(crate) fn serve(
    ctl: &mut Control,
    first: RrMessage,
    peer: SocketAddr,
    cfg: &AgentConfig,
    stopping: &dyn Fn() -> bool,
) -> Result<Option<String>, SessionError> {
    let max = cfg.limits.max_duration.as_secs_f64();
    let refuse = |ctl: &mut Control, reason: String| -> Result<Option<String>, SessionError> {
        ctl.send(&Message::Refused {
            reason: reason.clone(),
        })?;
        Ok(Some(reason))
    };
    let RrMessage::Open {
        request_bytes,
        response_bytes,
        seconds,
    } = first
    else {
        return refuse(
            ctl,
            "refused by the agent: a request/response session starts with 'open'".into(),
        );
    };
    if !open_is_valid(request_bytes, response_bytes, seconds) || seconds > max {
        return refuse(
            ctl,
            format!(
                "refused by the agent: request/response of {request_bytes} and {response_bytes} bytes for {seconds} s is outside its limits (1 to {} bytes each way, at most {max} s: --max-duration on the agent)",
                crate::control::rr::MAX_RR_BYTES
            ),
        );
    }
    let local = ctl.stream.local_addr()?;
    // Blocking accept: a new connection is served the moment it arrives (a polling accept
    // would add its period to every TCP_CRR transaction); the stop wakes it by connecting.
    let listener = TcpListener::bind(with_port(local, 0))?;
    let service_addr = listener.local_addr()?;
    let cookie = Cookie::random()?;
    ctl.send(&Message::Rr(RrMessage::Ready {
        agent_port: service_addr.port(),
        cookie,
    }))?;
    ctl.set_phase(Phase::Running);
    let stop = Arc::new(AtomicBool::new(false));
    let totals = Arc::new(Totals::default());
    let response: Arc<[u8]> = vec![0u8; response_bytes as usize].into();
    let acceptor = {
        let (stop, totals) = (stop.clone(), totals.clone());
        let idle = cfg.idle_timeout;
        std::thread::Builder::new()
            .name("ws-rr-accept".into())
            .spawn(move || {
                accept_loop(
                    &listener,
                    peer.ip(),
                    &Service {
                        cookie,
                        request_bytes: u64::from(request_bytes),
                        response,
                        idle,
                        stop,
                        totals,
                    },
                )
            })?
    };
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let ended = loop {
        if stopping() || Instant::now() >= deadline {
            break Ok(true);
        }
        match ctl.poll(POLL) {
            Ok(Some(Message::Rr(RrMessage::Close))) => break Ok(true),
            Ok(Some(Message::Error { .. })) => break Ok(false),
            Ok(Some(other)) => {
                break Err(SessionError::Io(io::Error::other(format!(
                    "unexpected control message '{}' during a request/response session",
                    other.kind()
                ))));
            }
            Ok(None) => {}
            Err(SessionError::Closed) => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    stop.store(true, Ordering::Release);
    let _ = TcpStream::connect_timeout(&service_addr, cfg.idle_timeout);
    let _ = acceptor.join();
    if ended? {
        ctl.send(&Message::Rr(RrMessage::Closed {
            transactions: totals.transactions.load(Ordering::Relaxed),
            connections: totals.connections.load(Ordering::Relaxed),
            refused: totals.refused.load(Ordering::Relaxed),
        }))?;
    }
    Ok(None)
}

/// What every connection of one session shares.
#[derive(Clone)]
struct Service {
    cookie: Cookie,
    request_bytes: u64,
    response: Arc<[u8]>,
    idle: Duration,
    stop: Arc<AtomicBool>,
    totals: Arc<Totals>,
}

fn accept_loop(listener: &TcpListener, peer: IpAddr, service: &Service) {
    let mut workers = Vec::new();
    while !service.stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok(_) if service.stop.load(Ordering::Acquire) => break,
            Ok((stream, from)) => {
                let totals = &service.totals;
                // Only the session's own peer, and only so many at once.
                if from.ip() != peer || totals.open.load(Ordering::Acquire) >= MAX_RR_CONNECTIONS {
                    totals.refused.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                totals.open.fetch_add(1, Ordering::AcqRel);
                let service = service.clone();
                let worker = std::thread::Builder::new()
                    .name("ws-rr".into())
                    .spawn(move || {
                        let _ = connection(stream, &service);
                        service.totals.open.fetch_sub(1, Ordering::AcqRel);
                    });
                match worker {
                    Ok(w) => workers.push(w),
                    Err(_) => {
                        totals.open.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                workers.retain(|w| !w.is_finished());
            }
            // Out of descriptors and the like: wait a little rather than spin.
            Err(_) => std::thread::sleep(POLL / 10),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

/// Reads exactly `n` bytes into nowhere (or into `keep`), giving up on a stop, an end of file
/// or `idle` without a byte.
fn read_counted(
    stream: &mut TcpStream,
    mut n: u64,
    mut keep: Option<&mut [u8]>,
    service: &Service,
) -> io::Result<bool> {
    let mut scratch = [0u8; 4096];
    let mut quiet_since = Instant::now();
    let mut filled = 0usize;
    while n > 0 {
        if service.stop.load(Ordering::Acquire) {
            return Ok(false);
        }
        let want = n.min(scratch.len() as u64) as usize;
        match stream.read(&mut scratch[..want]) {
            Ok(0) => return Ok(false),
            Ok(got) => {
                if let Some(k) = keep.as_deref_mut() {
                    let end = (filled + got).min(k.len());
                    k[filled..end].copy_from_slice(&scratch[..end - filled]);
                    filled = end;
                }
                n -= got as u64;
                quiet_since = Instant::now();
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if quiet_since.elapsed() >= service.idle {
                    return Ok(false);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

fn connection(mut stream: TcpStream, service: &Service) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(POLL))?;
    stream.set_write_timeout(Some(service.idle))?;
    let mut cookie = [0u8; 16];
    if !read_counted(&mut stream, 16, Some(&mut cookie), service)? || cookie != service.cookie.0 {
        service.totals.refused.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    }
    service.totals.connections.fetch_add(1, Ordering::Relaxed);
    while read_counted(&mut stream, service.request_bytes, None, service)? {
        stream.write_all(&service.response)?;
        service.totals.transactions.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}
