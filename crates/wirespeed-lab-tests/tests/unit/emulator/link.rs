use proptest::prelude::*;
use std::time::Duration;
use wirespeed_lab::emulator::clock::Nanos;
use wirespeed_lab::emulator::link::*;
use wirespeed_lab::topology::{AqmConfig, AqmKind, DirectionConfig, QueueLimit};
use wirespeed_model::BitRate;
use wirespeed_model::LinkLayer;

fn config(rate: u64, delay_us: u64, queue: QueueLimit, loss: f64) -> DirectionConfig {
    DirectionConfig {
        rate: BitRate::from_bits_per_second(rate),
        delay: Duration::from_micros(delay_us),
        queue,
        loss,
        seed: 7,
        hidden_hops: 0,
    }
}

const ETH: LinkLayer = LinkLayer::Ethernet { vlan_tags: 0 };

fn at(v: Verdict) -> u64 {
    match v {
        Verdict::Deliver { at } => at.0,
        other => panic!("{other:?}"),
    }
}

#[test]
fn full_frame_at_10_mbit_takes_1230_4_us_plus_propagation() {
    let mut d = Direction::new(
        config(10_000_000, 50, QueueLimit::Packets(10), 0.0),
        ETH,
        1500,
    );
    assert_eq!(d.wire_bytes(1514), 1538);
    assert_eq!(d.wire_bytes(42), 84, "an ARP frame is padded to 64 + 20");
    assert_eq!(
        at(d.offer(Nanos(0), 1514, Duration::ZERO)),
        1_230_400 + 50_000
    );
    // Back to back: the second waits for the first.
    assert_eq!(
        at(d.offer(Nanos(0), 1514, Duration::ZERO)),
        2 * 1_230_400 + 50_000
    );
    // One arriving after the wire went idle starts at its arrival.
    assert_eq!(
        at(d.offer(Nanos(10_000_000), 1514, Duration::ZERO)),
        10_000_000 + 1_230_400 + 50_000
    );
}

#[test]
fn hidden_store_and_forward_hops_add_a_serialization_each() {
    let mut d = Direction::new(
        DirectionConfig {
            hidden_hops: 2,
            ..config(10_000_000, 50, QueueLimit::Packets(10), 0.0)
        },
        ETH,
        1500,
    );
    assert_eq!(
        at(d.offer(Nanos(0), 1514, Duration::ZERO)),
        3 * 1_230_400 + 50_000
    );
    // Back to back, the second is still one serialization behind the first: the hidden
    // hops add delay, not a lower rate.
    assert_eq!(
        at(d.offer(Nanos(0), 1514, Duration::ZERO)),
        4 * 1_230_400 + 50_000
    );
    // A small frame right behind a large one waits for the hidden hops to finish it and
    // never overtakes it: 84 wire bytes = 67.2 us.
    let mut d = Direction::new(
        DirectionConfig {
            hidden_hops: 1,
            ..config(10_000_000, 0, QueueLimit::Packets(10), 0.0)
        },
        ETH,
        1500,
    );
    let large = at(d.offer(Nanos(0), 1514, Duration::ZERO));
    let small = at(d.offer(Nanos(0), 60, Duration::ZERO));
    assert_eq!(large, 2 * 1_230_400);
    assert_eq!(small, 2 * 1_230_400 + 67_200);
}

#[test]
fn serial_line_charges_the_packet_alone() {
    // Seed 001 Table 1: a DS0 costs .14285 ms per byte (56 kbit/s = 142.857 us per byte).
    let mut d = Direction::new(
        config(56_000, 0, QueueLimit::Packets(10), 0.0),
        LinkLayer::Serial,
        1500,
    );
    let t = at(d.offer(Nanos(0), 1000 + 14, Duration::ZERO));
    assert_eq!(t, 142_857_142);
}

#[test]
fn drop_tail_counts_the_waiting_frames_only() {
    let mut d = Direction::new(config(1_000_000, 0, QueueLimit::Packets(2), 0.0), ETH, 1500);
    let verdicts: Vec<Verdict> = (0..5)
        .map(|_| d.offer(Nanos(0), 1514, Duration::ZERO))
        .collect();
    // One on the wire, two waiting, two dropped.
    assert!(matches!(verdicts[2], Verdict::Deliver { .. }));
    assert_eq!(verdicts[3], Verdict::Drop(DropReason::QueueFull));
    let c = d.counters();
    assert_eq!((c.frames_out, c.drops_queue, c.queue_frames_max), (3, 2, 2));
    // After the first frame is done, one slot is free again.
    let first_done = Nanos(1538 * 8 * 1000);
    assert!(matches!(
        d.offer(first_done, 1514, Duration::ZERO),
        Verdict::Deliver { .. }
    ));
    assert_eq!(
        d.offer(first_done, 1514, Duration::ZERO),
        Verdict::Drop(DropReason::QueueFull)
    );
}

#[test]
fn byte_limit_counts_wire_bytes() {
    let mut d = Direction::new(
        config(1_000_000, 0, QueueLimit::Bytes(3000), 0.0),
        ETH,
        1500,
    );
    let ok = (0..4)
        .filter(|_| {
            matches!(
                d.offer(Nanos(0), 1514, Duration::ZERO),
                Verdict::Deliver { .. }
            )
        })
        .count();
    assert_eq!(
        ok, 2,
        "1 on the wire + 1 x 1538 waiting; a second 1538 would exceed 3000"
    );
}

#[test]
fn router_processing_is_fixed_plus_per_byte_and_serial() {
    let mut d = Direction::new(
        config(10_000_000, 0, QueueLimit::Packets(10), 0.0),
        ETH,
        1500,
    );
    let cost = Duration::from_micros(525);
    let first = at(d.offer(Nanos(0), 114, cost));
    assert_eq!(first, 525_000 + (118 + 20) * 800);
    // A second packet arriving at once waits for the processor, not only for the wire.
    let second = at(d.offer(Nanos(0), 114, cost));
    assert_eq!(second, 2 * 525_000 + (118 + 20) * 800);
}

#[test]
fn oversize_frames_are_dropped() {
    let mut d = Direction::new(
        config(10_000_000, 0, QueueLimit::Packets(10), 0.0),
        ETH,
        576,
    );
    assert_eq!(
        d.offer(Nanos(0), 1514, Duration::ZERO),
        Verdict::Drop(DropReason::TooBig)
    );
}

#[test]
fn seeded_loss_is_repeatable_and_near_its_rate() {
    let run = || {
        let mut d = Direction::new(
            config(1_000_000_000, 0, QueueLimit::Packets(1_000_000), 0.1),
            ETH,
            1500,
        );
        (0..20_000u64)
            .map(|i| {
                matches!(
                    d.offer(Nanos(i * 100_000), 100, Duration::ZERO),
                    Verdict::Drop(_)
                )
            })
            .collect::<Vec<bool>>()
    };
    let a = run();
    assert_eq!(a, run());
    let lost = a.iter().filter(|&&l| l).count() as f64 / a.len() as f64;
    assert!((lost - 0.1).abs() < 0.01, "{lost}");
}

#[test]
fn long_runs_keep_the_exact_rate() {
    // 84-byte wire frames at 3 Mbit/s: 224 us each, exactly; at 7 Mbit/s 96 us, exactly;
    // at 9 Mbit/s 74.67 us: the carried remainder keeps 90,000 frames at 6.72 s.
    let mut d = Direction::new(
        config(9_000_000, 0, QueueLimit::Packets(1_000_000), 0.0),
        ETH,
        1500,
    );
    let mut last = 0;
    for _ in 0..90_000 {
        last = at(d.offer(Nanos(0), 60, Duration::ZERO));
    }
    assert_eq!(last, 6_720_000_000);
}

/// A medium that refuses every other frame, as a CSMA/CD MAC gives up after 16 attempts:
/// the seam a shared-segment MAC plugs into.
struct EveryOtherCollides {
    wire: FullDuplex,
    n: u64,
}

impl Medium for EveryOtherCollides {
    fn transmit(&mut self, ready: Nanos, hold: Duration) -> Transmission {
        self.n += 1;
        if self.n & 1 == 0 {
            Transmission::Lost {
                at: ready,
                reason: MediumLoss::ExcessiveCollisions,
            }
        } else {
            self.wire.transmit(ready, hold)
        }
    }
}

#[test]
fn a_mac_plugs_in_through_the_medium_trait() {
    let medium = EveryOtherCollides {
        wire: FullDuplex::default(),
        n: 0,
    };
    let mut d = Direction::with_medium(
        config(10_000_000, 0, QueueLimit::Packets(10), 0.0),
        ETH,
        1500,
        medium,
    );
    let verdicts: Vec<Verdict> = (0..4)
        .map(|_| d.offer(Nanos(0), 1514, Duration::ZERO))
        .collect();
    assert_eq!(
        verdicts[1],
        Verdict::Drop(DropReason::Medium(MediumLoss::ExcessiveCollisions))
    );
    assert_eq!(
        verdicts[2],
        Verdict::Deliver {
            at: Nanos(2 * 1_230_400)
        }
    );
    assert_eq!(d.counters().drops_medium, 2);
}

/// A TAP frame of `len` bytes: IPv4/UDP from 198.18.0.1 to 198.18.0.2, port `port`.
fn udp_frame(len: usize, port: u16) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[14 + 9] = 17;
    f[26..30].copy_from_slice(&[198, 18, 0, 1]);
    f[30..34].copy_from_slice(&[198, 18, 0, 2]);
    f[34..36].copy_from_slice(&40000u16.to_be_bytes());
    f[36..38].copy_from_slice(&port.to_be_bytes());
    f
}

fn aqm(kind: AqmKind) -> AqmConfig {
    AqmConfig {
        kind,
        target: Duration::from_millis(5),
        interval: Duration::from_millis(100),
        flows: 1024,
        quantum: 1514,
        perturbation: None,
    }
}

/// Offers `arrivals` (instant, frame) to an AQM direction, advancing it exactly to each
/// event (as a perfectly punctual caller would) and to `end`; returns the events by tag.
fn run_aqm(d: &mut Direction, arrivals: &[(u64, Vec<u8>)], end: u64) -> Vec<Event> {
    let mut out = Vec::new();
    for (tag, (t, frame)) in arrivals.iter().enumerate() {
        while let Some(e) = d.next_event().filter(|e| e.0 < *t) {
            d.advance(e, &mut out);
        }
        d.enqueue(Nanos(*t), frame, Duration::ZERO, tag as u64, &mut out);
    }
    d.advance(Nanos(end), &mut out);
    out
}

#[test]
fn codel_below_target_delivers_exactly_as_drop_tail_does() {
    // Bursts of three full frames every 50 ms at 10 Mbit/s: the last waits 2.46 ms, below
    // the 5 ms target, so CoDel never drops and the schedule is drop-tail's to the ns.
    let frame = udp_frame(1514, 9);
    let arrivals: Vec<(u64, Vec<u8>)> = (0..60u64)
        .flat_map(|b| (0..3).map(move |k| (b * 50_000_000 + k * 1_000, k)))
        .map(|(t, _)| (t, frame.clone()))
        .collect();
    let cfg = config(10_000_000, 20_000, QueueLimit::Packets(1000), 0.0);
    let mut tail = Direction::new(cfg, ETH, 1500);
    let expected: Vec<u64> = arrivals
        .iter()
        .map(|(t, f)| at(tail.offer(Nanos(*t), f.len() as u64, Duration::ZERO)))
        .collect();
    for kind in [AqmKind::Codel, AqmKind::FqCodel] {
        let mut d = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(kind), 7);
        let events = run_aqm(&mut d, &arrivals, 4_000_000_000);
        let got: Vec<u64> = events
            .iter()
            .map(|e| match e {
                Event::Deliver { at, .. } => at.0,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, expected, "{kind:?}");
        let c = d.counters();
        assert_eq!((c.frames_out, c.queue_frames_max), (180, 2));
        assert_eq!(c.aqm.unwrap().drops, 0);
    }
}

#[test]
fn drop_tail_and_aqm_sample_the_same_queue_delay_every_millisecond() {
    // Ten full frames at once at 10 Mbit/s keep the wire busy for 12.304 ms; one more at
    // 20 ms. The samples at 1..=12 ms see 12.304 - k ms, those at 0 and 13..=20 ms nothing.
    let frame = udp_frame(1514, 9);
    let mut arrivals: Vec<(u64, Vec<u8>)> = (0..10).map(|_| (0, frame.clone())).collect();
    arrivals.push((20_000_000, frame.clone()));
    let cfg = config(10_000_000, 20_000, QueueLimit::Packets(1000), 0.0);
    let mut tail = Direction::new(cfg, ETH, 1500);
    for (t, f) in &arrivals {
        tail.offer(Nanos(*t), f.len() as u64, Duration::ZERO);
    }
    let expected = (1..=12).map(|k| 12_304_000 - k * 1_000_000).sum::<u64>();
    let c = tail.counters();
    assert_eq!(
        (c.queue_delay_samples, c.queue_delay_sum_ns),
        (21, expected)
    );
    for kind in [AqmKind::Codel, AqmKind::FqCodel] {
        let mut d = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(kind), 7);
        run_aqm(&mut d, &arrivals, 20_000_000);
        let c = d.counters();
        assert_eq!(
            (c.queue_delay_samples, c.queue_delay_sum_ns),
            (21, expected),
            "{kind:?}"
        );
    }
}

#[test]
fn a_late_caller_gets_the_same_schedule_as_a_punctual_one() {
    // 15 Mbit/s of full frames into 10 Mbit/s for 1 s: CoDel drops; a caller that only
    // comes at each arrival (never at the departures between) gets the same decisions.
    let frame = udp_frame(1514, 9);
    let arrivals: Vec<(u64, Vec<u8>)> =
        (0..1238u64).map(|i| (i * 807_466, frame.clone())).collect();
    let cfg = config(10_000_000, 20_000, QueueLimit::Packets(1000), 0.0);
    let mut punctual = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(AqmKind::Codel), 7);
    let a = run_aqm(&mut punctual, &arrivals, 3_000_000_000);
    let mut late = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(AqmKind::Codel), 7);
    let mut b = Vec::new();
    for (tag, (t, f)) in arrivals.iter().enumerate() {
        late.enqueue(Nanos(*t), f, Duration::ZERO, tag as u64, &mut b);
    }
    late.advance(Nanos(3_000_000_000), &mut b);
    assert_eq!(a, b);
    assert!(punctual.counters().aqm.unwrap().drops > 0);
    assert_eq!(late.next_event(), None);
}

/// Queue delay (wire bytes waiting / rate) after `seconds` of an unresponsive load of
/// full frames at `load` bit/s into 10 Mbit/s with a 1000-frame queue, and the AQM drops.
fn overload(aqm_kind: Option<AqmKind>, load: u64, seconds: u64) -> (f64, u64, u64) {
    let cfg = config(10_000_000, 20_000, QueueLimit::Packets(1000), 0.0);
    let gap = 1514 * 8 * 1_000_000_000 / load;
    let frame = udp_frame(1514, 9);
    let n = seconds * 1_000_000_000 / gap;
    let mut out = Vec::new();
    match aqm_kind {
        None => {
            let mut d = Direction::new(cfg, ETH, 1500);
            for i in 0..n {
                d.offer(Nanos(i * gap), 1514, Duration::ZERO);
            }
            let c = d.counters();
            (c.queue_bytes as f64 * 8.0 / 1e7, c.drops_queue, 0)
        }
        Some(kind) => {
            let mut d = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(kind), 7);
            for i in 0..n {
                d.enqueue(Nanos(i * gap), &frame, Duration::ZERO, i, &mut out);
            }
            let c = d.counters();
            let drops = c.aqm.unwrap().drops;
            (c.queue_bytes as f64 * 8.0 / 1e7, c.drops_queue, drops)
        }
    }
}

#[test]
fn codel_cannot_catch_up_with_an_unresponsive_double_overload_in_seconds() {
    // 20 Mbit/s into 10: half the frames must go. CoDel's n-th drop of an episode comes
    // about 2 x interval x sqrt(n) after its start, so in 4 s it has dropped some
    // (4 s / 0.2 s)^2 = 400 frames of the ~3,300 too many, and the queue fills to its hard
    // limit as drop-tail's does (1000 frames, 1.23 s).
    let (tail_delay, tail_drops, _) = overload(None, 20_000_000, 4);
    let (codel_delay, codel_tail, codel_drops) = overload(Some(AqmKind::Codel), 20_000_000, 4);
    eprintln!(
        "20M into 10M for 4 s: drop-tail {tail_delay:.3} s queued ({tail_drops} drops); codel {codel_delay:.3} s queued ({codel_drops} codel + {codel_tail} tail drops)"
    );
    assert!(tail_delay > 1.2 && codel_delay > 1.2);
    assert!((250..600).contains(&codel_drops), "{codel_drops}");
}

#[test]
fn codel_holds_a_mild_overload_near_target() {
    // 10.5 Mbit/s into 10: 5% must go, about 43 drops a second, a rate CoDel's control law
    // reaches within a second or two; after 20 s the standing queue is a few ms.
    let (tail_delay, _, _) = overload(None, 10_500_000, 20);
    let (codel_delay, codel_tail, codel_drops) = overload(Some(AqmKind::Codel), 10_500_000, 20);
    eprintln!(
        "10.5M into 10M for 20 s: drop-tail {tail_delay:.3} s queued; codel {codel_delay:.4} s queued ({codel_drops} codel + {codel_tail} tail drops)"
    );
    assert!(tail_delay > 1.2);
    assert_eq!(codel_tail, 0);
    assert!(codel_delay < 0.05, "{codel_delay}");
}

#[test]
fn fq_codel_serves_a_sparse_flow_through_a_flood() {
    // A 20 Mbit/s flood on one port, and a 100-byte packet on another every 100 ms: with
    // FQ-CoDel each sparse packet waits at most for the frame on the wire; drop-tail makes
    // it wait behind the whole queue.
    let cfg = config(10_000_000, 20_000, QueueLimit::Packets(1000), 0.0);
    let flood = udp_frame(1514, 9);
    let ping = udp_frame(100, 7);
    let gap = 605_600;
    let mut arrivals: Vec<(u64, Vec<u8>)> =
        (0..6_605u64).map(|i| (i * gap, flood.clone())).collect();
    for k in 0..40u64 {
        arrivals.push((k * 100_000_000 + 1, ping.clone()));
    }
    arrivals.sort_by_key(|(t, _)| *t);
    let mut d = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(AqmKind::FqCodel), 7);
    let events = run_aqm(&mut d, &arrivals, 6_000_000_000);
    let mut worst = 0;
    for e in &events {
        if let Event::Deliver { tag, at } = e {
            let (t, f) = &arrivals[*tag as usize];
            if f.len() == 100 {
                worst = worst.max(at.0 - t);
            }
        }
    }
    let sparse = events
        .iter()
        .filter(
            |e| matches!(e, Event::Deliver { tag, .. } if arrivals[*tag as usize].1.len() == 100),
        )
        .count();
    assert_eq!(sparse, 40, "no sparse packet is lost");
    // One full frame on the wire (1.2304 ms) + its own (0.1376 ms) + 20 ms of delay.
    assert!(worst <= 1_230_400 + 137_600 + 20_000_000, "{worst}");
    let s = d.counters().aqm.unwrap();
    assert!(s.flows_max >= 2 && s.ecn_marks == 0);
    // Drop-tail: the last sparse packets wait behind a full 1000-frame queue.
    let mut tail = Direction::new(cfg, ETH, 1500);
    let mut tail_worst = 0;
    for (t, f) in &arrivals {
        if let Verdict::Deliver { at } = tail.offer(Nanos(*t), f.len() as u64, Duration::ZERO)
            && f.len() == 100
        {
            tail_worst = tail_worst.max(at.0 - t);
        }
    }
    assert!(tail_worst > 1_000_000_000, "{tail_worst}");
}

#[test]
fn fq_codel_with_a_byte_limit_drops_from_the_fattest_flow() {
    let cfg = config(1_000_000, 0, QueueLimit::Bytes(10 * 1538), 0.0);
    let mut d = Direction::new(cfg, ETH, 1500).with_aqm(&aqm(AqmKind::FqCodel), 7);
    let mut out = Vec::new();
    let fat = udp_frame(1514, 1);
    let thin = udp_frame(1514, 2);
    // One on the wire, then 10 of the fat flow fill the bytes; a thin arrival pushes a
    // batch from the fat flow's head out: half its bytes, as Linux's fq_codel_drop does
    // for its memory limit too.
    for tag in 0..11 {
        d.enqueue(Nanos(0), &fat, Duration::ZERO, tag, &mut out);
    }
    assert_eq!(
        out,
        vec![Event::Deliver {
            tag: 0,
            at: Nanos(12_304_000)
        }]
    );
    out.clear();
    d.enqueue(Nanos(0), &thin, Duration::ZERO, 100, &mut out);
    assert_eq!(
        out,
        (1..=5)
            .map(|tag| Event::Drop {
                tag,
                reason: DropReason::QueueFull
            })
            .collect::<Vec<_>>()
    );
    let c = d.counters();
    assert_eq!((c.drops_queue, c.aqm.unwrap().overflow_drops), (5, 5));
    assert_eq!(c.queue_bytes, 6 * 1538);
}

proptest! {
    /// A super-packet of k segments costs the direction exactly what k frames offered one
    /// by one at the same instant cost: the same verdicts (deliveries, queue drops, losses)
    /// and the same counters, whatever the state the direction was in.
    #[test]
    fn charging_k_segments_equals_charging_k_frames(
        before in proptest::collection::vec((0u64..200_000, 60u64..1514), 0..40),
        segments in proptest::collection::vec(60u64..1514, 1..45),
        gap in 0u64..300_000,
        limit in 1u32..40,
        loss in 0.0f64..0.3,
        rate in 1_000_000u64..10_000_000_000,
    ) {
        let mut a = Direction::new(config(rate, 100, QueueLimit::Packets(limit), loss), ETH, 1500);
        let mut now = 0;
        for (g, len) in &before {
            now += g;
            a.offer(Nanos(now), *len, Duration::ZERO);
        }
        now += gap;
        let mut b = a.clone();
        let mut together = Vec::new();
        a.offer_segments(Nanos(now), segments.iter().copied(), Duration::ZERO, &mut together);
        let one_by_one: Vec<Verdict> = segments
            .iter()
            .map(|len| b.offer(Nanos(now), *len, Duration::ZERO))
            .collect();
        prop_assert_eq!(&together, &one_by_one);
        prop_assert_eq!(a.counters(), b.counters());
        prop_assert_eq!(a.counters().frames_in, before.len() as u64 + segments.len() as u64);
    }

    /// On an idle wire, a super-packet of k full segments is released when the last of
    /// them has left: k x (1514 + FCS 4 + preamble 8 + gap 12) x 8 bits at the rate, as
    /// the envelope charges every frame.
    #[test]
    fn a_super_packet_holds_the_wire_for_every_segment_it_stands_for(
        k in 1u64..45,
        rate in 1_000_000u64..100_000_000_000,
    ) {
        let mut d = Direction::new(config(rate, 0, QueueLimit::Packets(1000), 0.0), ETH, 1500);
        let mut out = Vec::new();
        d.offer_segments(Nanos(0), std::iter::repeat_n(1514, k as usize), Duration::ZERO, &mut out);
        let wire = ETH.frame(1500).wire;
        prop_assert_eq!(wire, 1538);
        let last = at(*out.last().unwrap());
        prop_assert_eq!(u128::from(last), u128::from(k * wire * 8) * 1_000_000_000 / u128::from(rate));
    }
}

proptest! {
    #[test]
    fn deliveries_are_ordered_spaced_and_conserved(
        gaps in proptest::collection::vec(0u64..400_000, 1..300),
        sizes in proptest::collection::vec(60u64..1514, 300),
        limit in 1u32..20,
        rate in 100_000u64..100_000_000,
    ) {
        let mut d = Direction::new(config(rate, 30, QueueLimit::Packets(limit), 0.0), ETH, 1500);
        let mut now = 0;
        let mut previous: Option<u64> = None;
        for (gap, size) in gaps.iter().zip(&sizes) {
            now += gap;
            if let Verdict::Deliver { at } = d.offer(Nanos(now), *size, Duration::ZERO) {
                let hold = d.wire_bytes(*size) * 8 * 1_000_000_000 / rate;
                prop_assert!(at.0 >= now + hold + 30_000);
                if let Some(p) = previous {
                    prop_assert!(at.0 >= p + hold, "frames overlap on the wire");
                }
                previous = Some(at.0);
            }
            prop_assert!(d.counters().queue_frames <= u64::from(limit));
        }
        let c = d.counters();
        prop_assert_eq!(c.frames_in, c.frames_out + c.drops_queue);
    }
}
