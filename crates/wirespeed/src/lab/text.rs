//! The text views of `lab`: `lab status` (the labs running, or one lab's nodes and each
//! port's counters, emulator cost, host model, queue management, queue delay and shared
//! medium, one table each, with the legend under it) and what `lab down` removed.

use std::io::{self, Write};

use wirespeed_lab::PortStatus;
use wirespeed_lab::lifecycle::{DownReport, LabRecord};
use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, group_digits};
use wirespeed_report::{Render, Table};

use super::result::{ListedLab, StatusResult};

impl Render for StatusResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        match self {
            StatusResult::List { labs } if labs.is_empty() => writeln!(out, "no labs running"),
            StatusResult::List { labs } => lab_list(out, labs),
            StatusResult::One {
                lab,
                uptime_seconds,
                ports,
                rate_format,
            } => {
                writeln!(
                    out,
                    "lab {} (emulator pid {}, up {}, from {})",
                    lab.name,
                    lab.pid,
                    format_seconds(*uptime_seconds),
                    lab.file
                )?;
                nodes(out, lab)?;
                crossings(out, lab)?;
                writeln!(out)?;
                port_counters(out, ports, *rate_format)?;
                emulator_cost(out, ports)?;
                host_model(out, ports)?;
                queue_management(out, ports)?;
                queue_delays(out, ports)?;
                shared_media(out, ports)?;
                writeln!(
                    out,
                    "frames = delivered/offered; drop host = dropped by the sending host's TAP queue before the emulator read them; drop other = medium, too big, memory bound, receiving stack, failed writes; busy = share of time the wire was serializing; late = release time minus schedule"
                )
            }
        }
    }
}

fn lab_list(out: &mut dyn Write, labs: &[ListedLab]) -> io::Result<()> {
    let mut t = Table::new(["lab", "pid", "emulator", "nodes", "file"]);
    for ListedLab {
        lab,
        emulator_running,
    } in labs
    {
        let nodes: Vec<&str> = lab.nodes.iter().map(|n| n.name.as_str()).collect();
        t.row([
            lab.name.clone(),
            lab.pid.to_string(),
            if *emulator_running { "running" } else { "gone" }.to_string(),
            nodes.join(" "),
            lab.file.clone(),
        ]);
    }
    write!(out, "{t}")?;
    if labs.iter().any(|l| !l.emulator_running) {
        writeln!(
            out,
            "emulator gone: the lab no longer forwards; `wirespeed lab down NAME` removes what it left"
        )?;
    }
    Ok(())
}

/// The lab's nodes: names and addresses read better left-aligned.
fn nodes(out: &mut dyn Write, lab: &LabRecord) -> io::Result<()> {
    let width = |f: fn(&wirespeed_lab::lifecycle::NodeRecord) -> &str| {
        lab.nodes
            .iter()
            .map(|n| f(n).len())
            .max()
            .unwrap_or(0)
            .max(9)
    };
    let (wn, wk, ws) = (
        width(|n| &n.name),
        width(|n| &n.kind),
        width(|n| &n.namespace),
    );
    writeln!(
        out,
        "{:wn$}  {:wk$}  {:ws$}  addresses",
        "node", "kind", "namespace"
    )?;
    for n in &lab.nodes {
        writeln!(
            out,
            "{:wn$}  {:wk$}  {:ws$}  {}",
            n.name,
            n.kind,
            n.namespace,
            n.addresses.join(", ")
        )?;
    }
    Ok(())
}

/// The lab's own cost per link crossing, as it measured it when it came up (none: a lab
/// brought up without `--measure-crossings`, or of shared media only).
fn crossings(out: &mut dyn Write, lab: &LabRecord) -> io::Result<()> {
    if lab.crossings.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let mut t = Table::new(["crossing", "cost", "per byte", "spread", "first", "echoes"]);
    for c in &lab.crossings {
        t.row([
            format!("link {} {} - {}", c.link, c.from, c.to),
            format!("{:.1} us", c.cost_us),
            c.per_byte_ns
                .map_or("-".to_string(), |b| format!("{b:+.2} ns/B")),
            format!("{:.1} us", c.spread_us),
            format!("{:.1} us", c.first_us),
            c.samples.to_string(),
        ]);
    }
    write!(out, "{t}")?;
    writeln!(
        out,
        "crossing = the lab's own cost of one crossing of the link beyond its configured delay and serialization (the emulator's release, the write into the next namespace, that kernel taking the frame in), measured by echoes across it when the lab came up; per byte = its cost per IP byte beyond the configured serialization, from echoes of 84 and 1428 bytes (or the link's MTU); spread = how much a typical crossing costs more; first = how much the first crossing cost more (neighbour resolution, paid before `lab up` returned)"
    )
}

/// Each port's configuration and what it carried, dropped, queued and how late it released.
fn port_counters(
    out: &mut dyn Write,
    ports: &[PortStatus],
    rate_format: RateFormat,
) -> io::Result<()> {
    let mut t = Table::new([
        "port",
        "rate",
        "delay",
        "frames",
        "bytes",
        "drop queue",
        "drop loss",
        "drop host",
        "drop other",
        "queue now/max",
        "busy",
        "late p50/p99",
    ]);
    for p in ports {
        let c = &p.counters;
        t.row([
            format!("{} {} -> {}", p.interface, p.from, p.to),
            rate_format.format(p.rate_bits_per_second as f64),
            format_seconds(p.delay_ns as f64 / 1e9),
            format!(
                "{}/{}",
                group_digits(c.frames_out),
                group_digits(c.frames_in)
            ),
            group_digits(c.bytes_out),
            group_digits(c.drops_queue),
            group_digits(c.drops_loss),
            group_digits(p.device.sender_tx_dropped),
            group_digits(
                c.drops_medium
                    + c.drops_too_big
                    + c.drops_memory
                    + p.device.receiver_rx_dropped
                    + p.device.write_errors,
            ),
            format!("{}/{}", c.queue_frames, c.queue_frames_max),
            format!("{:.1}%", p.utilization * 100.0),
            format!("{}/{} us", p.lateness.p50_us, p.lateness.p99_us),
        ]);
    }
    write!(out, "{t}")
}

/// What the emulator's threads spent serving each port, and how it read the frames.
fn emulator_cost(out: &mut dyn Write, ports: &[PortStatus]) -> io::Result<()> {
    let mut cost = Table::new([
        "emulator port",
        "cpu",
        "cpu now",
        "per frame",
        "in/out/spin per frame",
        "per KB",
        "super-packets (frames)/frames",
        "held back max",
        "late p50/p99/max",
    ]);
    for p in ports {
        let k = &p.cost;
        cost.row([
            format!(
                "{} {}{}",
                p.interface,
                p.from,
                if k.shared_thread { " (medium)" } else { "" }
            ),
            format_seconds(k.cpu_seconds),
            format!("{:.0}%", k.cpu_share_recent * 100.0),
            format!("{:.2} us", k.cpu_ns_per_frame / 1e3),
            stages(k, p.counters.frames_in),
            format!("{:.2} us", k.cpu_ns_per_byte * 1.024),
            super_packets(p),
            format!("{:.1} us", k.held_back_max_us),
            format!(
                "{}/{}/{} us",
                p.lateness.p50_us, p.lateness.p99_us, p.lateness.max_us
            ),
        ]);
    }
    writeln!(out)?;
    write!(out, "{cost}")?;
    writeln!(
        out,
        "emulator = CPU time of the threads serving the port (\"(medium)\": one thread serves the whole shared medium), now = share of a core since the previous status, per frame / per KB of what was offered; in/out/spin = the ingress thread's, the egress thread's (the receiving stack included) and of that the spin before releases (in = - where one thread serves the direction: out is all of it)"
    )?;
    writeln!(
        out,
        "super-packets = reads of several frames (TSO/USO), each frame charged to the wire; \"cut\" = cut into frames because one was dropped; held back = how late a super-packet's first frame arrived (at most 64 us and one super-packet's serialization time) (\"off\": one frame per read)"
    )
}

/// The `super-packets (frames)/frames` cell: reads of several frames against frames offered.
fn super_packets(p: &PortStatus) -> String {
    let k = &p.cost;
    if k.offloads {
        format!(
            "{} ({} frames)/{}{}",
            group_digits(k.super_packets),
            group_digits(k.super_packet_frames),
            group_digits(c_frames(p)),
            if k.segmented_in_software > 0 {
                format!(", {} cut", group_digits(k.segmented_in_software))
            } else {
                String::new()
            }
        )
    } else {
        format!("off ({})", group_digits(c_frames(p)))
    }
}

/// The host processing model's ports, where the topology gives one.
fn host_model(out: &mut dyn Write, ports: &[PortStatus]) -> io::Result<()> {
    if !ports.iter().any(|p| p.host.is_some()) {
        return Ok(());
    }
    let mut hosts = Table::new([
        "host port",
        "frames out",
        "frames in",
        "cpu busy",
        "waited for cpu",
    ]);
    for p in ports {
        if let Some(h) = &p.host {
            hosts.row([
                format!("{} {}", p.interface, p.from),
                group_digits(h.transmitted),
                group_digits(h.received),
                format_seconds(h.busy_ns as f64 / 1e9),
                format_seconds(h.waited_ns as f64 / 1e9),
            ]);
        }
    }
    writeln!(out)?;
    write!(out, "{hosts}")?;
    writeln!(
        out,
        "host processing model: frames charged the host's transmit and receive costs at this port, one at a time"
    )
}

/// The ports with active queue management (CoDel, FQ-CoDel).
fn queue_management(out: &mut dyn Write, ports: &[PortStatus]) -> io::Result<()> {
    if !ports.iter().any(|p| p.aqm.is_some()) {
        return Ok(());
    }
    let mut aqm = Table::new([
        "aqm port",
        "aqm",
        "drop aqm",
        "drop overflow",
        "ecn marks",
        "flows now/max",
        "queue delay",
        "fq perturbation",
    ]);
    for p in ports {
        let (Some(kind), Some(a)) = (&p.aqm, &p.counters.aqm) else {
            continue;
        };
        // What the waiting bytes take to serialize: the delay a frame
        // arriving now would see before its first bit goes.
        let delay = p.counters.queue_bytes as f64 * 8.0 / p.rate_bits_per_second.max(1) as f64;
        aqm.row([
            format!("{} {} -> {}", p.interface, p.from, p.to),
            kind.clone(),
            group_digits(a.drops),
            group_digits(a.overflow_drops),
            group_digits(a.ecn_marks),
            format!("{}/{}", a.flows, a.flows_max),
            format_seconds(delay),
            p.fq_perturbation
                .map_or_else(|| "-".to_string(), |v| v.to_string()),
        ]);
    }
    writeln!(out)?;
    write!(out, "{aqm}")?;
    writeln!(
        out,
        "active queue management: drop aqm = CoDel's drops at dequeue; drop overflow = FQ-CoDel's drops from its fattest flow over the queue limit (also in drop queue); ECN marking is not implemented (always 0); queue delay = bytes waiting / rate; fq perturbation = FQ-CoDel's flow-hash perturbation (set `fq_perturbation` to it in the topology to repeat the flow-to-queue mapping)"
    )
}

/// The queue delay of each full-duplex port, as the emulator samples it.
fn queue_delays(out: &mut dyn Write, ports: &[PortStatus]) -> io::Result<()> {
    if !ports.iter().any(|p| p.medium == "full") {
        return Ok(());
    }
    let mut delays = Table::new(["queue delay port", "now", "mean since up", "samples"]);
    for p in ports.iter().filter(|p| p.medium == "full") {
        let c = &p.counters;
        let sampled = c.queue_delay_samples > 0;
        let or_dash = |v: f64| {
            if sampled {
                format_seconds(v)
            } else {
                "-".into()
            }
        };
        delays.row([
            format!("{} {} -> {}", p.interface, p.from, p.to),
            or_dash(c.queue_delay_ns as f64 / 1e9),
            or_dash(c.queue_delay_sum_ns as f64 / c.queue_delay_samples.max(1) as f64 / 1e9),
            group_digits(c.queue_delay_samples),
        ]);
    }
    writeln!(out)?;
    write!(out, "{delays}")?;
    writeln!(
        out,
        "queue delay = what a frame arriving then waits before its first bit goes (the bytes queued and the rest of the frame on the wire, at the rate), sampled by the emulator every 1 ms from the port's first frame (- : none yet, or a shared medium); the mean between two readings is the difference of queue_delay_sum_ns over that of queue_delay_samples (--json)"
    )
}

/// The shared (half-duplex, CSMA/CD) ports' MAC counters, where the lab has a shared medium.
fn shared_media(out: &mut dyn Write, ports: &[PortStatus]) -> io::Result<()> {
    if !ports.iter().any(|p| p.medium == "half") {
        return Ok(());
    }
    let mut errors = Table::new([
        "port",
        "duplex",
        "received",
        "collisions",
        "late coll",
        "excessive",
        "FCS errors",
        "runts",
    ]);
    for p in ports {
        let c = &p.counters;
        errors.row([
            format!("{} {}", p.interface, p.from),
            p.medium.clone(),
            group_digits(c.frames_received),
            group_digits(c.collisions),
            group_digits(c.late_collisions),
            group_digits(c.excessive_collisions),
            group_digits(c.fcs_errors),
            group_digits(c.runts),
        ]);
    }
    writeln!(out)?;
    write!(out, "{errors}")?;
    writeln!(
        out,
        "shared media (CSMA/CD): collisions and late collisions as the port's MAC counted them; FCS errors and runts as it received them (seed 003 Table 7)"
    )
}

/// Frames offered to a port.
fn c_frames(p: &PortStatus) -> u64 {
    p.counters.frames_in
}

/// The `in/out/spin per frame` cell: each thread's CPU per frame offered, and the egress
/// thread's spin before releases per frame (`-` on a shared medium, whose one thread is the
/// `per frame` cell). A direction served by one thread has no ingress thread: its `in` is `-`
/// and its `out` is the whole thread (reads included), not a 0 that would read as free reads.
#[doc(hidden)]
pub fn stages(k: &wirespeed_lab::EmulatorCost, frames: u64) -> String {
    if k.shared_thread || frames == 0 {
        return "-".into();
    }
    let per = |s: f64| s * 1e6 / frames as f64;
    let ingress = if k.one_thread {
        "-".to_string()
    } else {
        format!("{:.2}", per(k.ingress_cpu_seconds))
    };
    format!(
        "{ingress}/{:.2}/{:.2} us",
        per(k.egress_cpu_seconds),
        per(k.spin_cpu_seconds)
    )
}

/// What `lab down` removed, one line each.
pub(crate) fn down_report(out: &mut dyn Write, report: &DownReport) -> io::Result<()> {
    for lab in &report.labs {
        writeln!(out, "removed lab {lab}")?;
    }
    for ns in &report.namespaces {
        writeln!(out, "removed leftover namespace {ns}")?;
    }
    for link in &report.links {
        writeln!(out, "removed leftover device {link}")?;
    }
    if !report.processes.is_empty() {
        let pids: Vec<String> = report.processes.iter().map(|p| p.to_string()).collect();
        writeln!(out, "ended processes of the lab: {}", pids.join(" "))?;
    }
    for lab in &report.skipped {
        writeln!(out, "left alone: {lab}")?;
    }
    Ok(())
}
/// A topology's notes, one `warning:` line each, before the lab is built (stderr: `lab up`
/// prints the lab's name alone on stdout, and `lab run` the command's output).
pub(crate) fn notes(
    out: &mut dyn std::io::Write,
    notes: &[wirespeed_lab::topology::TopologyNote],
) -> std::io::Result<()> {
    for note in notes {
        writeln!(out, "warning: {note}")?;
    }
    Ok(())
}
