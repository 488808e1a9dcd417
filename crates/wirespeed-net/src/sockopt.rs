//! Socket options and kernel counters: what was asked, what was granted, what the kernel saw.
//!
//! `TCP_INFO` is read as a typed view over the bytes the kernel returns (linux/include/uapi/
//! linux/tcp.h): fields are read by offset only when the returned length covers them, so an
//! older kernel yields `None` for newer fields instead of garbage.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
use socket2::SockRef;

use crate::report::{CpuTime, SocketReport, TcpInfoReport};
use crate::spec::TestSpec;
use crate::sys::{rusage, socket_options};

/// Why a socket option could not be set.
#[derive(Debug, thiserror::Error)]
#[error("cannot set {option}: {source}")]
pub struct OptionError {
    /// The option and its value, as the user wrote it (`-C bbr`).
    pub option: String,
    /// The kernel's answer.
    pub source: io::Error,
}

/// Sets TCP_WINDOW_CLAMP to `bytes` again (see [`crate::tcp`]'s receiver: the kernel may have
/// replaced it); best effort.
pub(crate) fn set_window_clamp(fd: &impl AsFd, bytes: u64) {
    let _ = socket_options::set_tcp_window_clamp(fd, i32::try_from(bytes).unwrap_or(i32::MAX));
}

/// Applies the spec's options to a socket: `-w` before connect/listen so that the window scale
/// is negotiated for it, `-M`, `--nodelay`, `-C`.
pub fn apply_options(fd: &impl AsFd, spec: &TestSpec, tcp: bool) -> Result<(), OptionError> {
    let sock = SockRef::from(fd);
    let wrap = |option: String| move |source| OptionError { option, source };
    // Sizes are clamped to a C int, as the kernel reads them.
    let int = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    if let Some(w) = spec.window_bytes {
        let w = int(w);
        sock.set_send_buffer_size(w as usize)
            .map_err(wrap(format!("-w {w}")))?;
        sock.set_recv_buffer_size(w as usize)
            .map_err(wrap(format!("-w {w}")))?;
    }
    if let Some(b) = spec.send_buffer_bytes {
        let b = int(b);
        sock.set_send_buffer_size(b as usize)
            .map_err(wrap(format!("send buffer {b}")))?;
    }
    if let Some(b) = spec.receive_buffer_bytes {
        let b = int(b);
        sock.set_recv_buffer_size(b as usize)
            .map_err(wrap(format!("receive buffer {b}")))?;
        if tcp {
            // The window a buffer yields depends on the kernel's truesize ratio; the clamp makes
            // it exactly the buffer asked for (seed 004's "N packets" of window).
            socket_options::set_tcp_window_clamp(fd, b)
                .map_err(wrap(format!("TCP_WINDOW_CLAMP {b}")))?;
        }
    }
    if let Some(tos) = spec.tos {
        let option = if spec.mptcp && tcp {
            // MPTCP passes IP_TOS to its subflows, not IPV6_TCLASS (Linux 6.x): name that.
            format!(
                "-S 0x{tos:02x} with --mptcp (this kernel's Multipath TCP takes a TOS over IPv4 but may not take a traffic class over IPv6; test IPv4 or drop one of them)"
            )
        } else {
            format!("-S 0x{tos:02x}")
        };
        set_tos(fd, tos).map_err(wrap(option))?;
    }
    if !tcp {
        if spec.window_bytes.is_none() && spec.receive_buffer_bytes.is_none() {
            // Small datagrams cost ~700 bytes of truesize each: the default 208 KiB holds only a
            // few hundred, so a receiver that is descheduled for a millisecond drops. Ask for
            // more (the kernel clamps to net.core.rmem_max; the granted size is reported).
            let _ = sock.set_recv_buffer_size(UDP_DEFAULT_RCVBUF as usize);
        }
        return Ok(());
    }
    if let Some(mss) = spec.mss_bytes {
        sock.set_tcp_mss(mss).map_err(wrap(format!("-M {mss}")))?;
    }
    // Nagle exactly as asked, both ways: the agent accepts every connection with TCP_NODELAY
    // (its control messages are small) before it knows which are data connections, and an
    // agent that sends (`-R`, `--bidir`) must not send with it when `-N` was not given.
    if spec.nodelay || sock.tcp_nodelay().unwrap_or(false) {
        sock.set_tcp_nodelay(spec.nodelay)
            .map_err(wrap("--nodelay".into()))?;
    }
    if let Some(cc) = &spec.congestion {
        sock.set_tcp_congestion(cc.as_bytes())
            .map_err(wrap(format!(
                "-C {cc} (see /proc/sys/net/ipv4/tcp_available_congestion_control)"
            )))?;
    }
    Ok(())
}

/// The `SO_MAX_PACING_RATE` a TCP sender sets: no cap (all ones but one), but not the "unset"
/// value, so that the kernel paces the socket itself (Linux 4.13+, `tcp_internal_pacing`) at
/// its own pacing rate (2 x cwnd / srtt in slow start, 1.2 x in congestion avoidance) instead
/// of sending what each ACK frees at once. Measured through a 10 Gbit/s lab (issue 20,
/// bench/RESULTS.md): a sender that keeps its window full, as this one does, otherwise sends
/// the window freed by a batch of ACKs back to back into the path's queue, overflows a 1,000
/// frame queue well below the window the path holds, and leaves slow start early.
pub const PACING_UNCAPPED: u64 = u64::MAX - 1;

/// Whether a TCP sender to `peer` asks the kernel to pace it: everywhere but loopback, which
/// has no queue for a burst to overflow and whose figure is this host's own ceiling (which
/// pacing's timers can only lower).
pub fn paces_to(peer: std::net::IpAddr) -> bool {
    let loopback = match peer {
        std::net::IpAddr::V4(a) => a.is_loopback(),
        std::net::IpAddr::V6(a) => {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|m| m.is_loopback())
        }
    };
    !loopback
}

/// Whether a TCP sender of `spec` to `peer` asks the kernel to pace it: [`paces_to`] the peer,
/// unless the test asked for an unpaced sender (`--no-pacing`).
pub fn paces(spec: &TestSpec, peer: std::net::IpAddr) -> bool {
    !spec.no_pacing && paces_to(peer)
}

/// Turns the kernel's pacing on for a TCP sending socket ([`PACING_UNCAPPED`]).
pub fn enable_pacing(fd: &impl AsFd) -> io::Result<()> {
    socket_options::set_max_pacing_rate(fd, PACING_UNCAPPED)
}

/// How much a capped sender may have written but not yet sent, in time at its cap: without a
/// bound the kernel's autotuned send buffer (4 MiB here) fills at once and then drains at the
/// cap for seconds after `-t` (1.6 s at 20 Mbit/s, 6.7 s at 5 Mbit/s), which the receiver
/// counts and the agent's end-of-test limit cuts.
pub const CAPPED_UNSENT_SECONDS: f64 = 0.1;

/// The least unsent data a capped sender keeps queued, so that the kernel always has a few
/// segments to pace out between two writes.
const CAPPED_UNSENT_MIN_BYTES: u32 = 16 * 1024;

/// Caps a TCP sending socket at `bits_per_second` through the kernel's pacing (`tcp -b`,
/// iperf3's `--fq-rate`): the kernel spaces the segments so that the payload leaves at most at
/// that rate, whatever the window allows. Its unsent data is held to
/// [`CAPPED_UNSENT_SECONDS`] at the cap (`TCP_NOTSENT_LOWAT`, which blocking writes wait on
/// too), so that the test ends near its `-t`. The kernel counts bytes per second; a cap that
/// does not read back as set is an error, not a quietly uncapped test.
pub fn cap_pacing_rate(fd: &impl AsFd, bits_per_second: u64) -> io::Result<()> {
    let bytes = (bits_per_second / 8).max(1);
    let unsent = (bytes as f64 * CAPPED_UNSENT_SECONDS).min(f64::from(1u32 << 30)) as u32;
    SockRef::from(fd).set_tcp_notsent_lowat(unsent.max(CAPPED_UNSENT_MIN_BYTES))?;
    socket_options::set_max_pacing_rate(fd, bytes)?;
    match socket_options::max_pacing_rate(fd)? {
        got if got == bytes => Ok(()),
        got => Err(io::Error::other(format!(
            "asked for {bytes} bytes/s, the socket holds {got}"
        ))),
    }
}

/// The rate cap a socket's pacing holds, in bit/s: `None` when none is set (unset, or the
/// [`PACING_UNCAPPED`] that only turns pacing on).
pub fn pacing_cap(fd: &impl AsFd) -> Option<u64> {
    socket_options::max_pacing_rate(fd)
        .ok()
        .filter(|&r| r < PACING_UNCAPPED)
        .map(|r| r.saturating_mul(8))
}

/// The most bytes the kernel can hold between one TCP stream's sender and its reader: a full
/// send buffer and a full receive buffer at their largest (`tcp_wmem` and `tcp_rmem`'s third
/// field; 36 MiB where they cannot be read). What a sender's count may exceed the reader's by
/// when a test ends with the reader behind.
pub fn most_bytes_buffered() -> u64 {
    let most = |file: &str, otherwise: u64| {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.split_whitespace().nth(2)?.parse::<u64>().ok())
            .unwrap_or(otherwise)
    };
    most("/proc/sys/net/ipv4/tcp_wmem", 4 << 20) + most("/proc/sys/net/ipv4/tcp_rmem", 32 << 20)
}

/// Whether the kernel paces this socket on our asking (`SO_MAX_PACING_RATE` set).
pub fn pacing_enabled(fd: &impl AsFd) -> bool {
    socket_options::max_pacing_rate(fd).is_ok_and(|r| r != u64::MAX)
}

/// Sets the TOS byte (IPv4) or traffic class (IPv6) of the socket's packets. A v6 socket that
/// may carry v4-mapped traffic gets both.
pub fn set_tos(fd: &impl AsFd, tos: u8) -> io::Result<()> {
    let sock = SockRef::from(fd);
    if sock.domain()? == socket2::Domain::IPV6 {
        sock.set_tclass_v6(u32::from(tos))?;
        // Mapped IPv4 peers take the IPv4 option; a v6-only socket refuses it, harmlessly.
        let _ = sock.set_tos_v4(u32::from(tos));
        Ok(())
    } else {
        sock.set_tos_v4(u32::from(tos))
    }
}

/// The TOS byte or traffic class the socket's packets carry, as the kernel reads it back.
pub fn tos(fd: &impl AsFd) -> Option<u8> {
    let sock = SockRef::from(fd);
    let v = if sock.domain().ok()? == socket2::Domain::IPV6 {
        sock.tclass_v6().ok()?
    } else {
        sock.tos_v4().ok()?
    };
    u8::try_from(v).ok()
}

/// Whether a TCP connection runs Multipath TCP end to end (false when it fell back to TCP).
pub fn is_mptcp(fd: &impl AsFd) -> bool {
    socket_options::tcp_is_mptcp(fd).unwrap_or(false)
}

/// The receive buffer a UDP socket asks for when `-w` is not given.
pub const UDP_DEFAULT_RCVBUF: i32 = 4 << 20;

/// Sets `SO_SNDTIMEO` and `SO_RCVTIMEO`, so that a silent peer cannot hold a thread forever.
pub fn set_timeouts(fd: &impl AsFd, timeout: Duration) -> io::Result<()> {
    let sock = SockRef::from(fd);
    sock.set_write_timeout(Some(timeout))?;
    sock.set_read_timeout(Some(timeout))
}

/// Asks for kernel receive timestamps on a UDP socket (`SO_TIMESTAMPNS`).
pub(crate) fn enable_rx_timestamps(fd: &impl AsFd) -> io::Result<()> {
    socket_options::set_timestampns(fd)
}

/// The congestion control a TCP socket uses.
pub fn congestion(fd: &impl AsFd) -> Option<String> {
    let name = SockRef::from(fd).tcp_congestion().ok()?;
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Socket facts at the end of a test.
pub fn socket_report(
    fd: &impl AsFd,
    spec: &TestSpec,
    tcp: bool,
    local: String,
    peer: String,
) -> SocketReport {
    let sock = SockRef::from(fd);
    let granted = |size: io::Result<usize>| size.map_or(0, |v| v as u64);
    SocketReport {
        buffer_requested_bytes: spec.window_bytes,
        send_buffer_granted_bytes: granted(sock.send_buffer_size()),
        receive_buffer_granted_bytes: granted(sock.recv_buffer_size()),
        mss_requested_bytes: spec.mss_bytes,
        congestion: if tcp { congestion(fd) } else { None },
        local_address: local,
        peer_address: peer,
        cpu: current_cpu(),
        bound_device: sock
            .device()
            .ok()
            .flatten()
            .map(|d| String::from_utf8_lossy(&d).into_owned()),
        tos: spec.tos.and_then(|_| tos(fd)),
        mptcp: (tcp && spec.mptcp).then(|| is_mptcp(fd)),
        paced: tcp.then(|| pacing_enabled(fd)),
        max_pacing_rate_bits_per_second: if tcp { pacing_cap(fd) } else { None },
    }
}

/// Field offsets in `struct tcp_info`.
mod field {
    pub(super) const RETRANSMITS_TOTAL: usize = 100;
    pub(super) const SND_MSS: usize = 16;
    pub(super) const PMTU: usize = 60;
    pub(super) const RTT: usize = 68;
    pub(super) const RTTVAR: usize = 72;
    pub(super) const SND_CWND: usize = 80;
    pub(super) const PACING_RATE: usize = 104;
    pub(super) const NOTSENT_BYTES: usize = 144;
    pub(super) const MIN_RTT: usize = 148;
    pub(super) const DELIVERY_RATE: usize = 160;
    pub(super) const BUSY_TIME: usize = 168;
    pub(super) const RWND_LIMITED: usize = 176;
    pub(super) const SNDBUF_LIMITED: usize = 184;
    pub(super) const SND_WND: usize = 228;
}

/// The bytes of a `struct tcp_info`, as long as the kernel filled them.
pub struct TcpInfoView<'a>(&'a [u8]);

impl<'a> TcpInfoView<'a> {
    /// A view over what `getsockopt(TCP_INFO)` returned. Fewer than 104 bytes is not a TCP_INFO
    /// this code understands.
    pub fn new_checked(bytes: &'a [u8]) -> Option<TcpInfoView<'a>> {
        (bytes.len() >= 104).then_some(TcpInfoView(bytes))
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        Some(u32::from_ne_bytes(self.0.get(at..at + 4)?.try_into().ok()?))
    }

    fn u64_at(&self, at: usize) -> Option<u64> {
        Some(u64::from_ne_bytes(self.0.get(at..at + 8)?.try_into().ok()?))
    }

    /// The report's fields.
    pub fn report(&self) -> TcpInfoReport {
        let us = |v: u32| f64::from(v) / 1e6;
        let u = |at| self.u32_at(at).unwrap_or(0);
        TcpInfoReport {
            retransmits: u(field::RETRANSMITS_TOTAL),
            rtt_seconds: us(u(field::RTT)),
            rttvar_seconds: us(u(field::RTTVAR)),
            min_rtt_seconds: self.u32_at(field::MIN_RTT).map(us),
            cwnd_segments: u(field::SND_CWND),
            mss_bytes: u(field::SND_MSS),
            pmtu_bytes: u(field::PMTU),
            delivery_rate_bits_per_second: self
                .u64_at(field::DELIVERY_RATE)
                .map(|b| b as f64 * 8.0),
            pacing_rate_bits_per_second: self
                .u64_at(field::PACING_RATE)
                .filter(|&r| r != u64::MAX)
                .map(|b| b as f64 * 8.0),
            busy_seconds: self.u64_at(field::BUSY_TIME).map(|v| v as f64 / 1e6),
            rwnd_limited_seconds: self.u64_at(field::RWND_LIMITED).map(|v| v as f64 / 1e6),
            sndbuf_limited_seconds: self.u64_at(field::SNDBUF_LIMITED).map(|v| v as f64 / 1e6),
            peer_window_bytes: self.u32_at(field::SND_WND),
        }
    }
}

/// Reads `TCP_INFO` from a socket.
pub fn tcp_info(fd: &impl AsFd) -> Option<TcpInfoReport> {
    let mut buf = [0u8; 512];
    let n = socket_options::tcp_info(fd, &mut buf).ok()?;
    TcpInfoView::new_checked(&buf[..n]).map(|v| v.report())
}

/// A TCP socket's data written but not yet sent (`tcpi_notsent_bytes`, Linux 4.6) and its
/// sending MSS: whether the kernel still has a segment to send. `None` where the kernel does
/// not report it.
pub(crate) fn unsent_bytes(fd: &impl AsFd) -> Option<(u32, u32)> {
    let mut buf = [0u8; 512];
    let n = socket_options::tcp_info(fd, &mut buf).ok()?;
    let v = TcpInfoView::new_checked(&buf[..n])?;
    Some((v.u32_at(field::NOTSENT_BYTES)?, v.u32_at(field::SND_MSS)?))
}

/// CPU time of the calling thread (`getrusage(RUSAGE_THREAD)`).
pub fn thread_cpu() -> CpuTime {
    let (user_seconds, system_seconds) = rusage::thread_times();
    CpuTime {
        user_seconds,
        system_seconds,
    }
}

/// The CPU the calling thread runs on.
pub fn current_cpu() -> Option<u32> {
    u32::try_from(sched_getcpu()).ok()
}

/// The CPUs this process may run on (its affinity mask, as `taskset -p` shows it), lowest
/// first; `-A` names one of them or nothing.
pub fn usable_cpus() -> Vec<usize> {
    let Ok(set) = sched_getaffinity(None) else {
        return Vec::new();
    };
    (0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect()
}

/// `-A` placement for `who` ("this end", "the agent") that names a CPU this process cannot
/// run on: the sentence that says so, listing the ones it can.
pub fn cpu_refusal(cpu: usize, who: &str) -> Option<String> {
    let usable = usable_cpus();
    if usable.is_empty() || usable.contains(&cpu) {
        return None;
    }
    let list: Vec<String> = usable.iter().map(ToString::to_string).collect();
    Some(format!(
        "-A: CPU {cpu} is not one {who} can run on (CPUs {}): name one of them, e.g. -A {}",
        list.join(","),
        usable[0]
    ))
}

/// Pins the calling thread to one CPU (`-A`).
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= CpuSet::MAX_CPU {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_view_reads_fields_at_their_offsets() {
        let mut b = vec![0u8; 232];
        b[field::RTT..field::RTT + 4].copy_from_slice(&25u32.to_ne_bytes());
        b[field::SND_CWND..field::SND_CWND + 4].copy_from_slice(&10u32.to_ne_bytes());
        b[field::RETRANSMITS_TOTAL..field::RETRANSMITS_TOTAL + 4]
            .copy_from_slice(&3u32.to_ne_bytes());
        b[field::DELIVERY_RATE..field::DELIVERY_RATE + 8].copy_from_slice(&1000u64.to_ne_bytes());
        let r = TcpInfoView::new_checked(&b).unwrap().report();
        assert_eq!(r.rtt_seconds, 25e-6);
        assert_eq!(r.cwnd_segments, 10);
        assert_eq!(r.retransmits, 3);
        assert_eq!(r.delivery_rate_bits_per_second, Some(8000.0));
    }

    #[test]
    fn a_short_tcp_info_has_no_new_fields() {
        assert!(TcpInfoView::new_checked(&[0u8; 100]).is_none());
        let r = TcpInfoView::new_checked(&[0u8; 120]).unwrap().report();
        assert_eq!(r.delivery_rate_bits_per_second, None);
        assert_eq!(r.busy_seconds, None);
    }

    #[test]
    fn a_data_socket_has_nagle_as_asked_even_if_accepted_with_nodelay() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (s, _) = listener.accept().unwrap();
        // As the agent's accept path leaves every connection.
        s.set_nodelay(true).unwrap();
        apply_options(&s, &TestSpec::default(), true).unwrap();
        assert!(
            !s.nodelay().unwrap(),
            "without -N the data socket sends with Nagle"
        );
        let spec = TestSpec {
            nodelay: true,
            ..TestSpec::default()
        };
        apply_options(&s, &spec, true).unwrap();
        assert!(s.nodelay().unwrap(), "-N sets TCP_NODELAY");
    }

    #[test]
    fn senders_are_paced_toward_every_peer_but_loopback() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert!(paces_to(ip("198.18.0.2")));
        assert!(paces_to(ip("2001:2::2")));
        assert!(paces_to(ip("fe80::1")));
        assert!(!paces_to(ip("127.0.0.1")));
        assert!(!paces_to(ip("127.3.2.1")));
        assert!(!paces_to(ip("::1")));
        assert!(!paces_to(ip("::ffff:127.0.0.1")));
        assert!(paces_to(ip("::ffff:198.18.0.2")));
    }

    #[test]
    fn no_pacing_leaves_a_sender_unpaced_toward_any_peer() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let paced = TestSpec::default();
        let unpaced = TestSpec {
            no_pacing: true,
            ..TestSpec::default()
        };
        assert!(paces(&paced, ip("198.18.0.2")));
        assert!(!paces(&unpaced, ip("198.18.0.2")));
        assert!(!paces(&unpaced, ip("127.0.0.1")));
        // Sent to the agent only when asked, so an agent that predates it takes every other
        // test; an agent of this build reads it back.
        let text = serde_json::to_string(&paced).unwrap();
        assert!(!text.contains("no_pacing"), "{text}");
        let text = serde_json::to_string(&unpaced).unwrap();
        let back: TestSpec = serde_json::from_str(&text).unwrap();
        assert!(back.no_pacing);
    }

    #[test]
    fn a_tcp_sender_asks_the_kernel_to_pace_it_without_a_cap() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // A new socket: no cap, no pacing asked.
        assert!(!pacing_enabled(&s));
        enable_pacing(&s).unwrap();
        assert!(pacing_enabled(&s), "SO_MAX_PACING_RATE left unset");
        // Uncapped: a 64-bit kernel keeps the whole value (a 32-bit read would cap at 34 Gbit/s).
        assert_eq!(
            socket_options::max_pacing_rate(&s).unwrap(),
            PACING_UNCAPPED
        );
    }

    #[test]
    fn a_rate_cap_is_set_in_bytes_and_read_back_in_bits() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert_eq!(pacing_cap(&s), None, "a new socket has no cap");
        enable_pacing(&s).unwrap();
        assert_eq!(pacing_cap(&s), None, "pacing on is not a cap");
        cap_pacing_rate(&s, 5_000_000).unwrap();
        assert_eq!(socket_options::max_pacing_rate(&s).unwrap(), 625_000);
        assert_eq!(pacing_cap(&s), Some(5_000_000));
        // A tenth of a second at the cap may wait unsent.
        assert_eq!(SockRef::from(&s).tcp_notsent_lowat().unwrap(), 62_500);
        let r = socket_report(&s, &TestSpec::default(), true, String::new(), String::new());
        assert_eq!(r.max_pacing_rate_bits_per_second, Some(5_000_000));
        assert_eq!(r.paced, Some(true));
    }

    #[test]
    fn a_real_socket_reports_granted_buffers_and_tcp_info() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let spec = TestSpec {
            window_bytes: Some(100_000),
            ..TestSpec::default()
        };
        let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        apply_options(&s, &spec, true).unwrap();
        let r = socket_report(&s, &spec, true, String::new(), String::new());
        // Linux doubles the request (and clamps it to rmem_max/wmem_max).
        assert!(r.send_buffer_granted_bytes > 0);
        assert!(r.congestion.is_some());
        assert!(tcp_info(&s).unwrap().mss_bytes > 0);
        assert!(thread_cpu().total_seconds() >= 0.0);
    }
}
