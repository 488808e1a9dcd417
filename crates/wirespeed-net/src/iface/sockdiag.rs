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
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `inet_diag_req_v2`: family, protocol, ext, pad, states, then a 48-byte `inet_diag_sockid`.
const REQ_LEN: usize = 56;
/// `inet_diag_msg`: family, state, timer, retrans, the sockid, expires, rqueue, wqueue, uid,
/// inode.
const MSG_LEN: usize = 72;
const INET_DIAG_INFO: u16 = 2;
const TCP_ESTABLISHED: u32 = 1;
/// `tcpi_notsent_bytes` in `struct tcp_info` (after the 64-bit counters of Linux 4.6).
const NOTSENT_OFFSET: usize = 144;

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
pub(crate) fn parse(msg: &Message<'_>) -> Result<Option<TcpQueue>, Malformed> {
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
pub(crate) fn dump() -> Result<Vec<TcpQueue>, NlError> {
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

#[cfg(test)]
mod tests {
    use super::super::nlwire;
    use super::*;

    /// A reply as the kernel lays it out: header, `inet_diag_msg`, an `INET_DIAG_INFO`.
    fn reply(rqueue: u32, wqueue: u32, notsent: Option<u32>) -> Vec<u8> {
        let mut msg = vec![0u8; MSG_LEN];
        msg[0] = libc::AF_INET as u8;
        msg[1] = 1;
        msg[4..6].copy_from_slice(&40000u16.to_be_bytes());
        msg[6..8].copy_from_slice(&5210u16.to_be_bytes());
        msg[8..12].copy_from_slice(&[198, 18, 0, 1]);
        msg[24..28].copy_from_slice(&[198, 18, 0, 2]);
        msg[56..60].copy_from_slice(&rqueue.to_ne_bytes());
        msg[60..64].copy_from_slice(&wqueue.to_ne_bytes());
        if let Some(n) = notsent {
            let mut info = vec![0u8; 232];
            info[NOTSENT_OFFSET..NOTSENT_OFFSET + 4].copy_from_slice(&n.to_ne_bytes());
            msg.extend_from_slice(&((4 + info.len()) as u16).to_ne_bytes());
            msg.extend_from_slice(&INET_DIAG_INFO.to_ne_bytes());
            msg.extend_from_slice(&info);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&((16 + msg.len()) as u32).to_ne_bytes());
        out.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        out.extend_from_slice(&[0; 10]);
        out.extend_from_slice(&msg);
        out
    }

    #[test]
    fn a_reply_gives_the_addresses_and_the_queues() {
        let buf = reply(100, 70_000, Some(50_000));
        let msg = nlwire::messages(&buf).next().unwrap().unwrap();
        let q = parse(&msg).unwrap().unwrap();
        assert_eq!(q.local, "198.18.0.1:40000".parse().unwrap());
        assert_eq!(q.remote, "198.18.0.2:5210".parse().unwrap());
        assert_eq!(
            (q.unsent_bytes, q.write_queue_bytes, q.unread_bytes),
            (Some(50_000), 70_000, 100)
        );
        // Without tcp_info the unsent bytes are unknown, not zero.
        let buf = reply(0, 10, None);
        let msg = nlwire::messages(&buf).next().unwrap().unwrap();
        assert_eq!(parse(&msg).unwrap().unwrap().unsent_bytes, None);
    }

    #[test]
    fn a_short_reply_is_malformed_not_a_panic() {
        let mut buf = reply(0, 0, None);
        buf.truncate(16 + 40);
        buf[0..4].copy_from_slice(&56u32.to_ne_bytes());
        let msg = nlwire::messages(&buf).next().unwrap().unwrap();
        assert!(parse(&msg).is_err());
    }

    #[test]
    fn what_a_receiver_has_not_read_is_counted_at_the_receiver() {
        use std::io::Write;
        // 100 kB written to a receiver that reads nothing: once loopback has delivered it,
        // the receiver's socket holds it all unread and the sender none of it unsent.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        client.write_all(&[7u8; 100_000]).unwrap();
        let (me, peer) = (client.local_addr().unwrap(), server.local_addr().unwrap());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let Ok(all) = dump() else {
                eprintln!("sock_diag: skipped: this kernel does not answer sock_diag");
                return;
            };
            let at = |local, remote| all.iter().find(|q| q.local == local && q.remote == remote);
            let (Some(sender), Some(receiver)) = (at(me, peer), at(peer, me)) else {
                panic!("our connection is not listed: {all:?}");
            };
            if receiver.unread_bytes == 100_000 {
                // All sent; what the receiver has not acknowledged yet is in both counts,
                // which is why a split of the bytes takes the unsent ones at the sender.
                assert_eq!(sender.unsent_bytes.unwrap_or(0), 0, "{sender:?}");
                assert!(sender.write_queue_bytes <= 100_000, "{sender:?}");
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{sender:?} {receiver:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(server);
    }

    #[test]
    fn what_the_receiver_has_no_room_for_waits_unsent_at_the_sender() {
        use std::io::Write;
        // The receiver reads nothing, so its window closes; the sender's socket takes what it
        // has room for and holds the rest of it unsent.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        client.set_nonblocking(true).unwrap();
        let chunk = [1u8; 65_536];
        let mut written = 0usize;
        for _ in 0..1_000 {
            match client.write(&chunk) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let Ok(all) = dump() else {
            eprintln!("sock_diag: skipped: this kernel does not answer sock_diag");
            return;
        };
        let (me, peer) = (client.local_addr().unwrap(), server.local_addr().unwrap());
        let sender = all
            .iter()
            .find(|q| q.local == me && q.remote == peer)
            .unwrap();
        let receiver = all
            .iter()
            .find(|q| q.local == peer && q.remote == me)
            .unwrap();
        let unsent = sender
            .unsent_bytes
            .expect("a kernel since 4.6 reports unsent bytes");
        assert!(
            unsent > 0 && unsent <= sender.write_queue_bytes,
            "{sender:?}"
        );
        // Every byte written is either still unsent at the sender or arrived at the receiver.
        assert_eq!(
            unsent + receiver.unread_bytes,
            written as u64,
            "{sender:?} {receiver:?}"
        );
    }

    #[test]
    fn this_namespace_can_be_listed() {
        // A connection of our own on loopback is among what the kernel lists.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let Ok(all) = dump() else {
            eprintln!("sock_diag: skipped: this kernel does not answer sock_diag");
            return;
        };
        let me = client.local_addr().unwrap();
        assert!(all.iter().any(|q| q.local == me), "{all:?}");
    }
}
