//! `recvmsg` with control messages, and the records the kernel puts in them: `SO_TIMESTAMPING`
//! and `SCM_TIMESTAMPNS` stamps, `IP_RECVERR` extended errors (ICMP errors, transmit-stamp
//! keys, zerocopy completions), the `UDP_GRO` segment size.
//!
//! The walk over a control buffer is bounds-checked in Rust (each header and its data must lie
//! inside the bytes the kernel reported) and every record is read with an unaligned copy of a
//! plain-old-data type after a length check, so the parsers are safe on any bytes, not only on
//! what a kernel wrote.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsFd, AsRawFd};

/// What one `recvmsg` returned.
pub(crate) struct Received {
    /// Bytes of the message (written into the caller's buffer, as far as it reaches).
    pub(crate) len: usize,
    /// Bytes of control messages written into the caller's control buffer.
    pub(crate) control_len: usize,
    /// The sender's IP address, where the kernel gave one.
    pub(crate) from: Option<IpAddr>,
}

/// One `recvmsg(fd, flags)` into `buf`, with `control` for the control messages (walk its
/// first [`Received::control_len`] bytes with [`messages`]).
pub(crate) fn recvmsg(
    fd: impl AsFd,
    buf: &mut [u8],
    control: &mut [u8],
    flags: libc::c_int,
) -> io::Result<Received> {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut name: libc::sockaddr_storage = unsafe { zeroed() };
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: all-zero is a valid msghdr; the fields are set below.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (&mut name as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !control.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
    }
    // SAFETY: msg describes live buffers (`name`, `iov` over `buf`, `control`) of the lengths
    // given; the kernel writes only inside them.
    let n = unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let name_len = (msg.msg_namelen as usize).min(size_of::<libc::sockaddr_storage>());
    // SAFETY: sockaddr_storage is plain data; viewing it as bytes reads initialised memory.
    let name_bytes = unsafe {
        std::slice::from_raw_parts(
            (&name as *const libc::sockaddr_storage).cast::<u8>(),
            name_len,
        )
    };
    Ok(Received {
        len: n as usize,
        control_len: (msg.msg_controllen as usize).min(control.len()),
        from: ip_of_sockaddr(name_bytes),
    })
}

/// One control message: its level, type and data.
pub struct Cmsg<'a> {
    /// `cmsg_level`.
    pub level: libc::c_int,
    /// `cmsg_type`.
    pub kind: libc::c_int,
    /// The data after the header, `cmsg_len` minus the header.
    pub data: &'a [u8],
}

/// `CMSG_ALIGN`.
#[inline]
pub fn align(n: usize) -> usize {
    let a = size_of::<usize>();
    (n + a - 1) & !(a - 1)
}

/// The control messages in `control` (what the kernel wrote), as `CMSG_FIRSTHDR`/`CMSG_NXTHDR`
/// walk them; a header that claims more bytes than are there ends the walk.
#[inline]
pub fn messages(control: &[u8]) -> impl Iterator<Item = Cmsg<'_>> {
    let header = size_of::<libc::cmsghdr>();
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let rest = control.get(at..)?;
        if rest.len() < header {
            return None;
        }
        // SAFETY: `rest` holds at least one cmsghdr's bytes; cmsghdr is plain data and the read
        // is unaligned.
        let h = unsafe { std::ptr::read_unaligned(rest.as_ptr().cast::<libc::cmsghdr>()) };
        let len = h.cmsg_len as usize;
        if len < header || len > rest.len() {
            return None;
        }
        let data = &rest[align(header).min(len)..len];
        at += align(len);
        Some(Cmsg {
            level: h.cmsg_level,
            kind: h.cmsg_type,
            data,
        })
    })
}

/// Reads a `T` from the start of `data`, if it is long enough.
///
/// Only for the plain-old-data types below (integers and C structs of integers), for which
/// every bit pattern is a valid value.
fn read<T: Copy>(data: &[u8]) -> Option<T> {
    (data.len() >= size_of::<T>())
        // SAFETY: `data` holds size_of::<T>() bytes; the read is unaligned; T is one of the
        // plain-old-data types of this module (all bit patterns valid).
        .then(|| unsafe { std::ptr::read_unaligned(data.as_ptr().cast::<T>()) })
}

/// The `index`-th `struct timespec` in a stamp message's data (`SCM_TIMESTAMPNS` holds one,
/// `SO_TIMESTAMPING` three: software, deprecated, raw hardware) as (seconds, nanoseconds).
#[inline]
pub fn timespec(data: &[u8], index: usize) -> Option<(i64, i64)> {
    let at = index.checked_mul(size_of::<libc::timespec>())?;
    let ts: libc::timespec = read(data.get(at..)?)?;
    Some((ts.tv_sec, ts.tv_nsec))
}

/// A `c_int` message's value (`UDP_GRO`'s segment size).
#[inline]
pub fn int(data: &[u8]) -> Option<libc::c_int> {
    read(data)
}

/// An `IP_RECVERR`/`IPV6_RECVERR` message: the extended error and the offender's address
/// (`SO_EE_OFFENDER`) where one follows it.
pub(crate) fn extended_err(data: &[u8]) -> Option<(libc::sock_extended_err, Option<IpAddr>)> {
    let e: libc::sock_extended_err = read(data)?;
    let offender = data
        .get(size_of::<libc::sock_extended_err>()..)
        .and_then(ip_of_sockaddr);
    Some((e, offender))
}

/// The IP address of a `sockaddr_in`/`sockaddr_in6` in `bytes`, `None` for another family or
/// too few bytes.
pub(crate) fn ip_of_sockaddr(bytes: &[u8]) -> Option<IpAddr> {
    let family: libc::sa_family_t = read(bytes)?;
    match i32::from(family) {
        libc::AF_INET => {
            let sin: libc::sockaddr_in = read(bytes)?;
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                sin.sin_addr.s_addr,
            ))))
        }
        libc::AF_INET6 => {
            let sin6: libc::sockaddr_in6 = read(bytes)?;
            Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}
