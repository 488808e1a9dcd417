//! The SIOCETHTOOL ioctl (include/uapi/linux/ethtool.h): the fallback for kernels without
//! ethtool netlink, and the way to ask a driver its name.

use std::io;

use socket2::{Domain, Socket, Type};

use crate::sys::ethtool::{self, LINK_SETTINGS_HEADER};

/// `struct ethtool_link_settings`, the fields wirespeed reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLinkSettings {
    pub speed: u32,
    pub duplex: u8,
    pub autoneg: u8,
    pub supported: Vec<u32>,
    pub advertising: Vec<u32>,
    pub lp_advertising: Vec<u32>,
}

/// A socket to carry the ioctl, after the name check SIOCETHTOOL's callers always had.
fn socket(ifname: &str) -> io::Result<Socket> {
    if ifname.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    Socket::new(Domain::IPV4, Type::DGRAM, None)
}

/// The driver's name (ETHTOOL_GDRVINFO): "veth", "e1000e", "virtio_net".
pub fn driver(ifname: &str) -> io::Result<String> {
    let buf = ethtool::drvinfo(socket(ifname)?, ifname)?;
    let name = &buf[4..36];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// ETHTOOL_GLINKSETTINGS, with the kernel's handshake on the number of mask words.
pub fn link_settings(ifname: &str) -> io::Result<RawLinkSettings> {
    let buf = ethtool::link_settings(socket(ifname)?, ifname, 0)?;
    let nwords = buf[15] as i8;
    if nwords >= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no link-mode handshake",
        ));
    }
    let nwords = (-nwords) as usize;
    let buf = ethtool::link_settings(socket(ifname)?, ifname, nwords as u8)?;
    Ok(parse_link_settings(&buf, nwords))
}

pub fn parse_link_settings(buf: &[u8], nwords: usize) -> RawLinkSettings {
    let word = |i: usize| {
        let at = LINK_SETTINGS_HEADER + 4 * i;
        u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
    };
    let mask = |n: usize| {
        (0..nwords)
            .map(|i| word(n * nwords + i))
            .collect::<Vec<_>>()
    };
    RawLinkSettings {
        speed: u32::from_ne_bytes(buf[4..8].try_into().expect("4 bytes")),
        duplex: buf[8],
        autoneg: buf[11],
        supported: mask(0),
        advertising: mask(1),
        lp_advertising: mask(2),
    }
}
