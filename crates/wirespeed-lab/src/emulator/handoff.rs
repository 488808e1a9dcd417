//! The FIFO between a direction's ingress and egress threads (and the one that gives the egress
//! thread's written buffers back), allocating nothing once warm.
//!
//! `std::sync::mpsc::channel` is a linked list of 31-slot blocks: every 31st message allocates
//! a block and every block is freed once read, so a lab moving 19,000 super-packets and
//! 19,000 acknowledgements a second allocated and freed about 1,200 blocks a second per
//! direction (issue 20: no allocation per frame). A bounded `sync_channel` allocates its
//! capacity up front, which for a long fat link would be the whole memory bound in slots. This
//! is a `VecDeque` under a mutex: it grows to the deepest the direction has been and keeps that
//! capacity, so after warm-up a send and a receive are a lock each, and the sender wakes the
//! receiver (a futex call) only when the receiver is asleep in [`Receiver::recv_timeout`].

use std::collections::VecDeque;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

struct State<T> {
    queue: VecDeque<T>,
    /// The receiver is waiting on the condition variable.
    waiting: bool,
    sender_gone: bool,
    receiver_gone: bool,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

/// The sending half (one sender).
pub struct Sender<T>(Arc<Inner<T>>);

/// The receiving half (one receiver).
pub struct Receiver<T>(Arc<Inner<T>>);

/// A new FIFO.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            waiting: false,
            sender_gone: false,
            receiver_gone: false,
        }),
        ready: Condvar::new(),
    });
    (Sender(Arc::clone(&inner)), Receiver(inner))
}

impl<T> Sender<T> {
    /// Queues `value`; gives it back if the receiver is gone.
    pub fn send(&self, value: T) -> Result<(), T> {
        let mut st = self.0.state.lock().expect("handoff lock");
        if st.receiver_gone {
            return Err(value);
        }
        st.queue.push_back(value);
        let wake = st.waiting;
        drop(st);
        if wake {
            self.0.ready.notify_one();
        }
        Ok(())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.0.state.lock() {
            st.sender_gone = true;
        }
        self.0.ready.notify_one();
    }
}

impl<T> Receiver<T> {
    /// The oldest value, if any, without waiting.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut st = self.0.state.lock().expect("handoff lock");
        match st.queue.pop_front() {
            Some(v) => Ok(v),
            None if st.sender_gone => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// The oldest value, waiting up to `timeout` for one.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.0.state.lock().expect("handoff lock");
        loop {
            if let Some(v) = st.queue.pop_front() {
                return Ok(v);
            }
            if st.sender_gone {
                return Err(RecvTimeoutError::Disconnected);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(RecvTimeoutError::Timeout);
            }
            st.waiting = true;
            let (guard, _) = self
                .0
                .ready
                .wait_timeout(st, deadline - now)
                .expect("handoff lock");
            st = guard;
            st.waiting = false;
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.0.state.lock() {
            st.receiver_gone = true;
            // Values still queued are dropped with the last half.
        }
    }
}
