//! Data-path buffers that start on a page boundary.
//!
//! On loopback the receiver's main cost is the kernel's copy from the socket buffer's pages
//! (page-aligned) into the user's buffer, and that copy is sensitive to where the user's buffer
//! starts within its page: when the destination lies a little past the source modulo 4 KiB,
//! each load "aliases" the store just before it and the copy stalls. Measured here (AMD EPYC,
//! two-thread loopback test, 128 KiB reads): a receive buffer 16 or 64 bytes into its page costs
//! 0.39-0.57 CPU-seconds per GB, one at offset 0, 256, 2048 or 3792 costs 0.19-0.23. A
//! `Vec<u8>` lands wherever the allocator puts it (glibc's mmap path gives offset 16), so the
//! cost changed from run to run. iperf3 `mmap`s its buffer and is always page-aligned; this type
//! makes ours the same.

pub use crate::sys::alloc::{ALIGN, AlignedBuf};

/// The byte pattern ttcp sends: printable characters, so a capture is readable. Page-aligned
/// (see [`AlignedBuf`]).
pub(crate) fn pattern(len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::zeroed(len);
    for (i, x) in b.iter_mut().enumerate() {
        *x = b' ' + (i % 95) as u8;
    }
    b
}
