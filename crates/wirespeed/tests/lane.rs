//! The lanes: what each end-to-end test asks of the machine, declared at its first statement.
//!
//! libtest runs this binary's tests on as many threads as the machine has cores, or on more
//! (`--test-threads N`, `RUST_TEST_THREADS`): most tests wait on timers (transfers of a fixed
//! duration, a lab's delays, probes paced in time), so more threads than cores could shorten
//! the run. What keeps the tests that load a core, or judge a rate or a delay, from measuring
//! each other at any thread count is this lane, a count of [`CORES`] cores (the CI machine's):
//!
//! * [`light`]: the test waits on timers or processes and uses little CPU (measured under 15%
//!   of one core over its wall, `bench/e2e-test-cpu.py`), and judges no rate or delay a busy
//!   neighbour could move. It takes no core; beside a machine test, at most one light test
//!   runs.
//! * [`half_core`]: the test judges no rate or delay and was measured between 15% and 50% of
//!   one core (spawns the binary a few times, parses, renders). Two take the place of one
//!   one-core test.
//! * [`one_core`]: the default, for a test that loads a core (spawns the binary in a loop,
//!   builds a lab whose emulator forwards a stream) or judges a rate or a delay with a
//!   margin, whatever its CPU. At most [`CORES`] of them at once.
//! * [`machine`]: the test judges a rate near its ceiling or a delay within microseconds. No
//!   other one-core or machine test runs beside it, and at most one light one (the lab lane's
//!   `alone` tests had one neighbour of any kind at two threads; with up to five light ones
//!   beside it at six threads, `lab::rates::tcp_b_holds_the_cap_across_a_faster_link` once
//!   measured both paced directions 3-4% under their cap). A machine test that is waiting lets
//!   no new test in (as Linux's `RwLock` prefers a waiting writer), so a stream of other tests
//!   cannot starve it.
//!
//! A test takes its lane at its first statement (`let _lane = crate::lane::one_core();`), so the
//! kind is read where the test begins; `layers::every_e2e_test_takes_its_lane_first` fails,
//! naming the function, when one does not. A hold is never taken twice on one thread.

use std::io::Write;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// The cores the lane hands out: the CI machine has two.
pub(crate) const CORES: u32 = 2;

/// The lane counts in half cores.
const HALVES: u32 = 2 * CORES;

/// Light tests that may run beside a machine test.
const LIGHTS_BESIDE_MACHINE: u32 = 1;

/// What a test asks of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Light,
    HalfCore,
    OneCore,
    Machine,
}

impl Kind {
    /// The name in the lane log (bench/e2e-test-times.py reads it).
    fn name(self) -> &'static str {
        match self {
            Kind::Light => "light",
            Kind::HalfCore => "half",
            Kind::OneCore => "core",
            Kind::Machine => "machine",
        }
    }
}

#[derive(Default)]
struct Count {
    /// Half cores held by half-core and one-core tests, or all of them by a machine test.
    halves: u32,
    /// Machine tests waiting: while any waits, no new test starts.
    machines_waiting: u32,
    /// Light tests running: a machine test waits until at most [`LIGHTS_BESIDE_MACHINE`] run.
    lights: u32,
    /// A machine test is running.
    machine: bool,
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
                halves: 0,
                machines_waiting: 0,
                lights: 0,
                machine: false,
            }),
            freed: Condvar::new(),
        }
    }

    /// True if `kind` may take its half cores now; a machine test counts as waiting from the
    /// moment it asks (`waiting`), so it never keeps itself out.
    fn admits(count: &Count, kind: Kind, waiting: bool) -> bool {
        match kind {
            Kind::Light => {
                count.machines_waiting == 0
                    && (!count.machine || count.lights < LIGHTS_BESIDE_MACHINE)
            }
            Kind::HalfCore | Kind::OneCore => {
                count.machines_waiting == 0 && count.halves + Lane::halves_of(kind) <= HALVES
            }
            Kind::Machine => {
                count.halves == 0
                    && count.lights <= LIGHTS_BESIDE_MACHINE
                    && (waiting || count.machines_waiting == 0)
            }
        }
    }

    fn halves_of(kind: Kind) -> u32 {
        match kind {
            Kind::Light => 0,
            Kind::HalfCore => 1,
            Kind::OneCore => 2,
            Kind::Machine => HALVES,
        }
    }

    fn take(&self, kind: Kind) {
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
        Lane::hold(&mut count, kind);
    }

    fn hold(count: &mut Count, kind: Kind) {
        count.halves += Lane::halves_of(kind);
        count.lights += u32::from(kind == Kind::Light);
        count.machine |= kind == Kind::Machine;
    }

    /// [`Lane::take`] without the wait: for the lane's own tests.
    fn try_take(&self, kind: Kind) -> bool {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let admitted = Lane::admits(&count, kind, false);
        if admitted {
            Lane::hold(&mut count, kind);
        }
        admitted
    }

    fn give_back(&self, kind: Kind) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        count.halves -= Lane::halves_of(kind);
        count.lights -= u32::from(kind == Kind::Light);
        if kind == Kind::Machine {
            count.machine = false;
        }
        drop(count);
        self.freed.notify_all();
    }
}

/// A test that waits on timers or processes and uses little CPU: it takes no core.
pub(crate) fn light() -> Hold {
    Hold::take(Kind::Light)
}

/// A test that judges no rate or delay and was measured at 15-50% of one core: half a core.
pub(crate) fn half_core() -> Hold {
    Hold::take(Kind::HalfCore)
}

/// A test that loads a core or judges a rate or a delay with a margin: one of [`CORES`].
pub(crate) fn one_core() -> Hold {
    Hold::take(Kind::OneCore)
}

/// A test that judges a rate near its ceiling or a delay within microseconds: no one-core or
/// machine test beside it.
pub(crate) fn machine() -> Hold {
    Hold::take(Kind::Machine)
}

/// A test's hold of its lane, for the test's whole body. With `WIRESPEED_LANE_LOG` set to a
/// file, its release appends one line to that file: the test (its thread's name), the kind
/// (`light`, `half`, `core`, `machine`), the moment it was asked for in seconds since the Unix epoch,
/// and its wait and hold in seconds, so that a run's waits can be laid out test by test
/// (bench/e2e-test-times.py reads it). Unset, it logs nothing.
pub(crate) struct Hold {
    kind: Kind,
    asked_at: SystemTime,
    waited: Duration,
    held: Instant,
}

impl Hold {
    fn take(kind: Kind) -> Hold {
        let asked = Instant::now();
        let asked_at = SystemTime::now();
        LANE.take(kind);
        let held = Instant::now();
        Hold {
            kind,
            asked_at,
            waited: held.duration_since(asked),
            held,
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        LANE.give_back(self.kind);
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
    use Kind::{HalfCore, Light, Machine, OneCore};
    let lane = std::sync::Arc::new(Lane::new());
    // Light tests take no core; two half-core tests and one one-core test fill the cores.
    assert!(lane.try_take(Light));
    assert!(lane.try_take(OneCore));
    assert!(!lane.try_take(Machine));
    assert!(lane.try_take(HalfCore));
    assert!(!lane.try_take(OneCore));
    assert!(lane.try_take(HalfCore));
    assert!(!lane.try_take(HalfCore));
    assert!(lane.try_take(Light));
    lane.give_back(OneCore);
    // A machine test asks while cores and two light tests are held: it waits...
    let waiter = {
        let lane = lane.clone();
        std::thread::spawn(move || {
            lane.take(Machine);
            let alone = !lane.try_take(Light) && !lane.try_take(HalfCore);
            lane.give_back(Machine);
            alone
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while lane.count.lock().unwrap().machines_waiting == 0 {
        assert!(Instant::now() < deadline, "the machine test never asked");
        std::thread::sleep(Duration::from_millis(5));
    }
    // ... and though a core is free, no new test, light or not, starts before it.
    assert!(!lane.try_take(OneCore));
    assert!(!lane.try_take(HalfCore));
    assert!(!lane.try_take(Light));
    lane.give_back(HalfCore);
    lane.give_back(HalfCore);
    // Still two light tests beside it: it waits until one is done.
    assert_eq!(lane.count.lock().unwrap().machines_waiting, 1);
    lane.give_back(Light);
    // It ran with the one light test left and let no second one or core test in.
    assert!(waiter.join().unwrap());
    lane.give_back(Light);
    // Everything given back: the lane is whole again.
    let count = lane.count.lock().unwrap();
    assert_eq!((count.halves, count.lights, count.machine), (0, 0, false));
}
