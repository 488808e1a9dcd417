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
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::net::sockopt::{
    Ipv4PathMtuDiscovery, Ipv6PathMtuDiscovery, ip_mtu, ipv6_mtu, set_ip_mtu_discover,
    set_ipv6_mtu_discover,
};
use rustix::time::{ClockId, clock_getres};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::icmp::{self, Family, Message};
use crate::sys::{cmsg, socket_options};

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
    fd: Socket,
    pub(crate) family: Family,
    pub(crate) kind: SocketKind,
    pub(crate) ident: u16,
    target: SocketAddr,
    sent: u32,
    ttl: Option<u8>,
    buf: Vec<u8>,
    rbuf: Vec<u8>,
}

/// The software timestamp (the first of the three `SO_TIMESTAMPING` timespecs) in a control
/// message's data, in nanoseconds; `None` when the kernel left it zero (or sent none).
pub(crate) fn software_stamp_ns(data: &[u8]) -> Option<i128> {
    let (sec, nsec) = cmsg::timespec(data, 0)?;
    (sec != 0 || nsec != 0).then(|| i128::from(sec) * 1_000_000_000 + i128::from(nsec))
}

impl IcmpSocket {
    /// Opens the socket kind `choice` allows, for probes to `target`.
    pub(crate) fn open(
        target: IpAddr,
        scope_id: u32,
        choice: SocketChoice,
        raw_ident: u16,
    ) -> Result<IcmpSocket, OpenError> {
        let (domain, proto, family) = match target {
            IpAddr::V4(_) => (Domain::IPV4, Protocol::ICMPV4, Family::V4),
            IpAddr::V6(_) => (Domain::IPV6, Protocol::ICMPV6, Family::V6),
        };
        let try_kind = |ty: Type| Socket::new(domain, ty, Some(proto));
        let mut dgram_err = None;
        let mut fd_kind = None;
        if choice != SocketChoice::Raw {
            match try_kind(Type::DGRAM) {
                Ok(fd) => fd_kind = Some((fd, SocketKind::Datagram)),
                Err(e) => dgram_err = Some(e),
            }
        }
        let mut raw_err = None;
        if fd_kind.is_none() && choice != SocketChoice::Datagram {
            match try_kind(Type::RAW) {
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
        let setup = || -> io::Result<()> {
            // A raw socket reads ICMP errors as ordinary packets; IP_RECVERR would also queue
            // them (and set a pending error that fails the next send), so only the datagram
            // socket asks for it. Transmit stamps use the error queue either way.
            let recverr = kind == SocketKind::Datagram;
            match family {
                Family::V4 => {
                    socket_options::set_recverr(&fd, false, recverr)?;
                    set_ip_mtu_discover(&fd, Ipv4PathMtuDiscovery::PROBE)?;
                }
                Family::V6 => {
                    socket_options::set_recverr(&fd, true, recverr)?;
                    set_ipv6_mtu_discover(&fd, Ipv6PathMtuDiscovery::PROBE)?;
                }
            }
            if kind == SocketKind::Raw {
                // A raw socket gets a copy of every ICMP message the host receives: room for
                // bursts from other programs, and (IPv4) a kernel filter that keeps only echo
                // reply (0), unreachable (3) and time exceeded (11). Best effort: a refusal
                // only costs filtering in user space.
                let _ = fd.set_recv_buffer_size(1 << 20);
                if family == Family::V4 {
                    let blocked: u32 = !((1 << 0) | (1 << 3) | (1 << 11));
                    let _ = socket_options::set_icmp_filter(&fd, blocked);
                }
            }
            let flags: libc::c_uint = libc::SOF_TIMESTAMPING_TX_SOFTWARE
                | libc::SOF_TIMESTAMPING_RX_SOFTWARE
                | libc::SOF_TIMESTAMPING_SOFTWARE
                | libc::SOF_TIMESTAMPING_OPT_ID
                | libc::SOF_TIMESTAMPING_OPT_TSONLY;
            socket_options::set_timestamping(&fd, flags)
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
                if let Err(e) = fd.bind(&SockAddr::from(any)) {
                    return Err(OpenError {
                        datagram: Some(e),
                        raw: None,
                    });
                }
                fd.local_addr()
                    .ok()
                    .and_then(|a| a.as_socket())
                    .map_or(0, |a| a.port())
            }
        };
        Ok(IcmpSocket {
            fd,
            family,
            kind,
            ident,
            target: crate::address::scoped(target, 0, scope_id),
            sent: 0,
            ttl: None,
            buf: Vec::with_capacity(65536),
            rbuf: vec![0; 65536 + 512],
        })
    }

    /// Sets the TTL (hop limit) of the following probes.
    /// Marks every probe with this TOS byte or IPv6 traffic class (`probe -S`).
    pub(crate) fn set_tos(&self, tos: u8) -> io::Result<()> {
        crate::sockopt::set_tos(&self.fd, tos)
    }

    pub(crate) fn set_ttl(&mut self, ttl: u8) -> io::Result<()> {
        if self.ttl == Some(ttl) {
            return Ok(());
        }
        match self.family {
            Family::V4 => self.fd.set_ttl_v4(u32::from(ttl))?,
            Family::V6 => self.fd.set_unicast_hops_v6(u32::from(ttl))?,
        }
        self.ttl = Some(ttl);
        Ok(())
    }

    /// Sends an echo request that is `ip_size` bytes as an IP packet. Returns the time just
    /// before the send and the packet's transmit-stamp id.
    pub(crate) fn send(&mut self, seq: u16, ip_size: usize) -> io::Result<(Instant, u32)> {
        let icmp_len = ip_size.saturating_sub(self.family.ip_header_len());
        icmp::emit_echo_request(self.family, self.ident, seq, icmp_len, &mut self.buf);
        let target = SockAddr::from(self.target);
        for attempt in 0..3 {
            let t0 = Instant::now();
            let err = match self.fd.send_to(&self.buf, &target) {
                Ok(_) => {
                    let id = self.sent;
                    self.sent = self.sent.wrapping_add(1);
                    return Ok((t0, id));
                }
                Err(e) => e,
            };
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
            let mut pfd = [PollFd::new(&self.fd, PollFlags::IN | PollFlags::ERR)];
            let ms = wait.as_millis().min(i32::MAX as u128) as i64;
            let timeout = Timespec {
                tv_sec: ms.max(1) / 1000,
                tv_nsec: (ms.max(1) % 1000) * 1_000_000,
            };
            if let Err(e) = poll(&mut pfd, Some(&timeout))
                && e != rustix::io::Errno::INTR
            {
                return Err(e.into());
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
        let mut control = [0u8; 1024];
        let flags = libc::MSG_DONTWAIT | if errqueue { libc::MSG_ERRQUEUE } else { 0 };
        let got = cmsg::recvmsg(&self.fd, &mut self.rbuf, &mut control, flags);
        let rx_user = Instant::now();
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    _ if !errqueue => Ok(Some(None)),
                    _ => Err(e),
                };
            }
        };
        let n = got.len;
        let mut rx_kernel_ns = None;
        let mut ee: Option<(libc::sock_extended_err, Option<IpAddr>)> = None;
        for c in cmsg::messages(&control[..got.control_len]) {
            if c.level == libc::SOL_SOCKET && c.kind == libc::SO_TIMESTAMPING {
                if let Some(ns) = software_stamp_ns(c.data) {
                    rx_kernel_ns = Some(ns);
                }
            } else if (c.level == libc::SOL_IP && c.kind == libc::IP_RECVERR)
                || (c.level == libc::SOL_IPV6 && c.kind == libc::IPV6_RECVERR)
            {
                ee = cmsg::extended_err(c.data);
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
        let from = got.from;
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
        IpAddr::V4(_) => Domain::IPV4,
        IpAddr::V6(_) => Domain::IPV6,
    };
    let fd = Socket::new(domain, Type::DGRAM, None)?;
    fd.connect(&SockAddr::from(SocketAddr::new(target, 9)))?;
    let mtu = match target {
        IpAddr::V4(_) => ip_mtu(&fd)?,
        IpAddr::V6(_) => ipv6_mtu(&fd)?,
    };
    Ok(mtu as usize)
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
    let ts = clock_getres(ClockId::Monotonic);
    let res = Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.max(0) as u32);
    (floor, res)
}
