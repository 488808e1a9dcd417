use wirespeed_net::report::Environment;

#[test]
fn loopback_is_lo_with_an_mtu() {
    let e = Environment::collect(Some("127.0.0.1".parse().unwrap()));
    assert_eq!(e.interface.as_deref(), Some("lo"));
    assert!(e.mtu_bytes.unwrap() >= 1500);
    assert!(e.cpus >= 1);
}
