use wirespeed::autoneg::{self, AutonegReport, Config, Params};
use wirespeed_model::autoneg::{Abilities, Outcome, Partner, Technology};

use crate::util::{assert_one_line_error, wirespeed};

fn json(args: &[&str]) -> serde_json::Value {
    let run = wirespeed(args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("one JSON document")
}

#[test]
fn seed_003_appendix_a_duplex_mismatch_from_the_command_line() {
    // Appendix A row 3: NIC auto, switch forced 100 full.
    let doc = json(&["autoneg", "auto", "100-full", "--json"]);
    assert_eq!(doc["schema"], "wirespeed.autoneg.v1");
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert_eq!(typed.findings[0].kind, "duplex_mismatch");
    assert_eq!(typed.findings[0].evidence["half_duplex_end"], "a");
    assert_eq!(typed.findings[0].evidence["full_duplex_end"], "b");
    let r = &doc["result"];
    assert_eq!(r["a"]["technology"], "100-half");
    assert_eq!(r["a"]["how"], "parallel_detection");
    assert_eq!(r["b"]["technology"], "100-full");
    assert_eq!(r["outcome"]["class"], "duplex_mismatch");
    assert_eq!(r["outcome"]["half_duplex_end"], "a");
    assert_eq!(r["a_base_page"], "0x01E1");
    assert!(r["b_base_page"].is_null());
    assert!(
        doc["verdicts"][0]
            .as_str()
            .unwrap()
            .starts_with("DUPLEX MISMATCH")
    );
}

#[test]
fn seed_003_appendix_a_speed_mismatch_is_no_link() {
    let run = wirespeed(&["autoneg", "10-half", "100-half"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("verdict: NO LINK: speed mismatch"),
        "{}",
        run.stdout
    );
}

#[test]
fn decode_describes_every_bit() {
    let run = wirespeed(&["autoneg", "--decode", "0x41E1"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for line in [
        "link code word 0x41E1 = 0100 0001 1110 0001",
        "selector: IEEE 802.3",
        "A3      D8         1  100BASE-TX full duplex",
        "Ack     D14        1",
        "summary: IEEE 802.3: 100BASE-TX full duplex, 100BASE-TX, 10BASE-T full duplex, 10BASE-T; no remote fault; acknowledged; no next page",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing from\n{}",
            run.stdout
        );
    }
}

/// An encoded page decodes to what it advertises; through the library (issue 30: Clause 28's
/// arithmetic alone, so no process is spawned).
#[test]
fn encode_then_decode_round_trips() {
    let modes = |m: &str| m.parse::<Abilities>().unwrap();
    let encode = Params::Encode {
        modes: modes("10-half,100-full"),
        pause: true,
        asym_pause: false,
        remote_fault: false,
        ack: false,
    };
    let AutonegReport::Word(encoded) = autoneg::measure(&Config::new(encode).unwrap()).result
    else {
        panic!("a word")
    };
    assert_eq!(encoded.word.to_string(), "0x0521");
    let AutonegReport::Word(back) = autoneg::measure(&Config::decode(encoded.word)).result else {
        panic!("a word")
    };
    assert_eq!(back.advertised, Some(modes("10-half,100-full")));
    assert_eq!(back.base_page.selector.name(), "IEEE 802.3");
    assert_eq!(back.fields.len(), 12);
}

/// Hardware that could do more than a forced end uses: the link is slower than possible.
#[test]
fn capability_reveals_a_slow_link() {
    let partner = |p: &str| p.parse::<Partner>().unwrap();
    let a = partner("100-half").capable_of("10/100".parse().unwrap());
    let doc = autoneg::measure(&Config::resolve(a, partner("auto")).unwrap());
    let AutonegReport::Resolve(r) = &doc.result else {
        panic!("a resolution")
    };
    assert!(
        matches!(
            r.resolution.outcome,
            Outcome::SlowerThanPossible {
                possible: Technology::Base100TxFull,
                ..
            }
        ),
        "{:?}",
        r.resolution
    );
}

#[test]
fn bad_autoneg_input_is_one_line() {
    assert_one_line_error(
        &wirespeed(&["autoneg", "fast", "auto"]),
        "is not a link partner",
    );
    assert_one_line_error(&wirespeed(&["autoneg", "--decode", "0x1FFFF"]), "16 bits");
    assert_one_line_error(
        &wirespeed(&["autoneg", "--decode", "zz"]),
        "not a link code word",
    );
    assert_one_line_error(&wirespeed(&["autoneg", "auto"]), "PARTNER");
    assert_one_line_error(
        &wirespeed(&["autoneg", "--encode", "10-fast"]),
        "not a link mode",
    );
}

#[test]
fn help_lists_autoneg_and_diagnose() {
    let run = wirespeed(&["--help"]);
    assert_eq!(run.status, 0);
    assert!(run.stdout.contains("autoneg"), "{}", run.stdout);
    assert!(run.stdout.contains("diagnose"), "{}", run.stdout);
    let run = wirespeed(&["diagnose", "--help"]);
    assert!(run.stdout.contains("--interval"), "{}", run.stdout);
    assert!(run.stdout.contains("--peer"), "{}", run.stdout);
}
