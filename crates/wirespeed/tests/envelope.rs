use crate::util::{assert_one_line_error, wirespeed};

#[test]
fn explain_prints_checkable_arithmetic() {
    let run = wirespeed(&["envelope", "--rate", "10M", "--explain"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for step in [
        "10,000,000 bit/s / 8 = 1,250,000 bytes/s",
        "1500 MTU - 20 IPv4 - 32 TCP with timestamps = 1448 bytes",
        "1518 frame + 8 preamble + 12 gap = 1538 wire bytes",
        "2896 / 3076",
        "1,104 KB/s",
    ] {
        assert!(
            run.stdout.contains(step),
            "{step:?} missing from:\n{}",
            run.stdout
        );
    }
}

#[test]
fn seed_004_ceiling_from_the_command_line() {
    let run = wirespeed(&[
        "envelope",
        "-r",
        "10M",
        "--duplex",
        "half",
        "--ack-every",
        "1",
        "--no-timestamps",
        "-J",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema"], "wirespeed.envelope.v1");
    let kib = doc["result"]["goodput_bytes_per_second"].as_f64().unwrap() / 1024.0;
    assert!((kib / 1104.0 - 1.0).abs() < 0.01, "{kib}");
    assert_eq!(doc["parameters"]["rate_bits_per_second"], 10_000_000);
}

#[test]
fn json_with_rtt_has_the_pipe() {
    let run = wirespeed(&[
        "envelope",
        "-r",
        "1G",
        "--rtt",
        "10ms",
        "--json",
        "--explain",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["parameters"]["rtt_seconds"], 0.01);
    assert!(doc["result"]["pipe"]["bdp_payload_bytes"].as_f64().unwrap() > 1e6);
    assert!(doc["result"]["explain"].as_array().unwrap().len() > 5);
    assert!(doc["host"]["kernel"].is_string());
}

#[test]
fn format_letters_pick_the_unit() {
    let run = wirespeed(&["envelope", "-r", "10M", "-f", "K"]);
    assert!(run.stdout.contains("KiB/s"), "{}", run.stdout);
    let run = wirespeed(&["envelope", "-r", "10M", "-f", "m"]);
    assert!(run.stdout.contains("9.415 Mbit/s"), "{}", run.stdout);
}

#[test]
fn ds0_serialization() {
    let run = wirespeed(&[
        "envelope", "-r", "56k", "--link", "serial", "-u", "-l", "972",
    ]);
    assert!(run.stdout.contains("142.9 ms"), "{}", run.stdout);
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    assert_one_line_error(
        &wirespeed(&["envelope", "--rate", "10X"]),
        "is not a bit rate",
    );
    assert_one_line_error(
        &wirespeed(&["envelope", "--rate", "10M", "--bogus"]),
        "--bogus",
    );
    assert_one_line_error(
        &wirespeed(&["envelope", "--rate", "10M", "--mtu", "20"]),
        "--mtu 1500",
    );
    assert_one_line_error(&wirespeed(&["envelope"]), "--rate");
    assert_one_line_error(
        &wirespeed(&["envelope", "-r", "1G", "--rtt", "soon"]),
        "duration",
    );
    assert_one_line_error(&wirespeed(&["frobnicate"]), "frobnicate");
}

#[test]
fn help_lists_only_working_commands() {
    let run = wirespeed(&["--help"]);
    assert_eq!(run.status, 0);
    assert!(run.stdout.contains("envelope"));
}
