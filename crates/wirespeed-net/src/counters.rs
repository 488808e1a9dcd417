//! What a stream thread publishes as it runs (bytes, calls, datagrams, its longest call), read
//! by the engine for intervals and by the report at the end; with the `-O` warm-up's snapshot,
//! which the totals leave out. Below the TCP and UDP stream loops and the engine that runs them.

use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::report::CpuTime;
use crate::sockopt;

/// Totals a stream thread publishes as it goes.
#[derive(Debug, Default)]
pub struct Counters {
    pub bytes: AtomicU64,
    pub(crate) calls: AtomicU64,
    pub(crate) datagrams: AtomicU64,
    /// The longest single write, nanoseconds (TCP senders): a stalled writer shows here.
    pub(crate) longest_call_nanos: AtomicU64,
    pub(crate) done: AtomicBool,
    /// A TCP sender's socket, to read its retransmits when the warm-up ends.
    pub(crate) warm_tcp: Option<TcpStream>,
    /// End of the `-O` warm-up, if any.
    pub(crate) warmup_until: Option<Instant>,
    /// The stream's totals when the warm-up ended.
    pub(crate) warm: OnceLock<Warm>,
}

/// A stream's totals at the end of the warm-up, subtracted from its report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Warm {
    pub(crate) bytes: u64,
    pub(crate) calls: u64,
    pub(crate) cpu: CpuTime,
    pub(crate) at: Instant,
    /// A TCP sender's `tcpi_total_retrans` then: warm-up retransmits stay out of the totals.
    pub(crate) retransmits: Option<u32>,
}

impl Counters {
    pub fn new(warmup_until: Option<Instant>, warm_tcp: Option<TcpStream>) -> Counters {
        Counters {
            warmup_until,
            warm_tcp,
            ..Counters::default()
        }
    }

    /// Publishes the totals; called by the stream's own thread after each call, so the
    /// warm-up snapshot takes that thread's CPU time. After the warm-up this is two relaxed
    /// stores and one atomic load.
    pub(crate) fn publish(&self, bytes: u64, calls: u64) {
        self.bytes.store(bytes, Ordering::Relaxed);
        self.calls.store(calls, Ordering::Relaxed);
        if let Some(until) = self.warmup_until
            && self.warm.get().is_none()
        {
            let now = Instant::now();
            if now >= until {
                let _ = self.warm.set(Warm {
                    bytes,
                    calls,
                    cpu: sockopt::thread_cpu(),
                    at: now,
                    retransmits: self
                        .warm_tcp
                        .as_ref()
                        .and_then(sockopt::tcp_info)
                        .map(|t| t.retransmits),
                });
            }
        }
    }
}
