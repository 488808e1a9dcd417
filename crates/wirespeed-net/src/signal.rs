//! SIGINT and SIGTERM as a flag: the agent's accept loop and the client's interval loop poll it
//! and stop cleanly (sessions told, sockets shut, results printed) instead of dying mid-write.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Routes SIGINT and SIGTERM to [`requested`]. Call once, from the main thread.
pub(crate) fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub(crate) fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
