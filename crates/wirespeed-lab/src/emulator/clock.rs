//! Time for the emulator: one trait, a virtual clock for deterministic tests and a real one.
//!
//! The link logic never reads the wall clock; it is handed `now` (as smoltcp's devices are, and
//! as nexosim's simulators are handed a clock). The egress pump waits through a [`Clock`]: in
//! virtual time waiting is a jump, in real time it is a sleep until shortly before the release
//! followed by a spin on `CLOCK_MONOTONIC`, because a sleep alone wakes tens of microseconds late
//! (timer slack and scheduling), which at 100 Mbit/s is several minimum frames.
//!
//! The spin has a budget ([`SpinBudget`]). The emulator's threads run SCHED_FIFO, and the
//! kernel's real-time throttling (`/proc/sys/kernel/sched_rt_runtime_us` out of
//! `sched_rt_period_us`, 950 ms of every second by default) stops every real-time thread of a
//! CPU for the rest of the period once they have run that long: a thread that spins between
//! back-to-back releases at 1 Gbit/s hits it and stalls for the last tens of milliseconds of
//! a second (issue 20: p99 lateness 4.7 ms, max 29 ms at 1 Gbit/s, and
//! `sched: RT throttling activated` in the kernel log). So each thread measures its own CPU
//! time over 10 ms windows; when it used more than its share of a window (0.4 of the
//! real-time ratio, 0.38 by default, so that two such threads on one CPU stay below the
//! limit), it does not spin in the next window: it sleeps to each instant (on the absolute
//! monotonic clock; a real-time thread has no timer slack), which costs a wake-up's lateness
//! (microseconds to tens of them) instead of a stall. Leaving the real-time class when over
//! the share was measured too and was worse: the normal class's scheduling delays made the
//! median release 150-500 us late (docs/lab.md, bench/RESULTS.md).
//!
//! How long to spin is the timer strategy ([`SpinPolicy`]). A fixed 100 us spin covers a
//! loaded machine's wake-ups, but at 10 Gbit/s (a 64 KB super-packet every 53 us) it means
//! spinning all the time, CPU the hosts' stacks on the same two cores need. By default the
//! spin follows the thread's own measured wake-up error ([`WakeError`]: the recent worst
//! oversleep of its absolute sleeps, decaying), at most 100 us and at most a tenth of the time
//! since the previous release ([`adaptive_spin`]): the full measured error on an idle link, a
//! tenth of a core at most under back-to-back releases. The egress thread counts the time it spun
//! ([`RealClock::spun_ns`]), so `lab status` shows it apart from the work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A point in time, nanoseconds since an arbitrary origin (the clock's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub u64);

impl Nanos {
    /// `self + d`, saturating.
    pub fn after(self, d: Duration) -> Nanos {
        Nanos(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }

    /// Signed `self - earlier` in nanoseconds.
    pub fn minus(self, earlier: Nanos) -> i64 {
        self.0 as i64 - earlier.0 as i64
    }
}

/// Something that tells the time and can wait for a moment.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Nanos;
    /// Returns at `at` or as soon after it as possible; returns the time it actually returned.
    fn wait_until(&self, at: Nanos) -> Nanos;
}

/// Virtual time: waiting moves the clock forward at once. Deterministic.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: AtomicU64,
}

impl VirtualClock {
    /// A clock at `start`.
    pub fn new(start: Nanos) -> VirtualClock {
        VirtualClock {
            now: AtomicU64::new(start.0),
        }
    }

    /// Moves the clock to `at` if that is later.
    pub fn advance_to(&self, at: Nanos) {
        self.now.fetch_max(at.0, Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Nanos {
        Nanos(self.now.load(Ordering::SeqCst))
    }

    fn wait_until(&self, at: Nanos) -> Nanos {
        self.advance_to(at);
        self.now()
    }
}

/// `CLOCK_MONOTONIC`, with sleep-then-spin waiting, the spin under an optional [`SpinBudget`].
#[derive(Debug)]
pub struct RealClock {
    /// How long before a release the thread stops sleeping and starts spinning: the most it
    /// spins (with [`SpinPolicy::Adaptive`] the spin is the thread's measured wake-up error,
    /// at most this).
    pub spin: Duration,
    budget: Option<std::sync::Mutex<SpinBudget>>,
    /// The measured wake-up error, where the spin follows it.
    wake: Option<std::sync::Mutex<WakeError>>,
    /// Nanoseconds spent spinning so far (CPU burnt waiting, not working).
    spun_ns: AtomicU64,
    /// When the previous wait returned (the gap to the next bounds an adaptive spin).
    last_return: AtomicU64,
}

/// How an emulator thread waits for a release: sleep to shortly before it, then spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpinPolicy {
    /// Spin as long as the thread's sleeps have recently overslept ([`WakeError`]), but at
    /// most a tenth of the time since the previous release ([`adaptive_spin`]) and at most
    /// [`MAX_SPIN_NS`]: spinning then costs at most about a tenth of a core at any rate.
    Adaptive,
    /// Always spin the last this many nanoseconds (0: sleep only).
    Fixed(u64),
}

/// The longest an emulator thread spins before a release, nanoseconds.
pub const MAX_SPIN_NS: u64 = 100_000;

/// The environment variable that chooses the [`SpinPolicy`] of a lab's threads (for measuring
/// the timer strategy per rate: `adaptive`, the default, or a fixed spin in microseconds).
pub const SPIN_ENV: &str = "WIRESPEED_LAB_SPIN_US";

impl SpinPolicy {
    /// Parses [`SPIN_ENV`]'s value: `adaptive`, or microseconds from 0 to 1000.
    pub fn parse(text: &str) -> Result<SpinPolicy, String> {
        let t = text.trim();
        if t == "adaptive" {
            return Ok(SpinPolicy::Adaptive);
        }
        match t.parse::<u64>() {
            Ok(us) if us <= 1_000 => Ok(SpinPolicy::Fixed(us * 1_000)),
            _ => Err(format!(
                "{SPIN_ENV}={text} is not a spin: set it to 'adaptive' or to microseconds from 0 to 1000, or unset it"
            )),
        }
    }

    /// The policy [`SPIN_ENV`] asks for (adaptive when unset).
    pub fn from_env() -> Result<SpinPolicy, String> {
        match std::env::var(SPIN_ENV) {
            Ok(v) => SpinPolicy::parse(&v),
            Err(_) => Ok(SpinPolicy::Adaptive),
        }
    }
}

/// The spin of [`SpinPolicy::Adaptive`] before a release `gap_ns` after the previous one: the
/// measured wake-up error's spin (`wake_spin_ns`), at most a tenth of the gap. At 1 Gbit/s
/// (a run of 6 full segments every 74 us) a fixed 100 us spin spun all the time and, under the
/// spin budget, took 0.4-0.5 of a core from the hosts' stacks for no gain at the 99th
/// percentile (bench/RESULTS.md, issue 20); a tenth of the gap keeps the spin's cost near a
/// tenth of a core at any rate.
pub fn adaptive_spin(wake_spin_ns: u64, gap_ns: u64) -> u64 {
    wake_spin_ns.min(gap_ns / 10)
}

/// A thread's recent wake-up error: how late its absolute sleeps returned, as a peak that
/// decays (each sample takes the larger of itself and the estimate less 1/32 of it), so the
/// spin before a release covers the recent worst wake-up and shrinks again within about a
/// hundred sleeps once the machine is quiet. A thread that spins the full 100 us before each
/// of 19,000 releases a second (10 Gbit/s, one 64 KB super-packet every 53 us) spins all the
/// time; a real-time thread on a quiet core wakes a few microseconds late, so a spin of that
/// size keeps the release on time at a small share of the CPU (bench/RESULTS.md, issue 20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeError {
    peak_ns: u64,
}

impl Default for WakeError {
    /// Starts at the most: a thread spins fully until its first sleeps are measured.
    fn default() -> Self {
        WakeError {
            peak_ns: MAX_SPIN_NS,
        }
    }
}

impl WakeError {
    /// Records one sleep that returned `late_ns` after its target.
    pub fn record(&mut self, late_ns: u64) {
        let decayed = self.peak_ns - self.peak_ns / 32;
        self.peak_ns = late_ns.max(decayed).min(MAX_SPIN_NS);
    }

    /// The spin that covers it: the peak and a quarter more, at least 2 us, at most
    /// [`MAX_SPIN_NS`].
    pub fn spin_ns(&self) -> u64 {
        (self.peak_ns + self.peak_ns / 4).clamp(2_000, MAX_SPIN_NS)
    }
}

impl RealClock {
    /// A clock that always spins the last 100 us (for tests and threads that are not
    /// real-time).
    pub fn spinning() -> RealClock {
        RealClock {
            spin: Duration::from_nanos(MAX_SPIN_NS),
            budget: None,
            wake: None,
            spun_ns: AtomicU64::new(0),
            last_return: AtomicU64::new(0),
        }
    }

    /// The clock of a real-time emulator thread: spins only within its [`SpinBudget`] (read
    /// from the system's real-time throttling limits), 100 us before each release. Use it only
    /// from the thread it was made for (it reads that thread's CPU time).
    pub fn for_realtime_thread() -> RealClock {
        RealClock::for_realtime_thread_with(SpinPolicy::Fixed(MAX_SPIN_NS))
    }

    /// The same with the spin chosen by `policy`.
    pub fn for_realtime_thread_with(policy: SpinPolicy) -> RealClock {
        let (spin, wake) = match policy {
            SpinPolicy::Adaptive => (MAX_SPIN_NS, Some(std::sync::Mutex::default())),
            SpinPolicy::Fixed(ns) => (ns, None),
        };
        RealClock {
            spin: Duration::from_nanos(spin),
            budget: Some(std::sync::Mutex::new(SpinBudget::from_system(
                monotonic_now(),
            ))),
            wake,
            spun_ns: AtomicU64::new(0),
            last_return: AtomicU64::new(0),
        }
    }

    /// How long before a release this clock spins now, nanoseconds (before the budget).
    pub fn spin_ns(&self) -> u64 {
        let most = u64::try_from(self.spin.as_nanos()).unwrap_or(u64::MAX);
        self.wake
            .as_ref()
            .map_or(most, |w| w.lock().expect("wake lock").spin_ns().min(most))
    }

    /// How long before a release due at `at` this clock spins, asked at `now`: nothing over
    /// the budget; the policy's spin otherwise (adaptive: [`adaptive_spin`] of the measured
    /// wake-up error and the time since the previous release). A thread that sleeps elsewhere
    /// (in a channel) until `at` less this, then calls [`Clock::wait_until`], only spins.
    pub fn spin_before(&self, at: Nanos, now: Nanos) -> u64 {
        if !self.may_spin(now) {
            0
        } else if self.wake.is_some() {
            let gap =
                at.0.saturating_sub(self.last_return.load(Ordering::Relaxed));
            adaptive_spin(self.spin_ns(), gap)
        } else {
            self.spin_ns()
        }
    }

    /// Records a sleep that aimed at `target` and returned at `now` (adaptive: the wake-up
    /// error the spin follows; a sleep elsewhere, such as a channel's timed wait, counts too).
    pub fn record_wake(&self, target: Nanos, now: Nanos) {
        if let Some(w) = &self.wake {
            w.lock()
                .expect("wake lock")
                .record(now.minus(target).max(0) as u64);
        }
    }

    /// Nanoseconds this clock's thread spent spinning so far.
    pub fn spun_ns(&self) -> u64 {
        self.spun_ns.load(Ordering::Relaxed)
    }

    /// True if the calling thread may spin now (always, without a budget).
    pub fn may_spin(&self, now: Nanos) -> bool {
        self.budget
            .as_ref()
            .is_none_or(|b| b.lock().expect("budget lock").may_spin(now, thread_cpu_ns))
    }

    /// How many windows so far this clock's thread went over its budget (0 without one).
    pub fn windows_over_budget(&self) -> u64 {
        self.budget
            .as_ref()
            .map_or(0, |b| b.lock().expect("budget lock").over)
    }
}

/// The CPU time of the calling thread, nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Keeps a real-time thread under the kernel's real-time throttling: over each window the
/// thread's CPU time is compared with `share` of the window, and the next window may spin
/// only if it stayed under.
#[derive(Debug, Clone)]
pub struct SpinBudget {
    /// Share of a window the thread may use and still spin in the next (0..=1; 1 = no limit).
    pub share: f64,
    /// Length of a window, nanoseconds.
    pub window_ns: u64,
    start: Nanos,
    cpu_at_start: Option<u64>,
    allowed: bool,
    /// Windows in which the thread went over its share.
    pub over: u64,
}

impl SpinBudget {
    /// A budget of `share` per window of `window_ns`, starting at `now`.
    pub fn new(share: f64, window_ns: u64, now: Nanos) -> SpinBudget {
        SpinBudget {
            share,
            window_ns: window_ns.max(1),
            start: now,
            cpu_at_start: None,
            allowed: true,
            over: 0,
        }
    }

    /// The budget the kernel's limits leave one of our threads: 0.4 of
    /// `sched_rt_runtime_us / sched_rt_period_us` (no limit when the runtime is -1, i.e.
    /// throttling is off), over 10 ms windows.
    pub fn from_system(now: Nanos) -> SpinBudget {
        let read = |f: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
                .ok()
                .and_then(|t| t.trim().parse::<i64>().ok())
        };
        let share = rt_share(read("sched_rt_runtime_us"), read("sched_rt_period_us"));
        SpinBudget::new(share, 10_000_000, now)
    }

    /// May the thread spin at `now`? At the end of each window reads the thread's CPU time
    /// (`cpu_ns`, called at most once a window) and decides for the next one.
    pub fn may_spin(&mut self, now: Nanos, cpu_ns: impl FnOnce() -> u64) -> bool {
        if self.share >= 1.0 {
            return true;
        }
        let elapsed = now.minus(self.start);
        if elapsed >= self.window_ns as i64 {
            let cpu = cpu_ns();
            if let Some(before) = self.cpu_at_start {
                let used = cpu.saturating_sub(before) as f64 / elapsed as f64;
                self.allowed = used <= self.share;
                if !self.allowed {
                    self.over += 1;
                }
            }
            self.cpu_at_start = Some(cpu);
            self.start = now;
        }
        self.allowed
    }
}

/// The share of a window one emulator thread may use and still run real-time: 0.4 of the
/// real-time ratio (two such threads on one CPU stay under the throttle), 1 without throttling
/// (runtime -1) or without the files.
pub fn rt_share(runtime_us: Option<i64>, period_us: Option<i64>) -> f64 {
    match (runtime_us, period_us) {
        (Some(r), Some(p)) if r >= 0 && p > 0 => 0.4 * (r as f64 / p as f64).min(1.0),
        _ => 1.0,
    }
}

/// `CLOCK_MONOTONIC` now.
pub fn monotonic_now() -> Nanos {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Nanos(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Sleeps until `at` on `CLOCK_MONOTONIC` (absolute `clock_nanosleep`; retried after a signal).
pub fn sleep_until(at: Nanos) {
    let ts = rustix::time::Timespec {
        tv_sec: (at.0 / 1_000_000_000) as _,
        tv_nsec: (at.0 % 1_000_000_000) as _,
    };
    while let Err(rustix::io::Errno::INTR) =
        rustix::thread::clock_nanosleep_absolute(rustix::thread::ClockId::Monotonic, &ts)
    {}
}

impl Clock for RealClock {
    fn now(&self) -> Nanos {
        monotonic_now()
    }

    fn wait_until(&self, at: Nanos) -> Nanos {
        let mut now = monotonic_now();
        let spin = self.spin_before(at, now);
        if at.0 > now.0.saturating_add(spin) {
            // Sleep to `at - spin` on the absolute monotonic clock (a relative sleep would add
            // the time spent computing it).
            let target = Nanos(at.0 - spin);
            sleep_until(target);
            now = monotonic_now();
            self.record_wake(target, now);
        }
        let spin_from = now;
        while now < at {
            std::hint::spin_loop();
            now = monotonic_now();
        }
        self.spun_ns
            .fetch_add(now.minus(spin_from) as u64, Ordering::Relaxed);
        self.last_return.store(now.0, Ordering::Relaxed);
        now
    }
}
