use proptest::prelude::*;
use std::net::IpAddr;
use wirespeed_lab::addressing;
use wirespeed_lab::addressing::Plan;
use wirespeed_lab::topology::Topology;
use wirespeed_lab::truth::random::{Limits, fleet_lab, path_lab};
use wirespeed_lab::truth::route::*;
use wirespeed_model::{IpVersion, LinkLayer};

fn lab(file: &str) -> Topology {
    let path = format!("{}/../../labs/{file}", env!("CARGO_MANIFEST_DIR"));
    Topology::load(std::path::Path::new(&path)).unwrap()
}

fn address_of(t: &Topology, plan: &Plan, node: &str, v6: bool) -> IpAddr {
    let n = t.node_index(node).unwrap();
    let i = plan.interfaces.iter().find(|i| i.node == n).unwrap();
    if v6 {
        IpAddr::V6(i.ipv6.unwrap())
    } else {
        IpAddr::V4(i.ipv4.addr)
    }
}

/// Issue 31's path: h1 leaves by 10 Mbit/s, but the T1 between r1 and r2 is the bound.
#[test]
fn the_t1_in_the_middle_is_the_bottleneck_not_the_first_link() {
    let t = lab("t1-path.toml");
    let plan = addressing::plan(&t);
    for v6 in [false, true] {
        let r = route(&t, &plan, "h1", address_of(&t, &plan, "h2", v6)).unwrap();
        let links: Vec<&str> = r.hops.iter().map(|h| h.link.as_str()).collect();
        assert_eq!(links, ["h1-r1", "r1-r2", "r2-h2"]);
        assert_eq!(r.hops[1].rate_bits_per_second, 1_544_000);
        assert_eq!(r.hops[1].queue_packets, Some(50));
        let ip = if v6 {
            IpVersion::V6
        } else {
            IpVersion::V4 { options_bytes: 0 }
        };
        let b = r.bottleneck(FlowShape::tcp(ip)).unwrap();
        assert_eq!(b.element.element, Element::Link { hop: 1 }, "{b:?}");
        assert!(
            b.element.describe.contains("r1-r2"),
            "{}",
            b.element.describe
        );
        // A serial line carries the packet alone: 1448 (IPv4) or 1428 (IPv6) payload bytes
        // of every 1500, with timestamps.
        let payload = if v6 { 1428.0 } else { 1448.0 };
        let want = 1.544e6 * payload / 1500.0;
        assert!(
            (b.element.ceiling_bits_per_second - want).abs() < 1.0,
            "{} vs {want}",
            b.element.ceiling_bits_per_second
        );
    }
    // And back: the same links the other way.
    let back = route(&t, &plan, "h2", address_of(&t, &plan, "h1", false)).unwrap();
    assert_eq!(back.hops[0].link, "r2-h2");
    assert_eq!(back.hops[0].from, "h2");
}

/// Issue 31's sweep: a full segment's round trip on the T1 path is its SYN's plus the
/// serialization of 1500 bytes on every link, worked by hand here.
#[test]
fn a_full_segment_round_trip_adds_every_links_serialization() {
    let t = lab("t1-path.toml");
    let plan = addressing::plan(&t);
    let r = route(&t, &plan, "h1", address_of(&t, &plan, "h2", false)).unwrap();
    let rtt = r.segment_round_trip_seconds(IpVersion::V4 { options_bytes: 0 });
    // Data: 1500-byte packets; Ethernet adds 38 bytes on the wire, the serial line
    // (as the lab frames it) what `LinkLayer::Serial` says; ACKs: 52-byte packets.
    let eth = |p: f64, bps: f64| (p.max(46.0) + 38.0) * 8.0 / bps;
    let serial = |p: u64| LinkLayer::Serial.frame(p).wire as f64 * 8.0 / 1.544e6;
    let delays: f64 = r.hops.iter().map(|h| 2.0 * h.delay_seconds).sum();
    let want = delays
        + eth(1500.0, 10e6)
        + eth(52.0, 10e6)
        + serial(1500)
        + serial(52)
        + eth(1500.0, 100e6)
        + eth(52.0, 100e6);
    assert!((rtt - want).abs() < 1e-9, "{rtt} vs {want}");
    // The T1 alone holds a full segment 7.8 ms: far above a small packet's round trip.
    assert!(rtt > delays + 7.7e-3 && rtt < delays + 9.5e-3, "{rtt}");
}

#[test]
fn a_slow_router_is_named_by_its_forwarding_cost() {
    // Seed 001's path: the DS0 (56 kbit/s) bounds the transfer, not ciscomci's .525 ms.
    let t = lab("seed-001-path.toml");
    let plan = addressing::plan(&t);
    let r = route(&t, &plan, "roc", address_of(&t, &plan, "cbnewsa", false)).unwrap();
    let b = r
        .bottleneck(FlowShape::tcp(IpVersion::V4 { options_bytes: 0 }))
        .unwrap();
    assert!(b.element.describe.contains("56 kbit/s"), "{b:?}");
    assert!(
        b.all
            .iter()
            .any(|e| matches!(e.element, Element::Router { .. }))
    );
    // A router costing 10 ms a packet passes 100 packets a second whatever its links.
    let slow = Topology::parse(
        r#"
[[host]]
name = "a"
[[host]]
name = "b"
[[router]]
name = "r"
forward = { fixed = "10ms" }
[[link]]
a = "a"
b = "r"
rate = "100M"
[[link]]
a = "r"
b = "b"
rate = "100M"
"#,
        "slow.toml",
    )
    .unwrap();
    let plan = addressing::plan(&slow);
    let r = route(&slow, &plan, "a", address_of(&slow, &plan, "b", false)).unwrap();
    let b = r
        .bottleneck(FlowShape::tcp(IpVersion::V4 { options_bytes: 0 }))
        .unwrap();
    assert_eq!(b.element.element, Element::Router { hop: 1 });
    assert!((b.element.ceiling_bits_per_second - 100.0 * 1448.0 * 8.0).abs() < 1e-6);
}

#[test]
fn unknown_addresses_and_nodes_are_refused() {
    let t = lab("t1-path.toml");
    let plan = addressing::plan(&t);
    let nowhere: IpAddr = "198.18.200.9".parse().unwrap();
    assert_eq!(
        route(&t, &plan, "h1", nowhere).unwrap_err(),
        RouteError::UnknownAddress(nowhere)
    );
    assert!(matches!(
        route(&t, &plan, "h9", address_of(&t, &plan, "h2", false)),
        Err(RouteError::UnknownNode(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On any drawn path the route follows the links end to end, and the bottleneck is
    /// the lowest of the ceilings compared, no higher than the slowest link's raw rate,
    /// and on a chain without costs or duplex tricks it is the slowest link.
    #[test]
    fn the_bottleneck_is_the_lowest_ceiling_of_the_route(seed in any::<u64>(), v6 in any::<bool>()) {
        let draw = path_lab(seed, &Limits::default());
        // A draw may exceed the lab's memory budget for frames in flight, which the
        // topology rightly refuses: such a lab is never built, so it has no route.
        let parsed = Topology::parse(&draw.toml, "drawn.toml");
        prop_assume!(parsed.is_ok());
        let t = parsed.unwrap();
        let plan = addressing::plan(&t);
        let to = address_of(&t, &plan, "h2", false);
        let r = route(&t, &plan, "h1", to).unwrap();
        prop_assert_eq!(r.hops.len() as u64, draw.routers + 1);
        prop_assert_eq!(r.hops[0].from.as_str(), "h1");
        prop_assert_eq!(r.hops.last().unwrap().to.as_str(), "h2");
        for w in r.hops.windows(2) {
            prop_assert_eq!(&w[0].to, &w[1].from);
        }
        let ip = if v6 { IpVersion::V6 } else { IpVersion::V4 { options_bytes: 0 } };
        let b = r.bottleneck(FlowShape::tcp(ip)).unwrap();
        let least = b.all.iter().map(|e| e.ceiling_bits_per_second).fold(f64::INFINITY, f64::min);
        prop_assert_eq!(b.element.ceiling_bits_per_second, least);
        let slowest = r.hops.iter().map(|h| h.rate_bits_per_second).min().unwrap() as f64;
        prop_assert!(least > 0.0 && least <= slowest);
        let plain = r.hops.iter().all(|h| h.duplex == HopDuplex::Full
            && h.forward.is_zero() && h.return_forward.is_zero()
            && h.return_rate_bits_per_second >= h.rate_bits_per_second
            && h.layer == r.hops[0].layer);
        if plain {
            if let Element::Link { hop } = b.element.element {
                prop_assert_eq!(r.hops[hop].rate_bits_per_second as f64, slowest);
            } else {
                prop_assert!(false, "{:?}", b.element);
            }
        }
        // The route back crosses the same links the other way.
        let back = route(&t, &plan, "h2", address_of(&t, &plan, "h1", false)).unwrap();
        let there: Vec<&str> = r.hops.iter().rev().map(|h| h.link.as_str()).collect();
        let here: Vec<&str> = back.hops.iter().map(|h| h.link.as_str()).collect();
        prop_assert_eq!(there, here);
    }

    /// Every drawn fleet is a valid lab with its faults on distinct hosts, and the route
    /// between two hosts crosses the router.
    #[test]
    fn drawn_fleets_are_labs(seed in any::<u64>(), k in 0usize..=3) {
        let draw = fleet_lab(seed, k, 6);
        let t = Topology::parse(&draw.toml, "fleet.toml").unwrap();
        prop_assert_eq!(draw.faults.len(), k);
        let mut faulty: Vec<&str> = draw.faults.iter().map(|f| f.host()).collect();
        faulty.sort_unstable();
        faulty.dedup();
        prop_assert_eq!(faulty.len(), k);
        prop_assert!(draw.hosts.len() >= k + 2);
        let plan = addressing::plan(&t);
        let r = route(&t, &plan, "h1", address_of(&t, &plan, "h2", false)).unwrap();
        prop_assert_eq!(r.hops.len(), 2);
        prop_assert_eq!(r.hops[0].to.as_str(), "sw");
    }
}
