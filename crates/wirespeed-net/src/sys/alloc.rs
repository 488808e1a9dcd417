//! The allocation behind [`crate::buffer::AlignedBuf`]: a zero-filled byte buffer that starts
//! on a page boundary (why it matters is in `crate::buffer`).
//!
//! Invariant: `ptr` is valid for `len` initialised bytes allocated with `layout(len)` and owned
//! by this value alone (or dangling with `len == 0`, never allocated nor freed).

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

    /// The start of the buffer as a raw pointer with the allocation's own provenance, for
    /// I/O vectors that outlive any one borrow of the buffer (see `sys::mmsg`).
    pub(crate) fn base_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
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
