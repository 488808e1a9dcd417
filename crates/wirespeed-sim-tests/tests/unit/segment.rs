//! The unit tests of `wirespeed_sim::segment`.

use wirespeed_sim::bus::{Cable, Placement};
use wirespeed_sim::mac::{MacDuplex, MacParams};
use wirespeed_sim::segment::*;
use wirespeed_sim::time::SimTime;

fn setup(duplex: Vec<MacDuplex>, length_m: f64) -> SegmentSetup {
    SegmentSetup {
        mac: MacParams::table_2(10),
        duplex,
        cable: Cable {
            length_m,
            velocity_factor: 0.66,
            attach_delay_ns: 0.0,
            tap_delay_ns: 0.0,
            placement: Placement::Even,
        },
        queue_frames: 100,
        seed: 3,
    }
}

const FULL_FRAME_BITS: u64 = (1518 + 8) * 8;

fn us(u: u64) -> SimTime {
    SimTime::from_ps(u * 1_000_000)
}

#[test]
fn a_lone_frame_is_delivered_to_every_other_station_after_the_propagation_delay() {
    let mut seg = Segment::new(&setup(vec![MacDuplex::Half; 3], 200.0));
    seg.offer(us(1000), 0, 7, FULL_FRAME_BITS);
    seg.run();
    let out = seg.drain();
    let delivered: Vec<usize> = out
        .iter()
        .filter_map(|o| match o {
            SegmentOutput::Delivered { tag: 7, to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, [1, 2]);
    // The last station sits 200 m away: 1010 ns at 0.66 c.
    let at = out
        .iter()
        .find_map(|o| match o {
            SegmentOutput::Delivered { to: 2, at, .. } => Some(*at),
            _ => None,
        })
        .unwrap();
    let expected = 1000.0 + FULL_FRAME_BITS as f64 * 0.1 + 200.0 / (0.66 * 299.792_458);
    assert!((at.seconds() * 1e6 - expected).abs() < 0.001, "{at}");
    assert_eq!(seg.counters(0).collisions, 0);
}

#[test]
fn two_frames_offered_at_once_collide_then_both_get_through() {
    let mut seg = Segment::new(&setup(vec![MacDuplex::Half; 2], 100.0));
    seg.offer(us(1000), 0, 1, FULL_FRAME_BITS);
    seg.offer(us(1000), 1, 2, FULL_FRAME_BITS);
    seg.run();
    let out = seg.drain();
    for station in 0..2 {
        let c = seg.counters(station);
        assert!(c.collisions >= 1, "{c:?}");
        assert_eq!(c.late_collisions, 0, "a 100 m cable is within the slot");
        assert_eq!(c.sent, 1);
        assert_eq!(c.received, 1);
        assert_eq!(c.fcs_errors, 0, "the fragments are runts: {c:?}");
    }
    let delivered = out
        .iter()
        .filter(|o| matches!(o, SegmentOutput::Delivered { .. }))
        .count();
    assert_eq!(delivered, 2);
}

#[test]
fn the_same_offers_and_seed_give_the_same_history() {
    let run = |seed| {
        let mut s = setup(vec![MacDuplex::Half; 8], 500.0);
        s.seed = seed;
        let mut seg = Segment::new(&s);
        for i in 0..400u64 {
            seg.offer(us(i * 97 % 5000), (i % 8) as usize, i, FULL_FRAME_BITS);
        }
        seg.run();
        let c: Vec<StationCounters> = (0..8).map(|i| seg.counters(i)).collect();
        (seg.drain(), c)
    };
    let a = run(1);
    assert_eq!(a, run(1));
    assert_ne!(a.0, run(2).0);
    let collisions: u64 = a.1.iter().map(|c| c.collisions).sum();
    assert!(collisions > 0);
}

#[test]
fn seed_003_mismatch_the_full_end_counts_fcs_errors_the_half_end_late_collisions() {
    // Station 0 half duplex, station 1 full duplex: the full end sends a long frame
    // while the half end is in the middle of one; the half end sees a late collision and
    // jams; the full end receives a truncated frame (FCS error), and the half end loses
    // the frame it was receiving.
    let mut seg = Segment::new(&setup(vec![MacDuplex::Half, MacDuplex::Full], 100.0));
    seg.offer(us(1000), 0, 1, FULL_FRAME_BITS);
    seg.offer(us(1200), 1, 2, FULL_FRAME_BITS);
    seg.run();
    let out = seg.drain();
    let half = seg.counters(0);
    let full = seg.counters(1);
    assert_eq!(half.late_collisions, 1, "{half:?}");
    assert_eq!(half.late_aborts, 1);
    assert_eq!(full.fcs_errors, 1, "{full:?}");
    assert_eq!(full.collisions, 0, "the full end ignores carrier");
    assert_eq!(full.sent, 1);
    assert_eq!(
        half.received, 0,
        "the half end dropped what it was receiving"
    );
    assert!(
        !out.iter()
            .any(|o| matches!(o, SegmentOutput::Delivered { .. })),
        "{out:?}"
    );
}

proptest::proptest! {
    #[test]
    fn every_frame_is_sent_or_lost_once_and_a_sent_frame_reaches_every_station(
        offers in proptest::collection::vec((0u64..20_000, 0usize..5, 64u64..1519), 1..120),
        length_m in 0.0f64..200.0,
        seed in 0u64..1000,
    ) {
        let mut s = setup(vec![MacDuplex::Half; 5], length_m);
        s.seed = seed;
        s.queue_frames = 8;
        let mut seg = Segment::new(&s);
        for (tag, &(at_us, station, bytes)) in offers.iter().enumerate() {
            seg.offer(us(at_us), station, tag as u64, (bytes + 8) * 8);
        }
        seg.run();
        let out = seg.drain();
        let mut fate = vec![0u32; offers.len()];
        let mut deliveries = vec![0u32; offers.len()];
        for o in &out {
            match *o {
                SegmentOutput::Sent { tag, .. } | SegmentOutput::Lost { tag, .. } => {
                    fate[tag as usize] += 1;
                }
                SegmentOutput::Delivered { tag, from, to, .. } => {
                    proptest::prop_assert_ne!(from, to);
                    deliveries[tag as usize] += 1;
                }
            }
        }
        proptest::prop_assert!(fate.iter().all(|&f| f == 1), "{fate:?}");
        for o in &out {
            if let SegmentOutput::Sent { tag, .. } = *o {
                // Within the slot budget a frame that went without a collision reached
                // all four other stations intact.
                proptest::prop_assert_eq!(deliveries[tag as usize], 4);
            }
            if let SegmentOutput::Lost { tag, .. } = *o {
                proptest::prop_assert_eq!(deliveries[tag as usize], 0);
            }
        }
        for i in 0..5 {
            let c = seg.counters(i);
            proptest::prop_assert_eq!(
                c.offered,
                c.sent + c.excessive_collisions + c.late_aborts + c.queue_drops
            );
            proptest::prop_assert_eq!(c.late_collisions, 0);
            proptest::prop_assert_eq!(c.fcs_errors, 0);
        }
    }
}

#[test]
fn a_full_queue_drops_the_arrival() {
    let mut s = setup(vec![MacDuplex::Half; 2], 10.0);
    s.queue_frames = 2;
    let mut seg = Segment::new(&s);
    for tag in 0..5 {
        seg.offer(us(0), 0, tag, FULL_FRAME_BITS);
    }
    seg.run();
    let c = seg.counters(0);
    assert_eq!((c.sent, c.queue_drops, c.queue_frames_max), (3, 2, 2));
}

#[test]
fn a_station_whose_queue_empties_is_counted_as_run_dry_once_per_emptying() {
    let mut seg = Segment::new(&setup(vec![MacDuplex::Half; 2], 100.0));
    // Three frames at once: the MAC sends them back to back and runs dry after the third.
    for tag in 0..3 {
        seg.offer(us(10), 0, tag, FULL_FRAME_BITS);
    }
    seg.run();
    assert_eq!((seg.counters(0).sent, seg.counters(0).ran_dry), (3, 1));
    // One more, long after: dry again once it is sent.
    seg.offer(us(100_000), 0, 9, FULL_FRAME_BITS);
    seg.run();
    assert_eq!((seg.counters(0).sent, seg.counters(0).ran_dry), (4, 2));
    assert_eq!(seg.counters(1).ran_dry, 0);
}
