//! Batches of datagrams for `sendmmsg`/`recvmmsg` (and one `sendmsg` over a whole batch for
//! UDP segmentation offload): the kernel's message headers over buffers owned here.
//!
//! Invariants of [`Batch`]: `buf` holds `count` slots of `slot` bytes; `iov[i]` points at slot
//! `i` with `iov_len <= slot`; `msgs[i]` points at `iov[i]` and, with control, at its own
//! `control_slot` bytes of `control` with `msg_controllen <= control_slot`. None of the vectors
//! is resized after [`Batch::new`] (their heap blocks never move, whatever happens to the
//! `Batch` value), and every length is set through a method that checks it, so the pointers the
//! kernel is handed always describe live memory of this batch.

use std::io;
use std::marker::PhantomData;
use std::mem::zeroed;
use std::os::fd::{AsFd, AsRawFd};

use super::alloc::AlignedBuf;

/// `count` page-aligned datagram slots with their message headers, built once.
pub(crate) struct Batch {
    buf: AlignedBuf,
    slot: usize,
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    control: Vec<u8>,
    control_slot: usize,
}

impl Batch {
    /// `count` slots of `slot` bytes, each filled from `fill` (at least `slot` bytes long), with
    /// `control_slot` bytes of control-message space per slot (0: none).
    pub(crate) fn new(count: usize, slot: usize, fill: &[u8], control_slot: usize) -> Batch {
        let mut buf = AlignedBuf::zeroed(slot * count);
        for d in buf.chunks_mut(slot.max(1)) {
            d.copy_from_slice(&fill[..d.len()]);
        }
        let mut control = vec![0u8; control_slot * count];
        let base = buf.base_ptr();
        let mut iov: Vec<libc::iovec> = (0..count)
            .map(|i| libc::iovec {
                // SAFETY: i * slot is inside buf (or its end, for a zero-length slot).
                iov_base: unsafe { base.add(i * slot) }.cast(),
                iov_len: slot,
            })
            .collect();
        let cbase = control.as_mut_ptr();
        let mut msgs = Vec::with_capacity(count);
        for (i, v) in iov.iter_mut().enumerate() {
            // SAFETY: msghdr is plain old data; zero is a valid empty header.
            let mut h: libc::msghdr = unsafe { zeroed() };
            h.msg_iov = v;
            h.msg_iovlen = 1;
            if control_slot > 0 {
                // SAFETY: i * control_slot is inside control.
                h.msg_control = unsafe { cbase.add(i * control_slot) }.cast();
                h.msg_controllen = control_slot as _;
            }
            msgs.push(libc::mmsghdr {
                msg_hdr: h,
                msg_len: 0,
            });
        }
        Batch {
            buf,
            slot,
            iov,
            msgs,
            control,
            control_slot,
        }
    }

    /// The number of slots.
    pub(crate) fn count(&self) -> usize {
        self.msgs.len()
    }

    /// Slot `i`, all `slot` bytes of it.
    pub(crate) fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self.buf[i * self.slot..(i + 1) * self.slot]
    }

    /// The length slot `i` is sent with.
    pub(crate) fn len(&self, i: usize) -> usize {
        self.iov[i].iov_len
    }

    /// Sends slot `i` with `len` bytes (at most the slot).
    pub(crate) fn set_len(&mut self, i: usize, len: usize) {
        assert!(len <= self.slot, "{len} bytes in a {}-byte slot", self.slot);
        self.iov[i].iov_len = len;
    }

    /// `sendmmsg` of the first `n` slots, each one datagram; how many the kernel took.
    pub(crate) fn send_each(&mut self, fd: impl AsFd, n: usize) -> io::Result<usize> {
        let n = n.min(self.count());
        // SAFETY: msgs[..n] point at iovecs and buffers owned by `self` (the invariants above),
        // alive for the call.
        let r = unsafe {
            libc::sendmmsg(
                fd.as_fd().as_raw_fd(),
                self.msgs.as_mut_ptr(),
                n as libc::c_uint,
                0,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// One `sendmsg` over the first `n` slots back to back (their lengths as set; every slot
    /// but the last must be whole for the bytes to be contiguous datagrams): the form a
    /// `UDP_SEGMENT` socket cuts into datagrams. Returns `n` once the kernel took the message.
    pub(crate) fn send_contiguous(&mut self, fd: impl AsFd, n: usize) -> io::Result<usize> {
        let n = n.min(self.count());
        let total: usize = self.iov[..n].iter().map(|v| v.iov_len).sum();
        let total = total.min(self.buf.len());
        let mut one = libc::iovec {
            iov_base: self.buf.base_ptr().cast(),
            iov_len: total,
        };
        // SAFETY: msghdr is plain old data; zero is an empty header.
        let mut h: libc::msghdr = unsafe { zeroed() };
        h.msg_iov = &mut one;
        h.msg_iovlen = 1;
        // SAFETY: the header points at `one`, which covers `total <= buf.len()` bytes of `buf`.
        let r = unsafe { libc::sendmsg(fd.as_fd().as_raw_fd(), &h, 0) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n)
        }
    }

    /// `recvmmsg` into every slot (lengths reset to whole slots and control space to its full
    /// size first) with `flags` and no timeout (the socket's `SO_RCVTIMEO` bounds the wait);
    /// how many messages arrived. Read them with [`Batch::received`].
    pub(crate) fn receive(&mut self, fd: impl AsFd, flags: libc::c_int) -> io::Result<usize> {
        for (m, v) in self.msgs.iter_mut().zip(self.iov.iter_mut()) {
            v.iov_len = self.slot;
            m.msg_len = 0;
            if self.control_slot > 0 {
                m.msg_hdr.msg_controllen = self.control_slot as _;
            }
        }
        // SAFETY: msgs point at iovecs, buffers and control space owned by `self` (the
        // invariants above); a null timeout blocks up to SO_RCVTIMEO.
        let n = unsafe {
            libc::recvmmsg(
                fd.as_fd().as_raw_fd(),
                self.msgs.as_mut_ptr(),
                self.msgs.len() as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Message `i` of the last [`Batch::receive`]: its bytes (as far as the slot holds them) and
    /// its control messages (walk them with `sys::cmsg::messages`).
    pub(crate) fn received(&self, i: usize) -> (&[u8], &[u8]) {
        let m = &self.msgs[i];
        let got = (m.msg_len as usize).min(self.slot);
        let data = &self.buf[i * self.slot..i * self.slot + got];
        // msg_controllen is a size_t with glibc, a socklen_t with musl.
        #[allow(clippy::unnecessary_cast)]
        let clen = if self.control_slot == 0 || m.msg_hdr.msg_control.is_null() {
            0
        } else {
            (m.msg_hdr.msg_controllen as usize).min(self.control_slot)
        };
        let at = i * self.control_slot;
        (data, &self.control[at..at + clen])
    }
}

/// Message headers for `sendmmsg` of caller-owned frames, reused from call to call.
pub(crate) struct FrameBatch {
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

impl FrameBatch {
    /// Room for `max` frames per call.
    pub(crate) fn new(max: usize) -> FrameBatch {
        FrameBatch {
            iov: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                max
            ],
            // SAFETY: mmsghdr is plain data; all zeroes is a valid value.
            msgs: vec![unsafe { zeroed() }; max],
        }
    }

    /// Points the headers at `frames` (at most `max` of them), each one message, for a
    /// [`Prepared::send`] that borrows them until it is done.
    pub(crate) fn prepare<'a>(
        &'a mut self,
        frames: impl IntoIterator<Item = &'a [u8]>,
    ) -> Prepared<'a> {
        let mut n = 0;
        for (i, f) in frames.into_iter().take(self.iov.len()).enumerate() {
            // The kernel only reads through a send's iovec; the pointer is *mut by type only.
            self.iov[i] = libc::iovec {
                iov_base: f.as_ptr().cast_mut().cast(),
                iov_len: f.len(),
            };
            n = i + 1;
        }
        for (m, v) in self.msgs[..n].iter_mut().zip(self.iov.iter_mut()) {
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        Prepared {
            batch: self,
            n,
            _frames: PhantomData,
        }
    }
}

/// A [`FrameBatch`] pointing at frames that stay borrowed until [`Prepared::send`].
pub(crate) struct Prepared<'a> {
    batch: &'a mut FrameBatch,
    n: usize,
    _frames: PhantomData<&'a [u8]>,
}

impl Prepared<'_> {
    /// `sendmmsg` of the prepared frames; how many the kernel took.
    pub(crate) fn send(self, fd: impl AsFd) -> io::Result<usize> {
        // SAFETY: `n` mmsghdrs, each pointing at one iovec over a frame borrowed for as long as
        // `self` (the lifetime of `prepare`).
        let sent = unsafe {
            libc::sendmmsg(
                fd.as_fd().as_raw_fd(),
                self.batch.msgs.as_mut_ptr(),
                self.n as libc::c_uint,
                0,
            )
        };
        if sent < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(sent as usize)
        }
    }
}
