//! iperf3's protocol through the binary, both ways, against Debian's iperf3 (3.12 here):
//! `wirespeed tcp|udp 127.0.0.1 --iperf3` against `iperf3 -s`, its bytes against what the
//! iperf3 server itself reports; and `iperf3 -c -J` against `wirespeed serve --iperf3 PORT`.
//! Skipped, with the reason printed, where iperf3 is not installed
//! (scripts/install-deps.sh installs it).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::util::{ChildGuard, ServeProcess, assert_one_line_error, wirespeed};

fn have_iperf3() -> bool {
    let ok = Command::new("iperf3").arg("--version").output().is_ok();
    if !ok {
        eprintln!("iperf3 is not installed: skipped (scripts/install-deps.sh installs it)");
    }
    ok
}

/// A one-off `iperf3 -s -J` on loopback, killed by its PID however the test ends.
struct Iperf3Server {
    child: ChildGuard,
    port: u16,
}

impl Iperf3Server {
    fn start() -> Iperf3Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = ChildGuard::new(
            Command::new("iperf3")
                .args(["-s", "-1", "-J", "-B", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("iperf3 -s starts"),
        );
        Iperf3Server { child, port }
    }

    /// Its JSON report once the test ended (it exits after one test), within 15 s.
    fn report(mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "iperf3 -s -1 did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut text = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("iperf3 -s -J: {e}: {text}"))
    }
}

/// `wirespeed PROTO 127.0.0.1 --iperf3 -p PORT ARGS --json` against a fresh `iperf3 -s`:
/// our document and the server's report. A run that met the server before it listened is
/// tried again (at most 10 s).
fn against_iperf3(proto: &str, args: &[&str]) -> (Value, Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let server = Iperf3Server::start();
        let port = server.port.to_string();
        let mut argv = vec![proto, "127.0.0.1", "--iperf3", "-p", &port, "--json"];
        argv.extend(args);
        let run = wirespeed(&argv);
        if run.status != 0 && run.stderr.contains("cannot connect") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        assert_eq!(run.status, 0, "{argv:?}: {}", run.stderr);
        let ours: Value = serde_json::from_str(&run.stdout).unwrap();
        return (ours, server.report());
    }
}

fn within(ours: f64, theirs: f64, percent: f64, what: &str) {
    assert!(theirs > 0.0, "{what}: iperf3 reported nothing");
    let off = (ours - theirs).abs() / theirs * 100.0;
    assert!(
        off <= percent,
        "{what}: ours {ours}, iperf3's server {theirs} ({off:.2}% apart)"
    );
}

/// One transfer counted at both ends: within 2%, or, when the reader fell behind (a loaded
/// machine, the busier half of `--bidir`), short of the sender's count by no more than what
/// the streams' buffers can hold when the test ends. Never more received than sent.
fn same_transfer(sent: f64, received: f64, streams: u32, what: &str) {
    assert!(received > 0.0, "{what}: nothing received");
    let short = sent - received;
    let off = short.abs() / received * 100.0;
    let buffered = wirespeed_net::sockopt::most_bytes_buffered() as f64 * f64::from(streams);
    assert!(
        off <= 2.0 || (short >= 0.0 && short <= buffered),
        "{what}: sent {sent}, received {received} ({off:.2}% apart, more than the {buffered} B \
         the streams' buffers hold)"
    );
}

fn num(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// This end's bytes (what it sent, or with -R received) are within 2% of what the iperf3
/// server counted itself, for one stream, -R, -P 4 and --bidir (each way); the document says what iperf3 lacks.
/// Counts, not rates, are judged (and a reader's lag by the buffers' size, not a share of the
/// test), so each run is 1 s, every stream paced at 50 Mbit/s both ways (`-b`, which iperf3's
/// server holds to as well): a few percent of a core, so it takes no lab lane (unpaced, it
/// loaded both cores and waited 12-28 s a run for the harness's alone rows).
#[test]
fn tcp_iperf3_bytes_match_the_iperf3_servers_own() {
    if !have_iperf3() {
        return;
    }
    // (our figure, the server's figure, whether ours is the sending end's count)
    let forward = [(
        "/result/end/sum_sent/bytes",
        "/end/sum_received/bytes",
        true,
    )];
    for (args, streams, pairs) in [
        (&["-t", "1", "-b", "50M"][..], 1, &forward[..]),
        (
            &["-t", "1", "-b", "50M", "-R"][..],
            1,
            &[(
                "/result/end/sum_received/bytes",
                "/end/sum_sent/bytes",
                false,
            )][..],
        ),
        (&["-t", "1", "-b", "50M", "-P", "4"][..], 4, &forward[..]),
        // Both ways at once: each direction against the server's own count of it.
        (
            &["-t", "1", "-b", "50M", "--bidir"][..],
            2,
            &[
                forward[0],
                (
                    "/result/end/sum_received_bidir_reverse/bytes",
                    "/end/sum_sent_bidir_reverse/bytes",
                    false,
                ),
            ][..],
        ),
    ] {
        let (ours, theirs) = against_iperf3("tcp", args);
        // Paced as asked (what lets it run beside the alone tests), with room for a start.
        let sent = num(&ours, "/result/end/sum_sent/bits_per_second");
        assert!(
            sent <= 2.0 * 50e6 * f64::from(streams),
            "tcp {args:?}: {sent} bit/s sent, not paced"
        );
        for &(ours_path, theirs_path, ours_sent) in pairs {
            let (sent, received) = if ours_sent {
                (num(&ours, ours_path), num(&theirs, theirs_path))
            } else {
                (num(&theirs, theirs_path), num(&ours, ours_path))
            };
            same_transfer(
                sent,
                received,
                streams,
                &format!("tcp {args:?} {ours_path}"),
            );
        }
        assert_eq!(ours["result"]["start"]["agent_software"], "iperf3");
        let missing = ours["result"]["iperf3"]["missing"].as_array().unwrap();
        assert!(
            missing
                .iter()
                .any(|m| m.as_str().unwrap().contains("TCP_INFO")),
            "{missing:?}"
        );
        let warned = ours["warnings"].as_array().unwrap();
        assert!(
            warned.iter().any(|w| w
                .as_str()
                .unwrap()
                .contains("not reported by the iperf3 server")),
            "{warned:?}"
        );
    }
}

/// An `iperf3 -s` that serves test after test (not `-1`: wirespeed's first connection, whose
/// hello the server takes for a cookie, ends a one-off server's only test), killed by its PID.
fn lasting_iperf3_server() -> (Iperf3Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = ChildGuard::new(
        Command::new("iperf3")
            .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("iperf3 -s starts"),
    );
    // Listening within moments: wait for the port, bounded.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "iperf3 -s did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Iperf3Server { child, port }, port.to_string())
}

/// `iperf3 -c 127.0.0.1 -p PORT -t 1 -J ARGS`'s report, tried again (at most 3 times) when
/// the server was still busy with the last test.
fn iperf3_json_against(port: &str, args: &[&str]) -> Value {
    for _ in 0..3 {
        let out = Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", port, "-t", "1", "-J"])
            .args(args)
            .output()
            .expect("iperf3 -c runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("iperf3 -c {args:?} -J: {e}: {text}"));
        if out.status.success() && report.get("error").is_none() {
            return report;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("iperf3 -c {args:?} failed 3 times against iperf3 -s");
}

/// Every key path of a JSON document, array positions written `[]`.
fn key_paths(v: &Value) -> std::collections::BTreeSet<String> {
    fn walk(v: &Value, at: String, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    walk(x, format!("{at}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for x in items {
                    walk(x, format!("{at}/[]"), out);
                }
            }
            _ => {
                out.insert(at);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(v, String::new(), &mut out);
    out
}

/// Without --iperf3, a test that meets an iperf3 server at the address given goes on in
/// iperf3's protocol there and says so (text and JSON); a keyed run and a flag iperf3 cannot
/// carry are refused instead, one line each.
#[test]
fn tcp_without_iperf3_detects_an_iperf3_server_and_says_so() {
    if !have_iperf3() {
        return;
    }
    let (_server, port) = lasting_iperf3_server();
    // The probe connection the server took for a test must have ended before the next one
    // (iperf3 3.12 says ACCESS_DENIED while it still clears it): tried again briefly.
    let run_until_served = |args: &[&str]| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let run = wirespeed(args);
            if run.status != 0 && run.stderr.contains("busy") && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            return run;
        }
    };
    let run = run_until_served(&["tcp", "127.0.0.1", "-p", &port, "-t", "1", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["result"]["start"]["agent_software"], "iperf3");
    assert_eq!(doc["result"]["iperf3"]["detected"], true, "{doc}");
    let reason = doc["result"]["iperf3"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("answered as an iperf3 server") && reason.contains("PARAM_EXCHANGE"),
        "{reason}"
    );
    assert!(num(&doc, "/result/end/sum_sent/bytes") > 0.0);
    let text = run_until_served(&["udp", "127.0.0.1", "-p", &port, "-t", "1", "-b", "10M"]);
    assert_eq!(text.status, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("(iperf3 server, detected)")
            && text.stdout.contains("protocol: iperf3, detected: "),
        "{}",
        text.stdout
    );
    // A keyed run never drops its key for iperf3's protocol.
    let key = std::env::temp_dir().join(format!("ws-iperf3-detect-{}.key", std::process::id()));
    std::fs::write(&key, "0123456789abcdef0123456789abcdef\n").unwrap();
    let keyed = run_until_served(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "--auth-key-file",
        key.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&key);
    assert_one_line_error(&keyed, "a keyed run does not fall back");
    let placed = run_until_served(&["tcp", "127.0.0.1", "-p", &port, "-t", "1", "-A", "0"]);
    assert_one_line_error(&placed, "-A cannot be said in iperf3's protocol");
}

/// UDP at 100 Mbit/s: the datagrams this end sent against what the server counted by their
/// sequence numbers, and the bytes it sent against the bytes the server received plus the
/// datagrams it found missing. A loaded machine drops datagrams at the server's socket (3.5% at
/// load 20): UDP loss is the server's to count, not a disagreement between the two ends.
#[test]
fn udp_iperf3_at_100m_matches_the_iperf3_servers_own() {
    if !have_iperf3() {
        return;
    }
    // Both ends count one paced flow: alone in the lab lane, so no lab or heavy test takes
    // the cores its server needs to keep up (at 4 test threads beside them it fell behind).
    let _lane = crate::lab::LAB_LOCK.alone();
    let (ours, theirs) = against_iperf3("udp", &["-t", "2", "-b", "100M"]);
    let sent = num(&ours, "/result/end/sum_sent/bytes");
    let datagrams = num(&ours, "/result/end/sum_sent/datagrams");
    // iperf3 3.12's server -J: the receiver's bytes in `end.sum_received` (or `end.sum`), its
    // datagrams by sequence number (those lost included) and the lost ones in `end.sum`.
    let received = theirs
        .pointer("/end/sum_received/bytes")
        .or_else(|| theirs.pointer("/end/sum/bytes"))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no received bytes in {theirs}"));
    let counted = num(&theirs, "/end/sum/packets");
    let lost = num(&theirs, "/end/sum/lost_packets");
    within(datagrams, counted, 2.0, "udp -b 100M datagrams");
    within(
        sent,
        received + lost * sent / datagrams,
        2.0,
        "udp -b 100M bytes",
    );
    // 2 s paced at 100 Mbit/s: the pacer never runs ahead of its rate; it may fall behind on a
    // machine whose cores are taken (83.5 Mbit/s beside a lab test at load 16), never to half.
    // Over the sender's own time, not the 2 s asked: a sender that started or ended late sent
    // for longer (102.2 Mbit/s "over 2 s" at six test threads under load 4-8).
    let seconds = num(&ours, "/result/end/sum_sent/seconds");
    let rate = sent * 8.0 / seconds;
    assert!(
        (50e6..=100e6 * 1.02).contains(&rate),
        "udp -b 100M: sent {rate} bit/s over 2 s"
    );
}

/// `iperf3 -c -J` against `wirespeed serve --iperf3 PORT` exits 0 with a report that parses,
/// for TCP, -R, -P 4, --bidir and UDP; the agent's metrics count the tests.
///
/// Nothing here judges a rate, so every client is paced at 10 Mbit/s a stream: a few percent
/// of a core, less than the unpaced tests that run beside the lab lane's `alone` tests anyway,
/// so this test takes no lab lane (it was a reader of it, and with two test threads it sat
/// waiting, a thread idle, for 36 s behind the harness's `alone` rows).
#[test]
fn iperf3_clients_are_served_by_serve_iperf3() {
    if !have_iperf3() {
        return;
    }
    let agent = ServeProcess::start(&["--iperf3", "0", "--metrics", "127.0.0.1:0"]);
    let port = agent.iperf3_port.expect("the iperf3 port is announced");
    // The same client against iperf3's own server: every key path it writes there, it must
    // write against the service (issue 35).
    let (_real, real_port) = lasting_iperf3_server();
    let cases: [&[&str]; 5] = [
        &["-b", "10M"],
        &["-R", "-b", "10M"],
        &["-P", "4", "-b", "10M"],
        &["--bidir", "-b", "10M"],
        &["-u", "-b", "10M"],
    ];
    for args in cases {
        // The same client against iperf3's own server at the same time: the two servers are
        // apart, and each comparison reads only the report's keys (a 1 s test each, ten in a
        // row, were half of this test's time).
        let (out, theirs) = std::thread::scope(|s| {
            let theirs = s.spawn(|| iperf3_json_against(&real_port, args));
            let out = Command::new("iperf3")
                .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
                .args(args)
                .output()
                .expect("iperf3 -c runs");
            let theirs = theirs
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (out, theirs)
        });
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "iperf3 -c {args:?}: {text}");
        let report: Value = serde_json::from_str(&text).unwrap();
        assert!(
            report.get("error").is_none(),
            "{args:?}: {}",
            report["error"]
        );
        let received = report
            .pointer("/end/sum_received/bytes")
            .or_else(|| report.pointer("/end/sum/bytes"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        assert!(received > 0, "{args:?}: nothing received: {text}");
        let missing: Vec<String> = key_paths(&theirs)
            .difference(&key_paths(&report))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "iperf3 -c {args:?} wrote these against its own server, not against serve --iperf3: {missing:?}"
        );
    }
    // The metrics listener's address is on the agent's stderr.
    let deadline = Instant::now() + Duration::from_secs(5);
    let metrics = loop {
        let err = agent.stderr();
        if let Some(at) = err
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .and_then(|u| u.strip_suffix("/metrics"))
        {
            break at.to_string();
        }
        assert!(Instant::now() < deadline, "no metrics address in {err}");
        std::thread::sleep(Duration::from_millis(50));
    };
    // The iperf3 client exits once it has the results; the agent counts the session when it
    // has read IPERF_DONE (or the close) after that, so the last one may still be finishing.
    let scrape = || {
        let mut s = std::net::TcpStream::connect(&metrics).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut page = String::new();
        let _ = s.read_to_string(&mut page);
        page
    };
    let finished = "wirespeed_agent_iperf3_sessions_finished_total{outcome=\"completed\"} 5\n";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut page = scrape();
    while !page.contains(finished) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        page = scrape();
    }
    assert!(page.contains(finished), "{page}");
    assert!(
        page.contains("wirespeed_agent_sessions_finished_total{outcome=\"completed\"} 5\n"),
        "{page}"
    );
    // A client whose cookie is not one is refused (ACCESS_DENIED) and logged with the reason.
    let mut bad = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    bad.write_all(&[0x80; 37]).unwrap();
    let mut state = [0u8; 1];
    bad.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 0xff, "ACCESS_DENIED");
    // The service logs the refusal before it closes the connection: its close (bounded by
    // the read timeout) says the line is written.
    let mut rest = Vec::new();
    let _ = bad.read_to_end(&mut rest);
    // The session log holds the served tests with their bytes and the refusal, in the
    // agent's own record (`iperf3 session N from PEER ...`).
    let log = agent.stop_and_read_log();
    let served: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("iperf3 session ") && l.contains(" completed: "))
        .collect();
    assert_eq!(served.len(), 5, "{log}");
    assert!(
        served
            .iter()
            .all(|l| l.contains("from 127.0.0.1:") && !l.contains(" 0 bytes at this end")),
        "{log}"
    );
    assert!(
        log.lines().any(|l| l.starts_with("iperf3 session ")
            && l.contains(" from 127.0.0.1:")
            && l.contains("refused: not an iperf3 cookie")),
        "{log}"
    );
}

/// What iperf3's protocol cannot carry is refused before anything is sent: one line, exit 2.
#[test]
fn flags_iperf3_cannot_carry_are_refused() {
    assert_one_line_error(&wirespeed(&["tcp", "--iperf3", "-t", "1"]), "give its HOST");
    assert_one_line_error(
        &wirespeed(&["tcp", "127.0.0.1", "--iperf3", "-p", "9", "--mptcp"]),
        "--mptcp with --iperf3",
    );
    assert_one_line_error(
        &wirespeed(&["udp", "127.0.0.1", "--iperf3", "-p", "9", "--gso"]),
        "--gso with --iperf3",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "127.0.0.1", "--iperf3", "-p", "9", "-A", "0"]),
        "-A with --iperf3",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "127.0.0.1", "--iperf3", "-p", "9", "-t", "1.5"]),
        "whole seconds",
    );
    let run = wirespeed(&[
        "serve",
        "-B",
        "127.0.0.1",
        "-p",
        "15299",
        "--iperf3",
        "15299",
    ]);
    assert_one_line_error(&run, "the agent's own port");
}
