use wirespeed_net::iface::nlwire;
use wirespeed_net::iface::sockdiag::*;

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
