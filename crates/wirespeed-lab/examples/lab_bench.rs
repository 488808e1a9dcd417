//! Benchmark of the lab's link emulator (run by bench/lab.sh as root; not a test).
//!
//! 1. Achieved TCP rate against the configured rate at 10 and 100 Mbit/s, with an in-process
//!    sender and receiver (and iperf3 if it is installed), next to the ceiling 1448/1538 of the
//!    rate (full frames with TCP timestamps, preamble and gap).
//! 2. Per-frame timing error: how late the emulator released frames against its schedule,
//!    p50/p99/max, during those transfers.
//! 3. The highest frame rate it sustains for 64- and 1518-byte frames: UDP blasted through a
//!    10 Gbit/s link (so that serialization is not the limit) for two seconds.
//!
//! Prints a Markdown section for bench/RESULTS.md.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wirespeed_lab::emulator::stats::LatenessSummary;
use wirespeed_lab::{Emulator, Lab, Topology, sys};

// Only its sendmmsg sender is used here; lab_rates uses both.
#[allow(dead_code)]
#[path = "common/blast.rs"]
mod blast;

const H2: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

fn two_hosts(rate: &str, queue: u32) -> Lab {
    let text = format!(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"{rate}\"\ndelay = \"100us\"\nqueue = {queue}\n"
    );
    let topology = Topology::parse(&text, "bench").expect("valid topology");
    let id = format!("{:04x}", std::process::id() & 0xffff);
    Lab::build(topology, &format!("bench-{id}"), &id).expect("the lab builds (run as root)")
}

fn tcp_goodput(lab: &Lab, bytes: usize) -> f64 {
    let (tx, rx) = std::sync::mpsc::channel();
    let h2 = lab.namespace("h2").unwrap().to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&h2, move || {
            let listener = TcpListener::bind((H2, 0)).unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let _ = conn.read(&mut buf).unwrap();
            let start = Instant::now();
            let mut n = 0usize;
            loop {
                match conn.read(&mut buf).unwrap() {
                    0 => break,
                    k => n += k,
                }
            }
            n as f64 * 8.0 / start.elapsed().as_secs_f64()
        })
        .unwrap()
    });
    let port = rx.recv().unwrap();
    sys::in_namespace(lab.namespace("h1").unwrap(), move || {
        let mut c = TcpStream::connect(SocketAddr::from((H2, port))).unwrap();
        let chunk = vec![1u8; 1 << 16];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            c.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
    })
    .unwrap();
    receiver.join().unwrap()
}

fn iperf3_goodput(lab: &Lab, seconds: u32) -> Option<f64> {
    Command::new("iperf3").arg("--version").output().ok()?;
    let port = "5299";
    let mut server = Command::new("ip")
        .args([
            "netns",
            "exec",
            lab.namespace("h2")?,
            "iperf3",
            "-s",
            "-1",
            "-B",
        ])
        .args([&H2.to_string(), "-p", port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_millis(300));
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            lab.namespace("h1")?,
            "iperf3",
            "-c",
            &H2.to_string(),
        ])
        .args(["-p", port, "-t", &seconds.to_string(), "-J"])
        .output()
        .ok()?;
    let _ = server.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    // The receiver's figure: "sum_received": {... "bits_per_second": X ...}.
    let at = text.find("\"sum_received\"")?;
    let rest = &text[at..];
    let b = rest.find("\"bits_per_second\"")?;
    let value: String = rest[b + 18..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '+')
        .collect();
    value.parse().ok()
}

fn us(s: &LatenessSummary) -> String {
    format!("{:.0} / {:.0} / {:.0}", s.p50_us, s.p99_us, s.max_us)
}

/// Blasts UDP datagrams of `payload` bytes for `seconds` with `sendmmsg` (the shared send
/// loop, `common/blast.rs`); returns (offered pps, delivered pps at the receiver, frames the
/// emulator forwarded per second).
fn udp_blast(lab: &Lab, emulator: &Emulator, payload: usize, seconds: f64) -> (f64, f64, f64) {
    let forwarded = || emulator.status()[0].counters.frames_out;
    let before = forwarded();
    let b = blast::udp_blast(lab, blast::Sender::Mmsg, payload, seconds, None);
    let forwarded = (forwarded() - before) as f64 / b.send_seconds;
    (
        b.sent as f64 / b.send_seconds,
        b.received as f64 / b.span,
        forwarded,
    )
}

fn main() {
    if !sys::has_net_admin() {
        eprintln!("lab_bench: needs CAP_NET_ADMIN (run as root)");
        std::process::exit(2);
    }
    let mut out = String::new();
    out.push_str("| configured | ceiling (1448/1538) | in-process TCP | of ceiling | iperf3 | of ceiling | release lateness p50 / p99 / max (us) |\n|---|---|---|---|---|---|---|\n");
    for (rate, bits, bytes) in [("10M", 10e6, 4_000_000usize), ("100M", 100e6, 40_000_000)] {
        let lab = two_hosts(rate, 200);
        let emulator = lab.start();
        let ceiling = bits * 1448.0 / 1538.0;
        let tcp = tcp_goodput(&lab, bytes);
        let lateness = emulator.lateness();
        let iperf = iperf3_goodput(&lab, 3);
        let (iperf_text, iperf_share) = match iperf {
            Some(v) => (
                format!("{:.3} Mbit/s", v / 1e6),
                format!("{:.2}%", v / ceiling * 100.0),
            ),
            None => ("not installed".into(), "-".into()),
        };
        out.push_str(&format!(
            "| {rate}bit/s | {:.3} Mbit/s | {:.3} Mbit/s | {:.2}% | {iperf_text} | {iperf_share} | {} |\n",
            ceiling / 1e6,
            tcp / 1e6,
            tcp / ceiling * 100.0,
            us(&lateness)
        ));
        emulator.stop();
        drop(lab);
    }
    out.push_str("\n| frame | offered (frames/s) | emulator forwarded (frames/s) | receiver got (frames/s) | lateness p50 / p99 / max (us) |\n|---|---|---|---|---|\n");
    for (frame, payload) in [(64usize, 18usize), (1518, 1472)] {
        let lab = two_hosts("10G", 1000);
        let emulator = lab.start();
        let (sent, received, forwarded) = udp_blast(&lab, &emulator, payload, 2.0);
        let lateness = emulator.lateness();
        out.push_str(&format!(
            "| {frame} bytes | {sent:.0} | {forwarded:.0} | {received:.0} | {} |\n",
            us(&lateness)
        ));
        emulator.stop();
        drop(lab);
    }
    print!("{out}");
}
