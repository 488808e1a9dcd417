//! `--metrics-file`: results in the Prometheus text format, checked by Prometheus' own linter
//! where it is installed (scripts/install-deps.sh installs it).

use std::process::Command;

use super::util::{ChildGuard, assert_one_line_error, wirespeed};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `promtool check metrics` on `text`: None when promtool is not installed, else its findings.
fn promtool_findings(text: &str) -> Option<String> {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// `--metrics-file` of a command that needs a lab or an agent (`lab status NAME`, `diagnose
/// --peer`), checked where that test already runs it: promtool finds nothing to say and
/// `series` holds `want` (within a part in a billion). Returns the file's text.
pub(crate) fn assert_metrics_file(path: &std::path::Path, series: &str, want: f64) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let got = sample(&text, series);
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
        "{series} is {got}, the document says {want}:\n{text}"
    );
    match promtool_findings(&text) {
        Some(findings) => assert!(findings.trim().is_empty(), "promtool: {findings}\n{text}"),
        None => eprintln!(
            "promtool is not installed: {} was not linted",
            path.display()
        ),
    }
    text
}

/// The value of the sample `series` (name and labels exactly as written) in `text`.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        .parse()
        .unwrap()
}

/// Each sample line's label names, for the checks promtool does not make.
fn label_names(line: &str) -> Vec<&str> {
    let Some((_, rest)) = line.split_once('{') else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut rest = rest;
    while let Some((name, after)) = rest.split_once("=\"") {
        names.push(name.trim_start_matches(','));
        // Skip the value: up to the first quote not escaped.
        let mut escaped = false;
        let end = after
            .char_indices()
            .find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map_or(after.len(), |(i, _)| i);
        rest = after.get(end + 1..).unwrap_or("");
        if rest.starts_with('}') {
            break;
        }
    }
    names
}

/// What one command's file must hold: series (exact name and labels) and the document's figure
/// each equals, converted to the series' unit.
type Expect = fn(&serde_json::Value) -> Vec<(String, f64)>;

fn case(args: Vec<&str>, expect: Expect) -> (Vec<&str>, Expect) {
    (args, expect)
}

fn at(doc: &serde_json::Value, pointer: &str) -> f64 {
    let v = doc
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the document"));
    v.as_f64()
        .or_else(|| v.as_bool().map(|b| f64::from(u8::from(b))))
        .unwrap_or_else(|| panic!("{pointer} is {v}"))
}

/// The loaded responsiveness of a latency document, NaN when it has none. RPM weighs the
/// trimmed means of three probe kinds (TCP connect, request/response on a new and on a kept
/// connection); on a busy machine the 0.5 s loaded window can end before one of them has an
/// answered probe in it (seen at load 9): the document then has no loaded RPM (null), which
/// this accepts only with that evidence in the document, and the file must leave the series
/// out.
fn loaded_rpm(doc: &serde_json::Value) -> f64 {
    if !doc["result"]["rpm_loaded"].is_null() {
        return at(doc, "/result/rpm_loaded");
    }
    let kinds = doc["result"]["kinds"].as_array().expect("the probe kinds");
    let unanswered = |kind: &str| {
        kinds.iter().any(|k| {
            k["kind"] == kind && k["loaded"]["probes"].as_u64() == k["loaded"]["lost"].as_u64()
        })
    };
    assert!(
        ["tcp_connect", "rr_new_connection", "rr_kept_connection"]
            .iter()
            .any(|kind| unanswered(kind)),
        "no loaded RPM though every kind it weighs had loaded probes answered: {kinds:?}"
    );
    f64::NAN
}

/// Every command that prints a document writes `--metrics-file`: promtool finds nothing to say,
/// no label is named twice or after an array index, and the headline figures equal the JSON's
/// (rates in bytes per second, delays in seconds). One short run per command.
#[test]
fn every_commands_metrics_file_passes_promtool_and_matches_its_json() {
    let dir = scratch("metrics");
    let d = |name: &str| dir.join(name).display().to_string();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let bellovin = format!("{examples}/bellovin-1992.toml");
    let ih_probe = format!("{examples}/bellovin-1992-ih-probe.json");
    let (sweep_runs, probe_doc) = (d("sweep.jsonl"), d("probe.json"));
    let mut promtool_missing = false;
    let cases: Vec<(Vec<&str>, Expect)> = vec![
        case(vec!["tcp", "-t", "0.3", "-P", "2"], |doc| {
            vec![
                (
                    "wirespeed_tcp_received_bytes_per_second{direction=\"upload\"}".into(),
                    at(doc, "/result/end/sum_received/bits_per_second") / 8.0,
                ),
                (
                    "wirespeed_tcp_received_bytes{direction=\"upload\"}".into(),
                    at(doc, "/result/end/sum_received/bytes"),
                ),
            ]
        }),
        case(vec!["udp", "-t", "0.3", "-b", "10M", "--bidir"], |doc| {
            vec![(
                "wirespeed_udp_received_bytes_per_second{direction=\"download\"}".into(),
                at(
                    doc,
                    "/result/end/sum_received_bidir_reverse/bits_per_second",
                ) / 8.0,
            )]
        }),
        case(
            vec!["latency", "--idle", "0.5s", "-t", "0.5s", "-P", "1"],
            |doc| {
                let kind = doc["result"]["kinds"][0]["kind"]
                    .as_str()
                    .unwrap()
                    .to_string();
                vec![
                    (
                        format!(
                            "wirespeed_latency_round_trip_seconds{{kind=\"{kind}\",phase=\"idle\",quantile=\"0.5\"}}"
                        ),
                        at(doc, "/result/kinds/0/idle/p50_ms") / 1e3,
                    ),
                    (
                        "wirespeed_latency_responsiveness_round_trips_per_minute{phase=\"loaded\"}"
                            .into(),
                        loaded_rpm(doc),
                    ),
                ]
            },
        ),
        case(vec!["latency", "--rr", "-t", "0.5s"], |doc| {
            vec![(
                "wirespeed_latency_rr_transactions".into(),
                at(doc, "/result/transactions"),
            )]
        }),
        case(
            vec![
                "sweep",
                "--snd",
                "64KiB,256KiB",
                "--rcv",
                "64KiB",
                "--reps",
                "1",
                "-n",
                "256KiB",
                "--results",
                &sweep_runs,
            ],
            |doc| {
                vec![(
                    "wirespeed_sweep_runs_planned".into(),
                    at(doc, "/result/runs_planned"),
                )]
            },
        ),
        case(
            vec![
                "load",
                "--local",
                "1",
                "--lengths",
                "512",
                "--settle",
                "0.1s",
                "--transmit",
                "0.5s",
                "--measure",
                "0.3s",
                "--cooldown",
                "0.1s",
            ],
            |doc| {
                vec![(
                    "wirespeed_load_packets_per_second{hosts=\"1\",lengths=\"512\",source=\"measured\"}"
                        .into(),
                    at(doc, "/result/rows/0/measured/packets_per_second"),
                )]
            },
        ),
        case(
            vec!["mesh", "--local", "2", "-t", "0.2", "--probes", "2"],
            |doc| {
                vec![(
                "wirespeed_mesh_rate_bytes_per_second{source=\"local1\",destination=\"local2\"}"
                    .into(),
                at(doc, "/result/rate_matrix_bits_per_second/0/1") / 8.0,
            )]
            },
        ),
        case(
            vec!["probe", "127.0.0.1", "-c", "4", "--sizes", "28..1500:736"],
            |doc| vec![("wirespeed_probe_answers".into(), at(doc, "/result/answers"))],
        ),
        case(vec!["model", "fit", &probe_doc], |_| Vec::new()),
        case(vec!["model", "predict", &bellovin, "cbnewsa"], |doc| {
            vec![(
                "wirespeed_model_predicted_fixed_delay_seconds{group=\"one-way total\"}".into(),
                at(doc, "/result/prediction/total/fixed_ms") / 1e3,
            )]
        }),
        case(
            vec!["model", "compare", &bellovin, "ih2", &ih_probe],
            |doc| {
                vec![(
                    "wirespeed_model_anomalous{hop=\"2\"}".into(),
                    at(doc, "/result/segments/1/anomalous"),
                )]
            },
        ),
        case(vec!["envelope", "--rate", "10M"], |doc| {
            vec![(
                "wirespeed_envelope_goodput_bytes_per_second".into(),
                at(doc, "/result/goodput_bits_per_second") / 8.0,
            )]
        }),
        case(
            vec![
                "sim",
                "csma",
                "--hosts",
                "2",
                "-l",
                "64",
                "-t",
                "0.2s",
                "--replications",
                "2",
            ],
            |doc| {
                vec![(
                    "wirespeed_sim_utilization_ratio{hosts=\"2\",lengths=\"64\"}".into(),
                    at(doc, "/result/points/0/utilization/mean"),
                )]
            },
        ),
        case(vec!["sim", "link"], |doc| {
            vec![(
                "wirespeed_sim_goodput_bytes_per_second{from=\"A\",to=\"B\"}".into(),
                at(doc, "/result/directions/0/goodput_bytes_per_second"),
            )]
        }),
        case(
            vec![
                "deploy",
                "kubernetes",
                "--allow-destination",
                "198.18.0.0/15",
            ],
            |doc| {
                vec![(
                    "wirespeed_deploy_predicted_mesh_seconds".into(),
                    at(doc, "/result/predicted_mesh_seconds"),
                )]
            },
        ),
        case(vec!["lab", "status"], |doc| {
            vec![(
                "wirespeed_lab_status_labs".into(),
                doc["result"]["labs"].as_array().unwrap().len() as f64,
            )]
        }),
        case(vec!["autoneg", "auto", "100-full"], |doc| {
            vec![
                (
                    "wirespeed_autoneg_outcome{class=\"duplex_mismatch\"}".into(),
                    f64::from(u8::from(
                        doc["result"]["outcome"]["class"] == "duplex_mismatch",
                    )),
                ),
                (
                    "wirespeed_autoneg_speed_bytes_per_second{end=\"a\"}".into(),
                    at(doc, "/result/a/speed_mbps") * 1e6 / 8.0,
                ),
            ]
        }),
        case(vec!["autoneg", "--decode", "0x41E1"], |_| {
            vec![("wirespeed_autoneg_link_code_word".into(), 16865.0)]
        }),
        case(vec!["diagnose", "lo", "--interval", "50ms"], |doc| {
            vec![(
                "wirespeed_diagnose_interval_seconds{interface=\"lo\"}".into(),
                at(doc, "/result/interfaces/0/interval_seconds"),
            )]
        }),
        case(vec!["reproduce", "envelope", "--no-lab"], |doc| {
            vec![(
                "wirespeed_reproduce_rows{experiment=\"envelope\",verdict=\"within\"}".into(),
                at(doc, "/result/within"),
            )]
        }),
        case(vec!["reproduce", "--list"], |_| {
            vec![(
                "wirespeed_reproduce_available{experiment=\"boggs\"}".into(),
                1.0,
            )]
        }),
    ];
    for (n, (args, expect)) in cases.into_iter().enumerate() {
        let file = d(&format!("{n}.prom"));
        let mut args = args.clone();
        args.extend(["--json", "--metrics-file", &file]);
        let run = wirespeed(&args);
        assert_eq!(run.status, 0, "{args:?}: {}", run.stderr);
        if args[0] == "probe" {
            std::fs::write(&probe_doc, &run.stdout).unwrap();
        }
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.lines().filter(|l| !l.starts_with('#')).count() > 4,
            "{args:?}: {text}"
        );
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let names = label_names(line);
            for (i, name) in names.iter().enumerate() {
                assert!(!names[..i].contains(name), "{args:?}: {name} twice: {line}");
                assert!(!name.contains("index"), "{args:?}: an index label: {line}");
            }
            let name = line.split(['{', ' ']).next().unwrap_or("");
            assert!(!name.contains("bits"), "{args:?}: not in bytes: {line}");
        }
        for (series, want) in expect(&doc) {
            if want.is_nan() {
                // No figure in the document: none in the file either.
                assert!(
                    !text.lines().any(|l| l.starts_with(&format!("{series} "))),
                    "{args:?}: {series} is in the file, the document has no figure:\n{text}"
                );
                continue;
            }
            let got = sample(&text, &series);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
                "{args:?}: {series} is {got}, the document says {want}"
            );
        }
        match promtool_findings(&text) {
            Some(findings) => assert!(findings.trim().is_empty(), "{args:?}: {findings}"),
            None => promtool_missing = true,
        }
    }
    if promtool_missing {
        eprintln!(
            "promtool is not installed: the files were not linted (scripts/install-deps.sh installs it)"
        );
    }
    // Replaced whole: no temporary file is left beside them.
    let stray: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_metrics_file_is_refused_before_the_test_runs() {
    let run = wirespeed(&[
        "tcp",
        "-t",
        "30",
        "--metrics-file",
        "/nonexistent-dir/x.prom",
    ]);
    assert_one_line_error(&run, "--metrics-file");
}

/// A plain HTTP/1.0 GET on loopback: the body, or None if nothing answered.
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(c, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    c.read_to_string(&mut out).ok()?;
    out.split_once("\r\n\r\n").map(|(_, body)| body.to_string())
}

#[test]
fn a_real_prometheus_scrapes_the_agents_counters() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("prometheus is not installed: the scrape is not tested");
        return;
    }
    let agent = super::util::ServeProcess::start(&["--metrics", "127.0.0.1:0"]);
    let metrics_port: u16 = agent
        .stderr()
        .lines()
        .find_map(|l| l.strip_prefix("wirespeed agent: metrics on http://127.0.0.1:"))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no metrics address in {}", agent.stderr()));
    let port = agent.port.to_string();
    let run = wirespeed(&["tcp", "127.0.0.1", "-p", &port, "-t", "0.3"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let page = http_get(metrics_port, "/metrics").expect("the metrics page");
    if let Some(findings) = promtool_findings(&page) {
        assert!(findings.trim().is_empty(), "promtool: {findings}");
    }

    let dir = scratch("prometheus");
    let prom_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        dir.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: wirespeed\n    \
             static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n"
        ),
    )
    .unwrap();
    let _prometheus = ChildGuard::new(
        Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("prometheus starts"),
    );
    // Scrapes every second; a busy 2-core machine may take a while to start it: poll, bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let completed = loop {
        let body = http_get(
            prom_port,
            "/api/v1/query?query=wirespeed_agent_sessions_finished_total",
        );
        let found = body
            .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok())
            .and_then(|v| {
                v["data"]["result"].as_array().and_then(|series| {
                    series.iter().find_map(|s| {
                        (s["metric"]["outcome"] == "completed")
                            .then(|| s["value"][1].as_str().map(str::to_string))
                            .flatten()
                    })
                })
            });
        if let Some(v) = found {
            break v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus never returned the agent's counter"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    assert_eq!(completed, "1", "sessions completed as Prometheus stored it");
    drop(_prometheus);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A GET with an optional bearer token: the status line and the body.
fn http_get_with(port: u16, path: &str, token: Option<&str>) -> (String, String) {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(c, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n").unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// `serve --metrics` with a token and probes: `/healthz` open to the kubelet, the other pages
/// behind the token, and `/probe` running a module toward the agent itself.
#[test]
fn the_agents_metrics_port_serves_healthz_the_token_and_probes() {
    let dir = scratch("metrics-token");
    let token = "s3cret-token-0123456789";
    std::fs::write(dir.join("token"), format!("{token}\n")).unwrap();
    let token_file = dir.join("token").display().to_string();
    let agent = super::util::ServeProcess::start(&[
        "--metrics",
        "127.0.0.1:0",
        "--metrics-token-file",
        &token_file,
        "--probe-targets",
        "127.0.0.0/8",
        "--probe-module",
        "tcp_1s=tcp:1s",
    ]);
    let metrics_port: u16 = agent
        .stderr()
        .lines()
        .find_map(|l| l.strip_prefix("wirespeed agent: metrics on http://127.0.0.1:"))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no metrics address in {}", agent.stderr()));
    let (status, body) = http_get_with(metrics_port, "/healthz", None);
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    let (status, _) = http_get_with(metrics_port, "/metrics", None);
    assert!(status.starts_with("HTTP/1.1 401"), "{status}");
    let (status, page) = http_get_with(metrics_port, "/metrics", Some(token));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(page.contains("wirespeed_agent_refused_total{reason=\"authentication\"} 0\n"));
    assert!(
        !page.contains("client=\""),
        "client addresses only with --metrics-clients"
    );
    let probe = format!("/probe?target=127.0.0.1:{}&module=tcp_1s", agent.port);
    let (status, page) = http_get_with(metrics_port, &probe, Some(token));
    assert_eq!(status, "HTTP/1.1 200 OK", "{page}");
    assert!(page.contains("\nprobe_success 1\n"), "{page}");
    assert!(
        page.contains("probe_tcp_received_bits_per_second "),
        "{page}"
    );
    let (status, _) = http_get_with(
        metrics_port,
        "/probe?target=198.51.100.1&module=tcp_1s",
        Some(token),
    );
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    drop(agent);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_metrics_and_probe_flags_are_one_line_each() {
    let dir = scratch("metrics-bad");
    std::fs::write(dir.join("short"), "abc\n").unwrap();
    let short = dir.join("short").display().to_string();
    let run = wirespeed(&[
        "serve",
        "-p",
        "0",
        "--metrics",
        "127.0.0.1:0",
        "--metrics-token-file",
        &short,
    ]);
    assert_one_line_error(&run, "16 to 512");
    let run = wirespeed(&[
        "serve",
        "-p",
        "0",
        "--metrics",
        "127.0.0.1:0",
        "--probe-targets",
        "127.0.0.0/8",
        "--probe-module",
        "tcp_5s",
    ]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("NAME=KIND:DURATION"), "{}", run.stderr);
    let run = wirespeed(&["serve", "-p", "0", "--probe-targets", "127.0.0.0/8"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--metrics"), "{}", run.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `serve --metrics $(POD_IP):9210` on a node without an address becomes `--metrics :9210`:
/// refused with one line naming what was given and why it is empty, never a bind to every
/// address. The agent is given 10 s to refuse and is killed (by its own PID) if it is still
/// running then, which fails the test instead of hanging it.
#[test]
fn a_metrics_address_without_its_host_is_refused_not_bound_to_every_address() {
    use std::time::{Duration, Instant};
    for (given, needle) in [
        (":9210", "expanded to nothing"),
        ("", "expanded to nothing"),
        ("$(POD_IP):9210", "never expanded"),
        ("localhost:9210", "numeric address"),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(["serve", "-p", "0", "--metrics", given])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve --metrics {given:?} was still running after 10 s: it bound");
        }
        let out = child.wait_with_output().unwrap();
        let run = super::util::Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        };
        assert_one_line_error(&run, needle);
        assert!(
            run.stderr.contains(&format!("'{given}'")),
            "names what it was given: {}",
            run.stderr
        );
        assert!(run.stderr.contains("--metrics"), "{}", run.stderr);
    }
}
