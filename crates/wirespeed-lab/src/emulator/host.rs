//! A slow host on the emulator: the time its stack and driver spend on each frame.
//!
//! A namespace on a modern machine sends and answers within microseconds; the hosts of the
//! seeds did not. Van Jacobson's Sun 3/60s (seed 004) took about 2.4 ms of host time for one
//! 1460-byte segment and its acknowledgement (the 1-packet row of his table: 384 KB/s is
//! 3.71 ms per round trip, of which the wire holds 1.30 ms), and Dan Hansen's reply in the
//! same thread puts the loss exactly there: "excessive processing prior to transmission and
//! after reception of frames (the wire would be idle during this time)". So a host port has
//! a processing cost, fixed plus per byte of the packet, for each frame it transmits (before
//! the frame reaches the link) and for each frame it receives (before its stack sees it).
//!
//! One CPU per port does both: [`HostCpu`] is a single FIFO server, so a frame that arrives
//! while the host is busy with the previous one, in either direction, waits for it. Time is
//! passed in ([`Nanos`]); the lab calls it on the real clock at the instants frames reach the
//! port, the unit tests in virtual time.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::clock::Nanos;
use super::link::TAP_ETHERNET_HEADER;
use crate::topology::{Cost, HostConfig};

/// What a host's CPU did so far (shown by `lab status` beside the port's counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostCounters {
    /// Frames charged on their way out.
    pub transmitted: u64,
    /// Frames charged on their way in.
    pub received: u64,
    /// Nanoseconds the CPU was busy with them.
    pub busy_ns: u64,
    /// Nanoseconds frames waited for the CPU (the previous frame was still being processed).
    pub waited_ns: u64,
}

/// The CPU of one host port: a single server, first come first served.
#[derive(Debug, Clone)]
pub struct HostCpu {
    transmit: Cost,
    receive: Cost,
    free: Nanos,
    counters: HostCounters,
}

impl HostCpu {
    /// An idle CPU with the host's costs.
    pub fn new(config: &HostConfig) -> HostCpu {
        HostCpu {
            transmit: config.transmit,
            receive: config.receive,
            free: Nanos(0),
            counters: HostCounters::default(),
        }
    }

    /// A frame of `tap_len` bytes left the host's stack at `arrival`: when the driver has it
    /// ready for the link.
    pub fn transmit(&mut self, arrival: Nanos, tap_len: u64) -> Nanos {
        self.counters.transmitted += 1;
        self.serve(arrival, self.transmit.of(packet_bytes(tap_len)))
    }

    /// A frame of `tap_len` bytes reached the host's port at `arrival`: when the stack sees it.
    pub fn receive(&mut self, arrival: Nanos, tap_len: u64) -> Nanos {
        self.counters.received += 1;
        self.serve(arrival, self.receive.of(packet_bytes(tap_len)))
    }

    /// Counters so far.
    pub fn counters(&self) -> HostCounters {
        self.counters
    }

    /// Starts the job when it arrives or when the previous one is done, whichever is later.
    /// Calls come in the order frames reach the port; an arrival earlier than the previous
    /// one (two threads a few microseconds apart) simply queues behind it.
    fn serve(&mut self, arrival: Nanos, cost: Duration) -> Nanos {
        let start = arrival.max(self.free);
        self.free = start.after(cost);
        self.counters.busy_ns += u64::try_from(cost.as_nanos()).unwrap_or(u64::MAX);
        self.counters.waited_ns += start.minus(arrival) as u64;
        self.free
    }
}

/// Bytes of the packet a TAP frame carries (everything after the Ethernet header), on which
/// the per-byte cost is charged.
pub fn packet_bytes(tap_len: u64) -> u64 {
    tap_len.saturating_sub(TAP_ETHERNET_HEADER)
}
