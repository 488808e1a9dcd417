//! The discrete-event engine: a priority queue of timed events, a model that handles them, and
//! a clock that decides how fast simulated time may pass.
//!
//! Events are ordered by `(time, sequence)`, the sequence being the order in which they were
//! scheduled, so that events due at the same instant run first-in first-out and a run never
//! depends on how the heap happens to break ties (nexosim's `util/priority_queue.rs` does the
//! same). Cancellation is lazy: a model that wants to cancel a timer bumps a generation number
//! and ignores the stale event when it arrives. The API is nexosim's `step` / `step_until` /
//! `run`. The [`Clock`] is consulted before each event: [`AsFastAsPossible`] never waits (the
//! simulator); a real-time clock in the lab sleeps until the event's instant, which is how the
//! same MAC state machine drives an emulated half-duplex segment.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

/// Something that can be asked the time and handed future work: what a state machine (the
/// MAC, a host) needs from whoever drives it, in virtual or in real time.
pub trait Scheduler<E> {
    /// The current instant.
    fn now(&self) -> SimTime;
    /// Arranges for `event` to be handled at `at` (not before `now`).
    fn schedule(&mut self, at: SimTime, event: E);
}

/// A simulation model: state plus a handler for its own events.
pub trait Model {
    /// The events the model schedules for itself.
    type Event;
    /// Handles one event at `queue.now()`, scheduling any consequences.
    fn handle(&mut self, event: Self::Event, queue: &mut EventQueue<Self::Event>);
}

/// Decides when the next event may run.
pub trait Clock {
    /// Called before the engine runs an event due at `deadline`; returns when it may run.
    fn synchronize(&mut self, deadline: SimTime);
}

/// Runs events back to back, as fast as the processor allows.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsFastAsPossible;

impl Clock for AsFastAsPossible {
    fn synchronize(&mut self, _deadline: SimTime) {}
}

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: the earliest (time, seq) must compare greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// The pending events and the current instant.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    now: SimTime,
    next_seq: u64,
    handled: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(256),
            now: SimTime::ZERO,
            next_seq: 0,
            handled: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The instant of the event being handled (or of the last one).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events handled so far.
    pub fn events_handled(&self) -> u64 {
        self.handled
    }

    /// Events still waiting.
    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// When the next event is due, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Schedules `event` at `at`; a time in the past is taken as now (time never runs back).
    pub fn schedule(&mut self, at: SimTime, event: E) {
        let time = at.max(self.now);
        self.heap.push(Entry {
            time,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    fn pop(&mut self) -> Option<E> {
        let entry = self.heap.pop()?;
        self.now = entry.time;
        self.handled += 1;
        Some(entry.event)
    }
}

impl<E> Scheduler<E> for EventQueue<E> {
    fn now(&self) -> SimTime {
        self.now
    }
    fn schedule(&mut self, at: SimTime, event: E) {
        EventQueue::schedule(self, at, event);
    }
}

/// A model, its event queue and a clock.
pub struct Simulation<M: Model, C: Clock = AsFastAsPossible> {
    /// The model (public so that callers can read its state between steps).
    pub model: M,
    queue: EventQueue<M::Event>,
    clock: C,
}

impl<M: Model> Simulation<M, AsFastAsPossible> {
    /// A simulation that runs as fast as possible.
    pub fn new(model: M) -> Self {
        Simulation::with_clock(model, AsFastAsPossible)
    }
}

impl<M: Model, C: Clock> Simulation<M, C> {
    /// A simulation paced by `clock`.
    pub fn with_clock(model: M, clock: C) -> Self {
        Simulation {
            model,
            queue: EventQueue::new(),
            clock,
        }
    }

    /// The current instant.
    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    /// Events handled so far.
    pub fn events_handled(&self) -> u64 {
        self.queue.events_handled()
    }

    /// Schedules an event from outside the model (initial events, external stimuli).
    pub fn schedule(&mut self, at: SimTime, event: M::Event) {
        self.queue.schedule(at, event);
    }

    /// When the next pending event is due, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Handles the next event; false when none is left.
    pub fn step(&mut self) -> bool {
        let Some(time) = self.queue.peek_time() else {
            return false;
        };
        self.clock.synchronize(time);
        match self.queue.pop() {
            Some(event) => {
                self.model.handle(event, &mut self.queue);
                true
            }
            None => false,
        }
    }

    /// Handles every event due at or before `deadline`, then sets the time to `deadline` if
    /// it got there (events after it stay queued).
    pub fn step_until(&mut self, deadline: SimTime) {
        while self.queue.peek_time().is_some_and(|t| t <= deadline) {
            self.step();
        }
        if self.queue.now < deadline {
            self.queue.now = deadline;
        }
    }

    /// Runs until no event is left.
    pub fn run(&mut self) {
        while self.step() {}
    }
}
