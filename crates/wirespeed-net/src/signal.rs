//! SIGINT and SIGTERM as a flag: the agent's accept loop and the client's interval loop poll it
//! and stop cleanly (sessions told, sockets shut, results printed) instead of dying mid-write.
//! A second signal a second or more after the first ends the process at once (status 128 + the
//! signal), for a stop that hangs: what was already saved is whole, so nothing saved is lost.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::sys::signal as handler;

/// SIGINT's number, for callers without libc.
pub const SIGINT: i32 = libc::SIGINT;
/// SIGTERM's number.
pub const SIGTERM: i32 = libc::SIGTERM;

/// Routes SIGINT and SIGTERM to `flag` too (the client's interrupt: stop the test, print the
/// partial result). The first flag given wins.
pub fn forward_to(flag: Arc<AtomicBool>) {
    handler::forward_to(flag);
    install();
}

/// Routes SIGINT and SIGTERM to [`requested`]. Call once, from the main thread.
pub fn install() {
    handler::install();
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub fn requested() -> bool {
    handler::requested()
}

/// The number of the first SIGINT or SIGTERM that arrived, if one did.
pub fn received() -> Option<i32> {
    match handler::received() {
        0 => None,
        s => Some(s),
    }
}
