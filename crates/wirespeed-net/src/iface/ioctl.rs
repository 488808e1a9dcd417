//! The SIOCETHTOOL ioctl (include/uapi/linux/ethtool.h): the fallback for kernels without
//! ethtool netlink, and the way to ask a driver its name.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GLINKSETTINGS: u32 = 0x4c;
/// `struct ethtool_link_settings` before its link-mode words.
const LINK_SETTINGS_HEADER: usize = 48;
/// `struct ethtool_drvinfo`.
const DRVINFO_LEN: usize = 196;

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

fn socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Runs one SIOCETHTOOL command whose buffer is `data` (first u32 = command).
fn ethtool(ifname: &str, data: &mut [u8]) -> io::Result<()> {
    if ifname.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    let sock = socket()?;
    // SAFETY: ifreq is plain data; zeroed is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in ifr.ifr_name.iter_mut().zip(ifname.bytes()) {
        *dst = src as libc::c_char;
    }
    ifr.ifr_ifru.ifru_data = data.as_mut_ptr().cast();
    // SAFETY: `ifr` points at `data`, which outlives the call and is as long as the command
    // says (the callers size it).
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut ifr) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The driver's name (ETHTOOL_GDRVINFO): "veth", "e1000e", "virtio_net".
pub(crate) fn driver(ifname: &str) -> io::Result<String> {
    let mut buf = [0u8; DRVINFO_LEN];
    buf[..4].copy_from_slice(&ETHTOOL_GDRVINFO.to_ne_bytes());
    ethtool(ifname, &mut buf)?;
    let name = &buf[4..36];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// ETHTOOL_GLINKSETTINGS, with the kernel's handshake on the number of mask words.
pub(crate) fn link_settings(ifname: &str) -> io::Result<RawLinkSettings> {
    let mut buf = vec![0u8; LINK_SETTINGS_HEADER + 3 * 127 * 4];
    buf[..4].copy_from_slice(&ETHTOOL_GLINKSETTINGS.to_ne_bytes());
    ethtool(ifname, &mut buf)?;
    let nwords = buf[15] as i8;
    if nwords >= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no link-mode handshake",
        ));
    }
    let nwords = (-nwords) as usize;
    buf.fill(0);
    buf[..4].copy_from_slice(&ETHTOOL_GLINKSETTINGS.to_ne_bytes());
    buf[15] = nwords as u8;
    ethtool(ifname, &mut buf)?;
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
