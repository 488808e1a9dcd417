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
