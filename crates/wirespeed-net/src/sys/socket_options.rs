//! Socket options that neither `socket2` nor `rustix` names, each behind its own safe function.
//!
//! Only named options are offered, never a generic `setsockopt`/`getsockopt`: for a few options
//! (`TCP_ZEROCOPY_RECEIVE`, packet rings) the value holds addresses the kernel writes through,
//! which no slice length can vouch for. Every option below takes or returns plain integers or
//! bytes, so a pointer and a length that describe a Rust value are all the kernel needs.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

// linux/udp.h: UDP generic segmentation offload (Linux 4.18) and receive coalescing (5.0).
/// `SOL_UDP`: the level of the UDP options and of their control messages.
pub(crate) const SOL_UDP: libc::c_int = 17;
/// `UDP_SEGMENT`.
const UDP_SEGMENT: libc::c_int = 103;
/// `UDP_GRO`, also the type of the control message that carries the segment size.
pub(crate) const UDP_GRO: libc::c_int = 104;
/// `SO_ZEROCOPY` (linux/socket.h, not in every libc build).
const SO_ZEROCOPY: libc::c_int = 60;
/// `ICMP_FILTER` of `<linux/icmp.h>`: a bit mask of ICMP types a raw socket does not receive.
const ICMP_FILTER: libc::c_int = 1;

/// `setsockopt` with `value`'s bytes as the option value.
fn set(fd: impl AsFd, level: i32, name: i32, value: &[u8]) -> io::Result<()> {
    // SAFETY: the pointer and length describe `value`, which outlives the call; the options
    // passed here read plain bytes only.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
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

fn set_int(fd: impl AsFd, level: i32, name: i32, value: libc::c_int) -> io::Result<()> {
    set(fd, level, name, &value.to_ne_bytes())
}

/// `getsockopt` into `buf`; the length the kernel wrote.
fn get(fd: impl AsFd, level: i32, name: i32, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `buf` and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok((len as usize).min(buf.len()))
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `TCP_WINDOW_CLAMP`: the largest window the socket advertises.
pub(crate) fn set_tcp_window_clamp(fd: impl AsFd, bytes: i32) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, bytes)
}

/// `TCP_IS_MPTCP` (linux/tcp.h, Linux 5.16): 1 on a Multipath TCP socket that has not fallen
/// back to plain TCP, 0 on a TCP socket or a fallen-back one.
const TCP_IS_MPTCP: libc::c_int = 43;

/// Whether the connection speaks Multipath TCP end to end (see [`TCP_IS_MPTCP`]).
pub(crate) fn tcp_is_mptcp(fd: impl AsFd) -> io::Result<bool> {
    let mut buf = [0u8; 4];
    let n = get(fd, libc::IPPROTO_TCP, TCP_IS_MPTCP, &mut buf)?;
    Ok(n == 4 && i32::from_ne_bytes(buf) != 0)
}

/// `TCP_INFO` into `buf`: the bytes of a `struct tcp_info` the kernel filled (as many as fit).
pub(crate) fn tcp_info(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    get(fd, libc::IPPROTO_TCP, libc::TCP_INFO, buf)
}

/// `SO_TIMESTAMPNS`: a `SCM_TIMESTAMPNS` receive stamp with every datagram.
pub(crate) fn set_timestampns(fd: impl AsFd) -> io::Result<()> {
    set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// `SO_TIMESTAMPING` with these `SOF_TIMESTAMPING_*` flags.
pub(crate) fn set_timestamping(fd: impl AsFd, flags: libc::c_uint) -> io::Result<()> {
    set(
        fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPING,
        &flags.to_ne_bytes(),
    )
}

/// `IP_RECVERR` (or `IPV6_RECVERR` with `v6`): ICMP errors onto the error queue, or not.
pub(crate) fn set_recverr(fd: impl AsFd, v6: bool, on: bool) -> io::Result<()> {
    let on = libc::c_int::from(on);
    if v6 {
        set_int(fd, libc::SOL_IPV6, libc::IPV6_RECVERR, on)
    } else {
        set_int(fd, libc::SOL_IP, libc::IP_RECVERR, on)
    }
}

/// `ICMP_FILTER` on a raw IPv4 ICMP socket: bit `t` set drops ICMP type `t`.
pub(crate) fn set_icmp_filter(fd: impl AsFd, blocked: u32) -> io::Result<()> {
    set(fd, libc::SOL_RAW, ICMP_FILTER, &blocked.to_ne_bytes())
}

/// `UDP_SEGMENT`: the segment size of the socket's GSO sends (0: none).
pub(crate) fn set_udp_segment(fd: impl AsFd, size: i32) -> io::Result<()> {
    set_int(fd, SOL_UDP, UDP_SEGMENT, size)
}

/// `UDP_GRO`: accept coalesced receive buffers.
pub(crate) fn set_udp_gro(fd: impl AsFd, on: bool) -> io::Result<()> {
    set_int(fd, SOL_UDP, UDP_GRO, libc::c_int::from(on))
}

/// `SO_MAX_PACING_RATE` (asm-generic/socket.h).
const SO_MAX_PACING_RATE: libc::c_int = 47;

/// `SO_MAX_PACING_RATE` as a 64-bit value, bytes per second (Linux reads 64 bits when given
/// them, 32 before 5.x). Any value but all ones also turns the kernel's own TCP pacing on.
pub(crate) fn set_max_pacing_rate(fd: impl AsFd, bytes_per_second: u64) -> io::Result<()> {
    set(
        fd,
        libc::SOL_SOCKET,
        SO_MAX_PACING_RATE,
        &bytes_per_second.to_ne_bytes(),
    )
}

/// `SO_MAX_PACING_RATE` as the kernel reads it back (all ones: no cap and no pacing asked).
pub fn max_pacing_rate(fd: impl AsFd) -> io::Result<u64> {
    let mut buf = [0u8; 8];
    match get(fd, libc::SOL_SOCKET, SO_MAX_PACING_RATE, &mut buf)? {
        8 => Ok(u64::from_ne_bytes(buf)),
        4 => {
            let v = u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
            Ok(if v == u32::MAX {
                u64::MAX
            } else {
                u64::from(v)
            })
        }
        n => Err(io::Error::other(format!(
            "SO_MAX_PACING_RATE returned {n} bytes"
        ))),
    }
}

/// `SO_ZEROCOPY`: allow `MSG_ZEROCOPY` sends.
pub(crate) fn set_zerocopy(fd: impl AsFd) -> io::Result<()> {
    set_int(fd, libc::SOL_SOCKET, SO_ZEROCOPY, 1)
}

/// `PACKET_QDISC_BYPASS`: an `AF_PACKET` socket's frames skip the queueing discipline.
pub(crate) fn set_packet_qdisc_bypass(fd: impl AsFd) -> io::Result<()> {
    set_int(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)
}

/// What a TCP socket still holds to deliver (`SIOCOUTQ`, tcp(7)): written and not yet sent,
/// plus sent and not yet acknowledged.
pub(crate) fn tcp_unacked_and_unsent(fd: impl AsFd) -> io::Result<u64> {
    let mut held: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int through the pointer, which points at a live c_int.
    if unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::TIOCOUTQ, &mut held) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::try_from(held).unwrap_or(0))
}
