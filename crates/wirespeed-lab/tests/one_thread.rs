//! Issue 20, the emulator side (root; skipped otherwise): a direction with super-packets asked
//! for one thread (`WIRESPEED_LAB_THREADS=1`, here `Lab::set_threads`) is served by one thread
//! that reads, releases and writes (`runtime::one_thread::run_one_thread`) instead of the default ingress
//! and egress threads; `lab status` says which (`cost.one_thread`). Through the one thread, UDP super-packets blasted across a 10 Gbit/s
//! link are each forwarded or dropped and counted once, and the receiver gets no more than was
//! forwarded. No timing is asserted.

use crate::common;

use wirespeed_lab::{Lab, Topology, sys};

fn two_hosts(rate: &str, tag: &str) -> Lab {
    let text = format!(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"{rate}\"\ndelay = \"100us\"\nqueue = 1000\nipv6 = false\n"
    );
    let topology = Topology::parse(&text, "one-thread").expect("valid topology");
    let id = format!("{tag}{:03x}", std::process::id() & 0xfff);
    Lab::build(topology, &format!("one-{id}"), &id).expect("the lab builds")
}

/// This test's labs' threads (named `ws-in-0:one-t1a2`, cut to 15 bytes) that start with
/// `prefix`: the other tests of this binary run their own labs in the same process.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.starts_with(prefix) && c.contains(":one-"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// The count of threads named `prefix`, once it reaches `want` or 5 s have passed: a thread
/// names itself once it runs, so right after the emulator starts, a busy machine can show it
/// under its parent's name.
fn threads_named_soon(prefix: &str, want: usize) -> usize {
    let since = std::time::Instant::now();
    loop {
        let n = threads_named(prefix);
        if n == want || since.elapsed() > std::time::Duration::from_secs(5) {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_direction_asked_for_one_thread_has_one_and_carries_every_frame_it_reads() {
    if !sys::has_net_admin() {
        eprintln!("one_thread: skipped (needs CAP_NET_ADMIN)");
        return;
    }
    // Asked for in code, so a colleague's environment cannot choose the other design.
    let mut lab = two_hosts("10G", "t");
    lab.set_threads(wirespeed_lab::runtime::Threads::One);
    let emulator = lab.start();
    let status = emulator.status();
    let offloaded = status.iter().all(|p| p.cost.offloads);
    if offloaded {
        assert!(status.iter().all(|p| p.cost.one_thread), "{status:?}");
        // Two ports, one thread each, none of the pair's.
        assert_eq!(threads_named_soon("ws-io-", 2), 2);
        assert_eq!(threads_named("ws-in-") + threads_named("ws-out-"), 0);
    }
    // Paced at 100,000 datagrams/s (0.8 Gbit/s): what is checked is the emulator's accounting.
    let (b, f) = common::blast_then_stop(lab, emulator, 1000, 1.0, Some(100_000.0));
    let c = f.counters;
    eprintln!(
        "10 Gbit/s: sent {}, received {}; counters {c:?}; cost {:?}",
        b.sent, b.received, f.cost
    );
    assert!(c.frames_out > 1_000, "{c:?}");
    assert_eq!(f.device.write_errors, 0);
    // The receiver never gets more than was forwarded. How much of it the receiving program
    // read is not asserted: on the idle host it read 58-100% of them with either design, every
    // one written into its TAP without error and none in the kernel's backlog drops; where in
    // the receiving host the rest went is not yet measured.
    assert!(
        b.received <= c.frames_out,
        "received {} of {} forwarded",
        b.received,
        c.frames_out
    );

    // At 1 Gbit/s the pair of threads serves each direction.
    let lab = two_hosts("1G", "u");
    let emulator = lab.start();
    let status = emulator.status();
    if status.iter().all(|p| p.cost.offloads) {
        assert!(status.iter().all(|p| !p.cost.one_thread), "{status:?}");
        assert_eq!(threads_named("ws-io-"), 0);
        assert_eq!(threads_named_soon("ws-in-", 2), 2);
    }
    emulator.stop();
    drop(lab);
}
