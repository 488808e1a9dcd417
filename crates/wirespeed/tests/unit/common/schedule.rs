use std::time::{Duration, SystemTime};
use wirespeed_model::RateFormat;
/// A schedule's file: its counts, and the headline's spread in base units (a latency
/// schedule's milliseconds as seconds), labelled by statistic.
#[test]
fn a_schedules_metrics_hold_its_counts_and_headline_in_base_units() {
    use wirespeed::common::metrics::{Exposition, Metrics};
    let result = ScheduleResult {
        command: "latency".into(),
        results_file: "r.jsonl".into(),
        runs: 3,
        failed: 1,
        skipped_slots: 0,
        headline: "loaded p50".into(),
        headline_unit: Unit::Milliseconds,
        headline_min: Some(2.0),
        headline_median: Some(12.5),
        headline_max: None,
        ended_by: "count".into(),
        run_list: Vec::new(),
        rate_format: RateFormat::Adaptive,
    };
    let mut m = Exposition::new("schedule");
    result.metrics(&mut m);
    let text = m.text();
    for line in [
        "wirespeed_schedule_runs{command=\"latency\"} 3\n",
        "wirespeed_schedule_failed_runs{command=\"latency\"} 1\n",
        "wirespeed_schedule_headline_seconds{command=\"latency\",headline=\"loaded p50\",statistic=\"median\"} 0.0125\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    assert!(
        !text.contains("statistic=\"max\""),
        "no max without runs: {text}"
    );
}
use proptest::prelude::*;
use wirespeed::common::schedule::*;

fn slots(every_ms: u64, slip_ms: u64, seed: u64) -> Slots {
    Slots {
        every_ns: every_ms * 1_000_000,
        slip_ns: slip_ms * 1_000_000,
        seed,
    }
}

#[test]
fn runs_that_fit_take_consecutive_slots_at_slot_plus_slip() {
    let s = slots(1000, 0, 7);
    let a = s.next(None, 0);
    assert_eq!((a.slot, a.start_ns, a.skipped), (0, 0, 0));
    let b = s.next(Some(0), 500_000_000);
    assert_eq!((b.slot, b.start_ns, b.skipped), (1, 1_000_000_000, 0));
}

#[test]
fn an_overrun_starts_the_next_run_at_once_and_skips_the_slots_passed() {
    let s = slots(1000, 0, 7);
    // Run 0 ends at 1.2 s: slot 1 is already under way; start it at once, nothing skipped.
    let n = s.next(Some(0), 1_200_000_000);
    assert_eq!((n.slot, n.start_ns, n.skipped), (1, 1_200_000_000, 0));
    // Run 0 ends at 3.5 s: slots 1 and 2 passed without a run; run in slot 3 at once.
    let n = s.next(Some(0), 3_500_000_000);
    assert_eq!((n.slot, n.start_ns, n.skipped), (3, 3_500_000_000, 2));
}

#[test]
fn the_slip_is_a_function_of_seed_and_slot() {
    let s = slots(1000, 300, 42);
    assert_eq!(s.slip(5), s.slip(5));
    assert_ne!(
        (0..20).map(|k| s.slip(k)).collect::<Vec<_>>(),
        (0..20)
            .map(|k| slots(1000, 300, 43).slip(k))
            .collect::<Vec<_>>()
    );
    assert_eq!(slots(1000, 0, 42).slip(3), 0);
}

#[test]
fn command_words_leave_out_the_schedule_and_output_flags() {
    let argv: Vec<String> = [
        "127.0.0.1",
        "-t",
        "1",
        "--every",
        "1s",
        "--count=3",
        "--json",
        "-f",
        "m",
        "--results",
        "r.jsonl",
        "-R",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        command_words(&argv, "--count"),
        ["127.0.0.1", "-t", "1", "-R"]
    );
    // probe: --count is the command's own; --max-runs is the schedule's.
    let argv: Vec<String> = ["h", "--count", "4", "--max-runs", "2", "--every", "1s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(command_words(&argv, "--max-runs"), ["h", "--count", "4"]);
}

#[test]
fn until_takes_a_time_or_a_duration() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    assert_eq!(
        parse_until("90s", now).unwrap(),
        now + Duration::from_secs(90)
    );
    let t = parse_until("2026-11-25T20:00:00Z", now).unwrap();
    assert_eq!(rfc3339(t), "2026-11-25T20:00:00.000000Z");
    assert!(parse_until("tomorrow", now).is_err());
}

proptest! {
    /// Whatever the runs' durations: slots increase, no run starts before the previous one
    /// ended or before its own slot, slips stay in [0, slip), and an overrun passes over
    /// whole slots only (the run starts in the slot that holds its start).
    #[test]
    fn slots_increase_slips_stay_in_bounds_overruns_skip_whole_slots(
        every_ms in 1000u64..5000,
        slip_frac in 0.0f64..=1.0,
        seed in any::<u64>(),
        durations_ms in proptest::collection::vec(0u64..12_000, 1..40),
    ) {
        let slip_ms = (every_ms as f64 * slip_frac) as u64;
        let s = slots(every_ms, slip_ms, seed);
        let mut previous: Option<u64> = None;
        let mut free: u128 = 0;
        for d in durations_ms {
            let n = s.next(previous, free);
            let slip = u128::from(s.slip(n.slot));
            prop_assert!(slip_ms == 0 || slip < u128::from(s.slip_ns));
            prop_assert_eq!(n.planned_ns, s.slot(n.slot) + slip);
            prop_assert!(n.start_ns >= free, "never overlaps the previous run");
            prop_assert!(n.start_ns >= s.slot(n.slot), "never before its slot");
            let first = previous.map_or(0, |k| k + 1);
            prop_assert!(n.slot >= first, "slots increase");
            prop_assert_eq!(n.skipped, n.slot - first);
            if n.skipped > 0 {
                // Skipped only because the run could not start before its slot ended.
                prop_assert!(free >= s.slot(n.slot));
                prop_assert!(free < s.slot(n.slot + 1));
                prop_assert_eq!(n.start_ns, free);
            }
            if free <= s.slot(first) + u128::from(s.slip(first)) {
                prop_assert_eq!(n.slot, first);
                prop_assert_eq!(n.start_ns, n.planned_ns);
            }
            previous = Some(n.slot);
            free = n.start_ns + u128::from(d) * 1_000_000;
        }
    }

    /// What the file says is what the schedule meant: a record's scheduled time, written
    /// and read back, is never before the plan's start (also read back) plus its slot, and
    /// its slip reads back within a microsecond (CI once read a slip of -53 ns when the
    /// plan's start kept nanoseconds the records did not).
    #[test]
    fn a_scheduled_time_read_back_is_never_before_its_slot(
        now_ns in 1_600_000_000_000_000_000u64..1_900_000_000_000_000_000,
        slot in 0u64..1000,
        slip_ns in 0u64..1_000_000_000,
    ) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_nanos(now_ns);
        let start = whole_microseconds(now);
        prop_assert!(start <= now && now.duration_since(start).unwrap() < Duration::from_micros(1));
        let planned = u128::from(slot) * 1_000_000_000 + u128::from(slip_ns);
        let start_read = humantime::parse_rfc3339(&rfc3339(start)).unwrap();
        let scheduled_read = humantime::parse_rfc3339(&rfc3339(at(start, planned))).unwrap();
        let slot_start = start_read + Duration::from_secs(slot);
        let slip_read = scheduled_read.duration_since(slot_start);
        prop_assert!(slip_read.is_ok(), "read back before its slot");
        let error = Duration::from_nanos(slip_ns).abs_diff(slip_read.unwrap());
        prop_assert!(error < Duration::from_micros(1), "slip read back {error:?} off");
    }
}

proptest! {
    /// The slip is uniform enough: over many slots its mean is near half the bound.
    #[test]
    fn slips_spread_over_their_range(seed in any::<u64>()) {
        let s = slots(10_000, 1000, seed);
        let mean = (0..4000).map(|k| s.slip(k) as f64).sum::<f64>() / 4000.0;
        let half = s.slip_ns as f64 / 2.0;
        prop_assert!((mean - half).abs() < 0.05 * s.slip_ns as f64, "mean {mean} vs {half}");
    }
}
