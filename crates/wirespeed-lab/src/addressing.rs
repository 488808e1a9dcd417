//! Addresses and routes for a topology, assigned so that nobody has to write them.
//!
//! Link `i` gets the subnet 198.18.i.0/24 (198.19.(i-256).0/24 past 255) and 2001:2:0:i::/64:
//! end a is `.1` / `::1`, end b is `.2` / `::2`. These are the benchmarking ranges of RFC 2544
//! (198.18.0.0/15, reserved by RFC 6890) and RFC 5180 (2001:2::/48), which no real network
//! routes, so a lab can never leak traffic to a real host. A link may give its own IPv4 pair.
//!
//! Shared segment `j` (a hub) numbers after the links: it gets the subnet of link index
//! `links + j`, and its stations are `.1`, `.2`, ... in the order the file lists them (IPv4
//! only: IPv6's own solicitations would otherwise take turns on the shared medium).
//!
//! Routes are shortest paths in hops, computed per node by breadth-first search over links, in
//! which only routers may be passed through (hosts do not forward). Ties go to the link that
//! comes first in the file, and between the two ends of a destination link to end a, so the
//! same file always builds the same routing tables.

use std::collections::VecDeque;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::topology::{NodeKind, Topology};

/// An IPv4 address with its prefix length, `198.18.0.1/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Net {
    /// The interface address.
    pub addr: Ipv4Addr,
    /// Prefix length, 0 to 32.
    pub prefix: u8,
}

impl Ipv4Net {
    fn mask(self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix))
        }
    }

    /// The network address (host bits zero).
    pub fn network(self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & self.mask())
    }

    /// True if `addr` is inside this subnet.
    pub fn contains(self, addr: Ipv4Addr) -> bool {
        u32::from(addr) & self.mask() == u32::from(self.network())
    }
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for Ipv4Net {
    type Err = String;

    fn from_str(text: &str) -> Result<Ipv4Net, String> {
        let bad =
            || format!("'{text}' is not an IPv4 address with a prefix, e.g. \"198.18.5.1/24\"");
        let (addr, prefix) = text.split_once('/').ok_or_else(bad)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        if !(8..=30).contains(&prefix) {
            return Err(format!(
                "prefix /{prefix} of '{text}' must be /8 to /30 for a link"
            ));
        }
        Ok(Ipv4Net { addr, prefix })
    }
}

/// One end of a link inside a node's namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The node it belongs to.
    pub node: usize,
    /// The link it is an end of.
    pub link: usize,
    /// True for end a.
    pub is_a: bool,
    /// Its name inside the namespace: eth0, eth1, ... in link order.
    pub name: String,
    /// IPv4 address and prefix.
    pub ipv4: Ipv4Net,
    /// IPv6 address (prefix /64); none on a link with `ipv6 = false` or an MTU below IPv6's
    /// 1280.
    pub ipv6: Option<Ipv6Addr>,
}

/// A route in one node's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The node whose table it is in.
    pub node: usize,
    /// Destination subnet (the far link's).
    pub dest: Ipv4Net,
    /// Next hop's address on the first link.
    pub via: Ipv4Addr,
    /// Destination /64 and next hop for IPv6, if both links carry IPv6.
    pub via6: Option<(Ipv6Addr, Ipv6Addr)>,
    /// Interface name the next hop is on.
    pub dev: String,
}

/// A station's interface on a shared segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StationInterface {
    /// The node it belongs to.
    pub node: usize,
    /// The segment it is attached to.
    pub segment: usize,
    /// Its position among the segment's stations.
    pub station: usize,
    /// Its name inside the namespace (numbered after the node's link interfaces).
    pub name: String,
    /// IPv4 address and prefix.
    pub ipv4: Ipv4Net,
}

/// Every interface and route of a lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Two per link: index `2 * link` is end a, `2 * link + 1` end b.
    pub interfaces: Vec<Interface>,
    /// Station interfaces of every segment, segment by segment in file order.
    pub stations: Vec<StationInterface>,
    /// All routes of all nodes.
    pub routes: Vec<Route>,
}

impl Plan {
    /// The interface at end a (`is_a`) or b of `link`.
    pub fn end(&self, link: usize, is_a: bool) -> &Interface {
        &self.interfaces[2 * link + usize::from(!is_a)]
    }

    /// An IPv4 address of `node` (its first interface's).
    pub fn address_of(&self, node: usize) -> Option<Ipv4Addr> {
        self.interfaces
            .iter()
            .find(|i| i.node == node)
            .map(|i| i.ipv4.addr)
            .or_else(|| {
                self.stations
                    .iter()
                    .find(|s| s.node == node)
                    .map(|s| s.ipv4.addr)
            })
    }
}

/// The automatic subnet of link `index`: 198.18.index.0/24, then 198.19.x.0/24.
pub fn link_subnet(index: usize) -> (Ipv4Addr, Ipv6Addr) {
    let second = 18 + (index / 256) as u8;
    let third = (index % 256) as u8;
    (
        Ipv4Addr::new(198, second, third, 0),
        Ipv6Addr::new(0x2001, 2, 0, index as u16, 0, 0, 0, 0),
    )
}

/// Assigns addresses and computes routes.
pub fn plan(topology: &Topology) -> Plan {
    let mut interfaces = Vec::new();
    let mut per_node = vec![0usize; topology.nodes.len()];
    for link in &topology.links {
        let (v4, v6) = link_subnet(link.index);
        for (is_a, node, given) in [
            (true, link.a, link.a_address),
            (false, link.b, link.b_address),
        ] {
            let host = if is_a { 1 } else { 2 };
            let ipv4 = given.unwrap_or(Ipv4Net {
                addr: Ipv4Addr::from(u32::from(v4) + host),
                prefix: 24,
            });
            let ipv6 = (link.ipv6 && link.mtu >= 1280)
                .then(|| Ipv6Addr::from(u128::from(v6) + u128::from(host)));
            interfaces.push(Interface {
                node,
                link: link.index,
                is_a,
                name: format!("eth{}", per_node[node]),
                ipv4,
                ipv6,
            });
            per_node[node] += 1;
        }
    }
    let mut stations = Vec::new();
    for segment in &topology.segments {
        let (v4, _) = link_subnet(topology.links.len() + segment.index);
        for (station, &node) in segment.stations.iter().enumerate() {
            stations.push(StationInterface {
                node,
                segment: segment.index,
                station,
                name: format!("eth{}", per_node[node]),
                ipv4: Ipv4Net {
                    addr: Ipv4Addr::from(u32::from(v4) + station as u32 + 1),
                    prefix: 24,
                },
            });
            per_node[node] += 1;
        }
    }
    let mut plan = Plan {
        interfaces,
        stations,
        routes: Vec::new(),
    };
    for node in 0..topology.nodes.len() {
        let first_hop = first_hops(topology, &plan, node);
        for link in &topology.links {
            if link.a == node || link.b == node {
                continue;
            }
            // The nearer end of the destination link decides the next hop.
            let best = [link.a, link.b]
                .into_iter()
                .filter_map(|end| first_hop[end])
                .min_by_key(|&(distance, _)| distance);
            let Some((_, (via_link, via_is_a))) = best else {
                continue;
            };
            let mine = plan.end(via_link, !via_is_a);
            let theirs = plan.end(via_link, via_is_a);
            let far = plan.end(link.index, true);
            let via6 = match (theirs.ipv6, far.ipv6, mine.ipv6) {
                (Some(next), Some(_), Some(_)) => Some((link_subnet(link.index).1, next)),
                _ => None,
            };
            let dest = Ipv4Net {
                addr: far.ipv4.network(),
                prefix: far.ipv4.prefix,
            };
            plan.routes.push(Route {
                node,
                dest,
                via: theirs.ipv4.addr,
                via6,
                dev: mine.name.clone(),
            });
        }
    }
    plan
}

/// For each node, the hop count from `from` and the first link taken (link index, whether the
/// neighbour is end a of it), passing only through routers.
fn first_hops(
    topology: &Topology,
    _plan: &Plan,
    from: usize,
) -> Vec<Option<(usize, (usize, bool))>> {
    let n = topology.nodes.len();
    let mut result: Vec<Option<(usize, (usize, bool))>> = vec![None; n];
    let mut queue = VecDeque::new();
    let mut visited = vec![false; n];
    visited[from] = true;
    for link in &topology.links {
        for (me, other, other_is_a) in [(link.a, link.b, false), (link.b, link.a, true)] {
            if me == from && !visited[other] {
                visited[other] = true;
                result[other] = Some((1, (link.index, other_is_a)));
                queue.push_back(other);
            }
        }
    }
    while let Some(node) = queue.pop_front() {
        if !matches!(topology.nodes[node].kind, NodeKind::Router(_)) {
            continue;
        }
        let (distance, first) = result[node].expect("queued nodes have a distance");
        for link in &topology.links {
            for (me, other) in [(link.a, link.b), (link.b, link.a)] {
                if me == node && !visited[other] {
                    visited[other] = true;
                    result[other] = Some((distance + 1, first));
                    queue.push_back(other);
                }
            }
        }
    }
    result
}
