//! The SIGINT/SIGTERM handler behind `crate::signal`: its state is atomics only, and it calls
//! nothing but `clock_gettime` (vDSO) and `_exit`, all async-signal-safe. Installing a handler
//! is the one thing here no crate offers safely; the handler is private, so no caller can
//! install one that is not async-signal-safe.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: AtomicBool = AtomicBool::new(false);

/// The first signal that arrived (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

static FORWARD: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// CLOCK_MONOTONIC milliseconds of the first signal (0: none yet).
static FIRST_AT_MS: AtomicI64 = AtomicI64::new(0);

/// A repeat within this long of the first is the same request, not an impatient second one:
/// `timeout` signals its child and then the child's whole process group, so a command run
/// under it gets the same SIGTERM twice at once.
const SAME_REQUEST_MS: i64 = 1000;

fn monotonic_ms() -> i64 {
    // clock_gettime is async-signal-safe and writes only its result.
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000 + 1
}

extern "C" fn on_signal(signal: libc::c_int) {
    let now = monotonic_ms();
    if STOP.swap(true, Ordering::SeqCst) {
        let first = FIRST_AT_MS.load(Ordering::SeqCst);
        if first == 0 || now - first >= SAME_REQUEST_MS {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(128 + signal) }
        }
        return;
    }
    FIRST_AT_MS.store(now, Ordering::SeqCst);
    RECEIVED.store(signal, Ordering::SeqCst);
    if let Some(f) = FORWARD.get() {
        f.store(true, Ordering::SeqCst);
    }
}

/// Sets the flag the handler also raises; the first one given wins.
pub(crate) fn forward_to(flag: Arc<AtomicBool>) {
    let _ = FORWARD.set(flag);
}

/// Routes SIGINT and SIGTERM to the handler.
pub(crate) fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches atomics and calls clock_gettime and _exit, all
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub(crate) fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The first SIGINT or SIGTERM that arrived (0: none).
pub(crate) fn received() -> i32 {
    RECEIVED.load(Ordering::SeqCst)
}
