//! A test's running phase at the agent: the control messages both ways, the streams' end,
//! and the duration limit with the drain after `-t`.

use super::*;

/// How often the running phase looks at its streams between control messages: the end of a
/// test is seen this late at most, which every test pays once (a mesh pays it per test, 240
/// times in 16 agents: 50 ms made a test 5-10% longer than its `-t` of 0.5 s).
const SUPERVISE_TICK: Duration = Duration::from_millis(10);

/// The running phase: relays "senders done" both ways, waits for the client's view and for
/// this end's streams, and enforces the duration limit.
pub(super) fn supervise(
    ctl: &mut Control,
    running: &Running,
    spec: &TestSpec,
    shared: &Arc<Shared>,
    intervals: &mut Vec<Interval>,
    told: &mut Moved,
) -> Result<(), SessionEnd> {
    let cfg = &shared.config;
    let mut next_live = Instant::now() + LIVE_TICK;
    let asked = spec.amount.duration();
    // A timed test drains past its -t as long as its data moves (Limits::test_end).
    let mut last_moved = Duration::ZERO;
    let mut in_flight = running.in_flight();
    let (mut end, mut why) = cfg.limits.test_end(asked, last_moved);
    let mut client_done = false;
    let mut told_send_done = false;
    let tick = spec.interval;
    let mut next = tick.map(|t| running.start + t);
    let mut last = (0.0, running.zero());
    loop {
        let wait = next.map_or(SUPERVISE_TICK, |at| {
            at.saturating_duration_since(Instant::now())
                .min(SUPERVISE_TICK)
        });
        if let Some(m) = ctl.poll(wait)? {
            match m {
                Message::SendDone => running.peer_senders_done(),
                Message::Finished { .. } => {
                    client_done = true;
                    // The client's receivers have drained, so its senders (if any) told us
                    // already; make sure ours stop waiting.
                    running.peer_senders_done();
                }
                Message::Error { message } => {
                    return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                        format!("the client ended the test: {message}"),
                    ))));
                }
                _ => {}
            }
        }
        if !told_send_done && running.senders_done() {
            ctl.send(&Message::SendDone)?;
            told_send_done = true;
        }
        if Instant::now() >= next_live {
            shared.live.add(running.moved(), told);
            next_live += LIVE_TICK;
        }
        let own_done = running.all_done();
        if let (Some(t), Some(at)) = (tick, next)
            && (Instant::now() >= at || own_done)
        {
            // The last interval ends when this end's streams did, not at the next tick.
            let end = if own_done {
                running.start.elapsed().as_secs_f64()
            } else {
                at.duration_since(running.start).as_secs_f64()
            };
            let now = running.samples();
            let omitted = end <= spec.omit.as_secs_f64() + 1e-9;
            if end - last.0 > 1e-3 {
                keep_interval(
                    intervals,
                    crate::client::interval(last.0, end, &last.1, &now, omitted),
                );
                last = (end, now);
            } else if own_done && let Some(previous) = intervals.last_mut() {
                // A last slice under a millisecond joins the interval before it, so that the
                // intervals hold every byte (a loaded CI host lost 387 KB this way).
                let tail = crate::client::interval(last.0, end, &last.1, &now, omitted);
                *previous = previous.extended(&tail.sums_only());
                last = (end, now);
            }
            next = (!own_done).then_some(at + t);
        }
        if client_done && own_done {
            return Ok(());
        }
        if shared.stopping() {
            return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                "the agent is shutting down",
            ))));
        }
        let elapsed = running.start.elapsed();
        if asked.is_some_and(|t| elapsed >= t) {
            let now = running.in_flight();
            if now != in_flight {
                in_flight = now;
                last_moved = elapsed;
                (end, why) = cfg.limits.test_end(asked, last_moved);
            }
        }
        if elapsed >= end {
            return Err(SessionEnd::Failed(SessionError::Io(io::Error::other(
                cfg.limits.stopped(asked, why),
            ))));
        }
    }
}
