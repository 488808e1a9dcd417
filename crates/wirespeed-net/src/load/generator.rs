//! The generator's data path: UDP datagrams of dealt lengths, saturating or paced, counted only
//! in the measured window; and the counting sink.
//!
//! The seed timed each packet "from beginning of first attempt to transmit a packet to the end
//! of its successful transmission" (§3.3). A host today hands the packet to the kernel; where
//! the kernel can say when the packet left for the device (`SO_TIMESTAMPING` with
//! `SOF_TIMESTAMPING_TX_SOFTWARE`, stamped by the driver's `skb_tx_timestamp`), the delay runs
//! from just before the send call to that stamp, both in `CLOCK_REALTIME`. Timestamps come back
//! on the socket's error queue tagged with a per-socket counter (`SOF_TIMESTAMPING_OPT_ID`),
//! matched here to a ring of send times; a stamp whose slot was overwritten is dropped rather
//! than guessed. Without timestamping, the delay is the time around the send call.

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::time::ClockId;
use wirespeed_model::load::{
    Dealer, DelaySource, GENERATOR_HEADER_BYTES, LoadCounters, MAX_FRAME_BYTES, udp_payload_bytes,
};

use super::sink::SinkBook;
use super::{LoadReport, LoadTest, Pacer, SinkCounts, clock_ns, monotonic_ns, sleep_until};

const RING: usize = 1 << 16;
/// Flag: the datagram or frame was sent in the measured window.
#[doc(hidden)]
pub const IN_WINDOW: u32 = 1;
/// Flag: the datagram carries the sending agent's consent nonce ([`super::consent`]).
#[doc(hidden)]
pub const CONSENT: u32 = 2;

/// Writes a datagram header: test tag, host, flags (big-endian).
pub fn write_header(buf: &mut [u8], tag: u64, host: u32, flags: u32) {
    buf[..8].copy_from_slice(&tag.to_be_bytes());
    buf[8..12].copy_from_slice(&host.to_be_bytes());
    buf[12..16].copy_from_slice(&flags.to_be_bytes());
}

/// Reads a datagram header: `(tag, host, flags)`, `None` if too short.
#[doc(hidden)]
#[inline]
pub fn read_header_flags(buf: &[u8]) -> Option<(u64, u32, u32)> {
    let h = buf.get(..GENERATOR_HEADER_BYTES)?;
    let tag = u64::from_be_bytes(h[..8].try_into().ok()?);
    let host = u32::from_be_bytes(h[8..12].try_into().ok()?);
    let flags = u32::from_be_bytes(h[12..16].try_into().ok()?);
    Some((tag, host, flags))
}

/// Reads a datagram header: `(tag, host, in_window)`, `None` if too short.
pub fn read_header(buf: &[u8]) -> Option<(u64, u32, bool)> {
    read_header_flags(buf).map(|(t, h, f)| (t, h, f & IN_WINDOW != 0))
}

fn enable_tx_timestamps(sock: &UdpSocket) -> bool {
    let flags: libc::c_uint = libc::SOF_TIMESTAMPING_TX_SOFTWARE
        | libc::SOF_TIMESTAMPING_SOFTWARE
        | libc::SOF_TIMESTAMPING_OPT_ID
        | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    crate::sys::socket_options::set_timestamping(sock, flags).is_ok()
}

/// One transmit timestamp from the error queue: `(id, software stamp ns)`.
fn read_tx_timestamp(fd: BorrowedFd<'_>) -> Option<(u32, u64)> {
    let stamp = super::tstamp::read_tx_stamp(fd, &mut [0u8; 64])?;
    Some((stamp.id?, Some(stamp.software_ns).filter(|&s| s > 0)?))
}

#[derive(Clone, Copy)]
struct Slot {
    id: u32,
    sent_realtime_ns: u64,
    in_window: bool,
}

/// Transmits one test on a connected socket: waits for the scheduled transmission, sends until
/// it ends (or `stop`), and returns what was counted in the window. `start_at_ns` is the common
/// start in `CLOCK_MONOTONIC`. Where `sock` is connected to is the caller's responsibility:
/// the agent connects it only to its own sink or a destination that consented
/// ([`super::consent`]).
pub fn transmit(
    sock: &UdpSocket,
    test: &LoadTest,
    start_at_ns: u64,
    stop: &AtomicBool,
) -> io::Result<LoadReport> {
    // A v4-mapped peer is reached over IPv4 (its headers are IPv4's).
    let ipv6 = sock.peer_addr()?.ip().to_canonical().is_ipv6();
    if let Some(tos) = test.tos {
        crate::sockopt::set_tos(sock, tos)?;
    }
    let fd = sock.as_fd();
    let mut buf = vec![0u8; udp_payload_bytes(MAX_FRAME_BYTES, false)];
    let mut dealer = Dealer::new(&test.deck, test.seed);
    let s = test.schedule;
    let (tx0, tx1) = s.transmit_span_ns();
    let (w0, w1) = s.window_ns();
    let stopped = || stop.load(Ordering::Relaxed);
    // Schedules are validated (no sum overflows) and starts bounded by the agent; saturating
    // all the same, so that no input can wrap a deadline round to the past.
    let (tx0, tx1) = (
        start_at_ns.saturating_add(tx0),
        start_at_ns.saturating_add(tx1),
    );
    // Timestamping starts after the consent nonces, so that the kernel's stamp counter
    // (SOF_TIMESTAMPING_OPT_ID, from 0 when enabled) counts the test's packets only.
    let timestamps = enable_tx_timestamps(sock);
    let source = if timestamps {
        DelaySource::KernelTxSoftware
    } else {
        DelaySource::AroundSendCall
    };
    sleep_until(tx0, &stopped);
    let mut counters = LoadCounters::default();
    let mut ring = vec![
        Slot {
            id: u32::MAX,
            sent_realtime_ns: 0,
            in_window: false,
        };
        RING
    ];
    let mut next_id: u32 = 0;
    let mut first_send = None;
    let window = (
        start_at_ns.saturating_add(w0),
        start_at_ns.saturating_add(w1),
    );
    let mut pacer = Pacer::new(tx0, window);
    // Reads up to `max` stamps from the error queue (each send queues one; reading one per send
    // and the backlog every 256 sends saves the system call that would find the queue empty).
    let drain = |ring: &[Slot], counters: &mut LoadCounters, max: usize| {
        for _ in 0..max {
            let Some((id, stamp)) = read_tx_timestamp(fd) else {
                return;
            };
            let slot = ring[id as usize % RING];
            if slot.id == id && slot.in_window && stamp >= slot.sent_realtime_ns {
                counters.add_delay((stamp - slot.sent_realtime_ns) as f64 * 1e-9);
            }
        }
    };
    loop {
        let mut now = monotonic_ns();
        if now >= tx1 || stopped() {
            break;
        }
        let len = dealer.deal();
        if let Some(rate) = test.rate_bits_per_second {
            let Some(slot) = pacer.wait(now, tx1, &stopped) else {
                break;
            };
            now = slot;
            pacer.book(len, rate)?;
        }
        let t = now.saturating_sub(start_at_ns);
        let in_window = (w0..w1).contains(&t);
        let payload = udp_payload_bytes(u64::from(len), ipv6);
        write_header(
            &mut buf,
            test.tag,
            test.host,
            if in_window { IN_WINDOW } else { 0 },
        );
        let before = if timestamps {
            clock_ns(ClockId::Realtime)
        } else {
            monotonic_ns()
        };
        match sock.send(&buf[..payload]) {
            Ok(_) => {
                first_send.get_or_insert(now);
                counters.packets_total += 1;
                if in_window {
                    counters.add_packet(u64::from(len));
                }
                if timestamps {
                    ring[next_id as usize % RING] = Slot {
                        id: next_id,
                        sent_realtime_ns: before,
                        in_window,
                    };
                    next_id = next_id.wrapping_add(1);
                    let backlog = if next_id.is_multiple_of(256) { RING } else { 1 };
                    drain(&ring, &mut counters, backlog);
                } else if in_window {
                    counters.add_delay((monotonic_ns() - before) as f64 * 1e-9);
                }
            }
            Err(_) => counters.send_errors += 1,
        }
    }
    let ended_ns = monotonic_ns();
    if timestamps {
        let until = monotonic_ns() + 20_000_000;
        while counters.delay_count < counters.packets && monotonic_ns() < until {
            drain(&ring, &mut counters, RING);
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let lateness = first_send.map_or(0.0, |f| (f.saturating_sub(tx0)) as f64 * 1e-9);
    let skipped = if test.rate_bits_per_second.is_some() {
        pacer.skipped_in_window_s(ended_ns)
    } else {
        0.0
    };
    Ok(LoadReport {
        counters,
        delay_source: source,
        clock: "CLOCK_MONOTONIC".into(),
        start_lateness_s: lateness,
        skipped_in_window_s: skipped,
        sink: None,
        timestamping: None,
        interface: None,
        // Read back, not echoed: the kernel's value is what the packets carried.
        tos: test.tos.and_then(|_| crate::sockopt::tos(sock)),
    })
}

/// Counts the datagrams arriving on `sock` in `book` until `stop`; the counts at the end.
pub fn count_sink(
    sock: &UdpSocket,
    mut book: SinkBook,
    stop: &AtomicBool,
) -> io::Result<SinkCounts> {
    sock.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => book.accept(&buf[..n], from),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(book.into_counts())
}

/// Takes in what is already queued on `sock` (at most `max` datagrams), without waiting: the
/// sink reads its consent nonces this way before the test starts.
#[doc(hidden)]
#[inline]
pub fn drain_sink(sock: &UdpSocket, book: &mut SinkBook, max: usize) -> io::Result<()> {
    let mut buf = vec![0u8; 65_536];
    sock.set_nonblocking(true)?;
    let mut result = Ok(());
    for _ in 0..max {
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => book.accept(&buf[..n], from),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    sock.set_nonblocking(false)?;
    result
}
