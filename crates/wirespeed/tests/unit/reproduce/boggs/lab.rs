use std::time::Duration;
use wirespeed::reproduce::boggs::lab::*;
use wirespeed::reproduce::{Verdict, lab_file};
use wirespeed_lab::emulator::stats::DelaySums;

#[test]
fn the_lab_scenario_is_the_topology_file_segment() {
    let t = lab_file(TOPOLOGY).unwrap().topology().unwrap();
    let seg = &t.segments[0];
    assert_eq!(seg.stations.len(), 24);
    let s = scenario(seg, 4, 1514, Duration::from_secs(1));
    assert_eq!(s.cable.length_m, seg.length_m);
    assert_eq!(s.host.buffers, seg.queue);
    s.validate().unwrap();
    let r = wirespeed_sim::run(&s).unwrap();
    // Given-up frames only add: the hosts' figure is at least the medium's.
    assert!(handed_to_mac(&r, 1514) >= r.bits_per_second);
    assert!(r.bits_per_second > 9e6 && r.bits_per_second < 1e7, "{r:?}");
}

fn segment() -> wirespeed_lab::topology::Segment {
    lab_file(TOPOLOGY).unwrap().topology().unwrap().segments[0].clone()
}

#[test]
fn the_simulated_stations_sit_where_the_lab_has_them() {
    // The lab spreads its 24 stations over the whole 914 m and a test with 8 uses s1..s8:
    // the simulator must put its 8 there too, not over the whole cable.
    let seg = segment();
    let s = scenario(&seg, 8, 512, Duration::from_secs(1));
    let at = s.cable.positions(8);
    let step = seg.length_m / 23.0;
    for (i, x) in at.iter().enumerate() {
        assert!((x - step * i as f64).abs() < 1e-9, "{at:?}");
    }
    assert!(at[7] < seg.length_m / 3.0, "{at:?}");
    // All 24: the whole cable, as the lab has them.
    let all = scenario(&seg, 24, 512, Duration::from_secs(1))
        .cable
        .positions(24);
    assert!((all[23] - seg.length_m).abs() < 1e-9);
}

fn point(hosts: usize, mean_seconds: f64) -> LabPoint {
    let mut access = DelaySums::default();
    for _ in 0..1000 {
        access.add(mean_seconds);
    }
    LabPoint {
        bytes: 512,
        hosts,
        bits_per_second: 1e7,
        jain: 1.0,
        complete: true,
        delay: StationDelays {
            access,
            queued: access,
            collisions: 500,
            sent: 1000,
            given_up: 0,
            ran_dry: hosts as u64,
        },
    }
}

#[test]
fn the_delay_tolerance_is_the_simulators_window_to_window_spread() {
    // Issue 21 item 5: the lab's 8-station delay was 13.5% above one simulated window and
    // called OUTSIDE at 10%; a 1-s window's mean moves more than that between seeds.
    let seg = segment();
    let t = Duration::from_secs(1);
    let eight = DelaySpread::simulate(&scenario(&seg, 8, 512, t), SPREAD_SEEDS).unwrap();
    let two = DelaySpread::simulate(&scenario(&seg, 2, 512, t), SPREAD_SEEDS).unwrap();
    assert_eq!(eight.windows, SPREAD_SEEDS);
    assert!(eight.min_seconds < eight.mean_seconds && eight.mean_seconds < eight.max_seconds);
    // At 8 stations a window's mean varies by more than 7% (sd), so the tolerance
    // widens past 14%; at 2 it varies by about 1% and the 10% floor applies.
    assert!(eight.sd_seconds / eight.mean_seconds > 0.07, "{eight:?}");
    assert!(eight.tolerance() > 0.14, "{eight:?}");
    assert!(two.sd_seconds / two.mean_seconds < 0.03, "{two:?}");
    assert_eq!(two.tolerance(), DELAY_TOLERANCE, "{two:?}");
    // The verdicts: +13.5% at 8 stations is within the simulator's own spread; the same
    // excess at 2 stations, and three times the spread at 8, are not.
    let w = SimWindow {
        delay_sd_seconds: 0.0,
        collisions_per_frame: 0.5,
        handed_bits_per_second: 1e7,
    };
    let v = |p: &LabPoint, s: &DelaySpread| delay_row(p, s, &w).verdict;
    assert_eq!(
        v(&point(8, eight.mean_seconds * 1.135), &eight),
        Verdict::Within
    );
    assert_eq!(
        v(&point(2, two.mean_seconds * 1.135), &two),
        Verdict::Outside
    );
    let far = eight.mean_seconds * (1.0 + 3.0 * eight.tolerance());
    assert_eq!(v(&point(8, far), &eight), Verdict::Outside);
    let row = delay_row(&point(8, eight.mean_seconds), &eight, &w);
    assert!(row.why.contains("sim over 8 windows"), "{}", row.why);
    assert!(!row.why.contains("cause"), "{}", row.why);
    assert!(
        row.tolerance.contains("2 sd of a window's mean"),
        "{}",
        row.tolerance
    );
    // An outside row names what the lab measured: a short rate means the generators did
    // not keep the queues full; a full rate leaves it unexplained, said so.
    let mut slow = point(2, two.mean_seconds * 1.2);
    slow.bits_per_second = 0.95e7;
    let why = delay_row(&slow, &two, &w).why;
    assert!(
        why.contains(
            "measured cause: the stations were not kept backlogged (their queues ran dry 0 times during the test, beyond the 2 as it ended"
        ),
        "{why}"
    );
    assert!(why.contains("the lab carried -5.0%"), "{why}");
    let mut dry = point(2, two.mean_seconds * 1.2);
    dry.delay.ran_dry = 40;
    let why = delay_row(&dry, &two, &w).why;
    assert!(
        why.contains("queues ran dry 38 times during the test"),
        "{why}"
    );
    assert!(
        why.contains("0.500 collisions per frame against the simulator's 0.500"),
        "{why}"
    );
    let why = delay_row(&point(2, two.mean_seconds * 1.2), &two, &w).why;
    assert!(
        why.contains("not explained: the stations stayed backlogged"),
        "{why}"
    );
    // The rate rows: outside and short, the same count is the cause.
    let mut behind = point(2, 0.0);
    behind.delay.ran_dry = 30;
    assert!(
        rate_cause(&behind, -0.043)
            .contains("measured cause: the stations' queues ran dry 28 times")
    );
    assert_eq!(rate_cause(&behind, -0.02), "");
    assert!(rate_cause(&point(2, 0.0), -0.05).contains("not explained"));
}
