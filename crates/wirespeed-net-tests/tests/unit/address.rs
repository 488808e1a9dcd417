use std::net::{SocketAddr, SocketAddrV6};
use wirespeed_net::address::*;

#[test]
fn zones_read_as_rfc_4007_and_6874_write_them() {
    let lo = zone_index("lo").expect("every Linux host has lo");
    let (a, port) = parse_zoned("fe80::1%lo").unwrap().unwrap();
    assert_eq!(
        a,
        "[fe80::1]:0"
            .parse::<SocketAddr>()
            .map(|mut s| {
                if let SocketAddr::V6(v) = &mut s {
                    v.set_scope_id(lo)
                }
                s
            })
            .unwrap()
    );
    assert!(!port);
    let (a, port) = parse_zoned("[fe80::1%7]:5201").unwrap().unwrap();
    assert!(port);
    assert_eq!(a.port(), 5201);
    let SocketAddr::V6(v6) = a else { panic!() };
    assert_eq!(v6.scope_id(), 7);
    assert_eq!(parse_zoned("fe80::1").unwrap(), None);
    assert_eq!(parse_zoned("127.0.0.1:5").unwrap(), None);
}

#[test]
fn bad_zones_name_the_fix() {
    for (text, needle) in [
        ("fe80::1%", "empty"),
        ("fe80::1%0", "zone 0"),
        ("fe80::1%../../etc", "not an interface name"),
        ("fe80::1%ws-no-such0", "no interface named"),
        ("10.0.0.1%eth0", "drop it for IPv4"),
        ("fe80::1%eth0]:80", "[ADDR%ZONE]:PORT"),
        ("[fe80::1%lo]80", "':PORT'"),
        ("[fe80::1%lo", "needs its ']'"),
        ("bogus%lo", "not an IPv6 address"),
    ] {
        let e = parse_zoned(text).unwrap_err();
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn link_local_without_a_zone_is_refused_and_ports_keep_the_zone() {
    let bare: SocketAddr = "[fe80::2]:5210".parse().unwrap();
    assert!(require_zone(bare).unwrap_err().contains("fe80::2%eth0"));
    assert!(require_zone("[2001:2::1]:5210".parse().unwrap()).is_ok());
    assert!(require_zone("127.0.0.1:1".parse().unwrap()).is_ok());
    let zoned = SocketAddr::V6(SocketAddrV6::new("fe80::2".parse().unwrap(), 5210, 0, 3));
    assert!(require_zone(zoned).is_ok());
    let SocketAddr::V6(moved) = with_port(zoned, 40000) else {
        panic!()
    };
    assert_eq!((moved.port(), moved.scope_id()), (40000, 3));
    assert!(is_link_local("fe80::1".parse().unwrap()));
    assert!(is_link_local("febf::1".parse().unwrap()));
    assert!(!is_link_local("fec0::1".parse().unwrap()));
}
