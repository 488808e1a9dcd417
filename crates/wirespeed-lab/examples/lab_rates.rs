//! Benchmark of the lab at today's link rates (issue 20; run by bench/lab-rates.sh as root).
//!
//! Like with like: iperf3 across a two-host lab (1 ms each way) against the envelope ceiling
//! of the configured rate (1448 payload bytes per 1538 wire bytes: full frames with TCP
//! timestamps, FCS, preamble and gap), measured after slow start (`iperf3 -O`); the emulator's
//! release lateness, its CPU per frame, and the frames lost on the host side of the TAPs.
//! Then UDP 64-byte frames at 100 Mbit/s line rate (148,809 frames/s) through a 100 Mbit/s
//! link: offered, forwarded, received, and where the rest were lost. Prints Markdown.
//!
//! `lab_rates [SECONDS] [RATES...]`: seconds per TCP run (default 10), rates (default 1G 10G).

use std::process::{Command, Stdio};
use std::time::Duration;

use wirespeed_lab::{Lab, PortStatus, Topology, sys};

fn lab(rate: &str, queue: u32) -> Lab {
    let text = format!(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"{rate}\"\ndelay = \"1ms\"\nqueue = {queue}\nipv6 = false\n"
    );
    let topology = Topology::parse(&text, "bench").expect("valid topology");
    let id = format!("{:04x}", std::process::id() & 0xffff);
    Lab::build(topology, &format!("rates-{id}"), &id).expect("the lab builds (run as root)")
}

/// Runs iperf3 (server in h2, client in h1 with `args`); returns the client's JSON.
fn iperf3(lab: &Lab, args: &[&str]) -> Option<serde_json::Value> {
    let port = "5298";
    let mut server = Command::new("ip")
        .args(["netns", "exec", lab.namespace("h2")?, "iperf3", "-s", "-1"])
        .args(["-B", "198.18.0.2", "-p", port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_millis(400));
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            lab.namespace("h1")?,
            "iperf3",
            "-c",
            "198.18.0.2",
        ])
        .args(["-p", port, "-J"])
        .args(args)
        .output()
        .ok();
    // The server ends after one test (-1); if the client failed it is ended here, by pid.
    std::thread::sleep(Duration::from_millis(300));
    if server.try_wait().ok().flatten().is_none() {
        sys::terminate(server.id());
        let _ = server.wait();
    }
    serde_json::from_slice(&out?.stdout).ok()
}

fn forward(ports: &[PortStatus]) -> &PortStatus {
    ports
        .iter()
        .find(|p| p.from == "h1")
        .expect("a port h1 -> h2")
}

fn main() {
    if !sys::has_net_admin() {
        eprintln!("lab_rates: needs CAP_NET_ADMIN (run as root)");
        std::process::exit(2);
    }
    let mut args = std::env::args().skip(1);
    let seconds: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut rates: Vec<String> = args.collect();
    if rates.is_empty() {
        rates = vec!["1G".into(), "10G".into()];
    }
    println!(
        "| rate | ceiling | iperf3 TCP (after -O 2) | of ceiling | retransmits | lateness p50 / p99 / max (us) | drop queue | drop host (sender, ACKs) | emulator CPU per frame | emulator threads (share of a core) |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for rate in &rates {
        let bits = rate
            .parse::<wirespeed_model::BitRate>()
            .expect("a rate")
            .bits_per_second() as f64;
        let lab = lab(rate, 1000);
        let emulator = lab.start();
        let ceiling = bits * 1448.0 / 1538.0;
        let before = emulator.status();
        let doc = iperf3(&lab, &["-t", &(seconds + 2).to_string(), "-O", "2"]);
        let after = emulator.status();
        let got = doc
            .as_ref()
            .and_then(|d| d["end"]["sum_received"]["bits_per_second"].as_f64())
            .unwrap_or(f64::NAN);
        let retransmits = doc
            .as_ref()
            .and_then(|d| d["end"]["sum_sent"]["retransmits"].as_u64())
            .unwrap_or(0);
        let f = forward(&after);
        let back = after
            .iter()
            .find(|p| p.from == "h2")
            .expect("a port h2 -> h1");
        let cpu: f64 = after.iter().map(|p| p.cost.cpu_seconds).sum::<f64>()
            - before.iter().map(|p| p.cost.cpu_seconds).sum::<f64>();
        let frames: u64 = after.iter().map(|p| p.counters.frames_in).sum();
        println!(
            "| {rate}bit/s | {:.1} Mbit/s | {:.1} Mbit/s | {:.2}% | {retransmits} | {:.0} / {:.0} / {:.0} | {} | {}, {} | {:.2} us | {:.2} |",
            ceiling / 1e6,
            got / 1e6,
            got / ceiling * 100.0,
            f.lateness.p50_us,
            f.lateness.p99_us,
            f.lateness.max_us,
            f.counters.drops_queue,
            f.device.sender_tx_dropped,
            back.device.sender_tx_dropped,
            cpu * 1e9 / frames.max(1) as f64 / 1e3,
            cpu / (seconds + 2) as f64,
        );
        emulator.stop();
        drop(lab);
    }
    // UDP 64-byte frames at 100 Mbit/s line rate: 18 payload bytes + 8 UDP + 20 IP + 14
    // Ethernet + 4 FCS = 64; 84 bytes on the wire with preamble and gap: 148,809 frames/s.
    let lab = lab("100M", 1000);
    let emulator = lab.start();
    let pps = 100e6 / (84.0 * 8.0);
    let doc = iperf3(
        &lab,
        &[
            "-u",
            "-l",
            "18",
            "-b",
            &format!("{:.0}", pps * 18.0 * 8.0),
            "-t",
            "5",
        ],
    );
    let after = emulator.status();
    let f = forward(&after);
    let sent = doc
        .as_ref()
        .and_then(|d| d["end"]["sum"]["packets"].as_u64())
        .unwrap_or(0);
    let lost = doc
        .as_ref()
        .and_then(|d| d["end"]["sum"]["lost_packets"].as_u64())
        .unwrap_or(0);
    println!(
        "\n| UDP 64-byte at 100 Mbit/s | line rate | iperf3 sent | emulator read | forwarded | drop queue | drop host | receiver lost (iperf3) | lateness p50 / p99 / max (us) |\n|---|---|---|---|---|---|---|---|---|"
    );
    println!(
        "| 5 s | {:.0} frames/s | {:.0} frames/s | {} | {} | {} | {} | {lost} | {:.0} / {:.0} / {:.0} |",
        pps,
        sent as f64 / 5.0,
        f.counters.frames_in,
        f.counters.frames_out,
        f.counters.drops_queue,
        f.device.sender_tx_dropped,
        f.lateness.p50_us,
        f.lateness.p99_us,
        f.lateness.max_us,
    );
    emulator.stop();
}
