//! One lock for the tests of this binary that measure on loopback, which every test shares.
//!
//! A judgement of a rate, a loss or two ends' byte counts within a tolerance (iperf3's server
//! and client against ours, a paced UDP stream losing at most 2 of 200 datagrams, the load
//! generator's paced bits within a sixth) is taken
//! alone: a bulk transfer beside it on this 2-core machine takes the CPU its receiver needs
//! (UDP receivers then drop, a reader falls behind its sender: iperf3's server lost 10.6% of a
//! 100 Mbit/s stream with only this binary's short transfers unlocked beside it). Transfers
//! that judge no rate (a live counter moving, a probe answering, byte-exact counts of a few
//! megabytes) run side by side with each other, never beside a judgement; tests that move at
//! most a few hundred kilobytes (refusals, hostile peers, request-response) take neither.
//! `std`'s lock prefers a waiting writer, so judgements are not starved by a stream of
//! transfers.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static LOOPBACK: RwLock<()> = RwLock::new(());

/// For a test that judges a rate, a loss or byte counts within a tolerance: alone among the
/// tests that move data.
pub fn judging() -> RwLockWriteGuard<'static, ()> {
    LOOPBACK.write().unwrap_or_else(PoisonError::into_inner)
}

/// For a test that moves bulk data at full speed for a second or more and judges no rate.
pub fn loading() -> RwLockReadGuard<'static, ()> {
    LOOPBACK.read().unwrap_or_else(PoisonError::into_inner)
}
