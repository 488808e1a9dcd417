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
pub(super) const HEADROOM: u64 = 32;

/// What a session past its hello holds while it sits idle.
pub(super) const PER_IDLE_SESSION: u64 = 3;

/// What a connection holds while in its handshake.
pub(super) const PER_HANDSHAKE: u64 = 2;

/// However low the limit, a few handshakes may run (a newcomer then replaces the one that has
/// waited longest), so that a client can always reach a slot an idler gives up.
pub(super) const LEAST_HANDSHAKES: usize = 2;

/// The process's `ulimit -n` now (it can be changed from outside while the agent runs, with
/// `prlimit`); `None` when unlimited.
pub(super) fn limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// How many connections may be in their handshake at once: `--max-pending`, or fewer when
/// the descriptor limit leaves less room beside `max_sessions` idle sessions, the descriptors
/// open when the agent started (`open_at_start`) and the [`HEADROOM`].
pub(super) fn handshake_cap(
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
pub(super) fn short_of_headroom(fd: u64, limit: Option<u64>) -> u64 {
    limit.map_or(0, |limit| {
        fd.saturating_add(HEADROOM + 1)
            .saturating_sub(limit)
            .min(HEADROOM)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The default limit of 1,024 leaves the default `--max-pending` alone; issue 32's 256
    /// leaves 14 handshakes beside 64 sessions; a limit below what the sessions need leaves
    /// the least.
    #[test]
    fn the_limits_of_issue_32() {
        assert_eq!(handshake_cap(256, 64, Some(1024), 4), 256);
        assert_eq!(handshake_cap(256, 64, None, 4), 256);
        // 256 - 4 - 192 - 32 = 28 descriptors, 14 handshakes.
        assert_eq!(handshake_cap(256, 64, Some(256), 4), 14);
        assert_eq!(handshake_cap(256, 64, Some(32), 4), LEAST_HANDSHAKES);
        assert_eq!(handshake_cap(1, 64, Some(32), 4), 1);
        assert_eq!(short_of_headroom(10, Some(256)), 0);
        assert_eq!(short_of_headroom(223, Some(256)), 0);
        assert_eq!(short_of_headroom(230, Some(256)), 7);
        assert_eq!(short_of_headroom(300, Some(256)), HEADROOM);
        assert_eq!(short_of_headroom(300, None), 0);
    }

    proptest! {
        /// Whatever the limit: the cap never exceeds `--max-pending`, and when it is above
        /// the least, every session idle and every handshake open still leave the headroom.
        #[test]
        fn the_cap_leaves_the_headroom(
            max_pending in 1usize..4096,
            max_sessions in 1usize..1024,
            limit in 8u64..100_000,
            open in 3u64..64,
        ) {
            let cap = handshake_cap(max_pending, max_sessions, Some(limit), open);
            prop_assert!(cap <= max_pending);
            prop_assert!(cap >= LEAST_HANDSHAKES.min(max_pending));
            if cap > LEAST_HANDSHAKES {
                let held = open + max_sessions as u64 * PER_IDLE_SESSION + cap as u64 * PER_HANDSHAKE;
                prop_assert!(held + HEADROOM <= limit, "{held} + {HEADROOM} > {limit}");
            }
        }
    }
}
