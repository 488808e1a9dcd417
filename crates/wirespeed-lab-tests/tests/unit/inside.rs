use std::path::Path;
use wirespeed_lab::addressing;
use wirespeed_lab::inside::*;
use wirespeed_lab::topology::Topology;
use wirespeed_model::LinkLayer;

const TWO_HOST: &str = r#"
    name = "two-host"
    [[host]]
    name = "h1"
    [[host]]
    name = "h2"
    [[link]]
    a = "h1"
    b = "h2"
    rate = "10M"
"#;

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ws-inside-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn truth() -> LabTruth {
    let topology = Topology::parse(TWO_HOST, "two-host.toml").unwrap();
    let plan = addressing::plan(&topology);
    LabTruth::of(
        "two-host-0001",
        &topology,
        &plan,
        &["ws-two-host-0001-h1".into(), "ws-two-host-0001-h2".into()],
    )
}

#[test]
fn each_end_has_the_configured_rate_of_its_egress() {
    let t = truth();
    assert_eq!(t.interfaces.len(), 2);
    let h1 = &t.interfaces[0];
    assert_eq!(h1.node, "h1");
    assert_eq!(h1.namespace, "ws-two-host-0001-h1");
    assert_eq!(h1.link, "h1-h2");
    assert_eq!(h1.rate_bits_per_second, 10_000_000);
    assert_eq!(h1.layer, LinkLayer::Ethernet { vlan_tags: 0 });
    assert!(!h1.half_duplex);
    assert_eq!(t.interfaces[1].link, "h2-h1");
}

#[test]
fn a_process_finds_its_namespace_by_inode() {
    let root = scratch("root");
    let netns = scratch("netns");
    let lab = root.join("two-host-0001");
    std::fs::create_dir_all(&lab).unwrap();
    truth().write(&lab).unwrap();
    // Stand-ins for nsfs files: a file's identity is its device and inode.
    std::fs::write(netns.join("ws-two-host-0001-h1"), "").unwrap();
    std::fs::write(netns.join("ws-two-host-0001-h2"), "").unwrap();
    let me = netns.join("ws-two-host-0001-h2");
    let found = lookup_in(&root, &netns, &me, "eth0").expect("h2's eth0");
    assert_eq!(found.node, "h2");
    assert_eq!(found.link, "h2-h1");
    assert!(lookup_in(&root, &netns, &me, "eth9").is_none());
    // A process in no lab namespace (another file) finds nothing.
    let elsewhere = netns.join("other");
    std::fs::write(&elsewhere, "").unwrap();
    assert!(lookup_in(&root, &netns, &elsewhere, "eth0").is_none());
    // The match is by identity, not by name: another name for the same inode matches...
    let alias = netns.join("alias-of-h2");
    std::fs::hard_link(&me, &alias).unwrap();
    assert_eq!(
        lookup_in(&root, &netns, &alias, "eth0").map(|f| f.node),
        Some("h2".into())
    );
    // ...and once the lab's namespace is gone from netns_dir, its file matches nothing.
    std::fs::remove_file(&me).unwrap();
    assert!(lookup_in(&root, &netns, &alias, "eth0").is_none());
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(netns);
}

#[test]
fn a_process_finds_its_route_to_an_address() {
    let root = scratch("routes");
    let netns = scratch("routes-netns");
    let lab = root.join("t1-path-0001");
    std::fs::create_dir_all(&lab).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/t1-path.toml");
    let topology = Topology::load(Path::new(path)).unwrap();
    let plan = addressing::plan(&topology);
    let namespaces: Vec<String> = topology
        .nodes
        .iter()
        .map(|n| format!("ws-t1-path-0001-{}", n.name))
        .collect();
    LabRoutes::of("t1-path-0001", &topology, &plan, &namespaces)
        .write(&lab)
        .unwrap();
    for ns in &namespaces {
        std::fs::write(netns.join(ns), "").unwrap();
    }
    let me = netns.join("ws-t1-path-0001-h1");
    // h2 is end b of link 2: 198.18.2.2 and 2001:2:0:2::2.
    for to in ["198.18.2.2", "2001:2:0:2::2"] {
        let r = route_in(&root, &netns, &me, to.parse().unwrap()).expect(to);
        assert_eq!(r.from, "h1");
        assert_eq!(r.to, "h2");
        assert_eq!(r.hops.len(), 3);
        assert_eq!(r.hops[1].rate_bits_per_second, 1_544_000);
    }
    // Both ways: h1's address on link 0 is 198.18.0.1; the way back crosses the T1 too.
    let pair = routes_between_in(
        &root,
        &netns,
        &me,
        "198.18.0.1".parse().unwrap(),
        "198.18.2.2".parse().unwrap(),
    )
    .expect("both ways");
    assert_eq!(pair.lab, "t1-path-0001");
    let back = pair.back.expect("the way back");
    assert_eq!((back.from.as_str(), back.to.as_str()), ("h2", "h1"));
    assert_eq!(back.hops.len(), 3);
    assert_eq!(back.hops[1].rate_bits_per_second, 1_544_000);
    // An address of no node, and a process in no lab's namespace, find nothing.
    assert!(route_in(&root, &netns, &me, "198.18.9.9".parse().unwrap()).is_none());
    let elsewhere = netns.join("other");
    std::fs::write(&elsewhere, "").unwrap();
    assert!(route_in(&root, &netns, &elsewhere, "198.18.2.2".parse().unwrap()).is_none());
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(netns);
}

#[test]
fn a_hostile_file_is_ignored() {
    let root = scratch("hostile");
    let netns = scratch("hostile-netns");
    let lab = root.join("x");
    std::fs::create_dir_all(&lab).unwrap();
    std::fs::write(lab.join(FILE_NAME), "not json").unwrap();
    let mut t = truth();
    t.interfaces[0].namespace = "../../etc/passwd".into();
    let other = root.join("y");
    std::fs::create_dir_all(&other).unwrap();
    t.write(&other).unwrap();
    let me = netns.join("self");
    std::fs::write(&me, "").unwrap();
    assert!(lookup_in(&root, &netns, &me, "eth0").is_none());
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(netns);
}
