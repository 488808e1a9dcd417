//! The established TCP sockets of this network namespace and the bytes each holds queued, read
//! the way `ss -tin` reads them: sock_diag netlink (`SOCK_DIAG_BY_FAMILY` with an
//! `inet_diag_req_v2`, linux/inet_diag.h), each reply an `inet_diag_msg` (its receive and
//! write queues) with the socket's `struct tcp_info` attached (`INET_DIAG_INFO`, linux/tcp.h;
//! `tcpi_notsent_bytes`: written by the application, not yet sent).
//!
//! `wirespeed latency` samples these while its load runs, to say how much of the load's data
//! waits in the senders' own socket buffers (which a probe on a flow of its own never crosses)
//! and how much in the receivers' (read late by the application).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::netlink::{NlError, NlSocket};
use super::nlwire::{Malformed, Message, NLM_F_DUMP, NLM_F_REQUEST, Request};

const NETLINK_SOCK_DIAG: i32 = 4;
pub const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `inet_diag_req_v2`: family, protocol, ext, pad, states, then a 48-byte `inet_diag_sockid`.
const REQ_LEN: usize = 56;
/// `inet_diag_msg`: family, state, timer, retrans, the sockid, expires, rqueue, wqueue, uid,
/// inode.
pub const MSG_LEN: usize = 72;
pub const INET_DIAG_INFO: u16 = 2;
const TCP_ESTABLISHED: u32 = 1;
/// `tcpi_notsent_bytes` in `struct tcp_info` (after the 64-bit counters of Linux 4.6).
pub const NOTSENT_OFFSET: usize = 144;

/// What one established TCP socket holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpQueue {
    /// Its own address.
    pub local: SocketAddr,
    /// Its peer's.
    pub remote: SocketAddr,
    /// Written by the application and not yet sent (`tcpi_notsent_bytes`); `None` on a kernel
    /// older than 4.6.
    pub unsent_bytes: Option<u64>,
    /// Written and not yet acknowledged, the unsent part included (`idiag_wqueue`).
    pub write_queue_bytes: u64,
    /// Received and not yet read by the application (`idiag_rqueue`).
    pub unread_bytes: u64,
}

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// An address of an `inet_diag_sockid` (16 bytes at `at`, network order) with its port.
fn address(family: u8, b: &[u8], at: usize, port: u16) -> Option<SocketAddr> {
    let bytes: [u8; 16] = b[at..at + 16].try_into().ok()?;
    let ip = match i32::from(family) {
        libc::AF_INET => IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3])),
        libc::AF_INET6 => IpAddr::V6(Ipv6Addr::from(bytes)),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// One reply of the dump; other kinds of message are skipped.
pub fn parse(msg: &Message<'_>) -> Result<Option<TcpQueue>, Malformed> {
    if msg.kind != SOCK_DIAG_BY_FAMILY {
        return Ok(None);
    }
    let (head, attrs) = msg.split_header(MSG_LEN)?;
    let family = head[0];
    let (Some(local), Some(remote)) = (
        address(family, head, 8, be16(head, 4)),
        address(family, head, 24, be16(head, 6)),
    ) else {
        return Ok(None);
    };
    let unsent = attrs.find(INET_DIAG_INFO).and_then(|a| {
        a.data
            .get(NOTSENT_OFFSET..NOTSENT_OFFSET + 4)
            .map(|b| u64::from(u32::from_ne_bytes(b.try_into().expect("4 bytes"))))
    });
    Ok(Some(TcpQueue {
        local,
        remote,
        unsent_bytes: unsent,
        write_queue_bytes: u64::from(word(head, 60)),
        unread_bytes: u64::from(word(head, 56)),
    }))
}

/// The request for every established TCP socket of `family`, with its `tcp_info`.
fn request(family: u8, seq: u32) -> Vec<u8> {
    let mut header = [0u8; REQ_LEN];
    header[0] = family;
    header[1] = libc::IPPROTO_TCP as u8;
    header[2] = 1 << (INET_DIAG_INFO - 1);
    header[4..8].copy_from_slice(&(1u32 << TCP_ESTABLISHED).to_ne_bytes());
    Request::route(
        SOCK_DIAG_BY_FAMILY,
        NLM_F_REQUEST | NLM_F_DUMP,
        seq,
        &header,
    )
    .finish()
}

/// Every established TCP socket of this network namespace, IPv4 and IPv6.
pub fn dump() -> Result<Vec<TcpQueue>, NlError> {
    let mut socket = NlSocket::open(NETLINK_SOCK_DIAG)?;
    let mut all = Vec::new();
    for family in [libc::AF_INET as u8, libc::AF_INET6 as u8] {
        let seq = socket.next_seq();
        socket.transact(&request(family, seq), seq, |msg| {
            // A bound on what one sample keeps, whatever the namespace holds.
            if all.len() < 65_536 {
                all.extend(parse(&msg)?);
            }
            Ok(())
        })?;
    }
    Ok(all)
}
