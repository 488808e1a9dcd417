use wirespeed::common::brief::Headline;
use wirespeed::probe::ProbeReport;
use wirespeed_model::RateFormat;

fn hop(ttl: u8, destination: bool, fit: bool, rate: Option<f64>) -> serde_json::Value {
    serde_json::json!({
        "responder": format!("198.19.{ttl}.1"), "destination": destination, "ttl": ttl,
        "sizes": [], "loss_fraction": 0.0125,
        "fit": fit.then(|| serde_json::json!({
            "rtt_intercept_ms": 0.2, "rtt_slope_ms_per_byte": 0.0008,
            "one_way": {"fixed_ms": 0.1, "per_byte_ms": 0.0008},
            "r_squared": 0.999, "residual_std_ms": 0.001, "bootstrap": null,
            "split_half": null, "theil_sen": null, "least_median_of_squares": null,
            "step": null
        })),
        "no_fit_reason": (!fit).then_some("2 sizes answered: give at least 3"),
        "rate_limit": null,
        "increment": rate.map(|r| serde_json::json!({
            "from_ttl": ttl - 1, "cost": {"fixed_ms": 0.05, "per_byte_ms": 0.0008},
            "implied_bits_per_second": r, "caveat": null
        })),
    })
}

fn report(per_hop: bool, hops: Vec<serde_json::Value>) -> ProbeReport {
    let mut r: ProbeReport = serde_json::from_value(serde_json::json!({
        "socket": "datagram", "timestamps": "monotonic", "kernel_stamped_answers": 0,
        "answers": 79, "timer_floor_seconds": 1e-6, "clock_resolution_seconds": 1e-9,
        "path_mtu_bytes": 1500, "elapsed_seconds": 1.0, "stopped_early": false,
        "per_hop": per_hop, "rounds": 1, "hops": hops, "samples": []
    }))
    .unwrap();
    r.target = "198.19.2.1".parse().unwrap();
    r.samples = (0..80)
        .map(|i| wirespeed_net::probe::Sample {
            ttl: 64,
            sent_bytes: 100,
            returned_bytes: if i == 0 { 0 } else { 100 },
            rtt_kernel_ns: None,
            rtt_user_ns: (i > 0).then_some(1000),
            sent_at_ns: 0,
            responder: None,
            reply: wirespeed_net::probe::ReplyKind::EchoReply,
            unreachable_code: None,
            too_big_mtu: None,
            series: wirespeed_net::probe::Series::Probe,
            agent_residence_ns: None,
        })
        .collect();
    r
}

#[test]
fn the_headline_is_the_destinations_one_way_cost() {
    let r = report(false, vec![hop(64, true, true, None)]);
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        [
            "probe 198.19.2.1: 79 of 80 probes answered; one-way best case 100 us + 800 ns/byte x bytes, loss 1.2%"
        ]
    );
    let r = report(false, vec![hop(64, true, false, None)]);
    assert!(
        r.headline(RateFormat::Adaptive)[0]
            .contains("; no fit: 2 sizes answered: give at least 3, loss 1.2%")
    );
}

#[test]
fn per_hop_adds_each_hops_implied_link_rate() {
    let r = report(
        true,
        vec![
            hop(1, false, true, Some(1e8)),
            hop(2, true, true, Some(9.98e6)),
        ],
    );
    let line = &r.headline(RateFormat::Adaptive)[0];
    assert!(
        line.ends_with("; implied link rates hop 1 100 Mbit/s, hop 2 9.98 Mbit/s"),
        "{line}"
    );
}
