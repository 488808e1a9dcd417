//! `--metrics-file`: results in the Prometheus text format, checked by Prometheus' own linter
//! where it is installed (scripts/install-deps.sh installs it).

use std::process::Command;

use super::util::{assert_one_line_error, wirespeed};

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

#[test]
fn results_written_as_metrics_pass_promtool_and_match_the_json() {
    let dir = scratch("metrics");
    let file = dir.join("tcp.prom");
    let run = wirespeed(&[
        "tcp",
        "-t",
        "0.5",
        "--json",
        "--metrics-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    // The received rate in the file is the document's, in bytes per second.
    let bps = doc["result"]["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("wirespeed_tcp_end_sum_received_bytes_per_second "))
        .unwrap_or_else(|| panic!("no received rate in {text}"));
    let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(
        (value - bps / 8.0).abs() <= 1e-6 * value.max(1.0),
        "{line} vs {bps}"
    );
    for command in [&["envelope", "--rate", "10M"][..], &["sim", "link"][..]] {
        let path = dir.join("other.prom");
        let mut args = command.to_vec();
        args.extend(["--metrics-file", path.to_str().unwrap()]);
        let run = wirespeed(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let other = std::fs::read_to_string(&path).unwrap();
        assert!(other.lines().filter(|l| !l.starts_with('#')).count() > 10);
        if let Some(findings) = promtool_findings(&other) {
            assert!(findings.trim().is_empty(), "{command:?}: {findings}");
        }
    }
    if let Some(findings) = promtool_findings(&text) {
        assert!(findings.trim().is_empty(), "promtool: {findings}");
    }
    // Replaced whole: no temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
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

/// Kills the Prometheus server this test started, by its PID.
struct Prometheus(std::process::Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
    let _prometheus = Prometheus(
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
