//! SIGINT and SIGTERM as a flag: the agent's accept loop and the client's interval loop poll it
//! and stop cleanly (sessions told, sockets shut, results printed) instead of dying mid-write.

use std::sync::{Arc, OnceLock};

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

static FORWARD: OnceLock<Arc<AtomicBool>> = OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
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
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
