use wirespeed_lab::emulator::clock::Nanos;
use wirespeed_lab::emulator::clock::{Clock, RealClock, VirtualClock};
use wirespeed_lab::emulator::shared::*;
use wirespeed_lab::emulator::stats::DelaySums;
use wirespeed_model::BitRate;
use wirespeed_sim::bus::{Cable, Placement};
use wirespeed_sim::mac::{MacDuplex, MacParams};
use wirespeed_sim::segment::{Segment, SegmentOutput, SegmentSetup};

fn config(duplex: Vec<MacDuplex>) -> SharedConfig {
    SharedConfig {
        rate: BitRate::from_bits_per_second(10_000_000),
        duplex,
        length_m: 100.0,
        velocity_factor: 0.66,
        queue: 100,
        seed: 5,
        mtu: 1500,
    }
}

/// Offered frames: (instant, station, TAP length).
fn offers(stations: usize, frames: u64, spacing_ns: u64) -> Vec<(Nanos, usize, u64)> {
    (0..frames)
        .map(|i| {
            let station = (i * 7 % stations as u64) as usize;
            let len = if i % 3 == 0 { 60 } else { 1514 };
            (Nanos(1_000_000 + i * spacing_ns), station, len)
        })
        .collect()
}

/// Drives the medium through `clock`, offering each frame when its instant comes (or, on a
/// real clock, when the thread gets there: the instant actually used is recorded).
fn drive(
    clock: &dyn Clock,
    mut medium: SharedMedium,
    plan: &[(Nanos, usize, u64)],
) -> (Vec<(Nanos, usize, u64)>, Vec<SharedAction>, SharedMedium) {
    let mut used = Vec::new();
    let mut actions = Vec::new();
    for (tag, &(at, station, len)) in plan.iter().enumerate() {
        while let Some(next) = medium.next_event() {
            if next > at {
                break;
            }
            let now = clock.wait_until(next);
            medium.advance(now.min(at), &mut actions);
        }
        let now = clock.wait_until(at);
        medium.advance(now, &mut actions);
        medium.offer(now, station, len, tag as u64);
        used.push((now, station, len));
    }
    while let Some(next) = medium.next_event() {
        let now = clock.wait_until(next);
        medium.advance(now, &mut actions);
    }
    (used, actions, medium)
}

fn simulate(
    config: &SharedConfig,
    plan: &[(Nanos, usize, u64)],
) -> (Vec<SharedAction>, SharedMedium) {
    let clock = VirtualClock::new(Nanos(0));
    let (_, actions, medium) = drive(&clock, SharedMedium::new(config, Nanos(0)), plan);
    (actions, medium)
}

#[test]
fn a_station_is_full_when_its_queue_is_and_frees_as_the_model_sends() {
    let mut c = config(vec![MacDuplex::Half; 2]);
    c.queue = 2;
    let mut m = SharedMedium::new(&c, Nanos(0));
    let mut actions = Vec::new();
    assert!(!m.full(0));
    m.offer(Nanos(1_000), 0, 1514, 1);
    m.offer(Nanos(1_000), 0, 1514, 2);
    assert!(m.full(0), "two offers not yet run fill a 2-frame queue");
    assert!(!m.full(1), "per station");
    m.advance(Nanos(1_000), &mut actions);
    assert!(!m.full(0), "one frame went on the wire, one waits");
    m.offer(Nanos(2_000), 0, 1514, 3);
    m.advance(Nanos(2_000), &mut actions);
    assert!(m.full(0), "one on the wire, two waiting");
    // 1514 + 12 + 12 byte times at 10 Mbit/s: 1.23 ms each.
    m.advance(Nanos(1_500_000), &mut actions);
    assert!(!m.full(0), "the first is sent: room again");
    assert_eq!(
        m.counters(0).drops_queue,
        0,
        "nothing was offered into a full queue"
    );
}

#[test]
fn the_lab_medium_and_the_simulator_give_the_same_collisions_and_deliveries() {
    // The simulator's own segment, fed directly with the same offers and seed.
    let cfg = config(vec![MacDuplex::Half; 6]);
    let plan = offers(6, 300, 150_000);
    let (actions, medium) = simulate(&cfg, &plan);
    let mut reference = Segment::new(&SegmentSetup {
        mac: MacParams::table_2(10),
        duplex: cfg.duplex.clone(),
        cable: Cable {
            length_m: 100.0,
            velocity_factor: 0.66,
            attach_delay_ns: 0.0,
            tap_delay_ns: 0.0,
            placement: Placement::Even,
        },
        queue_frames: 100,
        seed: 5,
    });
    for (tag, &(at, station, len)) in plan.iter().enumerate() {
        reference.offer(to_sim(at), station, tag as u64, carrier_bits(len));
    }
    reference.run();
    let expected: Vec<(u64, usize, Nanos)> = reference
        .drain()
        .into_iter()
        .filter_map(|o| match o {
            SegmentOutput::Delivered { tag, to, at, .. } => Some((tag, to, to_nanos(at))),
            _ => None,
        })
        .collect();
    let got: Vec<(u64, usize, Nanos)> = actions
        .iter()
        .filter_map(|a| match *a {
            SharedAction::Deliver { tag, to, at, .. } => Some((tag, to, at)),
            SharedAction::Release { .. } => None,
        })
        .collect();
    assert_eq!(got, expected);
    let collisions: u64 = (0..6).map(|i| medium.counters(i).collisions).sum();
    let reference_collisions: u64 = (0..6).map(|i| reference.counters(i).collisions).sum();
    assert_eq!(collisions, reference_collisions);
    assert!(collisions > 0, "150 us apart, 1.2 ms frames must collide");
    // Every frame's buffer is released exactly once.
    let released = actions
        .iter()
        .filter(|a| matches!(a, SharedAction::Release { .. }))
        .count();
    assert_eq!(released, plan.len());
}

#[test]
fn real_time_matches_a_virtual_replay_of_the_same_arrivals() {
    // 40 frames between 3 stations over about 40 ms of real time. Whatever instants the
    // real clock gave the offers, replaying those instants in virtual time must give the
    // same history: the real-time driver only decides *when* the model runs, never *what*
    // happens.
    let cfg = config(vec![MacDuplex::Half; 3]);
    let clock = RealClock::spinning();
    let start = clock.now();
    let plan: Vec<(Nanos, usize, u64)> = offers(3, 40, 1_000_000)
        .into_iter()
        .map(|(at, s, l)| (Nanos(start.0 + at.0), s, l))
        .collect();
    let (used, actions, medium) = drive(&clock, SharedMedium::new(&cfg, start), &plan);
    let replay_clock = VirtualClock::new(start);
    let (_, replayed, replay) = drive(&replay_clock, SharedMedium::new(&cfg, start), &used);
    let deliveries = |a: &[SharedAction]| -> Vec<SharedAction> {
        a.iter()
            .copied()
            .filter(|x| matches!(x, SharedAction::Deliver { .. }))
            .collect()
    };
    assert_eq!(deliveries(&actions), deliveries(&replayed));
    for i in 0..3 {
        assert_eq!(medium.counters(i), replay.counters(i));
    }
}

#[test]
fn seed_003_mismatch_counts_fcs_errors_at_the_full_end_and_late_collisions_at_the_half_end() {
    // Both ends offer full frames at 600 us spacing, well above the 10 Mbit/s line rate:
    // they overlap constantly.
    let cfg = config(vec![MacDuplex::Half, MacDuplex::Full]);
    let plan: Vec<(Nanos, usize, u64)> = (0..200u64)
        .map(|i| (Nanos(1_000_000 + i * 600_000), (i % 2) as usize, 1514))
        .collect();
    let (_, medium) = simulate(&cfg, &plan);
    let half = medium.counters(0);
    let full = medium.counters(1);
    assert!(half.late_collisions > 0, "{half:?}");
    assert_eq!(full.collisions, 0, "{full:?}");
    assert!(full.fcs_errors > 0, "{full:?}");
    assert!(
        half.frames_received < full.frames_out,
        "the half end loses what arrives while it transmits: {half:?} {full:?}"
    );
    // Matched half duplex: collisions, but none late and no FCS errors; every frame is
    // received, except any that the capture effect (the loser of repeated collisions
    // backs off ever longer) drove to 16 attempts.
    let cfg = config(vec![MacDuplex::Half, MacDuplex::Half]);
    let (_, medium) = simulate(&cfg, &plan);
    for i in 0..2 {
        let c = medium.counters(i);
        let other = medium.counters(1 - i);
        assert_eq!((c.late_collisions, c.fcs_errors), (0, 0), "{c:?}");
        assert!(c.collisions > 0);
        assert_eq!(c.frames_out + c.excessive_collisions, 100, "{c:?}");
        assert_eq!(other.frames_received, c.frames_out);
    }
}

#[test]
fn delays_run_from_the_first_attempt_and_from_the_offer_to_the_successful_end() {
    // One station, three full frames offered at once on an idle medium: each holds the
    // medium 1,220.8 us (12,208 bit times at 10 Mbit/s) and the next waits the 9.6 us gap.
    let cfg = config(vec![MacDuplex::Half; 2]);
    let plan = vec![(Nanos(1_000_000), 0, 1514); 3];
    let (_, medium) = simulate(&cfg, &plan);
    let c = medium.counters(0);
    let (frame, gap) = (1_220.8e-6, 9.6e-6);
    assert_eq!(
        (c.delay_access.frames, c.delay_queued.frames),
        (3, 3),
        "{c:?}"
    );
    // The seed's delay: the MAC's first attempt (deferral included) to the end.
    let access = c.delay_access.mean_seconds().unwrap();
    assert!(access >= frame && access <= frame + gap + 1e-9, "{c:?}");
    // From the offer: 1, 2 and 3 frames (and the gaps between them).
    let queued = c.delay_queued.mean_seconds().unwrap();
    assert!(
        queued >= 2.0 * frame + gap - 1e-9 && queued <= 2.0 * frame + 2.0 * gap + 1e-9,
        "{c:?}"
    );
    assert!(
        c.delay_queued.std_dev_seconds().unwrap() > 0.8 * frame,
        "{c:?}"
    );
    // The other station sent nothing and measured nothing.
    assert_eq!(medium.counters(1).delay_access, DelaySums::default());
}

#[test]
fn every_frame_sent_has_its_delays_and_collisions_only_lengthen_them() {
    // Four stations offering full frames 150 us apart among them: they collide, back off
    // and retry. Every frame sent is measured once; none took less than its own frame
    // time from its first attempt, and none less from its offer than from its attempt.
    let cfg = config(vec![MacDuplex::Half; 4]);
    let plan = offers(4, 400, 150_000);
    let (_, medium) = simulate(&cfg, &plan);
    let mut collisions = 0;
    for i in 0..4 {
        let c = medium.counters(i);
        collisions += c.collisions;
        assert_eq!(c.delay_access.frames, c.frames_out, "{c:?}");
        assert_eq!(c.delay_queued.frames, c.frames_out, "{c:?}");
        let (access, queued) = (
            c.delay_access.mean_seconds().unwrap(),
            c.delay_queued.mean_seconds().unwrap(),
        );
        // A third of the frames are 60 bytes (57.6 us on the wire), the rest 1,220.8 us.
        assert!(access > (57.6e-6 + 2.0 * 1_220.8e-6) / 3.0, "{c:?}");
        assert!(queued >= access, "{c:?}");
    }
    assert!(collisions > 0);
}

/// A hub of `stations` saturated stations (each queue refilled the instant it has room,
/// as a backlogged lab station's TAP ring refills it) run in virtual time for `seconds`
/// after 200 ms of warm-up; returns (frames sent, given up, collisions) in the window.
fn saturated(stations: usize, tap_len: u64, seconds: f64) -> (u64, u64, u64) {
    let cfg = SharedConfig {
        rate: BitRate::from_bits_per_second(10_000_000),
        duplex: vec![MacDuplex::Half; stations],
        length_m: 914.4,
        velocity_factor: 0.77,
        queue: 15,
        seed: 1,
        mtu: 1500,
    };
    let mut m = SharedMedium::new(&cfg, Nanos(0));
    let mut actions = Vec::new();
    let mut tag = 0;
    let total = |m: &SharedMedium| {
        (0..stations).fold((0, 0, 0), |(s, g, c), i| {
            let k = m.counters(i);
            (
                s + k.frames_out,
                g + k.excessive_collisions,
                c + k.collisions,
            )
        })
    };
    let warm = Nanos(200_000_000);
    let end = Nanos(200_000_000 + (seconds * 1e9) as u64);
    let mut at_warm = None;
    let mut now = Nanos(0);
    while now < end {
        for i in 0..stations {
            while !m.full(i) {
                m.offer(now, i, tap_len, tag);
                tag += 1;
            }
        }
        m.advance(now, &mut actions);
        actions.clear();
        if now >= warm && at_warm.is_none() {
            at_warm = Some(total(&m));
        }
        now = m.next_event().unwrap_or(end).max(Nanos(now.0 + 1));
    }
    let (a, b) = (at_warm.unwrap(), total(&m));
    (b.0 - a.0, b.1 - a.1, b.2 - a.2)
}

#[test]
fn a_saturated_hub_of_minimum_frames_carries_what_the_simulator_carries() {
    // Issue 20 part B / issue 21 item 5: the lab's 64-byte series on labs/boggs-24.toml
    // (914.4 m at 0.77 c, 15 frames per station) fell 4-9% short of the simulator. Driven
    // in virtual time with every station's queue refilled the instant it has room, the
    // lab's medium carries what wirespeed-sim's saturated hosts carry (sent plus given up
    // after 16 collisions) within 1%: the shortfall is not in the medium's model but in
    // how the lab's stations are fed (bench/RESULTS.md).
    let seconds = 1.0;
    for stations in [4usize, 24] {
        let (sent, given_up, collisions) = saturated(stations, 64, seconds);
        let mut mac = MacParams::table_2(10);
        mac.bits_per_second = 10_000_000;
        let sim = wirespeed_sim::run(&wirespeed_sim::Scenario {
            mac,
            cable: Cable {
                length_m: 914.4,
                velocity_factor: 0.77,
                attach_delay_ns: 0.0,
                tap_delay_ns: 0.0,
                placement: Placement::Even,
            },
            hosts: stations,
            host: wirespeed_sim::HostModel::ready_at_once(15),
            lengths: wirespeed_sim::LengthMix::Fixed { bytes: 64 },
            allow_oversize: false,
            arrivals: wirespeed_sim::Arrivals::Saturated,
            warmup_ns: 200_000_000,
            measure_ns: (seconds * 1e9) as u64,
            seed: 1,
        })
        .unwrap();
        let lab = (sent + given_up) as f64 / seconds;
        let expected = sim.packets_per_second + sim.dropped as f64 / sim.measured_seconds;
        let off = lab / expected - 1.0;
        assert!(
            off.abs() < 0.01,
            "{stations} stations: lab medium {lab:.0} frames/s ({collisions} collisions), simulator {expected:.0}: {:+.2}%",
            off * 100.0
        );
    }
}

#[test]
fn oversize_frames_are_refused_and_counted() {
    let mut m = SharedMedium::new(&config(vec![MacDuplex::Half; 2]), Nanos(0));
    assert!(!m.offer(Nanos(0), 0, 1515, 1));
    assert!(m.offer(Nanos(0), 0, 1514, 2));
    assert_eq!(m.counters(0).drops_too_big, 1);
    assert_eq!(carrier_bits(42), (60 + 12) * 8);
    let mut actions = Vec::new();
    m.advance(Nanos(10_000_000), &mut actions);
    assert_eq!(
        m.counters(0).bytes_out,
        1514,
        "bytes sent once, not once per receiver"
    );
}
