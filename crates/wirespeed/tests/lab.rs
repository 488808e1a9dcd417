//! `wirespeed lab`: topology errors everywhere; real labs where the test runs with
//! CAP_NET_ADMIN (CI runs as root). A test that cannot build a lab says why and returns.
//!
//! Labs run side by side: each has its own namespaces (`ws-NAME-node`), devices (`ws-ID-...`),
//! state directory and emulator process, and its 198.18.x addresses exist only inside its own
//! namespaces, so two labs numbered alike never meet. What they share is the machine's two
//! cores, so every test that builds a lab takes the lab lane ([`LAB_LOCK`]): beside the other
//! labs where it judges what a lab is and does (lifecycle, counters, verdicts, rates far from a
//! ceiling or against the lab's own counts), alone where it judges a rate within a few percent
//! of its ceiling or a delay within microseconds. The few loopback tests that load both cores
//! (the docs' lanes, the container fleet) or judge a paced rate take the lane too; those that
//! judge counts or shapes pace their flows instead and take no lane (iperf3's peers). Each
//! alone test says at its lock what it judges. Each test checks only its own lab's
//! namespaces and devices.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LockResult, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use wirespeed_lab::sys;

use crate::util::{assert_one_line_error, wirespeed};

#[path = "lab_shared.rs"]
mod shared;

#[path = "lab_safety.rs"]
mod safety;

#[path = "lab_rates.rs"]
mod rates;

#[path = "lab_latency.rs"]
mod latency;

/// The lab lane: see the module's doc for who takes it alone and who beside others.
pub(crate) static LAB_LOCK: LabLane = LabLane(RwLock::new(()));

/// Labs beside each other (a shared hold) or one alone (an exclusive one). Linux's `RwLock`
/// lets no new shared hold in while an exclusive one waits, so a test that needs the machine
/// quiet is not starved by a stream of labs. A hold is never taken twice on one thread.
pub(crate) struct LabLane(RwLock<()>);

impl LabLane {
    /// For a test whose lab may run beside other labs.
    pub(crate) fn beside_others(&self) -> LaneHold<RwLockReadGuard<'_, ()>> {
        let asked = Instant::now();
        let guard = self.0.read().unwrap_or_else(PoisonError::into_inner);
        LaneHold::new("beside", asked, guard)
    }

    /// For a test that judges a rate near its ceiling or a delay within microseconds: no other
    /// lab runs until it is done.
    pub(crate) fn alone(&self) -> LaneHold<RwLockWriteGuard<'_, ()>> {
        let asked = Instant::now();
        let guard = self.0.write().unwrap_or_else(PoisonError::into_inner);
        LaneHold::new("alone", asked, guard)
    }

    /// [`LabLane::alone`] in the shape of `Mutex::lock`, for the harness's scorecards (a
    /// failed test holding it poisons nothing that matters: the lane guards no data).
    pub(crate) fn lock(&self) -> LockResult<LaneHold<RwLockWriteGuard<'_, ()>>> {
        Ok(self.alone())
    }
}

/// A hold of the lab lane. With `WIRESPEED_LANE_LOG` set to a file, its release appends one
/// line to that file: the test (its thread's name), the hold's kind and its wait and hold in
/// seconds, with the moment it was asked for in seconds since the Unix epoch, so that a run's
/// waits can be laid out test by test (bench/e2e-test-times.py reads it). Unset, it logs
/// nothing.
pub(crate) struct LaneHold<G> {
    kind: &'static str,
    asked: Instant,
    asked_at: std::time::SystemTime,
    held: Instant,
    _guard: G,
}

impl<G> LaneHold<G> {
    fn new(kind: &'static str, asked: Instant, guard: G) -> Self {
        let held = Instant::now();
        LaneHold {
            kind,
            asked,
            asked_at: std::time::SystemTime::now() - held.duration_since(asked),
            held,
            _guard: guard,
        }
    }
}

impl<G> Drop for LaneHold<G> {
    fn drop(&mut self) {
        let Some(log) = std::env::var_os("WIRESPEED_LANE_LOG") else {
            return;
        };
        let since_epoch = self
            .asked_at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!(
            "{}\t{}\t{:.3}\t{:.3}\t{:.3}\n",
            std::thread::current().name().unwrap_or("?"),
            self.kind,
            since_epoch.as_secs_f64(),
            self.held.duration_since(self.asked).as_secs_f64(),
            self.held.elapsed().as_secs_f64(),
        );
        // One short append per hold: lines from the two test threads do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

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

/// A topology file of this test's own: tests that run side by side never share one, even
/// with the same tag.
pub(crate) fn temp_topology(tag: &str, text: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("ws-lab-test-{}-{n}-{tag}.toml", std::process::id()));
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
        UpLab::up_with(file, &[])
    }

    /// `lab up FILE --json` with `flags` added.
    pub(crate) fn up_with(file: &str, flags: &[&str]) -> UpLab {
        let mut args = vec!["lab", "up", file, "--json"];
        args.extend(flags);
        let run = wirespeed(&args);
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
    // Alone: TCP's goodput is judged within 3% of the link's ceiling (3.8% short beside other
    // labs at load 7).
    let _guard = LAB_LOCK.alone();
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
    // One lab's status for Prometheus: each port's figures, promtool-clean.
    let metrics = std::env::temp_dir().join(format!("wirespeed-{}.prom", lab.name));
    let run = wirespeed(&[
        "lab",
        "status",
        &lab.name,
        "--json",
        "--metrics-file",
        metrics.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    crate::metrics::assert_metrics_file(
        &metrics,
        &format!(
            "wirespeed_lab_status_rate_bytes_per_second{{lab=\"{}\",from=\"h1\",to=\"h2\",interface=\"eth0\"}}",
            lab.name
        ),
        10e6 / 8.0,
    );
    std::fs::remove_file(&metrics).unwrap();
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
    // Alone: the per-byte round trip is judged within 0.15 us/byte (140 us over 944 bytes).
    let _guard = LAB_LOCK.alone();
    let path = temp_topology("slow-host", SLOW_HOST);
    let lab = UpLab::up(&path.display().to_string());
    std::fs::remove_file(&path).unwrap();
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let to = Ipv4Addr::new(198, 18, 0, 2);
    ping(&h1, to, 56, 64).expect("an echo reply (and ARP resolved)");
    // The minimum of fifteen round trips a size, the two sizes in turn, so that a busy spell of
    // the machine delays both alike (five a size one after the other let the 1000-byte minimum
    // read 0.82 ms over its configured time, the 56-byte one 0.09 ms, at six test threads
    // under load 13: 3.377 us/byte).
    let (mut small, mut large) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..15 {
        for (payload, least) in [(56, &mut small), (1000, &mut large)] {
            if let Some((_, _, t)) = ping(&h1, to, payload, 64) {
                *least = least.min(t.as_secs_f64());
            }
        }
    }
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
    // Alone: the TCP goodput through the 2 Mbit/s hop is judged within 5% of its ceiling (beside
    // other labs at six test threads under load 6-10 it read 1.638 of 1.883 Mbit/s, -13%).
    let _guard = LAB_LOCK.alone();
    let lab = UpLab::up_with(&lab_file("router-chain.toml"), &["--measure-crossings"]);
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let far = Ipv4Addr::new(198, 18, 2, 2);
    let (kind, from, rtt) = ping(&h1, far, 56, 64).expect("an echo reply across two routers");
    assert_eq!((kind, from), (0, far));
    // 1 ms each way on the middle link, plus 2 x 488 us of serialization at 2 Mbit/s.
    assert!(rtt >= Duration::from_micros(2_900), "{rtt:?}");
    let (kind, from, _) = ping(&h1, far, 56, 2).expect("time exceeded from r2");
    assert_eq!((kind, from), (11, Ipv4Addr::new(198, 18, 1, 2)));
    // Asked to, the lab states its own cost per crossing of every link, measured as it came up
    // (issue 31): positive (a crossing wakes a thread and passes two kernels), bounded (not a
    // stall).
    let crossings = lab.status["result"]["lab"]["crossings"]
        .as_array()
        .expect("the lab's crossings in its record");
    let links: Vec<u64> = crossings
        .iter()
        .filter_map(|c| c["link"].as_u64())
        .collect();
    assert_eq!(links, [0, 1, 2], "{crossings:?}");
    for c in crossings {
        let cost = c["cost_us"].as_f64().unwrap_or(f64::NAN);
        assert!(cost > 0.0 && cost < 5_000.0, "{c}");
        assert!(c["spread_us"].as_f64().is_some_and(|s| s >= 0.0), "{c}");
        assert!(c["samples"].as_u64().is_some_and(|n| n >= 10), "{c}");
    }

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
    // Alone: the per-byte round trip is judged within 2% from minima of five pings a size.
    let _guard = LAB_LOCK.alone();
    let lab = UpLab::up(&lab_file("seed-001-path.toml"));
    let roc = lab.namespace("roc");
    let cbnewsa = Ipv4Addr::new(198, 18, 2, 2);
    // Bellovin's method: the minimum of the round trips per size, after one that resolves
    // every hop's ARP; here ten a size, the two sizes in turn, so that a busy spell of the
    // machine delays both alike (five a size one after the other read 288.28 us against
    // 294.87, -2.2%, at six test threads under load 6-10).
    ping(&roc, cbnewsa, 32, 64).expect("an echo reply over the DS0");
    let (mut small, mut large) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..10 {
        for (size, least) in [(32, &mut small), (432, &mut large)] {
            if let Some((_, _, t)) = ping(&roc, cbnewsa, size, 64) {
                *least = least.min(t.as_secs_f64());
            }
        }
    }
    assert!(
        small.is_finite() && large.is_finite(),
        "no echo reply over the DS0"
    );
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
    let _guard = LAB_LOCK.beside_others();
    let lab = UpLab::up(&lab_file("two-host-10m.toml"));
    let pid = lab.pid();
    // Without --measure-crossings the lab measures no crossing, yet `lab up` returned with
    // every neighbour entry resolved both ways, in both families (an entry the kernel has not
    // resolved has no link-layer address).
    assert!(
        lab.status["result"]["lab"]["crossings"].is_null(),
        "{}",
        lab.status["result"]["lab"]
    );
    for (node, peer) in [
        ("h1", "198.18.0.2"),
        ("h2", "198.18.0.1"),
        ("h1", "2001:2::2"),
    ] {
        let neigh = std::process::Command::new("ip")
            .args(["-n", &lab.namespace(node), "neigh", "show", peer])
            .output()
            .expect("ip runs");
        let text = String::from_utf8_lossy(&neigh.stdout);
        assert!(
            text.contains("lladdr"),
            "{node}'s entry for {peer}: {text:?}"
        );
    }
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
    let _guard = LAB_LOCK.beside_others();
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
    let _guard = LAB_LOCK.beside_others();
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
    let _guard = LAB_LOCK.alone();
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
    let _guard = LAB_LOCK.beside_others();
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
