use wirespeed::throughput::text::*;
use wirespeed_model::RateFormat;
use wirespeed_net::TestSpec;
use wirespeed_net::report::Interval;

/// Issue 15 item 7: `-f K` shows the transfer in KiB too, not in decimal GB.
#[test]
fn the_transfer_column_follows_the_byte_unit_asked_for() {
    let n = 2_684_354_560; // 2.5 GiB
    assert_eq!(transfer(n, RateFormat::Kibibytes), "2621440 KiB");
    assert_eq!(transfer(n, RateFormat::Gibibytes), "2.5 GiB");
    assert_eq!(transfer(n, RateFormat::Megabytes), "2684 MB");
    assert_eq!(transfer(n, RateFormat::Megabits), "2.684 GB");
    assert_eq!(transfer(n, RateFormat::Adaptive), "2.684 GB");
}

/// A warm-up interval (-O) is marked, as iperf3 marks it; a counted one is not.
#[test]
fn omitted_intervals_are_marked_and_counted_ones_are_not() {
    let lines = LiveLines::new(RateFormat::Adaptive, &TestSpec::default(), true, false);
    let iv = |omitted| Interval {
        start_seconds: 0.0,
        end_seconds: 1.0,
        omitted,
        streams: Vec::new(),
        sum_sent: None,
        sum_received: None,
    };
    let warm = lines.line("1", &iv(true), 1000, 8000.0, "  sender");
    assert!(warm.ends_with("  sender  (omitted)"), "{warm}");
    let counted = lines.line("1", &iv(false), 1000, 8000.0, "  sender");
    assert!(!counted.contains("omitted"), "{counted}");
}
