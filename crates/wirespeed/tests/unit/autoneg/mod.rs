use wirespeed::autoneg::measure::measure;
use wirespeed::autoneg::result::{AutonegReport, Params};
use wirespeed::autoneg::*;
use wirespeed_model::autoneg::{Abilities, Partner};

fn parse(argv: &[&str]) -> Result<AutonegArgs, clap::Error> {
    crate::unit::parse_flags("autoneg", argv)
}

#[test]
fn one_job_at_a_time() {
    assert!(parse(&[]).is_err(), "a job is required");
    assert!(parse(&["auto"]).is_err(), "two partners");
    assert!(parse(&["auto", "100-full"]).is_ok());
    assert!(parse(&["--decode", "0x01E1"]).is_ok());
    assert!(parse(&["--decode", "0x01E1", "--encode", "10/100"]).is_err());
    assert!(parse(&["auto", "auto", "--decode", "0x1"]).is_err());
    assert!(
        parse(&["--pause", "--decode", "0x1"]).is_err(),
        "--pause needs --encode"
    );
    assert!(parse(&["--capable-a", "10/100", "--decode", "0x1"]).is_err());
}

/// Each job's config: --capable-a widens what A's hardware could do beyond what it
/// advertises (B keeps its own), and the encode flags reach the page.
#[test]
fn the_config_is_the_job() {
    let config = |argv: &[&str]| Config::try_from(&parse(argv).unwrap()).unwrap();
    let Params::Resolve { a, b } =
        *config(&["auto:10-half", "auto", "--capable-a", "10/100/1000"]).job()
    else {
        panic!("a resolution")
    };
    let modes = |m: &str| m.parse::<Abilities>().unwrap();
    assert_eq!(a.config, "auto:10-half".parse::<Partner>().unwrap().config);
    assert_eq!(a.capable, modes("10/100/1000").union(modes("10-half")));
    assert_ne!(
        a.capable,
        modes("10-half"),
        "A could do more than it advertises"
    );
    assert_eq!(b, "auto".parse::<Partner>().unwrap());
    assert!(matches!(
        *config(&["--encode", "10/100", "--pause"]).job(),
        Params::Encode {
            pause: true,
            ack: false,
            ..
        }
    ));
    assert!(matches!(
        *config(&["--decode", "0x01E1"]).job(),
        Params::Decode { .. }
    ));
}

/// Issue 30: a library caller resolves seed 003's Appendix A row 3 (a NIC negotiating, the
/// switch forced to 100 full: a duplex mismatch, A at half) and is refused what the flags
/// cannot say. tests/autoneg.rs encodes and decodes pages this way.
#[test]
fn a_library_caller_runs_autoneg() {
    use wirespeed_model::autoneg::Technology;
    let partner = |p: &str| p.parse::<Partner>().unwrap();
    let doc = measure(&Config::resolve(partner("auto"), partner("100-full")).unwrap());
    let AutonegReport::Resolve(r) = &doc.result else {
        panic!("a resolution: {:?}", doc.result)
    };
    assert_eq!(r.a_base_page.map(|w| w.bits()), Some(0x01E1));
    assert!(r.b_base_page.is_none(), "a forced end sends no page");
    assert_eq!(doc.verdicts.len(), 1);
    assert!(
        doc.verdicts[0].starts_with("DUPLEX MISMATCH"),
        "{:?}",
        doc.verdicts
    );
    let refused = |job: Params| format!("{:#}", Config::new(job).unwrap_err());
    let mute = Partner::auto(Abilities::NONE);
    assert!(
        refused(Params::Resolve {
            a: mute,
            b: partner("auto")
        })
        .contains("partner A")
    );
    let short = Partner {
        capable: Abilities::NONE.with(Technology::Base10THalf),
        ..partner("auto")
    };
    assert!(
        refused(Params::Resolve {
            a: partner("auto"),
            b: short
        })
        .contains("partner B")
    );
    let nothing = Params::Encode {
        modes: Abilities::NONE,
        pause: false,
        asym_pause: false,
        remote_fault: false,
        ack: false,
    };
    assert!(refused(nothing).contains("--encode"));
}

#[test]
fn values_reach_the_model() {
    let a = parse(&["auto", "10-half", "--capable-b", "10/100"]).unwrap();
    assert_eq!(a.partners.len(), 2);
    assert_eq!(a.capable_b, Some(Abilities::fast_ethernet()));
    let a = parse(&["--encode", "10/100", "--pause", "--ack"]).unwrap();
    assert!(a.pause && a.ack && !a.asym_pause);
    assert!(parse(&["--decode", "0x10000"]).is_err());
    assert!(parse(&["fast", "auto"]).is_err());
}
