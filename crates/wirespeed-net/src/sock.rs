//! Socket options and kernel counters: what was asked, what was granted, what the kernel saw.
//!
//! `TCP_INFO` is read as a typed view over the bytes the kernel returns (linux/include/uapi/
//! linux/tcp.h): fields are read by offset only when the returned length covers them, so an
//! older kernel yields `None` for newer fields instead of garbage.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use crate::report::{CpuTime, SocketReport, TcpInfoReport};
use crate::spec::TestSpec;

fn setsockopt_bytes(fd: RawFd, level: i32, name: i32, value: &[u8]) -> io::Result<()> {
    // SAFETY: the pointer and length describe `value`, which outlives the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn setsockopt_int(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    setsockopt_bytes(fd, level, name, &value.to_ne_bytes())
}

fn getsockopt_bytes(fd: RawFd, level: i32, name: i32, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `buf` and updates `len`.
    let rc = unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr().cast(), &mut len) };
    if rc == 0 {
        Ok(len as usize)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn getsockopt_int(fd: RawFd, level: i32, name: i32) -> io::Result<i32> {
    let mut b = [0u8; 4];
    getsockopt_bytes(fd, level, name, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

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
pub(crate) fn set_window_clamp(fd: &impl AsRawFd, bytes: u64) {
    let _ = setsockopt_int(
        fd.as_raw_fd(),
        libc::IPPROTO_TCP,
        libc::TCP_WINDOW_CLAMP,
        i32::try_from(bytes).unwrap_or(i32::MAX),
    );
}

/// Applies the spec's options to a socket: `-w` before connect/listen so that the window scale
/// is negotiated for it, `-M`, `--nodelay`, `-C`.
pub fn apply_options(fd: &impl AsRawFd, spec: &TestSpec, tcp: bool) -> Result<(), OptionError> {
    let fd = fd.as_raw_fd();
    let wrap = |option: String| move |source| OptionError { option, source };
    if let Some(w) = spec.window_bytes {
        let w = i32::try_from(w).unwrap_or(i32::MAX);
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, w)
            .map_err(wrap(format!("-w {w}")))?;
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, w)
            .map_err(wrap(format!("-w {w}")))?;
    }
    if let Some(b) = spec.send_buffer_bytes {
        let b = i32::try_from(b).unwrap_or(i32::MAX);
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, b)
            .map_err(wrap(format!("send buffer {b}")))?;
    }
    if let Some(b) = spec.receive_buffer_bytes {
        let b = i32::try_from(b).unwrap_or(i32::MAX);
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, b)
            .map_err(wrap(format!("receive buffer {b}")))?;
        if tcp {
            // The window a buffer yields depends on the kernel's truesize ratio; the clamp makes
            // it exactly the buffer asked for (seed 004's "N packets" of window).
            setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, b)
                .map_err(wrap(format!("TCP_WINDOW_CLAMP {b}")))?;
        }
    }
    if !tcp {
        if spec.window_bytes.is_none() && spec.receive_buffer_bytes.is_none() {
            // Small datagrams cost ~700 bytes of truesize each: the default 208 KiB holds only a
            // few hundred, so a receiver that is descheduled for a millisecond drops. Ask for
            // more (the kernel clamps to net.core.rmem_max; the granted size is reported).
            let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, UDP_DEFAULT_RCVBUF);
        }
        return Ok(());
    }
    if let Some(mss) = spec.mss_bytes {
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss as i32)
            .map_err(wrap(format!("-M {mss}")))?;
    }
    if spec.nodelay {
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
            .map_err(wrap("--nodelay".into()))?;
    }
    if let Some(cc) = &spec.congestion {
        setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_bytes()).map_err(
            wrap(format!(
                "-C {cc} (see /proc/sys/net/ipv4/tcp_available_congestion_control)"
            )),
        )?;
    }
    Ok(())
}

/// The receive buffer a UDP socket asks for when `-w` is not given.
pub const UDP_DEFAULT_RCVBUF: i32 = 4 << 20;

/// Sets `SO_SNDTIMEO` and `SO_RCVTIMEO`, so that a silent peer cannot hold a thread forever.
pub fn set_timeouts(fd: &impl AsRawFd, timeout: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: timeval is plain old data.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&tv as *const libc::timeval).cast::<u8>(),
            mem::size_of_val(&tv),
        )
    };
    setsockopt_bytes(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDTIMEO, bytes)?;
    setsockopt_bytes(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVTIMEO, bytes)
}

/// Asks for kernel receive timestamps on a UDP socket (`SO_TIMESTAMPNS`).
pub(crate) fn enable_rx_timestamps(fd: &impl AsRawFd) -> io::Result<()> {
    setsockopt_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// The congestion control a TCP socket uses.
pub fn congestion(fd: &impl AsRawFd) -> Option<String> {
    let mut b = [0u8; 16];
    let n = getsockopt_bytes(
        fd.as_raw_fd(),
        libc::IPPROTO_TCP,
        libc::TCP_CONGESTION,
        &mut b,
    )
    .ok()?;
    let name = &b[..n];
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Socket facts at the end of a test.
pub fn socket_report(
    fd: &impl AsRawFd,
    spec: &TestSpec,
    tcp: bool,
    local: String,
    peer: String,
) -> SocketReport {
    let raw = fd.as_raw_fd();
    let granted = |name| getsockopt_int(raw, libc::SOL_SOCKET, name).map_or(0, |v| v.max(0) as u64);
    SocketReport {
        buffer_requested_bytes: spec.window_bytes,
        send_buffer_granted_bytes: granted(libc::SO_SNDBUF),
        receive_buffer_granted_bytes: granted(libc::SO_RCVBUF),
        mss_requested_bytes: spec.mss_bytes,
        congestion: if tcp { congestion(fd) } else { None },
        local_address: local,
        peer_address: peer,
        cpu: current_cpu(),
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
pub fn tcp_info(fd: &impl AsRawFd) -> Option<TcpInfoReport> {
    let mut buf = [0u8; 512];
    let n = getsockopt_bytes(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf).ok()?;
    TcpInfoView::new_checked(&buf[..n]).map(|v| v.report())
}

/// CPU time of the calling thread (`getrusage(RUSAGE_THREAD)`).
pub fn thread_cpu() -> CpuTime {
    // SAFETY: rusage is plain old data and getrusage fills it.
    let mut ru: libc::rusage = unsafe { mem::zeroed() };
    // SAFETY: a valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    CpuTime {
        user_seconds: secs(ru.ru_utime),
        system_seconds: secs(ru.ru_stime),
    }
}

/// The CPU the calling thread runs on.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// The CPUs this process may run on (its affinity mask, as `taskset -p` shows it), lowest
/// first; `-A` names one of them or nothing.
pub fn usable_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data; the kernel fills at most its size; CPU_ISSET reads
    // inside it for every index below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = mem::zeroed();
        if libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
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
    // SAFETY: cpu_set_t is plain old data; CPU_SET stays inside it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
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
