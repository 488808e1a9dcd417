//! `wirespeed load` end to end on loopback: a series over 1..3 in-process agents with short
//! schedules (results file, resume, plots, JSON), three `wirespeed serve` processes with one
//! killed mid-test, and bad input in one line.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use crate::throughput::Server;
use crate::util::{Run, assert_one_line_error, wirespeed};

const SHORT: [&str; 8] = [
    "--settle",
    "0.2s",
    "--transmit",
    "1s",
    "--measure",
    "0.5s",
    "--cooldown",
    "0.1s",
];

fn json(run: &Run) -> serde_json::Value {
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[test]
fn seed_000_fig_3_3_series_on_loopback_with_three_agents_resumes() {
    // The rates scale with the hosts within 25%: alone in the lab lane (at 4 test threads
    // beside the labs and loopback transfers it missed).
    let _lane = crate::lab::LAB_LOCK.alone();
    let dir = std::env::temp_dir().join(format!("ws-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("runs.jsonl");
    let plots = dir.join("plots");
    let f = file.to_str().unwrap();
    let mut args = vec![
        "load",
        "--local",
        "3",
        "--lengths",
        "6/2",
        "--rate",
        "20M",
        "--sink",
        "1",
        "--model-time",
        "0.3s",
        "--json",
        "--results",
        f,
        "--plot",
        plots.to_str().unwrap(),
    ];
    args.extend(SHORT);
    let doc = json(&wirespeed(&args));
    assert_eq!(doc["schema"], "wirespeed.load.v1");
    let rows = doc["result"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let typed = crate::findings::assert_typed(&doc.to_string());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["hosts"], i + 1);
        assert_eq!(r["complete"], true, "{r}");
        let m = &r["measured"];
        // 20 Mbit/s offered per host for the 0.5 s window: the total scales with the hosts,
        // less what a generator descheduled past its catch-up gave up of the window (each
        // host reports it, and a share over 1% is warned of: the machine, not the network).
        let bps = m["bits_per_second"].as_f64().unwrap();
        let hosts = r["per_host"].as_array().unwrap();
        let offered: f64 = hosts
            .iter()
            .map(|h| 20e6 * (1.0 - h["skipped_share_of_window"].as_f64().unwrap()))
            .sum();
        assert!(
            (bps - offered).abs() < 0.25 * offered,
            "{bps} vs {offered} offered: {r}"
        );
        for h in hosts {
            if h["skipped_share_of_window"].as_f64().unwrap() > 0.01 {
                let warned = typed.findings.iter().any(|f| {
                    f.kind == "generator_behind"
                        && f.evidence["hosts"] == i + 1
                        && f.evidence["host"] == h["host"]
                });
                assert!(warned, "{h} not warned of: {:?}", typed.findings);
            }
        }
        let jain = m["jain_fairness"].as_f64().unwrap();
        assert!(jain > 0.8 && jain <= 1.0 + 1e-9, "{jain}");
        assert!(m["delay_mean_seconds"].as_f64().unwrap() > 0.0);
        assert!(r["loss_at_sink"].as_f64().is_some(), "the sink counted");
        let model = &r["model_shared_10mbit"];
        let model_bps = model["bits_per_second"].as_f64().unwrap();
        assert!(model_bps > 1e6 && model_bps <= 10e6, "{model_bps}");
    }
    assert!(
        rows[0]["measured"]["excess_delay_seconds"]
            .as_f64()
            .unwrap()
            .abs()
            < 1e-12
    );
    for fig in [
        "fig3-3-bit-rate",
        "fig3-5-packet-rate",
        "fig3-9-excess-delay",
    ] {
        let svg = std::fs::read_to_string(plots.join(format!("{fig}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("6/2"), "{fig}");
    }
    // Plan + one line per test; cut the last test off and resume: only it runs again.
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    std::fs::write(&file, lines[..3].join("\n") + "\n").unwrap();
    let doc = json(&wirespeed(&[
        "load",
        "--local",
        "3",
        "--resume",
        f,
        "--no-model",
        "--json",
    ]));
    let rows = doc["result"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2]["complete"], true);
    assert!(rows[2]["model_shared_10mbit"].is_null());
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert!(
        typed
            .findings
            .iter()
            .any(|f| f.kind == "loopback_not_a_medium"),
        "{:?}",
        typed.findings
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 4);
    // Every test is in the file, so `--brief` runs none: one headline per test, from the file.
    let run = wirespeed(&[
        "load",
        "--local",
        "3",
        "--resume",
        f,
        "--no-model",
        "--brief",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    for (i, line) in lines.iter().enumerate() {
        let hosts = if i == 0 {
            "1 host".to_string()
        } else {
            format!("{} hosts", i + 1)
        };
        assert!(
            line.starts_with(&format!("load: {hosts}, length mix 6/2: ")),
            "{line}"
        );
        assert!(
            line.contains(" Mbit/s, ") && line.contains(" packets/s, delay "),
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_agent_killed_mid_test_is_reported_and_the_others_kept() {
    let servers: Vec<Server> = (0..3).map(|_| Server::start(&[])).collect();
    let agents: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port()))
        .collect();
    let mut args = vec![
        "load",
        "--hosts",
        "3",
        "--lengths",
        "512",
        "--rate",
        "10M",
        "--no-model",
        "--json",
        "--timeout",
        "2s",
    ];
    for a in &agents {
        args.extend(["--agent", a.as_str()]);
    }
    // Transmitting from about 0.3 s to 2.3 s after the start: the kill at 0.7 s lands inside
    // even on a loaded machine (and before the start, it is a dead agent, reported the same).
    args.extend([
        "--settle",
        "0.2s",
        "--transmit",
        "2s",
        "--measure",
        "1s",
        "--cooldown",
        "0.1s",
    ]);
    let mut servers = servers;
    let mut victim = servers.remove(1);
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        victim.child.kill().unwrap();
        let _ = victim.child.wait();
    });
    let doc = json(&wirespeed(&args));
    killer.join().unwrap();
    let row = &doc["result"]["rows"][0];
    assert_eq!(row["complete"], false);
    assert_eq!(row["reporting_hosts"], 2);
    assert!(row["per_host"][1]["error"].is_string(), "{row}");
    assert!(row["per_host"][0]["packets"].as_u64().unwrap() > 0);
    assert!(row["per_host"][2]["packets"].as_u64().unwrap() > 0);
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("incomplete test (3 hosts x 512): host 2"),
        "{warnings}"
    );
    let typed = crate::findings::assert_typed(&doc.to_string());
    assert!(
        typed.findings.iter().any(|f| f.kind == "incomplete_test"
            && f.evidence["host"] == 2
            && f.evidence["hosts"] == 3),
        "{:?}",
        typed.findings
    );
}

#[test]
fn bad_input_is_one_line() {
    let r = wirespeed(&["load", "--lengths", "64,jumbo"]);
    assert_one_line_error(&r, "\"jumbo\" is not a packet length");
    let r = wirespeed(&["load", "--local", "2", "--hosts", "1-3"]);
    assert_one_line_error(&r, "there are 2 agents");
    let r = wirespeed(&["load", "--local", "1", "--measure", "30s"]);
    assert_one_line_error(&r, "longer than the transmission");
    let r = wirespeed(&["load", "--sink", "here"]);
    assert_one_line_error(&r, "is not a sink");

    // An agent that welcomes in protocol version 99.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let fake = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 512];
        let _ = s.read(&mut buf);
        let body = br#"{"type":"welcome","protocol_version":99,"software":"wirespeed 9"}"#;
        s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
        s.write_all(body).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    });
    let agent = format!("127.0.0.1:{port}");
    let r = wirespeed(&["load", "--agent", &agent, "--lengths", "64"]);
    assert_one_line_error(&r, "protocol version 99, this controller version 1");
    fake.join().unwrap();
}

#[test]
fn raw_ethernet_refusals_are_one_line() {
    let short = [
        "--settle",
        "0.1s",
        "--transmit",
        "0.4s",
        "--measure",
        "0.2s",
        "--cooldown",
        "0.1s",
    ];
    let mut args = vec![
        "load",
        "--local",
        "1",
        "--raw",
        "ws-nope0",
        "--lengths",
        "512",
    ];
    args.extend(short);
    let r = wirespeed(&args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert_one_line_error(&r, "no interface \"ws-nope0\" on the agent's host");
    } else {
        assert_one_line_error(&r, "need root (CAP_NET_RAW)");
    }
    let mut args = vec!["load", "--local", "2", "--raw", "--sink", "1"];
    args.extend(short);
    assert_one_line_error(
        &wirespeed(&args),
        "--raw sends each host's frames to its own",
    );
    assert_one_line_error(
        &wirespeed(&["load", "--raw", "a/b"]),
        "is not an interface name",
    );
}
