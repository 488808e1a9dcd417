//! Hosts as users write them, read one way by every command that takes one: `ADDRESS`,
//! `ADDRESS:PORT`, `[V6]:PORT`, a link-local address with its zone (`fe80::1%eth0`,
//! `[fe80::1%eth0]:PORT`), `NAME` and `NAME:PORT`.
//!
//! Each command used to carry its own reader, and they disagreed: one refused a link-local
//! address without its zone with the fix, another passed it to the kernel, whose "Invalid
//! argument" says nothing; one read `name:x` as a name, another as a bad port.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use anyhow::bail;

/// A host as written, before any name is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub enum Host<'a> {
    /// An address (with its zone's scope id), and the port when one was written.
    Address(SocketAddr, Option<u16>),
    /// A name to resolve, and the port when one was written.
    Name(&'a str, Option<u16>),
}

impl<'a> Host<'a> {
    /// Reads `text`; `what` names it in errors (`--peer`, `agent`).
    #[doc(hidden)]
    pub fn parse(text: &'a str, what: &str) -> anyhow::Result<Host<'a>> {
        let text = text.trim();
        if text.is_empty() {
            bail!("{what}: an empty host: give HOST or HOST:PORT");
        }
        if let Some((addr, has_port)) =
            wirespeed_net::address::parse_zoned(text).map_err(|e| anyhow::anyhow!("{what} {e}"))?
        {
            return Ok(Host::Address(addr, has_port.then_some(addr.port())));
        }
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(Host::Address(SocketAddr::new(ip, 0), None));
        }
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Ok(Host::Address(addr, Some(addr.port())));
        }
        match text.rsplit_once(':') {
            // One colon: NAME:PORT. More (an IPv6 address that did not parse) stays a name, and
            // the lookup says it is not one.
            Some((name, port)) if !name.contains(':') => {
                let port = port.parse::<u16>().map_err(|_| {
                    anyhow::anyhow!("{what} {text}: {port:?} is not a port number (HOST:PORT)")
                })?;
                Ok(Host::Name(name, Some(port)))
            }
            _ => Ok(Host::Name(text, None)),
        }
    }

    /// The port written in the text, if any.
    pub(crate) fn port(&self) -> Option<u16> {
        match self {
            Host::Address(_, p) | Host::Name(_, p) => *p,
        }
    }

    /// Every address the host stands for (one for an address, each distinct one a name
    /// resolves to), on `port`. A link-local address without its zone is refused naming the fix.
    pub(crate) fn addresses(&self, port: u16, what: &str) -> anyhow::Result<Vec<SocketAddr>> {
        match self {
            Host::Address(addr, _) => {
                let addr = wirespeed_net::address::with_port(*addr, port);
                wirespeed_net::address::require_zone(addr)
                    .map_err(|e| anyhow::anyhow!("{what} {e}"))?;
                Ok(vec![addr])
            }
            Host::Name(name, _) => {
                let mut out: Vec<SocketAddr> = Vec::new();
                let found = (*name, port).to_socket_addrs().map_err(|_| {
                    anyhow::anyhow!(
                        "{what}: cannot resolve {name:?} (give an address such as 127.0.0.1 or ::1, or a known name)"
                    )
                })?;
                for a in found {
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
                if out.is_empty() {
                    bail!("{what}: {name:?} resolves to no address");
                }
                Ok(out)
            }
        }
    }
}

/// `text` as one socket address: the port written in it, else `default_port`; a name's first
/// address.
#[doc(hidden)]
pub fn resolve_one(text: &str, default_port: u16, what: &str) -> anyhow::Result<SocketAddr> {
    let host = Host::parse(text, what)?;
    let port = host.port().unwrap_or(default_port);
    Ok(host.addresses(port, what)?.remove(0))
}
