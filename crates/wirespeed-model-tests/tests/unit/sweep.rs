//! Unit tests of the sweep model.

use proptest::prelude::*;
use std::collections::HashSet;
use wirespeed_model::stats::median;
use wirespeed_model::sweep::*;

#[test]
fn axes_parse() {
    let a: Axis = "1..17".parse().unwrap();
    assert_eq!(a.0.len(), 17);
    assert_eq!(a.0[2], BufferSize::Packets(3));
    let b: Axis = "16KiB..1MiB:x2".parse().unwrap();
    assert_eq!(b.0.first(), Some(&BufferSize::Bytes(16 * 1024)));
    assert_eq!(b.0.last(), Some(&BufferSize::Bytes(1 << 20)));
    assert_eq!(b.0.len(), 7);
    let c: Axis = "1,2,4p,64KiB".parse().unwrap();
    assert_eq!(
        c.0,
        vec![
            BufferSize::Packets(1),
            BufferSize::Packets(2),
            BufferSize::Packets(4),
            BufferSize::Bytes(65536)
        ]
    );
    let d: Axis = "2..10:4".parse().unwrap();
    assert_eq!(
        d.0,
        vec![
            BufferSize::Packets(2),
            BufferSize::Packets(6),
            BufferSize::Packets(10)
        ]
    );
    let e: Axis = "4KiB..16KiB:4KiB".parse().unwrap();
    assert_eq!(e.0.len(), 4);
    let f: Axis = "1-4".parse().unwrap();
    assert_eq!(f, "1..4".parse().unwrap());
    let g: Axis = "16KiB-64KiB:16KiB".parse().unwrap();
    assert_eq!(g.0.len(), 4);
    let h: Axis = "2..9:4".parse().unwrap();
    assert_eq!(
        h.0.last(),
        Some(&BufferSize::Packets(9)),
        "the end is on the axis"
    );
}

proptest! {
    /// A list of packet counts means the same on a sweep axis as in every other list of
    /// numbers (`sim csma --hosts`, `probe --sizes`): the same ranges, steps and ends.
    #[test]
    fn packet_axes_read_as_every_list_of_numbers(
        items in proptest::collection::vec((1u64..40, 0u64..20, 0u64..6, 0usize..3), 1..5)
    ) {
        let text = items
            .iter()
            .map(|&(a, len, step, form)| match form {
                0 => a.to_string(),
                1 => format!("{a}-{}", a + len),
                _ if step == 0 => format!("{a}..{}", a + len),
                _ => format!("{a}..{}:{step}", a + len),
            })
            .collect::<Vec<_>>()
            .join(",");
        let list = wirespeed_model::units::parse_number_list(&text, 1, 1000, 1000).unwrap();
        let mut axis: Vec<u64> = text
            .parse::<Axis>()
            .unwrap()
            .0
            .into_iter()
            .map(|v| v.bytes(1))
            .collect();
        axis.sort_unstable();
        axis.dedup();
        prop_assert_eq!(list, axis, "{}", text);
    }
}

#[test]
fn bad_axes_say_what_was_expected() {
    for bad in [
        "",
        "0",
        "17..1",
        "1..x",
        "1KiB..2",
        "4..8:x1",
        "1..100000",
        "1,,2",
        "16KiB..1MiB",
    ] {
        let err = bad.parse::<Axis>().unwrap_err().to_string();
        assert!(
            err.contains("buffer axis") && err.contains("for example"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn every_point_runs_reps_times_in_a_seeded_order() {
    let p = plan(17, 17, 4, 42);
    assert_eq!(p.len(), 1156, "the seed's 1,156 tests");
    let distinct: HashSet<_> = p.iter().collect();
    assert_eq!(distinct.len(), 1156);
    assert_eq!(plan(17, 17, 4, 42), p, "same seed, same order");
    assert_ne!(plan(17, 17, 4, 43), p, "another seed, another order");
    let sorted: Vec<_> = (0..17)
        .flat_map(|s| {
            (0..17).flat_map(move |r| {
                (0..4).map(move |rep| PlannedRun {
                    snd_index: s,
                    rcv_index: r,
                    rep,
                })
            })
        })
        .collect();
    assert_ne!(p, sorted, "the order is shuffled");
}

fn record(s: usize, r: usize, rep: u32, rate: f64) -> RunRecord {
    RunRecord {
        snd_index: s,
        rcv_index: r,
        rep,
        snd_requested_bytes: 0,
        rcv_requested_bytes: 0,
        snd_granted_bytes: 0,
        rcv_granted_bytes: 0,
        bytes: (rate * 10.0) as u64,
        seconds: 10.0,
        kernel: None,
        max_write_seconds: 0.0,
        sender_cpu_percent: 10.0,
        receiver_cpu_percent: 10.0,
    }
}

#[test]
fn resume_skips_finished_runs() {
    let p = plan(3, 3, 2, 1);
    let done = vec![
        record(p[0].snd_index, p[0].rcv_index, p[0].rep, 1.0),
        record(p[5].snd_index, p[5].rcv_index, p[5].rep, 1.0),
    ];
    let left = remaining(&p, &done);
    assert_eq!(left.len(), p.len() - 2);
    assert!(!left.contains(&p[0]) && !left.contains(&p[5]));
    assert_eq!(left[0], p[1], "plan order is kept");
}

#[test]
fn a_rate_that_doubles_with_the_buffer_on_a_doubling_axis_is_no_notch() {
    // 16, 32, 64 KiB with a window-limited rate: 1, 2, 4 units. The neighbours' mean (2.5)
    // would call 32 KiB a 20% notch; the line through them at 32 KiB is exactly 2.
    let axis: Axis = "16K,32K,64K".parse().unwrap();
    let runs: Vec<RunRecord> = [1.0e6, 2.0e6, 4.0e6]
        .iter()
        .enumerate()
        .flat_map(|(i, &r)| (0..3).map(move |rep| record(i, i, rep, r)))
        .collect();
    let path = PathFacts {
        ceiling_bytes_per_second: None,
        wire_bytes_per_payload_byte: 1.0,
        ..PathFacts::default()
    };
    let a = analyse(&axis, &axis, 1448, &runs, path);
    assert!(a.notches.is_empty(), "{:?}", a.notches);
    // A real dip at 32 KiB is still found.
    let dipped: Vec<RunRecord> = [1.0e6, 1.5e6, 4.0e6]
        .iter()
        .enumerate()
        .flat_map(|(i, &r)| (0..3).map(move |rep| record(i, i, rep, r)))
        .collect();
    assert_eq!(analyse(&axis, &axis, 1448, &dipped, path).notches.len(), 1);
}

/// Seed 004's LANCE-to-LANCE and Intel-to-LANCE diagonals, as synthetic runs: the table comes
/// back as given, the LANCE plateau is link-limited (91% of 1,104 KB/s counts as near), and
/// the Intel 3-packet notch is found and nothing else.
#[test]
fn seed_004_tables_and_the_intel_notch() {
    let lance = [
        384., 606., 690., 784., 866., 904., 946., 954., 974., 983., 995., 1001.,
    ];
    let intel = [
        337., 575., 595., 709., 712., 708., 710., 718., 715., 712., 714., 715.,
    ];
    let axis: Axis = "1..12".parse().unwrap();
    let ceiling = 1104.0 * 1024.0;
    // The seed's wire column is the task-to-task rate with one 84-byte ACK per two 1538-byte
    // frames (KB = 1024): every row agrees within the last printed digit (0.1 Mb/s). Its 1,104 KB/s ceiling
    // instead needs one ACK per segment (see the envelope module): the article mixes the two.
    let path = PathFacts {
        ceiling_bytes_per_second: Some(ceiling),
        wire_bytes_per_payload_byte: (2.0 * 1538.0 + 84.0) / 2920.0,
        ..PathFacts::default()
    };
    let lance_wire = [3.4, 5.4, 6.1, 6.9, 7.7, 8.0, 8.4, 8.4, 8.6, 8.7, 8.8, 8.9];
    let runs = |table: &[f64]| -> Vec<RunRecord> {
        table
            .iter()
            .enumerate()
            .flat_map(|(i, kb)| (0..4).map(move |rep| record(i, i, rep, kb * 1024.0)))
            .collect()
    };
    let a = analyse(&axis, &axis, 1460, &runs(&lance), path);
    assert_eq!(a.diagonal.len(), 12);
    assert!((a.diagonal[0].task_to_task_kib_per_second - 384.0).abs() < 1e-9);
    for (row, wire) in a.diagonal.iter().zip(lance_wire) {
        assert!(
            (row.wire_mbit_per_second - wire).abs() < 0.1,
            "{row:?} vs {wire}"
        );
    }
    assert_eq!(
        a.limit,
        PlateauLimit::Link,
        "the LANCE pair reaches 91% of the ceiling"
    );
    assert_eq!(a.reaches_90_percent_at, Some(BufferSize::Packets(6)));
    assert!(a.notches.is_empty(), "{:?}", a.notches);
    let b = analyse(&axis, &axis, 1460, &runs(&intel), path);
    assert_eq!(b.notches.len(), 1, "{:?}", b.notches);
    assert_eq!(b.notches[0].snd_index, 2, "the notch is at 3 packets");
    assert_eq!(b.reaches_90_percent_at, Some(BufferSize::Packets(4)));
    assert_eq!(b.limit, PlateauLimit::Other);
}

/// The loopback collapse the issue describes: 16 KiB send x 256 KiB receive stalls every
/// write for ~22 ms while its neighbours run at gigabits.
#[test]
fn a_collapsed_cell_is_called_pathological_with_the_kernel_evidence() {
    let snd: Axis = "16KiB,64KiB".parse().unwrap();
    let rcv: Axis = "16KiB,64KiB,256KiB".parse().unwrap();
    let mut runs = Vec::new();
    for (s, r, rate) in [
        (0, 0, 250e6),
        (0, 1, 240e6),
        (0, 2, 3e6),
        (1, 0, 260e6),
        (1, 1, 300e6),
        (1, 2, 310e6),
    ] {
        let mut rec = record(s, r, 0, rate);
        if rate < 1e7 {
            rec.max_write_seconds = 0.022;
            rec.kernel = Some(KernelView {
                rtt_us: 22_000,
                snd_cwnd_segments: 10,
                snd_window_bytes: 131_072,
                ..KernelView::default()
            });
        }
        runs.push(rec);
    }
    let a = analyse(
        &snd,
        &rcv,
        65483,
        &runs,
        PathFacts {
            ceiling_bytes_per_second: None,
            wire_bytes_per_payload_byte: 1.0,
            ..PathFacts::default()
        },
    );
    assert_eq!(a.pathological.len(), 1, "{:?}", a.pathological);
    let p = &a.pathological[0];
    assert_eq!((p.snd_index, p.rcv_index), (0, 2));
    assert!(
        p.explanation.contains("longest write() 22 ms"),
        "{}",
        p.explanation
    );
    assert!(p.explanation.contains("rtt 22 ms"), "{}", p.explanation);
    assert_eq!(a.limit, PlateauLimit::Unknown);
}

/// Issue 15: on a doubling axis a rate that doubles with the buffer (16 to 32 KiB) is on
/// the line through its neighbours, not a notch; a real dip still is.
#[test]
fn a_rate_proportional_to_the_buffer_is_no_notch_on_a_doubling_axis() {
    let axis: Axis = "16KiB,32KiB,64KiB,128KiB".parse().unwrap();
    let analyse_rates = |rates: [f64; 4]| {
        let runs: Vec<RunRecord> = rates
            .iter()
            .enumerate()
            .map(|(i, &rate)| record(i, i, 0, rate))
            .collect();
        analyse(
            &axis,
            &axis,
            1448,
            &runs,
            PathFacts {
                ceiling_bytes_per_second: None,
                wire_bytes_per_payload_byte: 1.0,
                ..PathFacts::default()
            },
        )
    };
    let proportional = analyse_rates([1e6, 2e6, 4e6, 8e6]);
    assert!(
        proportional.notches.is_empty(),
        "{:?}",
        proportional.notches
    );
    let dip = analyse_rates([1e6, 1.5e6, 4e6, 8e6]);
    assert_eq!(dip.notches.len(), 1, "{:?}", dip.notches);
    assert_eq!(dip.notches[0].snd_index, 1);
    assert!((dip.notches[0].expected_bytes_per_second - 2e6).abs() < 1.0);
}

/// Issue 15: the knee is read against the path's bandwidth-delay product.
#[test]
fn the_bdp_is_the_ceiling_times_the_lowest_rtt() {
    let axis: Axis = "16KiB,32KiB".parse().unwrap();
    let runs: Vec<RunRecord> = [(0, 2e6, 9_000), (1, 2.4e6, 8_000)]
        .into_iter()
        .map(|(i, rate, rtt)| {
            let mut r = record(i, i, 0, rate);
            r.kernel = Some(KernelView {
                rtt_us: rtt + 500,
                min_rtt_us: rtt,
                ..KernelView::default()
            });
            r
        })
        .collect();
    let with = |ceiling| {
        analyse(
            &axis,
            &axis,
            1448,
            &runs,
            PathFacts {
                ceiling_bytes_per_second: ceiling,
                wire_bytes_per_payload_byte: 1.0,
                ..PathFacts::default()
            },
        )
        .bdp
        .unwrap()
    };
    let b = with(Some(2.5e6));
    assert!(b.rate_is_ceiling);
    assert!((b.rtt_seconds - 0.008).abs() < 1e-12);
    assert!((b.bytes - 20_000.0).abs() < 1e-6, "{b:?}");
    let b = with(None);
    assert!(!b.rate_is_ceiling);
    assert!((b.bytes - 2.4e6 * 0.008).abs() < 1e-6, "{b:?}");
}

/// Issue 15: unequal axes with `--link-rate 20M` were reported as "no link rate given".
#[test]
fn unequal_axes_have_no_diagonal_whatever_the_link_rate() {
    let snd: Axis = "16KiB,64KiB".parse().unwrap();
    let rcv: Axis = "32KiB,128KiB".parse().unwrap();
    let runs: Vec<RunRecord> = [(0, 0, 2e6), (0, 1, 2.2e6), (1, 0, 2.1e6), (1, 1, 2.4e6)]
        .into_iter()
        .map(|(s, r, rate)| record(s, r, 0, rate))
        .collect();
    for ceiling in [Some(2.45e6), None] {
        let a = analyse(
            &snd,
            &rcv,
            1448,
            &runs,
            PathFacts {
                ceiling_bytes_per_second: ceiling,
                wire_bytes_per_payload_byte: 1.0,
                ..PathFacts::default()
            },
        );
        assert!(a.diagonal.is_empty());
        // The best cell stands for the plateau: compared with the ceiling when one is given.
        let expected = if ceiling.is_some() {
            PlateauLimit::Link
        } else {
            PlateauLimit::Unknown
        };
        assert_eq!(a.limit, expected, "ceiling {ceiling:?}");
    }
}

#[test]
fn matrix_cells_take_median_min_max_over_repetitions() {
    let axis: Axis = "1".parse().unwrap();
    let runs = vec![
        record(0, 0, 0, 100.0),
        record(0, 0, 1, 300.0),
        record(0, 0, 2, 200.0),
        record(0, 0, 3, 1000.0),
    ];
    let a = analyse(
        &axis,
        &axis,
        1460,
        &runs,
        PathFacts {
            ceiling_bytes_per_second: Some(1000.0),
            wire_bytes_per_payload_byte: 1.0,
            ..PathFacts::default()
        },
    );
    let c = &a.cells[0];
    assert_eq!(c.runs, 4);
    assert!((c.median_bytes_per_second - 250.0).abs() < 1e-9);
    assert!((c.min_bytes_per_second - 100.0).abs() < 1e-9);
    assert!((c.max_bytes_per_second - 1000.0).abs() < 1e-9);
    assert!((c.percent_of_ceiling.unwrap() - 25.0).abs() < 1e-9);
}

#[test]
fn a_cpu_bound_plateau_is_named() {
    let axis: Axis = "1..6".parse().unwrap();
    let runs: Vec<RunRecord> = (0..6)
        .map(|i| {
            let mut r = record(i, i, 0, 1e8 * (1.0 + i as f64).min(3.0));
            r.sender_cpu_percent = 99.0;
            r
        })
        .collect();
    let a = analyse(
        &axis,
        &axis,
        1460,
        &runs,
        PathFacts {
            ceiling_bytes_per_second: Some(1e10),
            wire_bytes_per_payload_byte: 1.0,
            ..PathFacts::default()
        },
    );
    assert_eq!(a.limit, PlateauLimit::Cpu);
}

/// The analysis of one run on a one-point axis, with no link ceiling.
fn one_cell_no_ceiling(r: RunRecord) -> SweepAnalysis {
    let axis: Axis = "1".parse().unwrap();
    analyse(
        &axis,
        &axis,
        1460,
        &[r],
        PathFacts {
            ceiling_bytes_per_second: None,
            wire_bytes_per_payload_byte: 1.0,
            ..PathFacts::default()
        },
    )
}

#[test]
fn window_over_rtt_predicts_a_window_limited_cell() {
    let mut r = record(0, 0, 0, 1e5);
    r.snd_granted_bytes = 2 * 16384;
    r.rcv_granted_bytes = 2 * 65536;
    r.kernel = Some(KernelView {
        rtt_us: 120_000,
        min_rtt_us: 100_000,
        ..KernelView::default()
    });
    let a = one_cell_no_ceiling(r);
    // 16 KiB window / 100 ms.
    assert!((a.cells[0].predicted_bytes_per_second.unwrap() - 163_840.0).abs() < 1e-6);
}

/// Issue 15 item 5: when the receiver advertised 1.35 times the buffer asked for (the
/// kernel's scaling ratio), the sender's buffer holds the same share: the prediction uses
/// it, not half the granted size, which read 17-19% low.
#[test]
fn the_window_share_the_receiver_advertised_applies_to_the_sender_too() {
    let mut r = record(0, 0, 0, 1e5);
    r.snd_granted_bytes = 2 * 65536;
    r.rcv_granted_bytes = 2 * 65536;
    r.kernel = Some(KernelView {
        rtt_us: 1_000,
        min_rtt_us: 1_000,
        snd_window_bytes: 88_474, // 1.35 x 65536
        ..KernelView::default()
    });
    let a = one_cell_no_ceiling(r);
    let predicted = a.cells[0].predicted_bytes_per_second.unwrap();
    assert!((predicted - 88_474_000.0).abs() < 1.0, "{predicted}");
}

/// Issue 31's sweep on a T1: the seed's grid (17 x 17 x 4 runs of 8 MiB) at a full
/// segment's 34.85 ms round trip and the T1's 181.7 KB/s takes most of a day; a small
/// grid takes seconds. Worked by hand: a window of w packets of 1448 bytes moves 8 MiB in
/// 8 MiB / min(w x 1448 / 34.85 ms, 181.7 KB/s), plus the run's setup.
#[test]
fn the_seeds_grid_on_a_t1_takes_most_of_a_day() {
    let axis: Axis = "1..17".parse().unwrap();
    let (rtt, cap) = (0.034_85, 181_700.0);
    let e = estimate(
        &axis,
        &axis,
        4,
        1448,
        Transfer::Bytes(8 << 20),
        rtt,
        Some(cap),
    );
    assert_eq!(e.runs, 1156);
    let mut want = 0.0;
    for s in 1..=17u64 {
        for r in 1..=17u64 {
            let rate = (s.min(r) as f64 * 1448.0 / rtt).min(cap);
            want += 4.0 * ((8 << 20) as f64 / rate + RUN_SETUP_SECONDS + RUN_ROUND_TRIPS * rtt);
        }
    }
    assert!((e.seconds - want).abs() < 1e-6, "{} vs {want}", e.seconds);
    assert!(
        e.seconds > 15.0 * 3600.0 && e.seconds < 25.0 * 3600.0,
        "{}",
        e.seconds
    );
    // One packet: 8 MiB at 41.5 KB/s.
    assert!(
        (e.longest_run_seconds - 202.4).abs() < 1.0,
        "{}",
        e.longest_run_seconds
    );
    let small: Axis = "2,8".parse().unwrap();
    let s = estimate(
        &small,
        &small,
        1,
        1448,
        Transfer::Bytes(64 << 10),
        rtt,
        Some(cap),
    );
    assert!(s.seconds < 5.0, "{}", s.seconds);
    // Timed runs cost their time whatever the window; no round trip known: the cap alone.
    let t = estimate(&small, &small, 2, 1448, Transfer::Seconds(1.0), 0.0, None);
    assert!((t.seconds - 8.0 * (1.0 + RUN_SETUP_SECONDS)).abs() < 1e-9);
}

/// Issue 31: window / RTT divides by a full segment's round trip. The path's, when known;
/// else the lowest the kernel saw plus a full segment's serialization at the given rate;
/// else the lowest seen, said as such.
#[test]
fn window_over_rtt_uses_a_full_segments_round_trip() {
    let mut r = record(0, 0, 0, 1e5);
    r.snd_granted_bytes = 2 * 2896;
    r.rcv_granted_bytes = 2 * 2896;
    r.kernel = Some(KernelView {
        rtt_us: 40_000,
        min_rtt_us: 26_000,
        snd_window_bytes: 2896,
        ..KernelView::default()
    });
    let axis: Axis = "2".parse().unwrap();
    let at = |path: PathFacts| analyse(&axis, &axis, 1448, std::slice::from_ref(&r), path);
    let seen = at(PathFacts::default());
    assert_eq!(seen.round_trip.unwrap().basis, RoundTripBasis::LowestSeen);
    assert!((seen.cells[0].predicted_bytes_per_second.unwrap() - 2896.0 / 0.026).abs() < 1e-6);
    let rate = at(PathFacts {
        segment_serialization_seconds: Some(0.0075),
        ..PathFacts::default()
    });
    assert!((rate.round_trip.unwrap().seconds - 0.0335).abs() < 1e-12);
    let path = at(PathFacts {
        ceiling_bytes_per_second: Some(50_000.0),
        segment_round_trip_seconds: Some(0.034_85),
        ..PathFacts::default()
    });
    let rt = path.round_trip.unwrap();
    assert_eq!(rt.basis, RoundTripBasis::Path);
    assert_eq!(rt.lowest_seen_seconds, Some(0.026));
    // 2896 / 34.85 ms = 83.1 KB/s, capped by the 50 KB/s ceiling.
    assert_eq!(path.cells[0].predicted_bytes_per_second, Some(50_000.0));
    let bdp = path.bdp.unwrap();
    assert!((bdp.bytes - 50_000.0 * 0.034_85).abs() < 1e-6);
    // The window seen per byte of buffer asked: 2896 / (2 x 1448).
    assert_eq!(path.window_per_buffer_byte, Some(1.0));
    assert_eq!(path.cells[0].window_bytes, Some(2896));
    // A configured round trip below what a kernel saw yields to the kernel.
    let short = at(PathFacts {
        segment_round_trip_seconds: Some(0.010),
        ..PathFacts::default()
    });
    assert!((short.round_trip.unwrap().seconds - 0.026).abs() < 1e-12);
}

proptest! {
    #[test]
    fn plans_are_permutations(s in 1usize..8, r in 1usize..8, reps in 1u32..5, seed: u64) {
        let p = plan(s, r, reps, seed);
        prop_assert_eq!(p.len(), s * r * reps as usize);
        let distinct: HashSet<_> = p.iter().collect();
        prop_assert_eq!(distinct.len(), p.len());
    }

    #[test]
    fn median_lies_between_min_and_max(values in prop::collection::vec(-1e9f64..1e9, 1..50)) {
        let m = median(&values);
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(lo <= m && m <= hi);
    }
}
