//! The whole route a measurement crosses, as the lab configured it, and the element of it that
//! bounds a transfer.
//!
//! A measuring host sees one link: the one its packets leave by. The rate a transfer can reach
//! is set by the slowest element of the whole route (seed 002's back-of-the-envelope habit,
//! applied hop by hop): each link direction at its rate and framing, each router's serial
//! forwarding server (`fixed + per_byte x packet`, charged one packet at a time on its egress:
//! `emulator::link`), the end hosts' processing models, and the ACKs' way back (a slow return
//! link or router can hold the data rate down). [`route`] follows the lab's own routing tables
//! (`addressing::plan`) hop by hop from a node to an address, so the route is the one the
//! kernels use, ties and all; [`RouteTruth::bottleneck`] computes every element's ceiling for a
//! flow of a given shape and names the lowest.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use wirespeed_model::{
    BitRate, Duplex, EnvelopeParams, IpVersion, LinkLayer, RateFormat, Transport,
};

use crate::addressing::Plan;
use crate::topology::{Cost, DirectionConfig, LinkDuplex, NodeKind, QueueLimit, Topology};

/// A fixed plus per-byte processing cost, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CostSeconds {
    /// Time every packet costs.
    pub fixed_seconds: f64,
    /// Time each byte of the IP packet costs.
    pub per_byte_seconds: f64,
}

impl CostSeconds {
    fn of(c: Cost) -> CostSeconds {
        CostSeconds {
            fixed_seconds: c.fixed.as_secs_f64(),
            per_byte_seconds: c.per_byte.as_secs_f64(),
        }
    }

    /// True when the cost is zero (no processing model).
    pub fn is_zero(&self) -> bool {
        self.fixed_seconds == 0.0 && self.per_byte_seconds == 0.0
    }

    /// Seconds a packet of `bytes` costs.
    pub fn seconds(&self, bytes: u64) -> f64 {
        self.fixed_seconds + self.per_byte_seconds * bytes as f64
    }

    fn words(&self) -> String {
        format!(
            "{:?} + {:?}/byte",
            Duration::from_secs_f64(self.fixed_seconds.max(0.0)),
            Duration::from_secs_f64(self.per_byte_seconds.max(0.0))
        )
    }
}

/// How a hop's medium is shared between its directions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HopDuplex {
    /// Both directions at once.
    Full,
    /// Both ends run CSMA/CD on one medium.
    Half,
    /// One end half, the other full: seed 003 §4.4's duplex mismatch.
    Mismatch {
        /// The node whose end runs half duplex.
        half_end: String,
    },
    /// A shared segment (a hub) of several stations.
    Shared,
}

/// One link direction of a route, as configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteHop {
    /// The node the packets leave.
    pub from: String,
    /// The node they reach.
    pub to: String,
    /// The link, for people: `r1-r2` (its ends as the file names them) or `segment lan`.
    pub link: String,
    /// Serialization rate of this direction, bit/s.
    pub rate_bits_per_second: u64,
    /// Serialization rate of the way back over the same link (the ACKs'), bit/s.
    pub return_rate_bits_per_second: u64,
    /// Propagation delay of this direction, s.
    pub delay_seconds: f64,
    /// What the wire charges per frame.
    pub layer: LinkLayer,
    /// MTU of the link's interfaces.
    pub mtu: u32,
    /// Drop-tail limit of this direction's queue, frames.
    pub queue_packets: Option<u32>,
    /// The same in bytes, when the file gives it so.
    pub queue_bytes: Option<u64>,
    /// Active queue management of the queue (`codel`, `fq_codel`); `None`: drop-tail.
    pub aqm: Option<String>,
    /// Configured random loss of this direction.
    pub loss: f64,
    /// Store-and-forward hops hidden inside the link (each adds a serialization time, not a
    /// rate limit).
    pub hidden_hops: u8,
    /// Full, half, mismatched or shared.
    pub duplex: HopDuplex,
    /// The forwarding cost of `from` when it is a router (zero for the sending host): a
    /// serial server on this egress.
    pub forward: CostSeconds,
    /// The forwarding cost of `to` on the way back, when it is a router: the ACKs pay it.
    pub return_forward: CostSeconds,
}

/// The route from one node to one address of another, as configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteTruth {
    /// The sending node.
    pub from: String,
    /// The node that owns the address.
    pub to: String,
    /// The address the route leads to.
    pub address: String,
    /// The link directions crossed, in order.
    pub hops: Vec<RouteHop>,
    /// The sending host's processing model: what it pays per frame it sends.
    pub source_transmit: CostSeconds,
    /// And per frame it receives (the ACKs), on the same CPU.
    pub source_receive: CostSeconds,
    /// The receiving host's cost per frame it receives.
    pub destination_receive: CostSeconds,
    /// And per frame it sends (the ACKs).
    pub destination_transmit: CostSeconds,
}

/// The shape of the flow a ceiling is computed for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowShape {
    /// IPv4 or IPv6.
    pub ip: IpVersion,
    /// TCP (with or without timestamps) or UDP.
    pub transport: Transport,
    /// UDP: payload bytes per datagram; `None`: the largest that fits one packet.
    pub udp_payload: Option<u64>,
}

impl FlowShape {
    /// Linux's TCP: timestamps on, ACK every second segment.
    pub fn tcp(ip: IpVersion) -> FlowShape {
        FlowShape {
            ip,
            transport: Transport::Tcp { timestamps: true },
            udp_payload: None,
        }
    }
}

/// What can bound a transfer along a route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Element {
    /// A link direction's wire (rate, framing, duplex).
    Link {
        /// Index into the route's hops.
        hop: usize,
    },
    /// The way back over a link, carrying the ACKs.
    ReturnLink {
        /// Index into the route's hops.
        hop: usize,
    },
    /// A router's forwarding server on the hop's egress.
    Router {
        /// Index into the route's hops (the router is its `from`).
        hop: usize,
    },
    /// A router's forwarding of the ACKs on the way back (the router is the hop's `to`).
    ReturnRouter {
        /// Index into the route's hops.
        hop: usize,
    },
    /// The sending host's processing model.
    SourceHost,
    /// The receiving host's processing model.
    DestinationHost,
}

/// One element's ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElementCeiling {
    /// Which element.
    pub element: Element,
    /// Its goodput ceiling for the flow, bit/s of payload.
    pub ceiling_bits_per_second: f64,
    /// The element in words: `link r1-r2 (1.544 Mbit/s serial line)`.
    pub describe: String,
}

/// The lowest ceiling of a route and everything that was compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// The element with the lowest ceiling (the first, on a tie).
    pub element: ElementCeiling,
    /// Every element's ceiling, in route order.
    pub all: Vec<ElementCeiling>,
    /// The path MTU the ceilings assume (the smallest MTU along the route).
    pub path_mtu: u64,
    /// A duplex mismatch on the route: its ceiling is a bound the collisions keep it from.
    pub mismatch: Option<String>,
}

/// Why a route cannot be traced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The node named is not in the topology.
    #[error("no node '{0}' in the topology: name one of its [[host]] or [[router]] tables")]
    UnknownNode(String),
    /// No interface of the lab has the address.
    #[error("no interface of the lab has the address {0}: give one of its nodes' addresses")]
    UnknownAddress(IpAddr),
    /// The routing tables lead nowhere (or in a loop).
    #[error("the lab's routing tables lead from '{from}' to no node with {address}")]
    NoRoute {
        /// Start.
        from: String,
        /// Destination address.
        address: IpAddr,
    },
    /// The ceiling of a hop cannot be computed for the flow (an MTU outside what the
    /// protocol allows).
    #[error("hop {hop} of the route: {reason}")]
    Ceiling {
        /// 1-based hop.
        hop: usize,
        /// The envelope's reason.
        reason: String,
    },
}

/// Where an address lives: a point-to-point link end or a segment station.
enum Port {
    Link { link: usize, is_a: bool },
    Station { segment: usize },
}

fn owner(plan: &Plan, address: IpAddr) -> Option<(usize, Port)> {
    plan.interfaces
        .iter()
        .find(|i| match address {
            IpAddr::V4(a) => i.ipv4.addr == a,
            IpAddr::V6(a) => i.ipv6 == Some(a),
        })
        .map(|i| {
            (
                i.node,
                Port::Link {
                    link: i.link,
                    is_a: i.is_a,
                },
            )
        })
        .or_else(|| {
            plan.stations
                .iter()
                .find(|s| IpAddr::V4(s.ipv4.addr) == address)
                .map(|s| (s.node, Port::Station { segment: s.segment }))
        })
}

/// The IPv4 address the routing of `address` follows: IPv6 routes are installed beside the
/// IPv4 ones for the same links (`addressing::plan`), so an IPv6 address is routed as the
/// IPv4 address of the same interface.
fn ipv4_of(plan: &Plan, address: IpAddr) -> Option<Ipv4Addr> {
    match address {
        IpAddr::V4(a) => Some(a),
        IpAddr::V6(a) => plan
            .interfaces
            .iter()
            .find(|i| i.ipv6 == Some(a))
            .map(|i| i.ipv4.addr),
    }
}

fn queue(d: &DirectionConfig) -> (Option<u32>, Option<u64>) {
    match d.queue {
        QueueLimit::Packets(n) => (Some(n), None),
        QueueLimit::Bytes(b) => (None, Some(b)),
    }
}

fn forward_cost(t: &Topology, node: usize) -> CostSeconds {
    match &t.nodes[node].kind {
        NodeKind::Router(r) => CostSeconds::of(r.forward),
        NodeKind::Host(_) => CostSeconds::default(),
    }
}

fn link_hop(t: &Topology, link: usize, from_a: bool) -> RouteHop {
    let l = &t.links[link];
    let (from, to, out, back) = if from_a {
        (l.a, l.b, &l.ab, &l.ba)
    } else {
        (l.b, l.a, &l.ba, &l.ab)
    };
    let (queue_packets, queue_bytes) = queue(out);
    let name = |n: usize| t.nodes[n].name.clone();
    let duplex = match (l.duplex_a, l.duplex_b) {
        (LinkDuplex::Full, LinkDuplex::Full) => HopDuplex::Full,
        (LinkDuplex::Half, LinkDuplex::Half) => HopDuplex::Half,
        (LinkDuplex::Half, LinkDuplex::Full) => HopDuplex::Mismatch {
            half_end: name(l.a),
        },
        (LinkDuplex::Full, LinkDuplex::Half) => HopDuplex::Mismatch {
            half_end: name(l.b),
        },
    };
    RouteHop {
        from: name(from),
        to: name(to),
        link: format!("{}-{}", name(l.a), name(l.b)),
        rate_bits_per_second: out.rate.bits_per_second(),
        return_rate_bits_per_second: back.rate.bits_per_second(),
        delay_seconds: out.delay.as_secs_f64(),
        layer: l.layer,
        mtu: l.mtu,
        queue_packets,
        queue_bytes,
        aqm: l.aqm.map(|a| a.kind.name().to_string()),
        loss: out.loss,
        hidden_hops: out.hidden_hops,
        duplex,
        forward: forward_cost(t, from),
        return_forward: forward_cost(t, to),
    }
}

fn segment_hop(t: &Topology, segment: usize, from: usize, to: usize) -> RouteHop {
    let s = &t.segments[segment];
    let rate = s.rate.bits_per_second();
    RouteHop {
        from: t.nodes[from].name.clone(),
        to: t.nodes[to].name.clone(),
        link: format!("segment {}", s.name),
        rate_bits_per_second: rate,
        return_rate_bits_per_second: rate,
        delay_seconds: s.length_m / (s.velocity_factor * crate::topology::SPEED_OF_LIGHT_M_PER_S),
        layer: LinkLayer::Ethernet { vlan_tags: 0 },
        mtu: s.mtu,
        queue_packets: Some(s.queue),
        queue_bytes: None,
        aqm: None,
        loss: 0.0,
        hidden_hops: 0,
        duplex: HopDuplex::Shared,
        forward: forward_cost(t, from),
        return_forward: forward_cost(t, to),
    }
}

/// The route from node `from` to `address`, following the routing tables `plan` installs
/// (the plan of `t`: `addressing::plan(t)`).
pub fn route(
    t: &Topology,
    plan: &Plan,
    from: &str,
    address: IpAddr,
) -> Result<RouteTruth, RouteError> {
    let start = t
        .node_index(from)
        .ok_or_else(|| RouteError::UnknownNode(from.to_string()))?;
    let (dest, dest_port) = owner(plan, address).ok_or(RouteError::UnknownAddress(address))?;
    let no_route = || RouteError::NoRoute {
        from: from.to_string(),
        address,
    };
    let v4 = ipv4_of(plan, address).ok_or_else(no_route)?;
    let mut hops = Vec::new();
    let mut at = start;
    // A route visits each node at most once; more steps than nodes is a loop.
    for _ in 0..=t.nodes.len() {
        if at == dest {
            break;
        }
        // Directly connected: the destination's own link or segment, if `at` is on it.
        let direct = match dest_port {
            Port::Link { link, is_a } => {
                let l = &t.links[link];
                let near = if is_a { l.b } else { l.a };
                (near == at).then(|| link_hop(t, link, !is_a))
            }
            Port::Station { segment } => t.segments[segment]
                .stations
                .contains(&at)
                .then(|| segment_hop(t, segment, at, dest)),
        };
        if let Some(hop) = direct {
            hops.push(hop);
            at = dest;
            break;
        }
        let entry = plan
            .routes
            .iter()
            .find(|r| r.node == at && r.dest.contains(v4))
            .ok_or_else(no_route)?;
        // An IPv6 packet goes only where the plan installed an IPv6 route beside the IPv4 one.
        if address.is_ipv6() && entry.via6.is_none() {
            return Err(no_route());
        }
        let next = plan
            .interfaces
            .iter()
            .find(|i| i.ipv4.addr == entry.via)
            .ok_or_else(no_route)?;
        hops.push(link_hop(t, next.link, !next.is_a));
        at = next.node;
    }
    if at != dest {
        return Err(no_route());
    }
    let host_costs = |n: usize| match &t.nodes[n].kind {
        NodeKind::Host(h) => (CostSeconds::of(h.transmit), CostSeconds::of(h.receive)),
        NodeKind::Router(_) => (CostSeconds::default(), CostSeconds::default()),
    };
    let (source_transmit, source_receive) = host_costs(start);
    let (destination_transmit, destination_receive) = host_costs(dest);
    Ok(RouteTruth {
        from: from.to_string(),
        to: t.nodes[dest].name.clone(),
        address: address.to_string(),
        hops,
        source_transmit,
        source_receive,
        destination_receive,
        destination_transmit,
    })
}

/// Data segments per ACK of Linux's TCP (RFC 9293 delayed ACK).
const ACK_EVERY: u64 = 2;

fn rate_words(bps: u64) -> String {
    RateFormat::Adaptive.format(bps as f64)
}

impl RouteTruth {
    /// The smallest MTU along the route: the path MTU a transfer settles on.
    pub fn path_mtu(&self) -> Option<u64> {
        self.hops.iter().map(|h| u64::from(h.mtu)).min()
    }

    /// The round trip of one full-size TCP segment of `ip` over the empty route and the ACK
    /// that answers it, seconds: each link direction's propagation delay and store-and-forward
    /// serialization (a hidden hop serializes again), the routers' forwarding and the hosts'
    /// processing, both ways. This, not the lowest round trip a kernel saw (its SYN's, a
    /// small packet), is what a window of full segments waits for before it may send again
    /// (issue 31: a 1.544 Mbit/s path whose SYN came back in 26 ms and a full segment's ACK
    /// in 34.85 ms). Queueing is not in it: the path is empty.
    pub fn segment_round_trip_seconds(&self, ip: IpVersion) -> f64 {
        let data = self.path_mtu().unwrap_or(1500);
        let ack = ip.header_bytes() + Transport::Tcp { timestamps: true }.header_bytes();
        let wire = |layer: LinkLayer, packet: u64, bps: u64| {
            if bps == 0 {
                0.0
            } else {
                layer.frame(packet).wire as f64 * 8.0 / bps as f64
            }
        };
        let links: f64 = self
            .hops
            .iter()
            .map(|h| {
                let serializations = 1.0 + f64::from(h.hidden_hops);
                2.0 * h.delay_seconds
                    + serializations
                        * (wire(h.layer, data, h.rate_bits_per_second)
                            + wire(h.layer, ack, h.return_rate_bits_per_second))
                    + h.forward.seconds(data)
                    + h.return_forward.seconds(ack)
            })
            .sum();
        links
            + self.source_transmit.seconds(data)
            + self.destination_receive.seconds(data)
            + self.destination_transmit.seconds(ack)
            + self.source_receive.seconds(ack)
    }

    /// Every element's goodput ceiling for a flow of `shape`, and the lowest.
    ///
    /// A link direction is the envelope of its rate, framing and duplex at the path MTU (ACKs
    /// share a half-duplex or shared medium; a mismatched link is computed as the half end
    /// would see it when the data leaves by it). The way back carries one ACK per two
    /// segments. A router serves one packet at a time on each egress, so it passes at most
    /// `1 / (fixed + per_byte x packet)` packets a second; a host with a processing model
    /// serves its sends and receives on one CPU per port.
    pub fn bottleneck(&self, shape: FlowShape) -> Result<Bottleneck, RouteError> {
        let mtu = self.path_mtu().unwrap_or(1500);
        let tcp = matches!(shape.transport, Transport::Tcp { .. });
        let mut all = Vec::new();
        let mut mismatch = None;
        // Payload, data packets (IP bytes) and ACK packet (IP bytes) of one cycle: one data
        // unit for UDP, ACK_EVERY segments for TCP.
        let mut cycle: Option<(u64, Vec<u64>, Option<u64>)> = None;
        for (i, hop) in self.hops.iter().enumerate() {
            let half = match &hop.duplex {
                HopDuplex::Full => false,
                HopDuplex::Half | HopDuplex::Shared => true,
                HopDuplex::Mismatch { half_end } => {
                    mismatch.get_or_insert_with(|| {
                        format!(
                            "duplex mismatch on link {} ({half_end}'s end half duplex)",
                            hop.link
                        )
                    });
                    half_end == &hop.from
                }
            };
            let params = EnvelopeParams {
                rate: BitRate::from_bits_per_second(hop.rate_bits_per_second),
                link: hop.layer,
                mtu,
                ip: shape.ip,
                transport: shape.transport,
                duplex: if half { Duplex::Half } else { Duplex::Full },
                ack_every: if tcp { ACK_EVERY as u32 } else { 0 },
                udp_payload: shape.udp_payload,
                rtt: None,
            };
            let e = params.compute().map_err(|e| RouteError::Ceiling {
                hop: i + 1,
                reason: e.to_string(),
            })?;
            let c = cycle.get_or_insert_with(|| {
                let packets: Vec<u64> = e
                    .data_frames
                    .iter()
                    .flat_map(|f| std::iter::repeat_n(f.bytes.packet, f.count as usize))
                    .collect();
                let per_cycle = if tcp { ACK_EVERY } else { 1 };
                let packets = std::iter::repeat_n(packets, per_cycle as usize)
                    .flatten()
                    .collect();
                (
                    e.payload_bytes * per_cycle,
                    packets,
                    e.acks.map(|a| a.frame.packet),
                )
            });
            let (payload, packets, ack) = (c.0 as f64 * 8.0, c.1.clone(), c.2);
            let layer = match hop.layer {
                LinkLayer::Ethernet { .. } => "Ethernet",
                LinkLayer::Serial => "serial line",
            };
            all.push(ElementCeiling {
                element: Element::Link { hop: i },
                ceiling_bits_per_second: e.goodput_bits_per_second,
                describe: format!(
                    "link {} ({} {layer}{}, {} -> {})",
                    hop.link,
                    rate_words(hop.rate_bits_per_second),
                    if half { ", half duplex" } else { "" },
                    hop.from,
                    hop.to
                ),
            });
            if !hop.forward.is_zero() {
                let busy: f64 = packets.iter().map(|&p| hop.forward.seconds(p)).sum();
                all.push(ElementCeiling {
                    element: Element::Router { hop: i },
                    ceiling_bits_per_second: payload / busy,
                    describe: format!(
                        "router {}'s forwarding ({} per packet)",
                        hop.from,
                        hop.forward.words()
                    ),
                });
            }
            // The ACKs of a full-duplex link have a direction of their own; on a shared
            // medium the envelope above already charged them.
            if let Some(ack) = ack {
                if !half {
                    let wire = hop.layer.frame(ack).wire as f64 * 8.0;
                    all.push(ElementCeiling {
                        element: Element::ReturnLink { hop: i },
                        ceiling_bits_per_second: hop.return_rate_bits_per_second as f64 * payload
                            / wire,
                        describe: format!(
                            "the ACKs' way back over link {} ({} {} -> {})",
                            hop.link,
                            rate_words(hop.return_rate_bits_per_second),
                            hop.to,
                            hop.from
                        ),
                    });
                }
                if !hop.return_forward.is_zero() {
                    all.push(ElementCeiling {
                        element: Element::ReturnRouter { hop: i },
                        ceiling_bits_per_second: payload / hop.return_forward.seconds(ack),
                        describe: format!(
                            "router {}'s forwarding of the ACKs ({} per packet)",
                            hop.to,
                            hop.return_forward.words()
                        ),
                    });
                }
            }
        }
        let Some((payload, packets, ack)) = cycle else {
            return Err(RouteError::Ceiling {
                hop: 0,
                reason: "the route has no hop".into(),
            });
        };
        let payload = payload as f64 * 8.0;
        for (element, send, receive, who) in [
            (
                Element::SourceHost,
                self.source_transmit,
                self.source_receive,
                &self.from,
            ),
            (
                Element::DestinationHost,
                self.destination_receive,
                self.destination_transmit,
                &self.to,
            ),
        ] {
            if send.is_zero() && receive.is_zero() {
                continue;
            }
            // The data packets on one side of the CPU, the ACKs on the other.
            let busy: f64 = packets.iter().map(|&p| send.seconds(p)).sum::<f64>()
                + ack.map_or(0.0, |a| receive.seconds(a));
            all.push(ElementCeiling {
                element,
                ceiling_bits_per_second: payload / busy,
                describe: format!("host {who}'s processing model"),
            });
        }
        let element = all
            .iter()
            .filter(|e| e.ceiling_bits_per_second.is_finite())
            .min_by(|a, b| {
                a.ceiling_bits_per_second
                    .total_cmp(&b.ceiling_bits_per_second)
            })
            .cloned()
            .ok_or(RouteError::Ceiling {
                hop: 0,
                reason: "no element has a finite ceiling".into(),
            })?;
        Ok(Bottleneck {
            element,
            all,
            path_mtu: mtu,
            mismatch,
        })
    }
}
