mod metrics;

use std::time::Duration;
use wirespeed::envelope::*;
use wirespeed_model::{
    BitRate, Duplex, EnvelopeParams, IpVersion, LinkLayer, RateFormat, Transport,
};

fn parse(argv: &[&str]) -> Result<EnvelopeArgs, clap::Error> {
    crate::unit::parse_flags("envelope", argv)
}

#[test]
fn rate_is_required_and_parsed() {
    assert!(parse(&[]).is_err());
    let args = parse(&["--rate", "1.544M"]).unwrap();
    assert_eq!(args.rate.bits_per_second(), 1_544_000);
    assert!(
        parse(&["--rate", "fast"])
            .unwrap_err()
            .to_string()
            .contains("is not a bit rate")
    );
}

#[test]
fn flags_reach_the_model() {
    let p = parse(&[
        "-r", "10M", "-u", "-6", "-l", "1000", "--vlan", "1", "--duplex", "half",
    ])
    .unwrap()
    .params();
    assert_eq!(p.transport, Transport::Udp);
    assert_eq!(p.ip, IpVersion::V6);
    assert_eq!(p.udp_payload, Some(1000));
    assert_eq!(p.link, LinkLayer::Ethernet { vlan_tags: 1 });
    assert_eq!(p.duplex, Duplex::Half);
    let p = parse(&[
        "-r",
        "10M",
        "--no-timestamps",
        "--ack-every",
        "1",
        "--rtt",
        "20ms",
    ])
    .unwrap()
    .params();
    assert_eq!(p.transport, Transport::Tcp { timestamps: false });
    assert_eq!(p.ack_every, 1);
    assert_eq!(p.rtt, Some(Duration::from_millis(20)));
}

/// The config holds the link once; a flag that describes no link is refused by it, one
/// the model's rules refuse by the measure, each before anything is printed.
#[test]
fn the_config_is_the_link_and_what_to_show() {
    let config = |argv: &[&str]| Config::try_from(&parse(argv).unwrap());
    let c = config(&["-r", "10M", "--explain", "-f", "K"]).unwrap();
    assert_eq!(c.params().mtu, 1500);
    assert!(c.explain());
    assert_ne!(c.rate_format(), RateFormat::Adaptive, "-f K");
    let doc = measure(&c).unwrap();
    assert!(doc.result.explain.is_some());
    let e = config(&["-r", "10M", "--link", "serial", "--vlan", "1"]).unwrap_err();
    assert!(e.to_string().contains("--vlan 1"), "{e}");
    let e = config(&["-r", "10M", "-u", "-l", "0"]).unwrap_err();
    assert!(e.to_string().starts_with("-l 0"), "{e}");
    let odd = config(&["-r", "10M", "--ipv4-options", "3"]).unwrap();
    assert!(measure(&odd).is_err(), "the model refuses 3 option bytes");
}

/// Issue 30: a library caller computes seed 004's ceiling (10 Mbit/s half duplex, an ACK
/// per segment, no timestamps: about 1,104 KiB/s of goodput) with the constructors and
/// `measure` alone, and a link the flags could not be given is refused as they refuse it.
#[test]
fn a_library_caller_runs_an_envelope() {
    let rate = BitRate::from_bits_per_second(10_000_000);
    let plain = measure(&Config::ethernet(rate)).unwrap();
    assert!(plain.result.explain.is_none());
    let seed_004 = EnvelopeParams {
        duplex: Duplex::Half,
        ack_every: 1,
        transport: Transport::Tcp { timestamps: false },
        ..*Config::ethernet(rate).params()
    };
    let doc = measure(&Config::link(seed_004).unwrap().with_explain()).unwrap();
    let kib = doc.result.envelope.goodput_bytes_per_second / 1024.0;
    assert!((kib / 1104.0 - 1.0).abs() < 0.01, "{kib}");
    assert!(doc.result.explain.is_some_and(|lines| lines.len() > 5));
    assert!(kib < plain.result.envelope.goodput_bytes_per_second / 1024.0);
    let refused = |params: EnvelopeParams| format!("{:#}", Config::link(params).unwrap_err());
    let base = *Config::ethernet(rate).params();
    let udp = EnvelopeParams {
        transport: Transport::Udp,
        ..base
    };
    assert!(
        refused(EnvelopeParams {
            udp_payload: Some(0),
            ..udp
        })
        .starts_with("-l 0")
    );
    assert!(
        refused(EnvelopeParams {
            ack_every: 1,
            ..udp
        })
        .contains("--ack-every 1")
    );
    assert!(
        refused(EnvelopeParams {
            udp_payload: Some(100),
            ..base
        })
        .contains("give -u")
    );
    let q_in_q_in_q = LinkLayer::Ethernet { vlan_tags: 3 };
    assert!(
        refused(EnvelopeParams {
            link: q_in_q_in_q,
            ..base
        })
        .contains("--vlan 3")
    );
    // The model's own rule stays the measure's, as for the flags.
    let tiny = Config::link(EnvelopeParams { mtu: 20, ..base }).unwrap();
    assert!(measure(&tiny).is_err());
}

#[test]
fn contradictory_flags_are_refused() {
    assert!(parse(&["-r", "10M", "-l", "100"]).is_err(), "-l needs -u");
    assert!(parse(&["-r", "10M", "-u", "--no-timestamps"]).is_err());
    assert!(parse(&["-r", "10M", "--vlan", "3"]).is_err());
    assert!(parse(&["-r", "10M", "-f", "x"]).is_err());
}
