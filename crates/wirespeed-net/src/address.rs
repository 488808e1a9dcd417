//! Addresses as users write them, and as sockets need them.
//!
//! An IPv6 link-local address (`fe80::/10`) means nothing without the link it is on: the same
//! `fe80::1` may exist on every interface. RFC 4007 §11 writes the link as a zone,
//! `fe80::1%eth0` (or `%2`, an interface index), and RFC 6874 puts it inside the brackets with
//! a port: `[fe80::1%eth0]:5201`. The socket layer carries it as the address's scope id, which
//! every address derived from the agent's (its data ports, its echo port) must keep: a
//! `SocketAddr::new(ip, port)` would drop it and send the data to no link at all.

use std::net::{IpAddr, Ipv6Addr, SocketAddr, SocketAddrV6};

/// `addr` with another port, keeping an IPv6 address's scope id and flow label.
pub fn with_port(addr: SocketAddr, port: u16) -> SocketAddr {
    let mut a = addr;
    a.set_port(port);
    a
}

/// `ip` and `port` as a socket address, with `scope_id` on an IPv6 address (0: none).
pub fn scoped(ip: IpAddr, port: u16, scope_id: u32) -> SocketAddr {
    match ip {
        IpAddr::V6(v6) => SocketAddr::V6(SocketAddrV6::new(v6, port, 0, scope_id)),
        IpAddr::V4(_) => SocketAddr::new(ip, port),
    }
}

/// Whether the address is IPv6 link-local (`fe80::/10`), which needs a zone to be reached.
pub fn is_link_local(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80)
}

/// An address written with a zone (`fe80::1%eth0`, `fe80::1%2`, `[fe80::1%eth0]:5201`): the
/// socket address (port 0 when none is written) and whether a port was written. `Ok(None)`
/// when `text` has no zone; an error, naming the fix, when the zone is malformed or names no
/// interface of this host.
pub fn parse_zoned(text: &str) -> Result<Option<(SocketAddr, bool)>, String> {
    let Some(percent) = text.find('%') else {
        return Ok(None);
    };
    let (inner, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']').ok_or_else(|| {
                format!("{text}: a bracketed address needs its ']': write [fe80::1%eth0]:PORT")
            })?;
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .and_then(|p| p.parse::<u16>().ok())
                        .ok_or_else(|| {
                            format!("{text}: after ']' give ':PORT' with a port number")
                        })?,
                ),
            };
            (inside, port)
        }
        None if text[percent..].contains(']') => {
            return Err(format!(
                "{text}: write a zone with a port as [ADDR%ZONE]:PORT"
            ));
        }
        None => (text, None),
    };
    let (address, zone) = inner.split_once('%').expect("a % was found");
    let ip: Ipv6Addr = address.parse().map_err(|_| {
        if address.parse::<std::net::Ipv4Addr>().is_ok() {
            format!("{text}: a zone (%{zone}) is for IPv6 link-local addresses; drop it for IPv4")
        } else {
            format!("{text}: {address} is not an IPv6 address (a zone follows one: fe80::1%eth0)")
        }
    })?;
    let scope = zone_index(zone).map_err(|e| format!("{text}: {e}"))?;
    Ok(Some((
        SocketAddr::V6(SocketAddrV6::new(ip, port.unwrap_or(0), 0, scope)),
        port.is_some(),
    )))
}

/// The interface index a zone names: a number, or an interface name of this host.
#[doc(hidden)]
pub fn zone_index(zone: &str) -> Result<u32, String> {
    if zone.is_empty() {
        return Err("the zone after '%' is empty: name the interface (fe80::1%eth0)".into());
    }
    if let Ok(index) = zone.parse::<u32>() {
        return if index == 0 {
            Err("zone 0 names no interface: give an interface name or index".into())
        } else {
            Ok(index)
        };
    }
    // The name becomes part of a /sys path: only what an interface name may hold (IFNAMSIZ,
    // no '/', not '.' or '..') is looked up, so a zone cannot point anywhere else.
    let valid = zone.len() < 16
        && zone != "."
        && zone != ".."
        && zone
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'/' && b != b'%');
    if !valid {
        return Err(format!(
            "'{zone}' is not an interface name: give one that `ip link` lists"
        ));
    }
    let path = format!("/sys/class/net/{zone}/ifindex");
    std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .ok_or_else(|| {
            format!("no interface named {zone} on this host: give one that `ip link` lists")
        })
}

/// Refuses a link-local address that has no zone: the kernel would refuse it too, with an
/// error ("Invalid argument") that does not say why.
pub fn require_zone(addr: SocketAddr) -> Result<(), String> {
    match addr {
        SocketAddr::V6(v6) if is_link_local(addr.ip()) && v6.scope_id() == 0 => Err(format!(
            "{} is link-local: name its interface, e.g. {}%eth0",
            v6.ip(),
            v6.ip()
        )),
        _ => Ok(()),
    }
}
