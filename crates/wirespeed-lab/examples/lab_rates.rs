//! Benchmark of the lab at today's link rates (issue 20; run by bench/lab-rates.sh as root).
//!
//! Like with like: iperf3 across a two-host lab (1 ms each way) against the envelope ceiling
//! of the configured rate (1448 payload bytes per 1538 wire bytes: full frames with TCP
//! timestamps, FCS, preamble and gap), measured after slow start (`iperf3 -O`); the emulator's
//! release lateness, its CPU per frame, and the frames lost on the host side of the TAPs.
//! Then UDP 64-byte frames offered above 100 Mbit/s line rate (148,809 frames/s) into a
//! 100 Mbit/s link, by `sendmmsg` and by UDP GSO (`common/blast.rs`): offered, forwarded,
//! received, and where the rest were lost. Prints Markdown.
//!
//! `lab_rates [SECONDS] [RATES...]`; `lab_rates small [SECONDS] [QUEUE...]` runs only the
//! 64-byte rows, once per queue limit (default 1000 frames).
//!
//! `lab_rates [SECONDS] [RATES...]`: seconds per TCP run (default 10), rates (default 1G 10G).
//! With `WIRESPEED=path/to/wirespeed`, `wirespeed tcp` runs across the same lab after iperf3,
//! with the same congestion control (cubic) and the same counted window: iperf3's `-O` comes on
//! top of its `-t`, wirespeed's is inside it, so iperf3 `-t S -O 2` runs against wirespeed
//! `-t S+2 -O 2` (both S+2 seconds, the last S counted). Before, both had `-t S -O 2`, and
//! wirespeed counted 2 s less, ending 2 s earlier, than the iperf3 it was compared with. The
//! table then gives wirespeed / iperf3, and for each tool the ACK frames per 100 data frames and
//! the emulator's CPU on the ACK direction (a receiver that reads more often sends more ACKs,
//! and each costs the emulator a read and a release).
//! `WIRESPEED_LAB_OFFLOAD=0` builds the labs without super-packets (one frame per read);
//! `WIRESPEED_LAB_SPIN_US` chooses the egress threads' spin before releases (the timer
//! strategy: `adaptive` or fixed microseconds). First, iperf3 across a plain veth pair between
//! two namespaces (no lab): the machine's bound for the same path. Per rate, the data
//! direction's CPU per frame and per write in each stage (ingress, egress, egress spin).

use std::process::{Command, Stdio};
use std::time::Duration;

use wirespeed_lab::{Lab, PortStatus, Topology, sys};

#[path = "common/blast.rs"]
mod blast;

fn lab(rate: &str, queue: u32) -> Lab {
    let text = format!(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"{rate}\"\ndelay = \"1ms\"\nqueue = {queue}\nipv6 = false\n"
    );
    let topology = Topology::parse(&text, "bench").expect("valid topology");
    let id = format!("{:04x}", std::process::id() & 0xffff);
    Lab::build(topology, &format!("rates-{id}"), &id).expect("the lab builds (run as root)")
}

/// Runs `server` (a one-test server) in h2 and `client` in h1, each as `ip netns exec NS
/// argv...`; returns the client's JSON output. The server ends after its one test; if the
/// client failed, it is ended here, by pid.
fn client_server(lab: &Lab, server: &[&str], client: &[&str]) -> Option<serde_json::Value> {
    client_server_in(lab.namespace("h1")?, lab.namespace("h2")?, server, client)
}

/// [`client_server`] between namespaces `h1` (client) and `h2` (server).
fn client_server_in(
    h1: &str,
    h2: &str,
    server: &[&str],
    client: &[&str],
) -> Option<serde_json::Value> {
    let mut server = Command::new("ip")
        .args(["netns", "exec", h2])
        .args(server)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_millis(400));
    let out = Command::new("ip")
        .args(["netns", "exec", h1])
        .args(client)
        .output()
        .ok();
    std::thread::sleep(Duration::from_millis(300));
    if server.try_wait().ok().flatten().is_none() {
        sys::terminate(server.id());
        let _ = server.wait();
    }
    serde_json::from_slice(&out?.stdout).ok()
}

/// Runs iperf3 (server in h2, client in h1 with `args`); returns the client's JSON.
fn iperf3(lab: &Lab, args: &[&str]) -> Option<serde_json::Value> {
    let port = "5298";
    let server = ["iperf3", "-s", "-1", "-B", "198.18.0.2", "-p", port];
    let mut client = vec!["iperf3", "-c", "198.18.0.2", "-p", port, "-J"];
    client.extend_from_slice(args);
    client_server(lab, &server, &client)
}

/// Runs `wirespeed tcp` (agent `wirespeed serve -1` in h2, client in h1 with `args`) with the
/// binary named by `$WIRESPEED`; returns the client's JSON result, or `None` without it.
fn wirespeed_tcp(lab: &Lab, args: &[&str]) -> Option<serde_json::Value> {
    let bin = std::env::var("WIRESPEED").ok()?;
    let port = "5299";
    let server = [bin.as_str(), "serve", "-1", "-B", "198.18.0.2", "-p", port];
    let mut client = vec![bin.as_str(), "tcp", "198.18.0.2", "-p", port, "--json"];
    client.extend_from_slice(args);
    let doc = client_server(lab, &server, &client)?;
    Some(doc["result"].clone())
}

/// Two namespaces of this process joined by a veth pair; removed when dropped.
struct VethPair {
    names: [String; 2],
}

impl Drop for VethPair {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = sys::delete_namespace(n);
        }
    }
}

/// iperf3 TCP (cubic, after -O 2) from one namespace to another across a plain veth pair: the
/// machine's bound for the path without the lab. Received bits per second.
fn veth_bound(seconds: u32) -> Option<(f64, (f64, f64))> {
    let id = format!("{:04x}", std::process::id() & 0xffff);
    let pair = VethPair {
        names: [format!("ws-vb{id}-a"), format!("ws-vb{id}-b")],
    };
    for n in &pair.names {
        sys::add_namespace(n).ok()?;
    }
    let (a, b) = (&pair.names[0], &pair.names[1]);
    let (va, vb) = (format!("ws-vb{id}a"), format!("ws-vb{id}b"));
    let steps: [&[&str]; 5] = [
        &[
            "link", "add", &va, "netns", a, "type", "veth", "peer", "name", &vb, "netns", b,
        ],
        &["-n", a, "addr", "add", "198.18.1.1/24", "dev", &va],
        &["-n", b, "addr", "add", "198.18.1.2/24", "dev", &vb],
        &["-n", a, "link", "set", &va, "up"],
        &["-n", b, "link", "set", &vb, "up"],
    ];
    for step in steps {
        sys::ip(step, None).ok()?;
    }
    let time = seconds.to_string();
    let server = ["iperf3", "-s", "-1", "-B", "198.18.1.2", "-p", "5297"];
    let client = [
        "iperf3",
        "-c",
        "198.18.1.2",
        "-p",
        "5297",
        "-J",
        "-t",
        &time,
        "-O",
        "2",
        "-C",
        "cubic",
    ];
    let doc = client_server_in(a, b, &server, &client)?;
    Some((
        doc["end"]["sum_received"]["bits_per_second"].as_f64()?,
        iperf3_cpu(&doc),
    ))
}

/// User and system CPU seconds of this process's threads whose name starts with `prefix`
/// (from /proc/self/task/*/stat, in clock ticks of 1/100 s: `getconf CLK_TCK` is 100 on Linux).
fn thread_times(prefix: &str) -> (f64, f64) {
    let mut sum = (0.0, 0.0);
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return sum;
    };
    for task in dir.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if !stat[open + 1..close].starts_with(prefix) {
            continue;
        }
        // After the name: state is field 3; utime and stime are fields 14 and 15.
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        let tick = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        sum.0 += tick(11) / 100.0;
        sum.1 += tick(12) / 100.0;
    }
    sum
}

/// User and system CPU seconds of the data direction's (port 0's) ingress and egress threads;
/// with one thread per direction (`ws-io-0:`, `WIRESPEED_LAB_THREADS=1`) its time is the
/// egress's and the ingress's is 0.
fn data_threads() -> [(f64, f64); 2] {
    let (out, io) = (thread_times("ws-out-0:"), thread_times("ws-io-0:"));
    [thread_times("ws-in-0:"), (out.0 + io.0, out.1 + io.1)]
}

/// Appends one JSON line to the file `LAB_RATES_SUMMARY` names, if it is set (for
/// bench/lab-threads.sh, which compares runs side by side).
fn summary(line: serde_json::Value) {
    use std::io::Write;
    let Ok(path) = std::env::var("LAB_RATES_SUMMARY") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Busy and total jiffies of the whole machine (/proc/stat's first line; idle and iowait are
/// not busy).
fn machine_jiffies() -> (f64, f64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<f64> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: f64 = v.iter().sum();
    let idle = v.get(3).copied().unwrap_or(0.0) + v.get(4).copied().unwrap_or(0.0);
    (total - idle, total)
}

/// iperf3's own CPU of its client and server processes (user + system, share of one core),
/// from its JSON (`end.cpu_utilization_percent`).
fn iperf3_cpu(doc: &serde_json::Value) -> (f64, f64) {
    let c = &doc["end"]["cpu_utilization_percent"];
    (
        c["host_total"].as_f64().unwrap_or(f64::NAN) / 100.0,
        c["remote_total"].as_f64().unwrap_or(f64::NAN) / 100.0,
    )
}

/// The ACK direction's port, h2 -> h1.
fn reverse(ports: &[PortStatus]) -> &PortStatus {
    ports
        .iter()
        .find(|p| p.from == "h2")
        .expect("a port h2 -> h1")
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
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("small") {
        args.next();
        let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3.0);
        let queues: Vec<u32> = args.filter_map(|q| q.parse().ok()).collect();
        for queue in if queues.is_empty() {
            vec![1000]
        } else {
            queues
        } {
            small_frames(seconds.clamp(0.5, 30.0), queue.clamp(1, 100_000));
        }
        return;
    }
    let seconds: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut rates: Vec<String> = args.collect();
    if rates.is_empty() {
        rates = vec!["1G".into(), "10G".into()];
    }
    let seconds_total = seconds + 2;
    // The upper bound of this machine for the same path without the lab: iperf3 between two
    // namespaces joined by a plain veth pair (no emulator, no delay): the CPU the two stacks
    // need, with nothing of the emulator's.
    let veth = veth_bound(seconds_total);
    match veth {
        Some((b, (client, server))) => println!(
            "plain veth, iperf3 TCP (after -O 2, cubic, {seconds_total} s): {:.1} Mbit/s; iperf3's own CPU client {client:.2} + server {server:.2} cores: {:.3} cores per Gbit/s\n",
            b / 1e6,
            (client + server) / (b / 1e9)
        ),
        None => println!("plain veth: not measured (iperf3 failed)\n"),
    }
    let mut budget_rows = Vec::new();
    println!(
        "| rate | ceiling | iperf3 TCP (after -O 2) | of ceiling | retransmits | wirespeed tcp (after -O 2, same window) | of ceiling | wirespeed / iperf3 | ACKs per 100 frames / emulator ACK-direction core: iperf3, wirespeed | lateness p50 / p99 / max (us) | drop queue | drop host (sender, ACKs) | super-packets (frames) / frames, cut | held back max (us) | emulator CPU per frame | CPU per frame in / out / spin (us) | CPU per super-packet in / out-spin (us) | emulator threads (share of a core) | spin (share of a core) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
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
        let time = (seconds + 2).to_string();
        let (threads0, machine0) = (data_threads(), machine_jiffies());
        let wall0 = std::time::Instant::now();
        // Like with like: the same congestion control, duration and omitted slow start.
        let doc = iperf3(&lab, &["-t", &time, "-O", "2", "-C", "cubic"]);
        let after = emulator.status();
        let wall = wall0.elapsed().as_secs_f64();
        let (threads1, machine1) = (data_threads(), machine_jiffies());
        // The same counted window as iperf3's (its -O is on top of its -t, ours inside it).
        let our_time = (seconds + 4).to_string();
        let ours = wirespeed_tcp(&lab, &["-t", &our_time, "-O", "2", "-C", "cubic"])
            .and_then(|d| d["end"]["sum_received"]["bits_per_second"].as_f64());
        let after_ours = emulator.status();
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
        // The data direction's stages over the iperf3 run: ingress, egress, and the egress
        // thread's spin before releases, per frame and per write (a super-packet or a frame).
        let b = forward(&before);
        let stage = |f: fn(&PortStatus) -> f64| f(forward(&after)) - f(b);
        let (cin, cout, cspin) = (
            stage(|p| p.cost.ingress_cpu_seconds),
            stage(|p| p.cost.egress_cpu_seconds),
            stage(|p| p.cost.spin_cpu_seconds),
        );
        let fa = forward(&after);
        let run_frames = (fa.counters.frames_in - b.counters.frames_in).max(1) as f64;
        let writes = ((fa.cost.super_packets - b.cost.super_packets)
            + (fa.counters.frames_out - b.counters.frames_out)
            - (fa.cost.super_packet_frames - b.cost.super_packet_frames))
            .max(1) as f64;
        let per_frame = format!(
            "{:.2} / {:.2} / {:.2}",
            cin * 1e6 / run_frames,
            cout * 1e6 / run_frames,
            cspin * 1e6 / run_frames
        );
        let per_write = format!(
            "{:.1} / {:.1}",
            cin * 1e6 / writes,
            (cout - cspin) * 1e6 / writes
        );
        let spin_share = cspin / seconds_total as f64;
        let ours = ours.map_or("- | - | -".to_string(), |b| {
            format!(
                "{:.1} Mbit/s | {:.2}% | {:.3}",
                b / 1e6,
                b / ceiling * 100.0,
                b / got
            )
        });
        // ACK frames per 100 data frames and the emulator's CPU on the ACK direction (share of
        // a core over the run), for iperf3's run and for wirespeed's.
        let acks = |b: &[PortStatus], a: &[PortStatus], secs: f64| {
            let (fb, fa) = (forward(b), forward(a));
            let (rb, ra) = (reverse(b), reverse(a));
            let data = (fa.counters.frames_in - fb.counters.frames_in).max(1) as f64;
            let acks = (ra.counters.frames_in - rb.counters.frames_in) as f64;
            let cpu = ra.cost.cpu_seconds - rb.cost.cpu_seconds;
            format!("{:.2} / {:.2}", acks * 100.0 / data, cpu / secs)
        };
        let acks_iperf3 = acks(&before, &after, seconds_total as f64 + 2.0);
        let acks_ours = acks(&after, &after_ours, seconds_total as f64 + 2.0);
        let k = &f.cost;
        println!(
            "| {rate}bit/s | {:.1} Mbit/s | {:.1} Mbit/s | {:.2}% | {retransmits} | {ours} | {acks_iperf3}, {acks_ours} | {:.0} / {:.0} / {:.0} | {} | {}, {} | {} | {:.1} | {:.2} us | {per_frame} | {per_write} | {:.2} | {spin_share:.2} |",
            ceiling / 1e6,
            got / 1e6,
            got / ceiling * 100.0,
            f.lateness.p50_us,
            f.lateness.p99_us,
            f.lateness.max_us,
            f.counters.drops_queue,
            f.device.sender_tx_dropped,
            back.device.sender_tx_dropped,
            if k.offloads {
                format!(
                    "{} ({}) / {}, {}",
                    k.super_packets,
                    k.super_packet_frames,
                    f.counters.frames_in,
                    k.segmented_in_software
                )
            } else {
                format!("off / {}", f.counters.frames_in)
            },
            k.held_back_max_us,
            cpu * 1e9 / frames.max(1) as f64 / 1e3,
            cpu / (seconds + 2) as f64,
        );
        // The emulator's columns of the CPU budget: the data direction's threads split into
        // user and kernel time per write (the kernel's: the TAP read's copy, the write's copy
        // and the receiving stack it runs, wake-ups); late releases by cause; the whole lab's
        // CPU (both directions' threads and iperf3's own) per Gbit/s against plain veth's, and
        // the rate two whole cores could carry at that cost.
        let user_sys = |k: usize| {
            (
                (threads1[k].0 - threads0[k].0) * 1e6 / writes,
                (threads1[k].1 - threads0[k].1) * 1e6 / writes,
            )
        };
        let ((in_user, in_sys), (out_user, out_sys)) = (user_sys(0), user_sys(1));
        let (client, server) = doc.as_ref().map_or((f64::NAN, f64::NAN), iperf3_cpu);
        let emulator_cores = cpu / wall;
        let per_gbit = (emulator_cores + client + server) / (got / 1e9);
        let machine_busy = (machine1.0 - machine0.0) / (machine1.1 - machine0.1).max(1.0)
            * std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
        let late = |f: fn(&PortStatus) -> u64| f(fa) - f(b);
        summary(serde_json::json!({
            "kind": "tcp",
            "threads": std::env::var("WIRESPEED_LAB_THREADS").unwrap_or_else(|_| "default".into()),
            "mode": std::env::var("LAB_MODE").ok(),
            "one_thread": fa.cost.one_thread,
            "rate": rate,
            "ceiling_bps": ceiling,
            "iperf3_bps": got,
            "of_ceiling": got / ceiling,
            "retransmits": retransmits,
            "drops_queue": fa.counters.drops_queue - b.counters.drops_queue,
            "lateness_us": [fa.lateness.p50_us, fa.lateness.p99_us, fa.lateness.max_us],
            "late": [
                late(|p| p.cost.late_after_previous_write),
                late(|p| p.cost.late_behind),
                late(|p| p.cost.late_in_wait),
            ],
            "releases": fa.lateness.frames - b.lateness.frames,
            "data_user_sys_per_write_us": [in_user + out_user, in_sys + out_sys],
            "emulator_cores": emulator_cores,
            "iperf3_cores": [client, server],
            "machine_busy": machine_busy,
            "lab_cores_per_gbit": per_gbit,
            "veth_bps": veth.map(|(v, _)| v),
            "veth_cores_per_gbit": veth.map(|(v, (c, s))| (c + s) / (v / 1e9)),
            "load": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').next().unwrap_or("").to_string(),
        }));
        budget_rows.push(format!(
            "| {rate}bit/s | {in_user:.1} / {in_sys:.1} | {out_user:.1} / {out_sys:.1} | {} / {} / {} of {} | {emulator_cores:.2} + {client:.2} + {server:.2} | {machine_busy:.2} | {per_gbit:.3} | {} | {:.1} Gbit/s |",
            late(|p| p.cost.late_after_previous_write),
            late(|p| p.cost.late_behind),
            late(|p| p.cost.late_in_wait),
            fa.lateness.frames - b.lateness.frames,
            veth.map_or("-".to_string(), |(v, (c, s))| format!("{:.3}", (c + s) / (v / 1e9))),
            2.0 / per_gbit,
        ));
        emulator.stop();
        drop(lab);
    }
    println!(
        "\n| rate | data ingress thread per write: user / kernel (us) | data egress thread per write: user / kernel (us) | releases > 50 us late: after the previous write / behind / in the wait, of releases | cores: emulator + iperf3 client + server | machine busy (cores, all processes) | lab cores per Gbit/s | plain veth cores per Gbit/s (iperf3's own) | 2 cores at the lab's cost carry |\n|---|---|---|---|---|---|---|---|---|"
    );
    for row in budget_rows {
        println!("{row}");
    }
    // LAB_RATES_SMALL=0 leaves the 64-byte rows out (bench/lab-threads.sh runs them apart).
    if std::env::var("LAB_RATES_SMALL").map_or(true, |v| v != "0") {
        small_frames(f64::from(seconds.min(5)), 1000);
    }
}

/// UDP 64-byte frames at 100 Mbit/s line rate: 18 payload bytes + 8 UDP + 20 IP + 14
/// Ethernet + 4 FCS = 64; 84 bytes on the wire with preamble and gap: 148,809 frames/s.
/// Offered above line rate by each sender (as fast as one thread goes): the link must forward
/// line rate, and every other frame must be a drop of the configured queue, counted; nothing
/// may be lost elsewhere (the sending host's TAP, the emulator's memory bound, the receiver).
fn small_frames(seconds: f64, queue: u32) {
    let line = 100e6 / (84.0 * 8.0);
    println!(
        "\n| UDP 64-byte into 100 Mbit/s (queue {queue}), {seconds} s | offered (frames/s) | emulator read (super-packets) | forwarded (frames/s over the receiver's span) | of 148,809 | drop queue | drop elsewhere: host TAP, memory, loss | wire busy | middle half: forwarded (frames/s), wire busy | received / forwarded | read = forwarded + drops | emulator CPU (share of a core) | lateness p50 / p99 / max (us) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let runs = [
        (blast::Sender::Mmsg, None),
        (blast::Sender::Gso, None),
        (blast::Sender::Gso, Some(1.1 * line)),
    ];
    for (sender, rate) in runs {
        let lab = lab("100M", queue);
        let emulator = lab.start();
        let before = emulator.status();
        // The middle of the blast, away from its start (address resolution, the queue
        // filling) and its end (the queue draining): frames forwarded per second there.
        let (b, middle) = std::thread::scope(|scope| {
            let sampler = scope.spawn(|| {
                std::thread::sleep(Duration::from_secs_f64(seconds * 0.25));
                let t0 = std::time::Instant::now();
                let a = forward(&emulator.status()).counters;
                std::thread::sleep(Duration::from_secs_f64(seconds * 0.5));
                let z = forward(&emulator.status()).counters;
                let dt = t0.elapsed().as_secs_f64();
                (
                    (z.frames_out - a.frames_out) as f64 / dt,
                    (z.busy_ns - a.busy_ns) as f64 / 1e9 / dt,
                )
            });
            let b = blast::udp_blast(&lab, sender, 18, seconds, rate);
            (b, sampler.join().expect("the sampler"))
        });
        std::thread::sleep(Duration::from_millis(100));
        let after = emulator.status();
        let f0 = forward(&before);
        let f = forward(&after);
        let (c0, c) = (f0.counters, f.counters);
        let read = c.frames_in - c0.frames_in;
        let forwarded = c.frames_out - c0.frames_out;
        let queue = c.drops_queue - c0.drops_queue;
        let elsewhere = format!(
            "{}, {}, {}",
            f.device.sender_tx_dropped - f0.device.sender_tx_dropped,
            c.drops_memory - c0.drops_memory,
            c.drops_loss - c0.drops_loss
        );
        let busy = (c.busy_ns - c0.busy_ns) as f64 / 1e9 / b.span;
        let cpu: f64 = after.iter().map(|p| p.cost.cpu_seconds).sum::<f64>()
            - before.iter().map(|p| p.cost.cpu_seconds).sum::<f64>();
        let fps = forwarded as f64 / b.span;
        println!(
            "| {} | {:.0} | {read} ({}) | {forwarded} ({fps:.0}) | {:.2}% | {queue} | {elsewhere} | {:.1}% | {:.0}, {:.1}% | {} / {forwarded} | {} | {:.2} | {:.0} / {:.0} / {:.0} |",
            match rate {
                Some(r) => format!(
                    "{} paced at {:.0}% of line rate",
                    sender.name(),
                    r / line * 100.0
                ),
                None => format!("{}, as fast as it goes", sender.name()),
            },
            b.sent as f64 / b.send_seconds,
            f.cost.super_packets - f0.cost.super_packets,
            fps / line * 100.0,
            busy * 100.0,
            middle.0,
            middle.1 * 100.0,
            b.received,
            if read
                == forwarded
                    + queue
                    + (c.drops_memory - c0.drops_memory)
                    + (c.drops_loss - c0.drops_loss)
            {
                "yes"
            } else {
                "NO"
            },
            cpu / (b.span.max(b.send_seconds)),
            f.lateness.p50_us,
            f.lateness.p99_us,
            f.lateness.max_us,
        );
        summary(serde_json::json!({
            "kind": "small",
            "threads": std::env::var("WIRESPEED_LAB_THREADS").unwrap_or_else(|_| "default".into()),
            "mode": std::env::var("LAB_MODE").ok(),
            "one_thread": f.cost.one_thread,
            "sender": sender.name(),
            "paced": rate.is_some(),
            "of_line_rate": fps / line,
            "drops_queue": queue,
            "drops_memory": c.drops_memory - c0.drops_memory,
            "drops_host": f.device.sender_tx_dropped - f0.device.sender_tx_dropped,
            "lateness_us": [f.lateness.p50_us, f.lateness.p99_us, f.lateness.max_us],
            "emulator_cores": cpu / (b.span.max(b.send_seconds)),
        }));
        println!(
            "|  | transmit stamps {}, queue max {}, {} of the {read} frames read left in runs of several |",
            f.ingress_stamps.map_or("off".to_string(), |s| format!(
                "paired {} / unpaired {}{}",
                s.paired,
                s.unpaired,
                if s.gave_up { ", gave up" } else { "" }
            )),
            c.queue_frames_max,
            f.cost.super_packet_frames - f0.cost.super_packet_frames,
        );
        emulator.stop();
        drop(lab);
    }
}
