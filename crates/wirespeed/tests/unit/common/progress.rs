use std::time::Duration;
use wirespeed::common::progress::*;

#[test]
fn the_first_estimate_comes_from_the_expected_item_cost() {
    let left = remaining(Duration::ZERO, 0, 10, Some(Duration::from_secs(3)));
    assert_eq!(left, Some(Duration::from_secs(30)));
    assert_eq!(remaining(Duration::ZERO, 0, 10, None), None);
}

#[test]
fn later_estimates_come_from_the_work_done() {
    let left = remaining(Duration::from_secs(20), 4, 10, Some(Duration::from_secs(1)));
    assert_eq!(left, Some(Duration::from_secs(30)));
    assert_eq!(
        remaining(Duration::from_secs(20), 10, 10, None),
        Some(Duration::ZERO)
    );
}

#[test]
fn scheduled_work_counts_down_from_its_schedule() {
    let s = Duration::from_secs;
    assert_eq!(scheduled_remaining(s(3), 0, 4, Duration::ZERO), s(12));
    assert_eq!(scheduled_remaining(s(3), 1, 4, s(1)), s(8));
    // An item past its schedule adds nothing, and its end changes nothing.
    assert_eq!(scheduled_remaining(s(3), 1, 4, s(5)), s(6));
    assert_eq!(scheduled_remaining(s(3), 2, 4, Duration::ZERO), s(6));
    assert_eq!(scheduled_remaining(s(3), 4, 4, s(1)), Duration::ZERO);
    let p = Progress::start_scheduled("load", "tests", 4, s(3), true);
    p.inc();
    let line = p.work.line();
    // 9 s less the moment since `inc`, read in whole seconds.
    assert!(
        line.contains("1/4 tests")
            && (line.contains("about 8 s left") || line.contains("about 9 s left")),
        "{line}"
    );
}

#[test]
fn durations_read_as_a_clock() {
    assert_eq!(short(Duration::from_secs(42)), "42 s");
    assert_eq!(short(Duration::from_secs(185)), "3m 05s");
    assert_eq!(short(Duration::from_secs(3720)), "1h 02m");
}

#[test]
fn the_plain_line_names_the_work_and_what_is_under_way() {
    let p = Progress::start("sweep", "runs", 48, Some(Duration::from_secs(2)), true);
    p.set_position(12);
    p.set_message("16K x 32K");
    let line = p.work.line();
    assert!(line.starts_with("sweep: 12/48 runs, "), "{line}");
    assert!(line.contains("left (16K x 32K)"), "{line}");
}
