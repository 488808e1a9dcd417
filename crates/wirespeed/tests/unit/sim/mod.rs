mod link;
mod metrics;
mod verdicts;

use std::time::Duration;
use wirespeed::common::flags::{parse_hosts, parse_lengths};
use wirespeed::sim::result::Net;
use wirespeed::sim::*;
use wirespeed_model::BitRate;
use wirespeed_sim::{Arrivals, HostModel, LengthMix, Placement};

fn parse(argv: &[&str]) -> Result<CsmaArgs, clap::Error> {
    crate::unit::parse_flags("csma", argv)
}

#[test]
fn host_lists_and_ranges() {
    assert_eq!(parse_hosts("1-3,8").unwrap().0, [1, 2, 3, 8]);
    assert_eq!(parse_hosts("24").unwrap().0, [24]);
    assert!(parse_hosts("0-3").is_err());
    assert!(parse_hosts("5-2").is_err());
    assert!(parse_hosts("x").is_err());
}

#[test]
fn length_lists() {
    assert_eq!(parse_lengths("seed").unwrap().0.len(), 9);
    let l = parse_lengths("64,6/2,64:3+1536:1").unwrap().0;
    assert_eq!(l[0], LengthMix::Fixed { bytes: 64 });
    assert_eq!(l[1], LengthMix::seed_ratio(6, 2));
    assert!(matches!(&l[2], LengthMix::Weighted { lengths } if lengths.len() == 2));
    assert!(parse_lengths("big").is_err());
}

#[test]
fn cable_lengths_and_latencies() {
    assert!((parse_length("3000ft").unwrap() - 914.4).abs() < 1e-9);
    assert_eq!(parse_length("2.5km").unwrap(), 2500.0);
    assert!(parse_length("far").is_err());
    let (lo, hi) = parse_latency("75us-100us").unwrap();
    assert_eq!((lo.as_micros(), hi.as_micros()), (75, 100));
    assert_eq!(
        parse_latency("100us").unwrap().0,
        Duration::from_micros(100)
    );
    assert!(parse_latency("100us-75us").is_err());
}

#[test]
fn flags_reach_the_scenario() {
    let s = parse(&[
        "--hosts",
        "4",
        "-l",
        "1536",
        "-r",
        "100M",
        "--net",
        "short",
        "--load",
        "0.5",
        "--burst",
        "4",
        "--buffers",
        "3",
        "--interrupt-latency",
        "10us",
        "--cycle-time",
        "0ns",
        "--tap-delay",
        "500ns",
        "--discard-excessive",
        "-t",
        "1s",
        "--seed",
        "9",
        "--clusters",
        "3",
        "--cable",
        "100m",
    ])
    .unwrap()
    .scenario()
    .unwrap();
    assert_eq!(s.mac.bits_per_second, 100_000_000);
    assert_eq!(s.cable.placement, Placement::Clusters { clusters: 3 });
    assert_eq!(s.cable.length_m, 100.0);
    assert_eq!(
        s.arrivals,
        Arrivals::Bursty {
            load: 0.5,
            mean_burst: 4.0
        }
    );
    assert_eq!(s.host.buffers, 3);
    assert_eq!(s.host.interrupt_min_ns, 10_000);
    assert_eq!(s.host.cycle_ps, 0);
    assert_eq!(s.cable.tap_delay_ns, 500.0);
    let titan = parse(&[]).unwrap().scenario().unwrap().host;
    assert_eq!(titan, HostModel::TITAN, "the defaults are the seed's Titan");
    assert!(!s.host.retry_excessive_collisions);
    assert_eq!(s.measure_ns, 1_000_000_000);
    assert_eq!(s.seed, 9);
}

/// The config carries the grid and the checked scenario; a refusal of either (or of
/// --plot) is the config's, before any point runs.
#[test]
fn the_config_holds_the_grid_and_its_scenario() {
    let c = Config::try_from(
        &parse(&[
            "--hosts",
            "1-3",
            "-l",
            "64,6/2",
            "--replications",
            "2",
            "--threads",
            "2",
        ])
        .unwrap(),
    )
    .unwrap();
    assert_eq!(c.hosts, [1, 2, 3]);
    assert_eq!(c.lengths.len(), 2);
    assert_eq!((c.replications, c.threads), (2, Some(2)));
    assert_eq!(c.base.hosts, 1, "the first point's");
    assert_eq!(c.base.lengths, LengthMix::Fixed { bytes: 64 });
    let refused =
        |argv: &[&str]| format!("{:#}", Config::try_from(&parse(argv).unwrap()).unwrap_err());
    assert!(refused(&["-r", "1G"]).contains("10M and 100M only"));
    assert!(refused(&["-l", "4000"]).contains("--oversize"));
    assert!(refused(&["--clusters", "0"]).contains("--clusters 0"));
    assert!(refused(&["--plot", "/nonexistent-dir/plots"]).contains("--plot"));
}

/// Issue 30: a library caller simulates a small grid of the seed's long net with the
/// constructor and `measure` alone (its host counts sorted as the flags' list is), and
/// is refused what the flags refuse. tests/sim.rs runs the seed's figures this way.
#[test]
fn a_library_caller_runs_a_simulation() {
    let config = Config::seed_long_net(vec![2, 1], vec![LengthMix::Fixed { bytes: 64 }])
        .and_then(|c| c.with_time(Duration::from_millis(20)))
        .map(|c| c.with_seed(7))
        .unwrap();
    let doc = measure(&config).unwrap();
    let hosts: Vec<usize> = doc.result.points.iter().map(|p| p.summary.hosts).collect();
    assert_eq!(hosts, [1, 2]);
    assert_eq!((doc.parameters.seed, doc.parameters.net), (7, Net::Long4));
    assert!(doc.result.points.iter().all(|p| p.summary.events > 0));
    let refused = |c: anyhow::Result<Config>| format!("{:#}", c.unwrap_err());
    let one = || vec![LengthMix::Fixed { bytes: 64 }];
    assert!(refused(Config::seed_long_net(vec![0], one())).contains("host counts"));
    assert!(refused(Config::seed_long_net(vec![1], vec![])).contains("no packet lengths"));
    let big = vec![LengthMix::Fixed { bytes: 4000 }];
    assert!(refused(Config::seed_long_net(vec![1], big)).contains("--oversize"));
    let seed = parse_lengths("seed").unwrap().0;
    assert!(
        Config::seed_long_net(vec![1], seed).is_ok(),
        "the seed's nine go to 4000"
    );
    let gig = BitRate::from_bits_per_second(1_000_000_000);
    let c = || Config::seed_long_net(vec![1], one()).unwrap();
    assert!(refused(c().with_rate(gig)).contains("10M and 100M only"));
    assert!(refused(c().with_replications(0)).contains("--replications 0"));
    assert!(refused(c().with_threads(0)).contains("--threads 0"));
    assert!(c().with_time(Duration::ZERO).is_err());
}

#[test]
fn bad_values_are_refused() {
    assert!(parse(&["-r", "1G"]).unwrap().scenario().is_err());
    assert!(
        parse(&["-l", "4000"]).unwrap().scenario().is_err(),
        "needs --oversize"
    );
    assert!(
        parse(&["-l", "4000", "--oversize"])
            .unwrap()
            .scenario()
            .is_ok()
    );
    assert!(parse(&["-l", "seed"]).unwrap().scenario().is_ok());
    assert!(parse(&["--burst", "3"]).is_err(), "--burst needs --load");
    assert!(parse(&["--velocity", "2"]).unwrap().scenario().is_err());
    assert!(parse(&["--replications", "0"]).is_err());
    assert!(
        parse(&["--interrupt-latency", "1s"])
            .unwrap()
            .scenario()
            .is_err(),
        "a routine of 15 million instructions"
    );
    assert!(
        parse(&["--interrupt-latency", "1s", "--cycle-time", "0ns"])
            .unwrap()
            .scenario()
            .is_ok()
    );
}
