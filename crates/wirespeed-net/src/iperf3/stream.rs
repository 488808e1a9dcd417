//! The data streams of an iperf3 test, at either end: TCP bytes, and UDP datagrams with
//! iperf3's header (send time, sequence number). One thread per stream, blocking I/O with short
//! timeouts so that every loop sees the stop flag; nothing allocates per call.
//!
//! Counting follows iperf3 so that both ends' figures compare: a sender counts what it wrote,
//! a receiver what it read of what was sent while the test ran, including what was still in
//! flight at TEST_END (iperf3's receiver leaves that out); the `-O`
//! warm-up is left out at both ends; a UDP receiver counts a gap in the sequence as loss and a
//! late datagram as one loss fewer, and smooths the transit-time difference as RFC 3550 A.8
//! does (jitter).

use std::io::{self, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::codec::{read_udp_header, udp_header_bytes, write_udp_header};
use crate::report::CpuTime;
use crate::sockopt;

/// How often a blocked call returns to look at the stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// What the test's streams share: when to count from, when to stop, and the byte budget of
/// `-n`, which iperf3 counts over every stream together.
#[derive(Debug)]
pub struct Shared {
    /// The end of the warm-up: bytes before it are not counted.
    pub counted_from: Instant,
    /// Set when the test is over (its time, its bytes, TEST_END or an error).
    pub stop: AtomicBool,
    /// Bytes sent by every stream of this end (after the warm-up).
    pub sent: AtomicU64,
    /// Bytes received by every stream of this end (after the warm-up).
    pub received: AtomicU64,
    /// `-n` in all, 0: not by bytes.
    pub byte_budget: u64,
}

impl Shared {
    #[doc(hidden)]
    pub fn new(omit: Duration, byte_budget: u64) -> Arc<Shared> {
        Arc::new(Shared {
            counted_from: Instant::now() + omit,
            stop: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            byte_budget,
        })
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// One stream's count at this end.
#[derive(Debug, Clone, Default)]
pub struct Count {
    /// Payload bytes after the warm-up.
    pub bytes: u64,
    /// Calls that moved data.
    pub calls: u64,
    /// From the end of the warm-up to the last byte counted.
    pub seconds: f64,
    /// The thread's CPU time.
    pub cpu: CpuTime,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: u64,
    /// UDP receiver: datagrams lost.
    pub lost: u64,
    /// UDP receiver: datagrams that came after a later one.
    pub out_of_order: u64,
    /// UDP receiver: RFC 3550 jitter, seconds.
    pub jitter: f64,
    /// TCP: `TCP_INFO` at the end (a sender's retransmits).
    pub tcp_info: Option<crate::report::TcpInfoReport>,
    /// What ended the stream early.
    pub error: Option<String>,
}

impl Count {
    /// A UDP stream's figures as wirespeed reports them: a sender's datagrams, or what a
    /// receiver got, lost and saw out of order, with the jitter by iperf3's header clock.
    pub(crate) fn udp_report(&self, sends: bool) -> crate::report::UdpReport {
        use crate::report::UdpReport;
        if sends {
            return UdpReport {
                datagrams: self.packets,
                ..UdpReport::default()
            };
        }
        UdpReport {
            datagrams: self.packets.saturating_sub(self.lost),
            lost: Some(self.lost),
            lost_percent: crate::udp::percent(self.lost, self.packets),
            out_of_order: Some(self.out_of_order),
            jitter_seconds: Some(self.jitter),
            clock: Some("wall clock (iperf3's header)".into()),
            ..UdpReport::default()
        }
    }
}

/// The warm-up bookkeeping of one stream: the figures at the end of the warm-up are
/// subtracted from the totals.
struct Warmup {
    done: bool,
    bytes: u64,
    calls: u64,
    packets: u64,
    lost: u64,
}

impl Warmup {
    fn new(shared: &Shared) -> Warmup {
        Warmup {
            done: Instant::now() >= shared.counted_from,
            bytes: 0,
            calls: 0,
            packets: 0,
            lost: 0,
        }
    }

    /// Whether counting has started; records the base the moment it does.
    fn counting(&mut self, shared: &Shared, c: &Count) -> bool {
        if !self.done && Instant::now() >= shared.counted_from {
            self.done = true;
            (self.bytes, self.calls, self.packets, self.lost) =
                (c.bytes, c.calls, c.packets, c.lost);
        }
        self.done
    }

    fn finish(&self, mut c: Count, started: Instant, last: Instant) -> Count {
        if !self.done {
            return Count {
                cpu: c.cpu,
                tcp_info: c.tcp_info,
                error: c.error,
                ..Count::default()
            };
        }
        c.bytes -= self.bytes;
        c.calls -= self.calls;
        c.packets = c.packets.saturating_sub(self.packets);
        c.lost = c.lost.saturating_sub(self.lost);
        c.seconds = last.saturating_duration_since(started).as_secs_f64();
        c
    }
}

/// Writes `len`-byte blocks until stopped or the byte budget is spent.
pub(crate) fn tcp_send(mut s: TcpStream, len: usize, shared: Arc<Shared>) -> Count {
    let buf = vec![0x5au8; len];
    let cpu0 = sockopt::thread_cpu();
    let _ = s.set_write_timeout(Some(POLL));
    let mut c = Count::default();
    let mut w = Warmup::new(&shared);
    let started = Instant::now().max(shared.counted_from);
    let mut last = started;
    while !shared.stopped() {
        let counting = w.counting(&shared, &c);
        if counting
            && shared.byte_budget > 0
            && shared.sent.load(Ordering::Relaxed) >= shared.byte_budget
        {
            break;
        }
        match s.write(&buf) {
            Ok(n) => {
                c.bytes += n as u64;
                c.calls += 1;
                if counting {
                    shared.sent.fetch_add(n as u64, Ordering::Relaxed);
                    last = Instant::now();
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                c.error = Some(format!("send failed: {e}"));
                break;
            }
        }
    }
    // Wait (briefly) until what was written has arrived: the receiver stops counting when
    // the client says TEST_END, and a socket buffer still in flight would be counted here and
    // not there (iperf3's own client leaves that gap).
    // The stream's time runs until then, as the receiver's does.
    let drained_by = Instant::now() + DRAIN_WAIT;
    while in_flight(&s) && Instant::now() < drained_by {
        std::thread::sleep(Duration::from_millis(2));
        if w.done {
            last = Instant::now();
        }
    }
    c.tcp_info = sockopt::tcp_info(&s);
    c.cpu = sockopt::thread_cpu().since(&cpu0);
    w.finish(c, started, last)
}

/// The longest a TCP sender waits at the end for its data to be acknowledged.
pub(crate) const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Whether a TCP socket still holds data not yet acknowledged (`tcpi_unacked`) or not yet sent
/// (`tcpi_notsent_bytes`, Linux 4.6+).
fn in_flight(s: &TcpStream) -> bool {
    const UNACKED: usize = 24;
    const NOTSENT: usize = 144;
    let mut buf = [0u8; 256];
    let Ok(n) = crate::sys::socket_options::tcp_info(s, &mut buf) else {
        return false;
    };
    let field = |at: usize| {
        buf.get(at..at + 4)
            .filter(|_| at + 4 <= n)
            .map_or(0, |b| u32::from_ne_bytes(b.try_into().expect("4 bytes")))
    };
    field(UNACKED) > 0 || field(NOTSENT) > 0
}

/// Reads until stopped, and after that (at most `drain`) until the peer closes or no data
/// came for [`POLL`]: what arrives then was sent before the test ended, and is counted, so
/// that this end's total is the sender's (iperf3 leaves out what is in flight at TEST_END).
pub(crate) fn tcp_recv(
    mut s: TcpStream,
    len: usize,
    shared: Arc<Shared>,
    drain: Duration,
) -> Count {
    let mut buf = vec![0u8; len.max(1)];
    let cpu0 = sockopt::thread_cpu();
    let _ = s.set_read_timeout(Some(POLL));
    let mut c = Count::default();
    let mut w = Warmup::new(&shared);
    let started = Instant::now().max(shared.counted_from);
    let mut last = started;
    let mut drain_until: Option<Instant> = None;
    loop {
        if drain_until.is_none() && shared.stopped() {
            drain_until = Some(Instant::now() + drain);
        }
        if drain_until.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let counting = w.counting(&shared, &c);
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                c.bytes += n as u64;
                c.calls += 1;
                if counting {
                    shared.received.fetch_add(n as u64, Ordering::Relaxed);
                    last = Instant::now();
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                if drain_until.is_some() {
                    break;
                }
            }
            Err(e) => {
                if drain_until.is_none() {
                    c.error = Some(format!("receive failed: {e}"));
                }
                break;
            }
        }
    }
    c.tcp_info = sockopt::tcp_info(&s);
    c.cpu = sockopt::thread_cpu().since(&cpu0);
    w.finish(c, started, last)
}

/// Seconds and microseconds of the wall clock, as iperf3 stamps its datagrams (the receiver
/// uses differences only, so the two clocks need not agree).
fn now_stamp() -> (u32, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as u32, d.subsec_micros())
}

/// Sends `len`-byte datagrams at `bits_per_second` (0: as fast as the socket takes them).
pub(crate) fn udp_send(
    s: UdpSocket,
    len: usize,
    bits_per_second: u64,
    wide: bool,
    shared: Arc<Shared>,
) -> Count {
    let mut buf = vec![0x5au8; len.max(udp_header_bytes(wide))];
    let cpu0 = sockopt::thread_cpu();
    let _ = s.set_write_timeout(Some(POLL));
    let mut c = Count::default();
    let mut w = Warmup::new(&shared);
    let t0 = Instant::now();
    let started = t0.max(shared.counted_from);
    let mut last = started;
    let mut seq: u64 = 0;
    while !shared.stopped() {
        let counting = w.counting(&shared, &c);
        if counting
            && shared.byte_budget > 0
            && shared.sent.load(Ordering::Relaxed) >= shared.byte_budget
        {
            break;
        }
        if bits_per_second > 0 {
            // Pace on the whole test's average, as iperf3 does: send while behind.
            let due = t0.elapsed().as_secs_f64() * bits_per_second as f64 / 8.0;
            if (c.bytes as f64) >= due {
                let ahead = (c.bytes as f64 - due) * 8.0 / bits_per_second as f64;
                std::thread::sleep(Duration::from_secs_f64(ahead.clamp(0.000_05, 0.01)));
                continue;
            }
        }
        seq += 1;
        let (secs, usecs) = now_stamp();
        write_udp_header(&mut buf, secs, usecs, seq, wide);
        match s.send(&buf) {
            Ok(n) => {
                c.bytes += n as u64;
                c.calls += 1;
                c.packets = seq;
                if counting {
                    shared.sent.fetch_add(n as u64, Ordering::Relaxed);
                    last = Instant::now();
                }
            }
            // A full socket buffer (ENOBUFS) loses the datagram; the sequence shows the gap.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) || e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) => {
                c.error = Some(format!("send failed: {e}"));
                break;
            }
        }
    }
    c.cpu = sockopt::thread_cpu().since(&cpu0);
    w.finish(c, started, last)
}

/// Receives datagrams until stopped: loss from the sequence, jitter from the send times.
pub(crate) fn udp_recv(s: UdpSocket, len: usize, wide: bool, shared: Arc<Shared>) -> Count {
    let mut buf = vec![0u8; len.max(udp_header_bytes(wide)) + 1];
    let cpu0 = sockopt::thread_cpu();
    let _ = s.set_read_timeout(Some(POLL));
    let mut c = Count::default();
    let mut w = Warmup::new(&shared);
    let started = Instant::now().max(shared.counted_from);
    let mut last = started;
    let mut prev_transit: Option<f64> = None;
    while !shared.stopped() {
        let counting = w.counting(&shared, &c);
        match s.recv(&mut buf) {
            Ok(n) => {
                let Some((secs, usecs, seq)) = read_udp_header(&buf[..n], wide) else {
                    continue;
                };
                c.bytes += n as u64;
                c.calls += 1;
                if counting {
                    shared.received.fetch_add(n as u64, Ordering::Relaxed);
                    last = Instant::now();
                }
                if seq > c.packets {
                    c.lost += seq - c.packets - 1;
                    c.packets = seq;
                } else {
                    c.out_of_order += 1;
                    c.lost = c.lost.saturating_sub(1);
                }
                let (now_s, now_us) = now_stamp();
                let transit = (f64::from(now_s) - f64::from(secs))
                    + (f64::from(now_us) - f64::from(usecs)) / 1e6;
                let d = (transit - prev_transit.unwrap_or(transit)).abs();
                prev_transit = Some(transit);
                c.jitter += (d - c.jitter) / 16.0;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            // An ICMP port unreachable from a peer that already closed: nothing more comes.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => {
                c.error = Some(format!("receive failed: {e}"));
                break;
            }
        }
    }
    c.cpu = sockopt::thread_cpu().since(&cpu0);
    w.finish(c, started, last)
}

/// Reads exactly `buf.len()` bytes before `deadline`, whatever the peer's pace (a slowloris
/// sending a byte a second still meets the deadline).
pub(crate) fn read_exact_by(
    s: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
        }
        s.set_read_timeout(Some(left.min(POLL * 4)))?;
        match s.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection",
                ));
            }
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` within `timeout`.
pub(crate) fn write_all_within(s: &mut TcpStream, buf: &[u8], timeout: Duration) -> io::Result<()> {
    s.set_write_timeout(Some(timeout))?;
    s.write_all(buf)
}

/// Reads one state byte before `deadline`.
pub(crate) fn read_state(
    s: &mut TcpStream,
    deadline: Instant,
) -> io::Result<Result<super::State, super::CodecError>> {
    let mut b = [0u8; 1];
    read_exact_by(s, &mut b, deadline)?;
    Ok(super::State::from_code(b[0]))
}

/// Reads one length-prefixed JSON document of at most `cap` bytes before `deadline`: the
/// length is checked before anything is allocated for the body.
pub(crate) fn read_json<T: for<'de> serde::Deserialize<'de>>(
    s: &mut TcpStream,
    cap: usize,
    deadline: Instant,
) -> io::Result<Result<T, super::CodecError>> {
    let mut prefix = [0u8; 4];
    read_exact_by(s, &mut prefix, deadline)?;
    let len = match super::codec::json_length(prefix, cap) {
        Ok(n) => n,
        Err(e) => return Ok(Err(e)),
    };
    let mut body = vec![0u8; len];
    read_exact_by(s, &mut body, deadline)?;
    Ok(super::codec::decode_json(&body))
}
