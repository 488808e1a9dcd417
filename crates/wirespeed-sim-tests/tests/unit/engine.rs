//! The unit tests of `wirespeed_sim::engine`.

use std::cell::RefCell;
use std::rc::Rc;
use wirespeed_sim::engine::*;
use wirespeed_sim::time::{SimSpan, SimTime};

/// Records the order in which events ran and reschedules some.
struct Recorder {
    seen: Vec<(u64, u32)>,
}

impl Model for Recorder {
    type Event = u32;
    fn handle(&mut self, event: u32, queue: &mut EventQueue<u32>) {
        self.seen.push((queue.now().ps(), event));
        if event == 1 {
            // Same instant: runs after everything already due now.
            queue.schedule(queue.now(), 10);
            queue.schedule(queue.now() + SimSpan::from_ps(5), 11);
        }
    }
}

#[test]
fn equal_times_run_first_in_first_out() {
    let mut sim = Simulation::new(Recorder { seen: Vec::new() });
    for (t, e) in [(7, 3), (2, 1), (2, 2), (7, 4), (0, 0)] {
        sim.schedule(SimTime::from_ps(t), e);
    }
    sim.run();
    assert_eq!(
        sim.model.seen,
        [(0, 0), (2, 1), (2, 2), (2, 10), (7, 3), (7, 4), (7, 11)]
    );
    assert_eq!(sim.events_handled(), 7);
}

#[test]
fn step_until_stops_at_the_deadline() {
    let mut sim = Simulation::new(Recorder { seen: Vec::new() });
    sim.schedule(SimTime::from_ps(5), 0);
    sim.schedule(SimTime::from_ps(50), 2);
    sim.step_until(SimTime::from_ps(20));
    assert_eq!(sim.model.seen, [(5, 0)]);
    assert_eq!(sim.now(), SimTime::from_ps(20));
    sim.run();
    assert_eq!(sim.model.seen.len(), 2);
}

/// Shares what it saw with the test: the simulation owns its clock and does not lend it.
struct CountingClock(Rc<RefCell<Vec<SimTime>>>);
impl Clock for CountingClock {
    fn synchronize(&mut self, deadline: SimTime) {
        self.0.borrow_mut().push(deadline);
    }
}

#[test]
fn the_clock_sees_every_deadline_in_order() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim =
        Simulation::with_clock(Recorder { seen: Vec::new() }, CountingClock(seen.clone()));
    sim.schedule(SimTime::from_ps(9), 0);
    sim.schedule(SimTime::from_ps(3), 0);
    sim.run();
    assert_eq!(*seen.borrow(), [SimTime::from_ps(3), SimTime::from_ps(9)]);
}
