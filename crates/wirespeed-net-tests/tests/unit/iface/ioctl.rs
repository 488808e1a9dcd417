use wirespeed_net::iface::ioctl::*;
use wirespeed_net::sys::ethtool::LINK_SETTINGS_HEADER;

#[test]
fn link_settings_layout() {
    let mut buf = vec![0u8; LINK_SETTINGS_HEADER + 3 * 2 * 4];
    buf[4..8].copy_from_slice(&100u32.to_ne_bytes());
    buf[8] = 1; // full
    buf[11] = 1; // autoneg on
    let words: [u32; 6] = [0x7F, 0, 0x2F, 0, 0x0F, 0];
    for (i, w) in words.iter().enumerate() {
        let at = LINK_SETTINGS_HEADER + 4 * i;
        buf[at..at + 4].copy_from_slice(&w.to_ne_bytes());
    }
    let s = parse_link_settings(&buf, 2);
    assert_eq!((s.speed, s.duplex, s.autoneg), (100, 1, 1));
    assert_eq!(s.supported, [0x7F, 0]);
    assert_eq!(s.advertising, [0x2F, 0]);
    assert_eq!(s.lp_advertising, [0x0F, 0]);
}

#[test]
fn names_too_long_for_ifreq_are_refused() {
    assert!(driver("a-name-much-too-long-for-ifreq").is_err());
}
