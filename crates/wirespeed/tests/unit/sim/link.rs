use clap::Parser;
use std::time::Duration;
use wirespeed::sim::link::*;
use wirespeed_model::BitRate;
use wirespeed_sim::MacDuplex;

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: LinkArgs,
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    let args = Wrapper::try_parse_from(std::iter::once("link").chain(argv.iter().copied()))?.args;
    Config::try_from(&args)
}

/// The flags become the A-to-B scenario once, each duration in nanoseconds; a rate
/// outside seed 003's Table 2 is refused before anything is simulated.
#[test]
fn the_config_is_the_a_to_b_scenario() {
    let c = config(&["--a", "full", "--b", "half", "-r", "100M", "--rto", "50ms"]).unwrap();
    let s = &c.scenario;
    assert_eq!((s.sender, s.receiver), (MacDuplex::Full, MacDuplex::Half));
    assert_eq!(s.mac.bits_per_second, 100_000_000);
    assert_eq!(s.rto_ns, 50_000_000);
    assert_eq!(s.cable_m, 100.0);
    let e = config(&["-r", "1G"]).unwrap_err();
    assert!(format!("{e:#}").contains("10M and 100M only"), "{e:#}");
}

/// Issue 30: a library caller simulates seed 003's mismatch (A half, B full) with the
/// constructor and `measure` alone: the half end counts late collisions, the full end FCS
/// errors, and the verdict names the mismatch; a rate without a Table 2 set is refused.
#[test]
fn a_library_caller_runs_a_link() {
    let config = Config::duplex(MacDuplex::Half, MacDuplex::Full).with_time(Duration::from_secs(1));
    let doc = measure(&config).unwrap();
    let ab = &doc.result.directions[0];
    assert_eq!((ab.from, ab.from_duplex), ("A", MacDuplex::Half));
    assert!(ab.stats.sender.late_collisions > 0, "{:?}", ab.stats);
    assert!(ab.stats.receiver.fcs_errors > 0, "{:?}", ab.stats);
    assert!(
        doc.verdicts[0].starts_with("duplex mismatch"),
        "{:?}",
        doc.verdicts
    );
    let gig = BitRate::from_bits_per_second(1_000_000_000);
    let e = Config::duplex(MacDuplex::Full, MacDuplex::Full)
        .with_rate(gig)
        .unwrap_err();
    assert!(format!("{e:#}").contains("10M and 100M only"), "{e:#}");
}
