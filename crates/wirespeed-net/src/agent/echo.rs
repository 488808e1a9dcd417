//! The agent's half of the UDP echo (`wirespeed probe HOST --udp`): inside a control session,
//! a UDP socket connected to the client's address and announced port alone, answering only
//! datagrams that carry the session's cookie, with exactly the bytes received, at most
//! [`MAX_ECHO_PER_SECOND`] a second, until the session ends or its time is up. The messages and
//! the datagram layout are the control protocol's ([`crate::control::echo`]); the client is
//! the probe's ([`crate::probe::echo`]).
//!
//! With a client that named [`crate::control::RESIDENCE_FEATURE`], the socket takes kernel
//! receive stamps (`SO_TIMESTAMPING`, software) and each datagram that asks for it
//! ([`crate::control::echo::RESIDENCE_ASKED`] after the sequence) goes back with the time
//! from its receive stamp to just before the reply's `sendmsg` written there (RFC 8762's T2 to
//! T3, as one interval on one clock, `CLOCK_REALTIME` like the stamp): the agent's wake-up and
//! turnaround, which the client takes out of the network's round trip. The reply keeps the
//! request's length.
//!
//! With a client that also named [`crate::control::FOLLOW_UP_FEATURE`], the socket takes
//! kernel transmit stamps too (`SOF_TIMESTAMPING_TX_SCHED`: as the reply enters the device's
//! queue; with `OPT_ID` to tell the replies apart), and each reply that asks for it carries
//! the follow-up of an earlier reply: its sequence and the time from just before its
//! `sendmsg` to that stamp (the agent's own socket and IP send path, 10-30 us on a busy VM,
//! which a residence ending at the `sendmsg` would leave in the network's round trip). A reply's stamp is known only once it has left,
//! so it travels in a later reply, as a two-step clock's follow-up.

use crate::address::with_port;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::agent_config::AgentConfig;
use crate::control::echo::{
    ECHO_BURST, EchoMessage, EchoTotals, MAX_ECHO_PER_SECOND, carries_cookie, echo_sequence,
    reply_len, stamp_follow_up, stamp_residence,
};
use crate::control::{Cookie, Message, Phase};
use crate::session::{Control, SessionError};

/// A token bucket: `rate` per second, `burst` at most.
pub struct Bucket {
    pub tokens: f64,
    pub last: Instant,
}

impl Bucket {
    #[inline]
    pub fn take(&mut self, now: Instant) -> bool {
        let refill = now.saturating_duration_since(self.last).as_secs_f64() * MAX_ECHO_PER_SECOND;
        self.tokens = (self.tokens + refill).min(ECHO_BURST);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What a client asked the echo to stamp.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stamps {
    /// The residence time in each reply ([`crate::control::RESIDENCE_FEATURE`]).
    pub(crate) residence: bool,
    /// Follow-ups of the replies' send paths ([`crate::control::FOLLOW_UP_FEATURE`]).
    pub(crate) follow_up: bool,
    /// Short replies to the datagrams that ask ([`crate::control::SHORT_REPLY_FEATURE`]).
    pub(crate) short_reply: bool,
}

/// Replies sent whose transmit stamps are awaited, at most this many (older ones are given up).
const MAX_AWAITED: usize = 16;

/// The transmit side of the follow-ups: which replies await their stamps, and the latest
/// follow-up not yet sent.
#[derive(Debug, Default)]
struct FollowUps {
    /// (`OPT_ID` of the send, the reply's sequence, `CLOCK_REALTIME` just before its send).
    awaited: std::collections::VecDeque<(u32, u64, i128)>,
    /// The next `OPT_ID` the kernel gives a send on this socket.
    next_id: u32,
    /// The latest reply whose stamp arrived: (sequence, send path ns).
    ready: Option<(u64, i64)>,
}

impl FollowUps {
    /// A reply `seq` was just handed to `sendmsg` at `before_ns`.
    fn sent(&mut self, seq: u64, before_ns: i128) {
        if self.awaited.len() >= MAX_AWAITED {
            self.awaited.pop_front();
        }
        self.awaited.push_back((self.next_id, seq, before_ns));
        self.next_id = self.next_id.wrapping_add(1);
    }

    /// The kernel's transmit stamp `ns` of the send with `OPT_ID` `id`.
    fn stamped(&mut self, id: u32, ns: i128) {
        if let Some(i) = self.awaited.iter().position(|a| a.0 == id) {
            let (_, seq, before) = self.awaited[i];
            self.awaited.drain(..=i);
            if let Ok(path) = i64::try_from(ns - before)
                && path >= 0
            {
                self.ready = Some((seq, path));
            }
        }
    }

    /// Reads every transmit stamp queued on `sock`'s error queue (without waiting).
    fn drain(&mut self, sock: &UdpSocket) {
        let mut control = [0u8; 256];
        let mut empty = [0u8; 0];
        for _ in 0..MAX_AWAITED * 2 {
            let Ok(got) = crate::sys::cmsg::recvmsg(
                sock,
                &mut empty,
                &mut control,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            ) else {
                return;
            };
            let mut stamp = None;
            let mut id = None;
            for c in crate::sys::cmsg::messages(&control[..got.control_len]) {
                if c.level == libc::SOL_SOCKET && c.kind == libc::SO_TIMESTAMPING {
                    stamp = crate::icmp_socket::software_stamp_ns(c.data);
                } else if ((c.level == libc::SOL_IP && c.kind == libc::IP_RECVERR)
                    || (c.level == libc::SOL_IPV6 && c.kind == libc::IPV6_RECVERR))
                    && let Some((serr, _)) = crate::sys::cmsg::extended_err(c.data)
                    && serr.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
                {
                    id = Some(serr.ee_data);
                }
            }
            if let (Some(id), Some(ns)) = (id, stamp) {
                self.stamped(id, ns);
            }
        }
    }
}

/// The agent side: serves one echo session on `ctl` until it ends. Returns the refusal, if the
/// request was refused.
pub(crate) fn serve(
    ctl: &mut Control,
    first: EchoMessage,
    peer: SocketAddr,
    cfg: &AgentConfig,
    asked: Stamps,
    stopping: &dyn Fn() -> bool,
) -> Result<(Option<String>, EchoTotals), SessionError> {
    let EchoMessage::Open {
        client_port,
        seconds,
    } = first
    else {
        let reason = "refused by the agent: an echo session starts with 'open'".to_string();
        ctl.send(&Message::Refused {
            reason: reason.clone(),
        })?;
        return Ok((Some(reason), EchoTotals::default()));
    };
    let max = cfg.limits.max_duration.as_secs_f64();
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= max) || client_port == 0 {
        let reason = format!(
            "refused by the agent: an echo of {seconds} s to port {client_port} is outside this agent's limit of {max} s (--max-duration on the agent)"
        );
        ctl.send(&Message::Refused {
            reason: reason.clone(),
        })?;
        return Ok((Some(reason), EchoTotals::default()));
    }
    let local = ctl.stream.local_addr()?;
    let sock = UdpSocket::bind(with_port(local, 0))?;
    // Connected: the kernel delivers only the session's peer address and port.
    sock.connect(with_port(peer, client_port))?;
    sock.set_read_timeout(Some(Duration::from_millis(50)))?;
    // Kernel receive stamps, only for a client that asked for residence times; transmit stamps
    // too for one that asked for follow-ups.
    // The stamp as the reply enters the device's queue (before the qdisc and the device's
    // transmit, where the lab's emulator charges the link from): never after the frame
    // starts on the wire, so the residence never takes a piece of the network's time, and a
    // reply held in this host's qdisc under load stays in the network's round trip.
    let transmit = libc::SOF_TIMESTAMPING_TX_SCHED
        | libc::SOF_TIMESTAMPING_OPT_ID
        | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    let receive = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    let mut follow_ups = (asked.residence
        && asked.follow_up
        && crate::sys::socket_options::set_timestamping(&sock, receive | transmit).is_ok())
    .then(FollowUps::default);
    let stamped = follow_ups.is_some()
        || (asked.residence
            && crate::sys::socket_options::set_timestamping(&sock, receive).is_ok());
    let cookie = Cookie::random()?;
    ctl.send(&Message::Echo(EchoMessage::Ready {
        agent_port: sock.local_addr()?.port(),
        cookie,
    }))?;
    ctl.set_phase(Phase::Running);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicU64::new(0));
    let echo = {
        let (stop, answered, dropped) = (stop.clone(), answered.clone(), dropped.clone());
        std::thread::Builder::new()
            .name("ws-echo".into())
            .spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut control = [0u8; 256];
                let mut bucket = Bucket {
                    tokens: ECHO_BURST,
                    last: Instant::now(),
                };
                while !stop.load(Ordering::Acquire) {
                    let (n, rx_ns) = if stamped {
                        match crate::sys::cmsg::recvmsg(&sock, &mut buf, &mut control, 0) {
                            Ok(got) => (got.len, receive_stamp(&control[..got.control_len])),
                            Err(_) => continue,
                        }
                    } else {
                        match sock.recv(&mut buf) {
                            Ok(n) => (n, None),
                            Err(_) => continue,
                        }
                    };
                    // A short reply (asked, in a session that named the feature) is the
                    // datagram's head: never larger than the request, and no room for a
                    // follow-up, which waits for a whole echo.
                    let len = reply_len(&buf[..n], asked.short_reply);
                    let datagram = &mut buf[..n];
                    if carries_cookie(datagram, &cookie) && bucket.take(Instant::now()) {
                        if let Some(f) = follow_ups.as_mut().filter(|_| len == n) {
                            f.drain(&sock);
                            if let Some((seq, path)) = f.ready
                                && stamp_follow_up(datagram, seq, path)
                            {
                                f.ready = None;
                            }
                        }
                        // The last thing before the send: the residence so far.
                        let now = realtime_ns();
                        if let Some(rx) = rx_ns
                            && let Ok(r) = i64::try_from(now - rx)
                        {
                            stamp_residence(datagram, r);
                        }
                        // The same bytes back (or their head): never larger than the request.
                        if sock.send(&datagram[..len]).is_ok() {
                            answered.fetch_add(1, Ordering::Relaxed);
                            if let Some(f) = follow_ups.as_mut() {
                                f.sent(echo_sequence(datagram, &cookie).unwrap_or(0), now);
                                f.drain(&sock);
                            }
                        } else {
                            // A failed send may or may not have taken a stamp key: the
                            // keys of later sends are no longer known, so no more follow-ups.
                            follow_ups = None;
                        }
                    } else {
                        dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })?
    };
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let ended = loop {
        if stopping() || Instant::now() >= deadline {
            break Ok(true);
        }
        match ctl.poll(Duration::from_millis(50)) {
            Ok(Some(Message::Echo(EchoMessage::Close))) => break Ok(true),
            Ok(Some(Message::Error { .. })) => break Ok(false),
            Ok(Some(other)) => {
                break Err(SessionError::Io(io::Error::other(format!(
                    "unexpected control message '{}' during an echo",
                    other.kind()
                ))));
            }
            Ok(None) => {}
            Err(SessionError::Closed) => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    stop.store(true, Ordering::Release);
    let _ = echo.join();
    let totals = EchoTotals {
        answered: answered.load(Ordering::Relaxed),
        dropped: dropped.load(Ordering::Relaxed),
    };
    if ended? {
        ctl.send(&Message::Echo(EchoMessage::Closed {
            answered: totals.answered,
            dropped: totals.dropped,
        }))?;
    }
    Ok((None, totals))
}

/// The software receive stamp among a datagram's control messages, ns of `CLOCK_REALTIME`.
fn receive_stamp(control: &[u8]) -> Option<i128> {
    crate::sys::cmsg::messages(control)
        .filter(|c| c.level == libc::SOL_SOCKET && c.kind == libc::SO_TIMESTAMPING)
        .find_map(|c| crate::icmp_socket::software_stamp_ns(c.data))
}

/// `CLOCK_REALTIME` now, ns: the clock of the kernel's software stamps.
fn realtime_ns() -> i128 {
    i128::from(crate::load::clock_ns(rustix::time::ClockId::Realtime))
}
