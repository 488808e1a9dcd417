//! `wirespeed diagnose` end to end: the loopback, a veth pair in a namespace the test makes,
//! and counters of NICs this machine does not have, replayed from a sysfs-like tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{Netns, Run, Scratch, assert_one_line_error, unique_name, wirespeed};

fn json(run: &Run) -> serde_json::Value {
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("one JSON document")
}

fn wirespeed_env(args: &[&str], sysfs: &Path) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .env("WIRESPEED_SYSFS_NET", sysfs)
        .output()
        .expect("the wirespeed binary runs");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// A directory laid out like /sys/class/net ([`FakeSysfs::net`]) in a scratch directory
/// removed when dropped.
struct FakeSysfs(Scratch);

impl FakeSysfs {
    fn new() -> FakeSysfs {
        let base = Scratch::new("sysfs");
        std::fs::create_dir_all(base.path("net")).unwrap();
        FakeSysfs(base)
    }

    /// What stands for /sys/class/net (`WIRESPEED_SYSFS_NET`).
    fn net(&self) -> PathBuf {
        self.0.path("net")
    }

    /// A NIC bound to `driver` with these link settings and counters (others are 0).
    fn nic(&self, name: &str, speed: u32, duplex: &str, counters: &[(&str, u64)]) -> PathBuf {
        const ALL: [&str; 17] = [
            "rx_packets",
            "tx_packets",
            "rx_bytes",
            "tx_bytes",
            "collisions",
            "rx_crc_errors",
            "rx_frame_errors",
            "rx_length_errors",
            "tx_window_errors",
            "tx_aborted_errors",
            "tx_carrier_errors",
            "rx_fifo_errors",
            "tx_fifo_errors",
            "rx_missed_errors",
            "rx_over_errors",
            "rx_dropped",
            "tx_dropped",
        ];
        let dir = self.net().join(name);
        std::fs::create_dir_all(dir.join("statistics")).unwrap();
        std::fs::create_dir_all(self.net().join("drivers").join("iprb")).unwrap();
        std::fs::create_dir_all(dir.join("device")).unwrap();
        std::os::unix::fs::symlink(
            self.net().join("drivers").join("iprb"),
            dir.join("device").join("driver"),
        )
        .unwrap();
        for (file, text) in [
            ("type", "1".to_string()),
            ("speed", speed.to_string()),
            ("duplex", duplex.to_string()),
            ("carrier", "1".to_string()),
        ] {
            std::fs::write(dir.join(file), format!("{text}\n")).unwrap();
        }
        for counter in ALL {
            let v = counters
                .iter()
                .find(|(n, _)| *n == counter)
                .map_or(0, |&(_, v)| v);
            std::fs::write(dir.join("statistics").join(counter), format!("{v}\n")).unwrap();
        }
        dir
    }
}

#[test]
fn lo_is_reported_as_loopback_not_as_a_fault() {
    let doc = json(&wirespeed(&[
        "diagnose",
        "lo",
        "--interval",
        "100ms",
        "--json",
    ]));
    assert_eq!(doc["schema"], "wirespeed.diagnose.v1");
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert_eq!(typed.findings[0].kind, "no_physical_layer");
    assert_eq!(typed.findings[0].evidence["interface"], "lo");
    let lo = &doc["result"]["interfaces"][0];
    assert_eq!(lo["name"], "lo");
    assert_eq!(lo["kind"]["kind"], "loopback");
    assert_eq!(lo["diagnosis"]["healthy"], true);
    assert_eq!(lo["diagnosis"]["findings"][0]["kind"], "no_physical_layer");
    assert!(lo["second"]["rx_packets"].as_u64().is_some());
    let secs = lo["interval_seconds"].as_f64().unwrap();
    assert!((0.1..5.0).contains(&secs), "{secs}");
    assert!(
        doc["verdicts"][0]
            .as_str()
            .unwrap()
            .starts_with("lo: no physical layer")
    );
}

#[test]
fn seed_003_table7_replayed_counters_show_the_mismatch_from_both_ends() {
    let sysfs = FakeSysfs::new();
    // Table 7 test 1: DUT01 at 10-HALF, DUT02 at 10-FULL.
    sysfs.nic(
        "dut01",
        10,
        "half",
        &[
            ("rx_packets", 24_987),
            ("tx_packets", 49_888),
            ("collisions", 6_087),
            ("tx_window_errors", 6_088),
        ],
    );
    sysfs.nic(
        "dut02",
        10,
        "full",
        &[
            ("rx_packets", 43_830),
            ("tx_packets", 31_106),
            ("rx_crc_errors", 3_022),
            ("rx_length_errors", 1),
        ],
    );
    let run = wirespeed_env(&["diagnose", "--interval", "50ms"], &sysfs.net());
    assert_eq!(run.status, 0, "{}", run.stderr);
    for line in [
        "dut01: NIC (iprb), link up",
        "settings   10 Mbit/s half duplex (from sysfs)",
        "FAULT (high confidence): late collisions on a half-duplex end: duplex mismatch, the partner runs full duplex",
        "6088 late collisions (tx_window_errors) of 6087 collisions",
        "dut02: NIC (iprb), link up",
        "FAULT (high confidence): FCS errors and runts on a full-duplex end: duplex mismatch, the partner runs half duplex",
        "verdict: dut01: late collisions on a half-duplex end",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing from\n{}",
            run.stdout
        );
    }
    let doc = json(&wirespeed_env(
        &["diagnose", "dut02", "-i", "10ms", "-J"],
        &sysfs.net(),
    ));
    let d = &doc["result"]["interfaces"][0]["diagnosis"];
    assert_eq!(d["healthy"], false);
    assert_eq!(d["findings"][0]["kind"], "duplex_mismatch_full_side");
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert_eq!(typed.findings[0].kind, "duplex_mismatch_full_side");
    assert_eq!(typed.findings[0].evidence["level"], "fault");
    assert_eq!(typed.findings[0].evidence["confidence"], "high");
    assert_eq!(d["findings"][0]["confidence"], "high");
    assert!(
        d["findings"][0]["fix"]
            .as_str()
            .unwrap()
            .contains("both ends")
    );
}

#[test]
fn seed_003_table6_replayed_half_duplex_is_healthy() {
    let sysfs = FakeSysfs::new();
    sysfs.nic(
        "dut01",
        10,
        "half",
        &[
            ("rx_packets", 37_717),
            ("tx_packets", 5_581),
            ("collisions", 12_967),
        ],
    );
    let doc = json(&wirespeed_env(
        &["diagnose", "-i", "10ms", "-J"],
        &sysfs.net(),
    ));
    let d = &doc["result"]["interfaces"][0]["diagnosis"];
    assert_eq!(d["healthy"], true);
    assert_eq!(d["findings"][0]["kind"], "half_duplex");
}

#[test]
fn a_missing_or_unreadable_counter_is_one_line() {
    let sysfs = FakeSysfs::new();
    let dir = sysfs.nic("eth7", 100, "full", &[]);
    std::fs::remove_file(dir.join("statistics").join("rx_crc_errors")).unwrap();
    assert_one_line_error(
        &wirespeed_env(&["diagnose", "eth7", "-i", "10ms"], &sysfs.net()),
        "statistics/rx_crc_errors",
    );
    std::fs::write(dir.join("statistics").join("rx_crc_errors"), "lots\n").unwrap();
    assert_one_line_error(
        &wirespeed_env(&["diagnose", "eth7", "-i", "10ms"], &sysfs.net()),
        "not a number",
    );
}

#[test]
fn bad_diagnose_input_is_one_line() {
    assert_one_line_error(
        &wirespeed(&["diagnose", "ws-no-such0", "-i", "10ms"]),
        "no such interface: ws-no-such0",
    );
    assert_one_line_error(&wirespeed(&["diagnose", "--interval", "soon"]), "duration");
    assert_one_line_error(
        &wirespeed(&["diagnose", "--interval", "0s"]),
        "out of range",
    );
    // A link-local peer without its zone: the fix, not the kernel's "Invalid argument".
    assert_one_line_error(
        &wirespeed(&["diagnose", "lo", "--peer", "fe80::1"]),
        "--peer fe80::1 is link-local: name its interface, e.g. fe80::1%eth0",
    );
    assert_one_line_error(
        &wirespeed(&["load", "-a", "127.0.0.1:x"]),
        "--agent 127.0.0.1:x: \"x\" is not a port number",
    );
}

/// Two network namespaces joined by a veth pair: ws-a (198.18.0.1) in the first, ws-b
/// (198.18.0.2) in the second, so that traffic between them crosses the pair. Both are removed
/// when dropped.
struct Namespaces(Netns, Netns);

impl Namespaces {
    fn create() -> Namespaces {
        let ns = Namespaces(
            Netns::add(unique_name("ws-dg-a")),
            Netns::add(unique_name("ws-dg-b")),
        );
        ns.0.ip(&[
            "link",
            "add",
            "ws-a",
            "type",
            "veth",
            "peer",
            "name",
            "ws-b",
            "netns",
            ns.1.name(),
        ]);
        ns.0.ip(&["addr", "add", "198.18.0.1/30", "dev", "ws-a"]);
        ns.1.ip(&["addr", "add", "198.18.0.2/30", "dev", "ws-b"]);
        ns.0.ip(&["link", "set", "ws-a", "up"]);
        ns.1.ip(&["link", "set", "ws-b", "up"]);
        ns
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[test]
fn veth_pair_in_a_namespace_counts_traffic_and_has_no_phy() {
    if !is_root() {
        eprintln!("skipped: creating a network namespace needs root (CAP_SYS_ADMIN)");
        return;
    }
    let ns = Namespaces::create();
    let bin = env!("CARGO_BIN_EXE_wirespeed");
    // Bounded traffic across the pair while diagnose samples: up to 300 pings, 10 ms apart, 5 s
    // at most, stopped once diagnose is done.
    let ping = have("ping").then(|| {
        ns.1.exec("ping")
            .args(["-q", "-c", "300", "-i", "0.01", "-w", "5", "198.18.0.1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ping starts")
    });
    // diagnose samples for 500 ms from its start: wait (bounded) until the pings are crossing,
    // or on a loaded machine a ping started late leaves the window empty (seen once at load
    // 11: 0 frames/s received, only the neighbour requests sent).
    if ping.is_some() {
        let rx = || -> u64 {
            ns.0.exec("cat")
                .arg("/sys/class/net/ws-a/statistics/rx_packets")
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while rx() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    let out =
        ns.0.exec(bin)
            .args(["diagnose", "ws-a", "lo", "-i", "500ms", "-J"])
            .output()
            .unwrap();
    let run = Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    if let Some(mut p) = ping {
        // Our own child (`ip netns exec` runs ping in its place), by its handle.
        let _ = p.kill();
        let _ = p.wait();
    }
    let doc = json(&run);
    let ifaces = doc["result"]["interfaces"].as_array().unwrap();
    assert_eq!(ifaces.len(), 2);
    let veth = &ifaces[0];
    assert_eq!(veth["kind"]["kind"], "veth", "{veth}");
    assert_eq!(veth["diagnosis"]["healthy"], true);
    assert_eq!(
        veth["link"]["source"], "ethtool netlink",
        "this kernel has ethtool netlink"
    );
    assert_eq!(veth["link"]["carrier"], true);
    assert_eq!(ifaces[1]["kind"]["kind"], "loopback");
    if have("ping") {
        let rx = veth["diagnosis"]["rates"]["rx_packets_per_second"]
            .as_f64()
            .unwrap();
        let tx = veth["diagnosis"]["rates"]["tx_packets_per_second"]
            .as_f64()
            .unwrap();
        assert!(
            rx > 20.0 && tx > 20.0,
            "ws-a receives the pings and answers: {rx} and {tx} frames/s"
        );
    } else {
        eprintln!("no ping: traffic rates not checked");
    }
    // Compare with ethtool where it is installed.
    let a = &veth["link"];
    match ns.0.exec("ethtool").arg("ws-a").output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let field = |name: &str| {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
                    .unwrap_or_default()
            };
            assert_eq!(field("Speed:"), format!("{}Mb/s", a["speed_mbps"]));
            assert_eq!(
                field("Duplex:").to_lowercase(),
                a["duplex"].as_str().unwrap()
            );
            let autoneg = if a["autoneg"] == true { "on" } else { "off" };
            assert_eq!(field("Auto-negotiation:"), autoneg);
        }
        _ => eprintln!("no ethtool: comparison skipped"),
    }
    drop(ns);
}

#[test]
fn diagnose_peer_runs_a_transfer_each_way_and_samples_the_counters_across_them() {
    // Its two 300 ms transfers must come out alike (a ratio under 3): alone in the lab lane,
    // as beside the lanes' transfers one way ran 3.7 times slower than the other.
    let _lane = crate::lab::LAB_LOCK.alone();
    let server = crate::throughput::Server::start(&[]);
    let metrics = std::env::temp_dir().join(format!(
        "wirespeed-diagnose-peer-{}.prom",
        std::process::id()
    ));
    let run = wirespeed(&[
        "diagnose",
        "lo",
        "--peer",
        "127.0.0.1",
        "-p",
        &server.port(),
        "-t",
        "300ms",
        "--json",
        "--metrics-file",
        metrics.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let typed = crate::findings::assert_typed(&run.stdout);
    assert!(
        typed
            .findings
            .iter()
            .any(|f| f.kind == "symmetric_transfer" && f.evidence["asymmetry_ratio"] == 3.0),
        "{:?}",
        typed.findings
    );
    let r = &doc["result"];
    let peer = &r["peer"];
    assert_eq!(peer["to_peer"]["direction"], "to the peer");
    let to = peer["to_peer"]["bits_per_second"].as_f64().unwrap();
    let from = peer["from_peer"]["bits_per_second"].as_f64().unwrap();
    assert!(to > 1e6 && from > 1e6, "{peer}");
    // The transfers reach Prometheus too, in bytes per second, and promtool passes the file.
    crate::metrics::assert_metrics_file(
        &metrics,
        "wirespeed_diagnose_peer_transfer_bytes_per_second{direction=\"to the peer\"}",
        to / 8.0,
    );
    std::fs::remove_file(&metrics).unwrap();
    // Loopback is symmetric: no asymmetry finding, unless the machine was loaded past its CPUs
    // (3.1x apart once at load 10, held alone in the lab lane): then only the counterless
    // warning, with the load average that explains it in its evidence.
    for f in peer["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "warning", "{peer}");
        let load = f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e.as_str()?.strip_prefix("this host's load average "))
            .find_map(|e| {
                let (load, rest) = e.split_once(" on ")?;
                let cpus: f64 = rest.split_once(' ')?.0.parse().ok()?;
                Some(load.parse::<f64>().ok()? / cpus)
            });
        assert!(load.is_some_and(|per_cpu| per_cpu > 1.0), "{peer}");
    }
    // The counters were read across both transfers: lo carried them.
    let lo = &r["interfaces"][0];
    assert!(doc["parameters"]["interval_seconds"].as_f64().unwrap() >= 0.6);
    let bits = lo["diagnosis"]["rates"]["rx_bits_per_second"]
        .as_f64()
        .unwrap();
    assert!(bits > 1e6, "{lo}");
}

#[test]
fn diagnose_peer_without_an_agent_is_one_line() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port().to_string();
    drop(free);
    let run = wirespeed(&[
        "diagnose",
        "lo",
        "--peer",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "200ms",
    ]);
    assert_one_line_error(&run, "wirespeed serve");
    let run = wirespeed(&["diagnose", "lo", "--peer", "127.0.0.1", "-i", "1s"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
}
