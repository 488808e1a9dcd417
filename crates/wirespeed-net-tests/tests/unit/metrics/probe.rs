use std::time::Duration;
use wirespeed_net::metrics::http::Request;
use wirespeed_net::metrics::listener::{Answer, Response};
use wirespeed_net::metrics::probe::*;

#[test]
fn modules_parse_with_their_limits() {
    let m = Module::parse("tcp_5s=tcp:5s").unwrap();
    assert_eq!(
        (m.name.as_str(), m.kind, m.seconds),
        ("tcp_5s", ProbeKind::Tcp, 5.0)
    );
    assert_eq!(Module::defaults().len(), 3);
    for (bad, says) in [
        ("tcp_5s", "NAME=KIND:DURATION"),
        ("x=udp:5s", "unknown kind"),
        ("x=tcp:2m", "0.5 s to 60 s"),
        ("x=tcp:0.1s", "0.5 s to 60 s"),
        ("a b=tcp:5s", "letters, digits"),
        ("x=tcp:soon", "probe module"),
    ] {
        let e = Module::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    let twice = [
        Module::parse("a=tcp:1s").unwrap(),
        Module::parse("a=rr:1s").unwrap(),
    ];
    assert!(check_modules(&twice).unwrap_err().contains("named twice"));
}

#[test]
fn targets_are_addresses_with_an_optional_port() {
    assert_eq!(
        parse_target("127.0.0.1:9", 5201).unwrap(),
        "127.0.0.1:9".parse().unwrap()
    );
    assert_eq!(
        parse_target("127.0.0.1", 5201).unwrap(),
        "127.0.0.1:5201".parse().unwrap()
    );
    assert_eq!(
        parse_target("[::1]", 5201).unwrap(),
        "[::1]:5201".parse().unwrap()
    );
    assert!(
        parse_target("example.org:80", 5201)
            .unwrap_err()
            .contains("not IP[:PORT]")
    );
}

fn request(query: &str) -> Request {
    let head = format!("GET /probe?{query} HTTP/1.1\r\n\r\n");
    wirespeed_net::metrics::http::parse_head(head.as_bytes())
        .unwrap()
        .unwrap()
        .0
}

fn refusal(p: &Prober, query: &str) -> Response {
    match p.answer(&request(query)) {
        Answer::Now(r) => r,
        Answer::Later(_) => panic!("{query} was run"),
    }
}

#[test]
fn nothing_is_probed_without_consent_and_the_bound_holds() {
    let settings = ProbeSettings {
        modules: Module::defaults(),
        targets: Vec::new(),
        max_at_once: 1,
        auth: None,
        default_port: 5201,
    };
    let p = Prober::new(settings.clone());
    let r = refusal(&p, "target=127.0.0.1&module=rr");
    assert!(
        r.status.starts_with("403") && r.body.contains("--probe-targets"),
        "{r:?}"
    );
    assert!(
        refusal(&p, "target=127.0.0.1&module=nope")
            .body
            .contains("tcp_5s, latency_10s, rr")
    );
    assert!(refusal(&p, "module=rr").body.contains("target=IP[:PORT]"));
    let p = Prober::new(ProbeSettings {
        targets: vec!["127.0.0.0/8".parse().unwrap()],
        ..settings
    });
    // One probe holds the only slot: the next is refused at once, and the slot comes
    // back when the first is dropped.
    let first = p.answer(&request("target=127.0.0.1:1&module=rr"));
    assert!(matches!(first, Answer::Later(_)));
    assert!(
        refusal(&p, "target=127.0.0.1:1&module=rr")
            .status
            .starts_with("503")
    );
    drop(first);
    assert!(matches!(
        p.answer(&request("target=127.0.0.1:1&module=rr")),
        Answer::Later(_)
    ));
}

#[test]
fn a_failed_probe_says_why_within_its_budget_and_a_short_timeout_runs_nothing() {
    // Nothing listens on port 1: the connect is refused at once.
    let m = Module::parse("rr=rr:2s").unwrap();
    let page = run(&m, "127.0.0.1:1".parse().unwrap(), None, None);
    assert!(page.starts_with("# HELP probe_success "), "{page}");
    assert!(page.contains("\nprobe_success 0\n"), "{page}");
    assert!(page.contains("probe_failure_info{reason=\""), "{page}");
    assert!(page.ends_with("# EOF\n"));
    let page = run(
        &m,
        "127.0.0.1:1".parse().unwrap(),
        None,
        Some(Duration::from_millis(900)),
    );
    assert!(page.contains("leaves no time for a test"), "{page}");
}

#[test]
fn quantiles_are_nearest_rank_and_rpm_is_a_minute_over_the_median() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(quantile(&v, 0.5), Some(50.0));
    assert_eq!(quantile(&v, 0.99), Some(99.0));
    assert_eq!(quantile(&[], 0.5), None);
    assert_eq!(rpm(&[0.01, 0.02, 0.03]), Some(3000.0));
    assert_eq!(reason_label("a\"b\\c\nd\x1b"), "a\\\"b\\\\cd");
}
