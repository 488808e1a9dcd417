//! `wirespeed probe` and `wirespeed model` end to end: loopback, a chain of namespaces this test
//! builds (198.18.0.0/15 and 2001:2::/48, names ws-...), the seed's model file, bad input.

use std::process::Command;

use crate::util::{Netns, assert_one_line_error, wirespeed};

const BIN: &str = env!("CARGO_BIN_EXE_wirespeed");

fn json(run: &crate::util::Run) -> serde_json::Value {
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("one JSON document")
}

#[test]
fn probe_loopback_v4_and_v6_fits_a_line() {
    for host in ["127.0.0.1", "::1"] {
        let doc = json(&wirespeed(&[
            "probe",
            host,
            "-c",
            "8",
            "--sizes",
            "64..1400:192",
            "--gap",
            "0",
            "--json",
        ]));
        assert_eq!(doc["schema"], "wirespeed.probe.v1");
        crate::findings::assert_typed(&doc.to_string());
        let r = &doc["result"];
        assert_eq!(r["answers"], 64);
        assert!(matches!(
            r["timestamps"].as_str(),
            Some("kernel_software" | "monotonic")
        ));
        assert!(r["timer_floor_seconds"].as_f64().unwrap() > 0.0);
        let hop = &r["hops"][0];
        assert_eq!(hop["destination"], true);
        assert_eq!(hop["sizes"].as_array().unwrap().len(), 8);
        let fit = &hop["fit"];
        // Loopback: a few microseconds one-way, far below a millisecond.
        let fixed = fit["one_way"]["fixed_ms"].as_f64().unwrap();
        assert!(fixed > 0.0 && fixed < 1.0, "{fit}");
        assert!(fit["bootstrap"]["intercept"]["low"].is_number());
        assert!(fit["split_half"]["slope"]["high"].is_number());
        assert_eq!(r["samples"].as_array().unwrap().len(), 64);
        // Root keeps the CPUs from halting for the run; anyone else is told why not.
        let wakeup = r["cpu_wakeup"].as_str().unwrap();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        assert!(
            wakeup.contains(if root {
                "kept from halting"
            } else {
                "may halt"
            }),
            "{wakeup}"
        );
    }
    let doc = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "2",
        "--sizes",
        "64",
        "--allow-cpu-idle",
        "--json",
    ]));
    assert!(
        doc["result"]["cpu_wakeup"]
            .as_str()
            .unwrap()
            .contains("allowed to halt")
    );
}

#[test]
fn probe_human_output_has_the_table_and_the_fit() {
    let run = wirespeed(&["probe", "127.0.0.1", "-c", "4", "--sizes", "28,500,1000"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for needle in [
        "min RTT ms",
        "one-way best case",
        "95% bootstrap",
        // Issue 31: the interval over independent stretches of the run, line and own cost.
        "95% over 4 time blocks: fixed [",
        "split-half",
        "Theil-Sen",
    ] {
        assert!(
            run.stdout.contains(needle),
            "{needle} missing:\n{}",
            run.stdout
        );
    }
    let run = wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "4",
        "--sizes",
        "28,500,1000",
        "--brief",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("probe 127.0.0.1: ")
            && run
                .stdout
                .contains(" of 12 probes answered; one-way best case ")
            && run.stdout.contains("/byte x bytes, loss "),
        "{}",
        run.stdout
    );
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--brief", "--json"]),
        "drop one of them",
    );
}

#[test]
fn probe_bad_input_is_one_line() {
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--sizes", "1..x"]),
        "28..1500:64",
    );
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--sizes", "1..5"]),
        "smallest IPv4 echo request, 28 bytes",
    );
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--sizes", "10"]),
        "smallest IPv4 echo request, 28 bytes",
    );
    assert_one_line_error(
        &wirespeed(&["probe", "no-such-host.invalid"]),
        "cannot resolve",
    );
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--sizes", "70000"]),
        "values run from 1 to 65535",
    );
    assert_one_line_error(
        &wirespeed(&["probe", "127.0.0.1", "--hops", "--until-stable", "0"]),
        "--until-stable 60s",
    );
    assert_one_line_error(
        &wirespeed(&[
            "probe",
            "127.0.0.1",
            "--hops",
            "--until-stable",
            "20m",
            "--max-time",
            "10m",
        ]),
        "raise --max-time or lower the budget",
    );
}

#[test]
fn model_predict_reproduces_seed_001_table_2() {
    let doc = json(&wirespeed(&[
        "model",
        "predict",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/bellovin-1992.toml"
        ),
        "cbnewsa",
        "--sizes",
        "40,1024",
        "--json",
    ]));
    assert_eq!(doc["schema"], "wirespeed.model.v1");
    let total = &doc["result"]["prediction"]["total"];
    assert!((total["fixed_ms"].as_f64().unwrap() - 20.7317).abs() < 0.005);
    assert!((total["per_byte_ms"].as_f64().unwrap() - 0.3001).abs() < 0.0001);
    let run = wirespeed(&[
        "model",
        "predict",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/bellovin-1992.toml"
        ),
        "cbnewsa",
    ]);
    assert!(
        run.stdout.contains("9 Ciscos, 3 Ethernets   6.1959"),
        "{}",
        run.stdout
    );
}

#[test]
fn model_bad_input_is_one_line() {
    let dir = std::env::temp_dir().join(format!("ws-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(
        &f,
        "[components]\n[paths.p]\nelements = [{ component = \"nope\" }]\n",
    )
    .unwrap();
    let run = wirespeed(&["model", "predict", f.to_str().unwrap(), "p"]);
    assert_one_line_error(&run, "no component 'nope'");
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bellovin-1992.toml"
    );
    assert_one_line_error(
        &wirespeed(&["model", "predict", example, "x"]),
        "no path 'x'",
    );
    assert_one_line_error(
        &wirespeed(&["model", "compare", example, "cbnewsa", f.to_str().unwrap()]),
        "is not JSON",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Three namespaces in a row with two routers between, made and removed by this test:
/// ws-a (198.18.1.1) - ws-r1 - ws-r2 - ws-b (198.18.3.2), and the same in 2001:2:0:N::/64.
struct Chain {
    names: Vec<String>,
    _namespaces: Vec<Netns>,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("ip(8) runs (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Chain {
    fn new(tag: &str, rate_limit_first_router: bool) -> Chain {
        let id = std::process::id();
        let names: Vec<String> = ["a", "r1", "r2", "b"]
            .iter()
            .map(|n| format!("ws-{tag}{n}-{id}"))
            .collect();
        let mut namespaces = Vec::new();
        for n in &names {
            let ns = Netns::add(n.clone());
            ns.ip(&["link", "set", "lo", "up"]);
            namespaces.push(ns);
        }
        let chain = Chain {
            names: names.clone(),
            _namespaces: namespaces,
        };
        for i in 0..3 {
            let (l, r) = (&names[i], &names[i + 1]);
            let (lname, rname) = (format!("wsl{i}"), format!("wsr{i}"));
            ip(&[
                "-n", l, "link", "add", &lname, "type", "veth", "peer", "name", &rname, "netns", r,
            ]);
            let net = i + 1;
            ip(&[
                "-n",
                l,
                "addr",
                "add",
                &format!("198.18.{net}.1/24"),
                "dev",
                &lname,
            ]);
            ip(&[
                "-n",
                r,
                "addr",
                "add",
                &format!("198.18.{net}.2/24"),
                "dev",
                &rname,
            ]);
            ip(&[
                "-n",
                l,
                "addr",
                "add",
                &format!("2001:2:0:{net}::1/64"),
                "dev",
                &lname,
                "nodad",
            ]);
            ip(&[
                "-n",
                r,
                "addr",
                "add",
                &format!("2001:2:0:{net}::2/64"),
                "dev",
                &rname,
                "nodad",
            ]);
            ip(&["-n", l, "link", "set", &lname, "up"]);
            ip(&["-n", r, "link", "set", &rname, "up"]);
        }
        // Routes: everything goes right from a, left from b; routers know both sides.
        let route = |ns: &str, dst4: &str, via4: &str, dst6: &str, via6: &str| {
            ip(&["-n", ns, "route", "add", dst4, "via", via4]);
            ip(&["-n", ns, "-6", "route", "add", dst6, "via", via6]);
        };
        route(
            &names[0],
            "198.18.0.0/16",
            "198.18.1.2",
            "2001:2::/48",
            "2001:2:0:1::2",
        );
        route(
            &names[1],
            "198.18.3.0/24",
            "198.18.2.2",
            "2001:2:0:3::/64",
            "2001:2:0:2::2",
        );
        route(
            &names[2],
            "198.18.1.0/24",
            "198.18.2.1",
            "2001:2:0:1::/64",
            "2001:2:0:2::1",
        );
        route(
            &names[3],
            "198.18.0.0/16",
            "198.18.3.1",
            "2001:2::/48",
            "2001:2:0:3::1",
        );
        for (k, r) in names[1..3].iter().enumerate() {
            let mut settings = vec!["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"];
            if !(rate_limit_first_router && k == 0) {
                // Our own routers answer every probe; the default (1/s) is tested separately.
                settings.extend(["net.ipv4.icmp_ratemask=0", "net.ipv6.icmp.ratelimit=0"]);
            }
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", r, "sysctl", "-q", "-w"])
                .args(&settings);
            assert!(cmd.status().unwrap().success());
        }
        chain
    }

    fn probe(&self, args: &[&str]) -> serde_json::Value {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.names[0], BIN, "probe"])
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "probe {args:?}: {stderr}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

#[test]
fn probe_discovers_every_hop_of_a_namespace_chain() {
    let chain = Chain::new("p", false);
    // Let a's processes open unprivileged ICMP datagram sockets, to test both socket kinds.
    let mut cmd = Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        &chain.names[0],
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.ping_group_range=0 2147483647",
    ]);
    assert!(cmd.status().unwrap().success());
    let v4 = ["198.18.1.2", "198.18.2.2", "198.18.3.2"];
    let v6 = ["2001:2:0:1::2", "2001:2:0:2::2", "2001:2:0:3::2"];
    for (dest, hops, socket) in [
        ("198.18.3.2", v4, "raw"),
        ("2001:2:0:3::2", v6, "raw"),
        ("198.18.3.2", v4, "dgram"),
        ("2001:2:0:3::2", v6, "dgram"),
    ] {
        let svg = std::env::temp_dir().join(format!("ws-plot-{}-{socket}.svg", std::process::id()));
        let doc = chain.probe(&[
            dest,
            "--plot",
            svg.to_str().unwrap(),
            "--socket",
            socket,
            "--hops",
            "--max-ttl",
            "6",
            "-c",
            "6",
            "--sizes",
            "64..1400:334",
            "--gap",
            "0",
        ]);
        let kind = if socket == "raw" { "raw" } else { "datagram" };
        assert_eq!(doc["result"]["socket"], kind);
        let picture = std::fs::read_to_string(&svg).unwrap();
        std::fs::remove_file(&svg).unwrap();
        assert_eq!(
            picture.matches("stroke-width=\"2\"").count(),
            3,
            "a line per hop"
        );
        let got = doc["result"]["hops"].as_array().unwrap();
        assert_eq!(got.len(), 3, "{dest}: {:#}", doc["result"]["hops"]);
        for (i, (h, want)) in got.iter().zip(hops).enumerate() {
            assert_eq!(h["ttl"], i + 1);
            assert_eq!(h["responder"], want);
            assert_eq!(h["destination"], i == 2);
            assert!(h["fit"]["one_way"]["fixed_ms"].is_number(), "{h:#}");
            assert!(h["increment"]["cost"]["per_byte_ms"].is_number());
        }
        // Routers quote at most 576 bytes (IPv4) or 1280 (IPv6) of the probe; the destination
        // echoes everything.
        let last = |h: &serde_json::Value| h["sizes"].as_array().unwrap().last().unwrap().clone();
        let quote = if dest.contains(':') { 1280 } else { 576 };
        assert_eq!(last(&got[0])["returned_bytes"], quote);
        assert_eq!(last(&got[2])["returned_bytes"], 1400);
    }
}

#[test]
fn probe_unreachable_and_filtered_hosts_are_one_line() {
    let chain = Chain::new("u", false);
    let exec = |args: &[&str]| {
        let out = Command::new("ip")
            .args(["netns", "exec", &chain.names[0], BIN, "probe"])
            .args(args)
            .output()
            .unwrap();
        crate::util::Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    };
    // r1 has no route to 198.18.200.0/24: it answers net unreachable.
    assert_one_line_error(
        &exec(&["198.18.200.1", "--timeout", "200ms"]),
        "is unreachable: 198.18.1.2 answered",
    );
    // No route at all from a to the other half of 198.18.0.0/15: the send itself fails.
    assert_one_line_error(&exec(&["198.19.0.1"]), "no route");
    // b ignores echo requests: ICMP filtered.
    let mut cmd = Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        &chain.names[3],
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.icmp_echo_ignore_all=1",
    ]);
    assert!(cmd.status().unwrap().success());
    assert_one_line_error(
        &exec(&[
            "198.18.3.2",
            "--hops",
            "--max-ttl",
            "4",
            "--timeout",
            "100ms",
        ]),
        "filters ICMP echo",
    );
}

#[test]
fn model_fit_then_compare_a_probed_chain_is_consistent() {
    let chain = Chain::new("m", false);
    let doc = chain.probe(&[
        "198.18.3.2",
        "--hops",
        "--max-ttl",
        "5",
        "-c",
        "6",
        "--sizes",
        "64..1400:334",
        "--gap",
        "0",
    ]);
    let dir = std::env::temp_dir().join(format!("ws-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let probe_file = dir.join("probe.json");
    std::fs::write(&probe_file, doc.to_string()).unwrap();
    let fitted = wirespeed(&["model", "fit", probe_file.to_str().unwrap()]);
    assert_eq!(fitted.status, 0, "{}", fitted.stderr);
    assert!(fitted.stdout.contains("hop1 = {"), "{}", fitted.stdout);
    let model_file = dir.join("fitted.toml");
    std::fs::write(&model_file, &fitted.stdout).unwrap();
    let cmp = json(&wirespeed(&[
        "model",
        "compare",
        model_file.to_str().unwrap(),
        "probed",
        probe_file.to_str().unwrap(),
        "--json",
    ]));
    let segments = cmp["result"]["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 3);
    assert!(segments.iter().all(|s| s["anomalous"] == false), "{cmp:#}");
    std::fs::remove_dir_all(&dir).unwrap();
    // --host-baseline: hop 1's own cost is its line minus this host's loopback line.
    let doc = chain.probe(&[
        "198.18.3.2",
        "--hops",
        "--max-ttl",
        "5",
        "-c",
        "4",
        "--sizes",
        "64..1400:334",
        "--gap",
        "0",
        "--host-baseline",
        "--wire",
        "1=1G",
    ]);
    let r = &doc["result"];
    let host = r["host_baseline"]["one_way"]["fixed_ms"].as_f64().unwrap();
    // Own costs difference the round-trip planes (perhop): half the plane's fixed cost.
    let hop1 = r["hops"][0]["fit"]["rtt_line"]["fixed_ms"]
        .as_f64()
        .unwrap()
        / 2.0;
    let inc = r["hops"][0]["increment"]["cost"]["fixed_ms"]
        .as_f64()
        .unwrap();
    assert!((inc - (hop1 - host)).abs() < 1e-12, "{r:#}");
    assert!(host > 0.0);
    // --wire 1=1G: the seed's transit, own cost minus 8 ns per byte of serialization.
    let inc_pb = r["hops"][0]["increment"]["cost"]["per_byte_ms"]
        .as_f64()
        .unwrap();
    let node_pb = r["hops"][0]["transit"]["node"]["per_byte_ms"]
        .as_f64()
        .unwrap();
    assert!((inc_pb - node_pb - 8e-6).abs() < 1e-15, "{r:#}");
    assert!(r["hops"][1]["transit"].is_null());
}

#[test]
fn probe_reports_icmp_rate_limiting_at_a_default_router() {
    let chain = Chain::new("r", true);
    let doc = chain.probe(&[
        "198.18.3.2",
        "--hops",
        "--max-ttl",
        "4",
        "-c",
        "10",
        "--sizes",
        "64,600,1200",
        "--gap",
        "0",
        "--timeout",
        "50ms",
    ]);
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("hop 1: rate limited")),
        "{warnings:#?}"
    );
    // The routers that answer freely are not called rate limited.
    assert!(doc["result"]["hops"][1]["rate_limit"].is_null());
}

#[test]
fn seed_001_section_4_misconfigured_router_from_the_command_line() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    let run = wirespeed(&[
        "model",
        "compare",
        &format!("{dir}bellovin-1992.toml"),
        "ih2",
        &format!("{dir}bellovin-1992-ih-probe.json"),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("ANOMALY"), "{}", run.stdout);
    assert!(
        run.stdout.contains("closest in the table: 'ciscobtw'"),
        "{}",
        run.stdout
    );
}

#[test]
fn probe_until_width_adds_rounds_until_the_interval_is_narrow() {
    let easy = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "8",
        "--sizes",
        "28,700,1400",
        "--until-width",
        "1s",
        "--json",
    ]));
    // Usually one round; a second when the first round's minima tie (a zero-width interval
    // is not taken as convergence).
    assert!(easy["result"]["rounds"].as_u64().unwrap() <= 3, "{easy:#}");
    assert_eq!(easy["result"]["converged"], true);
    let hard = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "4",
        "--sizes",
        "28,700,1400",
        "--until-width",
        "1ns",
        "--max-time",
        "1s",
        "--gap",
        "0",
        "--json",
    ]));
    let rounds = hard["result"]["rounds"].as_u64().unwrap();
    assert!(rounds > 1, "{rounds}");
    assert_eq!(hard["result"]["converged"], false);
    assert!(hard["result"]["samples"].as_array().unwrap().len() > 12);
    assert!(hard["warnings"].to_string().contains("--until-width"));
    let typed = crate::findings::assert_typed(&hard.to_string());
    assert!(
        typed
            .findings
            .iter()
            .any(|f| f.kind == "intervals_not_converged"
                && f.evidence["rounds"].as_u64() == Some(rounds)),
        "{:?}",
        typed.findings
    );
}

/// `--until-stable` on loopback (one hop, the destination): whatever ends the rounds, the
/// document and the finding say the same, a settled run names nothing unsettled and any other
/// names what was, and the rounds keep to the budget (another is begun only if, as long as
/// the last, it ends within it).
#[test]
fn probe_until_stable_says_what_stopped_the_rounds() {
    let doc = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "--hops",
        "--max-ttl",
        "2",
        "-c",
        "4",
        "--sizes",
        "28,700,1400",
        "--gap",
        "0",
        "--until-stable",
        "1s",
        "--json",
    ]));
    let r = &doc["result"];
    let stopped_by = r["stopped_by"].as_str().unwrap_or_else(|| panic!("{r:#}"));
    assert!(
        ["settled", "budget", "rounds", "cut"].contains(&stopped_by),
        "{stopped_by}"
    );
    let rounds = r["rounds"].as_u64().unwrap();
    assert!((1..=20).contains(&rounds), "{rounds}");
    let unsettled = r["unsettled"].as_array().map_or(0, Vec::len);
    assert_eq!(stopped_by == "settled", unsettled == 0, "{r:#}");
    assert_eq!(doc["parameters"]["until_stable_budget_seconds"], 1.0);
    let typed = crate::findings::assert_typed(&doc.to_string());
    let finding = typed
        .findings
        .iter()
        .find(|f| f.kind == "rounds_stopped")
        .unwrap_or_else(|| panic!("{:?}", typed.findings));
    assert_eq!(finding.evidence["stopped_by"], stopped_by);
    assert_eq!(finding.evidence["rounds"].as_u64(), Some(rounds));
    // Four probes of three sizes a round on loopback take milliseconds: a budget of 1 s is
    // never overrun by more than a round.
    let elapsed = r["elapsed_seconds"].as_f64().unwrap();
    assert!(elapsed < 1.0 + elapsed / rounds as f64 + 0.5, "{elapsed} s");
}

/// The bare `--until-stable` plans its budget from the path after the first round, at most
/// `--max-time`, and the document says what the path asked for; the rounds keep to it.
#[test]
fn probe_until_stable_without_a_budget_plans_it_from_the_path() {
    let doc = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "--hops",
        "--max-ttl",
        "2",
        "-c",
        "8",
        "--sizes",
        "28,700,1400",
        "--gap",
        "0",
        "--max-time",
        "4s",
        "--until-stable",
        "--json",
    ]));
    let r = &doc["result"];
    assert_eq!(doc["parameters"]["until_stable_budget_seconds"], 4.0);
    let budget = &r["budget"];
    assert_eq!(budget["from_path"], true, "{r:#}");
    assert_eq!(budget["cap_seconds"], 4.0, "{budget:#}");
    let seconds = budget["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0 && seconds <= 4.0, "{budget:#}");
    // What the path asked for, when it could say, is the budget unless the cap is lower.
    if let Some(path) = budget["path_seconds"].as_f64() {
        assert!((seconds - path.min(4.0)).abs() < 1e-9, "{budget:#}");
    }
    let elapsed = r["elapsed_seconds"].as_f64().unwrap();
    let rounds = r["rounds"].as_u64().unwrap() as f64;
    assert!(
        elapsed < seconds + elapsed / rounds + 0.5,
        "{elapsed} s of {budget:#}"
    );
    let typed = crate::findings::assert_typed(&doc.to_string());
    let finding = typed
        .findings
        .iter()
        .find(|f| f.kind == "rounds_stopped")
        .unwrap_or_else(|| panic!("{:?}", typed.findings));
    assert_eq!(finding.evidence["budget"], *budget);
}

#[test]
fn probe_without_privileges_says_which_socket_and_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    // A copy of the binary that user nobody can reach, run with every privilege dropped.
    let dir = std::env::temp_dir().join(format!("ws-nobody-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.join("wirespeed");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = crate::util::output_of_fresh_copy(|| {
        let mut setpriv = Command::new("setpriv");
        setpriv
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(["probe", "127.0.0.1", "--socket", "raw"]);
        setpriv
    });
    std::fs::remove_dir_all(&dir).unwrap();
    let run = crate::util::Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    assert_one_line_error(&run, "the raw socket was refused");
    assert!(run.stderr.contains("CAP_NET_RAW"), "{}", run.stderr);
}

#[test]
fn model_compare_a_path_without_hop_marks_against_a_loopback_probe() {
    let dir = std::env::temp_dir().join(format!("ws-cmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let probe = wirespeed(&[
        "probe",
        "127.0.0.1",
        "-c",
        "8",
        "--sizes",
        "28,700,1400",
        "--json",
    ]);
    let doc = json(&probe);
    let probe_file = dir.join("lo.json");
    std::fs::write(&probe_file, &probe.stdout).unwrap();
    let one_way = &doc["result"]["hops"][0]["fit"]["one_way"];
    // A model that says exactly what was measured, and one that is a second slower.
    let model_file = dir.join("lo.toml");
    std::fs::write(
        &model_file,
        format!(
            "[components]\nhost = {{ fixed_ms = {}, per_byte_ms = {} }}\nslow = {{ fixed_ms = 1000.0 }}\n\
             [paths.same]\nelements = [{{ component = \"host\" }}]\n\
             [paths.slow]\nelements = [{{ component = \"host\" }}, {{ component = \"slow\" }}]\n",
            one_way["fixed_ms"],
            // Loopback's per-byte cost is near zero and its fit can dip a hair below; a model
            // file holds no negative cost.
            one_way["per_byte_ms"].as_f64().unwrap().max(0.0)
        ),
    )
    .unwrap();
    let cmp = |path: &str| {
        json(&wirespeed(&[
            "model",
            "compare",
            model_file.to_str().unwrap(),
            path,
            probe_file.to_str().unwrap(),
            "--json",
        ]))
    };
    let same = cmp("same");
    assert_eq!(same["parameters"]["action"], "compare");
    assert_eq!(
        same["result"]["segments"][0]["anomalous"], false,
        "{same:#}"
    );
    let svg = dir.join("fig4.svg");
    let run = wirespeed(&[
        "model",
        "compare",
        model_file.to_str().unwrap(),
        "same",
        probe_file.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("measured (min RTT / 2)") && picture.contains("model &apos;same&apos;")
    );
    // Three measured sizes and three predicted, plus two legend marks.
    assert_eq!(picture.matches("<circle").count(), 8, "{picture}");
    let slow = cmp("slow");
    assert_eq!(slow["result"]["segments"][0]["anomalous"], true, "{slow:#}");
    assert!(
        slow["verdicts"][0]
            .as_str()
            .unwrap()
            .contains("outside tolerance")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn probe_leaves_out_probes_too_big_for_a_link_on_the_way() {
    let chain = Chain::new("t", false);
    // The r1 - r2 link carries 1280-byte packets at most.
    ip(&["-n", &chain.names[1], "link", "set", "wsl1", "mtu", "1280"]);
    ip(&["-n", &chain.names[2], "link", "set", "wsr1", "mtu", "1280"]);
    for (dest, by) in [
        ("198.18.3.2", "198.18.1.2"),
        ("2001:2:0:3::2", "2001:2:0:1::2"),
    ] {
        let doc = chain.probe(&[
            dest,
            "--hops",
            "--max-ttl",
            "5",
            "-c",
            "4",
            "--sizes",
            "64..1400:334",
            "--gap",
            "0",
        ]);
        let warnings = doc["warnings"].to_string();
        assert!(
            warnings.contains("too big for a link on the way"),
            "{warnings}"
        );
        assert!(
            warnings.contains(&format!("({by} reported MTU 1280)")),
            "{warnings}"
        );
        let hops = doc["result"]["hops"].as_array().unwrap();
        assert_eq!(hops.len(), 3);
        // Hop 1 is before the narrow link: every size answered. Beyond it, 1400 is lost and the
        // fit uses the rest.
        assert_eq!(hops[0]["sizes"][4]["lost"], 0);
        assert_eq!(hops[2]["sizes"][4]["lost"], 4, "{:#}", hops[2]["sizes"]);
        assert!(hops[2]["fit"]["one_way"]["fixed_ms"].is_number());
    }
}

#[test]
fn probe_udp_echo_against_the_agent_fits_a_line() {
    let server = crate::throughput::Server::start(&[]);
    let doc = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "--udp",
        "-p",
        &server.port(),
        "-c",
        "8",
        "--sizes",
        "52..1396:192",
        "--gap",
        "0",
        "--json",
    ]));
    let r = &doc["result"];
    assert_eq!(r["socket"], "udp_echo");
    assert_eq!(r["answers"], 64);
    let samples = r["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 64);
    for s in samples {
        // The agent sends back exactly what it got: never more.
        assert_eq!(s["returned_bytes"], s["sent_bytes"], "{s}");
    }
    let hop = &r["hops"][0];
    assert_eq!(hop["sizes"].as_array().unwrap().len(), 8);
    let fixed = hop["fit"]["one_way"]["fixed_ms"].as_f64().unwrap();
    assert!(fixed > 0.0 && fixed < 1.0, "{hop}");
    assert!(hop["fit"]["bootstrap"]["intercept"]["low"].is_number());
    // The fit is against bytes sent + returned: twice the probe size for an echo.
    assert_eq!(hop["sizes"][0]["sent_bytes"], 52, "{}", hop["sizes"][0]);
    assert_eq!(hop["sizes"][0]["returned_bytes"], 52);
    assert!(hop["sizes"][0]["min_rtt_ms"].as_f64().unwrap() > 0.0);
    // The discovery probe, the warm-up and the 64 probes were answered; nothing was dropped.
    let answered = r["echo"]["answered"].as_u64().unwrap();
    assert!(answered >= 65, "{}", r["echo"]);
    assert_eq!(r["echo"]["dropped"], 0);
}

#[test]
fn probe_udp_bad_input_is_one_line() {
    // Below the smallest UDP echo (IP 20 + UDP 8 + cookie and sequence 24).
    let server = crate::throughput::Server::start(&[]);
    let run = wirespeed(&[
        "probe",
        "127.0.0.1",
        "--udp",
        "-p",
        &server.port(),
        "--sizes",
        "40",
    ]);
    assert_one_line_error(&run, "52 bytes");
    // The agent alone has no ICMP socket or loopback line to choose.
    let run = wirespeed(&["probe", "127.0.0.1", "--udp", "--socket", "raw"]);
    assert_one_line_error(&run, "add --hops");
    let run = wirespeed(&["probe", "127.0.0.1", "--udp", "--host-baseline"]);
    assert_one_line_error(&run, "drop --host-baseline");
    // No agent on that port, alone or behind the hops.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port().to_string();
    drop(free);
    let run = wirespeed(&["probe", "127.0.0.1", "--udp", "-p", &port]);
    assert_one_line_error(&run, "wirespeed serve");
    let run = wirespeed(&["probe", "127.0.0.1", "--udp", "--hops", "-p", &port]);
    assert_one_line_error(&run, "wirespeed serve");
}

/// Issue 31: `--hops --udp` probes the hops with ICMP and the destination also with the
/// agent's whole echoes and short replies, interleaved; the short replies return a constant 68
/// bytes (IPv4: IP 20 + UDP 8 + cookie, sequence, residence and the request 40), never more
/// than sent, each with the agent's residence,
/// and the destination's per byte comes from the plane of both series (the JSON says so).
#[test]
fn probe_hops_udp_times_the_destination_with_short_replies() {
    let server = crate::throughput::Server::start(&[]);
    let doc = json(&wirespeed(&[
        "probe",
        "127.0.0.1",
        "--hops",
        "--udp",
        "-p",
        &server.port(),
        "-c",
        "8",
        "--sizes",
        "46..1346:260",
        "--gap",
        "0",
        "--json",
    ]));
    let r = &doc["result"];
    let samples = r["samples"].as_array().unwrap();
    let series = |name: &str| -> Vec<&serde_json::Value> {
        samples
            .iter()
            .filter(|s| s["series"].as_str().unwrap_or("probe") == name)
            .collect()
    };
    // ICMP at every size; the agent at the sizes that can ask for a short reply (68 bytes up).
    assert_eq!(series("probe").len(), 6 * 8);
    let (echo, short) = (series("agent_echo"), series("agent_short_reply"));
    assert_eq!((echo.len(), short.len()), (5 * 8, 5 * 8));
    for s in &echo {
        assert_eq!(s["returned_bytes"], s["sent_bytes"], "{s}");
    }
    for s in echo.iter().chain(&short) {
        assert!(s["agent_residence_ns"].is_u64(), "{s}");
    }
    for s in &short {
        assert_eq!(s["returned_bytes"], 68, "{s}");
        assert!(s["sent_bytes"].as_u64().unwrap() >= 68, "{s}");
        assert_eq!(s["ttl"], 1, "recorded at the destination's hop: {s}");
    }
    let hop = &r["hops"][0];
    assert_eq!(hop["destination"], true);
    assert_eq!(hop["fit"]["separation"], "separated", "{hop}");
    assert_eq!(hop["increment"]["per_byte_from"], "agent_short_replies");
    assert_eq!(r["echo"]["dropped"], 0, "{}", r["echo"]);
    // The text says which series measured it.
    let text = wirespeed(&[
        "probe",
        "127.0.0.1",
        "--hops",
        "--udp",
        "-p",
        &server.port(),
        "-c",
        "4",
        "--sizes",
        "100,700,1300",
        "--gap",
        "0",
    ]);
    assert_eq!(text.status, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .contains("per byte sent and returned from the agent's whole echoes and short replies"),
        "{}",
        text.stdout
    );
}

/// An agent of an older release as the client sees it: it speaks the handshake and opens an
/// echo, but its welcome does not name `+shortreply`. It serves one session on loopback and
/// records every control message the client sent and every datagram that reached its echo
/// port; it stops by itself after the session or after 20 s, whichever comes first.
struct AgentWithoutShortReplies {
    port: u16,
    seen: std::thread::JoinHandle<(Vec<String>, usize)>,
}

impl AgentWithoutShortReplies {
    fn start() -> AgentWithoutShortReplies {
        use std::time::{Duration, Instant};
        use wirespeed_net::control::echo::EchoMessage;
        use wirespeed_net::control::{
            Cookie, Message, PROTOCOL_VERSION, RESIDENCE_FEATURE, SHORT_REPLY_FEATURE,
            read_message, write_message,
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let echo = std::net::UdpSocket::bind("127.0.0.1:0").expect("a loopback UDP port");
        let seen = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(20);
            listener.set_nonblocking(true).unwrap();
            let mut stream = loop {
                match listener.accept() {
                    Ok((s, _)) => break s,
                    Err(_) if Instant::now() < until => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(e) => panic!("no client within 20 s: {e}"),
                }
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut kinds = Vec::new();
            while let Ok(message) = read_message(&mut stream) {
                kinds.push(match &message {
                    Message::Hello { software, .. } => {
                        assert!(
                            software.contains(SHORT_REPLY_FEATURE),
                            "the client asks for short replies: {software}"
                        );
                        "hello".to_string()
                    }
                    Message::Echo(e) => format!("echo {e:?}"),
                    other => other.kind().to_string(),
                });
                let answer = match message {
                    // The words of an agent from before short replies: residence only.
                    Message::Hello { .. } => Message::Welcome {
                        protocol_version: PROTOCOL_VERSION,
                        software: format!("wirespeed 0.0.9 {RESIDENCE_FEATURE}"),
                    },
                    Message::Echo(EchoMessage::Open { .. }) => Message::Echo(EchoMessage::Ready {
                        agent_port: echo.local_addr().unwrap().port(),
                        cookie: Cookie([7; 16]),
                    }),
                    Message::Echo(EchoMessage::Close) => Message::Echo(EchoMessage::Closed {
                        answered: 0,
                        dropped: 0,
                    }),
                    _ => break,
                };
                if write_message(&mut stream, &answer).is_err() {
                    break;
                }
            }
            echo.set_nonblocking(true).unwrap();
            let mut datagrams = 0;
            let mut buf = [0u8; 2048];
            while echo.recv_from(&mut buf).is_ok() {
                datagrams += 1;
            }
            (kinds, datagrams)
        });
        AgentWithoutShortReplies { port, seen }
    }
}

/// Issue 31: `--hops --udp` needs the agent's short replies; an agent that does not name
/// `+shortreply` in its welcome is refused as soon as the echo is opened, in one line that says
/// why and what to do, before any probe: its echo port gets no datagram, the session is closed
/// properly (the client's last word is the echo's close), and nothing is printed on stdout.
#[test]
fn probe_hops_udp_refuses_an_agent_without_short_replies() {
    let agent = AgentWithoutShortReplies::start();
    let run = wirespeed(&[
        "probe",
        "127.0.0.1",
        "--hops",
        "--udp",
        "-p",
        &agent.port.to_string(),
        "-c",
        "4",
        "--sizes",
        "100,700",
        "--json",
    ]);
    assert_one_line_error(&run, "does not answer short replies");
    assert!(
        run.stderr.contains("+shortreply")
            && run
                .stderr
                .contains("run the same wirespeed release on it, or drop --udp"),
        "the fix is named: {}",
        run.stderr
    );
    let (kinds, datagrams) = agent.seen.join().expect("the fake agent ends");
    let said: Vec<&str> = kinds
        .iter()
        .map(|k| k.split([' ', '{']).take(2).collect::<Vec<_>>().join(" "))
        .map(|k| match k.as_str() {
            "hello" => "hello",
            "echo Open" => "open",
            "echo Close" => "close",
            _ => "other",
        })
        .collect();
    assert_eq!(
        said,
        ["hello", "open", "close"],
        "the client's messages: {kinds:?}"
    );
    assert_eq!(datagrams, 0, "no probe reached the agent's echo port");
}
