//! `getrusage(RUSAGE_THREAD)`: the calling thread's user and system CPU time (rustix has no
//! `getrusage`).

use std::mem::zeroed;

/// The calling thread's (user, system) CPU seconds.
pub(crate) fn thread_times() -> (f64, f64) {
    // SAFETY: rusage is plain old data and getrusage fills it.
    let mut ru: libc::rusage = unsafe { zeroed() };
    // SAFETY: a valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}
