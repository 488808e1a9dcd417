use wirespeed_lab::emulator::clock::Nanos;
use wirespeed_lab::emulator::link::DirectionCounters;
use wirespeed_lab::emulator::occupancy::*;

#[test]
fn samples_the_draining_backlog_every_period() {
    let mut s = QueueDelaySampler::default();
    let mut c = DirectionCounters::default();
    // At 0 a burst that keeps the wire busy until 5.5 ms arrives.
    s.advance(Nanos(0), &mut c);
    assert_eq!(
        c.queue_delay_samples, 1,
        "the first instant, before the burst"
    );
    s.set_work_end(Nanos(5_500_000));
    // Next event at 10 ms: samples at 1..=10 ms see 4.5, 3.5, 2.5, 1.5, 0.5, then 0.
    s.advance(Nanos(10_000_000), &mut c);
    assert_eq!(c.queue_delay_samples, 11);
    assert_eq!(c.queue_delay_sum_ns, 12_500_000);
    assert_eq!(c.queue_delay_ns, 0);
    // A long idle time is counted without a loop per sample.
    s.advance(Nanos(3_600_000_000_000), &mut c);
    assert_eq!(c.queue_delay_samples, 3_600_001);
    assert_eq!(c.queue_delay_sum_ns, 12_500_000);
}

#[test]
fn a_standing_queue_reads_as_its_delay() {
    // Work topped up to 20 ms ahead of the clock every millisecond, for a second.
    let mut s = QueueDelaySampler::default();
    let mut c = DirectionCounters::default();
    for ms in 0..1_000 {
        let now = Nanos(ms * 1_000_000 + 300_000);
        s.advance(now, &mut c);
        s.set_work_end(Nanos(now.0 + 20_000_000));
    }
    // Each sample falls on an arrival and sees the work before it: the first (at 0.3 ms,
    // before any work) is 0, the other 999 are what was left of the previous 20 ms, 19.
    assert_eq!(c.queue_delay_samples, 1_000);
    assert_eq!(c.queue_delay_sum_ns, 999 * 19_000_000);
    assert_eq!(c.queue_delay_ns, 19_000_000);
}
