//! /sys/class/net/IFACE: the standard counters (statistics/*), speed, duplex, carrier, and the
//! files that tell a software interface from a NIC.

use std::fs;
use std::io;
use std::path::Path;

use wirespeed_model::autoneg::Duplex;
use wirespeed_model::diagnose::{Counters, InterfaceKind};

use super::IfaceError;

/// Drivers of virtual machines' NICs: no PHY behind them.
const PARAVIRTUAL: [&str; 6] = [
    "virtio_net",
    "vmxnet3",
    "xen_netfront",
    "vif",
    "hv_netvsc",
    "netvsc",
];

fn read_trimmed(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map(|s| s.trim().to_string())
}

fn counter(dir: &Path, name: &str) -> Result<u64, IfaceError> {
    let path = dir.join("statistics").join(name);
    let text = read_trimmed(&path).map_err(|source| IfaceError::Counter {
        path: path.display().to_string(),
        source,
    })?;
    text.parse().map_err(|_| IfaceError::CounterNotANumber {
        path: path.display().to_string(),
        text,
    })
}

/// The standard Linux counters. Each file must be there and readable.
pub(crate) fn counters(dir: &Path) -> Result<Counters, IfaceError> {
    Ok(Counters {
        rx_packets: counter(dir, "rx_packets")?,
        tx_packets: counter(dir, "tx_packets")?,
        rx_bytes: counter(dir, "rx_bytes")?,
        tx_bytes: counter(dir, "tx_bytes")?,
        collisions: counter(dir, "collisions")?,
        fcs_errors: counter(dir, "rx_crc_errors")?,
        alignment_errors: counter(dir, "rx_frame_errors")?,
        length_errors: counter(dir, "rx_length_errors")?,
        tx_window_errors: counter(dir, "tx_window_errors")?,
        tx_aborted_errors: counter(dir, "tx_aborted_errors")?,
        tx_carrier_errors: counter(dir, "tx_carrier_errors")?,
        rx_fifo_errors: counter(dir, "rx_fifo_errors")?,
        tx_fifo_errors: counter(dir, "tx_fifo_errors")?,
        rx_missed_errors: counter(dir, "rx_missed_errors")?,
        rx_over_errors: counter(dir, "rx_over_errors")?,
        rx_dropped: counter(dir, "rx_dropped")?,
        tx_dropped: counter(dir, "tx_dropped")?,
        ..Counters::default()
    })
}

/// Mbit/s; `None` when unknown (-1) or unreadable (link down).
pub(crate) fn speed(dir: &Path) -> Option<u32> {
    read_trimmed(&dir.join("speed"))
        .ok()?
        .parse::<i64>()
        .ok()
        .and_then(|s| u32::try_from(s).ok())
        .filter(|&s| s > 0)
}

pub(crate) fn duplex(dir: &Path) -> Option<Duplex> {
    match read_trimmed(&dir.join("duplex")).ok()?.as_str() {
        "full" => Some(Duplex::Full),
        "half" => Some(Duplex::Half),
        _ => None,
    }
}

/// 1 or 0; reading fails (EINVAL) on an interface that is down, which is no carrier.
pub(crate) fn carrier(dir: &Path) -> Option<bool> {
    match read_trimmed(&dir.join("carrier")) {
        Ok(s) => Some(s == "1"),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Some(false),
        Err(_) => None,
    }
}

/// The driver bound to the device, from the `device/driver` link.
pub(crate) fn driver_link(dir: &Path) -> Option<String> {
    let target = fs::read_link(dir.join("device").join("driver")).ok()?;
    target.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// What kind of interface `dir` is; `driver` as the kernel names it, if known.
pub(crate) fn kind(dir: &Path, driver: Option<&str>) -> InterfaceKind {
    const ARPHRD_LOOPBACK: &str = "772";
    const IFF_TAP: u32 = 0x0002;
    if read_trimmed(&dir.join("type")).is_ok_and(|t| t == ARPHRD_LOOPBACK) {
        return InterfaceKind::Loopback;
    }
    if dir.join("bridge").exists() {
        return InterfaceKind::Bridge;
    }
    if dir.join("bonding").exists() {
        return InterfaceKind::Bond;
    }
    if let Ok(flags) = read_trimmed(&dir.join("tun_flags")) {
        let flags = u32::from_str_radix(flags.trim_start_matches("0x"), 16).unwrap_or(0);
        return if flags & IFF_TAP != 0 {
            InterfaceKind::Tap
        } else {
            InterfaceKind::Tun
        };
    }
    let uevent = read_trimmed(&dir.join("uevent")).unwrap_or_default();
    if uevent.lines().any(|l| l == "DEVTYPE=vlan") {
        return InterfaceKind::Vlan;
    }
    if uevent.lines().any(|l| l == "DEVTYPE=wlan")
        || dir.join("wireless").exists()
        || dir.join("phy80211").exists()
    {
        return InterfaceKind::Wireless;
    }
    let driver = driver.map(str::to_string).or_else(|| driver_link(dir));
    match driver.as_deref() {
        Some("veth") => InterfaceKind::Veth,
        Some("dummy") => InterfaceKind::Dummy,
        Some("tun") => InterfaceKind::Tap,
        Some("bridge") => InterfaceKind::Bridge,
        Some("bonding") => InterfaceKind::Bond,
        Some(d) if PARAVIRTUAL.contains(&d) => InterfaceKind::Paravirtual(d.to_string()),
        Some(d) if dir.join("device").exists() => InterfaceKind::Physical(d.to_string()),
        Some(d) => InterfaceKind::Virtual(d.to_string()),
        None if dir.join("device").exists() => InterfaceKind::Physical("unknown driver".into()),
        None => InterfaceKind::Virtual("unknown driver".into()),
    }
}
