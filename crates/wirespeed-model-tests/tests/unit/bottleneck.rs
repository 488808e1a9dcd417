use wirespeed_model::bottleneck::*;

/// The sentences, as a person reads them.
fn said(f: &FlowFacts) -> Vec<String> {
    verdicts(f).iter().map(ToString::to_string).collect()
}

#[test]
fn a_known_link_rate_gives_a_percentage_of_the_envelope() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 8.2e6,
        ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
        ..FlowFacts::default()
    });
    assert_eq!(
        v[0],
        "87.1% of the 9.415 Mbit/s envelope ceiling (10 Mbit/s Ethernet)"
    );
}

#[test]
fn near_the_ceiling_the_link_is_named_as_the_bound() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 9.406e6,
        ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
        ..FlowFacts::default()
    });
    assert_eq!(
        v[0],
        "the link is the bound: 99.9% of the 9.415 Mbit/s envelope ceiling (10 Mbit/s Ethernet)"
    );
}

#[test]
fn bbr_without_fq_is_no_verdict_at_the_links_ceiling() {
    let at = |goodput: f64| {
        said(&FlowFacts {
            goodput_bits_per_second: goodput,
            ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
            congestion: Some("bbr".into()),
            qdisc: Some("pfifo_fast".into()),
            ..FlowFacts::default()
        })
        .iter()
        .any(|s| s.contains("bbr without the fq qdisc"))
    };
    assert!(!at(9.2e6), "the link is the bound");
    assert!(at(3e6), "something below the link holds the rate");
}

#[test]
fn bbr_without_fq_off_loopback_is_judged_by_what_was_measured() {
    // Issue 31: bbr reached 99.3% of a T1's ceiling and was still warned.
    let warned = |goodput: f64, ceiling: Option<f64>| {
        said(&FlowFacts {
            goodput_bits_per_second: goodput,
            ceiling: ceiling.map(|c| (c, "link r1-r2".into())),
            congestion: Some("bbr".into()),
            qdisc: Some("fq_codel".into()),
            ..FlowFacts::default()
        })
        .into_iter()
        .find(|s| s.contains("bbr without the fq qdisc"))
    };
    assert_eq!(warned(1.447e6, Some(1.457e6)), None);
    assert!(
        warned(0.5e6, Some(1.457e6)).is_some_and(|w| w.contains("reached 34.3% of the ceiling")),
        "{:?}",
        warned(0.5e6, Some(1.457e6))
    );
    assert_eq!(warned(0.5e6, None), None, "no ceiling, no evidence");
}

#[test]
fn a_bound_that_is_not_a_link_is_named_as_the_subject() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 0.95e6,
        ceiling: Some((1e6, "router r1's forwarding (1ms per packet)".into())),
        bound: Some("the route's bottleneck".into()),
        ..FlowFacts::default()
    });
    assert!(
        v[0].starts_with("the route's bottleneck is the bound: 95.0% of the 1 Mbit/s"),
        "{v:?}"
    );
}

#[test]
fn a_low_rate_pacer_is_judged_in_whole_datagrams() {
    // -b 6k -t 2.5 with 1472-byte datagrams: one datagram (4710 bit/s over the test).
    let v = said(&FlowFacts {
        goodput_bits_per_second: 4710.4,
        target_bits_per_second: Some(6000.0),
        quantum_bits_per_second: Some(4710.4),
        loopback: true,
        ..FlowFacts::default()
    });
    assert!(
        v[0].starts_with("paced: 78.5% of the -b target of 6 kbit/s (one datagram is 78.5%"),
        "{v:?}"
    );
    let short = said(&FlowFacts {
        goodput_bits_per_second: 4e6,
        target_bits_per_second: Some(10e6),
        quantum_bits_per_second: Some(1e3),
        loopback: true,
        ..FlowFacts::default()
    });
    assert!(short[0].starts_with("40.0% of the -b target"), "{short:?}");
}

#[test]
fn an_unknown_rate_says_why_and_how_to_give_it() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 9.4e6,
        unknown_rate_reason: Some("eth0 is a TAP device".into()),
        ..FlowFacts::default()
    });
    assert_eq!(
        v[0],
        "link rate unknown (eth0 is a TAP device): give it with --link-rate (e.g. --link-rate 1G) to compare with the envelope ceiling"
    );
}

#[test]
fn a_rate_of_zero_gets_no_verdict() {
    for loopback in [false, true] {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 0.0,
            loopback,
            ceiling: (!loopback).then(|| (9.415e6, "x".into())),
            sender_thread_cpu_percent: Some(99.0),
            ..FlowFacts::default()
        });
        assert_eq!(v, ["nothing arrived: no rate to judge, so no verdict"]);
    }
}

#[test]
fn a_reached_cap_is_the_bound_not_the_path() {
    let link = Some((94.9e6, "100 Mbit/s Ethernet".to_string()));
    let f = FlowFacts {
        goodput_bits_per_second: 19.9e6,
        cap_bits_per_second: Some(20e6),
        ceiling: link.clone(),
        rwnd_limited_seconds: Some(0.9),
        busy_seconds: Some(1.0),
        ..FlowFacts::default()
    };
    let v = said(&f);
    assert_eq!(v.len(), 1, "the cap explains the rate alone: {v:?}");
    assert!(
        v[0].starts_with("capped at 20 Mbit/s by -b: 99.5% of the cap arrived")
            && v[0].contains("envelope ceiling is 94.9 Mbit/s"),
        "{v:?}"
    );
    // Short of the cap: said, then the path is judged as usual.
    let short = said(&FlowFacts {
        goodput_bits_per_second: 10e6,
        ..f.clone()
    });
    assert!(
        short[0].starts_with("50.0% of the -b cap of 20 Mbit/s arrived"),
        "{short:?}"
    );
    assert!(
        short[1].starts_with("10.5% of the 94.9 Mbit/s envelope"),
        "{short:?}"
    );
    // Short because the senders gave up a share of their time behind the cap: named, with the
    // share, as the host's doing; a share within 1% is not.
    let behind = said(&FlowFacts {
        goodput_bits_per_second: 17.4e6,
        cap_given_up_share: Some(0.157),
        ..f.clone()
    });
    assert!(
        behind[0].starts_with(
            "87.0% of the -b cap of 20 Mbit/s arrived: the senders gave up 15.7% of their time behind the cap"
        ),
        "{behind:?}"
    );
    let slight = said(&FlowFacts {
        goodput_bits_per_second: 17.4e6,
        cap_given_up_share: Some(0.005),
        ..f.clone()
    });
    assert!(
        slight[0].ends_with("something below the cap limits the rate"),
        "{slight:?}"
    );
    // A cap above the ceiling binds nothing: the link is the bound.
    let above = said(&FlowFacts {
        goodput_bits_per_second: 94e6,
        cap_bits_per_second: Some(200e6),
        ceiling: link,
        ..FlowFacts::default()
    });
    assert!(above[0].starts_with("the link is the bound"), "{above:?}");
    // Without a known link: the cap is still the bound.
    let lo = said(&FlowFacts {
        goodput_bits_per_second: 4.99e6,
        cap_bits_per_second: Some(5e6),
        loopback: true,
        ..FlowFacts::default()
    });
    assert!(
        lo[0].starts_with("capped at 5 Mbit/s by -b: 99.8%"),
        "{lo:?}"
    );
    let two = said(&FlowFacts {
        goodput_bits_per_second: 9.9e6,
        cap_bits_per_second: Some(10e6),
        cap_streams: 2,
        ..FlowFacts::default()
    });
    assert!(
        two[0].starts_with("capped at 10 Mbit/s (2 streams x 5 Mbit/s) by -b: 99.0%"),
        "{two:?}"
    );
}

#[test]
fn a_paced_sender_is_named_as_the_limit() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 99.9e6,
        target_bits_per_second: Some(100e6),
        loopback: true,
        ..FlowFacts::default()
    });
    assert_eq!(v.len(), 1);
    assert!(
        v[0].starts_with("paced: 99.9% of the -b target of 100 Mbit/s"),
        "{v:?}"
    );
}

#[test]
fn loopback_is_the_hosts_own_ceiling() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 40e9,
        loopback: true,
        ..FlowFacts::default()
    });
    assert!(
        v[0].starts_with("loopback has no link rate: 40 Gbit/s"),
        "{v:?}"
    );
}

#[test]
fn window_limit_names_the_granted_buffer_and_the_bdp() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 5e6,
        ceiling: Some((9.4e6, "x".into())),
        rtt_seconds: Some(0.02),
        receive_buffer_bytes: Some(16_384),
        busy_seconds: Some(10.0),
        rwnd_limited_seconds: Some(9.0),
        ..FlowFacts::default()
    });
    assert!(
        v[1].contains("90% of the busy time: granted receive buffer 16384 bytes < bandwidth-delay product 23500 bytes"),
        "{v:?}"
    );
}

#[test]
fn fq_under_a_multiqueue_root_paces_and_fq_codel_does_not() {
    assert!(paces_flows("fq"));
    assert!(paces_flows("mq (fq on 4 queues)"));
    assert!(!paces_flows("fq_codel"));
    assert!(!paces_flows("mq (fq_codel on 2 queues)"));
    assert!(!paces_flows("noqueue"));
    let bbr_on = |qdisc: &str| {
        said(&FlowFacts {
            goodput_bits_per_second: 1e9,
            loopback: true,
            congestion: Some("bbr".into()),
            qdisc: Some(qdisc.into()),
            ..FlowFacts::default()
        })
        .iter()
        .any(|s| s.contains("bbr without the fq qdisc"))
    };
    assert!(!bbr_on("mq (fq on 2 queues)"));
    assert!(bbr_on("noqueue"));
}

#[test]
fn cpu_and_bbr_without_fq_are_named() {
    let v = said(&FlowFacts {
        goodput_bits_per_second: 30e9,
        loopback: true,
        sender_thread_cpu_percent: Some(99.0),
        congestion: Some("bbr".into()),
        qdisc: Some("fq_codel".into()),
        ..FlowFacts::default()
    });
    assert!(
        v.iter().any(|s| s.contains("sender's thread used 99%")),
        "{v:?}"
    );
    assert!(
        v.iter().any(|s| s.contains("bbr without the fq qdisc")),
        "{v:?}"
    );
    let quiet = said(&FlowFacts {
        goodput_bits_per_second: 30e9,
        loopback: true,
        busy_seconds: Some(1.0),
        rwnd_limited_seconds: Some(0.1),
        ..FlowFacts::default()
    });
    assert_eq!(quiet.len(), 1, "{quiet:?}");
}

#[test]
fn each_conclusion_is_a_kind_with_its_figures() {
    let window = verdicts(&FlowFacts {
        goodput_bits_per_second: 5e6,
        ceiling: Some((9.4e6, "x".into())),
        rtt_seconds: Some(0.02),
        receive_buffer_bytes: Some(16_384),
        busy_seconds: Some(10.0),
        rwnd_limited_seconds: Some(9.0),
        ..FlowFacts::default()
    });
    assert!(
        matches!(window[0], Bound::BelowCeiling { .. }),
        "{window:?}"
    );
    match &window[1] {
        Bound::ReceiverWindowLimited {
            share,
            receive_buffer_bytes,
            bandwidth_delay_product_bytes,
        } => {
            assert!((share - 0.9).abs() < 1e-9);
            assert_eq!(*receive_buffer_bytes, Some(16_384));
            assert!((bandwidth_delay_product_bytes.unwrap() - 23_500.0).abs() < 1e-6);
        }
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(&window[1]).unwrap();
    assert_eq!(json["kind"], "receiver_window_limited");
    assert_eq!(json["receive_buffer_bytes"], 16_384);

    let bound = verdicts(&FlowFacts {
        goodput_bits_per_second: 9.406e6,
        ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
        ..FlowFacts::default()
    });
    assert_eq!(
        bound,
        [Bound::LinkBound {
            bound: "the link".into(),
            share: 9.406e6 / 9.415e6,
            ceiling_bits_per_second: 9.415e6,
            ceiling_source: "10 Mbit/s Ethernet".into(),
        }]
    );
    let json = serde_json::to_value(&bound[0]).unwrap();
    assert_eq!(json["kind"], "link_bound");
    assert_eq!(json["ceiling_bits_per_second"], 9.415e6);

    let capped = verdicts(&FlowFacts {
        goodput_bits_per_second: 9.9e6,
        cap_bits_per_second: Some(10e6),
        cap_streams: 2,
        ..FlowFacts::default()
    });
    assert!(
        matches!(
            capped[..],
            [Bound::CappedByRate {
                streams: 2,
                ceiling_bits_per_second: None,
                ..
            }]
        ),
        "{capped:?}"
    );
    let kinds = |f: &FlowFacts| {
        verdicts(f)
            .iter()
            .map(|b| serde_json::to_value(b).unwrap()["kind"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        kinds(&FlowFacts {
            goodput_bits_per_second: 30e9,
            loopback: true,
            sender_thread_cpu_percent: Some(99.0),
            congestion: Some("bbr".into()),
            qdisc: Some("fq_codel".into()),
            busy_seconds: Some(1.0),
            sndbuf_limited_seconds: Some(0.5),
            ..FlowFacts::default()
        }),
        [
            "loopback_ceiling",
            "send_buffer_limited",
            "cpu_limited",
            "bbr_without_fq"
        ]
    );
    assert_eq!(
        kinds(&FlowFacts {
            goodput_bits_per_second: 4e6,
            target_bits_per_second: Some(10e6),
            ..FlowFacts::default()
        }),
        ["short_of_target", "link_rate_unknown"]
    );
    assert_eq!(
        kinds(&FlowFacts {
            goodput_bits_per_second: 9.99e6,
            target_bits_per_second: Some(10e6),
            ..FlowFacts::default()
        }),
        ["paced_by_target"]
    );
    assert_eq!(
        kinds(&FlowFacts {
            goodput_bits_per_second: 5e6,
            cap_bits_per_second: Some(10e6),
            loopback: true,
            ..FlowFacts::default()
        }),
        ["short_of_cap", "loopback_ceiling"]
    );
    assert_eq!(kinds(&FlowFacts::default()), ["nothing_arrived"]);
}
