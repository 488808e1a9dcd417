//! Every verdict earned (issue 15, items 1-4): the link rate comes from the lab's truth, never
//! from a virtual interface; a partial run says so, gives no verdict and exits 3; a paced UDP
//! sender ends by its deadline and on a signal; `-O` leaves warm-up retransmits out.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use wirespeed_lab::sys;

use crate::util::{Netns, assert_one_line_error, wirespeed};

/// Sends `signal` to a child this test started.
fn signal(child: &Child, signal: i32) {
    // SAFETY: signals our own child by its PID.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// Waits for the child to end, at most `limit`; kills it (and fails) past that.
fn wait_bounded(child: &mut Child, limit: Duration) -> (i32, Duration) {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("still running {limit:?} after it should have ended");
}

/// Reads lines until one satisfies `found` (bounded by the child's own test length).
fn read_until(out: &mut BufReader<ChildStdout>, found: impl Fn(&str) -> bool) -> String {
    let mut seen = String::new();
    for _ in 0..200 {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if found(&line) {
            return seen;
        }
    }
    panic!("never saw the line expected; output: {seen}");
}

#[test]
fn an_interrupted_run_is_partial_with_no_verdict_and_status_3() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["tcp", "-t", "20", "-i", "0.2", "--json-stream"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, |l| l.contains("\"interval\""));
    signal(&child, libc::SIGINT);
    let (status, _) = wait_bounded(&mut child, Duration::from_secs(10));
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(
        status, 130,
        "an interrupted run exits 128 + SIGINT: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("partial result: interrupted"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(doc["result"]["partial"], true, "{doc}");
    assert!(
        doc["result"]["partial_reason"]
            .as_str()
            .unwrap()
            .contains("interrupted by SIGINT"),
        "{doc}"
    );
    assert_eq!(
        doc["verdicts"].as_array().unwrap().len(),
        0,
        "no verdict on an interrupted run: {doc}"
    );

    // The text says so before the figures; over UDP, it shows what the agent received before
    // the signal (not "0 B in 0 us"), and no TCP retransmission count (issue 33).
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["udp", "-t", "20", "-i", "0.2", "-b", "20M"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, |l| l.starts_with("[   0]"));
    signal(&child, libc::SIGTERM);
    let (status, _) = wait_bounded(&mut child, Duration::from_secs(10));
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(status, 143, "128 + SIGTERM");
    let body: Vec<&str> = rest
        .lines()
        .skip_while(|l| !l.starts_with("- - -"))
        .collect();
    assert!(
        body.get(1)
            .is_some_and(|l| l.starts_with("PARTIAL RESULT:")),
        "{rest}"
    );
    assert!(!rest.contains("verdict:"), "{rest}");
    assert!(!rest.contains("own ceiling"), "{rest}");
    let received = body
        .iter()
        .find(|l| l.trim_start().starts_with("received"))
        .unwrap_or_else(|| panic!("a received line: {rest}"));
    let bytes: f64 = received
        .split_whitespace()
        .nth(1)
        .and_then(|b| b.parse().ok())
        .unwrap_or_else(|| panic!("a count of what arrived: {received}"));
    assert!(
        bytes > 0.0,
        "the agent received data before the signal: {rest}"
    );
    assert!(!rest.contains("retr"), "no retransmissions on UDP: {rest}");
}

#[test]
fn a_file_to_send_must_be_a_readable_regular_file() {
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    assert_one_line_error(
        &wirespeed(&["tcp", "--file", dir, "-t", "1"]),
        "is a directory: give a regular file",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "--file", "/nonexistent/ws-file", "-t", "1"]),
        "--file /nonexistent/ws-file: cannot read it (No such file or directory)",
    );
    let fifo = std::env::temp_dir().join(format!("ws-verdicts-fifo-{}", std::process::id()));
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let run = wirespeed(&["tcp", "--file", fifo.to_str().unwrap(), "-t", "1"]);
    let _ = std::fs::remove_file(&fifo);
    assert_one_line_error(&run, "is not a regular file");
    // Root reads any file; a mode-000 file is unreadable only to others.
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        let locked =
            std::env::temp_dir().join(format!("ws-verdicts-locked-{}", std::process::id()));
        std::fs::write(&locked, b"data").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        let run = wirespeed(&["tcp", "--file", locked.to_str().unwrap(), "-t", "1"]);
        let _ = std::fs::remove_file(&locked);
        assert_one_line_error(&run, "cannot read it (Permission denied)");
    }
}

#[test]
fn a_udp_rate_too_low_for_one_datagram_is_refused() {
    let run = wirespeed(&["udp", "-b", "1", "-t", "2"]);
    assert_one_line_error(&run, "-b 1 bit/s is too low to send one 1472-byte datagram");
    assert!(run.stderr.contains("e.g. -b 6k"), "{}", run.stderr);
    assert_one_line_error(
        &wirespeed(&["udp", "-b", "2k", "-t", "2"]),
        "use more than 5888 bit/s",
    );
}

#[test]
fn a_slow_udp_pacer_ends_by_its_deadline_and_on_sigterm() {
    // One 1472-byte datagram every 1.96 s: the pacer sleeps until the rate has paid for it.
    let t = Instant::now();
    let run = wirespeed(&["udp", "-b", "6k", "-t", "2.5", "--json"]);
    let took = t.elapsed();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(took < Duration::from_secs(8), "took {took:?} for -t 2.5");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let received = &doc["result"]["end"]["sum_received"];
    // The receiver's time is the test's, not the span its datagrams arrived in.
    assert!(received["seconds"].as_f64().unwrap() >= 2.4, "{received}");
    // The one datagram the rate pays for by 1.96 s, over 2.5 s: 4710 bit/s. Sending another
    // at time zero as well made 9421 bit/s, "157% of the target".
    let rate = received["bits_per_second"].as_f64().unwrap();
    assert!(
        (0.5 * 6000.0..1.0 * 6000.0).contains(&rate),
        "{rate} bit/s for -b 6k"
    );
    let verdict = doc["verdicts"][0].as_str().unwrap();
    assert!(
        verdict.starts_with("paced: 78.5% of the -b target of 6 kbit/s (one datagram is"),
        "{verdict}"
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["udp", "-b", "6k", "-t", "60", "-i", "0.2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, |l| l.starts_with("[   0]"));
    signal(&child, libc::SIGTERM);
    let (status, took) = wait_bounded(&mut child, Duration::from_secs(15));
    assert_eq!(status, 143, "an interrupted run exits 128 + SIGTERM");
    assert!(took < Duration::from_secs(5), "SIGTERM took {took:?}");
}

#[test]
fn udp_has_no_buffer_autotuning_to_report() {
    let run = wirespeed(&["udp", "-t", "0.5"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("socket buffers"))
        .unwrap();
    assert!(!line.contains("autotuning"), "{line}");
    // The receive buffer is wirespeed's own request, not the kernel's default (issue 33).
    assert!(
        line.contains("-w not set (receive: wirespeed asks for 4 MiB")
            && line.contains("net.core.rmem_max")
            && !line.contains("rmem_default"),
        "{line}"
    );
}

/// A running lab, taken down (by name) when dropped.
pub(crate) struct TestLab {
    name: String,
    status: serde_json::Value,
}

impl TestLab {
    pub(crate) fn up(file: &Path) -> TestLab {
        let run = wirespeed(&["lab", "up", file.to_str().unwrap(), "--json"]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let name = doc["result"]["name"].as_str().unwrap().to_string();
        let run = wirespeed(&["lab", "status", &name, "--json"]);
        let lab = TestLab {
            name,
            status: serde_json::from_str(&run.stdout).unwrap_or_default(),
        };
        assert_eq!(run.status, 0, "{}", run.stderr);
        lab
    }

    fn node(&self, node: &str) -> &serde_json::Value {
        self.status["result"]["lab"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == node)
            .unwrap()
    }

    pub(crate) fn namespace(&self, node: &str) -> String {
        self.node(node)["namespace"].as_str().unwrap().to_string()
    }

    /// The node's IPv4 address on eth0.
    fn address(&self, node: &str) -> String {
        let entry = self.node(node)["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a.as_str())
            .find(|a| a.starts_with("eth0 ") && !a.contains(':'))
            .unwrap();
        entry[5..].split('/').next().unwrap().to_string()
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let _ = wirespeed(&["lab", "down", &self.name]);
    }
}

/// An agent in a namespace, with the idle timeout these tests use.
pub(crate) struct NsAgent {
    _serve: crate::util::ServeProcess,
    pub(crate) port: String,
}

impl NsAgent {
    pub(crate) fn start(ns: &str, addr: &str) -> NsAgent {
        let serve = crate::util::ServeProcess::start_in(Some(ns), addr, &["--idle-timeout", "5s"]);
        NsAgent {
            port: serve.port.to_string(),
            _serve: serve,
        }
    }
}

pub(crate) fn in_namespace(ns: &str, args: &[&str]) -> crate::util::Run {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_wirespeed")])
        .args(args)
        .output()
        .unwrap();
    crate::util::Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn can_build_labs(test: &str) -> bool {
    if sys::has_net_admin() && Path::new("/dev/net/tun").exists() {
        true
    } else {
        eprintln!("{test}: skipped: needs CAP_NET_ADMIN and /dev/net/tun (CI runs as root)");
        false
    }
}

/// Two hosts on a 10 Mbit/s link with a 10-frame queue: Reno overflows it every few tenths of
/// a second (one segment more per round trip of a few milliseconds).
const TEN_MEGABIT: &str = "name = \"verdicts\"\n[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n\
    [[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\nqueue = 10\n";

#[test]
fn inside_a_10_mbit_lab_link_the_ceiling_is_the_links_and_warm_up_retransmits_stay_out() {
    if !can_build_labs("verdicts in a lab") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.beside_others();
    let file = std::env::temp_dir().join(format!("ws-verdicts-{}.toml", std::process::id()));
    std::fs::write(&file, TEN_MEGABIT).unwrap();
    let lab = TestLab::up(&file);
    let _ = std::fs::remove_file(&file);
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let agent = NsAgent::start(&h2, &lab.address("h2"));
    let target = lab.address("h2");

    // No rate flag: the TAP says 10 Gbit/s; the lab's 10 Mbit/s is the truth.
    let run = in_namespace(
        &h1,
        &["tcp", &target, "-p", &agent.port, "-t", "4", "-O", "1"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_the_10_mbit_link_is_the_bound(&run.stdout, &lab.name);
    assert!(!run.stdout.contains("Gbit/s envelope"), "{}", run.stdout);

    // -O: the totals' retransmits are those after the warm-up.
    let run = in_namespace(
        &h1,
        &[
            "tcp",
            &target,
            "-p",
            &agent.port,
            "-t",
            "4",
            "-O",
            "2",
            "-i",
            "0.5",
            "-C",
            "reno",
            "--json",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["result"]["link_rate"]["source"], "lab", "{doc}");
    assert_eq!(
        doc["result"]["link_rate"]["bits_per_second"], 10_000_000,
        "{doc}"
    );
    let (mut warm, mut after) = (0, 0);
    for iv in doc["result"]["intervals"].as_array().unwrap() {
        let r = iv["sum_sent"]["retransmits"].as_u64().unwrap_or(0);
        if iv["omitted"] == true {
            warm += r;
        } else {
            after += r;
        }
    }
    let total = doc["result"]["end"]["sum_sent"]["retransmits"]
        .as_u64()
        .unwrap();
    let slack = 1 + after / 10;
    eprintln!("-O 2: {warm} retransmits in the warm-up, {after} after, {total} in the totals");
    assert!(
        warm > slack,
        "Reno into a 10-frame queue retransmits: {warm} in the warm-up"
    );
    assert!(
        total <= after + slack,
        "{total} retransmits in the totals, {after} after the warm-up, {warm} in it"
    );
}

/// `tcp --iperf3` to an `iperf3 -s` in the far namespace names the lab link's ceiling and
/// reaches it as the native test above does (same verdict, same lab, same duration).
#[test]
fn inside_a_10_mbit_lab_link_tcp_iperf3_names_the_links_ceiling_like_the_native_test() {
    if !can_build_labs("tcp --iperf3 in a lab") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.beside_others();
    if Command::new("iperf3").arg("--version").output().is_err() {
        eprintln!(
            "tcp --iperf3 in a lab: skipped: iperf3 is not installed (scripts/install-deps.sh)"
        );
        return;
    }
    let file = std::env::temp_dir().join(format!("ws-verdicts-ip3-{}.toml", std::process::id()));
    std::fs::write(&file, TEN_MEGABIT.replace("verdicts", "verdicts-ip3")).unwrap();
    let lab = TestLab::up(&file);
    let _ = std::fs::remove_file(&file);
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    let target = lab.address("h2");
    // The namespace is this test's own: iperf3's port 5201 is free there.
    let mut server = Command::new("ip")
        .args(["netns", "exec", &h2, "iperf3", "-s", "-1", "-B", &target])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let run = loop {
        let run = in_namespace(&h1, &["tcp", &target, "--iperf3", "-t", "4", "-O", "1"]);
        if run.status != 0
            && run.stderr.contains("cannot connect")
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        break run;
    };
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("(iperf3 server)"), "{}", run.stdout);
    eprintln!("tcp --iperf3 across a 10 Mbit/s lab link: {}", run.stdout);
    assert_the_10_mbit_link_is_the_bound(&run.stdout, &lab.name);
    assert!(!run.stdout.contains("Gbit/s envelope"), "{}", run.stdout);
}

/// Issue 31's held-out path (labs/t1-path.toml): h1 -[10M]- r1 -[1.544M serial]- r2 -[100M]-
/// h2. The test leaves h1 by the 10 Mbit/s link; the T1 bounds it both ways, over IPv4 and
/// IPv6, and bbr at the T1's ceiling draws no warning about pacing.
#[test]
fn issue_31_t1_path_names_the_t1_as_the_bound_both_ways_and_bbr_at_the_ceiling_is_not_warned() {
    if !can_build_labs("t1 path verdicts") {
        return;
    }
    let _guard = crate::lab::LAB_LOCK.beside_others();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/t1-path.toml");
    let lab = TestLab::up(Path::new(file));
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    // h2 is end b of the third link: 198.18.2.2 and 2001:2:0:2::2 (addressing::plan).
    for (target, reverse) in [("198.18.2.2", false), ("2001:2:0:2::2", true)] {
        let agent = NsAgent::start(&h2, target);
        let mut args = vec![
            "tcp",
            target,
            "-p",
            &agent.port,
            "-t",
            "4",
            "-O",
            "1",
            "-C",
            "bbr",
            "--json",
        ];
        if reverse {
            args.push("-R");
        }
        let run = in_namespace(&h1, &args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let verdict = doc["verdicts"][0].as_str().unwrap_or_default();
        let rate = doc["result"]["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap();
        eprintln!("{target} reverse {reverse}: {rate:.0} bit/s: {verdict}");
        // The T1's goodput ceiling: 1.544 Mbit/s less HDLC framing and TCP/IP headers with
        // timestamps, a little under 1.5 Mbit/s for both families.
        let ceiling: f64 = verdict
            .split(" of the ")
            .nth(1)
            .and_then(|t| t.split(" Mbit/s").next())
            .and_then(|t| t.parse().ok())
            .map(|m: f64| m * 1e6)
            .unwrap_or_else(|| panic!("no ceiling in {verdict}"));
        assert!(ceiling > 1.40e6 && ceiling < 1.544e6, "{verdict}");
        assert!(
            verdict.contains("(link r1-r2 (1.544 Mbit/s serial line")
                && verdict.contains(&format!("of lab {} as configured", lab.name)),
            "{verdict}"
        );
        let way = if reverse { "r2 -> r1" } else { "r1 -> r2" };
        assert!(verdict.contains(way), "{verdict}");
        assert!(!verdict.contains("link h1-r1"), "{verdict}");
        // Never above the truth's ceiling (by more than a test's end rounding), and near it.
        assert!(rate <= 1.03 * ceiling, "{rate} above {ceiling}");
        if rate >= 0.9 * ceiling {
            assert!(verdict.starts_with("the link is the bound: "), "{verdict}");
        }
        let warnings = doc["warnings"].to_string();
        if rate >= 0.9 * ceiling {
            assert!(!warnings.contains("bbr without the fq qdisc"), "{warnings}");
        }
    }
}

#[test]
fn a_veth_speed_is_never_a_ceiling_and_the_verdict_says_how_to_give_one() {
    if !can_build_labs("veth speed") {
        return;
    }
    let ns = Netns::add(format!("ws-verdicts-veth-{}", std::process::id()));
    // A veth pair reports 10 Gbit/s; the test's address is on one end of it.
    ns.ip(&[
        "link", "add", "wsv0", "type", "veth", "peer", "name", "wsv1",
    ]);
    ns.ip(&["addr", "add", "198.18.250.1/24", "dev", "wsv0"]);
    for dev in ["lo", "wsv0", "wsv1"] {
        ns.ip(&["link", "set", dev, "up"]);
    }
    let agent = NsAgent::start(ns.name(), "198.18.250.1");
    let run = in_namespace(
        ns.name(),
        &["tcp", "198.18.250.1", "-p", &agent.port, "-t", "0.5"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let verdict = run
        .stdout
        .lines()
        .find(|l| l.starts_with("verdict:"))
        .unwrap_or_else(|| panic!("no verdict: {}", run.stdout));
    assert!(
        verdict.starts_with("verdict: link rate unknown (wsv0 is a veth")
            && verdict.contains("give it with --link-rate"),
        "{verdict}"
    );
    assert!(!run.stdout.contains("envelope ceiling ("), "{}", run.stdout);
    // Given, it is used and named.
    let run = in_namespace(
        ns.name(),
        &[
            "tcp",
            "198.18.250.1",
            "-p",
            &agent.port,
            "-t",
            "0.5",
            "--link-rate",
            "100G",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("envelope ceiling (100 Gbit/s Ethernet"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("; --link-rate)"), "{}", run.stdout);
}

/// The verdict of a test across the 10 Mbit/s lab link h1-h2 (native or `--iperf3`): the link
/// is the bound, at its envelope ceiling, named as the route's slowest element.
fn assert_the_10_mbit_link_is_the_bound(stdout: &str, lab: &str) {
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("verdict:"))
        .unwrap_or_else(|| panic!("no verdict: {stdout}"));
    assert!(
        verdict.starts_with("verdict: the link is the bound: ")
            && verdict
                .contains("of the 9.415 Mbit/s envelope ceiling (link h1-h2 (10 Mbit/s Ethernet")
            && verdict.contains(&format!(
                "route h1 -> h2 (1 hop(s)) of lab {lab} as configured"
            )),
        "{verdict}"
    );
}
