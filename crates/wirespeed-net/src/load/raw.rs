//! Raw Ethernet generation (root): frames addressed to the sender's own MAC, the seed's way.
//!
//! Boggs, Mogul and Kent's generators "addressed [their] packets to [themselves], and disabled
//! [their] receiver" (seed 000 §3.4): no peer has to keep up, no address has to be resolved,
//! and every frame still crosses the medium. Here an `AF_PACKET` socket bound to the interface
//! with protocol 0 (it receives nothing: the receiver is off) sends frames of the dealt lengths
//! (header and data; the device adds the FCS) with destination and source the interface's own
//! address and the IEEE local experimental EtherType 0x88B5.
//!
//! Keeping a station backlogged takes few system calls per frame: `PACKET_QDISC_BYPASS` hands
//! frames straight to the driver, `sendmmsg` sends a batch of reusable buffers per call, and a
//! full device ring answers `ENOBUFS` (the frame was not taken), on which the generator waits a
//! moment and offers the same frame again, as the seed's user process waited for a free buffer
//! (§3.3, figure 3-2). Only frames the device took are counted.
//!
//! Transmission delays come from the socket's error queue ([`super::tstamp`]): each stamped
//! frame comes back with its stamp, and the frame's own sequence number (after the test
//! header) says which send it was, whatever the kernel's counters do. A frame in a batch starts
//! when the one before it was stamped, so a batch does not charge its first frames' hand-off
//! to the last.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::time::ClockId;
use socket2::{Domain, Socket, Type};
use wirespeed_model::load::{Dealer, DelaySource, GENERATOR_HEADER_BYTES, LoadCounters};

use super::generator::{IN_WINDOW, write_header};
use super::tstamp::{self, Choice, PhcClock};
use super::{LoadReport, LoadTest, Pacer, clock_ns, monotonic_ns, sleep_until};
use crate::sys::mmsg::FrameBatch;
use crate::sys::{netdevice, packet, socket_options};

/// IEEE 802 local experimental EtherType 1: never a real protocol on anyone's network.
pub const ETHERTYPE: u16 = 0x88B5;
/// Ethernet header: destination, source, type.
pub const ETHERNET_HEADER_BYTES: usize = 14;
/// Where the frame's sequence number sits: after the Ethernet and the test header.
const SEQ_AT: usize = ETHERNET_HEADER_BYTES + GENERATOR_HEADER_BYTES;
/// The shortest frame that carries the headers and the sequence number.
pub const MIN_RAW_FRAME_BYTES: usize = SEQ_AT + 8;
/// Frames per `sendmmsg` when saturating.
const BATCH: usize = 32;
/// Send records kept for matching stamps.
const RING: usize = 1 << 16;
/// How long to wait when the device's ring is full before offering the frame again: the
/// first wait, and the longest after consecutive refusals of every frame.
#[doc(hidden)]
pub const FULL_WAIT: Duration = Duration::from_micros(100);
#[doc(hidden)]
pub const FULL_WAIT_MAX: Duration = Duration::from_millis(1);

/// The wait after a send that left frames behind: `FULL_WAIT` after a send the device took
/// some of (it drains about as fast as it is offered), twice the previous wait after a send it
/// took none of, up to `FULL_WAIT_MAX`. On a shared medium each of N stations drains at 1/N of
/// the rate: 24 generators of 64-byte frames each woke 10,000 times a second to be refused
/// (250,000 refusals in 4.5 s), CPU the medium's own senders then lacked (bench/RESULTS.md,
/// issue 20 part B). A 1 ms wait is 14 of a station's 64-byte frames at 10 Mbit/s alone,
/// less than its device ring and queue hold (15 each).
#[doc(hidden)]
#[inline]
pub fn next_full_wait(previous: Duration, taken: usize) -> Duration {
    if taken > 0 {
        FULL_WAIT
    } else {
        (previous * 2).clamp(FULL_WAIT, FULL_WAIT_MAX)
    }
}

/// Why a raw generator cannot start on this host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RawError {
    /// Not root (no CAP_NET_RAW).
    #[error(
        "raw Ethernet frames need root (CAP_NET_RAW) on the agent: run wirespeed serve as root, or leave out --raw"
    )]
    NotPermitted,
    /// No interface of that name.
    #[error(
        "no interface {0:?} on the agent's host (ip link lists them): name one with --raw IFACE"
    )]
    NoInterface(String),
    /// A frame longer than the interface carries.
    #[error(
        "a {length}-byte frame exceeds {interface}'s MTU of {mtu} bytes (+14 of header): use shorter --lengths with --raw"
    )]
    TooLong {
        /// The interface.
        interface: String,
        /// Its MTU.
        mtu: u32,
        /// The longest dealt length.
        length: u32,
    },
    /// A frame too short for the headers.
    #[error(
        "a {0}-byte frame cannot carry the test's headers: --raw needs {MIN_RAW_FRAME_BYTES} bytes or more"
    )]
    TooShort(u32),
    /// Anything else the OS said.
    #[error("raw socket on {interface}: {source}")]
    Io {
        /// The interface.
        interface: String,
        /// The error.
        source: io::Error,
    },
}

/// An `AF_PACKET` socket bound to one interface, its receiver off.
pub struct RawSender {
    fd: Socket,
    /// The interface.
    pub interface: String,
    /// Its hardware address: destination and source of every frame.
    pub mac: [u8; 6],
    /// Its MTU.
    pub mtu: u32,
}

impl RawSender {
    /// Opens and binds the socket; [`RawError`] says what is missing.
    pub fn open(interface: &str) -> Result<RawSender, RawError> {
        let io_err = |source| RawError::Io {
            interface: interface.to_string(),
            source,
        };
        tstamp::check_name(interface).map_err(|_| RawError::NoInterface(interface.into()))?;
        let Some(index) = netdevice::index(interface) else {
            return Err(RawError::NoInterface(interface.into()));
        };
        // Protocol 0: the socket sends but is handed no received frame.
        let fd =
            Socket::new(Domain::PACKET, Type::RAW, None).map_err(|e| match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => RawError::NotPermitted,
                _ => io_err(e),
            })?;
        packet::bind_to_interface(&fd, index).map_err(io_err)?;
        // Without the bypass frames still go, through the qdisc.
        let _ = socket_options::set_packet_qdisc_bypass(&fd);
        let mac = netdevice::hardware_address(&fd, interface).map_err(io_err)?;
        let mtu = netdevice::mtu(&fd, interface).map_err(io_err)?;
        Ok(RawSender {
            fd,
            interface: interface.to_string(),
            mac,
            mtu,
        })
    }

    /// Checks that every length of the test fits this interface.
    pub fn check(&self, longest: u32, shortest: u32) -> Result<(), RawError> {
        if (shortest as usize) < MIN_RAW_FRAME_BYTES {
            return Err(RawError::TooShort(shortest));
        }
        if u64::from(longest) > u64::from(self.mtu) + ETHERNET_HEADER_BYTES as u64 {
            return Err(RawError::TooLong {
                interface: self.interface.clone(),
                mtu: self.mtu,
                length: longest,
            });
        }
        Ok(())
    }

    /// Writes the Ethernet header (to and from this interface) and the test header.
    fn frame_template(&self, buf: &mut [u8], tag: u64, host: u32) {
        write_frame_headers(buf, self.mac, tag, host, 0, 0);
    }
}

impl AsFd for RawSender {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Where a frame's flags word sits.
const FLAGS_AT: usize = ETHERNET_HEADER_BYTES + 12;

#[derive(Clone, Copy)]
struct Slot {
    seq: u64,
    sent_realtime_ns: u64,
    batch: u64,
    stamp_ns: u64,
    in_window: bool,
}

/// Reads one stamped frame from the error queue: `(sequence, stamp ns)`, the stamp software
/// (`hardware` false) or raw hardware.
fn read_stamp(fd: BorrowedFd<'_>, tag: u64, hardware: bool) -> Option<(u64, u64)> {
    let mut data = [0u8; 128];
    let stamp = tstamp::read_tx_stamp(fd, &mut data)?;
    let seq = frame_sequence(&data[..stamp.len], tag)?;
    let ns = if hardware {
        stamp.hardware_ns
    } else {
        stamp.software_ns
    };
    // A frame stamped only by the other clock (a software stamp when hardware was asked).
    (ns > 0).then_some((seq, ns))
}

/// The sequence number of a frame of test `tag` as the error queue returns it: the frame comes
/// back with its stamp, starting wherever the kernel starts it (at the Ethernet header for a
/// packet socket), so the test header is found by its tag. `None` for anything else.
pub fn frame_sequence(bytes: &[u8], tag: u64) -> Option<u64> {
    let at = bytes.windows(8).position(|w| w == tag.to_be_bytes())?;
    let seq_at = at + GENERATOR_HEADER_BYTES;
    Some(u64::from_be_bytes(
        bytes.get(seq_at..seq_at + 8)?.try_into().ok()?,
    ))
}

/// Writes the Ethernet header, the test header and the sequence number of one frame: the
/// layout [`frame_sequence`] reads back.
pub fn write_frame_headers(
    buf: &mut [u8],
    mac: [u8; 6],
    tag: u64,
    host: u32,
    flags: u32,
    seq: u64,
) {
    buf[..6].copy_from_slice(&mac);
    buf[6..12].copy_from_slice(&mac);
    buf[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    write_header(&mut buf[ETHERNET_HEADER_BYTES..], tag, host, flags);
    buf[SEQ_AT..SEQ_AT + 8].copy_from_slice(&seq.to_be_bytes());
}

/// The stamping this generator got: its source, the hardware clock if any, and the sentence.
struct Stamping {
    source: DelaySource,
    phc: Option<PhcClock>,
    note: String,
}

fn stamping(sender: &RawSender) -> Stamping {
    let info = tstamp::ts_info(sender, &sender.interface);
    let mut note = match tstamp::choose(&sender.interface, &info) {
        Choice::Hardware { phc } => {
            let ready = tstamp::enable_hardware_tx(sender, &sender.interface)
                .and_then(|()| PhcClock::open(phc));
            match ready {
                Ok(clock) => {
                    if let Some(source) = tstamp::enable_on_socket(sender, true) {
                        let note = format!(
                            "{}: hardware transmit stamps, clock /dev/ptp{phc} (offset to CLOCK_REALTIME {} ns)",
                            sender.interface, clock.offset_ns
                        );
                        return Stamping {
                            source,
                            phc: Some(clock),
                            note,
                        };
                    }
                    format!(
                        "{}: hardware stamps refused by the socket; software stamps",
                        sender.interface
                    )
                }
                Err(e) => format!(
                    "{}: hardware stamps could not be enabled ({e}); software stamps",
                    sender.interface
                ),
            }
        }
        Choice::Software(why) => why,
    };
    match tstamp::enable_on_socket(sender, false) {
        Some(source) => Stamping {
            source,
            phc: None,
            note,
        },
        None => {
            note.push_str("; SO_TIMESTAMPING refused: delays around the send call");
            Stamping {
                source: DelaySource::AroundSendCall,
                phc: None,
                note,
            }
        }
    }
}

/// Transmits one test on `sender`: frames to itself from the scheduled start of transmission
/// until its end (or `stop`); counts what the device took in the window.
pub fn transmit(
    sender: &RawSender,
    test: &LoadTest,
    start_at_ns: u64,
    stop: &AtomicBool,
) -> io::Result<LoadReport> {
    let fd = sender.as_fd();
    let s = test.schedule;
    let (tx0, tx1) = s.transmit_span_ns();
    let (w0, w1) = s.window_ns();
    let stopped = || stop.load(Ordering::Relaxed);
    let stamps = stamping(sender);
    let stamped = stamps.source != DelaySource::AroundSendCall;
    let hardware = stamps.phc.is_some();
    let phc_offset = stamps.phc.as_ref().map_or(0, |c| c.offset_ns);
    let batch_max = if test.rate_bits_per_second.is_some() {
        1
    } else {
        BATCH
    };
    let longest = test.deck.cards.iter().copied().max().unwrap_or(0) as usize;
    let mut buffers = vec![vec![0u8; longest.max(MIN_RAW_FRAME_BYTES)]; batch_max];
    for b in &mut buffers {
        sender.frame_template(b, test.tag, test.host);
    }
    let mut lengths = vec![0usize; batch_max];
    let mut frames = FrameBatch::new(batch_max);
    let mut dealer = Dealer::new(&test.deck, test.seed);
    let mut ring = vec![
        Slot {
            seq: u64::MAX,
            sent_realtime_ns: 0,
            batch: 0,
            stamp_ns: 0,
            in_window: false,
        };
        RING
    ];
    let mut counters = LoadCounters::default();
    let drain = |ring: &mut [Slot], counters: &mut LoadCounters, max: usize| {
        for _ in 0..max {
            let Some((seq, raw_stamp)) = read_stamp(fd, test.tag, hardware) else {
                return;
            };
            let stamp = (raw_stamp as i64 - phc_offset).max(0) as u64;
            let i = (seq as usize) % RING;
            if ring[i].seq != seq {
                continue;
            }
            ring[i].stamp_ns = stamp;
            let slot = ring[i];
            let prev = ring[(seq.wrapping_sub(1) as usize) % RING];
            let start = if prev.seq == seq.wrapping_sub(1) && prev.batch == slot.batch {
                slot.sent_realtime_ns.max(prev.stamp_ns)
            } else {
                slot.sent_realtime_ns
            };
            if slot.in_window && stamp >= start {
                counters.add_delay((stamp - start) as f64 * 1e-9);
            }
        }
    };
    // Validated schedules and bounded starts cannot overflow; saturating all the same.
    let (tx0, tx1) = (
        start_at_ns.saturating_add(tx0),
        start_at_ns.saturating_add(tx1),
    );
    sleep_until(tx0, &stopped);
    let mut seq: u64 = 0;
    let mut batch_id: u64 = 0;
    // Frames dealt but not yet taken by the device: buffers [pending_from..pending_to).
    let (mut pending_from, mut pending_to) = (0usize, 0usize);
    let mut first_send = None;
    let window = (
        start_at_ns.saturating_add(w0),
        start_at_ns.saturating_add(w1),
    );
    let mut pacer = Pacer::new(tx0, window);
    let mut full_wait = FULL_WAIT / 2;
    loop {
        let mut now = monotonic_ns();
        if now >= tx1 || stopped() {
            break;
        }
        if pending_from == pending_to {
            if let Some(rate) = test.rate_bits_per_second {
                let Some(slot) = pacer.wait(now, tx1, &stopped) else {
                    break;
                };
                now = slot;
                let len = dealer.deal();
                lengths[0] = len as usize;
                pacer.book(len, rate)?;
                pending_to = 1;
            } else {
                for l in lengths.iter_mut() {
                    *l = dealer.deal() as usize;
                }
                pending_to = batch_max;
            }
            pending_from = 0;
        }
        let in_window = (w0..w1).contains(&now.saturating_sub(start_at_ns));
        let flags = if in_window { IN_WINDOW } else { 0 };
        for (k, b) in buffers[pending_from..pending_to].iter_mut().enumerate() {
            b[FLAGS_AT..FLAGS_AT + 4].copy_from_slice(&flags.to_be_bytes());
            b[SEQ_AT..SEQ_AT + 8].copy_from_slice(&(seq + k as u64).to_be_bytes());
        }
        let prepared = frames.prepare(
            buffers[pending_from..pending_to]
                .iter()
                .zip(&lengths[pending_from..pending_to])
                .map(|(b, &len)| &b[..len]),
        );
        let before = if stamped {
            clock_ns(ClockId::Realtime)
        } else {
            monotonic_ns()
        };
        let want = pending_to - pending_from;
        let taken = prepared.send(fd).unwrap_or(0);
        if taken > 0 {
            first_send.get_or_insert(now);
            batch_id += 1;
        }
        for &len in &lengths[pending_from..pending_from + taken] {
            counters.packets_total += 1;
            if in_window {
                counters.add_packet(len as u64);
            }
            if stamped {
                ring[(seq as usize) % RING] = Slot {
                    seq,
                    sent_realtime_ns: before,
                    batch: batch_id,
                    stamp_ns: 0,
                    in_window,
                };
            } else if in_window {
                counters.add_delay((monotonic_ns() - before) as f64 * 1e-9 / taken as f64);
            }
            seq += 1;
        }
        pending_from += taken;
        if stamped {
            drain(&mut ring, &mut counters, taken + 1);
        }
        if taken < want {
            // The device did not take a frame: its ring is full (ENOBUFS) or it is down. Wait
            // and offer the same frame again; only what it takes is counted.
            counters.send_errors += 1;
            full_wait = next_full_wait(full_wait, taken);
            std::thread::sleep(full_wait);
        }
    }
    let ended_ns = monotonic_ns();
    if stamped {
        let until = monotonic_ns() + 20_000_000;
        while counters.delay_count < counters.packets && monotonic_ns() < until {
            drain(&mut ring, &mut counters, RING);
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
        delay_source: stamps.source,
        clock: "CLOCK_MONOTONIC".into(),
        start_lateness_s: lateness,
        skipped_in_window_s: skipped,
        sink: None,
        timestamping: Some(stamps.note),
        interface: Some(sender.interface.clone()),
        tos: None,
    })
}
