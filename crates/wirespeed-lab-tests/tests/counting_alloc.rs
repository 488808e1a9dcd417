//! For the unit tests only: the system allocator, counting the allocations each thread
//! makes while it asks to be counted ([`count_on_this_thread`]), so that a test can prove the
//! emulator's data path allocates nothing per frame once warm (issue 20). The count is the
//! calling thread's own: tests running in parallel on other threads do not disturb it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    // `const` initialisers and no destructor: touching them never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

fn note() {
    // `try_with`: the allocator may run while a thread's locals are being torn down.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: every call is passed to `System` unchanged; counting touches only thread-local
// cells that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller upholds `alloc`'s contract, which `System.alloc` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` came from this allocator, which is `System`'s; the caller upholds the
        // rest of `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` with this thread's allocations counted; returns its result and how many
/// allocations (and reallocations) it made.
pub fn count_on_this_thread<T>(f: impl FnOnce() -> T) -> (T, u64) {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|on| on.set(true));
    let out = f();
    COUNTING.with(|on| on.set(false));
    (out, COUNT.with(|c| c.get()))
}

#[test]
fn an_allocation_is_counted_and_none_is_not() {
    let ((), none) = count_on_this_thread(|| {
        std::hint::black_box(1 + 1);
    });
    assert_eq!(none, 0);
    let (v, one) = count_on_this_thread(|| std::hint::black_box(vec![1u8; 100]));
    assert_eq!(one, 1);
    drop(v);
}
