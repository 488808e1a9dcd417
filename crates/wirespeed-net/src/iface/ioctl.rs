//! The SIOCETHTOOL ioctl (include/uapi/linux/ethtool.h): the fallback for kernels without
//! ethtool netlink, and the way to ask a driver its name.

use std::io;

use socket2::{Domain, Socket, Type};

use crate::sys::ethtool::{self, LINK_SETTINGS_HEADER};

/// `struct ethtool_link_settings`, the fields wirespeed reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawLinkSettings {
    pub(crate) speed: u32,
    pub(crate) duplex: u8,
    pub(crate) autoneg: u8,
    pub(crate) supported: Vec<u32>,
    pub(crate) advertising: Vec<u32>,
    pub(crate) lp_advertising: Vec<u32>,
}

/// A socket to carry the ioctl, after the name check SIOCETHTOOL's callers always had.
fn socket(ifname: &str) -> io::Result<Socket> {
    if ifname.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    Socket::new(Domain::IPV4, Type::DGRAM, None)
}

/// The driver's name (ETHTOOL_GDRVINFO): "veth", "e1000e", "virtio_net".
pub(crate) fn driver(ifname: &str) -> io::Result<String> {
    let buf = ethtool::drvinfo(socket(ifname)?, ifname)?;
    let name = &buf[4..36];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// ETHTOOL_GLINKSETTINGS, with the kernel's handshake on the number of mask words.
pub(crate) fn link_settings(ifname: &str) -> io::Result<RawLinkSettings> {
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

fn parse_link_settings(buf: &[u8], nwords: usize) -> RawLinkSettings {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
