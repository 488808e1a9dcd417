use wirespeed_model::autoneg::resolve::End;
use wirespeed_model::autoneg::verdict::*;
use wirespeed_model::autoneg::{Duplex, Technology};
use wirespeed_model::autoneg::{Partner, resolve};

fn judged(a: &str, b: &str) -> AutonegVerdict {
    verdict(&resolve(a.parse::<Partner>().unwrap(), b.parse().unwrap()))
}

fn auto() -> Partner {
    "auto".parse().unwrap()
}

#[test]
fn seed_003_appendix_a_forced_full_against_auto_is_a_mismatch_at_the_auto_end() {
    let v = judged("auto", "100-full");
    assert_eq!(
        v,
        AutonegVerdict::DuplexMismatch {
            half_duplex_end: End::A,
            full_duplex_end: End::B,
        }
    );
    assert!(
        v.to_string()
            .starts_with("DUPLEX MISMATCH: A runs half duplex, B full duplex."),
        "{v}"
    );
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["kind"], "duplex_mismatch");
    assert_eq!(json["half_duplex_end"], "a");
}

#[test]
fn two_auto_ends_agree_on_the_best_mode() {
    let v = judged("auto", "auto");
    assert_eq!(
        v,
        AutonegVerdict::Ok {
            speed_bits_per_second: Some(100_000_000),
            duplex: Some(Duplex::Full),
        }
    );
    assert_eq!(v.to_string(), "ok: both ends run 100 Mbit/s full duplex");
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["kind"], "ok", "the outcome's class in the result");
    assert_eq!(json["duplex"], "full");
}

#[test]
fn forced_speeds_that_differ_give_no_link_and_a_slow_forced_pair_says_so() {
    let v = judged("10-full", "100-full");
    assert!(matches!(v, AutonegVerdict::NoLink { .. }), "{v:?}");
    assert!(v.to_string().starts_with("NO LINK: "), "{v}");
    let limited = Partner::auto("10-full,10-half".parse().unwrap())
        .capable_of(wirespeed_model::autoneg::Abilities::fast_ethernet());
    let v = verdict(&resolve(limited, auto()));
    assert_eq!(
        v,
        AutonegVerdict::SlowerThanPossible {
            running: Technology::Base10TFull,
            possible: Technology::Base100TxFull,
        }
    );
    assert_eq!(
        v.to_string(),
        "SLOWER THAN POSSIBLE: the link runs 10BASE-T full duplex but both ends could run 100BASE-TX full duplex; let both ends auto-negotiate their full abilities"
    );
    assert_eq!(
        serde_json::to_value(&v).unwrap()["kind"],
        "slower_than_possible"
    );
}
