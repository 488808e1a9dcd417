use proptest::prelude::*;
use std::time::Duration;
use wirespeed_lab::emulator::clock::Nanos;
use wirespeed_lab::emulator::clock::{Clock, VirtualClock};
use wirespeed_lab::emulator::host::*;
use wirespeed_lab::emulator::link::{Direction, Verdict};
use wirespeed_lab::topology::{Cost, HostConfig};
use wirespeed_lab::topology::{DirectionConfig, QueueLimit};
use wirespeed_model::{BitRate, LinkLayer};

fn host(tx_fixed_us: u64, tx_ns_per_byte: u64, rx_fixed_us: u64, rx_ns_per_byte: u64) -> HostCpu {
    HostCpu::new(&HostConfig {
        transmit: Cost {
            fixed: Duration::from_micros(tx_fixed_us),
            per_byte: Duration::from_nanos(tx_ns_per_byte),
        },
        receive: Cost {
            fixed: Duration::from_micros(rx_fixed_us),
            per_byte: Duration::from_nanos(rx_ns_per_byte),
        },
        ..HostConfig::default()
    })
}

#[test]
fn cost_is_fixed_plus_per_byte_of_the_packet() {
    let mut cpu = host(100, 784, 50, 10);
    // A 1514-byte TAP frame is a 1500-byte IP packet: 100 us + 1500 x 784 ns.
    assert_eq!(cpu.transmit(Nanos(0), 1514), Nanos(100_000 + 1_176_000));
    // A 54-byte ACK frame (40-byte packet) received much later: 50 us + 400 ns.
    assert_eq!(cpu.receive(Nanos(10_000_000), 54), Nanos(10_050_400));
    assert_eq!(cpu.counters().waited_ns, 0);
}

#[test]
fn back_to_back_frames_wait_for_the_cpu_in_either_direction() {
    let mut cpu = host(1_000, 0, 500, 0);
    assert_eq!(cpu.transmit(Nanos(0), 1514), Nanos(1_000_000));
    // Sent at once after the first: waits for it.
    assert_eq!(cpu.transmit(Nanos(10), 1514), Nanos(2_000_000));
    // A frame received meanwhile waits for both transmissions: one CPU.
    assert_eq!(cpu.receive(Nanos(20), 60), Nanos(2_500_000));
    let c = cpu.counters();
    assert_eq!((c.transmitted, c.received), (2, 1));
    assert_eq!(c.busy_ns, 2_500_000);
    assert_eq!(c.waited_ns, (1_000_000 - 10) + (2_000_000 - 20));
}

fn ten_megabit() -> Direction {
    Direction::new(
        DirectionConfig {
            rate: BitRate::from_bits_per_second(10_000_000),
            delay: Duration::from_micros(1),
            queue: QueueLimit::Packets(100),
            loss: 0.0,
            seed: 1,
            hidden_hops: 0,
        },
        LinkLayer::Ethernet { vlan_tags: 0 },
        1500,
    )
}

fn deliver(v: Verdict) -> Nanos {
    match v {
        Verdict::Deliver { at } => at,
        other => panic!("{other:?}"),
    }
}

/// One full segment from a to b and an ACK back, each host answering the moment its stack
/// has the frame: the stop-and-wait exchange of seed 004's 1-packet row, in virtual time,
/// with the calls the lab's emulator threads make (transmit cost, link, receive cost).
fn stop_and_wait_round_trip(a: &mut HostCpu, b: &mut HostCpu, start: Nanos) -> Nanos {
    let clock = VirtualClock::new(start);
    let (mut ab, mut ba) = (ten_megabit(), ten_megabit());
    let ready = a.transmit(clock.now(), 1514);
    let at_b = deliver(ab.offer(ready, 1514, Duration::ZERO));
    let seen_by_b = b.receive(clock.wait_until(at_b), 1514);
    let ack_ready = b.transmit(clock.wait_until(seen_by_b), 54);
    let at_a = deliver(ba.offer(ack_ready, 54, Duration::ZERO));
    a.receive(clock.wait_until(at_a), 54)
}

#[test]
fn seed_004_round_trip_is_wire_plus_four_host_stages() {
    // Seed 004's 3/60 costs as labs/seed-004-sun3.toml derives them: 784 ns per byte each
    // way. The round trip is the wire (1538 + 84 bytes at 10 Mbit/s = 1,297.6 us, 2 x 1 us
    // of cable) plus the four stages: 1500 x 784 ns twice and 40 x 784 ns twice.
    let (mut a, mut b) = (host(0, 784, 0, 784), host(0, 784, 0, 784));
    let end = stop_and_wait_round_trip(&mut a, &mut b, Nanos(0));
    let stages = 2 * 1500 * 784 + 2 * 40 * 784;
    assert_eq!(end, Nanos(1_230_400 + 67_200 + 2_000 + stages));
    // 1460 bytes of data per 3.71 ms: the seed's 384 KB/s (KB = 1024 bytes).
    let kib_per_second = 1460.0 / (end.0 as f64 * 1e-9) / 1024.0;
    assert!((kib_per_second - 384.0).abs() < 1.0, "{kib_per_second}");
    // Without the host model the same exchange is the wire alone.
    let (mut fast_a, mut fast_b) = (host(0, 0, 0, 0), host(0, 0, 0, 0));
    let end = stop_and_wait_round_trip(&mut fast_a, &mut fast_b, Nanos(0));
    assert_eq!(end, Nanos(1_230_400 + 67_200 + 2_000));
}

proptest! {
    #[test]
    fn the_server_is_fifo_never_idle_with_work_and_busy_for_the_sum_of_costs(
        jobs in proptest::collection::vec((0u64..3_000_000, 60u64..1514, proptest::bool::ANY), 1..200),
        fixed_us in 0u64..500,
        ns_per_byte in 0u64..2_000,
    ) {
        let mut cpu = host(fixed_us, ns_per_byte, fixed_us / 2, ns_per_byte / 2);
        let mut arrival = 0u64;
        let mut previous_done = Nanos(0);
        let mut total = Duration::ZERO;
        for (gap, len, out) in jobs {
            arrival += gap;
            let cost = if out {
                Duration::from_micros(fixed_us) + Duration::from_nanos(ns_per_byte * (len - 14))
            } else {
                Duration::from_micros(fixed_us / 2) + Duration::from_nanos(ns_per_byte / 2 * (len - 14))
            };
            let done = if out { cpu.transmit(Nanos(arrival), len) } else { cpu.receive(Nanos(arrival), len) };
            total += cost;
            // Done no sooner than its own cost after arriving, and no sooner than its cost
            // after the previous job: one job at a time, in order.
            prop_assert!(done >= Nanos(arrival).after(cost));
            prop_assert!(done >= previous_done.after(cost));
            // Work-conserving: it starts at its arrival or exactly when the previous ends.
            let start = done.0 - cost.as_nanos() as u64;
            prop_assert!(start == arrival || start == previous_done.0);
            previous_done = done;
        }
        prop_assert_eq!(cpu.counters().busy_ns, total.as_nanos() as u64);
    }
}
