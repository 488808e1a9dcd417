use std::time::{Duration, Instant};
use wirespeed_net::agent::echo::*;
use wirespeed_net::control::echo::{ECHO_BURST, MAX_ECHO_PER_SECOND};

#[test]
fn the_bucket_allows_a_burst_then_the_rate() {
    let t0 = Instant::now();
    let mut b = Bucket {
        tokens: ECHO_BURST,
        last: t0,
    };
    let burst = (0..1000).filter(|_| b.take(t0)).count();
    assert_eq!(burst, ECHO_BURST as usize);
    // One second later: MAX_ECHO_PER_SECOND more (capped at the burst).
    let later = (0..1000)
        .filter(|_| b.take(t0 + Duration::from_secs(1)))
        .count();
    assert_eq!(later, ECHO_BURST as usize);
    let mut b = Bucket {
        tokens: 0.0,
        last: t0,
    };
    assert!(b.take(t0 + Duration::from_secs_f64(1.0 / MAX_ECHO_PER_SECOND)));
    assert!(!b.take(t0 + Duration::from_secs_f64(1.0 / MAX_ECHO_PER_SECOND)));
}
