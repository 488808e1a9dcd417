//! Network devices by name: `if_nametoindex`, `getifaddrs`, and the `SIOCGIFHWADDR` and
//! `SIOCGIFMTU` ioctls over an `ifreq`.
//!
//! An `ifreq` is built here only, from a name copied with its bounds checked (at most
//! `IFNAMSIZ - 1` bytes, so the kernel always finds its terminating NUL); the ioctls here write
//! nothing but that `ifreq`.

use std::ffi::{CStr, CString};
use std::io;
use std::mem::zeroed;
use std::net::IpAddr;
use std::os::fd::{AsFd, AsRawFd};

/// The index of interface `name`, `None` if there is none (or the name holds a NUL).
pub fn index(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name; 0 means no such interface.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    (index != 0).then_some(index)
}

/// An `ifreq` naming `name` (cut to `IFNAMSIZ - 1` bytes), the rest zero.
pub fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { zeroed() };
    let room = req.ifr_name.len() - 1;
    for (d, &s) in req.ifr_name[..room].iter_mut().zip(name.as_bytes()) {
        *d = s as libc::c_char;
    }
    req
}

/// `SIOCGIFHWADDR`: the interface's hardware address (its first six bytes), through any
/// socket `fd`.
pub(crate) fn hardware_address(fd: impl AsFd, name: &str) -> io::Result<[u8; 6]> {
    let mut r = ifreq(name);
    // SAFETY: SIOCGIFHWADDR fills the ifreq's union, and nothing else.
    if unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::SIOCGIFHWADDR, &mut r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut mac = [0u8; 6];
    // SAFETY: SIOCGIFHWADDR wrote the sockaddr member of the union (and the union is plain
    // data, so any bytes in it are a valid sockaddr).
    let sa_data = unsafe { r.ifr_ifru.ifru_hwaddr.sa_data };
    for (m, &b) in mac.iter_mut().zip(sa_data.iter()) {
        *m = b as u8;
    }
    Ok(mac)
}

/// `SIOCGIFMTU`: the interface's MTU, through any socket `fd`.
pub(crate) fn mtu(fd: impl AsFd, name: &str) -> io::Result<u32> {
    let mut r = ifreq(name);
    // SAFETY: SIOCGIFMTU fills the ifreq's union, and nothing else.
    if unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::SIOCGIFMTU, &mut r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFMTU wrote the int member of the union (any bits are a valid int).
    Ok(unsafe { r.ifr_ifru.ifru_mtu } as u32)
}

/// The name of the interface that holds `addr` (`getifaddrs`), the first one listed.
pub fn interface_with(addr: IpAddr) -> Option<String> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we walk read-only and free once.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return None;
        }
        let mut found = None;
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            if !ifa.ifa_addr.is_null() {
                let family = i32::from((*ifa.ifa_addr).sa_family);
                let ip = if family == libc::AF_INET {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(IpAddr::from(
                        u32::from_be(sin.sin_addr.s_addr).to_be_bytes(),
                    ))
                } else if family == libc::AF_INET6 {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    Some(IpAddr::from(sin6.sin6_addr.s6_addr))
                } else {
                    None
                };
                if ip == Some(addr) {
                    found = Some(CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned());
                    break;
                }
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
        found
    }
}
