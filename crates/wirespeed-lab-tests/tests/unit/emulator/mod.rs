use wirespeed_lab::emulator::clock::{Clock, Nanos};
mod aqm;
mod clock;
mod gso;
mod handoff;
mod host;
mod link;
mod occupancy;
mod router;
mod shared;
mod stats;

use std::time::Duration;

use wirespeed_lab::emulator::clock::{RealClock, VirtualClock};
use wirespeed_lab::emulator::link::{Direction, Verdict};
use wirespeed_lab::emulator::stats::LatenessHistogram;
use wirespeed_lab::emulator::*;
use wirespeed_lab::topology::{DirectionConfig, QueueLimit};
use wirespeed_model::{BitRate, LinkLayer};

fn ten_megabit() -> Direction {
    Direction::new(
        DirectionConfig {
            rate: BitRate::from_bits_per_second(10_000_000),
            delay: Duration::from_micros(100),
            queue: QueueLimit::Packets(1000),
            loss: 0.0,
            seed: 1,
            hidden_hops: 0,
        },
        LinkLayer::Ethernet { vlan_tags: 0 },
        1500,
    )
}

fn schedule(start: Nanos, frames: u64) -> Vec<(Nanos, u64)> {
    let mut d = ten_megabit();
    (0..frames)
        .filter_map(|i| match d.offer(start, 1514, Duration::ZERO) {
            Verdict::Deliver { at } => Some((at, i)),
            Verdict::Drop(_) => None,
        })
        .collect()
}

#[test]
fn virtual_time_releases_exactly_on_schedule() {
    let clock = VirtualClock::new(Nanos(0));
    let mut released = Vec::new();
    let mut lateness = LatenessHistogram::default();
    pump(&clock, schedule(Nanos(0), 100), |i, at, now| {
        lateness.record(now.minus(at));
        released.push((i, now));
    });
    assert_eq!(released.len(), 100);
    assert_eq!(released[99].1, Nanos(100 * 1_230_400 + 100_000));
    assert_eq!(lateness.summary().max_us, 0.0);
}

#[test]
fn real_time_never_releases_early_and_keeps_the_schedule() {
    // 20 full frames at 10 Mbit/s: 24.6 ms of real time, released against the same
    // schedule the virtual run uses. Early is a bug; late is the machine: reported, not
    // asserted (a p50 bound of 1 ms failed once in a parallel run of the crate's tests on
    // a 2-core machine at load 8: this clock is not real-time).
    let clock = RealClock::spinning();
    let start = clock.now().after(Duration::from_millis(1));
    let plan = schedule(start, 20);
    let mut lateness = LatenessHistogram::default();
    let mut early = 0;
    pump(&clock, plan, |_, at, now| {
        if now < at {
            early += 1;
        }
        lateness.record(now.minus(at));
    });
    assert_eq!(early, 0);
    assert_eq!(lateness.summary().frames, 20);
    eprintln!("lateness: {:?}", lateness.summary());
}
