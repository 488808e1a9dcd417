use std::net::SocketAddr;
use wirespeed::common::host::*;

#[test]
fn every_written_form_reads_the_same_way() {
    let a = |t: &str| resolve_one(t, 5210, "x").unwrap().to_string();
    assert_eq!(a("127.0.0.1"), "127.0.0.1:5210");
    assert_eq!(a("127.0.0.1:7"), "127.0.0.1:7");
    assert_eq!(a("::1"), "[::1]:5210");
    assert_eq!(a("[::1]:7"), "[::1]:7");
    assert_eq!(a(" 127.0.0.2 "), "127.0.0.2:5210");
    let lo = resolve_one("fe80::1%lo", 5210, "x").unwrap();
    let SocketAddr::V6(v6) = lo else { panic!() };
    assert!(v6.scope_id() > 0 && v6.port() == 5210);
    let lo = resolve_one("[fe80::1%lo]:9", 5210, "x").unwrap();
    let SocketAddr::V6(v6) = lo else { panic!() };
    assert!(v6.scope_id() > 0 && v6.port() == 9);
    assert_eq!(
        Host::parse("localhost:80", "x").unwrap(),
        Host::Name("localhost", Some(80))
    );
    assert_eq!(
        Host::parse("localhost", "x").unwrap(),
        Host::Name("localhost", None)
    );
}

#[test]
fn bad_hosts_name_the_problem_and_the_fix() {
    for (text, needle) in [
        ("", "empty host"),
        ("  ", "empty host"),
        ("localhost:x", "\"x\" is not a port number"),
        ("localhost:70000", "not a port number"),
        ("fe80::1", "fe80::1%eth0"),
        ("[fe80::1]:80", "fe80::1%eth0"),
        ("fe80::1%", "empty"),
        ("ws-no-such-name.invalid", "cannot resolve"),
    ] {
        let e = resolve_one(text, 1, "--peer").unwrap_err().to_string();
        assert!(e.starts_with("--peer"), "{text}: {e}");
        assert!(e.contains(needle), "{text}: {e}");
    }
}
