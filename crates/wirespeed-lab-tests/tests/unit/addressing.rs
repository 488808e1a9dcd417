use std::net::Ipv4Addr;
use wirespeed_lab::addressing::*;
use wirespeed_lab::topology::Topology;

fn chain() -> Topology {
    Topology::parse(
        r#"
[[host]]
name = "h1"
[[host]]
name = "h2"
[[router]]
name = "r1"
[[router]]
name = "r2"
[[link]]
a = "h1"
b = "r1"
rate = "10M"
[[link]]
a = "r1"
b = "r2"
rate = "56k"
mtu = 576
[[link]]
a = "r2"
b = "h2"
rate = "10M"
ipv6 = false
[[link]]
a = "r2"
b = "h2"
rate = "10M"
"#,
        "chain.toml",
    )
    .unwrap()
}

#[test]
fn links_get_benchmarking_subnets() {
    let plan = plan(&chain());
    assert_eq!(plan.end(0, true).ipv4.to_string(), "198.18.0.1/24");
    assert_eq!(plan.end(2, false).ipv4.to_string(), "198.18.2.2/24");
    assert_eq!(plan.end(0, true).ipv6.unwrap().to_string(), "2001:2::1");
    assert_eq!(plan.end(1, true).ipv6, None, "576-byte MTU carries no IPv6");
    assert_eq!(plan.end(1, true).name, "eth1", "r1's second interface");
    assert_eq!(plan.end(2, true).ipv6, None, "ipv6 = false");
    assert!(plan.end(3, true).ipv6.is_some());
    assert_eq!(link_subnet(300).0, Ipv4Addr::new(198, 19, 44, 0));
}

#[test]
fn routes_follow_the_chain_and_never_cross_a_host() {
    let t = chain();
    let plan = plan(&t);
    let route = |node: &str, subnet: &str| {
        let node = t.node_index(node).unwrap();
        plan.routes
            .iter()
            .find(|r| r.node == node && r.dest.to_string() == subnet)
            .map(|r| r.via.to_string())
    };
    assert_eq!(route("h1", "198.18.2.0/24").as_deref(), Some("198.18.0.2"));
    assert_eq!(route("r1", "198.18.2.0/24").as_deref(), Some("198.18.1.2"));
    assert_eq!(route("h2", "198.18.0.0/24").as_deref(), Some("198.18.2.1"));
    assert_eq!(route("r2", "198.18.0.0/24").as_deref(), Some("198.18.1.1"));
    // Every node reaches every link it is not on: 4 nodes x 4 links - 8 attachments.
    assert_eq!(plan.routes.len(), 8);
}

#[test]
fn a_cycle_of_routers_takes_the_shortest_way_round() {
    let mut text = String::from("[[host]]\nname=\"h1\"\n[[host]]\nname=\"h2\"\n");
    for r in ["r1", "r2", "r3"] {
        text.push_str(&format!("[[router]]\nname=\"{r}\"\n"));
    }
    for (a, b) in [
        ("h1", "r1"),
        ("r1", "r2"),
        ("r2", "r3"),
        ("r3", "r1"),
        ("r3", "h2"),
    ] {
        text.push_str(&format!("[[link]]\na=\"{a}\"\nb=\"{b}\"\nrate=\"1M\"\n"));
    }
    let t = Topology::parse(&text, "cycle.toml").unwrap();
    let plan = plan(&t);
    let via = |node: &str, link: usize| {
        let node = t.node_index(node).unwrap();
        let dest = plan.end(link, true).ipv4.network();
        plan.routes
            .iter()
            .find(|r| r.node == node && r.dest.network() == dest)
            .map(|r| r.via.to_string())
    };
    // r1 reaches h2's link (4) through r3 directly (link 3: r3 is end a, .1), not via r2.
    assert_eq!(via("r1", 4).as_deref(), Some("198.18.3.1"));
    assert_eq!(via("h1", 4).as_deref(), Some("198.18.0.2"));
    // r2 is one hop from both ends of the r3-r1 link; the tie goes to its end a, r3.
    assert_eq!(via("r2", 3).as_deref(), Some("198.18.2.2"));
    // Every node has a route to every link it is not on: 5 nodes x 5 links - 10 ends.
    assert_eq!(plan.routes.len(), 15);
}

#[test]
fn hosts_do_not_forward() {
    let t = Topology::parse(
        "[[host]]\nname=\"a\"\n[[host]]\nname=\"b\"\n[[host]]\nname=\"c\"\n[[link]]\na=\"a\"\nb=\"b\"\nrate=\"1M\"\n[[link]]\na=\"b\"\nb=\"c\"\nrate=\"1M\"\n",
        "t",
    )
    .unwrap();
    let plan = plan(&t);
    // a reaches the b-c subnet only as far as b (b is on it); c likewise. b has no route.
    assert_eq!(plan.routes.len(), 2);
    assert!(plan.routes.iter().all(|r| r.node != 1));
}

#[test]
fn segment_stations_share_a_subnet_after_the_links() {
    let t = Topology::parse(
        "[[host]]\nname=\"a\"\n[[host]]\nname=\"b\"\n[[host]]\nname=\"c\"\n[[link]]\na=\"a\"\nb=\"b\"\nrate=\"1M\"\n[[segment]]\nname=\"hub\"\nstations=[\"c\",\"a\",\"b\"]\nrate=\"10M\"\n",
        "t",
    )
    .unwrap();
    let plan = plan(&t);
    let got: Vec<(usize, String, String)> = plan
        .stations
        .iter()
        .map(|s| (s.node, s.name.clone(), s.ipv4.to_string()))
        .collect();
    assert_eq!(
        got,
        [
            (2, "eth0".to_string(), "198.18.1.1/24".to_string()),
            (0, "eth1".to_string(), "198.18.1.2/24".to_string()),
            (1, "eth1".to_string(), "198.18.1.3/24".to_string()),
        ]
    );
    assert_eq!(plan.address_of(2), Some(Ipv4Addr::new(198, 18, 1, 1)));
}

#[test]
fn subnets_parse_and_contain() {
    let net: Ipv4Net = "198.18.7.9/24".parse().unwrap();
    assert_eq!(net.network(), Ipv4Addr::new(198, 18, 7, 0));
    assert!(net.contains(Ipv4Addr::new(198, 18, 7, 200)));
    assert!(!net.contains(Ipv4Addr::new(198, 18, 8, 1)));
    assert!("198.18.7.9".parse::<Ipv4Net>().is_err());
    assert!("198.18.7.9/31".parse::<Ipv4Net>().is_err());
}
