//! An `AF_PACKET` socket that sees the frames a namespace's stack transmits on one interface,
//! each with the kernel's timestamp of the transmit (`dev_queue_xmit_nit` clones the frame to
//! packet sockets and stamps the clone just before the driver's `ndo_start_xmit`, which for a
//! TAP device queues it for the emulator's read). A classic BPF filter keeps only outgoing
//! frames and cuts each to [`SNAP_LEN`] bytes in the kernel, so the socket holds little.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Bytes of each frame kept: Ethernet, IP and transport headers and the start of the payload.
pub const SNAP_LEN: usize = 96;

/// `SKF_AD_OFF + SKF_AD_PKTTYPE`: the classic BPF ancillary load of the frame's type.
const AD_PKTTYPE: u32 = (-0x1000i32 + 4) as u32;

/// Opens the socket on interface `name` of the calling thread's network namespace:
/// non-blocking, outgoing frames only, [`SNAP_LEN`] bytes each, `SO_TIMESTAMPNS`.
pub fn open_outgoing(name: &str) -> std::io::Result<OwnedFd> {
    let cname = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: `cname` is a valid NUL-terminated string for the call.
    let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if index == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let protocol = (libc::ETH_P_ALL as u16).to_be();
    // SAFETY: plain socket creation; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            i32::from(protocol),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // The filter before the bind, so that no frame of another kind is queued in between.
    let program = [
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_B | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: AD_PKTTYPE,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: u32::from(libc::PACKET_OUTGOING),
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: SNAP_LEN as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
    ];
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    set_option(&fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog)?;
    set_option(
        &fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPNS,
        &1 as &libc::c_int,
    )?;
    // SAFETY: all-zero is a valid sockaddr_ll; the fields that matter are set below.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = protocol;
    addr.sll_ifindex = index as i32;
    // SAFETY: `addr` is a valid sockaddr_ll of the given length for the call.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

fn set_option<T>(fd: &OwnedFd, level: i32, name: i32, value: &T) -> std::io::Result<()> {
    // SAFETY: `value` points to a valid T of the size passed, for the call.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// One queued frame without waiting: its first bytes into `buf` (the filter has already cut
/// it to [`SNAP_LEN`]), how many, and its kernel timestamp (`CLOCK_REALTIME`, ns). `None`
/// when nothing is queued (or on an error).
pub fn recv_stamped(fd: &OwnedFd, buf: &mut [u8]) -> Option<(usize, i128)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one SCM_TIMESTAMPNS control message, aligned for cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: all-zero is a valid msghdr; the pointers are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: `msg` points to `iov` (valid for buf.len() bytes) and to `control` (valid for
    // its size), both alive for the call.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return None;
    }
    let len = (n as usize).min(buf.len());
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within the length it
    // set in `msg`; each header is checked before its data is read.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET
                && (*c).cmsg_type == libc::SO_TIMESTAMPNS
                && (*c).cmsg_len as usize
                    >= libc::CMSG_LEN(std::mem::size_of::<libc::timespec>() as u32) as usize
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Some((len, stamp?))
}
