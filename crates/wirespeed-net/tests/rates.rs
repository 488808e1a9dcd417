//! One lock for the tests of this binary that measure on loopback, which every test shares.
//!
//! A judgement of a rate, a loss or two ends' byte counts within a tolerance (iperf3's server
//! and client against ours, a paced UDP stream losing at most 2 of 200 datagrams, the load
//! generator's paced bits within a sixth) is taken alone: traffic beside it on this 2-core
//! machine takes the CPU its receiver needs (UDP receivers then drop, a reader falls behind its
//! sender). With only short transfers of the other files beside it, iperf3's server lost 10.6%
//! of a 100 Mbit/s stream at 6 test threads, and the raw-frame generator fell out of its band;
//! so every test that opens a socket takes [`loading`], iperf3.rs's hostile clients too (they
//! hold it until the whole test they run after the attack, which judges): a judgement runs
//! beside no other network test of this binary. At 6 threads iperf3's rate judgements failed
//! in 2 of 3 runs with the hostile clients beside them, and passed 3 of 3 without (load
//! 4.9-12.7). The other tests run side by side with each other, as they did within their own
//! binaries. `std`'s lock prefers a waiting writer,
//! so judgements are not starved by a stream of them.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static LOOPBACK: RwLock<()> = RwLock::new(());

/// For a test that judges a rate, a loss or byte counts within a tolerance: alone among the
/// tests that move data.
pub fn judging() -> RwLockWriteGuard<'static, ()> {
    LOOPBACK.write().unwrap_or_else(PoisonError::into_inner)
}

/// For a test of the other files that opens a socket and judges no rate: beside its kind,
/// never beside a judgement.
pub fn loading() -> RwLockReadGuard<'static, ()> {
    LOOPBACK.read().unwrap_or_else(PoisonError::into_inner)
}
