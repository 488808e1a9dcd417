//! A CPU wake-up latency request for the length of a measurement (the kernel's PM QoS
//! interface, Documentation/power/pm_qos_interface.rst), as cyclictest holds one.
//!
//! An idle CPU that halts takes tens of microseconds to wake for a packet, and on a virtual
//! machine longer the longer it slept (the hypervisor deschedules a halted vCPU). A best-case
//! delay measurement, and the lab's emulator that stamps frames when its thread wakes, then see
//! that wake-up as path delay that varies from round to round. Writing a 0 us limit to
//! `/dev/cpu_dma_latency` makes the idle governor pick its polling state while the file stays
//! open; closing it (also by exit or crash) releases the request, so nothing outlives the run.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

const DEVICE: &str = "/dev/cpu_dma_latency";

/// A held request; dropped, the kernel forgets it.
#[derive(Debug)]
pub struct CpuLatencyHold {
    _file: File,
    /// The latency limit requested, microseconds.
    pub max_latency_us: u32,
}

/// Asks that no CPU take longer than `max_latency_us` to leave idle while the hold lives.
/// Needs write access to /dev/cpu_dma_latency (root).
pub fn hold(max_latency_us: u32) -> io::Result<CpuLatencyHold> {
    let mut file = OpenOptions::new().write(true).open(DEVICE)?;
    // The device takes a binary s32 (or a hex string); write the value in one call.
    let value = i32::try_from(max_latency_us).unwrap_or(i32::MAX);
    file.write_all(&value.to_ne_bytes())?;
    Ok(CpuLatencyHold {
        _file: file,
        max_latency_us,
    })
}
