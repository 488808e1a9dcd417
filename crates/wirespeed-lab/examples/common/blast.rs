//! The UDP send loop shared by the lab's benchmarks (`lab_rates`, `lab_bench`): datagrams of a
//! given payload from one host of a two-host lab to the other, offered as fast as one thread
//! goes or paced at a frame rate, bounded in time and count; the receiver counts every
//! datagram (segment) it gets and the span between the first and the last.
//!
//! Two senders, to measure which one limits a small-frame test:
//! - `Sender::Mmsg`: `sendmmsg` of 64 datagrams per call, each datagram its own trip through
//!   the sender's stack and TAP (about 59,000 64-byte frames/s on this project's busy 2-core
//!   host, bench/RESULTS.md).
//! - `Sender::Gso`: UDP segmentation offload (`UDP_SEGMENT` with the payload as the segment
//!   size): one `send` of up to [`GSO_SEGMENTS`] payloads is one trip through the stack; over a
//!   TAP with USO the emulator reads it as one super-packet and charges the wire for each
//!   segment, a full 64-byte frame each with an 18-byte payload.
//!
//! The receiver turns on `UDP_GRO`, so that a run of segments the emulator writes whole (a USO
//! super-packet) is one `recvmsg`; it counts `ceil(len / gso_size)` datagrams for it. Its
//! buffer is raised (`SO_RCVBUFFORCE`, 16 MB) so that a slow reader is not the loss measured.

use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use wirespeed_lab::{Lab, sys};

/// Payload segments per GSO send (the kernel allows at most `UDP_MAX_SEGMENTS`, 64 on older
/// kernels, 128 on newer).
pub const GSO_SEGMENTS: usize = 64;
/// The most datagrams one blast sends, whatever its duration (bounds the loop by count).
const MAX_DATAGRAMS: u64 = 50_000_000;
const SOL_UDP: libc::c_int = 17;
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// How the sender hands datagrams to its stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// `sendmmsg`, 64 datagrams per call.
    Mmsg,
    /// `UDP_SEGMENT`, up to [`GSO_SEGMENTS`] datagrams per send.
    Gso,
}

impl Sender {
    pub fn name(self) -> &'static str {
        match self {
            Sender::Mmsg => "sendmmsg",
            Sender::Gso => "UDP GSO",
        }
    }
}

/// What one blast did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Blast {
    /// Datagrams the sender's stack took.
    pub sent: u64,
    /// Seconds the sender ran.
    pub send_seconds: f64,
    /// Sends refused (ENOBUFS, EAGAIN) and retried.
    pub refused: u64,
    /// Datagrams the receiver got.
    pub received: u64,
    /// Datagrams h2's own stack dropped on the way to the receiver (its devices' receive
    /// drops and UDP's receive-buffer errors, counted in its namespace, and the machine's
    /// input-backlog drops): what a starved receiver lost after the emulator forwarded them.
    pub receiver_drops: u64,
    /// Seconds between the receiver's first and last datagram.
    pub span: f64,
}

fn setsockopt_int(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> bool {
    // SAFETY: `v` lives across the call and its size is passed.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&raw const v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// Receives until 300 ms pass without a datagram; returns (datagrams, span in seconds).
fn receive(sock: &UdpSocket) -> (u64, f64) {
    let fd = sock.as_raw_fd();
    let mut buf = vec![0u8; 65_536];
    let mut control = [0u64; 16];
    let (mut n, mut first, mut last) = (0u64, None, Instant::now());
    loop {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: a zeroed msghdr is valid; it points at `iov` and `control`, which outlive
        // the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: `msg` is valid as built above.
        let len = unsafe { libc::recvmsg(fd, &raw mut msg, 0) };
        if len < 0 {
            break;
        }
        let len = len as usize;
        let mut gso_size = 0usize;
        // SAFETY: the CMSG_* walk stays within msg_controllen of `control`.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&raw const msg);
            while !c.is_null() {
                if (*c).cmsg_level == SOL_UDP && (*c).cmsg_type == UDP_GRO {
                    let mut v: libc::c_int = 0;
                    std::ptr::copy_nonoverlapping(
                        libc::CMSG_DATA(c),
                        (&raw mut v).cast::<u8>(),
                        std::mem::size_of::<libc::c_int>(),
                    );
                    gso_size = v.max(0) as usize;
                }
                c = libc::CMSG_NXTHDR(&raw const msg, c);
            }
        }
        first.get_or_insert_with(Instant::now);
        last = Instant::now();
        n += if gso_size > 0 {
            len.div_ceil(gso_size) as u64
        } else {
            1
        };
    }
    let span = first.map_or(1e-3, |f: Instant| (last - f).as_secs_f64().max(1e-3));
    (n, span)
}

/// Receive drops of this thread's network namespace: every device's `drop` column of
/// `/proc/thread-self/net/dev` plus UDP's `RcvbufErrors` (`/proc/self/net` would show the
/// process leader's namespace, not the one this thread entered).
fn stack_drops() -> u64 {
    let devices: u64 = std::fs::read_to_string("/proc/thread-self/net/dev")
        .unwrap_or_default()
        .lines()
        .skip(2)
        .filter_map(|l| {
            l.split_once(':')?
                .1
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()
        })
        .sum();
    let snmp = std::fs::read_to_string("/proc/thread-self/net/snmp").unwrap_or_default();
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let rcvbuf = match (udp.next(), udp.next()) {
        (Some(names), Some(values)) => names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(n, _)| *n == "RcvbufErrors")
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .unwrap_or(0),
        _ => 0,
    };
    devices + rcvbuf + softnet_drops()
}

/// Frames the kernel dropped at a CPU's input backlog (`/proc/net/softnet_stat`, second
/// column, hexadecimal): machine-wide, so a blast is charged with other traffic's drops too,
/// which makes a check that uses it lenient, never wrong about the emulator.
fn softnet_drops() -> u64 {
    std::fs::read_to_string("/proc/net/softnet_stat")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| u64::from_str_radix(l.split_whitespace().nth(1)?, 16).ok())
        .sum()
}

/// Sends `payload`-byte datagrams from h1 (198.18.0.1) to h2 (198.18.0.2) for `seconds` with
/// `sender`, as fast as it goes or at `rate` datagrams per second; the receiver in h2 counts
/// them.
pub fn udp_blast(
    lab: &Lab,
    sender: Sender,
    payload: usize,
    seconds: f64,
    rate: Option<f64>,
) -> Blast {
    let (tx, rx) = std::sync::mpsc::channel();
    let h2 = lab.namespace("h2").expect("a host h2").to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&h2, move || {
            let sock = UdpSocket::bind((Ipv4Addr::new(198, 18, 0, 2), 0)).unwrap();
            let fd = sock.as_raw_fd();
            setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20);
            setsockopt_int(fd, SOL_UDP, UDP_GRO, 1);
            sock.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            tx.send(sock.local_addr().unwrap().port()).unwrap();
            let before = stack_drops();
            let got = receive(&sock);
            (got, stack_drops().saturating_sub(before))
        })
        .unwrap()
    });
    let port = rx.recv().unwrap();
    let h1 = lab.namespace("h1").expect("a host h1").to_string();
    let mut blast =
        sys::in_namespace(&h1, move || send(sender, port, payload, seconds, rate)).unwrap();
    let ((received, span), receiver_drops) = receiver.join().unwrap();
    blast.received = received;
    blast.receiver_drops = receiver_drops;
    blast.span = span;
    blast
}

fn send(sender: Sender, port: u16, payload: usize, seconds: f64, rate: Option<f64>) -> Blast {
    let sock = UdpSocket::bind((Ipv4Addr::new(198, 18, 0, 1), 0)).unwrap();
    sock.connect((Ipv4Addr::new(198, 18, 0, 2), port)).unwrap();
    let fd = sock.as_raw_fd();
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 4 << 20);
    let per_call = match sender {
        Sender::Gso => {
            assert!(
                setsockopt_int(fd, SOL_UDP, UDP_SEGMENT, payload as libc::c_int),
                "UDP_SEGMENT is not available on this kernel"
            );
            GSO_SEGMENTS
        }
        Sender::Mmsg => 64,
    };
    let data = vec![0u8; payload * GSO_SEGMENTS];
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: payload,
    };
    // SAFETY: a zeroed mmsghdr is valid; each points at the one iovec above.
    let mut msgs: Vec<libc::mmsghdr> = (0..64)
        .map(|_| {
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = &raw mut iov;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let start = Instant::now();
    let mut blast = Blast::default();
    // Bounded by time and count.
    while blast.sent < MAX_DATAGRAMS {
        let elapsed = start.elapsed().as_secs_f64();
        if elapsed >= seconds {
            break;
        }
        let mut k = per_call;
        if let Some(rate) = rate {
            let allowed = (elapsed * rate) as u64;
            if allowed <= blast.sent {
                let wait = (blast.sent + 1) as f64 / rate - elapsed;
                if wait > 50e-6 {
                    std::thread::sleep(Duration::from_secs_f64(wait.min(0.01)));
                }
                continue;
            }
            k = ((allowed - blast.sent) as usize).min(per_call);
        }
        let taken = match sender {
            Sender::Gso => {
                // SAFETY: `data` holds at least k * payload bytes and outlives the call.
                let n = unsafe { libc::send(fd, data.as_ptr().cast(), k * payload, 0) };
                if n > 0 { k as u64 } else { 0 }
            }
            Sender::Mmsg => {
                // SAFETY: msgs holds 64 initialized headers whose buffers outlive the call.
                let n = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), k as libc::c_uint, 0) };
                n.max(0) as u64
            }
        };
        if taken == 0 {
            blast.refused += 1;
            std::thread::yield_now();
        }
        blast.sent += taken;
    }
    blast.send_seconds = start.elapsed().as_secs_f64();
    blast
}
