mod route;

use wirespeed_lab::topology::Topology;
use wirespeed_lab::truth::*;

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
    let own = wirespeed_model::perhop::own_costs(&hops.iter().map(|h| h.line).collect::<Vec<_>>());
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
