//! iperf3's small client flags on `tcp`/`udp` (issue 34): each checked where it acts, from the
//! agent's side or the kernel's, so that a flag parsed and then ignored fails here.

use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use crate::util::{Netns, Run, assert_one_line_error, wirespeed};

fn json(run: &Run) -> serde_json::Value {
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// The first of `n` consecutive ports free for TCP and UDP on every address.
fn free_ports(n: u16) -> u16 {
    for _ in 0..100 {
        let first = TcpListener::bind("0.0.0.0:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let Some(last) = first.checked_add(n - 1) else {
            continue;
        };
        let held: Option<Vec<_>> = (first..=last)
            .map(|p| {
                let tcp = TcpListener::bind(("0.0.0.0", p)).ok()?;
                let udp = UdpSocket::bind(("0.0.0.0", p)).ok()?;
                Some((tcp, udp))
            })
            .collect();
        if held.is_some() {
            return first;
        }
    }
    panic!("no {n} consecutive free ports");
}

/// The port of an address as the JSON writes it (`127.0.0.1:5000`, `[::1]:5000`).
fn port_of(address: &serde_json::Value) -> u16 {
    let text = address.as_str().unwrap();
    text.parse::<SocketAddr>()
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .port()
}

#[test]
fn cport_bind_dev_and_title_act_on_the_sockets_and_the_document() {
    let first = free_ports(2);
    let doc = json(&wirespeed(&[
        "tcp",
        "-n",
        "200000B",
        "-P",
        "2",
        "-i",
        "0",
        "--cport",
        &first.to_string(),
        "--bind-dev",
        "lo",
        "-T",
        "lab-1",
        "-J",
    ]));
    // The agent's own sockets say which ports the streams came from.
    let mut ports: Vec<u16> = doc["result"]["end"]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| port_of(&p["receiver"]["socket"]["peer_address"]))
        .collect();
    ports.sort_unstable();
    assert_eq!(ports, [first, first + 1]);
    // The kernel, asked back, names the device each sending socket is bound to.
    for p in doc["result"]["end"]["streams"].as_array().unwrap() {
        assert_eq!(p["sender"]["socket"]["bound_device"], "lo", "{p}");
    }
    assert_eq!(doc["parameters"]["title"], "lab-1");

    let first = free_ports(1);
    let doc = json(&wirespeed(&[
        "udp",
        "-n",
        "20000B",
        "-l",
        "1000",
        "-b",
        "10M",
        "-i",
        "0",
        "--cport",
        &first.to_string(),
        "--dont-fragment",
        "-J",
    ]));
    let stream = &doc["result"]["end"]["streams"][0];
    assert_eq!(
        port_of(&stream["receiver"]["socket"]["peer_address"]),
        first
    );

    // -T and --timestamps on every text line, stamp first, as iperf3 writes them.
    let run = wirespeed(&[
        "tcp",
        "-n",
        "200000B",
        "-i",
        "0",
        "-T",
        "h1",
        "--timestamps=<%Y> ",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.lines().count() > 3, "{}", run.stdout);
    for line in run.stdout.lines() {
        assert!(
            line.starts_with("<2") && line.contains("> h1:  "),
            "{line:?} in\n{}",
            run.stdout
        );
    }

    assert_one_line_error(
        &wirespeed(&["tcp", "-n", "1000B", "--bind-dev", "nosuch0"]),
        "--bind-dev nosuch0: no such interface",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "--bind-dev", "../../etc/passwd"]),
        "is not an interface name",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "--dont-fragment"]),
        "use it with `wirespeed udp`",
    );
    assert_one_line_error(
        &wirespeed(&["udp", "--dont-fragment", "-R"]),
        "the agent sends",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "-J", "--timestamps"]),
        "--timestamps stamps text lines",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "--timestamps=%T\t"]),
        "control character",
    );
    assert_one_line_error(&wirespeed(&["tcp", "-T", "a\nb"]), "-T/--title");
    assert_one_line_error(
        &wirespeed(&["tcp", "-P", "3", "--cport", "65534"]),
        "past 65535",
    );
    assert_one_line_error(
        &wirespeed(&["tcp", "127.0.0.1", "--iperf3", "--cport", "6000"]),
        "--cport with --iperf3",
    );
}

#[test]
fn connect_timeout_bounds_the_wait_for_a_host_that_never_answers() {
    // A listener that never accepts, its queue full: Linux drops further SYNs, so a connection
    // neither succeeds nor is refused, as with a host behind a filtering firewall.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    socket.listen(0).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    let fillers: Vec<TcpStream> = (0..4)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok())
        .collect();
    assert!(!fillers.is_empty(), "the queue takes at least one");
    let started = Instant::now();
    let run = wirespeed(&[
        "tcp",
        &addr.to_string(),
        "-t",
        "1",
        "--connect-timeout",
        "300",
    ]);
    let took = started.elapsed();
    assert_one_line_error(
        &run,
        &format!("no answer from the agent at {addr} within 300 ms"),
    );
    // Without the flag the wait is the agent's 10 s silence limit; a busy machine may add
    // seconds to the process, never 7.
    assert!(took < Duration::from_secs(7), "{took:?}");
}

#[test]
fn dont_fragment_refuses_a_datagram_over_the_path_mtu() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root (a network namespace whose loopback MTU is 1280)");
        return;
    }
    let ns = Netns::add(format!("ws-df-{}", std::process::id()));
    ns.ip(&["link", "set", "lo", "mtu", "1280", "up"]);
    let udp = |extra: &[&str]| {
        let out = ns
            .exec(env!("CARGO_BIN_EXE_wirespeed"))
            .args(["udp", "-n", "20000B", "-b", "10M", "-i", "0", "-J"])
            .args(extra)
            .output()
            .unwrap();
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    };
    assert_one_line_error(
        &udp(&["-l", "1400", "--dont-fragment"]),
        "--dont-fragment: a datagram of 1428 bytes (-l 1400 and 28 of UDP/IP headers) is over the path MTU to 127.0.0.1 (1280 bytes) and may not be fragmented: use -l 1252 or less",
    );
    // The same datagrams without the flag are fragmented and arrive; under the MTU, with it.
    for extra in [&["-l", "1400"][..], &["-l", "1252", "--dont-fragment"][..]] {
        let doc = json(&udp(extra));
        let received = doc["result"]["end"]["sum_received"]["bytes"]
            .as_u64()
            .unwrap();
        assert!(received > 0, "{extra:?}: {doc}");
    }
}
