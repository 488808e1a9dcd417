//! What Linux does with a socket-buffer request, so that "a buffer of N packets" can be made
//! real and its granted size predicted and checked.
//!
//! `setsockopt(SO_SNDBUF/SO_RCVBUF, n)` stores `2 n` (the kernel reserves the second half for
//! its own bookkeeping: sk_buff headers and slack, `net/core/sock.c` `sk_setsockopt`), after
//! clamping `n` to `net.core.wmem_max` / `rmem_max`, and never less than SOCK_MIN_SNDBUF /
//! SOCK_MIN_RCVBUF. Setting either one locks that buffer: autotuning (`tcp_rmem`/`tcp_wmem`,
//! `tcp_moderate_rcvbuf`) stops for it, which is what a sweep wants. The receive window a
//! buffer yields is about half of the granted size on kernels with `tcp_adv_win_scale = 1`, and
//! a learned payload/truesize ratio since 6.x; TCP_WINDOW_CLAMP caps it exactly.
//! Measured here (kernel 6.18, x86_64), requested -> granted:
//!
//! | request | SO_SNDBUF | SO_RCVBUF |
//! |---|---|---|
//! | 1 | 4608 | 2304 |
//! | 1460 | 4608 | 2920 |
//! | 4096 | 8192 | 8192 |
//! | 65536 | 131072 | 131072 |
//! | 8 MiB (max 4 MiB) | 8 MiB | 8 MiB |

use serde::{Deserialize, Serialize};

/// Which buffer of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// SO_SNDBUF.
    Send,
    /// SO_RCVBUF.
    Receive,
}

/// The kernel's floor for SO_SNDBUF: `2 * (2048 + sizeof(struct sk_buff))` rounded, on x86_64.
pub const SOCK_MIN_SNDBUF: u64 = 4608;
/// The kernel's floor for SO_RCVBUF: half of the send floor.
pub const SOCK_MIN_RCVBUF: u64 = 2304;

impl BufferKind {
    /// The floor the kernel applies.
    pub fn floor(self) -> u64 {
        match self {
            BufferKind::Send => SOCK_MIN_SNDBUF,
            BufferKind::Receive => SOCK_MIN_RCVBUF,
        }
    }

    /// The sysctl that caps an unprivileged request.
    pub fn sysctl(self) -> &'static str {
        match self {
            BufferKind::Send => "net.core.wmem_max",
            BufferKind::Receive => "net.core.rmem_max",
        }
    }
}

/// What getsockopt will report after a request of `requested` bytes, with the sysctl cap
/// `max` (ignored when `forced`: SO_SNDBUFFORCE / SO_RCVBUFFORCE as root).
pub fn linux_granted(kind: BufferKind, requested: u64, max: u64, forced: bool) -> u64 {
    let capped = if forced {
        requested
    } else {
        requested.min(max)
    };
    capped.saturating_mul(2).max(kind.floor())
}

/// Whether a request was cut down by the sysctl cap, and the figure it was cut to.
pub fn clamped_by_max(requested: u64, max: u64, forced: bool) -> Option<u64> {
    (!forced && requested > max).then_some(max)
}
