//! The lab at today's link rates (issue 20): losses on the host side of a TAP counted where
//! they happen, the emulator's own cost in `lab status`; `tcp -b` held across a faster link
//! (issue 34); `tcp` across a 64 kbit/s link drains to its verdict (issue 31).

use std::net::{Ipv4Addr, UdpSocket};
use std::process::Command;
use std::time::{Duration, Instant};

use wirespeed_lab::device::parse_net_dev;
use wirespeed_lab::sys;

use super::{LAB_LOCK, UpLab, can_build_labs, lab_status, temp_topology};

const FAST_ETHERNET: &str = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"100M\"\ndelay = \"1ms\"\nipv6 = false\n";

const GIGABIT: &str = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1G\"\ndelay = \"100us\"\nqueue = 1000\nipv6 = false\n";

const MODEM: &str = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"64k\"\ndelay = \"15ms\"\nipv6 = false\n";

/// The `/proc/net/dev` line of `dev` in namespace `ns`, read independently of the lab.
fn net_dev(ns: &str, dev: &str) -> wirespeed_lab::device::NetDevLine {
    let text = sys::in_namespace(ns, || std::fs::read_to_string("/proc/thread-self/net/dev"))
        .unwrap()
        .unwrap();
    parse_net_dev(&text, dev).unwrap()
}

#[test]
fn frames_dropped_by_a_full_tap_queue_on_the_host_side_are_counted_in_lab_status() {
    if !can_build_labs("host_side_drops") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let file = temp_topology("host-side", GIGABIT);
    let lab = UpLab::up(&file.display().to_string());
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    // A TAP's host-side ring is txqueuelen frames: 2 cannot absorb a burst the emulator has
    // not yet been woken for.
    let out = Command::new("ip")
        .args(["-n", &h1, "link", "set", "eth0", "txqueuelen", "2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A burst of 50,000 small datagrams as fast as one thread sends them (bounded in count
    // and in time), to the discard port of h2 inside the lab.
    let sent = sys::in_namespace(&h1, || {
        let sock = UdpSocket::bind((Ipv4Addr::new(198, 18, 0, 1), 0)).unwrap();
        let payload = [0u8; 18];
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut sent = 0u64;
        while sent < 50_000 && Instant::now() < deadline {
            if sock
                .send_to(&payload, (Ipv4Addr::new(198, 18, 0, 2), 9))
                .is_ok()
            {
                sent += 1;
            }
        }
        sent
    })
    .unwrap();
    // The host may still send a frame of its own (a neighbour probe) while the device and the
    // lab are read: their counts are compared only from a reading that the device's counters
    // bracket unchanged (at most 5 s of readings). Seen once at four test threads under load
    // 10-16: the lab had counted one frame more than the device read just before it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let (device, status) = loop {
        std::thread::sleep(Duration::from_millis(300));
        let before = net_dev(&h1, "eth0");
        let status = lab_status(&lab.name);
        let after = net_dev(&h1, "eth0");
        let still = (before.tx_packets, before.tx_dropped) == (after.tx_packets, after.tx_dropped);
        if still || Instant::now() >= deadline {
            break (after, status);
        }
    };
    let port = &status["result"]["ports"][0];
    assert_eq!(port["from"], "h1");
    let dropped = port["device"]["sender_tx_dropped"].as_u64().unwrap();
    let offered = port["counters"]["frames_in"].as_u64().unwrap();
    eprintln!(
        "sent {sent}; h1 eth0 tx {} dropped {}; lab: offered {offered}, drop host {dropped}",
        device.tx_packets, device.tx_dropped
    );
    assert!(dropped > 0, "the burst overflowed no TAP queue: {port}");
    // Every frame the host handed to its interface is either one the emulator read or one
    // the TAP dropped, and lab status shows both.
    assert_eq!(dropped, device.tx_dropped);
    assert_eq!(offered, device.tx_packets);
    assert_eq!(port["device"]["sender_tx_queue_len"], 2);
    // Seen at the receiver: the frames the emulator forwarded, nothing lost after it.
    let rx = net_dev(&h2, "eth0");
    assert_eq!(
        port["device"]["receiver_rx_dropped"].as_u64(),
        Some(rx.rx_dropped)
    );
    let text = crate::util::wirespeed(&["lab", "status", &lab.name]);
    assert!(text.stdout.contains("drop host"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("the lab, not the link, is the bottleneck"),
        "{}{}",
        text.stdout,
        text.stderr
    );
    // The emulator's cost is there too: CPU per frame of what it read.
    assert!(
        port["cost"]["cpu_seconds"].as_f64().unwrap() > 0.0,
        "{port}"
    );
    assert!(
        port["cost"]["cpu_ns_per_frame"].as_f64().unwrap() > 0.0,
        "{port}"
    );
    drop(lab);
    let _ = std::fs::remove_file(file);
}

/// True if a TCP socket of namespace `ns` listens on `port` (IPv4 or IPv6).
fn listens_on(ns: &str, port: u16) -> bool {
    let local = format!(":{port:04X} ");
    sys::in_namespace(ns, move || {
        ["/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .any(|table| {
                // Fields: sl, local address, remote address, state (0A is LISTEN), ...
                table.lines().skip(1).any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3 && format!("{} ", f[1]).ends_with(&local) && f[3] == "0A"
                })
            })
    })
    .unwrap_or(false)
}

/// iperf3's receiver rate from h1 to h2 across `lab`, after `-O 1` of slow start; `None` if
/// iperf3 is not installed.
fn iperf3_rate(h1: &str, h2: &str, seconds: u32) -> Option<f64> {
    Command::new("iperf3").arg("--version").output().ok()?;
    let port = "5297";
    let mut server = Command::new("ip")
        .args([
            "netns",
            "exec",
            h2,
            "iperf3",
            "-s",
            "-1",
            "-B",
            "198.18.0.2",
        ])
        .args(["-p", port])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    // iperf3 -s -1 would take a probing connection for its one test: watch its socket appear
    // in h2's own table instead (bounded).
    let deadline = Instant::now() + Duration::from_secs(5);
    while !listens_on(h2, 5297) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new("timeout")
        .args([&(seconds + 10).to_string(), "ip", "netns", "exec", h1])
        .args(["iperf3", "-c", "198.18.0.2", "-p", port, "-J", "-O", "1"])
        .args(["-t", &seconds.to_string()])
        .output()
        .unwrap();
    // The server exits by itself once it has written its end of the test (bounded).
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if server.try_wait().ok().flatten().is_none() {
        sys::terminate(server.id());
    }
    let _ = server.wait();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    doc["end"]["sum_received"]["bits_per_second"].as_f64()
}

#[test]
fn tcp_across_a_gigabit_lab_comes_near_the_ceiling_and_near_iperf3() {
    if !can_build_labs("gigabit") {
        return;
    }
    // Alone: tcp's rate through a gigabit emulated link is judged against iperf3's in a run
    // before it (70% or more), which another lab's load would slow one of and not the other.
    let _guard = LAB_LOCK.alone();
    let file = temp_topology("gigabit", GIGABIT);
    let lab = UpLab::up(&file.display().to_string());
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let Some(iperf) = iperf3_rate(&h1, &h2, 3) else {
        eprintln!("gigabit: skipped: iperf3 is not installed (scripts/install-deps.sh)");
        return;
    };
    // 120 MB: about a second at the ceiling, after the connection's first read. The two tools
    // run one after the other, so a busy spell of the machine can fall on one only (474.9
    // against iperf3's 905.1 Mbit/s at six test threads under load 6-10): a run short of 70%
    // is repeated once, and the better of the two is what this tool reaches on this lab.
    let goodput = || super::tcp_goodput(&h1, &h2, Ipv4Addr::new(198, 18, 0, 2), 120_000_000);
    let first = goodput();
    let ours = if first >= iperf * 0.7 {
        first
    } else {
        let again = goodput();
        eprintln!(
            "gigabit: in-process TCP {:.1} Mbit/s, again {:.1}",
            first / 1e6,
            again / 1e6
        );
        first.max(again)
    };
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let status = lab_status(&lab.name);
    let port = &status["result"]["ports"][0];
    eprintln!(
        "1 Gbit/s lab: ceiling {:.1} Mbit/s, iperf3 {:.1} ({:.1}%), in-process TCP {:.1} ({:.1}%); lateness {}; cost {}; device {}",
        ceiling / 1e6,
        iperf / 1e6,
        iperf / ceiling * 100.0,
        ours / 1e6,
        ours / ceiling * 100.0,
        port["lateness"],
        port["cost"],
        port["device"]
    );
    // The emulated wire is the limit: neither tool gets more than the ceiling (1% for the
    // receiver's clock against the emulator's).
    assert!(iperf <= ceiling * 1.01, "iperf3 {iperf} above {ceiling}");
    assert!(ours <= ceiling * 1.01, "tcp {ours} above {ceiling}");
    // Loosely near it, and like iperf3 on the same lab in the same test (a busy CI machine
    // costs both alike).
    assert!(iperf >= ceiling * 0.6, "iperf3 {iperf} far below {ceiling}");
    assert!(ours >= iperf * 0.7, "tcp {ours} far below iperf3 {iperf}");
    // A plain full-duplex link carries super-packets where the kernel grants the offloads:
    // each frame is charged (the frames they carried are among those offered) and no frame is
    // held back more than the 64 us bound.
    let cost = &port["cost"];
    if cost["offloads"] == true {
        let (supers, frames) = (
            cost["super_packets"].as_u64().unwrap(),
            cost["super_packet_frames"].as_u64().unwrap(),
        );
        assert!(supers > 0 && frames >= 2 * supers, "{cost}");
        assert!(frames <= port["counters"]["frames_in"].as_u64().unwrap());
        assert!(cost["held_back_max_us"].as_f64().unwrap() <= 64.0, "{cost}");
    }
    // The percentiles are ordered and the p99 below any max that is an outlier.
    let l = &port["lateness"];
    assert!(l["p50_us"].as_f64() <= l["p99_us"].as_f64());
    assert!(l["p99_us"].as_f64() <= l["max_us"].as_f64());
    drop(lab);
    let _ = std::fs::remove_file(file);
}

/// The value of counter `name` of protocol `proto` ("Tcp", "Ip") in `/proc/net/snmp` of `ns`.
fn snmp(ns: &str, proto: &str, name: &str) -> u64 {
    let text = sys::in_namespace(ns, || std::fs::read_to_string("/proc/thread-self/net/snmp"))
        .unwrap()
        .unwrap();
    let prefix = format!("{proto}:");
    let mut lines = text.lines().filter(|l| l.starts_with(&prefix));
    let (names, values) = (lines.next().unwrap(), lines.next().unwrap());
    let i = names.split_whitespace().position(|n| n == name).unwrap();
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}

#[test]
fn super_packets_with_a_lost_segment_are_cut_into_frames_the_receiver_accepts() {
    if !can_build_labs("lossy_super_packets") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let file = temp_topology(
        "lossy-super",
        &GIGABIT.replace("queue = 1000\n", "queue = 1000\nloss = 0.005\n"),
    );
    let lab = UpLab::up(&file.display().to_string());
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let errors = |ns: &str| snmp(ns, "Tcp", "InCsumErrors") + snmp(ns, "Ip", "InHdrErrors");
    let before = errors(&h2);
    // 20 MB with 0.5% of the frames lost: every byte arrives (tcp_goodput checks the count).
    let rate = super::tcp_goodput(&h1, &h2, Ipv4Addr::new(198, 18, 0, 2), 20_000_000);
    let status = lab_status(&lab.name);
    let port = &status["result"]["ports"][0];
    eprintln!(
        "lossy 1 Gbit/s lab: {:.1} Mbit/s; counters {}; cost {}",
        rate / 1e6,
        port["counters"],
        port["cost"]
    );
    assert!(port["counters"]["drops_loss"].as_u64().unwrap() > 0);
    if port["cost"]["offloads"] == true {
        // Some super-packet lost a segment and was cut; the frames cut from it passed the
        // receiver's IP and TCP checksum checks.
        assert!(
            port["cost"]["segmented_in_software"].as_u64().unwrap() > 0,
            "{}",
            port["cost"]
        );
    }
    assert_eq!(errors(&h2), before, "the receiver counted bad checksums");
    drop(lab);
    let _ = std::fs::remove_file(file);
}

/// Issue 34: `tcp -b 20M` across a 100 Mbit/s link, both ways at once (`--bidir`): the
/// client's sender and the agent's each hold the cap within 2%, though the link would carry
/// almost five times more, and each direction's verdict names the cap, not the link, as the
/// bound.
#[test]
fn tcp_b_holds_the_cap_across_a_faster_link() {
    if !can_build_labs("tcp_b") {
        return;
    }
    // Alone: each direction is judged to hold its cap within 2%.
    let _guard = LAB_LOCK.alone();
    let file = temp_topology("tcp-b", FAST_ETHERNET);
    let lab = UpLab::up(&file.display().to_string());
    let _ = std::fs::remove_file(&file);
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let agent = crate::util::ServeProcess::start_in(Some(&h2), "198.18.0.2", &[]);
    let port = agent.port.to_string();
    let out = Command::new("ip")
        .args(["netns", "exec", &h1, env!("CARGO_BIN_EXE_wirespeed")])
        .args(["tcp", "198.18.0.2", "-p", &port, "--bidir", "-b", "20M"])
        .args(["-t", "3", "-i", "0", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let end = &doc["result"]["end"];
    let rate = |sum: &str| end[sum]["bits_per_second"].as_f64().unwrap();
    let (up, down) = (rate("sum_received"), rate("sum_received_bidir_reverse"));
    eprintln!(
        "tcp -b 20M --bidir across 100 Mbit/s: client->agent {:.3} Mbit/s, agent->client {:.3} Mbit/s",
        up / 1e6,
        down / 1e6
    );
    // Each within 2% of what its sender offered: the cap less the share of its time the
    // sender gave up behind it, its host too busy to keep the socket filled (counted by the
    // sender, and warned of over 1%).
    let warnings = doc["warnings"].to_string();
    for (way, flow, got) in [
        ("client->agent", "upload", up),
        ("agent->client", "download", down),
    ] {
        let given_up = crate::throughput::share_given_up(&doc, flow);
        let offered = 20e6 * (1.0 - given_up);
        assert!(
            (got - offered).abs() <= 0.02 * 20e6,
            "{way}: {got} bit/s is not within 2% of the 20 Mbit/s cap less the {:.2}% its \
             sender gave up ({offered} bit/s)",
            given_up * 100.0
        );
        if given_up > 0.01 {
            assert!(warnings.contains("behind its cap"), "{warnings}");
        }
    }
    let verdicts: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for (way, got) in [("client->agent", up), ("agent->client", down)] {
        // A sender that gave up more than 5% behind its cap is "short of the cap" (with the
        // warning that says why), as the verdict's rule says.
        let capped = got >= 0.95 * 20e6;
        let named = |v: &str| {
            v.starts_with(&format!("{way}: "))
                && if capped {
                    v.contains("capped at 20 Mbit/s by -b") && v.contains("envelope ceiling is 9")
                } else {
                    v.contains("of the -b cap of 20 Mbit/s arrived")
                }
        };
        assert!(verdicts.iter().any(|v| named(v)), "{verdicts:?}");
    }
    drop(agent);
    drop(lab);
}

/// Issue 31: what an autotuned sender has queued when `-t 2` ends takes several seconds to
/// cross 64 kbit/s. The agent used to stop the test 5 s past -t (partial, exit 3, no verdict,
/// as 30 of 100 random labs with 56-265 kbit/s bottlenecks did); it now waits while the data
/// still arrives, and the verdict names the link.
#[test]
fn tcp_across_64_kbit_drains_what_was_queued_and_names_the_link() {
    if !can_build_labs("tcp_64k") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let file = temp_topology("tcp-64k", MODEM);
    let lab = UpLab::up(&file.display().to_string());
    let _ = std::fs::remove_file(&file);
    let h1 = lab.namespace("h1");
    let h2 = lab.namespace("h2");
    let agent = crate::util::ServeProcess::start_in(Some(&h2), "198.18.0.2", &[]);
    let port = agent.port.to_string();
    let began = Instant::now();
    let out = Command::new("ip")
        .args(["netns", "exec", &h1, env!("CARGO_BIN_EXE_wirespeed")])
        .args(["tcp", "198.18.0.2", "-p", &port, "-t", "2", "-i", "0"])
        // 16 KiB writes: the last one, blocked past -t, adds 2 s of drain instead of 16.
        .args(["-l", "16K"])
        .output()
        .unwrap();
    let took = began.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("tcp -t 2 across 64 kbit/s took {took:.1?}:\n{stdout}{stderr}");
    assert!(out.status.success(), "{stderr}");
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("verdict:"))
        .unwrap_or_else(|| panic!("no verdict: {stdout}"));
    assert!(verdict.contains("link h1-h2 (64 kbit/s"), "{verdict}");
    drop(agent);
    drop(lab);
}
