//! The lanes: what each end-to-end test asks of the machine, declared at its first statement.
//!
//! libtest runs this binary's tests on several threads (`.cargo/config.toml` sets
//! `RUST_TEST_THREADS`), more than the machine's cores, because most tests wait on timers:
//! transfers of a fixed duration, a lab's delays, probes paced in time. What keeps the tests
//! that load a core, or judge a rate or a delay, from measuring each other is this lane, a
//! count of [`CORES`] cores (the CI machine's):
//!
//! * [`light`]: the test waits on timers or processes and uses little CPU (measured under 15%
//!   of one core over its wall, `bench/e2e-test-cpu.py`), and judges no rate or delay a busy
//!   neighbour could move. It takes no core and never waits.
//! * [`one_core`]: the default, for a test that loads a core (spawns the binary in a loop,
//!   parses, builds a lab whose emulator forwards a stream) or judges a rate or a delay with a
//!   margin. At most [`CORES`] of them at once.
//! * [`machine`]: the test judges a rate near its ceiling or a delay within microseconds, or
//!   loads both cores itself. No other one-core or machine test runs beside it; light ones may.
//!   A machine test that is waiting lets no new one-core test in (as Linux's `RwLock` prefers a
//!   waiting writer), so a stream of one-core tests cannot starve it.
//!
//! A test takes its lane at its first statement (`let _lane = crate::lane::one_core();`), so the
//! kind is read where the test begins; `layers::every_e2e_test_takes_its_lane_first` fails,
//! naming the function, when one does not. A hold is never taken twice on one thread.

use std::io::Write;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// The cores the lane hands out: the CI machine has two.
pub(crate) const CORES: u32 = 2;

/// What a test asks of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Light,
    OneCore,
    Machine,
}

impl Kind {
    /// The name in the lane log (bench/e2e-test-times.py reads it).
    fn name(self) -> &'static str {
        match self {
            Kind::Light => "light",
            Kind::OneCore => "core",
            Kind::Machine => "machine",
        }
    }
}

#[derive(Default)]
struct Count {
    /// Cores held by one-core tests, or all of them by a machine test.
    cores: u32,
    /// Machine tests waiting: while any waits, no new one-core test gets a core.
    machines_waiting: u32,
}

struct Lane {
    count: Mutex<Count>,
    freed: Condvar,
}

static LANE: Lane = Lane::new();

impl Lane {
    const fn new() -> Lane {
        Lane {
            count: Mutex::new(Count {
                cores: 0,
                machines_waiting: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// The cores `kind` takes, if it may take them now; a machine test counts as waiting
    /// from the moment it asks (`waiting`), so it never lets itself in past itself.
    fn admits(count: &Count, kind: Kind, waiting: bool) -> bool {
        match kind {
            Kind::Light => true,
            Kind::OneCore => count.machines_waiting == 0 && count.cores < CORES,
            Kind::Machine => count.cores == 0 && (waiting || count.machines_waiting == 0),
        }
    }

    fn cores_of(kind: Kind) -> u32 {
        match kind {
            Kind::Light => 0,
            Kind::OneCore => 1,
            Kind::Machine => CORES,
        }
    }

    fn take(&self, kind: Kind) -> u32 {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let machine = kind == Kind::Machine;
        if machine {
            count.machines_waiting += 1;
        }
        while !Lane::admits(&count, kind, machine) {
            count = self
                .freed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if machine {
            count.machines_waiting -= 1;
        }
        count.cores += Lane::cores_of(kind);
        Lane::cores_of(kind)
    }

    /// [`Lane::take`] without the wait: for the lane's own tests.
    fn try_take(&self, kind: Kind) -> Option<u32> {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        if !Lane::admits(&count, kind, false) {
            return None;
        }
        count.cores += Lane::cores_of(kind);
        Some(Lane::cores_of(kind))
    }

    fn give_back(&self, cores: u32) {
        if cores == 0 {
            return;
        }
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        count.cores -= cores;
        drop(count);
        self.freed.notify_all();
    }
}

/// A test that waits on timers or processes and uses little CPU: it takes no core.
pub(crate) fn light() -> Hold {
    Hold::take(Kind::Light)
}

/// A test that loads a core or judges a rate or a delay with a margin: one of [`CORES`].
pub(crate) fn one_core() -> Hold {
    Hold::take(Kind::OneCore)
}

/// A test that judges a rate near its ceiling or a delay within microseconds, or loads both
/// cores: no one-core or machine test beside it.
pub(crate) fn machine() -> Hold {
    Hold::take(Kind::Machine)
}

/// A test's hold of its lane, for the test's whole body. With `WIRESPEED_LANE_LOG` set to a
/// file, its release appends one line to that file: the test (its thread's name), the kind
/// (`light`, `core`, `machine`), the moment it was asked for in seconds since the Unix epoch,
/// and its wait and hold in seconds, so that a run's waits can be laid out test by test
/// (bench/e2e-test-times.py reads it). Unset, it logs nothing.
pub(crate) struct Hold {
    kind: Kind,
    cores: u32,
    asked_at: SystemTime,
    waited: Duration,
    held: Instant,
}

impl Hold {
    fn take(kind: Kind) -> Hold {
        let asked = Instant::now();
        let asked_at = SystemTime::now();
        let cores = LANE.take(kind);
        let held = Instant::now();
        Hold {
            kind,
            cores,
            asked_at,
            waited: held.duration_since(asked),
            held,
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        LANE.give_back(self.cores);
        let Some(log) = std::env::var_os("WIRESPEED_LANE_LOG") else {
            return;
        };
        let since_epoch = self
            .asked_at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!(
            "{}\t{}\t{:.3}\t{:.3}\t{:.3}\n",
            std::thread::current().name().unwrap_or("?"),
            self.kind.name(),
            since_epoch.as_secs_f64(),
            self.waited.as_secs_f64(),
            self.held.elapsed().as_secs_f64(),
        );
        // One short append per hold: lines from the test threads do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[test]
fn the_lane_counts_cores_and_a_waiting_machine_test_goes_first() {
    let _lane = crate::lane::light();
    let lane = std::sync::Arc::new(Lane::new());
    // Light tests take nothing; two one-core tests fill the cores; a third waits.
    assert_eq!(lane.try_take(Kind::Light), Some(0));
    assert_eq!(lane.try_take(Kind::OneCore), Some(1));
    assert_eq!(lane.try_take(Kind::Machine), None);
    assert_eq!(lane.try_take(Kind::OneCore), Some(1));
    assert_eq!(lane.try_take(Kind::OneCore), None);
    assert_eq!(lane.try_take(Kind::Light), Some(0));
    // A machine test asks while both cores are held: it waits...
    let waiter = {
        let lane = lane.clone();
        std::thread::spawn(move || {
            let cores = lane.take(Kind::Machine);
            lane.give_back(cores);
            cores
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while lane.count.lock().unwrap().machines_waiting == 0 {
        assert!(Instant::now() < deadline, "the machine test never asked");
        std::thread::sleep(Duration::from_millis(5));
    }
    // ... and once one core is free, no new one-core test takes it before the machine test.
    lane.give_back(1);
    assert_eq!(lane.try_take(Kind::OneCore), None);
    assert_eq!(lane.try_take(Kind::Light), Some(0));
    lane.give_back(1);
    assert_eq!(waiter.join().unwrap(), CORES);
    // Everything given back: the lane is whole again.
    assert_eq!(lane.try_take(Kind::Machine), Some(CORES));
    assert_eq!(lane.try_take(Kind::Light), Some(0));
    assert_eq!(lane.try_take(Kind::OneCore), None);
    lane.give_back(CORES);
    assert_eq!(lane.count.lock().unwrap().cores, 0);
}
