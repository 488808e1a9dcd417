//! `wirespeed lab`: topology errors everywhere; real labs where the test runs with
//! CAP_NET_ADMIN (CI runs as root). A test that cannot build a lab says why and returns.
//!
//! The tests that build labs hold one lock so that they do not share the two CI cores, which
//! would blur the rate they check, and each checks only its own lab's namespaces and devices
//! (other tests may build labs at the same time).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wirespeed_lab::sys;

use crate::util::{assert_one_line_error, wirespeed};

#[path = "lab_shared.rs"]
mod shared;

#[path = "lab_safety.rs"]
mod safety;

#[path = "lab_rates.rs"]
mod rates;

pub(crate) static LAB_LOCK: Mutex<()> = Mutex::new(());

fn labs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs")
}

fn lab_file(name: &str) -> String {
    labs_dir().join(name).display().to_string()
}

/// True if labs can be built here; otherwise prints why.
pub(crate) fn can_build_labs(test: &str) -> bool {
    if sys::has_net_admin() && Path::new("/dev/net/tun").exists() {
        true
    } else {
        eprintln!("{test}: skipped: needs CAP_NET_ADMIN and /dev/net/tun (CI runs as root)");
        false
    }
}

pub(crate) fn temp_topology(tag: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ws-lab-test-{}-{tag}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

const TWO_HOSTS: &str = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\n";

#[test]
fn bad_topologies_are_one_line_errors_naming_the_line() {
    for (tag, text, needle) in [
        (
            "unknown",
            TWO_HOSTS.replace("b = \"h2\"", "b = \"h9\""),
            ":7: unknown node 'h9'",
        ),
        (
            "negative",
            TWO_HOSTS.replace("\"10M\"", "\"-10M\""),
            ":8: negative rate",
        ),
        (
            "duplicate",
            format!("{TWO_HOSTS}a_address = \"198.18.7.1/24\"\nb_address = \"198.18.7.1/24\"\n"),
            ":10: duplicate address 198.18.7.1",
        ),
    ] {
        let path = temp_topology(tag, &text);
        let file = path.display().to_string();
        assert_one_line_error(&wirespeed(&["lab", "up", &file]), needle);
        assert_one_line_error(&wirespeed(&["lab", "run", &file, "--", "true"]), needle);
        std::fs::remove_file(path).unwrap();
    }
    assert_one_line_error(
        &wirespeed(&["lab", "up", "/nonexistent/lab.toml"]),
        "cannot read topology file",
    );
}

#[test]
fn unknown_labs_and_nodes_are_one_line_errors() {
    assert_one_line_error(
        &wirespeed(&["lab", "status", "no-such-lab-0000"]),
        "no lab named 'no-such-lab-0000'",
    );
    assert_one_line_error(
        &wirespeed(&["lab", "exec", "no-such-lab-0000", "h1", "--", "true"]),
        "no lab named",
    );
    assert_one_line_error(&wirespeed(&["lab", "exec", "x", "h1"]), "CMD");
    assert_one_line_error(&wirespeed(&["lab", "down"]), "<NAME>");
}

#[test]
fn a_bad_spin_setting_is_one_line_naming_the_fix_and_builds_nothing() {
    if !can_build_labs("a_bad_spin_setting_is_one_line_naming_the_fix_and_builds_nothing") {
        return;
    }
    // A state directory of this test's own: whatever `lab run` would leave is there.
    let state = std::env::temp_dir().join(format!("ws-spin-state-{}", std::process::id()));
    for bad in ["fast", "1001", "-5"] {
        let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .env("WIRESPEED_LAB_SPIN_US", bad)
            .env("WIRESPEED_LAB_STATE", &state)
            .args(["lab", "run", &lab_file("two-host-10m.toml"), "--", "true"])
            .output()
            .expect("the wirespeed binary runs");
        let run = crate::util::Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        };
        assert_one_line_error(&run, "WIRESPEED_LAB_SPIN_US");
        assert!(
            run.stderr.contains("'adaptive' or to microseconds"),
            "{}",
            run.stderr
        );
    }
    // Refused before any lab was made: no state left.
    let left: Vec<_> = std::fs::read_dir(&state)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&state);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn without_cap_net_admin_one_line_says_so() {
    if !sys::has_net_admin() || Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("without_cap_net_admin: skipped: needs root and setpriv to drop to nobody");
        return;
    }
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["lab", "up", &lab_file("two-host-10m.toml")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("CAP_NET_ADMIN"), "{stderr}");
}

/// A running lab, taken down when dropped.
pub(crate) struct UpLab {
    pub(crate) name: String,
    status: serde_json::Value,
}

impl UpLab {
    pub(crate) fn up(file: &str) -> UpLab {
        let run = wirespeed(&["lab", "up", file, "--json"]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(doc["schema"], "wirespeed.lab.up.v1");
        let name = doc["result"]["name"].as_str().unwrap().to_string();
        let status = lab_status(&name);
        UpLab { name, status }
    }

    pub(crate) fn namespace(&self, node: &str) -> String {
        let nodes = self.status["result"]["lab"]["nodes"].as_array().unwrap();
        let n = nodes.iter().find(|n| n["name"] == node).unwrap();
        n["namespace"].as_str().unwrap().to_string()
    }

    fn pid(&self) -> i32 {
        self.status["result"]["lab"]["pid"].as_i64().unwrap() as i32
    }
}

impl Drop for UpLab {
    fn drop(&mut self) {
        let _ = wirespeed(&["lab", "down", &self.name]);
    }
}

pub(crate) fn lab_status(name: &str) -> serde_json::Value {
    let run = wirespeed(&["lab", "status", name, "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // Every bottleneck warning has its typed finding.
    crate::findings::assert_typed(&run.stdout);
    serde_json::from_str(&run.stdout).unwrap()
}

/// Nothing of lab `name` is left: namespaces, devices in this namespace, state.
fn assert_nothing_left(name: &str) {
    let id = name.rsplit('-').next().unwrap();
    let ns: Vec<String> = sys::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&format!("ws-{name}-")))
        .collect();
    assert!(ns.is_empty(), "namespaces left: {ns:?}");
    let links: Vec<String> = sys::links()
        .into_iter()
        .filter(|l| l.starts_with(&format!("ws-{id}-")))
        .collect();
    assert!(links.is_empty(), "devices left: {links:?}");
    assert!(
        !Path::new("/run/wirespeed-lab").join(name).exists(),
        "state left"
    );
}

fn wait_until_gone(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The Internet checksum (RFC 1071).
fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Sends one ICMP echo request with `payload` bytes and `ttl` from namespace `ns` to `to`;
/// returns the ICMP type of the answer, who sent it, and the round-trip time.
fn ping(ns: &str, to: Ipv4Addr, payload: usize, ttl: u32) -> Option<(u8, Ipv4Addr, Duration)> {
    sys::in_namespace(ns, move || {
        // SAFETY: plain socket calls with valid buffers and lengths; the fd is closed at the end.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP);
            assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
            let tv = libc::timeval {
                tv_sec: 3,
                tv_usec: 0,
            };
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&raw const tv).cast(),
                size_of::<libc::timeval>() as u32,
            );
            libc::setsockopt(
                fd,
                libc::IPPROTO_IP,
                libc::IP_TTL,
                (&raw const ttl).cast(),
                4,
            );
            let id = (std::process::id() & 0xffff) as u16;
            let mut req = vec![0u8; 8 + payload];
            req[0] = 8;
            req[4..6].copy_from_slice(&id.to_be_bytes());
            req[6..8].copy_from_slice(&1u16.to_be_bytes());
            let sum = checksum(&req);
            req[2..4].copy_from_slice(&sum.to_be_bytes());
            let addr = libc::sockaddr_in {
                sin_family: libc::AF_INET as u16,
                sin_port: 0,
                sin_addr: libc::in_addr {
                    s_addr: u32::from(to).to_be(),
                },
                sin_zero: [0; 8],
            };
            let start = Instant::now();
            libc::sendto(
                fd,
                req.as_ptr().cast(),
                req.len(),
                0,
                (&raw const addr).cast(),
                size_of::<libc::sockaddr_in>() as u32,
            );
            let mut buf = [0u8; 2048];
            let result = loop {
                let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0);
                if n <= 0 {
                    break None;
                }
                let ihl = usize::from(buf[0] & 0x0f) * 4;
                let icmp = &buf[ihl..n as usize];
                let from = Ipv4Addr::new(buf[12], buf[13], buf[14], buf[15]);
                // An echo reply carries our id at 4..6; a time exceeded quotes our request
                // after its own 8 bytes and the quoted IP header.
                let ours = match icmp[0] {
                    0 => icmp[4..6] == id.to_be_bytes(),
                    11 => {
                        icmp.len() >= 8 + 20 + 8 && icmp[8 + 20 + 4..8 + 20 + 6] == id.to_be_bytes()
                    }
                    _ => false,
                };
                if ours {
                    break Some((icmp[0], from, start.elapsed()));
                }
            };
            libc::close(fd);
            result
        }
    })
    .unwrap()
}

/// Sends `bytes` over TCP from `from_ns` to `to` (in `to_ns`); returns the goodput the receiver
/// saw from its first byte to the end, in bit/s.
pub(crate) fn tcp_goodput(from_ns: &str, to_ns: &str, to: Ipv4Addr, bytes: usize) -> f64 {
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let to_ns = to_ns.to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&to_ns, move || {
            let listener = TcpListener::bind((to, 0)).unwrap();
            port_tx.send(listener.local_addr().unwrap().port()).unwrap();
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let first = conn.read(&mut buf).unwrap();
            let start = Instant::now();
            let mut after_first = 0usize;
            loop {
                let n = conn.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                after_first += n;
            }
            assert_eq!(first + after_first, bytes);
            after_first as f64 * 8.0 / start.elapsed().as_secs_f64()
        })
        .unwrap()
    });
    let port = port_rx.recv().unwrap();
    sys::in_namespace(from_ns, move || {
        let mut conn =
            TcpStream::connect_timeout(&SocketAddr::from((to, port)), Duration::from_secs(5))
                .unwrap();
        let chunk = vec![0x5au8; 1 << 16];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            conn.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
    })
    .unwrap();
    receiver.join().unwrap()
}

/// TCP payload share of the wire on full-size Ethernet frames with timestamps: 1448 / 1538.
fn tcp_share() -> f64 {
    1448.0 / 1538.0
}

#[test]
fn two_hosts_ping_crosses_the_link_and_tcp_gets_the_configured_rate() {
    if !can_build_labs("two_hosts") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let lab = UpLab::up(&lab_file("two-host-10m.toml"));
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let (kind, from, rtt) = ping(&h1, Ipv4Addr::new(198, 18, 0, 2), 56, 64).expect("an echo reply");
    assert_eq!((kind, from), (0, Ipv4Addr::new(198, 18, 0, 2)));
    // 84-byte IP packet: 102-byte frame + 20 = 122 wire bytes = 97.6 us each way at 10 Mbit/s
    // (plus 0.5 us of cable): a reply sooner than that did not cross the emulator.
    assert!(rtt >= Duration::from_micros(196), "{rtt:?}");

    // The link cannot carry more than its ceiling, whatever the machine does, so a transfer
    // above it fails at once; one below it may be a busy CI machine holding either host's
    // process (measured: 9.06 Mbit/s, 3.8% short, at load 7 beside other lab tests, and
    // 99.98% of the ceiling alone), so the best of up to three transfers counts.
    let expected = 10e6 * tcp_share();
    let mut rate = 0.0f64;
    for attempt in 1..=3 {
        let got = tcp_goodput(&h1, &h2, Ipv4Addr::new(198, 18, 0, 2), 1_500_000);
        eprintln!("two hosts: transfer {attempt}: TCP goodput {got:.0} bit/s");
        assert!(
            got / expected < 1.03,
            "TCP goodput {got:.0} bit/s above the ceiling {expected:.0}"
        );
        rate = rate.max(got);
        if rate / expected > 0.97 {
            break;
        }
    }
    eprintln!("two hosts: TCP goodput {rate:.0} bit/s, ceiling {expected:.0}; ping {rtt:?}");
    assert!(
        (rate / expected - 1.0).abs() < 0.03,
        "TCP goodput {rate:.0} bit/s, expected {expected:.0} within 3%"
    );
    let status = lab_status(&lab.name);
    let port = &status["result"]["ports"][0];
    assert_eq!(port["from"], "h1");
    assert!(
        port["counters"]["frames_out"].as_u64().unwrap() > 1000,
        "{port}"
    );
    assert!(
        port["counters"]["bytes_out"].as_u64().unwrap() > 1_500_000,
        "{port}"
    );
    assert_eq!(status["schema"], "wirespeed.lab.status.v1");
    let text = wirespeed(&["lab", "status", &lab.name]);
    assert!(text.stdout.contains("eth0 h1 -> h2"), "{}", text.stdout);
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

/// A host with a processing model: h2 takes 1 ms + 1 us per byte for each frame it receives
/// and 2 ms for each it sends, and runs the 1990s TCP profile.
const SLOW_HOST: &str = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\nreceive = { fixed = \"1ms\", per_byte = \"1us\" }\ntransmit = { fixed = \"2ms\" }\ntcp_profile = \"1990s\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\n";

#[test]
fn a_host_processing_cost_appears_in_the_round_trip_and_its_tcp_profile_in_its_namespace() {
    if !can_build_labs("slow_host") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = temp_topology("slow-host", SLOW_HOST);
    let lab = UpLab::up(&path.display().to_string());
    std::fs::remove_file(&path).unwrap();
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let to = Ipv4Addr::new(198, 18, 0, 2);
    ping(&h1, to, 56, 64).expect("an echo reply (and ARP resolved)");
    let rtt = |payload| {
        (0..5)
            .filter_map(|_| ping(&h1, to, payload, 64).map(|(_, _, t)| t.as_secs_f64()))
            .fold(f64::INFINITY, f64::min)
    };
    let (small, large) = (rtt(56), rtt(1000));
    // The wire: an IP packet of 28 + payload bytes is a frame of 14 + that + 4 FCS, + 20 of
    // preamble and gap, 0.8 us per byte at 10 Mbit/s, each way.
    let wire = |payload: f64| 2.0 * (28.0 + payload + 38.0) * 0.8e-6;
    // h2's CPU: receiving the request (1 ms + 1 us per packet byte), sending the reply (2 ms).
    let host = |payload: f64| 1e-3 + (28.0 + payload) * 1e-6 + 2e-3;
    for (payload, measured) in [(56.0, small), (1000.0, large)] {
        let configured = wire(payload) + host(payload);
        eprintln!(
            "slow host: ping {payload} B: {:.3} ms, configured wire + host {:.3} ms",
            measured * 1e3,
            configured * 1e3
        );
        // Never sooner than configured; the kernels and the emulator's release add tens of
        // microseconds, a busy CI machine more.
        assert!(measured >= configured, "{measured} < {configured}");
        assert!(measured < configured + 1.5e-3, "{measured} vs {configured}");
    }
    // The per-byte part: (1000 - 56) bytes more cost 1 us each at h2 plus 1.6 us of wire.
    let slope = (large - small) / 944.0 * 1e6;
    assert!(
        (slope - 2.6).abs() < 0.15,
        "per-byte round trip {slope:.3} us, configured 2.6"
    );
    let status = lab_status(&lab.name);
    let port = status["result"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["from"] == "h2")
        .unwrap()
        .clone();
    assert!(port["host"]["received"].as_u64().unwrap() >= 11, "{port}");
    assert!(
        port["host"]["transmitted"].as_u64().unwrap() >= 11,
        "{port}"
    );
    // The profile is in h2's namespace only.
    let read = |ns: Option<&str>, key: &str| -> String {
        let path = format!("/proc/sys/net/ipv4/{key}");
        match ns {
            Some(ns) => {
                sys::in_namespace(ns, move || std::fs::read_to_string(path).unwrap()).unwrap()
            }
            None => std::fs::read_to_string(path).unwrap(),
        }
        .trim()
        .to_string()
    };
    assert_eq!(read(Some(&h2), "tcp_sack"), "0");
    assert_eq!(read(Some(&h2), "tcp_timestamps"), "0");
    assert_eq!(read(Some(&h2), "tcp_congestion_control"), "reno");
    assert_eq!(read(Some(&h1), "tcp_sack"), read(None, "tcp_sack"));
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

#[test]
fn router_chain_forwards_answers_ttl_and_holds_the_bottleneck() {
    if !can_build_labs("router_chain") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let lab = UpLab::up(&lab_file("router-chain.toml"));
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let far = Ipv4Addr::new(198, 18, 2, 2);
    let (kind, from, rtt) = ping(&h1, far, 56, 64).expect("an echo reply across two routers");
    assert_eq!((kind, from), (0, far));
    // 1 ms each way on the middle link, plus 2 x 488 us of serialization at 2 Mbit/s.
    assert!(rtt >= Duration::from_micros(2_900), "{rtt:?}");
    let (kind, from, _) = ping(&h1, far, 56, 2).expect("time exceeded from r2");
    assert_eq!((kind, from), (11, Ipv4Addr::new(198, 18, 1, 2)));

    let rate = tcp_goodput(&h1, &h2, far, 400_000);
    let expected = 2e6 * tcp_share();
    eprintln!("router chain: TCP goodput {rate:.0} bit/s, ceiling {expected:.0}; ping {rtt:?}");
    assert!(
        (rate / expected - 1.0).abs() < 0.05,
        "TCP goodput {rate:.0} bit/s through the 2 Mbit/s hop, expected {expected:.0} within 5%"
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

#[test]
fn seed_001_path_per_byte_cost_is_the_sum_of_its_components() {
    if !can_build_labs("seed_001") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let lab = UpLab::up(&lab_file("seed-001-path.toml"));
    let roc = lab.namespace("roc");
    let cbnewsa = Ipv4Addr::new(198, 18, 2, 2);
    // Bellovin's method: the minimum of five round trips per size, after one that resolves
    // every hop's ARP.
    ping(&roc, cbnewsa, 32, 64).expect("an echo reply over the DS0");
    let rtt = |size| {
        (0..5)
            .filter_map(|_| ping(&roc, cbnewsa, size, 64).map(|(_, _, t)| t))
            .min()
            .expect("an echo reply over the DS0")
            .as_secs_f64()
    };
    let (small, large) = (rtt(32), rtt(432));
    // The router answering itself pays its `answer` cost, 0.751 ms + 1.31 us/byte (ciscoping).
    let to_router = (0..3)
        .filter_map(|_| ping(&roc, Ipv4Addr::new(198, 18, 0, 2), 32, 64).map(|(_, _, t)| t))
        .min()
        .expect("an echo reply from ciscomci");
    assert!(
        to_router >= Duration::from_micros(751 + 60),
        "{to_router:?}"
    );
    assert!(
        to_router < Duration::from_micros(751 + 5_000),
        "{to_router:?}"
    );
    let slope_us = (large - small) / 400.0 * 1e6;
    // Per byte, one way: DS0 142.857 us + ciscomci forwarding 0.04 + ciscoser 2.939 + two
    // 10 Mbit/s Ethernets 0.8 each (Table 1); twice for the round trip.
    let expected_us = 2.0 * (1e6 * 8.0 / 56_000.0 + 0.04 + 2.939 + 0.8 + 0.8);
    eprintln!(
        "seed 001 path: per-byte round trip {slope_us:.2} us, configured {expected_us:.2} us"
    );
    assert!(
        (slope_us / expected_us - 1.0).abs() < 0.02,
        "per-byte round trip {slope_us:.2} us, expected {expected_us:.2} us"
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

#[test]
fn sigterm_to_the_emulator_removes_the_lab() {
    if !can_build_labs("sigterm") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let lab = UpLab::up(&lab_file("two-host-10m.toml"));
    let pid = lab.pid();
    assert_one_line_error(
        &wirespeed(&["lab", "exec", &lab.name, "h3", "--", "true"]),
        "has no node 'h3' (it has: h1, h2)",
    );
    let run = wirespeed(&["lab", "exec", &lab.name, "h1", "--", "sh", "-c", "exit 7"]);
    assert_eq!(run.status, 7, "exec passes the command's status on");
    let run = wirespeed(&["lab", "up", &lab_file("two-host-10m.toml")]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let plain = run.stdout.trim().to_string();
    assert!(
        plain.starts_with("two-host-") && !plain.contains(' '),
        "{plain}"
    );
    assert_eq!(wirespeed(&["lab", "down", &plain]).status, 0);
    assert_nothing_left(&plain);
    sys::terminate(pid as u32);
    wait_until_gone(pid);
    assert_nothing_left(&lab.name);
    assert_one_line_error(&wirespeed(&["lab", "down", &lab.name]), "no lab named");
}

#[test]
fn lab_run_always_takes_the_lab_down() {
    if !can_build_labs("lab_run") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let file = lab_file("two-host-10m.toml");
    // Success, in a node: the command sees the lab's addresses.
    let run = wirespeed(&[
        "lab", "run", &file, "--node", "h2", "--", "ip", "-4", "addr", "show", "eth0",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("198.18.0.2/24"), "{}", run.stdout);
    // Failure: the command's status is passed on, and nothing is left.
    let run = wirespeed(&[
        "lab",
        "run",
        &file,
        "--",
        "sh",
        "-c",
        "echo $WIRESPEED_LAB; exit 3",
    ]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_nothing_left(run.stdout.trim());
    // A command that cannot start: one line, status 2, nothing left.
    let run = wirespeed(&["lab", "run", &file, "--", "/nonexistent/command"]);
    assert_one_line_error(&run, "/nonexistent/command");
    assert!(
        sys::namespaces()
            .iter()
            .all(|n| !n.starts_with("ws-two-host-") || lab_alive(n))
    );
}

/// True if namespace `ns` belongs to a lab that another test or user still runs.
fn lab_alive(ns: &str) -> bool {
    lifecycle_names()
        .iter()
        .any(|l| ns.starts_with(&format!("ws-{l}-")))
}

fn lifecycle_names() -> Vec<String> {
    std::fs::read_dir("/run/wirespeed-lab")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn sigterm_to_lab_run_removes_the_lab_and_stops_the_command() {
    if !can_build_labs("sigterm_run") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["lab", "run", &lab_file("two-host-10m.toml"), "--"])
        .args(["sh", "-c", "echo $WIRESPEED_LAB; exec sleep 30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut name = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut name)
        .unwrap();
    let name = name.trim().to_string();
    assert!(lab_alive(&format!("ws-{name}-h1")), "lab {name} runs");
    let started = Instant::now();
    sys::terminate(child.id());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the command was stopped"
    );
    assert_nothing_left(&name);
}

/// Two hosts, 10 Mbit/s, 20 ms each way, a 1000-frame queue; `aqm` added when given.
fn aqm_topology(aqm: Option<&str>) -> String {
    let mut text = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\ndelay = \"20ms\"\nqueue = 1000\n".to_string();
    if let Some(aqm) = aqm {
        text.push_str(&format!("aqm = \"{aqm}\"\n"));
    }
    text
}

/// What one loaded run showed: the h1 -> h2 queue's delay (bytes waiting / rate) in each
/// `lab status` sample taken while frames were arriving, the last sample's AQM counters, and
/// the round trips of the pings sent from 2 s to 3.5 s into the load (and how many got no
/// answer within 3 s).
struct LoadedRun {
    delays: Vec<f64>,
    aqm: serde_json::Value,
    pings: Vec<f64>,
    pings_lost: usize,
}

impl LoadedRun {
    fn max(&self) -> f64 {
        self.delays.iter().copied().fold(0.0, f64::max)
    }

    /// Median of the samples in the second half of the load (after the start-up transient).
    fn settled(&self) -> f64 {
        let mut late = self.delays[self.delays.len() / 2..].to_vec();
        late.sort_by(f64::total_cmp);
        late[late.len() / 2]
    }
}

/// Builds the AQM lab with `wirespeed lab run`, runs `wirespeed serve` in h2 and `load` (a
/// `wirespeed` command line against 198.18.0.2) in h1, samples `lab status` every 200 ms and,
/// if `ping`, pings h2 from h1 meanwhile. Checks that nothing is left.
fn loaded_run(aqm: Option<&str>, load: &str, ping_h2: bool) -> LoadedRun {
    let tag = format!("aqm-{}", aqm.unwrap_or("none"));
    let path = temp_topology(&tag, &aqm_topology(aqm));
    let exe = env!("CARGO_BIN_EXE_wirespeed");
    // The agent serves one session; the load is retried while the agent is not yet
    // listening (connection refused comes back at once).
    let script = format!(
        "W='{exe}'; L=\"$WIRESPEED_LAB\"; echo \"$L\"\n\
         \"$W\" lab exec \"$L\" h2 -- \"$W\" serve -B 198.18.0.2 -1 >/dev/null 2>&1 &\n\
         for i in $(seq 40); do\n\
           \"$W\" lab exec \"$L\" h1 -- \"$W\" {load} >/dev/null 2>&1 && exit 0\n\
           sleep 0.25\n\
         done\n\
         exit 1"
    );
    let mut child = Command::new(exe)
        .args([
            "lab",
            "run",
            &path.display().to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut name = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut name)
        .unwrap();
    let name = name.trim().to_string();
    let h1 = format!("ws-{name}-h1");
    let mut run = LoadedRun {
        delays: Vec::new(),
        aqm: serde_json::Value::Null,
        pings: Vec::new(),
        pings_lost: 0,
    };
    let mut last_in = 0;
    let mut loaded_since: Option<Instant> = None;
    let deadline = Instant::now() + Duration::from_secs(40);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        let out = wirespeed(&["lab", "status", &name, "--json"]);
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
            continue;
        };
        let Some(port) = doc["result"]["ports"]
            .as_array()
            .and_then(|ports| ports.iter().find(|p| p["from"] == "h1"))
        else {
            continue;
        };
        let c = &port["counters"];
        let bytes_in = c["bytes_in"].as_u64().unwrap_or(0);
        // Only samples while the load is on (more than a trickle arrived since the last).
        if bytes_in > last_in + 50_000 {
            loaded_since.get_or_insert_with(Instant::now);
            run.delays
                .push(c["queue_bytes"].as_u64().unwrap() as f64 * 8.0 / 10e6);
            run.aqm = c["aqm"].clone();
            // Pings from 2 s into the 4 s load to 3.5 s, so that even one lost (3 s without an
            // answer) is not followed by one sent after the load ended.
            let into = loaded_since.map_or(Duration::ZERO, |t| t.elapsed());
            if ping_h2 && into > Duration::from_secs(2) && into < Duration::from_millis(3_500) {
                match ping(&h1, Ipv4Addr::new(198, 18, 0, 2), 56, 64) {
                    Some((0, _, rtt)) => run.pings.push(rtt.as_secs_f64()),
                    _ => run.pings_lost += 1,
                }
            }
        }
        last_in = bytes_in;
    }
    let status = child.wait().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(status.success(), "lab run with {tag}: {status}");
    assert_nothing_left(&name);
    assert!(run.delays.len() >= 5, "{tag}: {} samples", run.delays.len());
    run
}

/// Issue 17's AQM: the same overload through drop-tail, CoDel and FQ-CoDel. CoDel's target is
/// 5 ms; "near target" is under 5 x target. CoDel's control law cannot catch an unresponsive
/// 2x overload within seconds (its n-th drop of an episode comes about 2 x interval x sqrt(n)
/// after the start: ~400 drops in 4 s against ~3,300 frames too many), so a UDP flood fills a
/// CoDel FIFO to its hard limit as it fills drop-tail's; what CoDel keeps near target is a
/// load that responds to drops (TCP), and what FQ-CoDel keeps near target under the flood is
/// every other flow (a ping). The numbers are printed for the record.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn aqm_codel_keeps_the_queue_near_target_where_drop_tail_bloats() {
    if !can_build_labs("aqm") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let udp = "udp 198.18.0.2 -b 20M -t 4";
    let tcp = "tcp 198.18.0.2 -C cubic -t 6";
    let base_rtt = 0.040;
    let target = 0.005;

    let tail_udp = loaded_run(None, udp, true);
    let codel_udp = loaded_run(Some("codel"), udp, false);
    let fq_udp = loaded_run(Some("fq_codel"), udp, true);
    let tail_tcp = loaded_run(None, tcp, false);
    let codel_tcp = loaded_run(Some("codel"), tcp, false);
    let worst = |p: &[f64]| p.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "aqm: UDP 20M: drop-tail queue delay max {:.3} s, pings {:.3?} s and {} lost; codel max {:.3} s, settled {:.3} s, {}; fq_codel ping max {:.4} s over {} pings ({} lost), {}",
        tail_udp.max(),
        tail_udp.pings,
        tail_udp.pings_lost,
        codel_udp.max(),
        codel_udp.settled(),
        codel_udp.aqm,
        worst(&fq_udp.pings),
        fq_udp.pings.len(),
        fq_udp.pings_lost,
        fq_udp.aqm,
    );
    eprintln!(
        "aqm: TCP cubic: drop-tail queue delay max {:.3} s, settled {:.3} s; codel max {:.4} s, settled {:.4} s, {}",
        tail_tcp.max(),
        tail_tcp.settled(),
        codel_tcp.max(),
        codel_tcp.settled(),
        codel_tcp.aqm,
    );
    // Drop-tail bloats under both loads.
    assert!(
        tail_udp.max() > 0.2,
        "drop-tail under UDP: {:?}",
        tail_udp.delays
    );
    // A ping behind drop-tail's full queue waits the whole queue, or finds it full and is lost.
    assert!(
        !tail_udp.pings.is_empty() || tail_udp.pings_lost > 0,
        "no ping sent under drop-tail"
    );
    assert!(
        tail_udp.pings.iter().all(|&rtt| rtt > base_rtt + 0.2),
        "{:?}",
        tail_udp.pings
    );
    assert!(
        tail_tcp.max() > 0.2,
        "drop-tail under TCP: {:?}",
        tail_tcp.delays
    );
    // CoDel drops under the flood, at the pace its control law allows (not enough to matter).
    let codel_drops = codel_udp.aqm["drops"].as_u64().unwrap();
    assert!((50..2_000).contains(&codel_drops), "{}", codel_udp.aqm);
    // CoDel keeps TCP's standing queue near target.
    assert!(
        codel_tcp.aqm["drops"].as_u64().unwrap() > 0,
        "{}",
        codel_tcp.aqm
    );
    assert!(
        codel_tcp.settled() < 5.0 * target,
        "codel under TCP: {:?}",
        codel_tcp.delays
    );
    // FQ-CoDel serves the ping ahead of the flood.
    assert!(
        fq_udp.pings.len() >= 3 && fq_udp.pings_lost == 0,
        "{:?}, {} lost",
        fq_udp.pings,
        fq_udp.pings_lost
    );
    assert!(
        worst(&fq_udp.pings) < base_rtt + 5.0 * target,
        "fq_codel ping under UDP: {:?}",
        fq_udp.pings
    );
    assert_eq!(fq_udp.aqm["ecn_marks"], 0);
}

/// Runs `wirespeed latency` from h1 to an agent on h2 across a 10 Mbit/s link with 10 ms of
/// delay each way and a drop-tail queue of 100 frames (`aqm` added when given), with one cubic
/// upload as the load; returns the document.
fn latency_across(aqm: Option<&str>, load: &str) -> serde_json::Value {
    latency_run(aqm, &format!("--idle 2s -t 6s -P 1 --direction up {load}"))
}

/// Runs `wirespeed latency 198.18.0.2 ARGS --json` from h1 across the link `latency_across`
/// builds; returns the document.
fn latency_run(aqm: Option<&str>, args: &str) -> serde_json::Value {
    let load = args;
    let mut topology = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\ndelay = \"10ms\"\nqueue = 100\n".to_string();
    if let Some(a) = aqm {
        topology.push_str(&format!("aqm = \"{a}\"\n"));
    }
    let tag = format!(
        "latency-{}-{}",
        aqm.unwrap_or("tail"),
        load.bytes().map(u64::from).sum::<u64>()
    );
    let path = temp_topology(&tag, &topology);
    let exe = env!("CARGO_BIN_EXE_wirespeed");
    // The agent serves every session of the run and is stopped by its PID when it ends. It
    // runs at a real-time priority (as the lab's emulator does) where `chrt` can give it: its
    // echo's answer is the one user-space step in a UDP probe's round trip, and on a CI
    // machine whose other tests load both cores its wake-up otherwise adds tens of
    // milliseconds to some probes (measured beside a loopback `tcp -P 2`: the probes' mean
    // rise 153% of the lab's queue under bbr; with `chrt -f 10`, 99.5-101%).
    let script = format!(
        "W='{exe}'; L=\"$WIRESPEED_LAB\"\n\
         RT=; \"$W\" lab exec \"$L\" h2 -- chrt -f 10 true 2>/dev/null && RT='chrt -f 10'\n\
         \"$W\" lab exec \"$L\" h2 -- $RT \"$W\" serve -B 198.18.0.2 >/dev/null 2>&1 &\n\
         agent=$!\n\
         for i in $(seq 40); do\n\
           if \"$W\" lab exec \"$L\" h1 -- \"$W\" latency 198.18.0.2 {load} --json; then\n\
             kill $agent; wait $agent; exit 0\n\
           fi\n\
           sleep 0.25\n\
         done\n\
         kill $agent; exit 1"
    );
    let out = Command::new(exe)
        .args([
            "lab",
            "run",
            &path.display().to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = stdout.find('{').expect("a JSON document");
    serde_json::from_str(&stdout[start..]).unwrap()
}

/// The UDP echo's idle p50, loaded p50 and loaded p99, ms.
fn udp_echo(doc: &serde_json::Value) -> (f64, f64, f64) {
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    let f = |phase: &str, q: &str| udp[phase][q].as_f64().unwrap();
    (
        f("idle", "p50_ms"),
        f("loaded", "p50_ms"),
        f("loaded", "p99_ms"),
    )
}

/// The UDP echo's idle p50 and p90, ms.
fn udp_echo_idle(doc: &serde_json::Value) -> (f64, f64) {
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    (
        udp["idle"]["p50_ms"].as_f64().unwrap(),
        udp["idle"]["p90_ms"].as_f64().unwrap(),
    )
}

/// True if the kernel offers congestion control `cc` (loading its module if need be).
fn has_congestion_control(cc: &str) -> bool {
    let available = || {
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .is_ok_and(|t| t.split_whitespace().any(|a| a == cc))
    };
    available()
        || (Command::new("modprobe")
            .arg(format!("tcp_{cc}"))
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            && available())
}

/// Issue 17's ground truth for `wirespeed latency` under TCP: one upload, cubic and then bbr,
/// across a 10 Mbit/s link with 10 ms each way and a drop-tail queue of 100 frames. The probes'
/// mean round trip over the loaded window rose by what the lab's emulator sampled in the
/// link's two queues over the same window (every millisecond, read through `lab status` at the
/// window's ends), within 10%, plus the idle phase's own p50-p90 spread (the probes' noise
/// without any load, measured in the same run). The verdict names the link's queue and its
/// size in milliseconds. cubic fills the queue (the median rises by up to the 123 ms of 100
/// full frames); bbr keeps about one bandwidth-delay product in it (8-20 ms here).
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn latency_under_tcp_agrees_with_the_queue_the_lab_samples() {
    if !can_build_labs("latency-tcp") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // 2 x 10 ms, plus a minimum frame's serialization each way (84 byte times at 10 Mbit/s).
    let base = 20.0 + 2.0 * 84.0 * 8.0 / 10e6 * 1e3;
    let full = 100.0 * 1538.0 * 8.0 / 10e6 * 1e3;
    for cc in ["cubic", "bbr"] {
        if !has_congestion_control(cc) {
            eprintln!("latency-tcp {cc}: skipped: the kernel has no {cc}");
            continue;
        }
        let doc = latency_across(None, &format!("-C {cc}"));
        let (idle, loaded, p99) = udp_echo(&doc);
        let (_, idle_p90) = udp_echo_idle(&doc);
        let w = &doc["result"]["link_queue"];
        let f = |k: &str| w[k].as_f64().unwrap_or(f64::NAN);
        let queue = f("out_mean_ms") + f("back_mean_ms");
        let probes = f("probe_mean_increase_ms");
        let spread = (idle_p90 - idle).max(0.0);
        eprintln!(
            "latency lab, {cc} up: idle p50 {idle:.3} ms (base {base:.3}), loaded p50 {loaded:.3}, p99 {p99:.3} ms; the lab sampled {:.3} ms out + {:.4} ms back over {:.2} s ({} samples), the probes' mean rose by {probes:.3} ms ({:.1}%, idle spread {spread:.3} ms); upload {:.4e} bit/s; verdicts {}",
            f("out_mean_ms"),
            f("back_mean_ms"),
            f("to_seconds") - f("from_seconds"),
            w["samples"],
            probes / queue * 100.0,
            doc["result"]["upload_bits_per_second"]
                .as_f64()
                .unwrap_or(f64::NAN),
            doc["verdicts"]
        );
        assert!(
            (idle - base).abs() < 0.2 * base,
            "idle {idle} against {base}"
        );
        // At least 2 s of the emulator's 1 ms samples, and the probes sent meanwhile.
        assert!(w["samples"].as_u64().unwrap() >= 2_000, "{w}");
        assert!(w["probes"].as_u64().unwrap() >= 40, "{w}");
        assert!(queue > 1.0, "{cc} built no queue: {w}");
        assert!(
            (probes - queue).abs() <= 0.1 * queue + spread,
            "{cc}: the probes' mean rose by {probes} ms, the lab's queues held {queue} ms (idle spread {spread})"
        );
        assert!(p99 - idle < 1.1 * full + 5.0, "p99 {p99} past a full queue");
        let verdicts = doc["verdicts"].to_string();
        assert!(
            verdicts.contains("drop-tail queue (it holds 100 frames: 123 ms when full"),
            "{verdicts}"
        );
        assert!(
            verdicts.contains("sampling the queue of link h1-h2 every 1 ms"),
            "{verdicts}"
        );
        // The split: the link's queue as the lab sampled it; the qdisc of eth0 (the emulator
        // reads the TAP as frames come, so the queue forms in the link, not here) a small
        // part of it; the sender's socket buffer holding the upload's unsent bytes, which the
        // probes on flows of their own do not wait behind.
        let queues = doc["result"]["queues"].as_array().unwrap();
        let kind = |k: &str| {
            queues
                .iter()
                .find(|q| q["queue"] == k)
                .unwrap_or_else(|| panic!("no {k} in {queues:?}"))
        };
        let ms = |k: &str| kind(k)["mean_ms"].as_f64().unwrap();
        assert_eq!(ms("lab_link"), f("out_mean_ms"));
        assert!(
            kind("qdisc")["location"]
                .as_str()
                .unwrap()
                .starts_with("the qdisc of eth0 ("),
            "{queues:?}"
        );
        assert!(
            ms("qdisc") < 0.1 * ms("lab_link"),
            "the qdisc held {} ms, the link {} ms",
            ms("qdisc"),
            ms("lab_link")
        );
        assert_eq!(kind("sender_socket_buffers")["probes_wait_here"], false);
        assert!(
            kind("sender_socket_buffers")["mean_bytes"]
                .as_f64()
                .unwrap()
                > 0.0,
            "{queues:?}"
        );
        assert!(
            verdicts.contains("queue: the emulated link h1-h2's drop-tail queue (100 frames"),
            "{verdicts}"
        );
        assert!(verdicts.contains("tcp_notsent_lowat"), "{verdicts}");
        if cc == "cubic" {
            // Loss-based: the sawtooth keeps the queue between half full and full.
            assert!(
                loaded - idle > 0.4 * full && loaded - idle < 1.05 * full,
                "loaded {loaded}, idle {idle}, full queue {full}"
            );
        }
    }
}

/// Issue 17's fq_codel ground truth: `aqm = "fq_codel"` on the same link under the same
/// uploads (cubic, then bbr). The probes' flow is sparse, so FQ-CoDel serves it ahead of the
/// upload's queue: its p99 stays under CoDel's 5 ms target + one full frame's serialization
/// (1.23 ms at 10 Mbit/s) + a stated margin of 5 ms above the idle median (for the agent's and
/// the client's wake-ups on a loaded 2-core machine; measured +1.3-1.9 ms, once +5.2 ms), where
/// behind drop-tail it is a full queue (+118 ms with cubic). And the upload still reaches 95%
/// of the envelope's ceiling for TCP on that link (`wirespeed envelope --rate 10M`: 9.415
/// Mbit/s), measured over the loaded window.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn latency_under_load_with_fq_codel_stays_near_target() {
    if !can_build_labs("latency-fq") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let envelope = wirespeed(&["envelope", "--rate", "10M", "--json"]);
    assert_eq!(envelope.status, 0, "{}", envelope.stderr);
    let envelope: serde_json::Value = serde_json::from_str(&envelope.stdout).unwrap();
    let ceiling = envelope["result"]["goodput_bits_per_second"]
        .as_f64()
        .unwrap();
    let (target, frame, margin) = (5.0, 1538.0 * 8.0 / 10e6 * 1e3, 5.0);
    for cc in ["cubic", "bbr"] {
        if !has_congestion_control(cc) {
            eprintln!("latency-fq {cc}: skipped: the kernel has no {cc}");
            continue;
        }
        let fq = latency_across(Some("fq_codel"), &format!("-C {cc}"));
        let (idle, loaded, p99) = udp_echo(&fq);
        let rate = fq["result"]["upload_bits_per_second"].as_f64().unwrap();
        eprintln!(
            "latency lab, fq_codel, {cc} up: idle {idle:.3}, loaded p50 {loaded:.3}, p99 {p99:.3} ms (+{:.3}, bound {:.3}); upload {rate:.4e} bit/s = {:.1}% of the envelope's {ceiling:.4e}; verdicts {}",
            p99 - idle,
            target + frame + margin,
            rate / ceiling * 100.0,
            fq["verdicts"]
        );
        assert!(
            fq["verdicts"].to_string().contains("managed by fq_codel"),
            "{}",
            fq["verdicts"]
        );
        assert!(
            p99 - idle < target + frame + margin,
            "fq_codel, {cc}: p99 {p99}, idle {idle}"
        );
        // Issue 31: the probes' own rise, not the load's queue, says whether they waited in
        // the link's queue: where the link held more than twice what the probes rose, they
        // did not wait in it, and it is not "near its target" above twice the 5 ms target.
        let link = fq["result"]["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["queue"] == "lab_link")
            .cloned();
        if let Some(link) = link {
            let held = link["mean_ms"].as_f64().unwrap();
            if held > 2.0 * (loaded - idle) {
                assert_eq!(link["probes_wait_here"], false, "{link}");
            }
            if held > 2.0 * target {
                assert!(
                    !link["remedy"].as_str().unwrap().contains("near its"),
                    "{link}"
                );
            }
        }
        assert!(
            rate >= 0.95 * ceiling,
            "fq_codel, {cc}: upload {rate} against the envelope's {ceiling}"
        );
    }
}

/// Issue 17: the latency probes' own load is reported and stays under 1% of the link. The
/// lab counts every frame of the idle phase, when only the probes run, on the 10 Mbit/s link
/// each way: with the default probe interval (40 ms) that is under 1% of the link both ways,
/// and the run's own estimate of its probes' wire bytes (which it reports for the loaded phase)
/// agrees with the count within 10%; probing every 5 ms is past 1%, and the run says so.
#[test]
fn latency_probes_own_load_stays_under_one_percent_of_the_link() {
    if !can_build_labs("latency-probe-load") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for (interval, under) in [("40ms", true), ("5ms", false)] {
        let doc = latency_run(
            None,
            &format!("--idle 3s -t 1s -P 1 --direction up --probe-interval {interval}"),
        );
        let r = &doc["result"];
        let c = &r["probe_load_on_link"];
        let f = |k: &str| c[k].as_f64().unwrap_or(f64::NAN);
        eprintln!(
            "latency lab, probes every {interval}: the lab counted {:.0} bit/s out ({:.3}%, {:.1} frames/s) and {:.0} bit/s back ({:.3}%, {:.1} frames/s) over {:.2} s idle; estimated {:.0} and {:.0}; loaded phase: {} of the link; warnings {}",
            f("out_bits_per_second"),
            f("out_share_percent"),
            f("out_frames_per_second"),
            f("back_bits_per_second"),
            f("back_share_percent"),
            f("back_frames_per_second"),
            f("to_seconds") - f("from_seconds"),
            f("estimate_out_bits_per_second"),
            f("estimate_back_bits_per_second"),
            r["probe_share_of_link_percent"],
            doc["warnings"]
        );
        assert!(f("to_seconds") - f("from_seconds") > 2.0, "{c}");
        for way in ["out", "back"] {
            let counted = f(&format!("{way}_bits_per_second"));
            let estimated = f(&format!("estimate_{way}_bits_per_second"));
            assert!(
                (estimated - counted).abs() < 0.1 * counted,
                "{way}: estimated {estimated}, the lab counted {counted}"
            );
            let share = f(&format!("{way}_share_percent"));
            assert_eq!(share < 1.0, under, "{way}: {share}% of the link");
        }
        let reported = r["probe_share_of_link_percent"].as_f64().unwrap();
        assert_eq!(reported < 1.0, under, "{reported}");
        let warned = doc["warnings"]
            .to_string()
            .contains("the probes' own load is");
        assert_eq!(warned, !under, "{}", doc["warnings"]);
    }
}

/// Issue 17's idle ground truth: with no load, the UDP echo's network round trip (the raw
/// round trip less the agent's residence time, from its kernel's receive stamp to its kernel's
/// transmit stamp, which the agent reports in a follow-up) is 2D + the probe's serialization
/// both ways, within 20 us at its best and within 60 us at its median. What remains above it
/// is the emulator's release (a few us) and each receiving host's TAP write path (5-10 us,
/// bench/RESULTS.md); without the follow-ups the agent's own send path (10-30 us) stays in
/// the network's round trip and the residence ends at the `sendmsg`, which the count of
/// probes carried to the transmit stamp checks; without the residence (the agent's wake-up,
/// 70-110 us) or with the emulator charging each frame from its own read instead of the
/// sending kernel's transmit stamp (130-150 us a round trip) the best probe is 180-300 us
/// above. The bounds are on the best probe and the median of some 400 (every 10 ms for 4 s: a
/// loaded CI machine delays some probes, not all; the best of a second run of the same if the
/// first run's best missed, so a burst of other work cannot fail it alone), and the raw round
/// trip is checked to contain the network's.
///
/// No probe may beat the wire: every stamp that bounds the network's round trip is taken
/// before the emulator starts the frame on the link (each end's transmit stamp as the datagram
/// enters its device's queue) or after the frame has left it (receive stamps), so the best
/// probe is at least 2D + serialization, checked without a second chance (2 us of slack for
/// rounding). With the client's transmit stamp taken at the driver instead, after the
/// device's packet sockets (where the emulator stamps the frame) had been served, the best
/// probe came 0.5-8.8 us under the wire in 4 of 6 runs and 139 us under in one of eight.
#[test]
fn latency_idle_is_within_20_us_of_2d_plus_serialization() {
    if !can_build_labs("latency-idle-truth") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // The echo's IP packet (IPv4, UDP, cookie, sequence, residence and follow-up fields: 76
    // bytes) in Ethernet framing (header, FCS, preamble, gap: 38 bytes) at 10 Mbit/s, each
    // way; 10 ms each way.
    let truth_us = |ip_bytes: f64| 2.0 * 10_000.0 + 2.0 * (ip_bytes + 38.0).max(84.0) * 8.0 / 10.0;
    let us = |v: &serde_json::Value| v.as_f64().unwrap() * 1e3;
    let mut runs = 0;
    let doc = loop {
        runs += 1;
        let doc = latency_run(
            None,
            "--idle 4s -t 1s -P 1 --direction up --probe-interval 10ms",
        );
        let net = doc["result"]["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kind"] == "udp_echo")
            .map(|k| k["network_round_trip"].clone())
            .unwrap_or_default();
        let best = net["idle"]["min_ms"].as_f64();
        let truth = truth_us(net["probe_ip_bytes"].as_f64().unwrap_or(0.0));
        if let Some(b) = best {
            assert!(
                b * 1e3 >= truth - 2.0,
                "a probe beat the wire: best network round trip {:.1} us against {truth:.1} us",
                b * 1e3
            );
        }
        if runs == 2 || best.is_some_and(|b| b * 1e3 - truth <= 20.0) {
            break doc;
        }
        eprintln!("latency lab idle: first run's best {best:?} ms, running again");
    };
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    let net = &udp["network_round_trip"];
    assert!(net.is_object(), "no network round trip: {udp}");
    assert_eq!(net["residence_rejected"], 0, "{net}");
    assert_eq!(net["probe_ip_bytes"], 76, "{net}");
    let truth_us = truth_us(76.0);
    let (best, median) = (us(&net["idle"]["min_ms"]), us(&net["idle"]["p50_ms"]));
    let (raw_best, raw_median) = (us(&udp["idle"]["min_ms"]), us(&udp["idle"]["p50_ms"]));
    eprintln!(
        "latency lab idle, against 2D + serialization = {truth_us:.1} us: network best {:+.1} us, median {:+.1} us; raw best {:+.1}, median {:+.1}; agent residence p50 {:.1} us; {} probes, {} to the agent's transmit stamp",
        best - truth_us,
        median - truth_us,
        raw_best - truth_us,
        raw_median - truth_us,
        us(&net["agent_residence_idle"]["p50_ms"]),
        net["idle"]["probes"],
        net["idle_to_transmit_stamp"],
    );
    let probes = net["idle"]["probes"].as_u64().unwrap();
    assert!(probes >= 200, "{net}");
    // Each residence reaches the agent's transmit stamp (its follow-up came with the next
    // reply), but for the last probes and a reply lost now and then.
    let to_transmit = net["idle_to_transmit_stamp"].as_u64().unwrap();
    assert!(
        to_transmit * 10 >= probes * 9,
        "{to_transmit} of {probes} idle probes' residences reached the agent's transmit stamp"
    );
    assert!(
        best - truth_us <= 20.0 && best >= truth_us - 2.0,
        "best network round trip {best:.1} us against {truth_us:.1} us"
    );
    assert!(
        median - truth_us <= 60.0 && median >= truth_us - 20.0,
        "median network round trip {median:.1} us against {truth_us:.1} us"
    );
    assert!(raw_median >= median, "raw {raw_median} < network {median}");
}

/// Issue 17's first ground truth: a UDP load above the link's rate holds the drop-tail queue
/// full, so every probe that gets in waits the whole queue: the loaded median UDP round trip
/// is the idle one plus 100 full frames at 10 Mbit/s (123 ms), within 5%.
#[test]
fn latency_behind_a_full_drop_tail_queue_is_the_queue() {
    if !can_build_labs("latency-udp") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let queue = 100.0 * 1538.0 * 8.0 / 10e6 * 1e3;
    let doc = latency_across(None, "--udp-load 12M");
    let (idle, loaded, p99) = udp_echo(&doc);
    eprintln!(
        "latency lab, UDP 12M into 10M: idle p50 {idle:.3} ms, loaded p50 {loaded:.3} ms (+{:.2}, the full queue {queue:.2}), p99 {p99:.3} ms",
        loaded - idle
    );
    assert!(
        ((loaded - idle) - queue).abs() < 0.05 * queue,
        "increase {} against {queue}",
        loaded - idle
    );
}

/// h2's link-local address on eth0, once duplicate address detection has passed (bounded).
fn link_local(ns: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = Command::new("ip")
            .args([
                "-n", ns, "-6", "-o", "addr", "show", "dev", "eth0", "scope", "link",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if let Some(addr) = text
            .split_whitespace()
            .skip_while(|w| *w != "inet6")
            .nth(1)
            .and_then(|a| a.split('/').next())
            && !text.contains("tentative")
        {
            return addr.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no usable link-local address on {ns} eth0: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wirespeed_in(ns: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_wirespeed")])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A link-local address means nothing without its link: across the lab's link, h1 reaches
/// h2's agent at `fe80::..%eth0` for TCP (with -S and --mptcp), UDP (whose data ports must keep
/// the zone) and latency's echo and request/response probes; without the zone, one line says
/// what to add.
#[test]
fn link_local_agents_are_reached_through_their_zone() {
    if !can_build_labs("link_local") {
        return;
    }
    let _guard = LAB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = temp_topology("zone", &TWO_HOSTS.replace("\"10M\"", "\"100M\""));
    let lab = UpLab::up(&path.display().to_string());
    let _ = std::fs::remove_file(&path);
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let peer = link_local(&h2);
    let agent = crate::util::ServeProcess::start_in(Some(&h2), "::", &["--mptcp"]);
    let port = agent.port.to_string();
    let zoned = format!("{peer}%eth0");
    let mptcp =
        std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|s| s.trim() == "1");
    let tcp = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["tcp", zoned.as_str(), "-p", &port, "-t", "1", "--json"];
        args.extend(extra);
        let (status, stdout, stderr) = wirespeed_in(&h1, &args);
        assert_eq!(status, 0, "{args:?}: {stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let received = doc["result"]["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap();
        assert!(received > 10e6, "TCP over the 100 Mbit/s link: {received}");
        doc
    };
    let ends = |doc: &serde_json::Value, field: &str| -> Vec<serde_json::Value> {
        doc["result"]["end"]["streams"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| {
                [
                    s["sender"]["socket"][field].clone(),
                    s["receiver"]["socket"][field].clone(),
                ]
            })
            .collect()
    };
    // The traffic class at both ends (IPv6's TOS).
    let doc = tcp(&["-S", "af41"]);
    assert_eq!(ends(&doc, "tos"), vec![serde_json::json!(0x88); 2]);
    // Across a link the sender asks the kernel to pace it, the receiver does not (issue 20).
    assert_eq!(
        ends(&doc, "paced"),
        vec![serde_json::json!(true), serde_json::json!(false)]
    );
    if mptcp {
        let doc = tcp(&["--mptcp"]);
        assert_eq!(ends(&doc, "mptcp"), vec![serde_json::json!(true); 2]);
    }
    let bracketed = format!("[{peer}%eth0]:{port}");
    let (status, stdout, stderr) =
        wirespeed_in(&h1, &["udp", &bracketed, "-t", "0.5", "-b", "5M", "--json"]);
    assert_eq!(status, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        doc["result"]["end"]["sum_received"]["bytes"]
            .as_u64()
            .unwrap()
            > 100_000,
        "UDP data reached the agent through the zone"
    );
    let (status, stdout, stderr) = wirespeed_in(
        &h1,
        &[
            "latency", &zoned, "-p", &port, "--idle", "1s", "-t", "1s", "--json",
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("udp_echo"), "{stdout}");
    // probe: ICMP echo and the agent's UDP echo, to the same zoned address.
    for udp in [false, true] {
        let mut args = vec![
            "probe",
            zoned.as_str(),
            "-c",
            "2",
            "--sizes",
            "100,400",
            "--json",
        ];
        if udp {
            args.extend(["--udp", "-p", &port]);
        }
        let (status, stdout, stderr) = wirespeed_in(&h1, &args);
        assert_eq!(status, 0, "{args:?}: {stderr}");
        assert!(
            stdout.contains("\"schema\": \"wirespeed.probe.v1\""),
            "{stdout}"
        );
    }
    let (status, _, stderr) = wirespeed_in(&h1, &["tcp", &peer, "-p", &port, "-t", "1"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("is link-local: name its interface"),
        "{stderr}"
    );
    drop(agent);
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}
