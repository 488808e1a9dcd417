//! `/probe` end to end on loopback (issue 34): the metrics listener runs a module's test from
//! one agent to another and answers its figures in OpenMetrics text, within the scrape
//! timeout Prometheus sends.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wirespeed_net::metrics::http::Request;
use wirespeed_net::metrics::{
    Answer, ListenerConfig, MetricsListener, Module, ProbeSettings, Prober, Response, Routes,
};
use wirespeed_net::{Agent, AgentConfig};

struct ProbeOnly(Prober);

impl Routes for ProbeOnly {
    fn answer(&self, request: &Request, _peer: SocketAddr) -> Answer {
        match request.path.as_str() {
            "/probe" => self.0.answer(request),
            _ => Answer::Now(Response::text("404 Not Found", "no\n")),
        }
    }
}

fn probe(listener: SocketAddr, query: &str, scrape_timeout: f64) -> (String, Duration) {
    let began = Instant::now();
    let mut c = TcpStream::connect(listener).unwrap();
    c.set_read_timeout(Some(Duration::from_secs_f64(scrape_timeout + 5.0)))
        .unwrap();
    write!(
        c,
        "GET /probe?{query} HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: {scrape_timeout}\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    (out, began.elapsed())
}

fn value(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in {page}"))
        .parse()
        .unwrap()
}

#[test]
fn tcp_rr_and_latency_modules_answer_their_figures_within_the_scrape_timeout() {
    let _loading = crate::rates::loading();
    let target = Agent::bind("127.0.0.1:0".parse().unwrap(), AgentConfig::default()).unwrap();
    let target_addr = target.local_addr().unwrap();
    let (h, _t) = target.spawn().unwrap();
    let prober = Prober::new(ProbeSettings {
        modules: ["tcp_1s=tcp:1s", "rr_1s=rr:1s", "latency_10s=latency:10s"]
            .iter()
            .map(|m| Module::parse(m).unwrap())
            .collect(),
        targets: vec!["127.0.0.0/8".parse().unwrap()],
        max_at_once: 2,
        auth: None,
        default_port: 5201,
    });
    let l = MetricsListener::spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        ListenerConfig::default(),
        Arc::new(ProbeOnly(prober)),
    )
    .unwrap();
    let at = l.local_addr();
    let target = format!("target=127.0.0.1%3A{}", target_addr.port());

    let (page, took) = probe(at, &format!("{target}&module=tcp_1s"), 10.0);
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(page.contains("Content-Type: application/openmetrics-text; version=1.0.0"));
    assert_eq!(value(&page, "probe_success"), 1.0, "{page}");
    assert!(
        value(&page, "probe_tcp_received_bits_per_second") > 1e6,
        "{page}"
    );
    assert!(value(&page, "probe_tcp_received_bytes") > 0.0);
    assert!(page.ends_with("# EOF\n"));
    assert!(took < Duration::from_secs(10), "{took:?}");

    let (page, _) = probe(at, &format!("{target}&module=rr_1s"), 10.0);
    assert_eq!(value(&page, "probe_success"), 1.0, "{page}");
    assert!(
        value(&page, "probe_rr_round_trip_seconds_count") > 10.0,
        "{page}"
    );
    assert!(value(&page, "probe_rr_round_trip_seconds{quantile=\"0.5\"}") > 0.0);
    assert!(value(&page, "probe_rr_round_trips_per_minute") > 60.0);

    // A 10 s module under a 3 s scrape timeout is cut to fit it.
    let (page, took) = probe(at, &format!("{target}&module=latency_10s"), 3.0);
    assert_eq!(value(&page, "probe_success"), 1.0, "{page}");
    let idle = value(
        &page,
        "probe_latency_round_trip_seconds_count{phase=\"idle\"}",
    );
    let loaded = value(
        &page,
        "probe_latency_round_trip_seconds_count{phase=\"loaded\"}",
    );
    assert!(idle > 0.0 && loaded > 0.0, "{page}");
    assert!(value(&page, "probe_latency_load_received_bits_per_second") > 1e6);
    assert!(value(&page, "probe_duration_seconds") < 3.0, "{page}");
    assert!(took < Duration::from_millis(3500), "{took:?}");
    h.stop();
}
