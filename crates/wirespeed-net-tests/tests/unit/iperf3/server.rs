use std::time::Duration;
use wirespeed_net::agent_config::{DRAIN_CAP, END_GRACE};
use wirespeed_net::agent_config::{Limits, Stopped};
use wirespeed_net::iperf3::server::*;

/// Issue 31: `serve --iperf3` cut a timed test 5 s past -t while a slow path still
/// delivered what the sender had queued; it now drains as the agent's own tests do.
#[test]
fn a_timed_iperf3_test_drains_while_bytes_move_and_stops_when_they_stall() {
    let s = Duration::from_secs;
    let limits = Limits::default();
    let mut w = EndWatch::new(&limits, Some(s(2)));
    // Bytes before -t do not move the end: a test that sends and stalls at -t ends
    // END_GRACE after it.
    assert_eq!(w.stop_now(&limits, s(1), 1_000), None);
    assert_eq!(
        w.stop_now(&limits, s(2) + END_GRACE, 1_000),
        Some(Stopped::Stalled)
    );
    // Still arriving at 10 s: not stopped at 7 s; stopped END_GRACE after the last byte.
    let mut w = EndWatch::new(&limits, Some(s(2)));
    for at in 2..=10 {
        assert_eq!(w.stop_now(&limits, s(at), at * 1_000), None, "at {at} s");
    }
    assert_eq!(w.stop_now(&limits, s(14), 10_000), None);
    assert_eq!(w.stop_now(&limits, s(15), 10_000), Some(Stopped::Stalled));
    // Moving for ever: at most DRAIN_CAP past -t.
    let mut w = EndWatch::new(&limits, Some(s(2)));
    let mut stopped = None;
    for at in 2..200u64 {
        stopped = w.stop_now(&limits, s(at), at).map(|why| (at, why));
        if stopped.is_some() {
            break;
        }
    }
    assert_eq!(
        stopped,
        Some(((s(2) + DRAIN_CAP).as_secs(), Stopped::StillDraining))
    );
    // An untimed test (-n) ends at the agent's limit whatever moves.
    let mut w = EndWatch::new(&limits, None);
    assert_eq!(w.stop_now(&limits, limits.max_duration - s(1), 5), None);
    assert_eq!(
        w.stop_now(&limits, limits.max_duration, 6),
        Some(Stopped::Limit)
    );
}
