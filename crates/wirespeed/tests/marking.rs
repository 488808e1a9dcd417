//! `-S/--tos` and `--mptcp`: what the sockets carried, read back at both ends, checked on the
//! wire where the test may capture (root), and the fallback to TCP reported, not hidden.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::util::{ServeProcess, assert_one_line_error, wirespeed};

fn mptcp_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|s| s.trim() == "1")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Each stream end's (`tos`, `mptcp`) as the document reports them.
fn socket_marks(doc: &Value) -> Vec<(Option<u64>, Option<bool>)> {
    let mut out = Vec::new();
    for s in doc["result"]["end"]["streams"].as_array().unwrap() {
        for end in ["sender", "receiver"] {
            if s[end].is_object() {
                let socket = &s[end]["socket"];
                out.push((socket["tos"].as_u64(), socket["mptcp"].as_bool()));
            }
        }
    }
    out
}

#[test]
fn tos_and_mptcp_are_read_back_at_both_ends() {
    let mut args = vec!["tcp", "-t", "0.5", "-P", "2", "-S", "ef", "--json"];
    if mptcp_enabled() {
        args.push("--mptcp");
    } else {
        eprintln!("net.mptcp.enabled is not 1 here: only -S is checked");
    }
    let run = wirespeed(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let marks = socket_marks(&doc);
    assert_eq!(marks.len(), 4, "two streams, both ends: {marks:?}");
    for (tos, mptcp) in marks {
        assert_eq!(tos, Some(0xb8), "EF is DSCP 46, TOS 0xb8");
        if mptcp_enabled() {
            assert_eq!(mptcp, Some(true), "the in-process agent listens with MPTCP");
        }
    }
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("fell back"), "{warnings}");
    // The text view names the marking in its header.
    let text = wirespeed(&["udp", "-t", "0.3", "-b", "1M", "-S", "0x20"]);
    assert_eq!(text.status, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("TOS 0x20 (DSCP 8, CS1)"),
        "{}",
        text.stdout
    );
}

#[test]
fn mptcp_against_an_agent_without_it_falls_back_and_says_so() {
    if !mptcp_enabled() {
        eprintln!("net.mptcp.enabled is not 1 here: nothing to fall back from");
        return;
    }
    let plain = ServeProcess::start(&[]);
    let target = format!("127.0.0.1:{}", plain.port);
    let run = wirespeed(&["tcp", &target, "-t", "0.5", "--mptcp", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        socket_marks(&doc).iter().all(|m| m.1 == Some(false)),
        "{:?}",
        socket_marks(&doc)
    );
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("1 of 1 connections fell back to plain TCP")
            && warnings.contains("serve --mptcp"),
        "{warnings}"
    );
    drop(plain);
    let multipath = ServeProcess::start(&["--mptcp"]);
    let target = format!("127.0.0.1:{}", multipath.port);
    let run = wirespeed(&["tcp", &target, "-t", "0.5", "--mptcp", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        socket_marks(&doc).iter().all(|m| m.1 == Some(true)),
        "{:?}",
        socket_marks(&doc)
    );
    // A plain client is served by an MPTCP agent as before.
    let run = wirespeed(&["tcp", &target, "-t", "0.3"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
}

#[test]
fn bad_tos_and_mptcp_over_udp_are_one_line_errors() {
    let run = wirespeed(&["tcp", "-S", "300"]);
    assert_one_line_error(&run, "over 255");
    let run = wirespeed(&["tcp", "-S", "fast"]);
    assert_one_line_error(&run, "DSCP name");
    let run = wirespeed(&["udp", "--mptcp"]);
    assert_one_line_error(&run, "--mptcp is for TCP tests");
}

/// The TOS byte is on the packets themselves, in both directions: a packet socket on loopback
/// counts the IPv4 packets that carry this test's unusual class (AF31, 0x68; no other test
/// marks its traffic) while the agent sends (`-R`), so the large ones are the agent's.
/// Counts, while `args` runs, the IPv4 packets on loopback whose class is `tos` (ECN bits
/// aside), split at 1000 bytes: (large, small). None when this is not root (no packet socket).
fn marked_on_the_wire(tos: u8, args: &[&str]) -> Option<(u64, u64)> {
    if !is_root() {
        eprintln!("not root: no packet socket, the wire is not checked");
        return None;
    }
    use socket2::{Domain, Protocol, Socket, Type};
    const ETH_P_ALL: u16 = 0x0003;
    let capture = Socket::new(
        Domain::PACKET,
        Type::RAW,
        Some(Protocol::from(i32::from(ETH_P_ALL.to_be()))),
    )
    .expect("a packet socket");
    // Only IPv4 packets of this class reach the socket, cut to 128 bytes: the other tests of a
    // full run move gigabits over loopback at the same time, and an unfiltered capture lost the
    // few marked packets among them (its receive queue overflowed; seen once in a full run).
    use socket2::SockFilter;
    let filter = [
        SockFilter::new(0x28, 0, 0, 12),             // ldh [12]: EtherType
        SockFilter::new(0x15, 0, 4, 0x0800),         // not IPv4: drop
        SockFilter::new(0x30, 0, 0, 15),             // ldb [15]: TOS
        SockFilter::new(0x54, 0, 0, 0xfc),           // ECN bits aside
        SockFilter::new(0x15, 0, 1, u32::from(tos)), // another class: drop
        SockFilter::new(0x06, 0, 0, 128),            // keep 128 bytes
        SockFilter::new(0x06, 0, 0, 0),              // drop
    ];
    capture.attach_filter(&filter).expect("a BPF filter");
    let _ = capture.set_recv_buffer_size(4 << 20);
    capture
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let test = std::thread::spawn(move || {
        let args: Vec<&str> = owned.iter().map(String::as_str).collect();
        wirespeed(&args)
    });
    let (mut large, mut small) = (0u64, 0u64);
    let mut buf = [0u8; 128];
    let deadline = Instant::now() + Duration::from_secs(30);
    // Loopback hands each packet to the capture as it is sent, so once the test has ended its
    // packets are all queued here: read until a read finds the queue empty after the end (the
    // loop used to stop at the end, leaving what a slow reader had not yet read: "0 large, 1
    // small" at four test threads under load 10-16).
    while Instant::now() < deadline {
        let ended = test.is_finished();
        let Ok(n) = std::io::Read::read(&mut &capture, &mut buf) else {
            if ended {
                break;
            }
            continue;
        };
        let frame = &buf[..n];
        // Loopback frames carry a 14-byte Ethernet header; IPv4 is ethertype 0x0800.
        if frame.len() < 18 || frame[12..14] != [0x08, 0x00] || frame[14] >> 4 != 4 {
            continue;
        }
        if frame[15] & !0b11 == tos {
            if u16::from_be_bytes([frame[16], frame[17]]) > 1000 {
                large += 1;
            } else {
                small += 1;
            }
        }
    }
    let run = test.join().unwrap();
    assert_eq!(run.status, 0, "{}", run.stderr);
    eprintln!("{args:?}: TOS 0x{tos:02x} on {large} large and {small} small packets");
    Some((large, small))
}

/// The TOS byte is on the packets themselves, in both directions: while the agent sends
/// (`-R`), the large marked packets are its data and the small ones the client's ACKs (AF31,
/// 0x68: no other test marks its traffic with it).
#[test]
fn tos_is_on_the_wire_both_ways() {
    let Some((large, small)) = marked_on_the_wire(0x68, &["tcp", "-t", "0.5", "-R", "-S", "af31"])
    else {
        return;
    };
    assert!(large >= 10, "the agent's data packets carry AF31: {large}");
    assert!(small >= 1, "the client's ACKs carry AF31 too: {small}");
}

/// `latency -S` marks the probes this end sends (echoes, connects, requests) and not the load:
/// CS5 (0xa0) is on small packets only.
#[test]
fn latency_marks_its_probes_and_not_the_load() {
    let Some((large, small)) = marked_on_the_wire(
        0xa0,
        &[
            "latency", "--idle", "0.5s", "-t", "1s", "-S", "cs5", "--json",
        ],
    ) else {
        return;
    };
    assert!(small >= 10, "the probes carry CS5: {small}");
    assert_eq!(large, 0, "the bulk load stays unmarked");
}

/// `probe -S` marks its echo requests: CS3 (0x60) on the probes of both sizes.
#[test]
fn probe_marks_its_echo_requests() {
    let Some((large, small)) = marked_on_the_wire(
        0x60,
        &[
            "probe",
            "127.0.0.1",
            "-c",
            "4",
            "--sizes",
            "100,1200",
            "-S",
            "cs3",
        ],
    ) else {
        return;
    };
    assert!(large >= 4 && small >= 4, "{large} large, {small} small");
}

/// `sweep -S` marks every run's data: AF21 (0x48) on the sender's full-size segments.
#[test]
fn sweep_marks_every_run() {
    let results =
        std::env::temp_dir().join(format!("ws-marking-sweep-{}.jsonl", std::process::id()));
    let path = results.display().to_string();
    let marked = marked_on_the_wire(
        0x48,
        &[
            "sweep",
            "--snd",
            "4",
            "--rcv",
            "4",
            "--reps",
            "1",
            "-n",
            "1MiB",
            "-S",
            "af21",
            "--results",
            &path,
        ],
    );
    let _ = std::fs::remove_file(&results);
    let Some((large, _)) = marked else {
        return;
    };
    assert!(large >= 10, "the runs' data carry AF21: {large}");
}

/// `load -S` marks the agents' datagrams (AF13, 0x38: no other test uses it), the plan records
/// the byte, and no agent is reported as unmarked.
#[test]
fn load_marks_the_agents_datagrams() {
    let args = [
        "load",
        "--local",
        "2",
        "--hosts",
        "2",
        "--settle",
        "0.1s",
        "--transmit",
        "0.5s",
        "--measure",
        "0.3s",
        "--cooldown",
        "0.1s",
        "--no-model",
        "-S",
        "af13",
        "--json",
    ];
    let run = wirespeed(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["parameters"]["tos"], 0x38);
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("TOS"), "{warnings}");
    if let Some((large, small)) = marked_on_the_wire(0x38, &args) {
        assert!(large + small >= 10, "{large} large, {small} small");
    }
    assert_one_line_error(
        &wirespeed(&["load", "--local", "2", "-S", "ef", "--raw"]),
        "cannot be used with '--raw",
    );
}
