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

#[test]
fn encode_then_decode_round_trips() {
    let doc = json(&["autoneg", "--encode", "10-half,100-full", "--pause", "-J"]);
    let word = doc["result"]["word"].as_str().unwrap().to_string();
    assert_eq!(word, "0x0521");
    let back = json(&["autoneg", "--decode", &word, "--json"]);
    assert_eq!(
        back["result"]["advertised"],
        serde_json::json!(["100-full", "10-half"])
    );
    assert_eq!(
        back["result"]["base_page"]["selector"]["name"],
        "IEEE 802.3"
    );
    assert_eq!(back["result"]["fields"].as_array().unwrap().len(), 12);
}

#[test]
fn capability_reveals_a_slow_link() {
    let doc = json(&["autoneg", "100-half", "auto", "--capable-a", "10/100", "-J"]);
    assert_eq!(doc["result"]["outcome"]["class"], "slower_than_possible");
    assert_eq!(doc["result"]["outcome"]["possible"], "100-full");
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
