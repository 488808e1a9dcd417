//! `AF_PACKET`: binding a packet socket to one interface (`struct sockaddr_ll`, which
//! `socket2` has no safe constructor for).

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsFd, AsRawFd};

/// Binds packet socket `fd` to the interface of index `index` (protocol 0: the socket sends
/// but is handed no received frame).
pub(crate) fn bind_to_interface(fd: impl AsFd, index: u32) -> io::Result<()> {
    // SAFETY: zeroed sockaddr_ll is valid.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = index as i32;
    // SAFETY: bind reads one sockaddr_ll of its true size.
    let rc = unsafe {
        libc::bind(
            fd.as_fd().as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
