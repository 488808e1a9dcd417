//! The `SIOCETHTOOL` ioctl (include/uapi/linux/ethtool.h) and the hardware-stamping ioctls
//! `SIOCGHWTSTAMP`/`SIOCSHWTSTAMP`.
//!
//! The kernel writes as many bytes through an ethtool request's data pointer as its command
//! says, so no function here takes a caller's buffer: each builds the one its command needs,
//! sized for the most the kernel can write (the link-settings handshake's word count is capped
//! at what the buffer holds).

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use super::netdevice::ifreq;

const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GLINKSETTINGS: u32 = 0x4c;
/// `ETHTOOL_GET_TS_INFO`.
const ETHTOOL_GET_TS_INFO: u32 = 0x41;
/// `struct ethtool_link_settings` before its link-mode words.
pub const LINK_SETTINGS_HEADER: usize = 48;
/// The most link-mode words per mask the handshake can ask for (`__s8`).
const LINK_MODE_WORDS_MAX: usize = 127;
/// `struct ethtool_drvinfo`.
pub(crate) const DRVINFO_LEN: usize = 196;

/// One SIOCETHTOOL command on interface `name` whose data is `data`.
///
/// # Safety
/// `data` must be at least as long as what command `data[..4]` makes the kernel write.
unsafe fn ethtool(fd: impl AsFd, name: &str, data: *mut u8) -> io::Result<()> {
    let mut ifr = ifreq(name);
    ifr.ifr_ifru.ifru_data = data.cast();
    // SAFETY: `ifr` points at `data`, which outlives the call and (the caller guarantees) is as
    // long as the command makes the kernel write.
    let rc = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `ETHTOOL_GDRVINFO`: the bytes of a `struct ethtool_drvinfo`.
pub(crate) fn drvinfo(fd: impl AsFd, name: &str) -> io::Result<[u8; DRVINFO_LEN]> {
    let mut buf = [0u8; DRVINFO_LEN];
    buf[..4].copy_from_slice(&ETHTOOL_GDRVINFO.to_ne_bytes());
    // SAFETY: GDRVINFO writes one ethtool_drvinfo, DRVINFO_LEN bytes.
    unsafe { ethtool(fd, name, buf.as_mut_ptr())? };
    Ok(buf)
}

/// `ETHTOOL_GLINKSETTINGS` asking for `words` link-mode words per mask (0: the handshake, whose
/// answer holds minus the kernel's count at byte 15): the bytes the kernel wrote, the three
/// masks after [`LINK_SETTINGS_HEADER`].
pub(crate) fn link_settings(fd: impl AsFd, name: &str, words: u8) -> io::Result<Vec<u8>> {
    let words = usize::from(words).min(LINK_MODE_WORDS_MAX);
    let mut buf = vec![0u8; LINK_SETTINGS_HEADER + 3 * LINK_MODE_WORDS_MAX * 4];
    buf[..4].copy_from_slice(&ETHTOOL_GLINKSETTINGS.to_ne_bytes());
    buf[15] = words as u8;
    // SAFETY: the kernel writes the header and 3 masks of at most `words` (<= 127) words, all
    // inside `buf`.
    unsafe { ethtool(fd, name, buf.as_mut_ptr())? };
    Ok(buf)
}

/// `struct ethtool_ts_info`.
#[repr(C)]
#[derive(Default)]
struct EthtoolTsInfo {
    cmd: u32,
    so_timestamping: u32,
    phc_index: i32,
    tx_types: u32,
    tx_reserved: [u32; 3],
    rx_filters: u32,
    rx_reserved: [u32; 3],
}

/// `ETHTOOL_GET_TS_INFO`: `(so_timestamping, phc_index, tx_types)`.
pub(crate) fn ts_info(fd: impl AsFd, name: &str) -> io::Result<(u32, i32, u32)> {
    let mut info = EthtoolTsInfo {
        cmd: ETHTOOL_GET_TS_INFO,
        phc_index: -1,
        ..EthtoolTsInfo::default()
    };
    // SAFETY: GET_TS_INFO writes one ethtool_ts_info, the struct `info` is.
    unsafe { ethtool(fd, name, (&mut info as *mut EthtoolTsInfo).cast())? };
    Ok((info.so_timestamping, info.phc_index, info.tx_types))
}

/// `SIOCGHWTSTAMP` (`set` false) or `SIOCSHWTSTAMP` (`set` true) with `config`, which the
/// kernel fills with the interface's stamping configuration either way.
pub(crate) fn hwtstamp(
    fd: impl AsFd,
    name: &str,
    config: &mut libc::hwtstamp_config,
    set: bool,
) -> io::Result<()> {
    let mut req = ifreq(name);
    req.ifr_ifru.ifru_data = (config as *mut libc::hwtstamp_config).cast();
    let request = if set {
        libc::SIOCSHWTSTAMP
    } else {
        libc::SIOCGHWTSTAMP
    };
    // SAFETY: the ifreq points at a live hwtstamp_config, all these ioctls read or write.
    if unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), request, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
