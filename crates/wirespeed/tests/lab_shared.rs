//! Shared media in the lab (a child of the `lab` tests, whose helpers and lock it uses): a hub
//! where concurrent senders collide, and the duplex-mismatch pair of seed 003 §8.4 against the
//! matched pair.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use wirespeed_lab::sys;

use super::{
    LAB_LOCK, UpLab, assert_nothing_left, can_build_labs, lab_file, lab_status, ping, tcp_share,
};
use crate::util::wirespeed;

fn counters(status: &serde_json::Value, from: &str) -> serde_json::Value {
    status["result"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["from"] == from)
        .unwrap_or_else(|| panic!("no port from {from}: {status}"))["counters"]
        .clone()
}

fn count(c: &serde_json::Value, key: &str) -> u64 {
    c[key].as_u64().unwrap_or_else(|| panic!("no {key} in {c}"))
}

#[test]
fn shared_segment_concurrent_senders_collide_and_the_collisions_are_counted() {
    if !can_build_labs("shared_segment") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let lab = UpLab::up(&lab_file("shared-24.toml"));
    // Each station resolves s1's address first, one at a time: six ARP requests sent at once
    // contend like the data does, and one that meets 16 collisions is dropped by the MAC, which
    // leaves that station's datagrams waiting on a neighbour entry that fails (one run in
    // about 50 under load: s5 sent 2 frames, both ARP, both dropped).
    for i in 2..=7 {
        assert!(
            ping(
                &lab.namespace(&format!("s{i}")),
                Ipv4Addr::new(198, 18, 0, 1),
                56,
                64
            )
            .is_some(),
            "s{i} cannot reach s1 on an idle hub"
        );
    }
    // Six stations each send 150 datagrams of 1000 bytes to s1 as fast as their sockets take
    // them: about 0.8 s of medium time offered at once, so their MACs must contend.
    let senders: Vec<_> = (2..=7)
        .map(|i| {
            let ns = lab.namespace(&format!("s{i}"));
            std::thread::spawn(move || {
                sys::in_namespace(&ns, move || {
                    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
                    let payload = [0x5au8; 1000];
                    for _ in 0..150 {
                        // A full device queue is the hub's business, not the test's.
                        let _ = socket.send_to(&payload, (Ipv4Addr::new(198, 18, 0, 1), 9));
                    }
                })
                .unwrap()
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    std::thread::sleep(Duration::from_millis(1500));
    let status = lab_status(&lab.name);
    let mut collisions = 0;
    for i in 2..=7 {
        let c = counters(&status, &format!("s{i}"));
        assert!(count(&c, "frames_out") >= 50, "s{i}: {c}");
        assert_eq!(
            count(&c, "late_collisions"),
            0,
            "200 m is within the slot: {c}"
        );
        assert_eq!(
            count(&c, "drops_medium"),
            count(&c, "excessive_collisions"),
            "{c}"
        );
        collisions += count(&c, "collisions");
    }
    let s1 = counters(&status, "s1");
    eprintln!("shared segment: {collisions} collisions; s1 {s1}");
    assert!(
        collisions > 20,
        "six saturated senders must collide: {status}"
    );
    assert!(count(&s1, "frames_received") >= 300, "{s1}");
    assert_eq!(
        count(&s1, "fcs_errors"),
        0,
        "no late collisions, no FCS errors"
    );
    let text = wirespeed(&["lab", "status", &lab.name]);
    assert!(text.stdout.contains("collisions"), "{}", text.stdout);
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

/// What one TCP transfer moved, as its receiver counted it.
struct Moved {
    bytes: usize,
    /// Receiver's rate from its first read to its last, bit/s (0 if fewer than two reads).
    rate: f64,
    complete: bool,
}

/// `bytes` over TCP from `from_ns` to `to` in `to_ns`, both ends stopped at `cap`: a
/// mismatched link stalls at times for tens of seconds, and a stall is a result here, not a
/// panic. Every wait is bounded by the cap (reads and writes time out every 250 ms).
fn capped_goodput(from_ns: &str, to_ns: &str, to: Ipv4Addr, bytes: usize, cap: Duration) -> Moved {
    let deadline = Instant::now() + cap;
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let to_ns = to_ns.to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&to_ns, move || {
            let listener = TcpListener::bind((to, 0)).unwrap();
            port_tx.send(listener.local_addr().unwrap().port()).unwrap();
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(Duration::from_millis(250)))
                .unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let (mut total, mut after_first) = (0usize, 0usize);
            let (mut first, mut last) = (None, None);
            while Instant::now() < deadline {
                match conn.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        total += n;
                        let now = Instant::now();
                        if first.is_none() {
                            first = Some(now);
                        } else {
                            after_first += n;
                        }
                        last = Some(now);
                    }
                    Err(e) if transient(&e) => {}
                    Err(e) => panic!("receiving: {e}"),
                }
            }
            let rate = match (first, last) {
                (Some(f), Some(l)) if l > f => after_first as f64 * 8.0 / (l - f).as_secs_f64(),
                _ => 0.0,
            };
            Moved {
                bytes: total,
                rate,
                complete: total == bytes,
            }
        })
        .unwrap()
    });
    let port = port_rx.recv().unwrap();
    sys::in_namespace(from_ns, move || {
        let mut conn =
            TcpStream::connect_timeout(&SocketAddr::from((to, port)), Duration::from_secs(5))
                .unwrap();
        conn.set_write_timeout(Some(Duration::from_millis(250)))
            .unwrap();
        let chunk = vec![0x5au8; 1 << 16];
        let mut sent = 0;
        while sent < bytes && Instant::now() < deadline {
            match conn.write(&chunk[..(bytes - sent).min(chunk.len())]) {
                Ok(n) => sent += n,
                Err(e) if transient(&e) => {}
                Err(e) => panic!("sending: {e}"),
            }
        }
        // Closing sends FIN after the queued bytes; the receiver ends at EOF or the cap.
    })
    .unwrap();
    receiver.join().unwrap()
}

#[test]
fn seed_003_table_7_duplex_mismatch_late_collisions_at_the_half_end_fcs_errors_at_the_full_end() {
    if !can_build_labs("duplex_mismatch") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    const BYTES: usize = 400_000;
    // A transfer that stalls is cut here and judged by what arrived.
    const CAP: Duration = Duration::from_secs(20);
    // What TCP can carry on the 10 Mbit/s link at best (full frames, timestamps): no machine
    // load can make a transfer faster than this, only slower.
    let ceiling = 10e6 * tcp_share();

    let matched = UpLab::up(&lab_file("duplex-matched.toml"));
    let (half, full) = (matched.namespace("half"), matched.namespace("full"));
    let m = capped_goodput(&half, &full, b, BYTES, CAP);
    let status = lab_status(&matched.name);
    for end in ["half", "full"] {
        let c = counters(&status, end);
        assert_eq!(count(&c, "late_collisions"), 0, "matched {end}: {c}");
        assert_eq!(count(&c, "fcs_errors"), 0, "matched {end}: {c}");
    }
    let name = matched.name.clone();
    drop(matched);
    assert_nothing_left(&name);

    let lab = UpLab::up(&lab_file("duplex-mismatch.toml"));
    let (half, full) = (lab.namespace("half"), lab.namespace("full"));
    let hf = capped_goodput(&half, &full, b, BYTES, CAP);
    let fh = capped_goodput(&full, &half, a, BYTES, CAP);
    let status = lab_status(&lab.name);
    let (h, f) = (counters(&status, "half"), counters(&status, "full"));
    let show = |t: &Moved| {
        format!(
            "{:.0} bit/s ({} of {BYTES} bytes{})",
            t.rate,
            t.bytes,
            if t.complete { "" } else { ", cut at the cap" }
        )
    };
    eprintln!(
        "duplex mismatch: half->full {}, full->half {}, matched {}; half end {h}; full end {f}",
        show(&hf),
        show(&fh),
        show(&m)
    );
    // Seed 003 Table 7: the half end counts the collisions, late ones among them; the full end
    // counts none and sees the half end's truncated frames as FCS errors. This is the
    // signature the physics guarantees, loaded machine or not.
    assert!(count(&h, "collisions") > 0, "{h}");
    assert!(count(&h, "late_collisions") > 0, "{h}");
    assert_eq!(count(&f, "collisions"), 0, "{f}");
    assert!(count(&f, "fcs_errors") > 0, "{f}");
    // Rates: load only slows a transfer, so the comparisons are with the link's ceiling, not
    // with another measured rate (a starved matched run made "0.7 x matched" flaky). The
    // emulator holds every transfer to the link rate. Each mismatched direction loses frames
    // to collisions and pays for them; which one pays more varies from run to run with modern
    // TCP (issue 21). Measured on this lab: the slower direction 0.25-0.35 of the ceiling, the
    // faster up to 0.54 (400 kB). So: the slower under 0.6 and the faster under 0.85, margins
    // of about 1.6x that no load can eat; a link that did not emulate the mismatch runs near
    // the ceiling (the matched pair: about 0.8) and fails the first. Each direction moved something
    // before any stall: the first window crosses an idle link.
    for (what, t) in [("matched", &m), ("half->full", &hf), ("full->half", &fh)] {
        assert!(t.bytes > 0, "{what}: nothing arrived in {CAP:?}");
        assert!(
            t.rate <= 1.05 * ceiling,
            "{what} {} is faster than the link's TCP ceiling {ceiling:.0} bit/s",
            show(t)
        );
    }
    let (slower, faster) = if hf.rate < fh.rate {
        (&hf, &fh)
    } else {
        (&fh, &hf)
    };
    assert!(
        slower.rate < 0.6 * ceiling,
        "the slower mismatched direction {} is over 0.6 of the link's TCP ceiling {ceiling:.0} bit/s",
        show(slower)
    );
    assert!(
        faster.rate < 0.85 * ceiling,
        "the faster mismatched direction {} is near the link's TCP ceiling {ceiling:.0} bit/s: the mismatch cost nothing",
        show(faster)
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

/// `diagnose --peer` from the half end of the mismatched pair, against an agent in the full end
/// (issue 21 item 6). The lab's ports are TAP devices without a PHY; the emulator runs their MAC
/// and counts the late collisions, and `diagnose` under `lab exec` reads them as the interface's
/// 802.3 counters. With them the verdict is the seed's, a counter-backed duplex mismatch, even
/// when a modern TCP keeps the asymmetry below the counterless 3x (2.0 to 6.1x in
/// bench/RESULTS.md, 1.0 to 2.2x in six runs on a loaded machine): without the emulated
/// counters, or with the ratio alone, this fails in most runs.
#[test]
fn diagnose_peer_across_a_duplex_mismatch_reaches_the_seeds_verdict() {
    if !can_build_labs("diagnose_peer") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let lab = UpLab::up(&lab_file("duplex-mismatch.toml"));
    let full = lab.namespace("full");
    let agent = sys::in_namespace(&full, || {
        wirespeed_net::Agent::bind(
            "198.18.0.2:0".parse().unwrap(),
            wirespeed_net::AgentConfig::default(),
        )
    })
    .unwrap()
    .unwrap();
    let port = agent.local_addr().unwrap().port().to_string();
    let (handle, thread) = agent.spawn().unwrap();
    let run = wirespeed(&[
        "lab",
        "exec",
        &lab.name,
        "half",
        "--",
        env!("CARGO_BIN_EXE_wirespeed"),
        "diagnose",
        "eth0",
        "--peer",
        "198.18.0.2",
        "-p",
        &port,
        "-t",
        "3s",
        "--json",
    ]);
    handle.stop();
    thread.join().unwrap().unwrap();
    let lab_counters = lab_status(&lab.name);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let peer = &doc["result"]["peer"];
    eprintln!("diagnose --peer across the mismatch: {peer}");
    for dir in ["to_peer", "from_peer"] {
        let b = peer[dir]["bits_per_second"].as_f64().unwrap();
        assert!(b > 0.0 && b < 10e6, "{dir}: {peer}");
    }
    // The emulator saw the mismatch ...
    assert!(count(&counters(&lab_counters, "half"), "late_collisions") > 0);
    // ... and diagnose read it as eth0's MAC counters ...
    let eth0 = &doc["result"]["interfaces"][0];
    assert!(
        eth0["link"]["source"]
            .as_str()
            .unwrap()
            .contains("MAC counters from lab"),
        "{eth0}"
    );
    // ... as a MAC's counters, not a TAP's: no "collisions do not apply" beside the collisions
    // the lab counted, and the half-duplex end's own finding is the mismatch (issue 33).
    assert_eq!(eth0["kind"]["kind"], "emulated_mac", "{eth0}");
    let local: Vec<&str> = eth0["diagnosis"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(local.contains(&"duplex_mismatch_half_side"), "{eth0}");
    assert!(!local.contains(&"no_physical_layer"), "{eth0}");
    let verdicts = doc["verdicts"].to_string();
    assert!(
        !verdicts.contains("do not apply") && !verdicts.contains("no physical layer"),
        "{verdicts}"
    );
    // ... so the verdict is the seed's: a duplex mismatch, backed by counters.
    let findings = peer["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{peer}");
    assert_eq!(findings[0]["severity"], "fault", "{peer}");
    assert_eq!(findings[0]["confidence"], "high", "{peer}");
    assert!(
        findings[0]["title"]
            .as_str()
            .unwrap()
            .starts_with("duplex mismatch"),
        "{peer}"
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

/// The retransmission timer's backoff (`backoff:` of `ss -tin`, 0 when absent) of each TCP
/// connection in `ns` now.
fn backoffs(ns: &str) -> Vec<f64> {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "ss", "-tin", "state", "established"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("rto:"))
        .map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("backoff:")?.parse().ok())
                .unwrap_or(0.0)
        })
        .collect()
}

/// `cap` of TCP from `from_ns` to `to` in `to_ns` (a bounded transfer that may stall: errors
/// end it quietly), sampling the sender's retransmission backoff every 250 ms in the second
/// half of it. Returns the bytes that arrived and the samples.
fn sender_backoffs(from_ns: &str, to_ns: &str, to: Ipv4Addr, cap: Duration) -> (usize, Vec<f64>) {
    let deadline = Instant::now() + cap;
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let to_ns2 = to_ns.to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&to_ns2, move || {
            let listener = TcpListener::bind((to, 0)).unwrap();
            port_tx.send(listener.local_addr().unwrap().port()).unwrap();
            let Ok((mut conn, _)) = listener.accept() else {
                return 0;
            };
            conn.set_read_timeout(Some(Duration::from_millis(250)))
                .unwrap();
            let (mut buf, mut total) = (vec![0u8; 1 << 16], 0usize);
            while Instant::now() < deadline {
                match conn.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => total += n,
                    Err(e) if transient(&e) => {}
                    Err(_) => break,
                }
            }
            total
        })
        .unwrap()
    });
    let port = port_rx.recv().unwrap();
    let from_ns2 = from_ns.to_string();
    let sender = std::thread::spawn(move || {
        sys::in_namespace(&from_ns2, move || {
            let Ok(mut conn) =
                TcpStream::connect_timeout(&SocketAddr::from((to, port)), Duration::from_secs(5))
            else {
                return;
            };
            conn.set_write_timeout(Some(Duration::from_millis(250)))
                .unwrap();
            let chunk = vec![0x5au8; 1 << 16];
            // Bounded by the cap; far more than the link carries in it.
            while Instant::now() < deadline {
                match conn.write(&chunk) {
                    Ok(_) => {}
                    Err(e) if transient(&e) => {}
                    Err(_) => break,
                }
            }
        })
        .unwrap()
    });
    let mut samples = Vec::new();
    std::thread::sleep(cap / 2);
    while Instant::now() + Duration::from_millis(300) < deadline {
        samples.extend(backoffs(from_ns));
        std::thread::sleep(Duration::from_millis(250));
    }
    sender.join().unwrap();
    (receiver.join().unwrap(), samples)
}

/// Issue 21 item 3, the seed's hosts' timer. Seed 003 §5: the retransmission timer follows the
/// round trip, "continuously updated", from each transmission to its ACK. Across the mismatch
/// of slow hosts (labs/duplex-mismatch-1990s-hosts.toml) every ACK after a loss covers a
/// retransmitted segment; Linux without timestamps takes no sample from such an ACK (Karn),
/// so its timer's backoff never resets and the timeout doubles (measured: backoff 2 to 5, rto
/// 816 to 6,528 ms in the first 6 s; 16 kB in 23 s). With timestamps on, as the lab file has
/// them, every ACK is a sample and resets the backoff (measured: none, at times 1). The
/// kernel's own state, not times measured here: medians of 0-1 against 3-5.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn seed_003_hosts_timer_follows_every_ack_only_with_timestamps() {
    if !can_build_labs("seed_003_hosts_timer") {
        return;
    }
    let _guard = LAB_LOCK.alone();
    let text = std::fs::read_to_string(lab_file("duplex-mismatch-1990s-hosts.toml")).unwrap();
    let modelled = "tcp = { tcp_timestamps = 1 }\n";
    assert!(text.contains(modelled), "the lab file models the timer");
    const CAP: Duration = Duration::from_secs(8);
    let mut medians = Vec::new();
    for (tag, text) in [
        ("hosts-ts", text.clone()),
        ("hosts-nots", text.replace(modelled, "")),
    ] {
        let path = super::temp_topology(tag, &text);
        let lab = UpLab::up(&path.display().to_string());
        let (half, full) = (lab.namespace("half"), lab.namespace("full"));
        let (bytes, mut b) = sender_backoffs(&half, &full, Ipv4Addr::new(198, 18, 0, 2), CAP);
        eprintln!("{tag}: half -> full {bytes} bytes in {CAP:?}; sender's backoff {b:?}");
        assert!(!b.is_empty(), "{tag}: no connection seen in {half}");
        b.sort_by(f64::total_cmp);
        medians.push(b[b.len() / 2]);
        drop(lab);
        std::fs::remove_file(path).unwrap();
    }
    let (with, without) = (medians[0], medians[1]);
    assert!(
        with <= 1.0,
        "with timestamps the timer's median backoff is {with}: the ACKs did not reset it"
    );
    assert!(
        without >= 2.0,
        "without timestamps the median backoff is {without}: it did not compound (the model would not be needed)"
    );
}

/// A timed-out, would-block or interrupted read or write: try again until the test's deadline.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}
