//! `serve --exclusive`: one test at a time. A test that arrives while another runs waits in a
//! bounded queue, first come first served, and starts when the one before it ends; a client
//! that named the feature in its hello hears `queued` once a second meanwhile (older clients
//! wait without a word, within their own timeout). Every wait is bounded: past `queue_max`
//! waiting a newcomer is refused at once, past `queue_timeout` a waiting test is refused, and
//! a waiting client that disconnects gives its place up within a second.
//!
//! Tests are told apart by the client's address: the several sessions one client opens for one
//! measurement (`latency`: a UDP echo, two request/response services and the load) run
//! together, and clients on other hosts wait for them.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::agent_config::Exclusive;

/// How often a waiting test is told it still waits, and looks whether its client left.
const NOTICE_EVERY: Duration = Duration::from_secs(1);

/// The queue and the test that runs.
pub struct Gate {
    limits: Exclusive,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The client address whose test runs, and its sessions.
    running: Option<(IpAddr, usize)>,
    /// Tickets waiting, oldest first.
    queue: VecDeque<(u64, IpAddr)>,
    next_ticket: u64,
    /// Tests that waited, in all.
    queued_total: u64,
    /// Tests refused: the queue full, or waited too long.
    refused_total: u64,
    /// Time waited, in all, microseconds.
    waited_micros_total: u64,
}

/// The right to run, held until the session ends.
pub struct Turn<'a> {
    gate: &'a Gate,
    /// How long the test waited for it (None: it did not wait).
    pub waited: Option<Duration>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut st = self.gate.lock();
        if let Some((ip, n)) = st.running {
            st.running = (n > 1).then_some((ip, n - 1));
        }
        drop(st);
        self.gate.changed.notify_all();
    }
}

/// How a wait ended.
pub enum Wait<'a> {
    /// The test may run.
    Go(Turn<'a>),
    /// Refused, with the sentence for the client, after waiting this long.
    Refused(String, Duration),
    /// The client left (or the agent stops) while it waited this long.
    Gone(Duration),
}

/// What the agent's metrics show of the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub waiting: usize,
    pub queued_total: u64,
    pub refused_total: u64,
    pub(crate) waited_micros_total: u64,
}

impl Gate {
    pub fn new(limits: Exclusive) -> Gate {
        Gate {
            limits,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn stats(&self) -> QueueStats {
        let st = self.lock();
        QueueStats {
            waiting: st.queue.len(),
            queued_total: st.queued_total,
            refused_total: st.refused_total,
            waited_micros_total: st.waited_micros_total,
        }
    }

    /// Whether a test from `ip` (holding `ticket` if it waits) may start now: it joins its own
    /// address's running test, or nothing runs and nobody waits ahead of it.
    fn may_run(st: &State, ip: IpAddr, ticket: Option<u64>) -> bool {
        match st.running {
            Some((running, _)) => running == ip,
            None => match ticket {
                Some(t) => st.queue.front().is_some_and(|q| q.0 == t),
                None => st.queue.is_empty(),
            },
        }
    }

    fn take(st: &mut State, ip: IpAddr) {
        let n = st.running.map_or(0, |(_, n)| n);
        st.running = Some((ip, n + 1));
    }

    /// Waits for the turn of a test from `ip`. `notify(position, waited)` is called when the
    /// wait starts and every second after (false: the client is gone); `gone()` says whether
    /// the client hung up, `stopping()` whether the agent stops.
    pub fn wait(
        &self,
        ip: IpAddr,
        notify: &mut dyn FnMut(u32, Duration) -> bool,
        gone: &dyn Fn() -> bool,
        stopping: &dyn Fn() -> bool,
    ) -> Wait<'_> {
        let mut st = self.lock();
        if Self::may_run(&st, ip, None) {
            Self::take(&mut st, ip);
            return Wait::Go(Turn {
                gate: self,
                waited: None,
            });
        }
        if st.queue.len() >= self.limits.queue_max {
            st.refused_total += 1;
            return Wait::Refused(
                format!(
                    "refused by the agent: it runs one test at a time (--exclusive) and {} test(s) are already waiting; try again later (--queue-max on the agent)",
                    st.queue.len()
                ),
                Duration::ZERO,
            );
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue.push_back((ticket, ip));
        st.queued_total += 1;
        let since = Instant::now();
        let mut next_notice = since;
        let leave = |st: &mut State| {
            st.queue.retain(|q| q.0 != ticket);
            st.waited_micros_total +=
                u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        };
        loop {
            if Self::may_run(&st, ip, Some(ticket)) {
                leave(&mut st);
                Self::take(&mut st, ip);
                drop(st);
                self.changed.notify_all();
                return Wait::Go(Turn {
                    gate: self,
                    waited: Some(since.elapsed()),
                });
            }
            let waited = since.elapsed();
            if waited >= self.limits.queue_timeout {
                leave(&mut st);
                st.refused_total += 1;
                drop(st);
                self.changed.notify_all();
                return Wait::Refused(
                    format!(
                        "refused by the agent: the test waited {:.0} s for the one before it to end (--exclusive; --queue-timeout on the agent); try again later",
                        waited.as_secs_f64()
                    ),
                    waited,
                );
            }
            if Instant::now() >= next_notice {
                let position = st.queue.iter().position(|q| q.0 == ticket).unwrap_or(0);
                drop(st);
                let here = notify(u32::try_from(position).unwrap_or(u32::MAX), waited)
                    && !gone()
                    && !stopping();
                st = self.lock();
                if !here {
                    leave(&mut st);
                    drop(st);
                    self.changed.notify_all();
                    return Wait::Gone(waited);
                }
                next_notice += NOTICE_EVERY;
            }
            let until_notice = next_notice.saturating_duration_since(Instant::now());
            let until_timeout = self.limits.queue_timeout.saturating_sub(since.elapsed());
            let pause = until_notice
                .min(until_timeout)
                .max(Duration::from_millis(1));
            st = self
                .changed
                .wait_timeout(st, pause)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}
