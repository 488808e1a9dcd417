//! The agent's memory budget (`serve --max-memory`): every session reserves what it will
//! allocate before it allocates it, and a request that does not fit is refused with a sentence.
//!
//! Issue 13 finding 5: `-R -P 8 -l 64MiB` took an agent from 11 MB to 535 MB RSS and `-P 32` had
//! it OOM-killed in a 1 GiB cgroup, because each stream allocates one `-l` buffer and nothing
//! added them up. The budget is a counter, not an allocator: [`Budget::reserve`] adds a
//! session's estimate (its streams' buffers and socket buffers plus fixed overheads) under the
//! limit or refuses, and the [`Reservation`] gives it back when the session ends, whatever way
//! it ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::spec::TestSpec;

/// What a session costs before its streams: its thread, the control frame reader (up to one
/// [`MAX_FRAME_BYTES`](crate::control::MAX_FRAME_BYTES) frame plus a 16 KiB read chunk), the
/// interval history and the report.
pub const SESSION_OVERHEAD_BYTES: u64 = 1024 * 1024;

/// What one stream costs besides its `-l` buffer: its thread's touched stack and counters.
pub const STREAM_OVERHEAD_BYTES: u64 = 64 * 1024;

/// What a connection costs before its handshake completes: its thread and a frame reader that
/// may fill to one frame.
pub const PENDING_BYTES: u64 = 320 * 1024;

/// The memory a test's streams ask the agent for (beyond [`SESSION_OVERHEAD_BYTES`]): per
/// stream (both directions with `--bidir`) its `-l` buffer, its overhead and the socket buffers
/// it asks for (`-w` and friends; the kernel doubles the value set and charges it to the
/// agent's memory cgroup).
pub fn streams_cost(spec: &TestSpec, flows: usize) -> u64 {
    let doubled = |b: Option<u64>| b.map_or(0, |b| b.saturating_mul(2));
    let sndbuf = doubled(spec.send_buffer_bytes.or(spec.window_bytes));
    let rcvbuf = doubled(spec.receive_buffer_bytes.or(spec.window_bytes));
    let per_stream = u64::from(spec.length_bytes)
        .saturating_add(STREAM_OVERHEAD_BYTES)
        .saturating_add(sndbuf)
        .saturating_add(rcvbuf);
    per_stream.saturating_mul(flows as u64)
}

/// The agent-wide memory counter.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    used: AtomicU64,
}

/// Bytes held against a [`Budget`]; given back on drop.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl Reservation {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Why a reservation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverBudget {
    /// What was asked for.
    pub asked: u64,
    /// What was still free.
    pub free: u64,
    /// The whole budget.
    pub limit: u64,
}

impl Budget {
    /// A budget of `limit` bytes, none used.
    pub fn new(limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicU64::new(0),
        })
    }

    /// The whole budget.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Holds `bytes` if they fit under the limit with everything already held.
    pub fn reserve(self: &Arc<Budget>, bytes: u64) -> Result<Reservation, OverBudget> {
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            let free = self.limit.saturating_sub(used);
            if bytes > free {
                return Err(OverBudget {
                    asked: bytes,
                    free,
                    limit: self.limit,
                });
            }
            match self.used.compare_exchange_weak(
                used,
                used + bytes,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Ok(Reservation {
                        budget: self.clone(),
                        bytes,
                    });
                }
                Err(now) => used = now,
            }
        }
    }
}

/// Bytes as MiB with one decimal, for refusals.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

impl OverBudget {
    /// The refusal a client prints: what the test needs, what is free, the limit and the flag.
    pub fn refusal(&self, what: &str) -> String {
        format!(
            "refused by the agent: {what} needs {} of memory, and only {} of this agent's {} budget is free; ask for fewer streams (-P) or a smaller -l/-w, or raise the limit (--max-memory on the agent)",
            mib(self.asked),
            mib(self.free),
            mib(self.limit)
        )
    }
}
