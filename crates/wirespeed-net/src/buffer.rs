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

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment of every buffer: a page.
pub const ALIGN: usize = 4096;

/// A zero-filled, page-aligned byte buffer of a fixed length, allocated once.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only reads; writes need &mut.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` zero bytes starting on a page boundary.
    pub fn zeroed(len: usize) -> AlignedBuf {
        if len == 0 {
            return AlignedBuf {
                ptr: NonNull::dangling(),
                len: 0,
            };
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        AlignedBuf { ptr, len }
    }

    /// A page-aligned copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> AlignedBuf {
        let mut b = AlignedBuf::zeroed(bytes.len());
        b.copy_from_slice(bytes);
        b
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, ALIGN).expect("a buffer length below isize::MAX")
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated in `zeroed` with this very layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) };
        }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes at {:p})", self.len, self.ptr)
    }
}

/// The byte pattern ttcp sends: printable characters, so a capture is readable. Page-aligned
/// (see [`AlignedBuf`]).
pub(crate) fn pattern(len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::zeroed(len);
    for (i, x) in b.iter_mut().enumerate() {
        *x = b' ' + (i % 95) as u8;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_start_on_a_page_and_hold_their_bytes() {
        for len in [1, 64, 1472, 131_072, 131_073] {
            let mut b = AlignedBuf::zeroed(len);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0, "len {len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 7;
            assert_eq!(b[len - 1], 7);
        }
        let c = AlignedBuf::from_slice(b"wirespeed");
        assert_eq!(&c[..], b"wirespeed");
        assert_eq!(c.as_ptr() as usize % ALIGN, 0);
        assert!(AlignedBuf::zeroed(0).is_empty());
    }
}
