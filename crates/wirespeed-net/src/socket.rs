//! One ICMP socket for echo and TTL-limited probes, with kernel timestamps.
//!
//! Two kinds, tried in this order: the unprivileged ICMP datagram socket ("ping socket",
//! `SOCK_DGRAM`/`IPPROTO_ICMP`, allowed to the groups in `net.ipv4.ping_group_range`), whose
//! ICMP errors (time exceeded from each router) arrive on the error queue with `IP_RECVERR` as
//! tracepath reads them; and the raw socket (needs `CAP_NET_RAW`), which sees every ICMP
//! message and picks out the ones quoting its own identifier.
//!
//! Probes go out with "don't fragment" at the interface MTU whatever the route's learned path
//! MTU (`IP_PMTUDISC_PROBE`, as tracepath), so a probe too big for a link further on comes back
//! as fragmentation needed / packet too big instead of failing every later send.
//!
//! Timing: `SO_TIMESTAMPING` with software transmit and receive stamps (the kernel stamps the
//! packet as the driver takes it and as it arrives; Documentation/networking/timestamping.rst),
//! so scheduling of this process drops out of the round trip; and `CLOCK_MONOTONIC` read just
//! before `sendto` and just after `recvmsg` for every probe, used when a kernel stamp is missing.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::icmp::{self, Family, Message};

/// Which kind of ICMP socket a run used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketKind {
    /// `SOCK_DGRAM`/`IPPROTO_ICMP`: unprivileged, errors via `IP_RECVERR`.
    Datagram,
    /// `SOCK_RAW`: needs `CAP_NET_RAW`.
    Raw,
    /// A UDP socket whose datagrams a wirespeed agent echoes ([`crate::echo`]).
    UdpEcho,
}

/// Which socket kind to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketChoice {
    /// The datagram socket, else the raw one.
    Auto,
    /// Only the datagram socket.
    Datagram,
    /// Only the raw socket.
    Raw,
}

/// Something that arrived on the socket.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// An ICMP message about one of our probes.
    Reply {
        message: Message,
        from: IpAddr,
        /// IP bytes of the reply as it travelled (header included).
        returned: usize,
        /// Kernel receive stamp, ns of CLOCK_REALTIME.
        rx_kernel_ns: Option<i128>,
        /// When recvmsg returned.
        rx_user: Instant,
    },
    /// The kernel's transmit stamp of the `id`-th packet sent on this socket.
    TxStamp { id: u32, ns: i128 },
}

pub(crate) struct IcmpSocket {
    fd: OwnedFd,
    pub(crate) family: Family,
    pub(crate) kind: SocketKind,
    pub(crate) ident: u16,
    target: SocketAddr,
    sent: u32,
    ttl: Option<u8>,
    buf: Vec<u8>,
    rbuf: Vec<u8>,
}

/// `ICMP_FILTER` of `<linux/icmp.h>`: a bit mask of ICMP types a raw socket does not receive.
const ICMP_FILTER: libc::c_int = 1;

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

fn setsockopt<T>(fd: i32, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: value points to a live T of the size given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 { Ok(()) } else { Err(last_error()) }
}

/// The software timestamp (the first of the three `SO_TIMESTAMPING` timespecs) in a control
/// message's data, in nanoseconds; `None` when the kernel left it zero.
///
/// # Safety
/// `data` must point at the data of an `SO_TIMESTAMPING` control message.
pub(crate) unsafe fn software_stamp_ns(data: *const u8) -> Option<i128> {
    // SAFETY: the caller guarantees at least one timespec of control-message data.
    let ts = unsafe { std::ptr::read_unaligned(data.cast::<libc::timespec>()) };
    (ts.tv_sec != 0 || ts.tv_nsec != 0)
        .then(|| i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec))
}

/// A socket address in the kernel's layout.
pub(crate) fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is valid.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// Reads an address the kernel wrote (a recvmsg name or an IP_RECVERR offender).
///
/// # Safety
/// `ptr` must point to at least `len` readable bytes.
unsafe fn read_sockaddr(ptr: *const u8, len: usize) -> Option<IpAddr> {
    if len < size_of::<libc::sa_family_t>() {
        return None;
    }
    // SAFETY: the caller guarantees len readable bytes; unaligned reads throughout.
    unsafe {
        let family = std::ptr::read_unaligned(ptr.cast::<libc::sa_family_t>());
        match i32::from(family) {
            libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
                let sin = std::ptr::read_unaligned(ptr.cast::<libc::sockaddr_in>());
                Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))))
            }
            libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
                let sin6 = std::ptr::read_unaligned(ptr.cast::<libc::sockaddr_in6>());
                Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
            }
            _ => None,
        }
    }
}

impl IcmpSocket {
    /// Opens the socket kind `choice` allows, for probes to `target`.
    pub(crate) fn open(
        target: IpAddr,
        choice: SocketChoice,
        raw_ident: u16,
    ) -> Result<IcmpSocket, OpenError> {
        let (domain, proto, family) = match target {
            IpAddr::V4(_) => (libc::AF_INET, libc::IPPROTO_ICMP, Family::V4),
            IpAddr::V6(_) => (libc::AF_INET6, libc::IPPROTO_ICMPV6, Family::V6),
        };
        let try_kind = |ty: i32| -> io::Result<OwnedFd> {
            // SAFETY: plain socket(2) call.
            let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
            if fd < 0 {
                Err(last_error())
            } else {
                // SAFETY: fd is a fresh descriptor we own.
                Ok(unsafe { OwnedFd::from_raw_fd(fd) })
            }
        };
        let mut dgram_err = None;
        let mut fd_kind = None;
        if choice != SocketChoice::Raw {
            match try_kind(libc::SOCK_DGRAM) {
                Ok(fd) => fd_kind = Some((fd, SocketKind::Datagram)),
                Err(e) => dgram_err = Some(e),
            }
        }
        let mut raw_err = None;
        if fd_kind.is_none() && choice != SocketChoice::Datagram {
            match try_kind(libc::SOCK_RAW) {
                Ok(fd) => fd_kind = Some((fd, SocketKind::Raw)),
                Err(e) => raw_err = Some(e),
            }
        }
        let Some((fd, kind)) = fd_kind else {
            return Err(OpenError {
                datagram: dgram_err,
                raw: raw_err,
            });
        };
        let raw = fd.as_raw_fd();
        let setup = || -> io::Result<()> {
            // A raw socket reads ICMP errors as ordinary packets; IP_RECVERR would also queue
            // them (and set a pending error that fails the next send), so only the datagram
            // socket asks for it. Transmit stamps use the error queue either way.
            let recverr: libc::c_int = libc::c_int::from(kind == SocketKind::Datagram);
            match family {
                Family::V4 => {
                    setsockopt(raw, libc::SOL_IP, libc::IP_RECVERR, &recverr)?;
                    setsockopt(
                        raw,
                        libc::SOL_IP,
                        libc::IP_MTU_DISCOVER,
                        &libc::IP_PMTUDISC_PROBE,
                    )?;
                }
                Family::V6 => {
                    setsockopt(raw, libc::SOL_IPV6, libc::IPV6_RECVERR, &recverr)?;
                    setsockopt(
                        raw,
                        libc::SOL_IPV6,
                        libc::IPV6_MTU_DISCOVER,
                        &libc::IPV6_PMTUDISC_PROBE,
                    )?;
                }
            }
            if kind == SocketKind::Raw {
                // A raw socket gets a copy of every ICMP message the host receives: room for
                // bursts from other programs, and (IPv4) a kernel filter that keeps only echo
                // reply (0), unreachable (3) and time exceeded (11). Best effort: a refusal
                // only costs filtering in user space.
                let rcvbuf: libc::c_int = 1 << 20;
                let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf);
                if family == Family::V4 {
                    let blocked: u32 = !((1 << 0) | (1 << 3) | (1 << 11));
                    let _ = setsockopt(raw, libc::SOL_RAW, ICMP_FILTER, &blocked);
                }
            }
            let flags: libc::c_uint = libc::SOF_TIMESTAMPING_TX_SOFTWARE
                | libc::SOF_TIMESTAMPING_RX_SOFTWARE
                | libc::SOF_TIMESTAMPING_SOFTWARE
                | libc::SOF_TIMESTAMPING_OPT_ID
                | libc::SOF_TIMESTAMPING_OPT_TSONLY;
            setsockopt(raw, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, &flags)
        };
        setup().map_err(|e| OpenError {
            datagram: None,
            raw: Some(e),
        })?;
        let ident = match kind {
            SocketKind::Raw => raw_ident,
            // (UdpEcho is the probe engine's UDP transport; it never opens an ICMP socket.)
            SocketKind::Datagram | SocketKind::UdpEcho => {
                // The kernel uses the bound "port" as the echo identifier; bind one now to know it.
                let any: SocketAddr = match family {
                    Family::V4 => (Ipv4Addr::UNSPECIFIED, 0).into(),
                    Family::V6 => (Ipv6Addr::UNSPECIFIED, 0).into(),
                };
                let (ss, len) = sockaddr(any);
                // SAFETY: ss holds a valid address of len bytes.
                if unsafe { libc::bind(raw, (&ss as *const libc::sockaddr_storage).cast(), len) }
                    != 0
                {
                    return Err(OpenError {
                        datagram: Some(last_error()),
                        raw: None,
                    });
                }
                // SAFETY: all-zero sockaddr_storage is valid; getsockname fills it.
                let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
                let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                // SAFETY: ss and len describe a writable buffer.
                unsafe {
                    libc::getsockname(
                        raw,
                        (&mut ss as *mut libc::sockaddr_storage).cast(),
                        &mut len,
                    )
                };
                // SAFETY: sin_port and sin6_port sit at the same offset.
                let sin = unsafe { &*(&ss as *const _ as *const libc::sockaddr_in) };
                u16::from_be(sin.sin_port)
            }
        };
        Ok(IcmpSocket {
            fd,
            family,
            kind,
            ident,
            target: SocketAddr::new(target, 0),
            sent: 0,
            ttl: None,
            buf: Vec::with_capacity(65536),
            rbuf: vec![0; 65536 + 512],
        })
    }

    /// Sets the TTL (hop limit) of the following probes.
    pub(crate) fn set_ttl(&mut self, ttl: u8) -> io::Result<()> {
        if self.ttl == Some(ttl) {
            return Ok(());
        }
        let v = libc::c_int::from(ttl);
        match self.family {
            Family::V4 => setsockopt(self.fd.as_raw_fd(), libc::SOL_IP, libc::IP_TTL, &v)?,
            Family::V6 => setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_IPV6,
                libc::IPV6_UNICAST_HOPS,
                &v,
            )?,
        }
        self.ttl = Some(ttl);
        Ok(())
    }

    /// Sends an echo request that is `ip_size` bytes as an IP packet. Returns the time just
    /// before the send and the packet's transmit-stamp id.
    pub(crate) fn send(&mut self, seq: u16, ip_size: usize) -> io::Result<(Instant, u32)> {
        let icmp_len = ip_size.saturating_sub(self.family.ip_header_len());
        icmp::emit_echo_request(self.family, self.ident, seq, icmp_len, &mut self.buf);
        let (ss, len) = sockaddr(self.target);
        for attempt in 0..3 {
            let t0 = Instant::now();
            // SAFETY: buf and ss are valid for the lengths given.
            let rc = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    self.buf.as_ptr().cast(),
                    self.buf.len(),
                    0,
                    (&ss as *const libc::sockaddr_storage).cast(),
                    len,
                )
            };
            if rc >= 0 {
                let id = self.sent;
                self.sent = self.sent.wrapping_add(1);
                return Ok((t0, id));
            }
            let err = last_error();
            // A pending ICMP error (sk_err) fails the next send once; drain it and retry.
            let pending = matches!(
                err.raw_os_error(),
                Some(libc::EHOSTUNREACH | libc::ENETUNREACH | libc::ECONNREFUSED | libc::EPROTO)
            );
            if attempt < 2 && pending {
                self.drain_errors()?;
                continue;
            }
            return Err(err);
        }
        unreachable!("the loop returns on its last pass")
    }

    /// Waits until `deadline` for the next event; `None` at the deadline.
    pub(crate) fn next_event(&mut self, deadline: Instant) -> io::Result<Option<Event>> {
        loop {
            // The error queue first (transmit stamps, IP_RECVERR errors), then data.
            match self.recv_one(true)? {
                Some(Some(ev)) => return Ok(Some(ev)),
                Some(None) => continue,
                None => {}
            }
            match self.recv_one(false)? {
                Some(Some(ev)) => return Ok(Some(ev)),
                Some(None) => continue,
                None => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let wait = deadline - now;
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN | libc::POLLERR,
                revents: 0,
            };
            let ms = wait.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
            if rc < 0 {
                let e = last_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }

    /// Reads and drops everything on the error queue (which also clears a pending socket error).
    fn drain_errors(&mut self) -> io::Result<()> {
        while self.recv_one(true)?.is_some() {}
        Ok(())
    }

    /// Drains events without waiting (stamps that arrive just after their reply).
    pub(crate) fn poll_now(&mut self) -> io::Result<Option<Event>> {
        for errqueue in [true, false] {
            while let Some(got) = self.recv_one(errqueue)? {
                if got.is_some() {
                    return Ok(got);
                }
            }
        }
        Ok(None)
    }

    /// One non-blocking recvmsg from the error queue or the data queue: `None` if the queue is
    /// empty, `Some(None)` if a message was read that is not for us (dropped).
    fn recv_one(&mut self, errqueue: bool) -> io::Result<Option<Option<Event>>> {
        let mut control = [0u64; 128];
        // SAFETY: all-zero is a valid sockaddr_storage.
        let mut name: libc::sockaddr_storage = unsafe { zeroed() };
        let mut iov = libc::iovec {
            iov_base: self.rbuf.as_mut_ptr().cast(),
            iov_len: self.rbuf.len(),
        };
        // SAFETY: all-zero is a valid msghdr; the fields are set below.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = (&mut name as *mut libc::sockaddr_storage).cast();
        msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = size_of_val(&control) as _;
        let flags = libc::MSG_DONTWAIT | if errqueue { libc::MSG_ERRQUEUE } else { 0 };
        // SAFETY: msg describes live buffers.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, flags) };
        let rx_user = Instant::now();
        if n < 0 {
            let e = last_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ if !errqueue => Ok(Some(None)),
                _ => Err(e),
            };
        }
        let n = n as usize;
        let mut rx_kernel_ns = None;
        let mut ee: Option<(libc::sock_extended_err, Option<IpAddr>)> = None;
        // SAFETY: walking the control buffer the kernel filled, with the libc CMSG macros.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let h = &*c;
                let data = libc::CMSG_DATA(c);
                let dlen = h.cmsg_len as usize - (data as usize - c as usize);
                if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SO_TIMESTAMPING {
                    if let Some(ns) = software_stamp_ns(data) {
                        rx_kernel_ns = Some(ns);
                    }
                } else if (h.cmsg_level == libc::SOL_IP && h.cmsg_type == libc::IP_RECVERR)
                    || (h.cmsg_level == libc::SOL_IPV6 && h.cmsg_type == libc::IPV6_RECVERR)
                {
                    let serr = std::ptr::read_unaligned(data.cast::<libc::sock_extended_err>());
                    let off = size_of::<libc::sock_extended_err>();
                    let offender = if dlen > off {
                        read_sockaddr(data.add(off), dlen - off)
                    } else {
                        None
                    };
                    ee = Some((serr, offender));
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        let payload = &self.rbuf[..n];
        if errqueue {
            let Some((serr, offender)) = ee else {
                return Ok(Some(None));
            };
            if serr.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING {
                return Ok(Some(rx_kernel_ns.map(|ns| Event::TxStamp {
                    id: serr.ee_data,
                    ns,
                })));
            }
            // A raw socket reads the same error as an ordinary ICMP packet; use that copy.
            if self.kind == SocketKind::Raw {
                return Ok(Some(None));
            }
            let is_icmp = serr.ee_origin == libc::SO_EE_ORIGIN_ICMP
                || serr.ee_origin == libc::SO_EE_ORIGIN_ICMP6;
            let (Some(from), true) = (offender, is_icmp) else {
                return Ok(Some(None));
            };
            let Some((ident, seq)) = icmp::parse_errqueue_payload(payload) else {
                return Ok(Some(None));
            };
            let quoted = self.family.ip_header_len() + n;
            let time_exceeded = match self.family {
                Family::V4 => serr.ee_type == 11,
                Family::V6 => serr.ee_type == 3,
            };
            let message = if time_exceeded {
                Message::TimeExceeded { ident, seq, quoted }
            } else if self.family.is_too_big(serr.ee_type, serr.ee_code) {
                Message::TooBig {
                    mtu: serr.ee_info,
                    ident,
                    seq,
                }
            } else {
                Message::Unreachable {
                    code: serr.ee_code,
                    ident,
                    seq,
                    quoted,
                }
            };
            return Ok(Some(Some(Event::Reply {
                message,
                from,
                returned: self.family.ip_header_len() + icmp::HEADER_LEN + quoted,
                rx_kernel_ns,
                rx_user,
            })));
        }
        // SAFETY: name was filled by recvmsg with msg_namelen bytes.
        let from = unsafe {
            read_sockaddr(
                (&name as *const libc::sockaddr_storage).cast(),
                msg.msg_namelen as usize,
            )
        };
        let Some(from) = from else {
            return Ok(Some(None));
        };
        let (icmp_bytes, returned) = match (self.family, self.kind) {
            (Family::V4, SocketKind::Raw) => {
                let Ok(ihl) = icmp::ipv4_header_len(payload) else {
                    return Ok(Some(None));
                };
                (&payload[ihl..], n)
            }
            (family, _) => (payload, family.ip_header_len() + n),
        };
        let Ok(message) = icmp::parse(self.family, icmp_bytes) else {
            return Ok(Some(None));
        };
        Ok(Some(Some(Event::Reply {
            message,
            from,
            returned,
            rx_kernel_ns,
            rx_user,
        })))
    }
}

/// Neither socket kind could be opened.
#[derive(Debug)]
pub struct OpenError {
    /// Why the datagram socket failed, if tried.
    pub datagram: Option<io::Error>,
    /// Why the raw socket failed, if tried.
    pub raw: Option<io::Error>,
}

/// The largest IP packet the route to `target` carries without fragmenting (IP_MTU on a
/// connected UDP socket; nothing is sent).
pub fn path_mtu(target: IpAddr) -> io::Result<usize> {
    let domain = match target {
        IpAddr::V4(_) => libc::AF_INET,
        IpAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(domain, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_error());
    }
    // SAFETY: fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let (ss, len) = sockaddr(SocketAddr::new(target, 9));
    // SAFETY: valid address.
    if unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&ss as *const libc::sockaddr_storage).cast(),
            len,
        )
    } != 0
    {
        return Err(last_error());
    }
    let mut mtu: libc::c_int = 0;
    let mut l = size_of::<libc::c_int>() as libc::socklen_t;
    let (level, name) = match target {
        IpAddr::V4(_) => (libc::SOL_IP, libc::IP_MTU),
        IpAddr::V6(_) => (libc::SOL_IPV6, libc::IPV6_MTU),
    };
    // SAFETY: mtu and l describe a writable c_int.
    if unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut l,
        )
    } != 0
    {
        return Err(last_error());
    }
    Ok(mtu.max(0) as usize)
}

/// The smallest step of CLOCK_MONOTONIC seen between consecutive reads (the timer floor), and
/// the resolution the kernel claims for it.
pub fn timer_floor() -> (Duration, Duration) {
    let mut floor = Duration::MAX;
    let mut last = Instant::now();
    for _ in 0..2000 {
        let now = Instant::now();
        let d = now - last;
        if !d.is_zero() {
            floor = floor.min(d);
        }
        last = now;
    }
    // SAFETY: all-zero timespec is valid; clock_getres fills it.
    let mut ts: libc::timespec = unsafe { zeroed() };
    // SAFETY: ts is writable.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let res = Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.max(0) as u32);
    (floor, res)
}
