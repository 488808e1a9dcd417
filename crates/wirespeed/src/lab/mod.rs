//! `wirespeed lab`: build a network of namespaces and emulated links, use it, take it down.

use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use wirespeed_lab::lifecycle::{self, Detach, DownReport, LabRecord, StatusRecord};
use wirespeed_lab::{PortStatus, Topology, lab_bottleneck, sys};
use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, group_digits};
use wirespeed_report::{Document, Render, Table};

use crate::common::output::{self, OutputArgs};

mod metrics;

#[derive(Debug, Args)]
pub(crate) struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Debug, Subcommand)]
enum LabCommand {
    /// Build the topology in FILE and leave it running; prints the lab's name.
    Up {
        /// Topology file (TOML; see labs/ for examples).
        file: PathBuf,
        /// Print the lab's record (name, emulator pid, nodes, namespaces, addresses) as JSON
        /// (schema "wirespeed.lab.up.v1") instead of its name.
        #[arg(long, short = 'J')]
        json: bool,
    },
    /// Run a command inside one node of a running lab.
    ///
    /// The command gets WIRESPEED_LAB set to the lab's name, as `lab run` gives it, so that
    /// `wirespeed diagnose` inside the node reads the emulated MAC's counters of its ports.
    Exec {
        /// The lab's name, as `lab up` printed it.
        name: String,
        /// The host or router to run in.
        node: String,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Build FILE, run a command, and always take the lab down; exits with the command's status.
    /// Without --node the command runs outside the lab with WIRESPEED_LAB set to its name, so a
    /// script can call `wirespeed lab exec "$WIRESPEED_LAB" NODE -- ...`.
    Run {
        /// Topology file.
        file: PathBuf,
        /// Run the command inside this node instead.
        #[arg(long, value_name = "NODE")]
        node: Option<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Frames, bytes, drops, queue depth and timing error of every port of a running lab; with
    /// no name, the running labs.
    Status {
        /// The lab's name.
        name: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Stop a lab's emulator, end every process in it, and remove the namespaces and devices
    /// its state records.
    Down {
        /// The lab's name, exactly as `lab up` printed it (never a path or a prefix).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Remove every lab recorded in the state directory that you made (namespaces and
        /// devices no lab records are left alone).
        #[arg(long)]
        all: bool,
        /// With --all, also remove labs other users made.
        #[arg(long, requires = "all")]
        force: bool,
    },
}

pub(crate) fn run(args: LabArgs) -> anyhow::Result<()> {
    match args.command {
        LabCommand::Up { file, json } => up(&file, json),
        LabCommand::Exec {
            name,
            node,
            command,
        } => exec(&name, &node, &command),
        LabCommand::Run {
            file,
            node,
            command,
        } => run_in_lab(&file, node.as_deref(), &command),
        LabCommand::Status { name, output } => status(name.as_deref(), &output),
        LabCommand::Down { name, all, force } => down(name.as_deref(), all, force),
    }
}

fn load(file: &Path) -> anyhow::Result<Topology> {
    Ok(Topology::load(file)?)
}

fn up(file: &Path, json: bool) -> anyhow::Result<()> {
    let topology = load(file)?;
    sys::require_net_admin()?;
    sys::catch_termination();
    let running = lifecycle::up(topology, file, Detach::Independent)?;
    if let Some(signal) = sys::caught_signal() {
        lifecycle::down(&running.name)?;
        bail!(
            "interrupted by signal {signal}; lab {} removed",
            running.name
        );
    }
    if json {
        let record = lifecycle::record(&running.name)?;
        let doc = Document::new(
            "lab.up",
            UpParams {
                file: file.display().to_string(),
            },
            record,
        );
        print!("{}", wirespeed_report::to_json(&doc)?);
    } else {
        println!("{}", running.name);
    }
    Ok(())
}

fn ip_netns_exec(namespace: &str, command: &[String]) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", namespace]).args(command);
    cmd
}

/// Refuses a command that cannot be started, before the lab is touched: `ip netns exec` (and
/// a spawn) would otherwise fail late with a raw message and status 1. A name without a slash
/// is looked for on PATH, as exec does; the namespaces share this host's file system.
fn check_command(command: &[String]) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Some(program) = command.first() else {
        bail!("no command after --: give one, e.g. -- ping -c 3 198.19.1.2");
    };
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        runnable(Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| runnable(&dir.join(program)))
        })
    };
    if !found {
        bail!(
            "{program}: no such executable{}: give the path of a program, or a command on PATH",
            if program.contains('/') {
                ""
            } else {
                " on PATH"
            }
        );
    }
    Ok(())
}

fn exec(name: &str, node: &str, command: &[String]) -> anyhow::Result<()> {
    check_command(command)?;
    let record = lifecycle::record(name)?;
    let namespace = record.namespace(node)?;
    // Entering a namespace and the lab's cgroup both take CAP_NET_ADMIN (root): say so, not
    // the cgroup's bare "Permission denied".
    sys::require_net_admin()?;
    if let Some(cgroup) = &record.cgroup {
        wirespeed_lab::cleanup::join_cgroup(Path::new(cgroup), std::process::id())
            .with_context(|| format!("putting the command into lab {name}'s cgroup {cgroup}"))?;
    }
    let err = ip_netns_exec(namespace, command)
        .env("WIRESPEED_LAB", name)
        .exec();
    Err(err).with_context(|| format!("running {} in {namespace}", command[0]))
}

fn run_in_lab(file: &Path, node: Option<&str>, command: &[String]) -> anyhow::Result<()> {
    check_command(command)?;
    let topology = load(file)?;
    if let Some(node) = node
        && topology.node_index(node).is_none()
    {
        bail!("{} has no node '{node}'", file.display());
    }
    sys::require_net_admin()?;
    sys::catch_termination();
    let running = lifecycle::up(topology, file, Detach::DiesWithParent)?;
    let outcome = run_and_wait(&running.name, node, command);
    let down = lifecycle::down(&running.name);
    let code = outcome?;
    down?;
    io::stdout().flush()?;
    std::process::exit(code);
}

/// Runs the command until it exits or a termination signal arrives; returns the exit status
/// to pass on (128 + signal when interrupted, as a shell does).
fn run_and_wait(lab: &str, node: Option<&str>, command: &[String]) -> anyhow::Result<i32> {
    if let Some(signal) = sys::caught_signal() {
        return Ok(128 + signal);
    }
    let record = lifecycle::record(lab)?;
    let mut cmd = match node {
        Some(node) => ip_netns_exec(record.namespace(node)?, command),
        None => {
            let mut cmd = Command::new(&command[0]);
            cmd.args(&command[1..]);
            cmd
        }
    };
    cmd.env("WIRESPEED_LAB", lab);
    if let Some(cgroup) = &record.cgroup {
        wirespeed_lab::cleanup::command_in_cgroup(&mut cmd, Path::new(cgroup))
            .with_context(|| format!("opening lab {lab}'s cgroup {cgroup} for the command"))?;
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", command[0]))?;
    loop {
        if let Some(status) = child.try_wait()? {
            use std::os::unix::process::ExitStatusExt;
            return Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
        }
        if let Some(signal) = sys::caught_signal() {
            // The command we started, by its pid.
            sys::terminate(child.id());
            let _ = child.wait();
            return Ok(128 + signal);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[derive(Debug, Serialize)]
struct UpParams {
    file: String,
}

#[derive(Debug, Serialize)]
struct StatusParams {
    name: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StatusResult {
    One {
        lab: LabRecord,
        uptime_seconds: f64,
        ports: Vec<PortStatus>,
        #[serde(skip)]
        rate_format: RateFormat,
    },
    List {
        labs: Vec<ListedLab>,
    },
}

/// A recorded lab in `lab status`'s list, marked when its emulator is gone (the lab then
/// holds only what `lab down` removes).
#[derive(Debug, Serialize)]
struct ListedLab {
    #[serde(flatten)]
    lab: LabRecord,
    emulator_running: bool,
}

fn status(name: Option<&str>, output: &OutputArgs) -> anyhow::Result<()> {
    let result = match name {
        Some(name) => {
            let (
                lab,
                StatusRecord {
                    uptime_seconds,
                    ports,
                    ..
                },
            ) = lifecycle::status(name)?;
            if !lifecycle::emulator_running(name) {
                bail!(
                    "the emulator of lab {name} (pid {}) is not running; `wirespeed lab down {name}` removes what it left",
                    lab.pid
                );
            }
            StatusResult::One {
                lab,
                uptime_seconds,
                ports,
                rate_format: output.rate_format,
            }
        }
        None => StatusResult::List {
            labs: lifecycle::running()
                .iter()
                .filter_map(|n| {
                    lifecycle::record(n).ok().map(|lab| ListedLab {
                        lab,
                        emulator_running: lifecycle::emulator_running(n),
                    })
                })
                .collect(),
        },
    };
    let warnings: Vec<wirespeed_lab::LabBottleneck> = match &result {
        StatusResult::One { ports, .. } => ports.iter().filter_map(lab_bottleneck).collect(),
        StatusResult::List { .. } => Vec::new(),
    };
    let mut doc = Document::new(
        "lab.status",
        StatusParams {
            name: name.map(str::to_string),
        },
        result,
    );
    for w in &warnings {
        doc.warning(w);
    }
    output::print(output, &doc).context("writing the result")
}

impl Render for StatusResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        match self {
            StatusResult::List { labs } if labs.is_empty() => writeln!(out, "no labs running"),
            StatusResult::List { labs } => {
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
                // Names and addresses read better left-aligned.
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
                writeln!(out)?;
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
                let shared = ports.iter().any(|p| p.medium == "half");
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
                    if shared {
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
                }
                write!(out, "{t}")?;
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
                        },
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
                )?;
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
                if ports.iter().any(|p| p.host.is_some()) {
                    writeln!(out)?;
                    write!(out, "{hosts}")?;
                    writeln!(
                        out,
                        "host processing model: frames charged the host's transmit and receive costs at this port, one at a time"
                    )?;
                }
                if ports.iter().any(|p| p.aqm.is_some()) {
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
                        let delay = p.counters.queue_bytes as f64 * 8.0
                            / p.rate_bits_per_second.max(1) as f64;
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
                    )?;
                }
                if ports.iter().any(|p| p.medium == "full") {
                    let mut delays =
                        Table::new(["queue delay port", "now", "mean since up", "samples"]);
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
                            or_dash(
                                c.queue_delay_sum_ns as f64
                                    / c.queue_delay_samples.max(1) as f64
                                    / 1e9,
                            ),
                            group_digits(c.queue_delay_samples),
                        ]);
                    }
                    writeln!(out)?;
                    write!(out, "{delays}")?;
                    writeln!(
                        out,
                        "queue delay = what a frame arriving then waits before its first bit goes (the bytes queued and the rest of the frame on the wire, at the rate), sampled by the emulator every 1 ms from the port's first frame (- : none yet, or a shared medium); the mean between two readings is the difference of queue_delay_sum_ns over that of queue_delay_samples (--json)"
                    )?;
                }
                if shared {
                    writeln!(out)?;
                    write!(out, "{errors}")?;
                    writeln!(
                        out,
                        "shared media (CSMA/CD): collisions and late collisions as the port's MAC counted them; FCS errors and runts as it received them (seed 003 Table 7)"
                    )?;
                }
                writeln!(
                    out,
                    "frames = delivered/offered; drop host = dropped by the sending host's TAP queue before the emulator read them; drop other = medium, too big, memory bound, receiving stack, failed writes; busy = share of time the wire was serializing; late = release time minus schedule"
                )
            }
        }
    }
}

/// Frames offered to a port.
fn c_frames(p: &PortStatus) -> u64 {
    p.counters.frames_in
}

fn down(name: Option<&str>, all: bool, force: bool) -> anyhow::Result<()> {
    let report: DownReport = if all {
        lifecycle::down_all(force)?
    } else {
        lifecycle::down(name.expect("clap requires a name without --all"))?
    };
    for lab in &report.labs {
        println!("removed lab {lab}");
    }
    for ns in &report.namespaces {
        println!("removed leftover namespace {ns}");
    }
    for link in &report.links {
        println!("removed leftover device {link}");
    }
    if !report.processes.is_empty() {
        let pids: Vec<String> = report.processes.iter().map(|p| p.to_string()).collect();
        println!("ended processes of the lab: {}", pids.join(" "));
    }
    for lab in &report.skipped {
        println!("left alone: {lab}");
    }
    Ok(())
}

/// The `in/out/spin per frame` cell: each thread's CPU per frame offered, and the egress
/// thread's spin before releases per frame (`-` on a shared medium, whose one thread is the
/// `per frame` cell). A direction served by one thread has no ingress thread: its `in` is `-`
/// and its `out` is the whole thread (reads included), not a 0 that would read as free reads.
fn stages(k: &wirespeed_lab::EmulatorCost, frames: u64) -> String {
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

#[cfg(test)]
mod tests {
    use super::stages;

    #[test]
    fn a_one_thread_direction_shows_no_ingress_stage_rather_than_a_free_one() {
        let two = wirespeed_lab::EmulatorCost {
            ingress_cpu_seconds: 0.5,
            egress_cpu_seconds: 1.0,
            spin_cpu_seconds: 0.25,
            ..Default::default()
        };
        assert_eq!(stages(&two, 1_000_000), "0.50/1.00/0.25 us");
        let one = wirespeed_lab::EmulatorCost {
            one_thread: true,
            ingress_cpu_seconds: 0.0,
            ..two
        };
        assert_eq!(stages(&one, 1_000_000), "-/1.00/0.25 us");
        let medium = wirespeed_lab::EmulatorCost {
            shared_thread: true,
            ..two
        };
        assert_eq!(stages(&medium, 1_000_000), "-");
        assert_eq!(stages(&two, 0), "-");
    }
}
