use std::time::Duration;
use wirespeed_lab::emulator::clock::*;

#[test]
fn virtual_time_jumps_and_never_goes_back() {
    let clock = VirtualClock::new(Nanos(10));
    assert_eq!(clock.wait_until(Nanos(1_000)), Nanos(1_000));
    assert_eq!(clock.wait_until(Nanos(500)), Nanos(1_000));
}

#[test]
fn a_thread_over_its_share_stops_spinning_for_a_window() {
    let mut b = SpinBudget::new(0.38, 10_000_000, Nanos(0));
    assert!(b.may_spin(Nanos(1), || panic!("not read before the window ends")));
    // First window end: the reference reading only.
    assert!(b.may_spin(Nanos(10_000_000), || 1_000));
    // 9 ms of CPU in a 10 ms window: over 38%, no spin in the next.
    assert!(!b.may_spin(Nanos(20_000_000), || 9_001_000));
    assert!(!b.may_spin(Nanos(25_000_000), || panic!("mid-window")));
    // 1 ms in the next: back under.
    assert!(b.may_spin(Nanos(30_000_000), || 10_001_000));
    assert_eq!(b.over, 1);
}

#[test]
fn the_share_follows_the_kernels_real_time_limits() {
    assert!((rt_share(Some(950_000), Some(1_000_000)) - 0.38).abs() < 1e-12);
    assert_eq!(rt_share(Some(-1), Some(1_000_000)), 1.0);
    assert_eq!(rt_share(None, None), 1.0);
    let mut unlimited = SpinBudget::new(1.0, 1, Nanos(0));
    assert!(unlimited.may_spin(Nanos(5), || panic!("never read")));
}

#[test]
fn real_clock_never_returns_early() {
    for clock in [RealClock::spinning(), RealClock::for_realtime_thread()] {
        for step in [0u64, 50_000, 300_000] {
            let at = clock.now().after(Duration::from_nanos(step));
            let got = clock.wait_until(at);
            assert!(got >= at);
        }
    }
}

#[test]
fn the_spin_follows_the_measured_wake_up_error() {
    // Until it has measured anything a thread spins the most.
    let mut w = WakeError::default();
    assert_eq!(w.spin_ns(), MAX_SPIN_NS);
    // Wake-ups 4 us late: within a few hundred sleeps the spin is about that, not 100 us
    // (a fixed spin would burn the whole gap between 10 Gbit/s releases).
    for _ in 0..300 {
        w.record(4_000);
    }
    assert!(w.spin_ns() >= 5_000 && w.spin_ns() < 8_000, "{w:?}");
    // One wake-up 60 us late raises it at once; it decays again afterwards.
    w.record(60_000);
    assert_eq!(w.spin_ns(), 75_000);
    w.record(1_000);
    assert!(w.spin_ns() < 75_000 && w.spin_ns() > 60_000);
    for _ in 0..300 {
        w.record(1_000);
    }
    assert_eq!(w.spin_ns(), 2_000);
    // Never beyond the most, whatever a stall measured.
    w.record(u64::MAX / 2);
    assert_eq!(w.spin_ns(), MAX_SPIN_NS);
}

#[test]
fn an_adaptive_spin_takes_at_most_a_tenth_of_the_gap_between_releases() {
    // 10 Gbit/s: a 64 KB super-packet every 53 us: at most 5.3 us of spin, not 100.
    assert_eq!(adaptive_spin(MAX_SPIN_NS, 53_000), 5_300);
    // 1 Gbit/s runs of 6 segments, 74 us apart, on a quiet core (wake-ups 4 us late).
    assert_eq!(adaptive_spin(5_000, 74_000), 5_000);
    // An idle link: the whole measured error.
    assert_eq!(adaptive_spin(40_000, 10_000_000), 40_000);
    assert_eq!(adaptive_spin(40_000, 0), 0);
}

#[test]
fn the_spin_policy_parses_or_names_the_fix() {
    assert_eq!(SpinPolicy::parse("adaptive"), Ok(SpinPolicy::Adaptive));
    assert_eq!(SpinPolicy::parse("100"), Ok(SpinPolicy::Fixed(100_000)));
    assert_eq!(SpinPolicy::parse(" 0 "), Ok(SpinPolicy::Fixed(0)));
    for bad in ["", "-1", "1001", "fast", "10us"] {
        let e = SpinPolicy::parse(bad).unwrap_err();
        assert!(e.contains("'adaptive' or to microseconds"), "{e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn an_adaptive_clock_never_returns_early_and_counts_its_spin() {
    let clock = RealClock::for_realtime_thread_with(SpinPolicy::Adaptive);
    assert_eq!(clock.spin_ns(), MAX_SPIN_NS);
    for step in [0u64, 50_000, 300_000, 2_000_000] {
        let at = clock.now().after(Duration::from_nanos(step));
        assert!(clock.wait_until(at) >= at);
    }
    // Whether those sleeps left anything to spin depends on how late they woke (on a busy
    // machine a sleep can wake past a spin of a tenth of the gap, and then nothing is
    // spun). The spin follows the measured lateness, so waits 2 ms apart come to spin
    // within a few: at most 50 (100 ms), each never early.
    let mut waits = 0;
    while clock.spun_ns() == 0 && waits < 50 {
        let at = clock.now().after(Duration::from_millis(2));
        assert!(clock.wait_until(at) >= at);
        waits += 1;
    }
    assert!(clock.spun_ns() > 0, "no spin in {waits} waits 2 ms apart");
    let fixed = RealClock::for_realtime_thread_with(SpinPolicy::Fixed(0));
    assert_eq!(fixed.spin_ns(), 0);
    let at = fixed.now().after(Duration::from_micros(200));
    assert!(fixed.wait_until(at) >= at);
}

#[test]
fn real_clock_default_never_returns_early() {
    let clock = RealClock::spinning();
    for step in [0u64, 50_000, 300_000] {
        let at = clock.now().after(Duration::from_nanos(step));
        let got = clock.wait_until(at);
        assert!(got >= at);
    }
}
