//! SIGINT and SIGTERM as a flag: the agent's accept loop and the client's interval loop poll it
//! and stop cleanly (sessions told, sockets shut, results printed) instead of dying mid-write.
//! A second signal a second or more after the first ends the process at once (status 128 + the
//! signal), for a stop that hangs: what was already saved is whole, so nothing saved is lost.

use std::sync::{Arc, OnceLock};

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};

/// SIGINT's number, for callers without libc.
pub const SIGINT: i32 = libc::SIGINT;
/// SIGTERM's number.
pub const SIGTERM: i32 = libc::SIGTERM;

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
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe and writes only `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
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

/// Routes SIGINT and SIGTERM to `flag` too (the client's interrupt: stop the test, print the
/// partial result). The first flag given wins.
pub fn forward_to(flag: Arc<AtomicBool>) {
    let _ = FORWARD.set(flag);
    install();
}

/// Routes SIGINT and SIGTERM to [`requested`]. Call once, from the main thread.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches atomics and calls _exit, both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The number of the first SIGINT or SIGTERM that arrived, if one did.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
