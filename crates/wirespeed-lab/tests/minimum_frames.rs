//! Issue 20 part B (root; skipped otherwise): 64-byte UDP frames offered above 100 Mbit/s line
//! rate (148,809 frames/s) as UDP GSO super-packets of 64 segments. Every frame the emulator
//! reads is forwarded or dropped by the configured queue: the memory bound takes at most a
//! sliver (a super-packet used to be refused whole when its last segment would not fit, which
//! took most of the frames), and the receiver gets what was forwarded. No timing is asserted:
//! how many frames the link forwards on a busy machine is printed, not checked.

use crate::common;

use wirespeed_lab::{Lab, Topology, sys};

#[test]
fn minimum_frames_above_line_rate_are_lost_only_at_the_queue() {
    if !sys::has_net_admin() {
        eprintln!("minimum_frames: skipped (needs CAP_NET_ADMIN)");
        return;
    }
    let text = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"100M\"\ndelay = \"1ms\"\nqueue = 1000\nipv6 = false\n";
    let topology = Topology::parse(text, "minimum-frames").expect("valid topology");
    let id = format!("m{:03x}", std::process::id() & 0xfff);
    let lab = Lab::build(topology, &format!("minf-{id}"), &id).expect("the lab builds");
    let emulator = lab.start();
    let (b, f) = common::blast_then_stop(lab, emulator, 18, 1.5, None);
    let c = f.counters;
    eprintln!(
        "offered {:.0} frames/s ({} sent), received {} ({} dropped by h2's stack); counters {c:?}; cost {:?}; host drops {}",
        b.sent as f64 / b.send_seconds,
        b.sent,
        b.received,
        b.receiver_drops,
        f.cost,
        f.device.sender_tx_dropped
    );
    if !f.cost.offloads || f.cost.super_packets == 0 || b.sent as f64 / b.send_seconds < 200_000.0 {
        eprintln!("minimum_frames: no super-packets, or the sender did not outrun the link here");
        return;
    }
    assert!(c.drops_queue > 0, "offered above line rate: {c:?}");
    assert!(
        c.drops_memory * 100 <= c.frames_in,
        "the memory bound took more than 1% of the frames: {c:?}"
    );
    // What the emulator forwarded reached h2: the receiver got it, or h2's own stack dropped
    // it (a receiver starved of CPU on a busy machine), counted in h2's namespace.
    assert!(
        b.received <= c.frames_out && (b.received + b.receiver_drops) * 10 >= c.frames_out * 9,
        "received {} of {} forwarded ({} dropped by h2's stack)",
        b.received,
        c.frames_out,
        b.receiver_drops
    );
}
