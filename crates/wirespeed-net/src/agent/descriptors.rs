//! The agent's descriptors under `ulimit -n` (issue 32 item 3): the connections in their
//! handshake are capped by what the limit leaves beside every session slot and a headroom, so
//! that silent peers cannot take the descriptors an admitted session opens next.
//!
//! Measured on the agent (issue 32, `/proc/PID/fd`): the agent alone holds 4 descriptors, an
//! idle session 3 (its control connection and two handles the agent keeps to close it: the
//! live-controls map and the idle list), a connection in its handshake 2 (itself and the
//! waiting list's handle). Under `ulimit -n 256` the default 64 idle sessions hold 196 of
//! them, and the default `--max-pending` of 256 handshakes, never bounded by the limit, took
//! the other 60: a legitimate session, past its accept, then failed with "Too many open
//! files" on its own.

/// Descriptors kept free under the limit for the sessions already admitted: a session opens a
/// few more after its accept (its data connections, UDP sockets, the /proc files of its
/// environment record).
pub const HEADROOM: u64 = 32;

/// What a session past its hello holds while it sits idle.
pub const PER_IDLE_SESSION: u64 = 3;

/// What a connection holds while in its handshake.
pub const PER_HANDSHAKE: u64 = 2;

/// However low the limit, a few handshakes may run (a newcomer then replaces the one that has
/// waited longest), so that a client can always reach a slot an idler gives up.
pub const LEAST_HANDSHAKES: usize = 2;

/// The process's `ulimit -n` now (it can be changed from outside while the agent runs, with
/// `prlimit`); `None` when unlimited.
pub(super) fn limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// How many connections may be in their handshake at once: `--max-pending`, or fewer when
/// the descriptor limit leaves less room beside `max_sessions` idle sessions, the descriptors
/// open when the agent started (`open_at_start`) and the [`HEADROOM`].
pub fn handshake_cap(
    max_pending: usize,
    max_sessions: usize,
    limit: Option<u64>,
    open_at_start: u64,
) -> usize {
    let Some(limit) = limit else {
        return max_pending;
    };
    let sessions = u64::try_from(max_sessions)
        .unwrap_or(u64::MAX)
        .saturating_mul(PER_IDLE_SESSION);
    let reserved = open_at_start
        .saturating_add(sessions)
        .saturating_add(HEADROOM);
    let room = limit.saturating_sub(reserved) / PER_HANDSHAKE;
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .max(LEAST_HANDSHAKES)
        .min(max_pending)
}

/// How many descriptors the connection just accepted (`fd`, the lowest number free, so about
/// the count of descriptors open) leaves short of [`HEADROOM`] under `limit`. So many idlers
/// are closed at once rather than when an accept fails: by then a legitimate session, already
/// past its accept, had failed to open its own. The handshake cap keeps silent peers out of
/// the headroom; this is for what the cap does not count (sessions running tests, a lower
/// limit set while the agent runs).
pub fn short_of_headroom(fd: u64, limit: Option<u64>) -> u64 {
    limit.map_or(0, |limit| {
        fd.saturating_add(HEADROOM + 1)
            .saturating_sub(limit)
            .min(HEADROOM)
    })
}
