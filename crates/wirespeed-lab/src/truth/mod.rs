//! What a probe along a chain of the lab *should* measure: the configured round-trip plane of
//! every hop, and a twin of the chain for calibrating the lab's own cost.
//!
//! The emulator charges a link direction `delay + (1 + hidden_hops) x wire(packet) x 8 / rate`
//! (wire bytes: the packet plus 38 on Ethernet for packets of 46 bytes and more, the packet alone
//! on a serial line) and a router `forward` or `answer` cost of `fixed + per_byte x packet` on its
//! egress (`emulator::router`). Written in the form of `wirespeed_model::perhop` (round trip =
//! `c + u S + v Q` for `S` bytes sent and `Q` returned), hop `k` of a chain has
//! `c_k = sum of both directions' fixed link costs + 2 x forward fixed of routers before k +
//! answer fixed of k`, `u_k` the per-byte costs out, `v_k` those back plus `k`'s answer per byte.
//!
//! The lab itself adds a cost to every crossing that no topology file states: the emulator's
//! thread wakes up to read each frame from a TAP device (tens of microseconds on a loaded
//! machine, before the frame is stamped), writes it into the next namespace, and that
//! namespace's kernel forwards or answers it. The running lab measures it per link as it comes
//! up ([`crate::crossing`]: fixed and per byte), and [`chain_with_crossings`] adds it to the
//! configured chain: what a probe across that lab should find. [`calibration_twin`] is the same chain with the
//! routers' modelled costs removed, so that a run over it measures that machinery per hop.
//!
//! [`route`] gives the whole route from a node to an address (every link direction, its rate,
//! queue, AQM and the routers' costs, as the lab's routing tables lead) and the element that
//! bounds a transfer along it; [`random`] draws seeded random topologies to test all of this
//! against.

pub mod random;
pub mod route;

pub use route::{
    Bottleneck, CostSeconds, Element, ElementCeiling, FlowShape, HopDuplex, RouteError, RouteHop,
    RouteTruth, route,
};

use std::collections::VecDeque;
use std::time::Duration;

use wirespeed_model::LinkLayer;
use wirespeed_model::perhop::RttLine;

use crate::topology::{Cost, DirectionConfig, NodeKind, Topology};

/// Why a chain's truth cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TruthError {
    /// A node named is not in the topology.
    #[error("no node '{0}' in the topology: name one of its [[host]] or [[router]] tables")]
    UnknownNode(String),
    /// No path of point-to-point links joins the two nodes.
    #[error(
        "no path of full-duplex links from '{from}' to '{to}': per-hop truth needs a chain of point-to-point links"
    )]
    NoPath {
        /// Start.
        from: String,
        /// End.
        to: String,
    },
    /// An end host carries a processing model, which the per-hop planes leave out.
    #[error(
        "host '{0}' has transmit/receive costs: per-hop truth covers links and routers only; probe between hosts without a processing model"
    )]
    HostCosts(String),
}

/// One hop of a chain as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainHop {
    /// TTL that reaches it.
    pub ttl: u8,
    /// The node's name.
    pub node: String,
    /// The node before it (the sending host for hop 1).
    pub previous: String,
    /// Whether it is a router (answers time exceeded) or the destination host (echo).
    pub router: bool,
    /// The configured round trip of a probe answered here.
    pub line: RttLine,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A link direction's `(fixed, per byte)` in ms, for packets of at least 46 bytes (no pad).
pub(crate) fn link_cost(d: &DirectionConfig, layer: LinkLayer) -> (f64, f64) {
    let per_wire_byte = 8.0 / d.rate.bits_per_second() as f64 * 1e3;
    let copies = 1.0 + f64::from(d.hidden_hops);
    // Bytes a packet of 1000 occupies beyond itself: 38 on Ethernet, 0 on a serial line.
    let framing = layer.frame(1000).wire as f64 - 1000.0;
    (
        ms(d.delay) + copies * framing * per_wire_byte,
        copies * per_wire_byte,
    )
}

fn router_costs(t: &Topology, node: usize) -> (Cost, Cost) {
    match &t.nodes[node].kind {
        NodeKind::Router(r) => (r.forward, r.answer),
        NodeKind::Host(_) => (Cost::default(), Cost::default()),
    }
}

/// Links (index, forward direction is a -> b) from `from` to `to`, fewest hops.
fn path(t: &Topology, from: usize, to: usize) -> Option<Vec<(usize, bool)>> {
    let mut came: Vec<Option<(usize, usize, bool)>> = vec![None; t.nodes.len()];
    let mut seen = vec![false; t.nodes.len()];
    let mut queue = VecDeque::from([from]);
    seen[from] = true;
    while let Some(n) = queue.pop_front() {
        if n == to {
            break;
        }
        // Only routers forward; a host in the middle ends the chain.
        if n != from && matches!(t.nodes[n].kind, NodeKind::Host(_)) {
            continue;
        }
        for l in t.links.iter().filter(|l| !l.is_shared()) {
            let (next, ab) = if l.a == n {
                (l.b, true)
            } else if l.b == n {
                (l.a, false)
            } else {
                continue;
            };
            if !seen[next] {
                seen[next] = true;
                came[next] = Some((n, l.index, ab));
                queue.push_back(next);
            }
        }
    }
    let mut links = Vec::new();
    let mut at = to;
    while at != from {
        let (prev, link, ab) = came[at]?;
        links.push((link, ab));
        at = prev;
    }
    links.reverse();
    Some(links)
}

/// The configured round-trip plane of every hop from host `from` to host `to`.
pub fn chain(t: &Topology, from: &str, to: &str) -> Result<Vec<ChainHop>, TruthError> {
    chain_with(t, from, to, |_| Crossing::default())
}

/// The lab's own cost of one crossing of a link ([`crate::crossing::CrossingCost`]), in the
/// units of the planes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Crossing {
    /// Fixed, ms.
    pub fixed_ms: f64,
    /// Per IP byte, ms (`per_byte_ns` / 1e6), the same each way: the lab measures it over a
    /// round trip, which does not tell the directions apart.
    pub per_byte_ms: f64,
}

/// [`chain`] with the lab's own cost of each crossing added, fixed and per byte: the truth of
/// what the emulator actually does, which the probe harness judges beside the configured one.
/// Every link crossed adds its per byte to the bytes sent and to the bytes returned, so a hop's
/// own per byte gains its link's, and a router's answer per byte (`v - u` of its plane) is
/// unchanged.
pub fn chain_with_crossings(
    t: &Topology,
    from: &str,
    to: &str,
    crossing: impl Fn(usize) -> Crossing,
) -> Result<Vec<ChainHop>, TruthError> {
    chain_with(t, from, to, crossing)
}

/// [`chain`] with the lab's own cost of each crossing added: what a probe across this running
/// lab should find. `crossing_ms(link)` is one crossing of link `link`
/// ([`crate::crossing::CrossingCost`], measured by the lab when it came up); a hop's round trip
/// crosses each link before it twice, so its fixed cost gains twice the sum of theirs, and its
/// own one-way fixed cost gains its own link's one crossing. A link the lab did not measure
/// counts as zero, which [`crossing_costs_cover`] tells apart.
pub fn chain_with_crossing_costs(
    t: &Topology,
    from: &str,
    to: &str,
    crossing_ms: impl Fn(usize) -> f64,
) -> Result<Vec<ChainHop>, TruthError> {
    chain_with(t, from, to, |l| Crossing {
        fixed_ms: crossing_ms(l),
        per_byte_ms: 0.0,
    })
}

/// The links of the chain from host `from` to host `to`, in the order a probe crosses them:
/// hop `k`'s own link (the one that reaches it) is the `k - 1`th, so a figure of hop `k` can be
/// set beside what the lab measured on that link ([`crate::crossing::CrossingCost`]).
pub fn chain_links(t: &Topology, from: &str, to: &str) -> Result<Vec<usize>, TruthError> {
    let index = |n: &str| {
        t.node_index(n)
            .ok_or_else(|| TruthError::UnknownNode(n.to_string()))
    };
    let (a, b) = (index(from)?, index(to)?);
    let links = path(t, a, b).ok_or_else(|| TruthError::NoPath {
        from: from.into(),
        to: to.into(),
    })?;
    Ok(links.into_iter().map(|(l, _)| l).collect())
}

/// Whether `measured` holds a cost for every link of the chain from `from` to `to`.
pub fn crossing_costs_cover(t: &Topology, from: &str, to: &str, measured: &[usize]) -> bool {
    let (Some(a), Some(b)) = (t.node_index(from), t.node_index(to)) else {
        return false;
    };
    path(t, a, b).is_some_and(|links| links.iter().all(|(l, _)| measured.contains(l)))
}

fn chain_with(
    t: &Topology,
    from: &str,
    to: &str,
    crossing: impl Fn(usize) -> Crossing,
) -> Result<Vec<ChainHop>, TruthError> {
    let index = |n: &str| {
        t.node_index(n)
            .ok_or_else(|| TruthError::UnknownNode(n.to_string()))
    };
    let (a, b) = (index(from)?, index(to)?);
    for (n, name) in [(a, from), (b, to)] {
        if let NodeKind::Host(h) = &t.nodes[n].kind
            && h.has_costs()
        {
            return Err(TruthError::HostCosts(name.into()));
        }
    }
    let links = path(t, a, b).ok_or_else(|| TruthError::NoPath {
        from: from.into(),
        to: to.into(),
    })?;
    let mut hops = Vec::new();
    // Sums over the links and forwarding routers crossed so far.
    let mut acc = RttLine::default();
    let mut node = a;
    for (k, &(l, ab)) in links.iter().enumerate() {
        let link = &t.links[l];
        let (out, back) = if ab {
            (&link.ab, &link.ba)
        } else {
            (&link.ba, &link.ab)
        };
        let previous = node;
        node = if ab { link.b } else { link.a };
        // The router before this link forwards the probe out and the answer back.
        let (forward, _) = router_costs(t, previous);
        let (out_fixed, out_byte) = link_cost(out, link.layer);
        let (back_fixed, back_byte) = link_cost(back, link.layer);
        let lab = crossing(l);
        acc = acc
            + RttLine {
                fixed_ms: out_fixed + back_fixed + 2.0 * ms(forward.fixed) + 2.0 * lab.fixed_ms,
                per_sent_byte_ms: out_byte + ms(forward.per_byte) + lab.per_byte_ms,
                per_returned_byte_ms: back_byte + ms(forward.per_byte) + lab.per_byte_ms,
            };
        let (_, answer) = router_costs(t, node);
        let router = matches!(t.nodes[node].kind, NodeKind::Router(_));
        hops.push(ChainHop {
            ttl: u8::try_from(k + 1).unwrap_or(u8::MAX),
            node: t.nodes[node].name.clone(),
            previous: t.nodes[previous].name.clone(),
            router,
            line: acc
                + RttLine {
                    fixed_ms: ms(answer.fixed),
                    per_sent_byte_ms: 0.0,
                    per_returned_byte_ms: ms(answer.per_byte),
                },
        });
    }
    Ok(hops)
}

/// The topology with every router's forward and answer costs removed and no random loss; nodes,
/// kernels, links (rate, delay, layer, hidden hops) unchanged. What a probe over it measures
/// beyond [`chain`]'s figures for it is the lab's own cost per hop.
///
/// The links stay as they are because the lab's own cost depends on them: the emulator's
/// threads read a frame later the longer they have been idle (measured: a crossing costs about
/// 25 us more after 5 ms of idleness than after 0.2 ms, on a loaded 2-core machine), and how
/// long they idle is set by the serialization and propagation times. A twin with other links
/// would calibrate another machine.
pub fn calibration_twin(t: &Topology) -> Topology {
    let mut twin = t.clone();
    twin.name = Some(format!("{}-cal", t.name.as_deref().unwrap_or("chain")));
    for node in &mut twin.nodes {
        if let NodeKind::Router(r) = &mut node.kind {
            r.forward = Cost::default();
            r.answer = Cost::default();
        }
    }
    for link in &mut twin.links {
        link.ab.loss = 0.0;
        link.ba.loss = 0.0;
    }
    twin
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_001() -> Topology {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/seed-001-path.toml");
        Topology::load(std::path::Path::new(path)).unwrap()
    }

    /// Seed 001 Table 1 as labs/seed-001-path.toml configures it, hop by hop.
    #[test]
    fn seed_001_path_truth_per_hop() {
        let hops = chain(&seed_001(), "roc", "cbnewsa").unwrap();
        let names: Vec<&str> = hops.iter().map(|h| h.node.as_str()).collect();
        assert_eq!(names, ["ciscomci", "ciscoser", "cbnewsa"]);
        // Each hop's own link, in the order crossed, either way round.
        assert_eq!(
            chain_links(&seed_001(), "roc", "cbnewsa").unwrap(),
            [0, 1, 2]
        );
        assert_eq!(
            chain_links(&seed_001(), "cbnewsa", "roc").unwrap(),
            [2, 1, 0]
        );
        assert!(chain_links(&seed_001(), "roc", "nobody").is_err());
        assert!(hops[0].router && !hops[2].router);
        let own =
            wirespeed_model::perhop::own_costs(&hops.iter().map(|h| h.line).collect::<Vec<_>>());
        let ether = 0.0008;
        let ds0 = 8.0 / 56_000.0 * 1e3;
        // Hop 1: 10 Mbit/s Ethernet in, ciscoping answers (.00131/byte).
        assert!((own[0].per_byte_ms - ether).abs() < 1e-12, "{own:?}");
        assert!((own[0].answer_per_byte_ms - 0.00131).abs() < 1e-12);
        // 38 bytes of framing at 0.8 us and 50 m of cable, plus half of ciscoping's .751.
        let cable = 50.0 / (0.66 * 299_792_458.0) * 1e3;
        assert!((own[0].fixed_ms - (38.0 * ether + cable + 0.751 / 2.0)).abs() < 1e-6);
        // Hop 2: the DS0 (serial: no framing) and ciscomci's forwarding.
        assert!((own[1].per_byte_ms - (ds0 + 0.00004)).abs() < 1e-9);
        assert!((own[1].fixed_ms - (7.6 + 0.525)).abs() < 1e-6);
        // Hop 3: Ethernet and ciscoser's forwarding; the host answers at no cost, so half of
        // ciscoser's answer comes off.
        assert!((own[2].per_byte_ms - (ether + 0.002939)).abs() < 1e-12);
        assert!(
            (own[2].fixed_ms - (38.0 * ether + cable + 1.695 - 0.751 / 2.0)).abs() < 1e-6,
            "{own:?}"
        );
        assert_eq!(own[2].answer_per_byte_ms, 0.0);
    }

    #[test]
    fn measured_crossings_add_one_crossing_to_each_hops_own_fixed_cost() {
        let t = seed_001();
        let configured = chain(&t, "roc", "cbnewsa").unwrap();
        // 10, 20 and 40 us a crossing of links 0, 1 and 2.
        let cost = |l: usize| [0.010, 0.020, 0.040][l];
        let lab = chain_with_crossing_costs(&t, "roc", "cbnewsa", cost).unwrap();
        let own = |h: &[ChainHop]| {
            wirespeed_model::perhop::own_costs(&h.iter().map(|h| h.line).collect::<Vec<_>>())
        };
        let (before, after) = (own(&configured), own(&lab));
        for (k, want) in [0.010, 0.020, 0.040].into_iter().enumerate() {
            let added = after[k].fixed_ms - before[k].fixed_ms;
            assert!((added - want).abs() < 1e-12, "hop {k}: {added}");
            assert_eq!(after[k].per_byte_ms, before[k].per_byte_ms);
        }
        // The round trip to hop 3 crosses each link twice.
        let whole = lab[2].line.fixed_ms - configured[2].line.fixed_ms;
        assert!((whole - 0.140).abs() < 1e-12, "{whole}");
        assert!(crossing_costs_cover(&t, "roc", "cbnewsa", &[0, 1, 2]));
        assert!(!crossing_costs_cover(&t, "roc", "cbnewsa", &[0, 2]));
        assert!(!crossing_costs_cover(&t, "roc", "nowhere", &[0, 1, 2]));
    }

    #[test]
    fn a_crossings_cost_per_byte_adds_to_each_hops_per_byte_and_leaves_answers_alone() {
        let t = seed_001();
        let configured = chain(&t, "roc", "cbnewsa").unwrap();
        // 2, 5 and 9 ns a byte a crossing of links 0, 1 and 2, and 10 us fixed each.
        let lab = chain_with_crossings(&t, "roc", "cbnewsa", |l| Crossing {
            fixed_ms: 0.010,
            per_byte_ms: [2e-6, 5e-6, 9e-6][l],
        })
        .unwrap();
        let own = |h: &[ChainHop]| {
            wirespeed_model::perhop::own_costs(&h.iter().map(|h| h.line).collect::<Vec<_>>())
        };
        let (before, after) = (own(&configured), own(&lab));
        for (k, want) in [2e-6, 5e-6, 9e-6].into_iter().enumerate() {
            let added = after[k].per_byte_ms - before[k].per_byte_ms;
            assert!((added - want).abs() < 1e-15, "hop {k}: {added}");
            assert!((after[k].fixed_ms - before[k].fixed_ms - 0.010).abs() < 1e-12);
            let answer = after[k].answer_per_byte_ms - before[k].answer_per_byte_ms;
            assert!(answer.abs() < 1e-15, "hop {k}: {answer}");
        }
        // The fixed-only form is the same as per byte 0.
        let fixed_only = chain_with_crossing_costs(&t, "roc", "cbnewsa", |_| 0.010).unwrap();
        let zero = chain_with_crossings(&t, "roc", "cbnewsa", |_| Crossing {
            fixed_ms: 0.010,
            per_byte_ms: 0.0,
        })
        .unwrap();
        assert_eq!(fixed_only, zero);
    }

    #[test]
    fn a_host_with_a_processing_model_is_refused_not_left_out() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/seed-004-sun3.toml");
        let t = Topology::load(std::path::Path::new(path)).unwrap();
        let hosts: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
        let err = chain(&t, hosts[0], hosts[1]).unwrap_err();
        assert!(matches!(err, TruthError::HostCosts(_)), "{err}");
    }

    #[test]
    fn twin_keeps_nodes_and_layers_and_is_known() {
        let t = seed_001();
        let twin = calibration_twin(&t);
        assert_eq!(twin.nodes.len(), t.nodes.len());
        assert_eq!(twin.links, t.links);
        let hops = chain(&twin, "roc", "cbnewsa").unwrap();
        // Links only: 2 x (two Ethernets' 38 bytes at 0.8 us + 50 m of cable + the DS0's 7.6 ms),
        // and the three links' serialization per byte.
        let cable = 50.0 / (0.66 * 299_792_458.0) * 1e3;
        let c = hops[2].line.fixed_ms;
        assert!(
            (c - 2.0 * (2.0 * (38.0 * 0.0008 + cable) + 7.6)).abs() < 1e-5,
            "{c}"
        );
        let ds0 = 8.0 / 56_000.0 * 1e3;
        assert!((hops[2].line.per_sent_byte_ms - (1.6e-3 + ds0)).abs() < 1e-12);
        assert!((hops[0].line.per_returned_byte_ms - 0.0008).abs() < 1e-15);
        assert_eq!(
            chain(&t, "roc", "nowhere").unwrap_err(),
            TruthError::UnknownNode("nowhere".into())
        );
    }
}
