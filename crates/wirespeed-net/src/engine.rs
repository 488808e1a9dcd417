//! Runs one end's streams: a thread per stream, blocking I/O, a shared start instant, and
//! counters that the interval reporter samples without stopping anyone.

use std::net::{Shutdown, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::report::{CpuTime, Role, SideReport, StreamReport, TcpInfoReport};
use crate::sockopt;
use crate::spec::{Amount, Flow, TestSpec};

pub(crate) use crate::counters::Counters;

/// A connected data socket.
#[derive(Debug)]
pub(crate) enum DataSocket {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// Which end this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Agent,
}

impl Side {
    pub(crate) fn role(self, flow: Flow) -> Role {
        match (self, flow) {
            (Side::Client, Flow::Upload) | (Side::Agent, Flow::Download) => Role::Sender,
            _ => Role::Receiver,
        }
    }
}

/// A live view of one stream.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Stream number.
    pub id: u32,
    /// Which way.
    pub flow: Flow,
    /// This end's role.
    pub role: Role,
    /// Bytes so far.
    pub bytes: u64,
    /// Calls so far.
    pub calls: u64,
    /// Datagrams so far (UDP).
    pub datagrams: u64,
    /// The sender's TCP_INFO now.
    pub tcp_info: Option<TcpInfoReport>,
}

/// Bytes and datagrams this end's streams moved, by direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Moved {
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    pub(crate) datagrams_sent: u64,
    pub(crate) datagrams_received: u64,
}

struct Stream {
    id: u32,
    flow: Flow,
    role: Role,
    counters: Arc<Counters>,
    tcp: Option<TcpStream>,
    thread: Option<JoinHandle<StreamReport>>,
}

/// One end's running streams.
pub(crate) struct Running {
    streams: Vec<Stream>,
    stop: Arc<AtomicBool>,
    peer_senders_done: Arc<AtomicBool>,
    pub(crate) start: Instant,
}

/// What every stream thread needs.
#[derive(Clone)]
struct Shared {
    spec: TestSpec,
    tag: u64,
    start: Instant,
    cpu: Option<usize>,
    source: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    peer_senders_done: Arc<AtomicBool>,
}

impl Running {
    /// Starts a thread per socket. `start` is the instant the test began at this end;
    /// `source` is a file TCP senders read with `sendfile` instead of a buffer (`--file`).
    pub(crate) fn start(
        spec: &TestSpec,
        side: Side,
        sockets: Vec<(u32, Flow, DataSocket)>,
        tag: u64,
        cpu: Option<usize>,
        source: Option<PathBuf>,
        start: Instant,
    ) -> std::io::Result<Running> {
        let shared = Shared {
            spec: spec.clone(),
            tag,
            start,
            cpu,
            source,
            stop: Arc::new(AtomicBool::new(false)),
            peer_senders_done: Arc::new(AtomicBool::new(false)),
        };
        let mut streams = Vec::new();
        for (id, flow, socket) in sockets {
            let role = side.role(flow);
            let warmup = (!spec.omit.is_zero()).then(|| start + spec.omit);
            let tcp = match &socket {
                DataSocket::Tcp(s) => Some(s.try_clone()?),
                DataSocket::Udp(_) => None,
            };
            let warm_tcp = match (&tcp, role, warmup) {
                (Some(t), Role::Sender, Some(_)) => Some(t.try_clone()?),
                _ => None,
            };
            let counters = Arc::new(Counters::new(warmup, warm_tcp));
            let (sh, c) = (shared.clone(), counters.clone());
            let thread = std::thread::Builder::new()
                .name(format!("ws-stream-{id}"))
                .spawn(move || run_stream(sh, id, flow, role, socket, &c))?;
            streams.push(Stream {
                id,
                flow,
                role,
                counters,
                tcp,
                thread: Some(thread),
            });
        }
        Ok(Running {
            streams,
            stop: shared.stop,
            peer_senders_done: shared.peer_senders_done,
            start,
        })
    }

    /// Whether every stream thread has ended.
    pub(crate) fn all_done(&self) -> bool {
        self.streams
            .iter()
            .all(|s| s.counters.done.load(Ordering::Acquire))
    }

    /// Whether every sending stream has ended (true when there are none).
    pub(crate) fn senders_done(&self) -> bool {
        self.streams
            .iter()
            .filter(|s| s.role == Role::Sender)
            .all(|s| s.counters.done.load(Ordering::Acquire))
    }

    /// Whether the data is still on its way, as this end sees it: the bytes its streams have
    /// received, and what its TCP senders' sockets still hold to deliver (a system call per
    /// sending stream). Either changing means the test is draining, not stalled.
    pub(crate) fn in_flight(&self) -> (u64, u64) {
        let mut received = 0;
        let mut held = 0;
        for s in &self.streams {
            match (s.role, &s.tcp) {
                (Role::Receiver, _) => received += s.counters.bytes.load(Ordering::Relaxed),
                (Role::Sender, Some(t)) => {
                    held += crate::sys::socket_options::tcp_unacked_and_unsent(t).unwrap_or(0)
                }
                (Role::Sender, None) => {}
            }
        }
        (received, held)
    }

    /// The other end's senders are done: UDP receivers drain and stop.
    pub(crate) fn peer_senders_done(&self) {
        self.peer_senders_done.store(true, Ordering::Release);
    }

    /// Stops every stream now: senders stop writing, TCP sockets are shut down so blocked
    /// reads return.
    pub(crate) fn abort(&self) {
        self.stop.store(true, Ordering::Release);
        self.peer_senders_done.store(true, Ordering::Release);
        for s in &self.streams {
            if let Some(t) = &s.tcp {
                let _ = t.shutdown(Shutdown::Both);
            }
        }
    }

    /// What this end's streams have moved so far, warm-up included: a few relaxed loads, no
    /// system call (the agent's live counters read it several times a second).
    pub(crate) fn moved(&self) -> Moved {
        let mut m = Moved::default();
        for s in &self.streams {
            let bytes = s.counters.bytes.load(Ordering::Relaxed);
            let datagrams = s.counters.datagrams.load(Ordering::Relaxed);
            match s.role {
                Role::Sender => {
                    m.bytes_sent += bytes;
                    m.datagrams_sent += datagrams;
                }
                Role::Receiver => {
                    m.bytes_received += bytes;
                    m.datagrams_received += datagrams;
                }
            }
        }
        m
    }

    /// Each stream at zero: where the first interval starts. Not a first call to
    /// [`Running::samples`]: the stream threads run from [`Running::start`], and what they
    /// moved before the reporter's first look (290-390 KB on a loaded host) belongs to the
    /// first interval, or the intervals would not hold every byte of the test.
    pub(crate) fn zero(&self) -> Vec<Sample> {
        self.streams
            .iter()
            .map(|s| Sample {
                id: s.id,
                flow: s.flow,
                role: s.role,
                bytes: 0,
                calls: 0,
                datagrams: 0,
                tcp_info: None,
            })
            .collect()
    }

    /// Each stream's totals now.
    pub(crate) fn samples(&self) -> Vec<Sample> {
        self.streams
            .iter()
            .map(|s| Sample {
                id: s.id,
                flow: s.flow,
                role: s.role,
                bytes: s.counters.bytes.load(Ordering::Relaxed),
                calls: s.counters.calls.load(Ordering::Relaxed),
                datagrams: s.counters.datagrams.load(Ordering::Relaxed),
                tcp_info: match (&s.tcp, s.role) {
                    (Some(t), Role::Sender) => sockopt::tcp_info(t),
                    _ => None,
                },
            })
            .collect()
    }

    /// Waits for every thread and returns this end's report.
    pub(crate) fn finish(mut self) -> SideReport {
        let mut streams = Vec::new();
        for s in &mut self.streams {
            if let Some(t) = s.thread.take() {
                match t.join() {
                    Ok(r) => streams.push(r),
                    Err(_) => streams.push(StreamReport {
                        id: s.id,
                        flow: s.flow,
                        role: s.role,
                        bytes: s.counters.bytes.load(Ordering::Relaxed),
                        calls: s.counters.calls.load(Ordering::Relaxed),
                        seconds: self.start.elapsed().as_secs_f64(),
                        cpu: CpuTime::default(),
                        socket: Default::default(),
                        tcp_info: None,
                        udp: None,
                        zerocopy: None,
                        longest_call_seconds: None,
                        skipped_in_window_seconds: None,
                        drain: None,
                        error: Some("the stream thread panicked".into()),
                    }),
                }
            }
        }
        let mut cpu = CpuTime::default();
        for s in &streams {
            cpu.add(&s.cpu);
        }
        let wall_seconds = streams.iter().map(|s| s.seconds).fold(0.0, f64::max);
        SideReport {
            software: crate::control::handshake::software(),
            streams,
            cpu,
            wall_seconds,
            environment: None,
            intervals: Vec::new(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.streams.iter().any(|s| s.thread.is_some()) {
            self.abort();
        }
    }
}

/// The window clamp the receiver holds against the kernel's resets (see `tcp::receive`): only
/// when the buffer is counted in packets of a set MSS (`-M`, the sweep's "K packets") and holds
/// at least one of them. A clamp below the MSS (a 16 KiB buffer on loopback's 64 KiB MSS)
/// would leave the sender unable to send a full segment, stalling on its persist timer; there
/// the kernel's own, larger window is kept, as before.
pub fn held_clamp(spec: &TestSpec) -> Option<u64> {
    let clamp = spec.receive_buffer_bytes?;
    let mss = u64::from(spec.mss_bytes?);
    (clamp >= mss).then_some(clamp)
}

fn run_stream(
    sh: Shared,
    id: u32,
    flow: Flow,
    role: Role,
    socket: DataSocket,
    c: &Counters,
) -> StreamReport {
    if let Some(cpu) = sh.cpu {
        let _ = sockopt::pin_to_cpu(cpu);
    }
    let cpu0 = sockopt::thread_cpu();
    let spec = &sh.spec;
    let len = spec.length_bytes as usize;
    let expect = match spec.amount {
        Amount::Bytes(n) => Some(n),
        Amount::Seconds(_) => None,
    };
    let mut udp = None;
    let mut tcp_info = None;
    let mut last_arrival = None;
    let mut zerocopy = None;
    // A `no_drain` TCP receiver: when its counted time ended, and the tail it read after.
    let mut counted_end = None;
    let mut drain = None;
    // A `-b` sender's time given up behind its cap (`tcp::Behind`).
    let mut skipped_in_window = None;
    let (result, socket_report) = match socket {
        DataSocket::Tcp(mut s) => {
            let r = match role {
                Role::Sender => {
                    // Paced by the kernel, at its own rate (see `sockopt::PACING_UNCAPPED`), but
                    // on loopback (`sockopt::paces_to`); a kernel without it sends as before. A
                    // `-b` cap is a promise about the rate, so it is set everywhere, loopback
                    // included, and a kernel that refuses it fails the stream.
                    let capped = match spec.max_pacing_rate_bits_per_second {
                        Some(cap) => sockopt::cap_pacing_rate(&s, cap).map_err(|e| {
                            std::io::Error::other(format!(
                                "the kernel refused the -b cap of {cap} bit/s \
                                 (SO_MAX_PACING_RATE: {e}); drop -b on this host"
                            ))
                        }),
                        None => {
                            if s.peer_addr().is_ok_and(|a| sockopt::paces(spec, a.ip())) {
                                let _ = sockopt::enable_pacing(&s);
                            }
                            Ok(())
                        }
                    };
                    let r = if let Err(e) = capped {
                        Err(e)
                    } else if let Some(path) = &sh.source {
                        crate::tcp::send_file(&s, path, len, spec.amount, sh.start, &sh.stop, c)
                    } else if spec.zerocopy {
                        crate::tcp::send_zerocopy(&s, len, spec.amount, sh.start, &sh.stop, c)
                            .map(|z| zerocopy = Some(z))
                    } else if let Some(cap) = spec.max_pacing_rate_bits_per_second {
                        crate::tcp::send_capped(
                            &mut s,
                            len,
                            spec.amount,
                            sh.start,
                            &sh.stop,
                            spec.no_drain,
                            cap,
                            c,
                        )
                        .map(|skipped| skipped_in_window = skipped)
                    } else {
                        crate::tcp::send(
                            &mut s,
                            len,
                            spec.amount,
                            sh.start,
                            &sh.stop,
                            spec.no_drain,
                            c,
                        )
                    };
                    tcp_info = sockopt::tcp_info(&s);
                    r
                }
                Role::Receiver => {
                    let until = spec.amount.duration().filter(|_| spec.no_drain).map(|d| {
                        crate::tcp::Until {
                            at: sh.start + d + crate::spec::NO_DRAIN_GRACE,
                            quiet: crate::spec::NO_DRAIN_QUIET,
                            cap: crate::spec::NO_DRAIN_CAP,
                        }
                    });
                    crate::tcp::receive(&mut s, len, expect, held_clamp(spec), until, c).map(|r| {
                        counted_end = Some(r.counted_end);
                        drain = r.drain;
                    })
                }
            };
            let addr = |a: std::io::Result<std::net::SocketAddr>| {
                a.map_or(String::new(), |a| a.to_string())
            };
            let rep =
                sockopt::socket_report(&s, spec, true, addr(s.local_addr()), addr(s.peer_addr()));
            (r, rep)
        }
        DataSocket::Udp(s) => {
            let r = match role {
                Role::Sender => crate::udp::send(
                    &s,
                    len,
                    spec.rate_bits_per_second,
                    spec.amount,
                    sh.tag,
                    crate::udp::SendMode::of(spec),
                    sh.start,
                    &sh.stop,
                    c,
                ),
                Role::Receiver => {
                    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
                    crate::udp::receive(
                        &s,
                        len,
                        sh.tag,
                        &sh.stop,
                        &sh.peer_senders_done,
                        c,
                        &mut last_arrival,
                    )
                }
            };
            let addr = |a: std::io::Result<std::net::SocketAddr>| {
                a.map_or(String::new(), |a| a.to_string())
            };
            let rep =
                sockopt::socket_report(&s, spec, false, addr(s.local_addr()), addr(s.peer_addr()));
            (r.map(|u| udp = Some(u)), rep)
        }
    };
    // A UDP receiver's time ends with its last datagram, not with the drain after it; in a
    // timed test not before the test's end either, so that a slow pacer's few datagrams (one
    // every second at a low -b) count over the whole test, not over the span they arrived in.
    let now = counted_end.unwrap_or_else(Instant::now);
    let end = match (last_arrival, spec.amount.duration()) {
        (Some(last), Some(d)) => last.max((sh.start + d).min(now)),
        (Some(last), None) => last,
        (None, _) => now,
    };
    let cpu_end = sockopt::thread_cpu();
    // With -O, the report starts where the warm-up ended.
    let (from, base_bytes, base_calls, cpu_from) = match c.warm.get() {
        Some(w) => (w.at, w.bytes, w.calls, w.cpu),
        None => (sh.start, 0, 0, cpu0),
    };
    // With -O, retransmits too count from the end of the warm-up.
    if let (Some(t), Some(base)) = (tcp_info.as_mut(), c.warm.get().and_then(|w| w.retransmits)) {
        t.retransmits = t.retransmits.saturating_sub(base);
    }
    let report = StreamReport {
        id,
        flow,
        role,
        bytes: c.bytes.load(Ordering::Relaxed) - base_bytes,
        calls: c.calls.load(Ordering::Relaxed) - base_calls,
        seconds: end.saturating_duration_since(from).as_secs_f64(),
        cpu: cpu_end.since(&cpu_from),
        socket: socket_report,
        tcp_info,
        udp,
        zerocopy,
        longest_call_seconds: match c.longest_call_nanos.load(Ordering::Relaxed) {
            0 => None,
            ns => Some(ns as f64 * 1e-9),
        },
        skipped_in_window_seconds: skipped_in_window,
        drain,
        error: result.err().map(|e| e.to_string()),
    };
    c.done.store(true, Ordering::Release);
    report
}
