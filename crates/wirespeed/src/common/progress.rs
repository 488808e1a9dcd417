//! Progress of long work (a sweep's runs, a load series, simulations, probe rounds), one shape
//! for every command. On a terminal it is a bar on stderr; elsewhere (a CI log, a pipe, `nohup`)
//! a plain line every few seconds, so a job that takes an hour is never silent for an hour.
//!
//! The time left comes from the work itself once an item has finished (elapsed / done x left),
//! and before that from what the command knows an item costs (a sweep run lasts `-t`), so the
//! first estimate is a real one and not "0 s": indicatif's own ETA knows nothing until the bar
//! moves. Work whose items each last a schedule (a `load` test: settle, transmit, cool down)
//! counts down from that schedule instead ([`Progress::start_scheduled`]): the estimate from
//! the work done rises while an item runs (elapsed grows, done does not), which reads as a
//! clock going backwards.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

/// How often the plain progress line is printed when stderr is not a terminal.
pub(crate) const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// What is known of the work, shared with the bar's template and the plain-line thread.
#[doc(hidden)]
pub struct Work {
    /// "sweep", "load", "simulating", "probe".
    what: String,
    /// "runs", "tests", "rounds".
    unit: &'static str,
    total: AtomicU64,
    done: AtomicU64,
    started: Instant,
    /// What one item is expected to cost before any has finished.
    per_item: Option<Duration>,
    /// Every item lasts this long by its schedule: the time left is counted down from it.
    scheduled: Option<Duration>,
    /// When the item under way started (the last time `done` moved).
    item_started: Mutex<Instant>,
    message: Mutex<String>,
}

impl Work {
    fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed).min(self.total())
    }

    /// An item ended: the next one starts now.
    fn item_moved(&self) {
        if let Ok(mut t) = self.item_started.lock() {
            *t = Instant::now();
        }
    }

    fn left(&self) -> Option<Duration> {
        if let Some(per_item) = self.scheduled {
            let into = self
                .item_started
                .lock()
                .map_or(Duration::ZERO, |t| t.elapsed());
            return Some(scheduled_remaining(
                per_item,
                self.done(),
                self.total(),
                into,
            ));
        }
        remaining(
            self.started.elapsed(),
            self.done(),
            self.total(),
            self.per_item,
        )
    }

    /// "sweep: 12/48 runs, 30 s elapsed, about 1m 30s left (16K x 32K)".
    #[doc(hidden)]
    pub fn line(&self) -> String {
        let message = self.message.lock().map(|m| m.clone()).unwrap_or_default();
        let mut line = format!(
            "{}: {}/{} {}, {} elapsed, {}",
            self.what,
            self.done(),
            self.total(),
            self.unit,
            short(self.started.elapsed()),
            left_words(self.left())
        );
        if !message.is_empty() {
            line.push_str(&format!(" ({message})"));
        }
        line
    }
}

/// The time left: measured once an item has finished, else the items' expected cost.
#[doc(hidden)]
pub fn remaining(
    elapsed: Duration,
    done: u64,
    total: u64,
    per_item: Option<Duration>,
) -> Option<Duration> {
    let left = total.saturating_sub(done);
    if done == 0 {
        return per_item.map(|p| p.saturating_mul(u32::try_from(left).unwrap_or(u32::MAX)));
    }
    Some(elapsed.mul_f64(left as f64 / done as f64))
}

/// The time left of `total` items that each last `per_item` by their schedule, `done` of them
/// finished and the one under way started `into_current` ago: the items after it in full, and
/// what its schedule has left. It never rises as time passes: within an item it falls, and an
/// item that ends early or late hands over no more than it showed (late, its part was 0).
#[doc(hidden)]
pub fn scheduled_remaining(
    per_item: Duration,
    done: u64,
    total: u64,
    into_current: Duration,
) -> Duration {
    let left = total.saturating_sub(done);
    if left == 0 {
        return Duration::ZERO;
    }
    let after_current = u32::try_from(left - 1).unwrap_or(u32::MAX);
    per_item
        .saturating_mul(after_current)
        .saturating_add(per_item.saturating_sub(into_current))
}

fn left_words(left: Option<Duration>) -> String {
    match left {
        Some(d) => format!("about {} left", short(d)),
        None => "time left not known yet".to_string(),
    }
}

/// A duration as a person reads a clock: "42 s", "3m 05s", "1h 02m".
#[doc(hidden)]
pub fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The progress of one command's work; dropped or finished, it leaves the terminal clean.
#[doc(hidden)]
pub struct Progress {
    pub work: Arc<Work>,
    bar: Option<ProgressBar>,
    ticker: Mutex<Option<(Arc<AtomicBool>, JoinHandle<()>)>>,
}

impl Progress {
    /// Starts showing `total` items of `unit`. `quiet` (JSON on stdout to a terminal user who
    /// asked for it, or a caller that prints its own) shows nothing.
    #[doc(hidden)]
    pub fn start(
        what: &str,
        unit: &'static str,
        total: u64,
        per_item: Option<Duration>,
        quiet: bool,
    ) -> Progress {
        Progress::with_estimate(what, unit, total, per_item, None, quiet)
    }

    /// As [`start`](Self::start), for items that each last `per_item` by their schedule: the
    /// time left counts down from the schedule ([`scheduled_remaining`]).
    #[doc(hidden)]
    pub fn start_scheduled(
        what: &str,
        unit: &'static str,
        total: u64,
        per_item: Duration,
        quiet: bool,
    ) -> Progress {
        Progress::with_estimate(what, unit, total, Some(per_item), Some(per_item), quiet)
    }

    fn with_estimate(
        what: &str,
        unit: &'static str,
        total: u64,
        per_item: Option<Duration>,
        scheduled: Option<Duration>,
        quiet: bool,
    ) -> Progress {
        let work = Arc::new(Work {
            what: what.to_string(),
            unit,
            total: AtomicU64::new(total),
            done: AtomicU64::new(0),
            started: Instant::now(),
            per_item,
            scheduled,
            item_started: Mutex::new(Instant::now()),
            message: Mutex::new(String::new()),
        });
        let mut progress = Progress {
            work: Arc::clone(&work),
            bar: None,
            ticker: Mutex::new(None),
        };
        if quiet {
            return progress;
        }
        if std::io::stderr().is_terminal() {
            let for_template = Arc::clone(&work);
            let left = move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&left_words(for_template.left()));
            };
            let template = format!(
                "{what} {{bar:40}} {{pos}}/{{len}} {unit}, {{elapsed}} elapsed, {{left}} {{msg}}"
            );
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style.with_key("left", left));
            }
            bar.enable_steady_tick(Duration::from_secs(1));
            progress.bar = Some(bar);
        } else {
            let stop = Arc::new(AtomicBool::new(false));
            let (flag, shared) = (Arc::clone(&stop), Arc::clone(&work));
            let spawned = std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || plain_lines(&shared, &flag));
            if let Ok(handle) = spawned {
                progress.ticker = Mutex::new(Some((stop, handle)));
            }
        }
        progress
    }

    /// What the item under way is ("16K x 32K", "4 hosts x 64 B").
    #[doc(hidden)]
    pub fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(bar) = &self.bar {
            bar.set_message(message.clone());
        }
        if let Ok(mut m) = self.work.message.lock() {
            *m = message;
        }
    }

    /// `done` items have finished.
    #[doc(hidden)]
    pub fn set_position(&self, done: u64) {
        if self.work.done.swap(done, Ordering::Relaxed) != done {
            self.work.item_moved();
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// The work turned out to be `total` items (a probe knows its schedule only after path
    /// discovery).
    pub(crate) fn set_total(&self, total: u64) {
        self.work.total.store(total, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
    }

    /// One more item has finished.
    #[doc(hidden)]
    pub fn inc(&self) {
        let done = self.work.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.work.item_moved();
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Stops showing progress and clears the bar (also through a shared handle, as the probe's
    /// progress callback holds one).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let ticker = self.ticker.lock().ok().and_then(|mut t| t.take());
        if let Some((stop, handle)) = ticker {
            stop.store(true, Ordering::Relaxed);
            handle.thread().unpark();
            let _ = handle.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The plain line, every [`PLAIN_EVERY`] until told to stop; parked so that a stop is prompt.
fn plain_lines(work: &Work, stop: &AtomicBool) {
    let mut next = Instant::now() + PLAIN_EVERY;
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if now >= next {
            if work.total() > 0 {
                let _ = writeln!(std::io::stderr().lock(), "{}", work.line());
            }
            next += PLAIN_EVERY;
            continue;
        }
        std::thread::park_timeout(next - now);
    }
}
