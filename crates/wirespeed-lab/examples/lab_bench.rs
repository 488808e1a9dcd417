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
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wirespeed_lab::emulator::stats::LatenessSummary;
use wirespeed_lab::{Emulator, Lab, Topology, sys};

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

/// Blasts UDP datagrams of `payload` bytes for `seconds`; returns (offered pps, delivered pps
/// at the receiver, frames the emulator forwarded per second).
fn udp_blast(lab: &Lab, emulator: &Emulator, payload: usize, seconds: f64) -> (f64, f64, f64) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h2 = lab.namespace("h2").unwrap().to_string();
    let receiver = std::thread::spawn(move || {
        sys::in_namespace(&h2, move || {
            let sock = UdpSocket::bind((H2, 0)).unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            tx.send(sock.local_addr().unwrap().port()).unwrap();
            let mut buf = [0u8; 2048];
            let mut n = 0u64;
            let mut first: Option<Instant> = None;
            let mut last = Instant::now();
            while sock.recv(&mut buf).is_ok() {
                first.get_or_insert_with(Instant::now);
                last = Instant::now();
                n += 1;
            }
            let span = first.map_or(1.0, |f| (last - f).as_secs_f64().max(1e-3));
            n as f64 / span
        })
        .unwrap()
    });
    let port = rx.recv().unwrap();
    let forwarded = || emulator.status()[0].counters.frames_out;
    let before = forwarded();
    let sent = sys::in_namespace(lab.namespace("h1").unwrap(), move || {
        use std::os::fd::AsRawFd;
        let sock = UdpSocket::bind((Ipv4Addr::new(198, 18, 0, 1), 0)).unwrap();
        sock.connect((H2, port)).unwrap();
        let data = vec![0u8; payload];
        // sendmmsg: 64 datagrams per system call, so that the sender outruns the emulator.
        let mut iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: data.len(),
        };
        // SAFETY: zeroed mmsghdr is valid; each points at the one iovec above.
        let mut msgs: Vec<libc::mmsghdr> = (0..64)
            .map(|_| {
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = &raw mut iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed().as_secs_f64() < seconds {
            // SAFETY: msgs holds 64 initialized headers whose buffers outlive the call.
            let sent = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs.as_mut_ptr(), 64, 0) };
            if sent > 0 {
                n += sent as u64;
            }
        }
        n as f64 / start.elapsed().as_secs_f64()
    })
    .unwrap();
    let received = receiver.join().unwrap();
    let forwarded = (forwarded() - before) as f64 / seconds;
    (sent, received, forwarded)
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
