mod brief;
mod iperf3;
mod measure;
mod metrics;
mod text;

use wirespeed::throughput::*;
use wirespeed_net::{Amount, Direction, Protocol};

use clap::Parser;

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: ThroughputArgs,
}

/// The library's loopback test is the one the command runs for the same flags.
#[test]
fn loopback_config_is_what_the_flags_ask_for() {
    let from_flags = parse(&["-t", "2", "-i", "0"])
        .unwrap()
        .config(Protocol::Tcp)
        .unwrap();
    let built = Config::loopback_tcp(2.0);
    assert_eq!(from_flags.spec, built.spec);
    assert_eq!(
        (from_flags.remote, from_flags.repeat),
        (built.remote, built.repeat)
    );
}

fn parse(argv: &[&str]) -> Result<ThroughputArgs, clap::Error> {
    Wrapper::try_parse_from(std::iter::once("tcp").chain(argv.iter().copied())).map(|w| w.args)
}

#[test]
fn n_is_buffers_of_l_or_a_byte_size() {
    let spec = parse(&["-n", "2048", "-l", "8192"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap();
    assert_eq!(
        spec.amount,
        Amount::Bytes(16_777_216),
        "seed 002: 2048 buffers of 8192"
    );
    let spec = parse(&["-n", "16MiB"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap();
    assert_eq!(spec.amount, Amount::Bytes(16_777_216));
    assert!(parse(&["-n", "lots"]).is_err());
    assert!(parse(&["-n", "1", "-t", "1"]).is_err());
}

#[test]
fn direction_and_options_reach_the_spec() {
    let spec = parse(&[
        "-R", "-P", "3", "-w", "256KiB", "-C", "reno", "-M", "1200", "-N", "-A", "0,1",
    ])
    .unwrap()
    .spec(Protocol::Tcp)
    .unwrap();
    assert_eq!(spec.direction, Direction::Receive);
    assert_eq!(spec.streams, 3);
    assert_eq!(spec.window_bytes, Some(262_144));
    assert_eq!(spec.congestion.as_deref(), Some("reno"));
    assert_eq!(spec.mss_bytes, Some(1200));
    assert!(spec.nodelay);
    assert_eq!(spec.agent_cpu, Some(1));
    assert!(parse(&["-R", "--bidir"]).is_err());
}

#[test]
fn udp_rate_defaults_and_zero_means_unlimited() {
    let a = parse(&[]).unwrap();
    assert_eq!(
        a.spec(Protocol::Udp).unwrap().rate_bits_per_second,
        1_000_000
    );
    assert_eq!(a.spec(Protocol::Udp).unwrap().length_bytes, 1472);
    let a = parse(&["-b", "0"]).unwrap();
    assert_eq!(a.spec(Protocol::Udp).unwrap().rate_bits_per_second, 0);
    assert_eq!(
        a.spec(Protocol::Tcp)
            .unwrap()
            .max_pacing_rate_bits_per_second,
        None,
        "tcp -b 0: no cap, as iperf3's"
    );
    let a = parse(&["-b", "10M", "-l", "8"]).unwrap();
    assert!(
        a.spec(Protocol::Udp)
            .unwrap_err()
            .to_string()
            .contains("-l 8")
    );
}

#[test]
fn tcp_b_is_a_per_stream_cap_in_the_spec() {
    let spec = parse(&["-b", "5M", "-P", "2", "-R"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap();
    assert_eq!(spec.max_pacing_rate_bits_per_second, Some(5_000_000));
    assert_eq!(
        spec.rate_bits_per_second, 0,
        "the UDP send rate stays unset"
    );
    let udp = parse(&["-b", "5M"]).unwrap().spec(Protocol::Udp).unwrap();
    assert_eq!(udp.max_pacing_rate_bits_per_second, None);
    assert_eq!(udp.rate_bits_per_second, 5_000_000);
    let e = parse(&["-b", "5M", "--no-pacing"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap_err();
    assert!(e.to_string().contains("--no-pacing"), "{e}");
    let e = parse(&["-b", "5"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap_err();
    assert!(e.to_string().starts_with("-b 5 bit/s"), "{e}");
}

#[test]
fn gso_is_required_refused_or_automatic() {
    let auto = parse(&[]).unwrap().spec(Protocol::Udp).unwrap();
    assert!(!auto.gso && !auto.no_gso, "by default the sender decides");
    let on = parse(&["--gso"]).unwrap().spec(Protocol::Udp).unwrap();
    assert!(on.gso && !on.no_gso);
    let off = parse(&["--no-gso"]).unwrap().spec(Protocol::Udp).unwrap();
    assert!(off.no_gso && !off.gso);
    assert!(parse(&["--gso", "--no-gso"]).is_err());
    let tcp = parse(&["--no-gso"]).unwrap().spec(Protocol::Tcp);
    assert!(tcp.unwrap_err().to_string().contains("wirespeed udp"));
}

#[test]
fn no_pacing_is_a_tcp_option_carried_in_the_spec() {
    let paced = parse(&[]).unwrap().spec(Protocol::Tcp).unwrap();
    assert!(!paced.no_pacing, "senders are paced by default");
    let unpaced = parse(&["--no-pacing"])
        .unwrap()
        .spec(Protocol::Tcp)
        .unwrap();
    assert!(unpaced.no_pacing);
    let udp = parse(&["--no-pacing"]).unwrap().spec(Protocol::Udp);
    assert!(udp.unwrap_err().to_string().contains("wirespeed tcp"));
}

#[test]
fn affinity_parses() {
    assert_eq!(
        "3".parse::<Affinity>().unwrap(),
        Affinity {
            client: 3,
            agent: None
        }
    );
    assert_eq!(
        "0,1".parse::<Affinity>().unwrap(),
        Affinity {
            client: 0,
            agent: Some(1)
        }
    );
    assert!("x".parse::<Affinity>().is_err());
}
