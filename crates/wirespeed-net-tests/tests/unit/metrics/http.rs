use wirespeed_net::metrics::http::*;

fn parse(s: &str) -> Result<Option<(Request, usize)>, HeadError> {
    parse_head(s.as_bytes())
}

#[test]
fn a_prometheus_probe_request_is_read_whole() {
    let head = "GET /probe?target=127.0.0.1%3A5201&module=tcp_5s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nX-Prometheus-Scrape-Timeout-Seconds: 9.5\r\n\r\nbody";
    let (r, used) = parse(head).unwrap().unwrap();
    assert_eq!(used, head.len() - 4);
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.path, "/probe");
    assert_eq!(r.param("target"), Some("127.0.0.1:5201"));
    assert_eq!(r.param("module"), Some("tcp_5s"));
    assert_eq!(r.bearer.as_deref(), Some("s3cret"));
    assert_eq!(r.scrape_timeout_seconds, Some(9.5));
}

#[test]
fn incomplete_heads_wait_and_long_ones_are_refused() {
    assert_eq!(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n"), Ok(None));
    assert_eq!(parse(""), Ok(None));
    let long = format!("GET /metrics HTTP/1.1\r\nX: {}", "a".repeat(HEAD_MAX));
    assert_eq!(parse(&long), Err(HeadError::TooLarge));
    // A blank line past the bound does not count.
    let late = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(HEAD_MAX));
    assert_eq!(parse(&late), Err(HeadError::TooLarge));
    let many: String = (0..=HEADERS_MAX).map(|i| format!("H{i}: v\r\n")).collect();
    assert_eq!(
        parse(&format!("GET / HTTP/1.1\r\n{many}\r\n")),
        Err(HeadError::TooManyHeaders)
    );
}

#[test]
fn malformed_heads_are_named() {
    for (head, e) in [
        ("GET /metrics\r\n\r\n", HeadError::RequestLine),
        ("GET metrics HTTP/1.1\r\n\r\n", HeadError::RequestLine),
        ("GET /m HTTP/2.0\r\n\r\n", HeadError::RequestLine),
        ("G(T /m HTTP/1.1\r\n\r\n", HeadError::RequestLine),
        ("GET /m?a=%zz HTTP/1.1\r\n\r\n", HeadError::RequestLine),
        ("GET /m HTTP/1.1\r\nno colon\r\n\r\n", HeadError::Header),
        ("GET /m HTTP/1.1\r\nbad name: v\r\n\r\n", HeadError::Header),
    ] {
        assert_eq!(parse(head), Err(e), "{head:?}");
    }
    assert_eq!(
        parse_head(b"GET /\xff HTTP/1.1\r\n\r\n"),
        Err(HeadError::NotText)
    );
}

#[test]
fn lenient_line_ends_other_methods_and_odd_timeouts() {
    let (r, used) = parse("HEAD /healthz HTTP/1.0\n\n").unwrap().unwrap();
    assert_eq!(
        (r.method, r.path.as_str(), used),
        (Method::Head, "/healthz", 24)
    );
    let (r, _) = parse("POST /metrics?x HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: NaN\r\nauthorization: basic abc\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(r.method, Method::Other);
    assert_eq!(r.query, [("x".to_string(), String::new())]);
    assert_eq!(r.scrape_timeout_seconds, None);
    assert_eq!(r.bearer, None);
    let many: String = (0..40).map(|i| format!("k{i}=v&")).collect();
    let (r, _) = parse(&format!("GET /?{many} HTTP/1.1\r\n\r\n"))
        .unwrap()
        .unwrap();
    assert_eq!(r.query.len(), QUERY_MAX);
}
