//! The topology checks' tests: every key, range and combination, one line each.
use std::path::Path;
use std::time::Duration;
use wirespeed_lab::topology::TopologyNote;

use wirespeed_lab::topology::*;

const TWO: &str = r#"
[[host]]
name = "h1"
[[host]]
name = "h2"
[[link]]
a = "h1"
b = "h2"
rate = "10M"
delay = "100us"
"#;

fn err(text: &str) -> (usize, String) {
    match Topology::parse(text, "t.toml").unwrap_err() {
        TopologyError::Invalid { line, message, .. } => (line, message),
        other => panic!("{other}"),
    }
}

#[test]
fn two_hosts_parse_with_defaults() {
    let t = Topology::parse(TWO, "t.toml").unwrap();
    assert_eq!(t.nodes.len(), 2);
    let l = &t.links[0];
    assert_eq!(l.ab.rate.bits_per_second(), 10_000_000);
    assert_eq!(l.ba.rate.bits_per_second(), 10_000_000);
    assert_eq!(l.ab.delay, Duration::from_micros(100));
    assert_eq!(l.ab.queue, QueueLimit::Packets(DEFAULT_QUEUE_PACKETS));
    assert_eq!(l.mtu, 1500);
    assert_eq!(l.line, 6);
    assert_ne!(l.ab.seed, l.ba.seed);
}

#[test]
fn each_direction_may_differ() {
    let t = Topology::parse(
        &TWO.replace("rate = \"10M\"", "rate_ab = \"1M\"\nrate_ba = \"56k\""),
        "t",
    )
    .unwrap();
    assert_eq!(t.links[0].ab.rate.bits_per_second(), 1_000_000);
    assert_eq!(t.links[0].ba.rate.bits_per_second(), 56_000);
}

#[test]
fn hidden_hops_are_bounded() {
    let t = Topology::parse(&TWO.replace("delay = \"100us\"", "hidden_hops = 3"), "t").unwrap();
    assert_eq!(t.links[0].ab.hidden_hops, 3);
    assert_eq!(t.links[0].ba.hidden_hops, 3);
    let (line, msg) = err(&TWO.replace("delay = \"100us\"", "hidden_hops = 40"));
    assert_eq!(line, 10);
    assert!(msg.contains("hidden_hops 40 is outside 0..=16"), "{msg}");
}

#[test]
fn cable_length_gives_propagation_delay() {
    let text = TWO.replace(
        "delay = \"100us\"",
        "length_m = 2500\nvelocity_factor = 0.77",
    );
    let t = Topology::parse(&text, "t").unwrap();
    let us = t.links[0].ab.delay.as_secs_f64() * 1e6;
    // 2500 m of thick coax at 0.77 c: 10.83 us.
    assert!((us - 10.83).abs() < 0.01, "{us}");
}

#[test]
fn unknown_node_names_the_line() {
    let (line, msg) = err(&TWO.replace("b = \"h2\"", "b = \"h3\""));
    assert_eq!(line, 8);
    assert!(
        msg.contains("unknown node 'h3'") && msg.contains("h1, h2"),
        "{msg}"
    );
}

#[test]
fn negative_rate_names_the_line() {
    let (line, msg) = err(&TWO.replace("\"10M\"", "\"-10M\""));
    assert_eq!(line, 9);
    assert!(msg.contains("negative rate"), "{msg}");
    let (_, msg) = err(&TWO.replace("\"10M\"", "-10"));
    assert!(msg.contains("negative rate"), "{msg}");
}

#[test]
fn duplicate_address_names_the_second() {
    let text = format!(
        "{TWO}a_address = \"198.18.9.1/24\"\nb_address = \"198.18.9.2/24\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1M\"\na_address = \"198.18.9.3/24\"\nb_address = \"198.18.9.2/24\"\n"
    );
    let (line, msg) = err(&text);
    assert_eq!(line, 18);
    assert!(msg.contains("duplicate address 198.18.9.2"), "{msg}");
}

#[test]
fn duplicate_node_unknown_key_and_syntax() {
    let (line, msg) = err(&TWO.replace("name = \"h2\"", "name = \"h1\""));
    assert_eq!((line, msg.contains("duplicate node name 'h1'")), (5, true));
    let (line, msg) = err(&TWO.replace("delay", "dealy"));
    assert_eq!(line, 10);
    assert!(msg.contains("dealy"), "{msg}");
    let (line, _) = err("[[host]]\nname = \n");
    assert_eq!(line, 2);
}

#[test]
fn half_duplex_and_mismatch_links_and_segments_parse() {
    let t = Topology::parse(&TWO.replace("delay = \"100us\"", "duplex = \"half\""), "t").unwrap();
    assert_eq!(
        (t.links[0].duplex_a, t.links[0].duplex_b),
        (LinkDuplex::Half, LinkDuplex::Half)
    );
    let t = Topology::parse(
        &TWO.replace("delay = \"100us\"", "duplex_a = \"half\""),
        "t",
    )
    .unwrap();
    assert_eq!(
        (t.links[0].duplex_a, t.links[0].duplex_b),
        (LinkDuplex::Half, LinkDuplex::Full)
    );
    assert!(t.links[0].is_shared());
    let hub = "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[host]]\nname = \"c\"\n\
               [[segment]]\nname = \"hub\"\nstations = [\"a\", \"b\", \"c\"]\nrate = \"10M\"\nlength_m = 50\n";
    let t = Topology::parse(hub, "hub.toml").unwrap();
    assert_eq!(t.segments[0].stations, [0, 1, 2]);
    assert_eq!(t.segments[0].length_m, 50.0);
    let e = Topology::parse(&hub.replace("\"c\"]", "\"d\"]"), "hub.toml").unwrap_err();
    assert!(e.to_string().contains("unknown station 'd'"), "{e}");
    assert!(e.to_string().contains("hub.toml:9:"), "names the line: {e}");
    let e = Topology::parse(&hub.replace("rate = \"10M\"\n", ""), "hub.toml").unwrap_err();
    assert!(e.to_string().contains("no rate"), "{e}");
    let e = Topology::parse(
        &TWO.replace(
            "rate = \"10M\"",
            "rate_ab = \"10M\"\nrate_ba = \"1M\"\nduplex = \"half\"",
        ),
        "t",
    )
    .unwrap_err();
    assert!(e.to_string().contains("one rate"), "{e}");
}

#[test]
fn other_mistakes_are_explained() {
    for (from, to, needle) in [
        (
            "delay = \"100us\"",
            "delay = \"100us\"\nloss = 1.5",
            "probability",
        ),
        ("delay = \"100us\"", "delay = 100", "has no unit"),
        ("delay = \"100us\"", "delay = \"-1ms\"", "negative delay"),
        (
            "delay = \"100us\"",
            "duplex = \"half\"\nloss = 0.01",
            "loss is not available on a half-duplex (CSMA/CD) link",
        ),
        ("delay = \"100us\"", "duplex_a = \"hlaf\"", "'hlaf'"),
        ("delay = \"100us\"", "mtu = 20", "mtu 20"),
        ("delay = \"100us\"", "queue = 0", "queue"),
        ("b = \"h2\"", "b = \"h1\"", "itself"),
        ("rate = \"10M\"", "", "no rate"),
        ("rate = \"10M\"", "rate = \"0M\"", "above zero"),
        (
            "delay = \"100us\"",
            "a_address = \"198.18.1.1/24\"\nb_address = \"198.18.2.1/24\"",
            "same subnet",
        ),
    ] {
        let (_, msg) = err(&TWO.replace(from, to));
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
}

#[test]
fn aqm_keys_parse_with_the_rfc_defaults() {
    let t = Topology::parse(TWO, "t.toml").unwrap();
    assert_eq!(t.links[0].aqm, None, "drop-tail unless asked");
    let t = Topology::parse(&format!("{TWO}aqm = \"none\"\n"), "t.toml").unwrap();
    assert_eq!(t.links[0].aqm, None);
    let t = Topology::parse(&format!("{TWO}aqm = \"codel\"\n"), "t.toml").unwrap();
    assert_eq!(
        t.links[0].aqm,
        Some(AqmConfig {
            kind: AqmKind::Codel,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            flows: 1024,
            quantum: 1514,
            perturbation: None,
        })
    );
    let text = format!(
        "{TWO}aqm = \"fq_codel\"\naqm_target = \"10ms\"\naqm_interval = \"200ms\"\nfq_flows = 64\nfq_quantum = 300\nqueue = 1000\nfq_perturbation = 12345\n"
    );
    let a = Topology::parse(&text, "t.toml").unwrap().links[0]
        .aqm
        .unwrap();
    assert_eq!(a.kind, AqmKind::FqCodel);
    assert_eq!(a.perturbation, Some(12345), "set for a reproducible run");
    assert_eq!(
        (a.target, a.interval, a.flows, a.quantum),
        (
            Duration::from_millis(10),
            Duration::from_millis(200),
            64,
            300
        )
    );
}

#[test]
fn bad_aqm_values_name_the_key_value_range_and_an_example() {
    for (extra, line, needles) in [
        (
            "aqm = \"red\"",
            11,
            &[
                "aqm \"red\"",
                "\"codel\", \"fq_codel\" or \"none\"",
                "e.g. aqm = \"fq_codel\"",
            ][..],
        ),
        (
            "aqm = \"codel\"\naqm_target = \"0ms\"",
            12,
            &[
                "aqm_target = \"0ms\"",
                "100us..=1s",
                "e.g. aqm_target = \"5ms\"",
            ],
        ),
        (
            "aqm = \"codel\"\naqm_target = 5",
            12,
            &["aqm_target = 5", "100us..=1s", "e.g. aqm_target = \"5ms\""],
        ),
        (
            "aqm = \"codel\"\naqm_interval = \"forever\"",
            12,
            &[
                "aqm_interval = \"forever\"",
                "1ms..=10s",
                "e.g. aqm_interval = \"100ms\"",
            ],
        ),
        (
            "aqm = \"codel\"\naqm_target = \"200ms\"",
            12,
            &["aqm_target 200ms must be below aqm_interval 100ms", "e.g."],
        ),
        (
            "aqm = \"fq_codel\"\nfq_flows = 0",
            12,
            &["fq_flows = 0", "1..=65536", "e.g. fq_flows = 1024"],
        ),
        (
            "aqm = \"fq_codel\"\nfq_quantum = \"1514\"",
            12,
            &[
                "fq_quantum = \"1514\"",
                "256..=65536",
                "e.g. fq_quantum = 1514",
            ],
        ),
        (
            "aqm = \"codel\"\nfq_flows = 16",
            12,
            &["fq_flows = 16 tunes aqm = \"fq_codel\""],
        ),
        (
            "aqm_target = \"5ms\"",
            11,
            &["aqm_target = \"5ms\" tunes aqm = \"codel\" or aqm = \"fq_codel\""],
        ),
        (
            "duplex = \"half\"\naqm = \"codel\"",
            11,
            &["aqm is not available on a half-duplex (CSMA/CD) link"],
        ),
    ] {
        let (at, msg) = err(&format!("{TWO}{extra}\n"));
        assert!(!msg.contains('\n'), "{msg}");
        assert_eq!(at, line, "{extra}: {msg}");
        for needle in needles {
            assert!(msg.contains(needle), "{needle}: {msg}");
        }
    }
}

#[test]
fn lab_names_are_identifiers_and_never_empty_or_paths() {
    for bad in [
        "",
        "-x",
        "x-",
        "../../tmp/x",
        "/tmp/x",
        "A",
        "a b",
        "abcdefghijklmnopq",
    ] {
        let (line, msg) = err(&format!("name = \"{bad}\"\n{TWO}"));
        assert_eq!(line, 1, "{bad:?}: {msg}");
        assert!(msg.contains("lab name"), "{bad:?}: {msg}");
    }
    for good in ["x", "two-host", "0day", "abcdefghijklmnop"] {
        let t = Topology::parse(&format!("name = \"{good}\"\n{TWO}"), "t").unwrap();
        assert_eq!(t.name.as_deref(), Some(good));
    }
}

#[test]
fn delays_and_router_costs_outside_their_ranges_are_refused_at_their_line() {
    for (delay, needle) in [
        ("\"100000000s\"", "above the 10 s"),
        ("\"60s\"", "above the 10 s"),
        ("\"1000s\"", "above the 10 s"),
    ] {
        let (line, msg) = err(&TWO.replace("\"100us\"", delay));
        assert_eq!(line, 10, "{msg}");
        assert!(msg.contains(needle), "{msg}");
    }
    let (line, msg) = err(&TWO.replace(
        "delay = \"100us\"",
        "length_m = 1000\nvelocity_factor = 1e-300",
    ));
    assert_eq!(line, 11, "{msg}");
    assert!(msg.contains("above the 10 s"), "{msg}");
    assert!(
        Topology::parse(
            &TWO.replace("\"100us\"", "\"10s\"")
                .replace("\"10M\"", "\"1M\""),
            "t"
        )
        .is_ok()
    );
    let router = "[[host]]\nname = \"h1\"\n[[router]]\nname = \"r1\"\nforward = { fixed = \"10s\" }\n[[link]]\na = \"h1\"\nb = \"r1\"\nrate = \"10M\"\n";
    let (line, msg) = err(router);
    assert_eq!(line, 5, "{msg}");
    assert!(msg.contains("forward cost of router 'r1'"), "{msg}");
    let (line, msg) = err(&router.replace(
        "forward = { fixed = \"10s\" }",
        "answer = { per_byte = \"2ms\" }",
    ));
    assert_eq!(line, 5, "{msg}");
    assert!(msg.contains("answer cost of router 'r1'"), "{msg}");
}

#[test]
fn a_rate_beside_per_direction_rates_and_a_velocity_factor_without_length_are_refused() {
    // rate and rate_ab together: one would be silently ignored for that direction.
    for extra in ["rate_ab = \"1M\"", "rate_ba = \"56k\""] {
        let (line, msg) = err(&format!("{TWO}{extra}\n"));
        assert_eq!(line, 9, "{msg}");
        assert!(msg.contains("not both"), "{msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
    // velocity_factor alone changes nothing: with a delay, and without one.
    let (line, msg) = err(&format!("{TWO}velocity_factor = 0.66\n"));
    assert_eq!(line, 11, "{msg}");
    assert!(msg.contains("velocity_factor needs length_m"), "{msg}");
    let (line, msg) = err(&TWO.replace("delay = \"100us\"", "velocity_factor = 0.66"));
    assert_eq!(line, 10, "{msg}");
    assert!(msg.contains("add length_m"), "{msg}");
    assert!(
        Topology::parse(
            &TWO.replace(
                "delay = \"100us\"",
                "length_m = 100\nvelocity_factor = 0.66"
            ),
            "t"
        )
        .is_ok()
    );
}

#[test]
fn frames_in_flight_are_bounded_by_the_memory_budget() {
    // 1 Gbit/s for 5 s: 7.4 million minimum frames in flight, far above the budget.
    let (line, msg) = err(&TWO
        .replace("\"10M\"", "\"1G\"")
        .replace("\"100us\"", "\"5s\""));
    assert_eq!(line, 6, "{msg}");
    assert!(msg.contains("above the lab's budget of 256 MiB"), "{msg}");
    // A 10 Mbit/s, 1 s satellite-like hop fits: 14,881 minimum frames each way.
    let t = Topology::parse(&TWO.replace("\"100us\"", "\"1s\""), "t").unwrap();
    let l = &t.links[0];
    assert_eq!(l.in_flight_frames(&l.ab), 100 + 2 + 14_881);
    assert!(l.in_flight_bytes() < FLIGHT_BUDGET_BYTES);
    // The bound grows with the delay and the queue, never shrinks.
    let long = Topology::parse(&TWO.replace("\"100us\"", "\"2s\""), "t").unwrap();
    assert!(long.links[0].in_flight_frames(&long.links[0].ab) > l.in_flight_frames(&l.ab));
    // Many links each under the budget are refused together, at the one that goes over.
    let mut text = TWO
        .replace("\"10M\"", "\"20M\"")
        .replace("\"100us\"", "\"1s\"");
    for _ in 0..4 {
        text.push_str("[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"20M\"\ndelay = \"1s\"\n");
    }
    let (line, msg) = err(&text);
    assert!(line > 6, "{line}: {msg}");
    assert!(msg.contains("with the links before it"), "{msg}");
    for lab in ["two-host-10m", "boggs-24", "shared-24", "seed-001-path"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../labs/{lab}.toml"));
        Topology::load(&path).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn router_costs_parse() {
    let text = r#"
[[host]]
name = "h1"
[[router]]
name = "r1"
icmp_ratelimit = false
forward = { fixed = "525us", per_byte = "40ns" }
answer = { fixed = "0.751ms", per_byte = "1310ns" }
[[link]]
a = "h1"
b = "r1"
rate = "10M"
"#;
    let t = Topology::parse(text, "t").unwrap();
    let NodeKind::Router(r) = &t.nodes[1].kind else {
        panic!()
    };
    assert!(!r.icmp_ratelimit);
    assert_eq!(r.forward.of(1000), Duration::from_micros(525 + 40));
    assert_eq!(r.answer.of(0), Duration::from_micros(751));
}

#[test]
fn host_costs_and_tcp_profile_parse() {
    let text = TWO.replace(
        "name = \"h1\"\n",
        "name = \"h1\"\ntransmit = { fixed = \"100us\", per_byte = \"784ns\" }\nreceive = { per_byte = \"784ns\" }\ntcp_profile = \"1990s\"\ntcp = { tcp_sack = 1, tcp_congestion_control = \"cubic\" }\n",
    );
    let t = Topology::parse(&text, "t").unwrap();
    let NodeKind::Host(h) = &t.nodes[0].kind else {
        panic!()
    };
    assert!(h.has_costs());
    assert_eq!(
        h.transmit.of(1500),
        Duration::from_nanos(100_000 + 1500 * 784)
    );
    assert_eq!(h.receive.of(40), Duration::from_nanos(40 * 784));
    assert_eq!(h.tcp_profile.as_deref(), Some("1990s"));
    let get = |k: &str| h.tcp.iter().find(|s| s.key == k).map(|s| s.value.as_str());
    // The file's own table overrides the preset; the rest of the preset stays.
    assert_eq!(get("tcp_sack"), Some("1"));
    assert_eq!(get("tcp_congestion_control"), Some("cubic"));
    assert_eq!(get("tcp_timestamps"), Some("0"));
    assert_eq!(get("tcp_recovery"), Some("0"));
    assert_eq!(h.tcp.len(), TCP_PRESET_1990S.len());
    let NodeKind::Host(plain) = &t.nodes[1].kind else {
        panic!()
    };
    assert!(!plain.has_costs() && plain.tcp.is_empty());
}

#[test]
fn bad_host_settings_name_their_line() {
    let with = |extra: &str| TWO.replace("name = \"h2\"\n", &format!("name = \"h2\"\n{extra}\n"));
    for (extra, needle) in [
        ("transmit = { fixed = \"-1ms\" }", "negative fixed cost"),
        ("receive = { per_byte = 784 }", "has no unit"),
        ("receive = { per_byte = \"2ms\" }", "check the unit"),
        ("transmit = { fixed = \"5s\" }", "check the unit"),
        ("transmit = { fixed = \"1ms\", percpu = \"1ms\" }", "percpu"),
        (
            "tcp_profile = \"1980s\"",
            "unknown tcp_profile '1980s': use one of 1990s",
        ),
        (
            "tcp = { tcp_sack = 2 }",
            "tcp_sack = 2 must be a whole number in 0..=1",
        ),
        ("tcp = { tcp_sack = \"off\" }", "must be a whole number"),
        (
            "tcp = { ip_forward = 1 }",
            "unknown TCP setting 'ip_forward'",
        ),
        (
            "tcp = { tcp_congestion_control = \"../x\" }",
            "must name an algorithm",
        ),
        (
            "tcp = { tcp_congestion_control = 3 }",
            "must name an algorithm",
        ),
    ] {
        let (line, msg) = err(&with(extra));
        assert_eq!(line, 6, "{extra}: {msg}");
        assert!(msg.contains(needle), "{extra}: {msg}");
    }
    // A router has no host model: the key is unknown there.
    let text = "[[host]]\nname = \"h1\"\n[[router]]\nname = \"r1\"\ntcp_profile = \"1990s\"\n[[link]]\na = \"h1\"\nb = \"r1\"\nrate = \"10M\"\n";
    let (line, msg) = err(text);
    assert_eq!(line, 5, "{msg}");
    assert!(msg.contains("tcp_profile"), "{msg}");
}

#[test]
fn every_shipped_lab_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            Topology::load(&path).unwrap_or_else(|e| panic!("{e}"));
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} labs in {}", dir.display());
}

proptest::proptest! {
    #[test]
    fn any_text_is_accepted_or_rejected_with_a_line_in_the_file(text in "[\\[\\]a-z0-9=\" .\n-]{0,200}") {
        match Topology::parse(&text, "t") {
            Ok(_) => {}
            Err(TopologyError::Invalid { line, .. }) => {
                proptest::prop_assert!(line >= 1 && line <= text.lines().count() + 1);
            }
            Err(other) => proptest::prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn mutated_good_files_never_panic(cut in 0usize..120, insert in "[a-z0-9=\" \n-]{0,8}") {
        let mut text = TWO.to_string();
        let at = text.char_indices().nth(cut.min(TWO.len() - 1)).map_or(0, |(i, _)| i);
        text.insert_str(at, &insert);
        let _ = Topology::parse(&text, "t");
    }
}

/// A CSMA/CD medium whose round trip is past its 512-bit slot is accepted and noted, with the
/// delay that would fit; one within its slot, and any full-duplex link, are not.
#[test]
fn a_shared_medium_past_its_slot_time_is_noted() {
    let with = |keys: &str| Topology::parse(&TWO.replace("delay = \"100us\"", keys), "t").unwrap();
    // 1 ms each way at 10 Mbit/s: 2 ms against a 51.2 us slot, about 198 km of cable.
    let notes = with("delay = \"1ms\"\nduplex = \"half\"").notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let TopologyNote::PastTheSlotTime {
        medium,
        one_way_seconds,
        slot_seconds,
        cable_metres,
    } = &notes[0];
    assert_eq!(medium, "link h1-h2");
    assert!((one_way_seconds - 1e-3).abs() < 1e-12);
    assert!((slot_seconds - 51.2e-6).abs() < 1e-12);
    assert!((cable_metres - 197_863.0).abs() < 1.0, "{cable_metres}");
    let sentence = notes[0].to_string();
    assert!(
        sentence.starts_with(
            "link h1-h2 is a CSMA/CD medium whose round trip (2.000 ms) is longer than its slot time (51.2 us"
        ),
        "{sentence}"
    );
    assert!(sentence.contains("about 197.9 km of cable"), "{sentence}");
    assert!(sentence.contains("within 25.6 us"), "{sentence}");
    // A mismatched link is one medium too.
    assert_eq!(
        with("delay = \"1ms\"\nduplex_a = \"half\"").notes().len(),
        1
    );
    // Within the slot (2 x 25 us < 51.2 us), or full duplex: nothing to say.
    assert!(
        with("delay = \"25us\"\nduplex = \"half\"")
            .notes()
            .is_empty()
    );
    assert!(with("delay = \"1ms\"").notes().is_empty());
    // At 100 Mbit/s the slot is 5.12 us: 25 us each way is past it.
    let fast = Topology::parse(
        &TWO.replace(
            "rate = \"10M\"\ndelay = \"100us\"",
            "rate = \"100M\"\ndelay = \"25us\"\nduplex = \"half\"",
        ),
        "t",
    )
    .unwrap()
    .notes();
    assert_eq!(fast.len(), 1, "{fast:?}");
    assert!(
        fast[0].to_string().contains("slot time (5.1 us"),
        "{}",
        fast[0]
    );
    // A hub: 10 km of cable at 0.66 c is 50.5 us each way, past 51.2 us round trip; 100 m is not.
    let hub = |length: &str| {
        Topology::parse(
            &format!(
                "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[segment]]\nname = \"hub\"\n\
                 stations = [\"a\", \"b\"]\nrate = \"10M\"\nlength_m = {length}\n"
            ),
            "t",
        )
        .unwrap()
        .notes()
    };
    let long = hub("10000");
    assert_eq!(long.len(), 1, "{long:?}");
    assert!(
        long[0]
            .to_string()
            .starts_with("segment hub is a CSMA/CD medium")
    );
    assert!(long[0].to_string().contains("about 10.0 km of cable"));
    assert!(hub("100").is_empty());
}
