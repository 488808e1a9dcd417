//! The diagnosis itself: the counters read twice (over `--interval`, or across a transfer each
//! way against `--peer`), a lab's emulated MAC counters added where the interface is a TAP, and
//! the document with its verdicts and warnings. It prints nothing.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use wirespeed_model::autoneg::Duplex;
use wirespeed_model::diagnose::peer::{ASYMMETRY_RATIO, Transfer, peer_findings};
use wirespeed_model::diagnose::{Counters, Diagnosis, Evidence, InterfaceKind, diagnose};
use wirespeed_net::ClientConfig;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::iface::Reader;
use wirespeed_net::report::Role;
use wirespeed_net::spec::{Amount, Direction, TestSpec};
use wirespeed_report::Document;

use super::result::{DiagnoseReport, InterfaceReport, Params, PeerReport};
use super::verdicts::{
    DiagnoseVerdict, DiagnoseWarning, READER_WARNING_KIND, interface_verdict, peer_verdicts,
};
use super::{Config, Peer};

/// An emulated port's MAC counters by interface: (interface, medium, counters).
type MacCounters = Vec<(
    String,
    String,
    wirespeed_lab::emulator::link::DirectionCounters,
)>;

/// The transfers of `--peer`: the agent, and each direction.
type PeerTransfers = (SocketAddr, Transfer, Transfer);

/// Reads the counters (across the transfers with `--peer`), diagnoses each interface and
/// returns the typed document.
///
/// A peer's transfers take about twice its time; otherwise this waits the interval.
pub fn measure(config: &Config) -> anyhow::Result<Document<Params, DiagnoseReport>> {
    let reader = match &config.sysfs {
        Some(root) => Reader::files(root),
        None => Reader::system(),
    };
    let mut warnings = Vec::new();
    let mut peer_warnings = Vec::new();
    let (evidence, peer) = match &config.peer {
        None => (
            reader.sample(&config.interfaces, config.interval, &mut warnings)?,
            None,
        ),
        Some(peer) => {
            let (evidence, transfers) = sample_with_peer(
                &config.interfaces,
                peer,
                &reader,
                &mut warnings,
                &mut peer_warnings,
            )?;
            (evidence, Some(transfers))
        }
    };
    let interfaces: Vec<InterfaceReport> = evidence
        .into_iter()
        .map(|evidence| InterfaceReport {
            diagnosis: diagnose(&evidence),
            evidence,
        })
        .collect();
    let peer = peer
        .zip(config.peer.as_ref())
        .map(|((agent, to_peer, from_peer), asked)| {
            let local: Vec<Diagnosis> = interfaces.iter().map(|i| i.diagnosis.clone()).collect();
            let mut findings = peer_findings(&to_peer, &from_peer, &local);
            with_host_load(&mut findings);
            PeerReport {
                agent,
                seconds_each: asked.time.as_secs_f64(),
                findings,
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
            .map_or(config.interval.as_secs_f64(), |i| {
                i.evidence.interval_seconds
            }),
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
    Ok(doc)
}

/// `--peer`: the counters sampled across a transfer to the agent and one back, with a lab's
/// emulated MAC counters read on either side of them.
fn sample_with_peer(
    interfaces: &[String],
    peer: &Peer,
    reader: &Reader,
    warnings: &mut Vec<String>,
    peer_warnings: &mut Vec<DiagnoseWarning>,
) -> anyhow::Result<(Vec<Evidence>, PeerTransfers)> {
    let (agent, auth) = (peer.agent, peer.auth.clone());
    let lab = lab_node();
    let (mut evidence, transfers) = reader.sample_while(interfaces, warnings, || {
        let before = lab.as_ref().map(|(lab, node)| lab_mac_counters(lab, node));
        let w = peer_warnings;
        let to = transfer(agent, Direction::Send, peer.time, auth.clone(), w);
        let from = to
            .is_ok()
            .then(|| transfer(agent, Direction::Receive, peer.time, auth, w));
        let after = lab.as_ref().map(|(lab, node)| lab_mac_counters(lab, node));
        (to, from, before.zip(after))
    })?;
    let (to, from, mac) = transfers;
    let to_peer = to?;
    let from_peer = from.context("the transfer to the peer failed")??;
    if let (Some((lab, node)), Some((before, after))) = (&lab, mac) {
        add_lab_counters(&mut evidence, lab, node, &before, &after);
    }
    Ok((evidence, (agent, to_peer, from_peer)))
}

/// Each TAP interface of the lab node takes its emulated port's MAC counters, duplex and kind,
/// as a NIC driver's 802.3 statistics would give them.
fn add_lab_counters(
    evidence: &mut [Evidence],
    lab: &str,
    node: &str,
    before: &MacCounters,
    after: &MacCounters,
) {
    for e in evidence {
        let port = |list: &[(String, String, _)]| {
            list.iter()
                .find(|(i, _, _)| *i == e.name)
                .map(|(_, m, c)| (m.clone(), *c))
        };
        if let (Some((medium, b)), Some((_, a))) = (port(before), port(after)) {
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
fn lab_mac_counters(lab: &str, node: &str) -> MacCounters {
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

/// A slowed direction that no counter backs is only the shape of a mismatch; its named causes
/// include a busy receiver, and on this host that is measurable: the 1-minute load average
/// against the CPUs, read as the transfers end, goes into the warning's evidence so that a
/// reader (or a test) can tell a loaded machine from a path.
fn with_host_load(findings: &mut [wirespeed_model::diagnose::Finding]) {
    let Some(load) = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
    else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    add_host_load(findings, load, cpus);
}

/// [`with_host_load`] once the figures are read: only the counterless warning gets them (a
/// fault already rests on the counters).
#[doc(hidden)]
pub fn add_host_load(findings: &mut [wirespeed_model::diagnose::Finding], load: f64, cpus: usize) {
    use wirespeed_model::diagnose::{FindingKind, Severity};
    for f in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::AsymmetricTransfer && f.severity == Severity::Warning)
    {
        f.evidence.push(format!(
            "this host's load average {load:.1} on {cpus} CPU{} as the transfers ended",
            if cpus == 1 { "" } else { "s" }
        ));
    }
}
