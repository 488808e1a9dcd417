use wirespeed_net::sys::netdevice::*;

#[test]
fn names_are_cut_to_fit_with_their_nul() {
    let r = ifreq("a-name-much-too-long-for-ifreq");
    assert_eq!(r.ifr_name[libc::IFNAMSIZ - 1], 0);
    assert_eq!(r.ifr_name[0], b'a' as libc::c_char);
    assert!(index("lo").is_some());
    assert!(index("l\0o").is_none());
    assert_eq!(
        interface_with("127.0.0.1".parse().unwrap()).as_deref(),
        Some("lo")
    );
}
