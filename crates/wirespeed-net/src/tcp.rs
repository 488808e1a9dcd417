//! The TCP data path: one blocking socket per thread, one buffer allocated per stream, plain
//! `write`/`read` calls of `-l` bytes (ttcp's loop, seed 002). The counters a reporter samples
//! are relaxed atomic stores of thread-local totals: no lock, no allocation per call.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::buffer::AlignedBuf;
use crate::counters::Counters;
use crate::report::{DrainEnd, DrainReport, ZeroCopyReport};
use crate::spec::Amount;
use crate::sys::{cmsg, socket_options};
use socket2::SockRef;

pub(crate) use crate::buffer::pattern;

fn silent(e: io::Error) -> io::Error {
    if crate::control::is_timeout(&e) {
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the peer stopped reading (timed out)",
        )
    } else {
        e
    }
}

/// What a sender may still send: until a deadline (`-t`) or exactly `limit` bytes (`-n`).
struct Budget {
    deadline: Option<Instant>,
    limit: u64,
}

impl Budget {
    fn new(amount: Amount, start: Instant) -> Budget {
        Budget {
            deadline: amount.duration().map(|d| start + d),
            limit: match amount {
                Amount::Bytes(n) => n,
                Amount::Seconds(_) => u64::MAX,
            },
        }
    }

    /// The size of the next call after `bytes` sent, at most `len`; `None` when done.
    fn next(&self, bytes: u64, len: usize, stop: &AtomicBool) -> Option<usize> {
        let done = bytes >= self.limit
            || stop.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d);
        (!done).then(|| (self.limit - bytes).min(len as u64) as usize)
    }

    /// An error if a `-n` count was cut short.
    fn check(&self, bytes: u64) -> io::Result<()> {
        if bytes < self.limit && self.deadline.is_none() {
            return Err(io::Error::other(format!(
                "stopped after {bytes} of {} bytes",
                self.limit
            )));
        }
        Ok(())
    }
}

/// Writes `-l`-byte buffers until the deadline or until exactly `amount` bytes are written,
/// then closes the sending half so that the receiver sees the end. With `no_drain` (a timed
/// test whose receiver stops reading at its end) a write never blocks past the deadline: a
/// receiver that stopped reading leaves the window shut, and a blocked write would wait for
/// the agent's cap instead of ending the test.
pub(crate) fn send(
    s: &mut TcpStream,
    len: usize,
    amount: Amount,
    start: Instant,
    stop: &AtomicBool,
    no_drain: bool,
    c: &Counters,
) -> io::Result<()> {
    let buf = pattern(len);
    let mut w = Written::default();
    let budget = Budget::new(amount, start);
    let no_drain = no_drain && budget.deadline.is_some();
    if no_drain {
        // Short enough that the deadline is seen on time; a timed-out write returns what it
        // wrote, and the loop looks at the deadline again.
        s.set_write_timeout(Some(Duration::from_millis(20)))?;
    }
    while let Some(want) = budget.next(w.bytes, len, stop) {
        let before = Instant::now();
        match s.write(&buf[..want]) {
            Ok(n) => w.record(n, before.elapsed(), c),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if no_drain && crate::control::is_timeout(&e) => {}
            Err(e) => return Err(silent(e)),
        }
    }
    budget.check(w.bytes)?;
    end_sending(s, no_drain)
}

/// What a sender has written: its bytes, its calls and its longest call, published to the
/// counters as they grow.
#[derive(Debug, Default)]
struct Written {
    bytes: u64,
    calls: u64,
    longest: Duration,
}

impl Written {
    fn record(&mut self, n: usize, took: Duration, c: &Counters) {
        self.bytes += n as u64;
        self.calls += 1;
        c.publish(self.bytes, self.calls);
        if took > self.longest {
            self.longest = took;
            c.longest_call_nanos
                .store(took.as_nanos() as u64, Ordering::Relaxed);
        }
    }
}

/// A sender's end once its budget is spent. With `no_drain` the test ends at its time: what
/// the socket buffer still holds is not sent. Closing with a zero linger (when the engine drops
/// the socket, after reading its TCP_INFO) resets the connection and drops that data, instead
/// of a FIN behind it; otherwise the kernel would go on filling the path's queue until the
/// receiver's own reset came back, and every message that follows on this path (the end of the
/// test, the next test's set-up and probes) would wait behind it. The receiver stops reading at
/// its grace and takes a reset as the end. Otherwise the sending half is closed, so that the
/// receiver sees the end.
fn end_sending(s: &TcpStream, no_drain: bool) -> io::Result<()> {
    if no_drain {
        return SockRef::from(s).set_linger(Some(Duration::ZERO));
    }
    s.shutdown(Shutdown::Write)
}

/// A `-b` sender's account of the time its cap went unused because this end was late: the
/// kernel paces a capped socket from what it holds, and when the writer is descheduled for
/// longer than the unsent data lasts (a tenth of a second at the cap, see
/// `sockopt::CAPPED_UNSENT_SECONDS`) the socket runs dry; the kernel does not send faster
/// afterwards to make up for it, so that time is given up, as a `load` generator gives up the
/// frames it owes. Counting it tells a machine too busy to offer the cap from a path that did
/// not carry it.
///
/// The writer looks each time it is back (before it writes): when the socket holds less than a
/// segment, the span since it last looked is reckoned at the cap, and what left the socket in
/// that span short of the cap is time the socket stood empty, at the end of the span. A span
/// the path held back (the data still queued) ends with the socket not empty and counts
/// nothing.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct Behind {
    bytes_per_second: f64,
    /// The measured window: from the start (or the `-O` warm-up's end) to the `-t` deadline,
    /// if there is one.
    window: (Instant, Option<Instant>),
    /// When the writer last looked, and how many bytes had left the socket by then.
    last: Option<(Instant, u64)>,
    skipped: Duration,
}

impl Behind {
    #[doc(hidden)]
    #[inline]
    pub fn new(cap_bits_per_second: u64, window: (Instant, Option<Instant>)) -> Behind {
        Behind {
            bytes_per_second: (cap_bits_per_second as f64 / 8.0).max(1.0),
            window,
            last: None,
            skipped: Duration::ZERO,
        }
    }

    /// The writer is back at `now`: `left` bytes have left the socket in all, and the socket
    /// still holds `unsent` bytes, less than a segment of `mss` bytes when it ran dry.
    #[doc(hidden)]
    #[inline]
    pub fn look(&mut self, now: Instant, left: u64, unsent: u64, mss: u64) {
        if unsent < mss.max(1)
            && let Some((then, left_then)) = self.last
        {
            let span = now.saturating_duration_since(then).as_secs_f64();
            let at_cap = left.saturating_sub(left_then) as f64 / self.bytes_per_second;
            let dry = span - at_cap;
            if dry > 0.0 {
                let dry_from = now
                    .checked_sub(Duration::from_secs_f64(dry))
                    .unwrap_or(then);
                let (w0, w1) = self.window;
                let to = w1.map_or(now, |w1| now.min(w1));
                self.skipped += to.saturating_duration_since(dry_from.max(w0));
            }
        }
        self.last = Some((now, left));
    }

    /// The measured window's time given up, seconds.
    #[doc(hidden)]
    #[inline]
    pub fn skipped_seconds(&self) -> f64 {
        self.skipped.as_secs_f64()
    }
}

/// [`send`] for a socket capped by `-b` (its pacing holds the rate; its unsent data is held
/// low): the writer waits for room with `poll` instead of inside a blocking write, so that it
/// can look at the socket each time it is back ([`Behind`]) before it fills it again. Returns
/// the seconds of the measured window given up, or `None` where the kernel does not report
/// the socket's unsent data.
#[allow(clippy::too_many_arguments)]
#[doc(hidden)]
pub fn send_capped(
    s: &mut TcpStream,
    len: usize,
    amount: Amount,
    start: Instant,
    stop: &AtomicBool,
    no_drain: bool,
    cap_bits_per_second: u64,
    c: &Counters,
) -> io::Result<Option<f64>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let buf = pattern(len);
    let mut w = Written::default();
    let budget = Budget::new(amount, start);
    let no_drain = no_drain && budget.deadline.is_some();
    // A peer that stops reading ends the stream as a blocking write's SO_SNDTIMEO would.
    let stall_limit = s.write_timeout()?;
    let from = c.warmup_until.unwrap_or(start);
    let mut behind = Behind::new(cap_bits_per_second, (from, budget.deadline));
    // The account starts at the test's start with nothing sent: a writer first scheduled late
    // (tens of ms beside busy cores) left the cap unused from then, which its first look
    // counts; begun at that first look instead, the late start went uncounted (session 24: a
    // -2.1% shortfall with "0.00% given up").
    behind.look(start, 0, 0, 1);
    let mut reported = true;
    let mut progress = Instant::now();
    let slice = Timespec {
        tv_sec: 0,
        tv_nsec: 20_000_000,
    };
    while let Some(want) = budget.next(w.bytes, len, stop) {
        let before = Instant::now();
        let mut pfd = [PollFd::new(&*s, PollFlags::OUT)];
        match poll(&mut pfd, Some(&slice)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let now = Instant::now();
        match crate::sockopt::unsent_bytes(&*s) {
            Some((unsent, mss)) => behind.look(
                now,
                w.bytes.saturating_sub(u64::from(unsent)),
                u64::from(unsent),
                u64::from(mss),
            ),
            None => reported = false,
        }
        match SockRef::from(&*s)
            .send_with_flags(&buf[..want], libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
        {
            Ok(n) => {
                w.record(n, before.elapsed(), c);
                progress = Instant::now();
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                if !no_drain && stall_limit.is_some_and(|l| progress.elapsed() >= l) {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the peer stopped reading (timed out)",
                    ));
                }
            }
            Err(e) => return Err(silent(e)),
        }
    }
    budget.check(w.bytes)?;
    end_sending(s, no_drain)?;
    Ok(reported.then(|| behind.skipped_seconds()))
}

/// A `no_drain` receiver's end: it counts until `at` (`-t` and the grace), then reads the
/// tail, uncounted, until the data stops arriving ([`DrainReport`]).
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct Until {
    /// The end of the counted time.
    #[doc(hidden)]
    pub at: Instant,
    /// The tail ends after this long without data ...
    #[doc(hidden)]
    pub quiet: Duration,
    /// ... and at the latest this long after `at`.
    #[doc(hidden)]
    pub cap: Duration,
}

/// How a [`receive`] ended: the end of its counted time, and a `no_drain` receiver's tail.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub struct Received {
    /// When the counted part ended (the stream's time ends here, not after the tail).
    #[doc(hidden)]
    pub counted_end: Instant,
    #[doc(hidden)]
    pub drain: Option<DrainReport>,
}

/// Reads `-l`-byte buffers until the sender closes, or until `until` (a `no_drain` test),
/// whichever comes first; a `no_drain` receiver then reads the tail ([`drain`]). With
/// `expect`, fewer bytes is an error.
#[doc(hidden)]
pub fn receive(
    s: &mut TcpStream,
    len: usize,
    expect: Option<u64>,
    window_clamp: Option<u64>,
    until: Option<Until>,
    c: &Counters,
) -> io::Result<Received> {
    // Page-aligned: the kernel's copy into it is the receiver's main cost (see buffer.rs).
    let mut buf = AlignedBuf::zeroed(len);
    let (mut bytes, mut calls) = (0u64, 0u64);
    let idle = s.read_timeout().ok().flatten();
    // Whether the sender's end (reset or FIN) has arrived: then there is no tail to read.
    let mut ended = None;
    loop {
        if let Some(until) = until {
            let left = until.at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            // The idle timeout still applies; the end of the test comes first if nearer.
            let wait = idle.map_or(left, |i| i.min(left));
            let _ = s.set_read_timeout(Some(wait.max(Duration::from_millis(1))));
        }
        match s.read(&mut buf) {
            Ok(0) => {
                ended = Some(DrainEnd::Closed);
                break;
            }
            Ok(n) => {
                bytes += n as u64;
                calls += 1;
                c.publish(bytes, calls);
                if let Some(clamp) = window_clamp {
                    // Linux (6.x, tcp_measure_rcv_mss) resets window_clamp to rcvbuf x its
                    // measured payload/truesize ratio whenever that ratio changes, which undoes
                    // the user's TCP_WINDOW_CLAMP once data flows: the window of a "K packet"
                    // buffer became 4K/3 packets in the seed-004 lab. Setting it again after
                    // each read holds the window to the request (the kernel returns at once
                    // when the value is unchanged).
                    crate::sockopt::set_window_clamp(s, clamp);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if crate::control::is_timeout(&e)
                    && until.is_some_and(|u| Instant::now() >= u.at) =>
            {
                break;
            }
            // A timed sender that ends without draining (`no_drain`) resets the connection at
            // its time; the data before the reset has been read.
            Err(e) if until.is_some() && e.kind() == io::ErrorKind::ConnectionReset => {
                ended = Some(DrainEnd::Reset);
                break;
            }
            Err(e) if crate::control::is_timeout(&e) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the peer went silent (no data within the idle timeout)",
                ));
            }
            Err(e) => return Err(e),
        }
    }
    let counted_end = Instant::now();
    let drain = until.map(|u| match ended {
        Some(end) => DrainReport {
            seconds: 0.0,
            bytes: 0,
            ended_by: end,
        },
        None => drain(s, &mut buf, u.quiet, u.cap),
    });
    match expect {
        Some(n) if bytes != n => Err(io::Error::other(format!(
            "received {bytes} of {n} bytes before the sender closed"
        ))),
        _ => Ok(Received { counted_end, drain }),
    }
}

/// The tail of a `no_drain` test: what the sender wrote before its time and the path's queues
/// still held when the receiver's counted time ended. The sender's reset (or FIN) travels
/// behind that data in the same queues, so its arrival is the moment the test's data has left
/// the path; a reset lost to a full queue shows as `quiet` without data, and `cap` bounds a
/// sender that never stops. Read and thrown away: the rate is what arrived in the counted time.
pub(crate) fn drain(
    s: &mut TcpStream,
    buf: &mut [u8],
    quiet: Duration,
    cap: Duration,
) -> DrainReport {
    let start = Instant::now();
    let deadline = start + cap;
    let mut bytes = 0u64;
    let ended_by = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break DrainEnd::Cap;
        }
        if s.set_read_timeout(Some(quiet.min(left).max(Duration::from_millis(1))))
            .is_err()
        {
            break DrainEnd::Error;
        }
        match s.read(buf) {
            Ok(0) => break DrainEnd::Closed,
            Ok(n) => bytes += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break DrainEnd::Reset,
            Err(e) if crate::control::is_timeout(&e) => {
                if Instant::now() >= deadline {
                    break DrainEnd::Cap;
                }
                break DrainEnd::Quiet;
            }
            Err(_) => break DrainEnd::Error,
        }
    };
    DrainReport {
        seconds: start.elapsed().as_secs_f64(),
        bytes,
        ended_by,
    }
}

// linux/errqueue.h, not in every libc build.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// Reads the zerocopy completions waiting on the socket's error queue, without blocking.
/// Each notification covers the range of sends `ee_info..=ee_data`.
fn drain_completions(s: &TcpStream, z: &mut ZeroCopyReport) {
    loop {
        let mut control = [0u8; 128];
        let Ok(got) = cmsg::recvmsg(
            s,
            &mut [],
            &mut control,
            libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        ) else {
            return;
        };
        for c in cmsg::messages(&control[..got.control_len]) {
            if (c.level == libc::SOL_IP && c.kind == libc::IP_RECVERR)
                || (c.level == libc::SOL_IPV6 && c.kind == libc::IPV6_RECVERR)
            {
                let Some((e, _)) = cmsg::extended_err(c.data) else {
                    continue;
                };
                if e.ee_origin == SO_EE_ORIGIN_ZEROCOPY && e.ee_errno == 0 {
                    let n = u64::from(e.ee_data.wrapping_sub(e.ee_info)) + 1;
                    z.completed += n;
                    if e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                        z.copied += n;
                    }
                }
            }
        }
    }
}

/// [`send`] with `MSG_ZEROCOPY`: the kernel sends from the user buffer's pages instead of
/// copying them, and reports on the socket's error queue when it is done with each send. The
/// buffer here is never written after it is filled, so no send has to wait for its
/// completion; the queue is drained to keep its memory bounded and to count what the kernel
/// really did.
pub(crate) fn send_zerocopy(
    s: &TcpStream,
    len: usize,
    amount: Amount,
    start: Instant,
    stop: &AtomicBool,
    c: &Counters,
) -> io::Result<ZeroCopyReport> {
    if let Err(e) = socket_options::set_zerocopy(s) {
        return Err(io::Error::new(
            e.kind(),
            format!("--zerocopy: SO_ZEROCOPY is not available ({e})"),
        ));
    }
    let sock = SockRef::from(s);
    let buf = pattern(len);
    let mut z = ZeroCopyReport::default();
    let (mut bytes, mut calls) = (0u64, 0u64);
    let budget = Budget::new(amount, start);
    while let Some(want) = budget.next(bytes, len, stop) {
        // The kernel sends from buf's pages after the call returns: buf outlives the socket's
        // use of them (it is never freed before the socket is closed, and never written).
        let n = match sock.send_with_flags(&buf[..want], libc::MSG_ZEROCOPY) {
            Ok(n) => n,
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOBUFS) => {
                    // Too many completions outstanding: collect them, then retry.
                    drain_completions(s, &mut z);
                    std::thread::yield_now();
                    continue;
                }
                _ => return Err(silent(e)),
            },
        };
        z.sends += 1;
        bytes += n as u64;
        calls += 1;
        c.publish(bytes, calls);
        if z.sends - z.completed > 256 {
            drain_completions(s, &mut z);
        }
    }
    budget.check(bytes)?;
    s.shutdown(Shutdown::Write)?;
    // The last completions arrive as the peer acknowledges the data.
    let wait = Instant::now();
    while z.completed < z.sends && wait.elapsed() < Duration::from_millis(500) {
        drain_completions(s, &mut z);
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(z)
}

/// [`send`] from a file with `sendfile(2)`: the kernel moves the file's pages (from the page
/// cache) to the socket without a copy through user space. At the end of the file it starts
/// again from the beginning, so `-t` and `-n` work with any file size.
pub(crate) fn send_file(
    s: &TcpStream,
    path: &std::path::Path,
    len: usize,
    amount: Amount,
    start: Instant,
    stop: &AtomicBool,
    c: &Counters,
) -> io::Result<()> {
    let file = std::fs::File::open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("--file {}: {e}", path.display())))?;
    let size = file.metadata()?.len();
    if size == 0 {
        return Err(io::Error::other(format!(
            "--file {} is empty",
            path.display()
        )));
    }
    let (mut bytes, mut calls) = (0u64, 0u64);
    let mut offset: u64 = 0;
    let budget = Budget::new(amount, start);
    while let Some(want) = budget.next(bytes, len, stop) {
        if offset >= size {
            offset = 0;
        }
        let want = want.min((size - offset) as usize);
        let n = match rustix::fs::sendfile(s, &file, Some(&mut offset), want) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(silent(e.into())),
        };
        if n == 0 {
            return Err(io::Error::other(format!(
                "--file {} shrank while being sent",
                path.display()
            )));
        }
        bytes += n as u64;
        calls += 1;
        c.publish(bytes, calls);
    }
    budget.check(bytes)?;
    s.shutdown(Shutdown::Write)
}
