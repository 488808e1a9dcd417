//! `wirespeed diagnose [IFACE...]`: are these interfaces' settings and counters healthy, and if
//! not, which fault fits?
//!
//! Setting `WIRESPEED_SYSFS_NET=DIR` reads a directory laid out like /sys/class/net instead of
//! the kernel (files only, no ethtool): counters saved from another machine can be replayed,
//! and the tests use it to show the diagnosis of a NIC this machine does not have.
//!
//! Inside a wirespeed lab (`wirespeed lab exec` sets `WIRESPEED_LAB`), the interfaces are TAP
//! devices without a physical layer: the lab's emulator runs their MAC (CSMA/CD on a half-duplex
//! or mismatched link) and counts what a NIC's PHY and MAC would (collisions, late collisions,
//! FCS errors, runts). Those counters are read from the emulator's status and added to the
//! interface's, as a NIC driver's 802.3 statistics are, so that `diagnose --peer` in the lab has
//! the evidence the seed's half-duplex end had (seed 003 Table 7).

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_model::autoneg::{Duplex, duplex_word};
use wirespeed_model::diagnose::peer::{ASYMMETRY_RATIO, Transfer, peer_findings};
use wirespeed_model::diagnose::{
    Counters, Diagnosis, Evidence, Finding, InterfaceKind, Severity, diagnose,
};
use wirespeed_model::units::{format_duration, parse_duration};
use wirespeed_net::ClientConfig;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::iface::Reader;
use wirespeed_net::report::Role;
use wirespeed_net::spec::{Amount, Direction, TestSpec};
use wirespeed_report::{Document, Render};

use crate::common::output::{self, OutputArgs};

mod metrics;
mod verdicts;

use verdicts::{
    DiagnoseVerdict, DiagnoseWarning, READER_WARNING_KIND, confidence_word, interface_verdict,
    peer_verdicts,
};

#[derive(Debug, Clone, Args)]
pub(crate) struct DiagnoseArgs {
    /// Interfaces to diagnose (default: every interface of this network namespace).
    #[arg(value_name = "IFACE")]
    interfaces: Vec<String>,

    /// Time between the two readings of the counters, for rates (250ms, 2s).
    #[arg(long, short = 'i', default_value = "1s", value_name = "DURATION", value_parser = parse_interval)]
    interval: Duration,

    /// Also run a TCP transfer each way (back to back) against a wirespeed agent on HOST
    /// (`wirespeed serve`), sampling the counters across both: a duplex mismatch shows as one
    /// direction several times slower with late collisions or FCS errors growing meanwhile
    /// (seed 003 Table 7). The counters are then sampled over the transfers, not --interval.
    #[arg(long, value_name = "HOST", conflicts_with = "interval")]
    peer: Option<String>,

    /// The agent's control port with --peer.
    #[arg(
        long,
        short = 'p',
        default_value_t = wirespeed_net::control::DEFAULT_PORT,
        requires = "peer",
        value_name = "PORT"
    )]
    port: u16,

    /// Length of each direction's transfer with --peer.
    #[arg(long, short = 't', default_value = "3s", requires = "peer", value_name = "DURATION", value_parser = parse_interval)]
    time: Duration,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    /// Print one JSON document (schema "wirespeed.diagnose.v1") instead of text.
    #[arg(long, short = 'J')]
    json: bool,

    /// Also write the result's figures as Prometheus text to FILE (replaced whole, for
    /// node_exporter's textfile collector): each interface's rates, errors and link settings.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    metrics_file: Option<std::path::PathBuf>,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text).map_err(|e| e.to_string())?;
    if d.is_zero() || d > Duration::from_secs(3600) {
        return Err(format!(
            "{text:?} is out of range; expected an interval from 1ms to 1h, such as 2s"
        ));
    }
    Ok(d)
}

#[derive(Debug, Serialize)]
struct Params {
    interfaces: Vec<String>,
    interval_seconds: f64,
    source: String,
}

#[derive(Debug, Serialize)]
struct InterfaceReport {
    #[serde(flatten)]
    evidence: Evidence,
    diagnosis: Diagnosis,
}

#[derive(Debug, Serialize)]
struct DiagnoseReport {
    interfaces: Vec<InterfaceReport>,
    /// With --peer: the transfers and what they show.
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<PeerReport>,
}

#[derive(Debug, Serialize)]
struct PeerReport {
    agent: SocketAddr,
    seconds_each: f64,
    to_peer: Transfer,
    from_peer: Transfer,
    findings: Vec<Finding>,
}

/// A file of lab `lab`'s state directory, parsed. Inside a node, `ip netns exec` has remounted
/// /sys, so `lifecycle::record` cannot verify the lab's cgroup; the files are read here for their
/// figures alone (nothing is signalled or removed on their word).
fn lab_file<T: serde::de::DeserializeOwned>(lab: &str, file: &str) -> Option<T> {
    if !wirespeed_lab::lifecycle::is_lab_name(lab) {
        return None;
    }
    let path = wirespeed_lab::lifecycle::state_root()
        .ok()?
        .join(lab)
        .join(file);
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// This process's node in the lab `WIRESPEED_LAB` names: the node whose namespace is the one
/// this process runs in. `None` outside a lab (or in a lab that is gone).
fn lab_node() -> Option<(String, String)> {
    use std::os::unix::fs::MetadataExt;
    let lab = std::env::var("WIRESPEED_LAB").ok()?;
    let record: wirespeed_lab::lifecycle::LabRecord = lab_file(&lab, "lab.json")?;
    if record.name != lab {
        return None;
    }
    let ours = std::fs::metadata("/proc/self/ns/net").ok()?;
    record.nodes.iter().find_map(|n| {
        let m = std::fs::metadata(format!("/run/netns/{}", n.namespace)).ok()?;
        (m.dev() == ours.dev() && m.ino() == ours.ino()).then(|| (lab.clone(), n.name.clone()))
    })
}

/// The emulated MAC counters of `node`'s ports, by interface: (interface, medium, counters).
/// The emulator writes them every 200 ms: this waits (at most a second) for a copy written
/// after the call, so that what happened just before is counted.
fn lab_mac_counters(
    lab: &str,
    node: &str,
) -> Vec<(
    String,
    String,
    wirespeed_lab::emulator::link::DirectionCounters,
)> {
    let read = || lab_file::<wirespeed_lab::lifecycle::StatusRecord>(lab, "status.json");
    let Some(first) = read() else {
        return Vec::new();
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    let mut status = first;
    let start = status.sequence;
    while status.sequence <= start + 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        if let Some(s) = read() {
            status = s;
        }
    }
    status
        .ports
        .into_iter()
        .filter(|p| p.from == node)
        .map(|p| (p.interface, p.medium, p.counters))
        .collect()
}

/// Adds an emulated port's MAC counters to an interface's (a TAP device counts none of them).
fn add_mac_counters(c: &mut Counters, m: &wirespeed_lab::emulator::link::DirectionCounters) {
    c.collisions += m.collisions;
    c.late_collisions = Some(c.late_collisions.unwrap_or(0) + m.late_collisions);
    c.excessive_collisions = Some(c.excessive_collisions.unwrap_or(0) + m.excessive_collisions);
    c.fcs_errors += m.fcs_errors;
    c.undersize = Some(c.undersize.unwrap_or(0) + m.runts);
}

/// One direction against the agent: what the receiver got, and the sender's retransmissions.
fn transfer(
    agent: SocketAddr,
    direction: Direction,
    time: Duration,
    auth: Option<AuthKey>,
    warnings: &mut Vec<DiagnoseWarning>,
) -> anyhow::Result<Transfer> {
    let cfg = ClientConfig {
        agent,
        bind: None,
        spec: TestSpec {
            direction,
            amount: Amount::Seconds(time.as_secs_f64()),
            ..TestSpec::default()
        },
        auth,
        cpu: None,
        interval: None,
        omit: Duration::ZERO,
        idle_timeout: Duration::from_secs(10),
        interrupt: None,
        source: None,
    };
    let name = if direction == Direction::Send {
        "to the peer"
    } else {
        "from the peer"
    };
    let outcome = wirespeed_net::client::run(&cfg, &mut |_: &_| {}).with_context(|| {
        format!("--peer: the transfer {name} failed (is `wirespeed serve` running on the peer, on --port {}?)", agent.port())
    })?;
    let streams = || {
        outcome
            .client
            .streams
            .iter()
            .chain(outcome.agent.iter().flat_map(|a| &a.streams))
    };
    // A transfer that stalls (a badly mismatched link can hold the last segments past the
    // agent's deadline) is evidence, not a failure: keep what it moved, and say so. Without the
    // receiver's view (the agent went away), the sender's count stands in.
    let role = if streams().any(|s| s.role == Role::Receiver) {
        Role::Receiver
    } else {
        Role::Sender
    };
    if let Some(e) = &outcome.error {
        let counted = if role == Role::Receiver {
            "receiver"
        } else {
            "sender"
        };
        warnings.push(DiagnoseWarning::TransferEndedEarly {
            direction: name.into(),
            error: e.to_string(),
            counted_by: counted.into(),
        });
    }
    Ok(Transfer {
        direction: name.into(),
        bits_per_second: streams()
            .filter(|s| s.role == role)
            .map(|s| s.bits_per_second())
            .filter(|b| b.is_finite())
            .sum(),
        retransmits: streams()
            .filter(|s| s.role == Role::Sender)
            .map(|s| s.tcp_info.as_ref().map(|t| u64::from(t.retransmits)))
            .sum(),
    })
}

pub(crate) fn run(args: DiagnoseArgs) -> anyhow::Result<()> {
    let reader = match std::env::var_os("WIRESPEED_SYSFS_NET") {
        Some(root) => Reader::files(root),
        None => Reader::system(),
    };
    let mut warnings = Vec::new();
    let mut peer_warnings = Vec::new();
    let (evidence, peer) = match &args.peer {
        None => (
            reader.sample(&args.interfaces, args.interval, &mut warnings)?,
            None,
        ),
        Some(host) => {
            let agent = crate::common::host::resolve_one(host, args.port, "--peer")?;
            let auth = args.key.load()?;
            let lab = lab_node();
            let (mut evidence, transfers) =
                reader.sample_while(&args.interfaces, &mut warnings, || {
                    let before = lab.as_ref().map(|(lab, node)| lab_mac_counters(lab, node));
                    let w = &mut peer_warnings;
                    let to = transfer(agent, Direction::Send, args.time, auth.clone(), w);
                    let from = to
                        .is_ok()
                        .then(|| transfer(agent, Direction::Receive, args.time, auth, w));
                    let after = lab.as_ref().map(|(lab, node)| lab_mac_counters(lab, node));
                    (to, from, before.zip(after))
                })?;
            let (to, from, mac) = transfers;
            let to_peer = to?;
            let from_peer = from.context("the transfer to the peer failed")??;
            if let (Some((lab, node)), Some((before, after))) = (&lab, mac) {
                for e in &mut evidence {
                    let port = |list: &[(String, String, _)]| {
                        list.iter()
                            .find(|(i, _, _)| *i == e.name)
                            .map(|(_, m, c)| (m.clone(), *c))
                    };
                    if let (Some((medium, b)), Some((_, a))) = (port(&before), port(&after)) {
                        add_mac_counters(&mut e.first, &b);
                        add_mac_counters(&mut e.second, &a);
                        e.link.source = format!(
                            "{}; MAC counters from lab {lab}'s emulator (node {node}, {medium} duplex medium)",
                            e.link.source
                        );
                        // The emulator's MAC is this port's: its duplex is the medium's, not
                        // the TAP's nominal one, and its counters are a MAC's, so the PHY
                        // rules apply instead of "collisions do not apply".
                        e.kind = InterfaceKind::EmulatedMac(format!(
                            "lab {lab}'s emulator (node {node}, {medium} duplex medium)"
                        ));
                        e.link.duplex = match medium.as_str() {
                            "half" => Some(Duplex::Half),
                            "full" => Some(Duplex::Full),
                            _ => e.link.duplex,
                        };
                    }
                }
            }
            (evidence, Some((agent, to_peer, from_peer)))
        }
    };
    let interfaces: Vec<InterfaceReport> = evidence
        .into_iter()
        .map(|evidence| InterfaceReport {
            diagnosis: diagnose(&evidence),
            evidence,
        })
        .collect();
    let peer = peer.map(|(agent, to_peer, from_peer)| {
        let local: Vec<Diagnosis> = interfaces.iter().map(|i| i.diagnosis.clone()).collect();
        PeerReport {
            agent,
            seconds_each: args.time.as_secs_f64(),
            findings: peer_findings(&to_peer, &from_peer, &local),
            to_peer,
            from_peer,
        }
    });
    let mut verdicts: Vec<DiagnoseVerdict> = interfaces.iter().map(interface_verdict).collect();
    if let Some(p) = &peer {
        verdicts.extend(peer_verdicts(p, ASYMMETRY_RATIO));
    }
    let params = Params {
        interfaces: interfaces.iter().map(|i| i.evidence.name.clone()).collect(),
        interval_seconds: interfaces
            .first()
            .map_or(args.interval.as_secs_f64(), |i| i.evidence.interval_seconds),
        source: reader.root().display().to_string(),
    };
    let mut doc = Document::new("diagnose", params, DiagnoseReport { interfaces, peer });
    for v in &verdicts {
        doc.verdict(v);
    }
    for w in warnings {
        doc.push(wirespeed_report::Finding::plain(
            wirespeed_report::Severity::Warning,
            READER_WARNING_KIND,
            w,
        ));
    }
    for w in &peer_warnings {
        doc.warning(w);
    }
    let out = OutputArgs {
        json: args.json,
        rate_format: RateFormat::Adaptive,
        metrics_file: args.metrics_file.clone(),
    };
    output::print(&out, &doc).context("writing the result")
}

impl Render for DiagnoseReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        for (i, r) in self.interfaces.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            render_one(r, out)?;
        }
        if let Some(p) = &self.peer {
            writeln!(out)?;
            writeln!(
                out,
                "peer {}: a TCP transfer each way, {:.1} s each",
                p.agent, p.seconds_each
            )?;
            for t in [&p.to_peer, &p.from_peer] {
                let retrans = t
                    .retransmits
                    .map_or(String::new(), |r| format!(", {r} segments retransmitted"));
                writeln!(
                    out,
                    "  {:<14} {}{retrans}",
                    t.direction,
                    RateFormat::Adaptive.format(t.bits_per_second)
                )?;
            }
            for f in &p.findings {
                let sev = if f.severity == Severity::Fault {
                    "FAULT"
                } else {
                    "warning"
                };
                writeln!(
                    out,
                    "  {sev} ({} confidence): {}",
                    confidence_word(f.confidence),
                    f.title
                )?;
                writeln!(out, "    evidence: {}", f.evidence.join("; "))?;
                writeln!(out, "    cause:    {}", f.cause)?;
                writeln!(out, "    fix:      {}", f.fix)?;
            }
        }
        Ok(())
    }
}

fn render_one(r: &InterfaceReport, out: &mut dyn Write) -> io::Result<()> {
    let e = &r.evidence;
    let d = &r.diagnosis;
    let carrier = match e.link.carrier {
        Some(true) => "link up",
        Some(false) => "NO LINK",
        None => "link unknown",
    };
    writeln!(out, "{}: {}, {carrier}", e.name, e.kind.describe())?;
    if e.kind.has_phy() || e.link.speed_mbps.is_some() {
        let speed = e
            .link
            .speed_mbps
            .map_or("speed unknown".to_string(), |s| format!("{s} Mbit/s"));
        let duplex = e.link.duplex.map_or("duplex unknown", duplex_word);
        let autoneg = match e.link.autoneg {
            Some(true) => ", auto-negotiation on",
            Some(false) => ", auto-negotiation off",
            None => "",
        };
        writeln!(
            out,
            "  settings   {speed} {duplex}{autoneg} (from {})",
            e.link.source
        )?;
        if let Some(adv) = e.link.advertised.filter(|a| !a.is_empty()) {
            let partner = e
                .link
                .partner_advertised
                .map_or("unknown".to_string(), |p| {
                    if p.is_empty() {
                        "nothing (not negotiating)".to_string()
                    } else {
                        p.to_string()
                    }
                });
            writeln!(out, "  advertised {adv}; partner {partner}")?;
        }
    }
    writeln!(
        out,
        "  traffic    rx {:.0} frames/s {}, tx {:.0} frames/s {} over {}",
        d.rates.rx_packets_per_second,
        RateFormat::Adaptive.format(d.rates.rx_bits_per_second),
        d.rates.tx_packets_per_second,
        RateFormat::Adaptive.format(d.rates.tx_bits_per_second),
        format_duration(Duration::from_secs_f64(e.interval_seconds)),
    )?;
    writeln!(out, "  counters   {}", counter_line(&e.second))?;
    if d.delta.errors() + d.delta.overflows() > 0 {
        writeln!(out, "  growth     {}", counter_line(&d.delta))?;
    }
    for f in &d.findings {
        let sev = match f.severity {
            Severity::Fault => "FAULT",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        if f.severity == Severity::Info {
            writeln!(out, "  {sev}: {}", f.title)?;
            continue;
        }
        let confidence = confidence_word(f.confidence);
        writeln!(out, "  {sev} ({confidence} confidence): {}", f.title)?;
        writeln!(out, "    evidence: {}", f.evidence.join("; "))?;
        writeln!(out, "    cause:    {}", f.cause)?;
        writeln!(out, "    fix:      {}", f.fix)?;
    }
    Ok(())
}

fn counter_line(c: &Counters) -> String {
    format!(
        "rx {} tx {} frames; collisions {}, late {}, FCS {}, alignment {}, runts {}, aborted {}, drops {}/{}, fifo {}/{}, missed {}",
        c.rx_packets,
        c.tx_packets,
        c.all_collisions(),
        c.late(),
        c.fcs_errors,
        c.alignment_errors,
        c.runts(),
        c.tx_aborted_errors,
        c.rx_dropped,
        c.tx_dropped,
        c.rx_fifo_errors,
        c.tx_fifo_errors,
        c.rx_missed_errors,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: DiagnoseArgs,
    }

    fn parse(argv: &[&str]) -> Result<DiagnoseArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("diagnose").chain(argv.iter().copied()))
            .map(|w| w.args)
    }

    #[test]
    fn interval_and_names_parse() {
        let a = parse(&[]).unwrap();
        assert!(a.interfaces.is_empty());
        assert_eq!(a.interval, Duration::from_secs(1));
        let a = parse(&["eth0", "lo", "-i", "250ms", "-J"]).unwrap();
        assert_eq!(a.interfaces, ["eth0", "lo"]);
        assert_eq!(a.interval, Duration::from_millis(250));
        assert!(a.json);
        assert!(parse(&["--interval", "0s"]).is_err());
        assert!(parse(&["--interval", "soon"]).is_err());
        assert!(parse(&["--interval", "2h"]).is_err());
    }
}
