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

use std::io::Write;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

static LOOPBACK: RwLock<()> = RwLock::new(());

/// A hold of [`LOOPBACK`]. With `WIRESPEED_NET_LOCK_LOG=PATH` set, each hold appends one line
/// to PATH when it ends (test name, kind, seconds waited, seconds held), so a run shows where
/// the binary's time goes: the `judging` holds run one after another, and they are the
/// binary's critical path. Without the variable nothing is written.
pub struct Hold<G> {
    _guard: G,
    kind: &'static str,
    asked: Instant,
    got: Instant,
}

impl<G> Drop for Hold<G> {
    fn drop(&mut self) {
        let Some(path) = std::env::var_os("WIRESPEED_NET_LOCK_LOG") else {
            return;
        };
        let line = format!(
            "{} {} {:.3} {:.3}\n",
            std::thread::current().name().unwrap_or("?"),
            self.kind,
            (self.got - self.asked).as_secs_f64(),
            self.got.elapsed().as_secs_f64()
        );
        // One write of one short line to a file opened for appending: lines do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// For a test that judges a rate, a loss or byte counts within a tolerance: alone among the
/// tests that move data.
pub fn judging() -> Hold<RwLockWriteGuard<'static, ()>> {
    let asked = Instant::now();
    let guard = LOOPBACK.write().unwrap_or_else(PoisonError::into_inner);
    Hold {
        _guard: guard,
        kind: "judging",
        asked,
        got: Instant::now(),
    }
}

/// For a test of the other files that opens a socket and judges no rate: beside its kind,
/// never beside a judgement.
pub fn loading() -> Hold<RwLockReadGuard<'static, ()>> {
    let asked = Instant::now();
    let guard = LOOPBACK.read().unwrap_or_else(PoisonError::into_inner);
    Hold {
        _guard: guard,
        kind: "loading",
        asked,
        got: Instant::now(),
    }
}
