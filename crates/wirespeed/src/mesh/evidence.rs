//! What is known of each agent's own port beside its tests: the evidence
//! `wirespeed_model::mesh::faults::judge` weighs with the rates.
//!
//! A duplex mismatch is named by its counters (late collisions at the half end, CRC errors at
//! the full end: seed 003 §8.4), and a host on a slow link by its link's ceiling. An agent on
//! a real NIC would read those from its own interface; inside a wirespeed lab the interfaces
//! are TAP devices that count no collisions, and the emulator's port counters stand in for the
//! NIC's, as `diagnose` reads them. So when the controller runs inside a lab that holds an
//! agent's address, the agent's port is the last hop of the lab's configured route to it: its
//! configured rates give the ceiling, and the emulator's counters over the mesh (read before
//! the first test and after the last) give the collisions and CRC errors. Elsewhere nothing is
//! known and the judge works from the rates alone.

use std::net::IpAddr;
use std::time::Duration;

use wirespeed_lab::truth::{CostSeconds, Element, FlowShape, HopDuplex, RouteTruth};
use wirespeed_model::IpVersion;
use wirespeed_model::mesh::faults::HostEvidence;

use super::AgentEntry;

/// How long the read after the mesh waits for the emulator's next write (it writes every
/// 200 ms), so that the last test's frames are counted.
const FRESH_COUNTERS: Duration = Duration::from_millis(600);

/// An agent's port as a lab configured it.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct LabPort {
    pub lab: String,
    pub node: String,
    pub ceiling_bits_per_second: Option<f64>,
}

/// The lab port of each agent, where the controller runs inside a lab that holds the agent's
/// address.
pub(crate) fn lab_ports(agents: &[AgentEntry]) -> Vec<Option<LabPort>> {
    agents
        .iter()
        .map(|a| {
            let ip = a.address.ip();
            let (lab, route) = wirespeed_lab::inside::lab_route_to(ip)?;
            Some(LabPort {
                lab,
                node: route.to.clone(),
                ceiling_bits_per_second: access_ceiling(&route, ip),
            })
        })
        .collect()
}

/// The TCP goodput ceiling of the last link into the route's destination, the slower of its
/// two directions: what the host's own port carries at best, full duplex (a mismatch is the
/// counters' to tell).
fn access_ceiling(route: &RouteTruth, ip: IpAddr) -> Option<f64> {
    let last = route.hops.last()?;
    let rate = last
        .rate_bits_per_second
        .min(last.return_rate_bits_per_second);
    let mut hop = last.clone();
    hop.rate_bits_per_second = rate;
    hop.return_rate_bits_per_second = rate;
    hop.duplex = HopDuplex::Full;
    hop.forward = CostSeconds::default();
    hop.return_forward = CostSeconds::default();
    let port = RouteTruth {
        from: last.from.clone(),
        to: last.to.clone(),
        address: route.address.clone(),
        hops: vec![hop],
        source_transmit: CostSeconds::default(),
        source_receive: CostSeconds::default(),
        destination_receive: CostSeconds::default(),
        destination_transmit: CostSeconds::default(),
    };
    let ip = if ip.is_ipv6() {
        IpVersion::V6
    } else {
        IpVersion::V4 { options_bytes: 0 }
    };
    port.bottleneck(FlowShape::tcp(ip))
        .ok()?
        .all
        .iter()
        .find(|e| matches!(e.element, Element::Link { .. }))
        .map(|e| e.ceiling_bits_per_second)
}

/// Collisions, late collisions (frames the port sent) and CRC errors (frames it received).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[doc(hidden)]
pub struct PortCounters {
    pub collisions: u64,
    pub late_collisions: u64,
    pub crc_errors: u64,
}

/// The counters of every agent's lab port now; `fresh`: after the emulator's next write.
pub(crate) fn counters(ports: &[Option<LabPort>], fresh: bool) -> Vec<Option<PortCounters>> {
    let mut labs: Vec<(String, Option<wirespeed_lab::lifecycle::StatusRecord>)> = Vec::new();
    ports
        .iter()
        .map(|p| {
            let p = p.as_ref()?;
            if !labs.iter().any(|(l, _)| *l == p.lab) {
                let timeout = if fresh {
                    FRESH_COUNTERS
                } else {
                    Duration::ZERO
                };
                labs.push((
                    p.lab.clone(),
                    wirespeed_lab::lifecycle::next_status(&p.lab, timeout).ok(),
                ));
            }
            let status = labs.iter().find(|(l, _)| *l == p.lab)?.1.as_ref()?;
            let mut c = PortCounters::default();
            for port in &status.ports {
                if port.from == p.node {
                    c.collisions += port.counters.collisions;
                    c.late_collisions += port.counters.late_collisions;
                }
                if port.to == p.node {
                    c.crc_errors += port.counters.fcs_errors;
                }
            }
            Some(c)
        })
        .collect()
}

/// Each agent's evidence: its port's ceiling, and what its counters counted between `before`
/// and `after`.
#[doc(hidden)]
pub fn evidence(
    ports: &[Option<LabPort>],
    before: &[Option<PortCounters>],
    after: &[Option<PortCounters>],
) -> Vec<HostEvidence> {
    ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let counted = match (
                before.get(i).copied().flatten(),
                after.get(i).copied().flatten(),
            ) {
                (Some(b), Some(a)) => Some(PortCounters {
                    collisions: a.collisions.saturating_sub(b.collisions),
                    late_collisions: a.late_collisions.saturating_sub(b.late_collisions),
                    crc_errors: a.crc_errors.saturating_sub(b.crc_errors),
                }),
                _ => None,
            };
            HostEvidence {
                link_ceiling_bits_per_second: p.as_ref().and_then(|p| p.ceiling_bits_per_second),
                collisions: counted.map(|c| c.collisions),
                late_collisions: counted.map(|c| c.late_collisions),
                crc_errors: counted.map(|c| c.crc_errors),
            }
        })
        .collect()
}

/// Where the evidence came from, for the document: the labs whose ports were read.
#[doc(hidden)]
pub fn source(ports: &[Option<LabPort>]) -> Option<String> {
    let mut labs: Vec<&str> = ports.iter().flatten().map(|p| p.lab.as_str()).collect();
    labs.dedup();
    (!labs.is_empty()).then(|| {
        format!(
            "the configured links and the emulated ports' counters of lab {} (a TAP device counts no collisions: the emulator's ports stand in for the NICs')",
            labs.join(", ")
        )
    })
}
