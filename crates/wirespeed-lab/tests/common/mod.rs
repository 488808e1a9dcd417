//! What the root tests that blast UDP through a two-host lab share: the blast, then the
//! data direction's status once the emulator has stopped and the lab is gone.

// Only the GSO sender of the benchmarks' send loop is used here.
#[allow(dead_code)]
#[path = "../../examples/common/blast.rs"]
pub mod blast;

use std::time::Duration;

use wirespeed_lab::{Emulator, Lab, PortStatus};

/// Blasts `payload`-byte datagrams from h1 to h2 for `seconds` (at `rate` datagrams/s, or as
/// fast as it goes), lets the last frames leave, stops the emulator and takes the lab down;
/// returns the blast and the h1 -> h2 port's status, whose frame accounting is checked.
pub fn blast_then_stop(
    lab: Lab,
    emulator: Emulator,
    payload: usize,
    seconds: f64,
    rate: Option<f64>,
) -> (blast::Blast, PortStatus) {
    let b = blast::udp_blast(&lab, blast::Sender::Gso, payload, seconds, rate);
    std::thread::sleep(Duration::from_millis(100));
    let status = emulator.status();
    emulator.stop();
    drop(lab);
    let f = status
        .into_iter()
        .find(|p| p.from == "h1")
        .expect("a port h1 -> h2");
    let c = f.counters;
    assert_eq!(
        c.frames_in,
        c.frames_out + c.drops_queue + c.drops_memory + c.drops_loss + c.drops_too_big,
        "every frame read is forwarded or dropped, and counted once: {c:?}"
    );
    (b, f)
}
