//! `fork`, which neither `rustix` nor `std` offers: the agent's `--daemon` detaches from the
//! shell that started it, as iperf3's `-D` does.

use std::io;

/// Which side of a [`fork`] this is.
pub(crate) enum Forked {
    /// The original process; the child's pid.
    Parent(i32),
    /// The new process.
    Child,
}

/// Forks the calling process. The caller must be the only thread (the [`crate::daemon`] wrapper
/// checks `/proc/self/status` first): a child forked beside other threads holds every lock as
/// it was at that instant, and a lock held by a thread that does not exist in the child is never
/// released. With one thread there is no such lock, and the child runs ordinary Rust.
pub(crate) fn fork() -> io::Result<Forked> {
    // SAFETY: fork has no memory-safety preconditions of its own; the single-thread requirement
    // above (checked by the only caller) is what makes running Rust code in the child sound.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}
