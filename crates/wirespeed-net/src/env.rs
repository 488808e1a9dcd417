//! The environment that travels with every result: congestion control, queueing discipline,
//! MTU, socket memory limits, kernel and virtualisation. Two results are comparable only when
//! these match, so each end reports its own.

use std::net::IpAddr;

// The record travels in every side's report; it lives with the other wire records.
pub use crate::report::Environment;

fn read(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

impl Environment {
    /// Reads the settings; `local` is this end's address of the test, to find the interface.
    pub fn collect(local: Option<IpAddr>) -> Environment {
        let interface = local.and_then(interface_of);
        let sys = |name: &str| {
            interface
                .as_ref()
                .and_then(|i| read(&format!("/sys/class/net/{i}/{name}")))
        };
        let hypervisor = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .is_some_and(|c| {
                c.lines()
                    .any(|l| l.starts_with("flags") && l.contains(" hypervisor"))
            });
        let speed = interface
            .as_deref()
            .and_then(|i| crate::iface::Reader::system().trusted_speed(i).ok());
        Environment {
            default_congestion: read("/proc/sys/net/ipv4/tcp_congestion_control"),
            available_congestion: read("/proc/sys/net/ipv4/tcp_available_congestion_control"),
            default_qdisc: read("/proc/sys/net/core/default_qdisc"),
            mtu_bytes: sys("mtu").and_then(|m| m.parse().ok()),
            link_speed_bits_per_second: speed.as_ref().and_then(|s| s.bits_per_second()),
            interface_kind: speed.map(|s| s.kind.describe()),
            qdisc: interface.as_deref().and_then(crate::iface::root_qdisc),
            interface,
            rmem_max_bytes: read("/proc/sys/net/core/rmem_max").and_then(|v| v.parse().ok()),
            wmem_max_bytes: read("/proc/sys/net/core/wmem_max").and_then(|v| v.parse().ok()),
            tcp_rmem: read("/proc/sys/net/ipv4/tcp_rmem"),
            tcp_wmem: read("/proc/sys/net/ipv4/tcp_wmem"),
            kernel: read("/proc/sys/kernel/osrelease"),
            virtualization: hypervisor.then(|| {
                read("/sys/class/dmi/id/sys_vendor").unwrap_or_else(|| "a hypervisor".into())
            }),
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// The interface that holds `addr` (`lo` for loopback addresses).
pub(crate) fn interface_of(addr: IpAddr) -> Option<String> {
    if addr.is_loopback() {
        return Some("lo".into());
    }
    crate::sys::netdevice::interface_with(addr)
}
