//! What a process inside a lab's namespace can learn about the links it sits on: the lab's
//! ground truth, readable from inside.
//!
//! Inside a lab every interface is a TAP device, and a TAP reports whatever speed its driver
//! likes (10 Gbit/s), whatever the emulator behind it serializes at (10 Mbit/s). A measurement
//! judged against that speed is judged against fiction. The lab knows the truth, so it writes
//! it down: when a lab comes up its emulator process writes `links.json` next to `lab.json` in
//! `/run/wirespeed-lab/NAME/`, one entry per interface of every namespace, with the rate the
//! emulator charges for frames leaving by that interface, the link layer and the duplex.
//!
//! A process finds its own entry without being told anything: it compares the device and
//! inode of `/proc/self/ns/net` with those of `/run/netns/NS` for each namespace the files
//! name. Both are files of the kernel's nsfs, and one namespace has one inode, so the match
//! holds whichever way the process entered the namespace (`wirespeed lab exec`,
//! `ip netns exec`, `setns`, a child of any of those) and needs no environment variable that a
//! shell or `sudo` could drop. A file left behind by a lab that is gone cannot match: its
//! namespaces no longer exist under `/run/netns`. Every read is bounded (the number of labs
//! looked at, the size of each file).
//!
//! The link a process leaves by is not the whole story: a transfer is bounded by the slowest
//! element of its route. Beside `links.json` the lab writes `routes.json`: the route
//! (`truth::route`, following the lab's own routing tables) from every node to every address
//! of every other node, each hop with its rates, delay, queue, AQM and the routers' costs, and
//! [`route_to`] finds the one from this process's node to an address.

use std::io::Read;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use wirespeed_model::LinkLayer;

use crate::addressing::Plan;
use crate::lifecycle::STATE_ROOT;
use crate::topology::{LinkDuplex, NodeKind, Topology};
use crate::truth::RouteTruth;

/// The file in a lab's state directory.
pub const FILE_NAME: &str = "links.json";
/// The file written first and renamed to [`FILE_NAME`], so a reader never sees half of it.
pub const TEMP_NAME: &str = "links.json.tmp";
/// Labs looked at, at most, when searching for this process's namespace.
const MAX_LABS: usize = 1024;
/// The largest `links.json` read.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// The file of routes in a lab's state directory.
pub const ROUTES_NAME: &str = "routes.json";
/// Written first and renamed to [`ROUTES_NAME`].
pub const ROUTES_TEMP_NAME: &str = "routes.json.tmp";
/// The most routes a lab records (hosts' first): a lab of 64 nodes with hundreds of links has
/// more pairs than anyone measures, and the file must stay small enough to read.
const MAX_ROUTES: usize = 4096;
/// The largest `routes.json` read.
const MAX_ROUTES_BYTES: u64 = 16 << 20;

/// One interface of one namespace, as the lab configured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterfaceTruth {
    /// The lab's name.
    pub lab: String,
    /// The namespace the interface is in.
    pub namespace: String,
    /// The node of the topology.
    pub node: String,
    /// The interface's name inside the namespace (`eth0`).
    pub interface: String,
    /// The link or segment it is an end of, for people: `h1-h2` or `segment lan`.
    pub link: String,
    /// The rate the emulator serializes frames leaving by this interface at, bit/s.
    pub rate_bits_per_second: u64,
    /// The rate frames arriving by it were serialized at, bit/s (the far end's egress: it
    /// differs on an asymmetric link).
    pub receive_rate_bits_per_second: u64,
    /// What the wire charges per frame.
    pub layer: LinkLayer,
    /// The interface's MTU.
    pub mtu: u32,
    /// True when this end runs CSMA/CD (half duplex, or a station of a shared segment).
    pub half_duplex: bool,
    /// The drop-tail limit of the queue frames leaving by this interface wait in: frames.
    #[serde(default)]
    pub queue_packets: Option<u32>,
    /// The same limit in bytes, when the file gives it so.
    #[serde(default)]
    pub queue_bytes: Option<u64>,
    /// The active queue management of that queue, in words (`codel, target 5ms`); `None`:
    /// drop-tail.
    #[serde(default)]
    pub aqm: Option<String>,
}

/// Everything one lab wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabTruth {
    /// The lab's name.
    pub lab: String,
    /// Every interface of every namespace.
    pub interfaces: Vec<InterfaceTruth>,
}

impl LabTruth {
    /// The truth of a lab named `lab` built from `topology` and `plan`, whose node `i` lives in
    /// namespace `namespaces[i]`.
    pub fn of(lab: &str, topology: &Topology, plan: &Plan, namespaces: &[String]) -> LabTruth {
        let node_name = |i: usize| topology.nodes[i].name.clone();
        let namespace = |i: usize| namespaces.get(i).cloned().unwrap_or_default();
        let links = plan.interfaces.iter().filter_map(|f| {
            let link = topology.links.get(f.link)?;
            let (dir, back, duplex, peer) = if f.is_a {
                (&link.ab, &link.ba, link.duplex_a, link.b)
            } else {
                (&link.ba, &link.ab, link.duplex_b, link.a)
            };
            Some(InterfaceTruth {
                lab: lab.to_string(),
                namespace: namespace(f.node),
                node: node_name(f.node),
                interface: f.name.clone(),
                link: format!("{}-{}", node_name(f.node), node_name(peer)),
                rate_bits_per_second: dir.rate.bits_per_second(),
                receive_rate_bits_per_second: back.rate.bits_per_second(),
                layer: link.layer,
                mtu: link.mtu,
                half_duplex: duplex == LinkDuplex::Half || link.is_shared(),
                queue_packets: match dir.queue {
                    crate::topology::QueueLimit::Packets(n) => Some(n),
                    crate::topology::QueueLimit::Bytes(_) => None,
                },
                queue_bytes: match dir.queue {
                    crate::topology::QueueLimit::Bytes(b) => Some(b),
                    crate::topology::QueueLimit::Packets(_) => None,
                },
                aqm: link.aqm.as_ref().map(|a| {
                    format!(
                        "{}, target {:?}, interval {:?}",
                        match a.kind {
                            crate::topology::AqmKind::Codel => "codel",
                            crate::topology::AqmKind::FqCodel => "fq_codel",
                        },
                        a.target,
                        a.interval
                    )
                }),
            })
        });
        let stations = plan.stations.iter().filter_map(|s| {
            let segment = topology.segments.get(s.segment)?;
            Some(InterfaceTruth {
                lab: lab.to_string(),
                namespace: namespace(s.node),
                node: node_name(s.node),
                interface: s.name.clone(),
                link: format!("segment {}", segment.name),
                rate_bits_per_second: segment.rate.bits_per_second(),
                receive_rate_bits_per_second: segment.rate.bits_per_second(),
                layer: LinkLayer::Ethernet { vlan_tags: 0 },
                mtu: segment.mtu,
                half_duplex: true,
                queue_packets: Some(segment.queue),
                queue_bytes: None,
                aqm: None,
            })
        });
        LabTruth {
            lab: lab.to_string(),
            interfaces: links.chain(stations).collect(),
        }
    }

    /// Writes `links.json` into the lab's state directory `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = dir.join(TEMP_NAME);
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, dir.join(FILE_NAME))
    }
}

/// A node of a lab and its namespace, as `routes.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteNode {
    /// The node's name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
}

/// Every route of one lab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabRoutes {
    /// The lab's name.
    pub lab: String,
    /// Its nodes and their namespaces.
    pub nodes: Vec<RouteNode>,
    /// The route from each node to each address of every other node (hosts' routes first).
    pub routes: Vec<RouteTruth>,
    /// Routes left out beyond the bound, if any.
    #[serde(default)]
    pub omitted: usize,
}

impl LabRoutes {
    /// The routes of lab `lab` built from `topology` and `plan`, node `i` in `namespaces[i]`.
    pub fn of(lab: &str, topology: &Topology, plan: &Plan, namespaces: &[String]) -> LabRoutes {
        let mut addresses: Vec<(usize, IpAddr)> = Vec::new();
        for i in &plan.interfaces {
            addresses.push((i.node, IpAddr::V4(i.ipv4.addr)));
            if let Some(v6) = i.ipv6 {
                addresses.push((i.node, IpAddr::V6(v6)));
            }
        }
        for s in &plan.stations {
            addresses.push((s.node, IpAddr::V4(s.ipv4.addr)));
        }
        let mut sources: Vec<usize> = (0..topology.nodes.len()).collect();
        // Hosts first: when the bound cuts, the routes measurements take are kept.
        sources.sort_by_key(|&n| matches!(topology.nodes[n].kind, NodeKind::Router(_)));
        let mut routes = Vec::new();
        let mut omitted = 0;
        for &from in &sources {
            for &(node, address) in &addresses {
                if node == from {
                    continue;
                }
                let name = &topology.nodes[from].name;
                let Ok(route) = crate::truth::route(topology, plan, name, address) else {
                    continue;
                };
                if routes.len() < MAX_ROUTES {
                    routes.push(route);
                } else {
                    omitted += 1;
                }
            }
        }
        LabRoutes {
            lab: lab.to_string(),
            nodes: topology
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| RouteNode {
                    name: n.name.clone(),
                    namespace: namespaces.get(i).cloned().unwrap_or_default(),
                })
                .collect(),
            routes,
            omitted,
        }
    }

    /// Writes `routes.json` into the lab's state directory `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string(self).map_err(std::io::Error::other)?;
        let tmp = dir.join(ROUTES_TEMP_NAME);
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, dir.join(ROUTES_NAME))
    }
}

/// The configured route from this process's node to `address`, when this process's network
/// namespace belongs to a running wirespeed lab that holds that address; `None` anywhere else.
pub fn route_to(address: IpAddr) -> Option<RouteTruth> {
    route_in(
        Path::new(STATE_ROOT),
        Path::new("/run/netns"),
        Path::new("/proc/self/ns/net"),
        address,
    )
}

/// [`route_to`] and the name of the lab that configured it.
pub fn lab_route_to(address: IpAddr) -> Option<(String, RouteTruth)> {
    let (lab, node) = my_lab(
        Path::new(STATE_ROOT),
        Path::new("/run/netns"),
        Path::new("/proc/self/ns/net"),
    )?;
    let text = address.to_string();
    let route = lab
        .routes
        .into_iter()
        .find(|r| r.from == node && r.address == text)?;
    Some((lab.lab, route))
}

/// [`route_to`] over other directories, as [`lookup_in`].
pub fn route_in(
    state_root: &Path,
    netns_dir: &Path,
    self_ns: &Path,
    address: IpAddr,
) -> Option<RouteTruth> {
    let (lab, node) = my_lab(state_root, netns_dir, self_ns)?;
    let text = address.to_string();
    lab.routes
        .into_iter()
        .find(|r| r.from == node && r.address == text)
}

/// Both ways of a transfer between this process's node and `peer`, as the lab configured
/// them: the data of an upload take the first, a download's the second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutePair {
    /// The lab's name.
    pub lab: String,
    /// From this node to `peer`.
    pub there: RouteTruth,
    /// From `peer`'s node back to `local`, when the lab holds `local`.
    pub back: Option<RouteTruth>,
}

/// The routes between this process's node (which sends from `local`) and `peer`, when this
/// process's namespace belongs to a running wirespeed lab that holds `peer`.
pub fn routes_between(local: IpAddr, peer: IpAddr) -> Option<RoutePair> {
    routes_between_in(
        Path::new(STATE_ROOT),
        Path::new("/run/netns"),
        Path::new("/proc/self/ns/net"),
        local,
        peer,
    )
}

/// [`routes_between`] over other directories, as [`lookup_in`].
pub fn routes_between_in(
    state_root: &Path,
    netns_dir: &Path,
    self_ns: &Path,
    local: IpAddr,
    peer: IpAddr,
) -> Option<RoutePair> {
    let (lab, node) = my_lab(state_root, netns_dir, self_ns)?;
    let (peer, local) = (peer.to_string(), local.to_string());
    let there = lab
        .routes
        .iter()
        .find(|r| r.from == node && r.address == peer)?
        .clone();
    let back = lab
        .routes
        .iter()
        .find(|r| r.from == there.to && r.address == local && r.to == node)
        .cloned();
    Some(RoutePair {
        lab: lab.lab,
        there,
        back,
    })
}

/// The routes of the lab this process's namespace belongs to, and this process's node in it.
fn my_lab(state_root: &Path, netns_dir: &Path, self_ns: &Path) -> Option<(LabRoutes, String)> {
    let me = std::fs::metadata(self_ns).ok()?;
    let me = (me.dev(), me.ino());
    for entry in std::fs::read_dir(state_root).ok()?.flatten().take(MAX_LABS) {
        let Some(lab) =
            read_bounded::<LabRoutes>(&entry.path().join(ROUTES_NAME), MAX_ROUTES_BYTES)
        else {
            continue;
        };
        let Some(node) = lab
            .nodes
            .iter()
            .find(|n| same_namespace(netns_dir, &n.namespace, me))
            .map(|n| n.name.clone())
        else {
            continue;
        };
        return Some((lab, node));
    }
    None
}

fn same_namespace(netns_dir: &Path, namespace: &str, me: (u64, u64)) -> bool {
    // A namespace name is one path component: never let a file steer the stat elsewhere.
    if namespace.is_empty() || namespace.contains('/') || namespace.starts_with('.') {
        return false;
    }
    std::fs::metadata(netns_dir.join(namespace)).is_ok_and(|m| (m.dev(), m.ino()) == me)
}

/// The configured truth of `interface` in this process's network namespace, when that
/// namespace belongs to a running wirespeed lab; `None` anywhere else.
pub fn lookup(interface: &str) -> Option<InterfaceTruth> {
    lookup_in(
        Path::new(STATE_ROOT),
        Path::new("/run/netns"),
        Path::new("/proc/self/ns/net"),
        interface,
    )
}

/// [`lookup`] over other directories: labs' state under `state_root`, named namespaces under
/// `netns_dir`, this process's namespace at `self_ns`.
pub fn lookup_in(
    state_root: &Path,
    netns_dir: &Path,
    self_ns: &Path,
    interface: &str,
) -> Option<InterfaceTruth> {
    let me = std::fs::metadata(self_ns).ok()?;
    let me = (me.dev(), me.ino());
    let same = |namespace: &str| same_namespace(netns_dir, namespace, me);
    for entry in std::fs::read_dir(state_root).ok()?.flatten().take(MAX_LABS) {
        let Some(truth) = read_bounded::<LabTruth>(&entry.path().join(FILE_NAME), MAX_FILE_BYTES)
        else {
            continue;
        };
        if let Some(found) = truth
            .interfaces
            .into_iter()
            .find(|f| f.interface == interface && same(&f.namespace))
        {
            return Some(found);
        }
    }
    None
}

fn read_bounded<T: serde::de::DeserializeOwned>(path: &Path, limit: u64) -> Option<T> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}
