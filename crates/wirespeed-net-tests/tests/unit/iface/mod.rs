mod ioctl;
mod netlink;
mod nlwire;
mod qdisc;
mod sockdiag;
use std::path::Path;
use wirespeed_model::autoneg::Abilities;
use wirespeed_model::diagnose::InterfaceKind;
use wirespeed_net::iface::*;

#[test]
fn link_mode_bits_map_to_technologies() {
    assert_eq!(abilities(&[0x3F]), Abilities::gigabit());
    assert_eq!(abilities(&[0x0F, 0, 0]), Abilities::fast_ethernet());
    assert_eq!(
        abilities(&[0x40 | 0x2000]),
        Abilities::NONE,
        "autoneg and pause are not modes"
    );
    assert_eq!(abilities(&[]), Abilities::NONE);
    assert_eq!(speed_of(u32::MAX), None);
    assert_eq!(duplex_of(0xFF), None);
}

/// A directory laid out like /sys/class/net/NAME with `files` (path, contents) in it.
fn fake(root: &Path, name: &str, files: &[(&str, &str)]) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("statistics")).unwrap();
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn only_a_physical_layer_has_a_speed_to_believe() {
    let root = std::env::temp_dir().join(format!("ws-trusted-speed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    fake(
        &root,
        "tap0",
        &[("tun_flags", "0x1002"), ("speed", "10000")],
    );
    fake(
        &root,
        "tun0",
        &[("tun_flags", "0x1001"), ("speed", "10000")],
    );
    fake(&root, "lo", &[("type", "772"), ("speed", "10000")]);
    fake(
        &root,
        "br0",
        &[("bridge/hello_time", "200"), ("speed", "10000")],
    );
    fake(&root, "veth0", &[("speed", "10000")]);
    fake(
        &root,
        "eth0",
        &[("device/vendor", "0x8086"), ("speed", "1000")],
    );
    fake(
        &root,
        "eth1",
        &[("device/vendor", "0x8086"), ("speed", "-1")],
    );
    let paravirtual = root.join("ens3");
    fake(
        &root,
        "ens3",
        &[("device/vendor", "0x1af4"), ("speed", "10000")],
    );
    std::os::unix::fs::symlink(
        "../../bus/virtio/drivers/virtio_net",
        paravirtual.join("device/driver"),
    )
    .unwrap();
    let r = Reader::files(&root);
    let speed = |name: &str| r.trusted_speed(name).unwrap();
    for name in ["tap0", "tun0", "lo", "br0", "veth0", "ens3"] {
        let s = speed(name);
        assert_eq!(
            s.mbps,
            None,
            "{name} ({}) reported 10000",
            s.kind.describe()
        );
        assert!(!s.kind.has_phy(), "{name}");
    }
    assert_eq!(speed("tap0").kind, InterfaceKind::Tap);
    assert_eq!(
        speed("ens3").kind,
        InterfaceKind::Paravirtual("virtio_net".into())
    );
    assert_eq!(speed("eth0").bits_per_second(), Some(1_000_000_000));
    assert_eq!(speed("eth1").mbps, None, "-1 is unknown");
    assert!(r.trusted_speed("nope").is_err());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn lo_is_loopback_and_counts() {
    let r = Reader::system();
    let mut warnings = Vec::new();
    let (kind, link) = r.link("lo", &mut warnings).unwrap();
    assert_eq!(kind, InterfaceKind::Loopback);
    assert_eq!(link.duplex, None);
    let c = r.counters("lo").unwrap();
    assert!(c.rx_packets >= c.rx_packets.min(1));
    assert_eq!(c.collisions, 0);
}

#[test]
fn netlink_and_ioctl_agree_where_both_answer() {
    let mut compared = 0;
    for name in Reader::system().interfaces().unwrap() {
        let Ok(nl) =
            wirespeed_net::iface::netlink::Ethtool::open().and_then(|mut e| e.link_modes(&name))
        else {
            continue;
        };
        let Ok(io) = wirespeed_net::iface::ioctl::link_settings(&name) else {
            continue;
        };
        assert_eq!(nl.speed.and_then(speed_of), speed_of(io.speed), "{name}");
        assert_eq!(
            nl.duplex.and_then(duplex_of),
            duplex_of(io.duplex),
            "{name}"
        );
        assert_eq!(nl.autoneg, Some(io.autoneg), "{name}");
        assert_eq!(
            nl.advertised.as_deref().map(abilities).unwrap_or_default(),
            abilities(&io.advertising),
            "{name}"
        );
        compared += 1;
        // The statistics request must be well formed: a driver without the standard
        // statistics answers with no groups, never EINVAL.
        match wirespeed_net::iface::netlink::Ethtool::open().and_then(|mut e| e.std_stats(&name)) {
            Ok(stats) => eprintln!("{name}: {} standard statistics", stats.values.len()),
            Err(wirespeed_net::iface::netlink::NlError::Kernel(errno)) => {
                assert_ne!(
                    errno,
                    libc::EINVAL,
                    "{name}: the kernel refused the request"
                );
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    eprintln!("netlink and ioctl compared on {compared} interface(s)");
}

#[test]
fn unknown_names_list_the_real_ones() {
    let err = Reader::system()
        .counters("ws-no-such-if")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("no such interface: ws-no-such-if"), "{err}");
    assert!(err.contains("lo"), "{err}");
    assert!(Reader::system().counters("../lo").is_err());
}
