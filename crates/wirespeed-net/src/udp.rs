//! The UDP data path: batches of up to [`BATCH`] datagrams per `sendmmsg`/`recvmmsg` call over
//! buffers allocated once per stream, a sequence number and a send time in every datagram, and
//! pacing to the `-b` rate by the clock (not by sleeping a fixed gap, which drifts).
//!
//! Datagram layout (big-endian): `[0..8)` the session tag (first half of the cookie; datagrams
//! without it are ignored), `[8..16)` the sequence number from 0, `[16..24)` the send time in
//! `CLOCK_REALTIME` nanoseconds. The receiver takes its arrival time from the kernel
//! (`SO_TIMESTAMPNS`, also `CLOCK_REALTIME`) so that user-space scheduling does not enter the
//! jitter; a constant offset between two hosts' clocks cancels in RFC 3550's differences.

use std::io;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wirespeed_model::sequence::{Jitter, SequenceTracker};

use crate::counters::Counters;
use crate::report::UdpReport;
use crate::spec::{Amount, UDP_HEADER_BYTES};
use crate::sys::cmsg;
use crate::sys::mmsg::Batch;
use crate::sys::socket_options::{self, SOL_UDP, UDP_GRO};

/// Datagrams per system call.
pub const BATCH: usize = 64;

/// Largest UDP payload the kernel builds or coalesces in one GSO/GRO buffer.
const GSO_MAX_BYTES: usize = 65_507;

const HEADER: usize = UDP_HEADER_BYTES as usize;

/// `CLOCK_REALTIME` now, ns: the clock of the kernel's software stamps.
fn realtime_ns() -> u64 {
    crate::load::clock_ns(rustix::time::ClockId::Realtime)
}

/// Control-message space per datagram of a receiving batch (a stamp and a segment size).
const CONTROL_SLOT: usize = 64;

#[doc(hidden)]
#[inline]
pub fn write_header(d: &mut [u8], tag: u64, seq: u64, sent_ns: u64) {
    d[0..8].copy_from_slice(&tag.to_be_bytes());
    d[8..16].copy_from_slice(&seq.to_be_bytes());
    d[16..24].copy_from_slice(&sent_ns.to_be_bytes());
}

/// A datagram's tag, sequence number and send time, if it is long enough.
pub fn read_header(d: &[u8]) -> Option<(u64, u64, u64)> {
    let word = |r: std::ops::Range<usize>| Some(u64::from_be_bytes(d.get(r)?.try_into().ok()?));
    Some((word(0..8)?, word(8..16)?, word(16..24)?))
}

/// How a UDP sender hands datagrams to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendMode {
    /// With `UDP_SEGMENT` where the kernel and the path take it, else one datagram per message.
    Auto,
    /// With `UDP_SEGMENT` or not at all (`--gso`).
    Segmented,
    /// One datagram per message, each its own trip through the stack (`--no-gso`).
    PerDatagram,
}

impl SendMode {
    pub(crate) fn of(spec: &crate::spec::TestSpec) -> SendMode {
        if spec.gso {
            SendMode::Segmented
        } else if spec.no_gso {
            SendMode::PerDatagram
        } else {
            SendMode::Auto
        }
    }
}

/// Errors with which a `UDP_SEGMENT` send says the path cannot segment (a segment larger than
/// the route's MTU, a device without checksum offload): in [`SendMode::Auto`] the sender then
/// goes on one datagram per message.
fn segmentation_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::EIO | libc::EMSGSIZE | libc::ENOPROTOOPT)
    )
}

/// The longest a paced sender sleeps before it looks at its stop flag again.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Sends datagrams of `len` bytes at `rate` bit/s (0: as fast as the socket takes them) until
/// the deadline, or until `amount` bytes are sent (the last datagram shorter, but never
/// shorter than the header).
///
/// With segmentation (`mode`), one buffer of up to [`BATCH`] back-to-back datagrams goes down
/// as one send and one trip through the stack; the kernel cuts it into `len`-byte datagrams as
/// late as it can (on loopback a `UDP_GRO` receiver gets it whole). On this project's hosts a
/// datagram's own trip through the stack costs 4-5 us of the sender's CPU whether it comes
/// from `send` (iperf3) or `sendmmsg`, so only segmentation moves small datagrams at several
/// times iperf3's rate (bench/RESULTS.md). Every datagram still carries its own sequence number
/// and send time, so loss, duplicates, reordering and jitter stay per datagram.
#[allow(clippy::too_many_arguments)]
pub(crate) fn send(
    sock: &UdpSocket,
    len: usize,
    rate_bits_per_second: u64,
    amount: Amount,
    tag: u64,
    mode: SendMode,
    start: Instant,
    stop: &AtomicBool,
    c: &Counters,
) -> io::Result<UdpReport> {
    let fill = crate::buffer::pattern(len);
    let mut batch = Batch::new(BATCH, len, &fill, 0);
    let mut refused: Option<io::Error> = None;
    let mut gso = match mode {
        SendMode::PerDatagram => false,
        SendMode::Segmented => {
            socket_options::set_udp_segment(sock, len as i32).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("--gso: UDP_SEGMENT is not available here ({e})"),
                )
            })?;
            true
        }
        SendMode::Auto => match socket_options::set_udp_segment(sock, len as i32) {
            Ok(()) => true,
            Err(e) => {
                refused = Some(e);
                false
            }
        },
    };
    // Whether a segmented send has gone through: a refusal after that is a real error.
    let mut segmented_ok = false;
    let deadline = amount.duration().map(|d| start + d);
    let byte_limit = match amount {
        Amount::Bytes(n) => n,
        Amount::Seconds(_) => u64::MAX,
    };
    let (mut seq, mut bytes, mut calls) = (0u64, 0u64, 0u64);
    let bits_per_datagram = len as f64 * 8.0;
    while bytes < byte_limit && !stop.load(Ordering::Relaxed) {
        let per_call = if gso {
            (GSO_MAX_BYTES / len).clamp(1, BATCH)
        } else {
            BATCH
        };
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break;
        }
        let mut due = per_call as u64;
        if rate_bits_per_second > 0 {
            // Datagrams the schedule allows by now: datagram k (from 1) is due when the rate
            // has paid for k of them, so that over any whole test the mean is the target, not
            // one datagram more (at a low -b, one datagram too many is a large share).
            let allowed = (now.duration_since(start).as_secs_f64() * rate_bits_per_second as f64
                / bits_per_datagram) as u64;
            if allowed <= seq {
                let next = start
                    + Duration::from_secs_f64(
                        (seq + 1) as f64 * bits_per_datagram / rate_bits_per_second as f64,
                    );
                // Wake by the earlier of the next send and the deadline, and at least every
                // STOP_POLL to see a stop (an interrupt, the agent's abort): at a low -b the
                // next datagram may be minutes away.
                let wait = next
                    .min(deadline.unwrap_or(next))
                    .saturating_duration_since(now)
                    .min(STOP_POLL);
                // Sleeping overshoots by the timer slack (~50 us); the schedule then allows a
                // small batch, so the mean rate holds and the CPU is not burnt spinning.
                if wait > Duration::from_micros(20) {
                    std::thread::sleep(wait);
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            due = (allowed - seq).min(per_call as u64);
        }
        let mut n = 0usize;
        let mut planned = bytes;
        while n < due as usize && planned < byte_limit {
            let size = (byte_limit - planned).min(len as u64).max(HEADER as u64) as usize;
            let now_ns = realtime_ns();
            write_header(batch.slot_mut(n), tag, seq + n as u64, now_ns);
            batch.set_len(n, size);
            planned += size as u64;
            n += 1;
        }
        let sent = if gso {
            // One message over the n contiguous datagrams.
            batch.send_contiguous(sock, n)
        } else {
            batch.send_each(sock, n)
        };
        let sent = match sent {
            Ok(sent) => sent,
            Err(e) => {
                if gso && !segmented_ok && mode == SendMode::Auto && segmentation_refused(&e) {
                    // The path cannot segment: go on one datagram per message (nothing was
                    // sent).
                    let _ = socket_options::set_udp_segment(sock, 0);
                    gso = false;
                    refused = Some(e);
                    continue;
                }
                if gso && mode == SendMode::Segmented && segmentation_refused(&e) && !segmented_ok {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "--gso: the path refuses UDP_SEGMENT sends of {len}-byte datagrams ({e}); drop --gso"
                        ),
                    ));
                }
                match e.raw_os_error() {
                    Some(libc::EINTR | libc::ENOBUFS | libc::EAGAIN) => {
                        std::thread::yield_now();
                        continue;
                    }
                    Some(libc::ECONNREFUSED) => {
                        return Err(io::Error::new(
                            io::ErrorKind::ConnectionRefused,
                            "the receiver's port is closed (ICMP port unreachable)",
                        ));
                    }
                    _ => return Err(e),
                }
            }
        };
        calls += 1;
        segmented_ok |= gso;
        for i in 0..sent {
            bytes += batch.len(i) as u64;
            batch.set_len(i, len);
        }
        seq += sent as u64;
        c.publish(bytes, calls);
        c.datagrams.store(seq, Ordering::Relaxed);
    }
    let io_method = if gso {
        format!(
            "sendmsg with UDP_SEGMENT (GSO, {len}-byte segments, up to {} per call)",
            (GSO_MAX_BYTES / len).clamp(1, BATCH)
        )
    } else {
        let why = match (mode, &refused) {
            (SendMode::PerDatagram, _) => " (--no-gso)".to_string(),
            (_, Some(e)) => format!(" (UDP_SEGMENT refused: {e})"),
            _ => String::new(),
        };
        format!("sendmmsg, one datagram per message{why}")
    };
    Ok(UdpReport {
        datagrams: seq,
        io_method: Some(io_method),
        datagrams_per_call: (calls > 0).then(|| seq as f64 / calls as f64),
        ..UdpReport::default()
    })
}

/// Asks the kernel to hand this socket coalesced buffers (`UDP_GRO`); false where it cannot.
/// Set when the socket is bound, before the peer is told to send: a datagram queued before the
/// option is set stays a single datagram, so a fast sender on a loaded host would otherwise
/// race the receiver's setup (seen in CI: 2000 datagrams, none coalesced).
pub(crate) fn enable_gro(sock: &UdpSocket) -> bool {
    socket_options::set_udp_gro(sock, true).is_ok()
}

/// Receives datagrams until `stop`, or until the peer's senders are done (`peer_done`) and the
/// socket has been quiet for one read timeout (the drain). The socket's read timeout must be
/// short (the engine sets 50 ms). `last_arrival` is when the last batch came, so that the
/// drain does not count in the receiver's time.
pub(crate) fn receive(
    sock: &UdpSocket,
    len: usize,
    tag: u64,
    stop: &AtomicBool,
    peer_done: &AtomicBool,
    c: &Counters,
    last_arrival: &mut Option<Instant>,
) -> io::Result<UdpReport> {
    let timestamps = crate::sockopt::enable_rx_timestamps(sock).is_ok();
    // Accept coalesced buffers (a GSO sender on loopback, GRO on a NIC): one receive then
    // carries many datagrams, split below by the segment size the kernel reports.
    let gro = enable_gro(sock);
    // Slots start on cache lines: the kernel's copy into a misaligned buffer costs more.
    let slot = if gro {
        GSO_MAX_BYTES + 1
    } else {
        len.max(HEADER) + 1
    }
    .next_multiple_of(64);
    let control = if timestamps || gro { CONTROL_SLOT } else { 0 };
    let mut batch = Batch::new(BATCH, slot, &vec![0u8; slot], control);
    let mut tally = Tally::new(tag);
    let mut calls = 0u64;
    let mut done_at: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if peer_done.load(Ordering::Relaxed) {
            let t = *done_at.get_or_insert_with(Instant::now);
            if t.elapsed() > Duration::from_secs(2) {
                break;
            }
        }
        let n = match batch.receive(sock, libc::MSG_WAITFORONE) {
            Ok(n) => n,
            Err(e) => match e.raw_os_error() {
                Some(libc::EAGAIN | libc::ETIMEDOUT) => {
                    if done_at.is_some() {
                        break;
                    }
                    continue;
                }
                Some(libc::EINTR | libc::ECONNREFUSED) => continue,
                _ => return Err(e),
            },
        };
        calls += 1;
        *last_arrival = Some(Instant::now());
        let batch_ns = realtime_ns();
        for i in 0..n {
            let (whole, control) = batch.received(i);
            let (stamp, segment) = control_messages(control);
            tally.buffer(whole, segment, stamp.unwrap_or(batch_ns), stamp.is_some());
        }
        c.publish(tally.bytes, calls);
        c.datagrams.store(tally.seqs.unique(), Ordering::Relaxed);
    }
    let mut report = tally.report();
    report.io_method = Some(
        if gro {
            "recvmmsg with UDP_GRO"
        } else {
            "recvmmsg"
        }
        .into(),
    );
    report.datagrams_per_call = (calls > 0)
        .then(|| (report.datagrams + report.duplicates.unwrap_or(0)) as f64 / calls as f64);
    Ok(report)
}

/// The receiver's per-datagram accounting, one received buffer at a time.
#[doc(hidden)]
pub struct Tally {
    tag: u64,
    seqs: SequenceTracker,
    jitter: Jitter,
    #[doc(hidden)]
    pub bytes: u64,
    kernel_stamps: u64,
    coalesced: u64,
}

impl Tally {
    #[doc(hidden)]
    #[inline]
    pub fn new(tag: u64) -> Tally {
        Tally {
            tag,
            seqs: SequenceTracker::new(),
            jitter: Jitter::default(),
            bytes: 0,
            kernel_stamps: 0,
            coalesced: 0,
        }
    }

    /// Counts one received buffer: a single datagram, or with `UDP_GRO` several back to back,
    /// each `segment` bytes long but the last. Every datagram in it is recorded on its own
    /// (sequence number, send time); they share the buffer's arrival time `arrival_ns`, from
    /// the kernel when `kernel_stamp`. Datagrams without this session's tag are skipped.
    #[doc(hidden)]
    #[inline]
    pub fn buffer(
        &mut self,
        whole: &[u8],
        segment: Option<usize>,
        arrival_ns: u64,
        kernel_stamp: bool,
    ) {
        let segment = segment.filter(|&s| s > 0).unwrap_or(whole.len().max(1));
        let coalesced = whole.len() > segment;
        for d in whole.chunks(segment) {
            let Some((t, seq, sent_ns)) = read_header(d) else {
                continue;
            };
            if t != self.tag {
                continue;
            }
            self.bytes += d.len() as u64;
            self.seqs.record(seq);
            self.kernel_stamps += u64::from(kernel_stamp);
            self.coalesced += u64::from(coalesced);
            self.jitter
                .record((arrival_ns as f64 - sent_ns as f64) / 1e9);
        }
    }

    #[doc(hidden)]
    #[inline]
    pub fn report(&self) -> UdpReport {
        let seqs = &self.seqs;
        let lost = seqs.lost(None);
        let arrivals = seqs.unique() + seqs.duplicates();
        UdpReport {
            datagrams: seqs.unique(),
            lost: Some(lost),
            lost_percent: percent(lost, seqs.unique() + lost),
            duplicates: Some(seqs.duplicates()),
            out_of_order: Some(seqs.out_of_order()),
            jitter_seconds: Some(self.jitter.seconds()),
            clock: Some(
                if self.kernel_stamps > 0 && self.kernel_stamps == arrivals {
                    "kernel receive timestamps (SO_TIMESTAMPNS), CLOCK_REALTIME".into()
                } else {
                    "user-space receive time per batch, CLOCK_REALTIME".into()
                },
            ),
            coalesced_datagrams: Some(self.coalesced),
            ..UdpReport::default()
        }
    }
}

/// `part` of `whole` in percent, `None` for an empty whole.
pub fn percent(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 * 100.0 / whole as f64)
}

/// A received message's `SCM_TIMESTAMPNS` (nanoseconds) and `UDP_GRO` segment size.
fn control_messages(control: &[u8]) -> (Option<u64>, Option<usize>) {
    let (mut stamp, mut segment) = (None, None);
    for c in cmsg::messages(control) {
        if c.level == libc::SOL_SOCKET && c.kind == libc::SCM_TIMESTAMPNS {
            if let Some((sec, nsec)) = cmsg::timespec(c.data, 0) {
                stamp = Some(sec as u64 * 1_000_000_000 + nsec as u64);
            }
        } else if c.level == SOL_UDP && c.kind == UDP_GRO {
            segment = cmsg::int(c.data).and_then(|size| usize::try_from(size).ok());
        }
    }
    (stamp, segment)
}
