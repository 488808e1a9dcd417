//! A shared Ethernet: hosts with the seed's packet-generation process, each behind a CSMA/CD
//! MAC, on one cable. One [`run`] is one of the seed's tests: warm up, measure the middle.
//!
//! The host is seed 000 §3.2-3.3 and Figure 3-2. Each generator has a fixed pool of packet
//! buffers (15). A user process fills free buffers and queues them for the transmitter; the
//! transmitter "sends one packet and then must be serviced by interrupt code before it can send
//! again" (§3.2), and the interrupt takes about 100 us on a Titan. So after each packet, success
//! or drop, the transmitter stands idle for the interrupt latency before it starts the next.
//! That idle time is what makes two hosts synchronise (each sends while the other is in its
//! interrupt routine, so neither collides) and the packet rate peak at two hosts (§3.5).
//! Under an offered load instead of saturation, a packet that finds no free buffer is
//! discarded (Figure 2-1).
//!
//! The medium is modelled signal by signal: when a station starts or stops transmitting, every
//! other station sees the edge after the propagation delay between the two, and its MAC reacts
//! (defers, detects a collision, or starts counting the gap).

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::Serialize;

use crate::SimError;
use crate::bus::{Cable, Propagation};
use crate::engine::{EventQueue, Model, Simulation};
use crate::mac::{Mac, MacDuplex, MacIo, MacParams, SignalEnd, TxOutcome, TxReport};
use crate::run_stats::{Batches, HostCounters, RunStats};
use crate::time::{SimSpan, SimTime};
use crate::traffic::{
    Arrivals, CARRIER_OVERHEAD_BYTES, CHARGED_OVERHEAD_BYTES, LengthMix, LengthSource, below,
    exponential,
};

/// The host model of seed 000 §3.3.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostModel {
    /// Packet buffers per host (15 on the Titans).
    pub buffers: u32,
    /// Shortest time from the end of a transmission until the interrupt routine has restarted
    /// the transmitter, nanoseconds.
    pub interrupt_min_ns: u64,
    /// Longest such time; each interrupt takes a uniformly distributed time between the two.
    pub interrupt_max_ns: u64,
    /// The host CPU's cycle time, picoseconds (the Titan's: 45 ns), or 0. When set, the
    /// routine is a path of instructions that each take one or two cycles with equal
    /// probability (the seed's "one instruction every 1.5 cycles"), as many as fill the time
    /// drawn above at 1.5 cycles each: the restart then varies by the sum of their stalls,
    /// about `0.5 x sqrt(instructions)` cycles (0.8 us for the Titan's 87 us).
    pub cycle_ps: u64,
    /// After 16 collisions, put the packet back at the head of the queue and try again (its
    /// delay still counting from its first attempt) rather than discard it.
    pub retry_excessive_collisions: bool,
    /// When a packet is retried after 16 collisions, its delay runs from the retry (the host
    /// stamps the instant it starts the transmitter) instead of from its very first attempt.
    pub delay_from_retry: bool,
}

impl HostModel {
    /// The Titan of seed 000 §3.2-3.5. An interrupt takes "about 100 microseconds from
    /// assertion of interrupt to resumption of user code; this is about 1500 machine
    /// instructions" on a CPU of 45-ns cycles "executing about one instruction every 1.5
    /// cycles"; the interrupt routine restarts the transmitter before it returns, so the
    /// restart comes somewhat sooner. The seed's own two-host peak of about 13,500 packets/s
    /// of 64 bytes (each host then alternates with the other without contention) puts the mean
    /// restart at 2 / 13,500 s - 60.8 us = 87 us: 1,289 instructions at 1.5 cycles of 45 ns.
    ///
    /// How much the restart varies the seed does not say, and the 24-host figures depend on
    /// it (issue 21, bench/RESULTS.md). What it does say fixes it within narrow bounds: with
    /// the receiver disabled (§3.4) the transmit interrupt is the only one, and with the
    /// network the bottleneck the user process is blocked on an empty TQ when it comes (§3.3),
    /// so the routine runs the same instructions every time and varies only by their stalls.
    /// Each instruction takes one or two cycles with equal probability (the least variable
    /// way to average 1.5 whole cycles), so the restart is 87 us +- 0.8 us (one standard
    /// deviation). That spread still breaks three hosts' rotation now and then (they collide,
    /// and the packet rate peaks at two, figure 3-5), and it gives 84% at 24 hosts of 64
    /// bytes where the seed measured 85% (§3.6); the 75-100 us uniform spread this model had
    /// before gives 77.5% with the same MAC (80.1% with its jam at once). The seed's delays (31 ms per 1536-byte packet with 24 hosts: the
    /// whole time each host spends per packet sent) count the attempts of a packet until it
    /// got through, so a packet that met 16 collisions is retried, not lost.
    pub const TITAN: HostModel = HostModel {
        buffers: 15,
        interrupt_min_ns: 87_000,
        interrupt_max_ns: 87_000,
        cycle_ps: TITAN_CYCLE_PS,
        retry_excessive_collisions: true,
        delay_from_retry: false,
    };

    /// A station as the lab's emulator has it: `buffers` frames queued at its MAC, which
    /// starts the next one at once (no interrupt routine in between), gives a frame up after
    /// 16 collisions as IEEE 802.3 says, and counts a frame's delay from its first attempt.
    pub const fn ready_at_once(buffers: u32) -> HostModel {
        HostModel {
            buffers,
            interrupt_min_ns: 0,
            interrupt_max_ns: 0,
            cycle_ps: 0,
            retry_excessive_collisions: false,
            delay_from_retry: false,
        }
    }

    /// Mean interrupt latency, seconds.
    pub fn mean_interrupt_seconds(&self) -> f64 {
        (self.interrupt_min_ns + self.interrupt_max_ns) as f64 * 0.5e-9
    }

    /// Instructions of a routine that takes `ns` at 1.5 cycles each (0 without a cycle time).
    pub fn instructions_in(&self, ns: u64) -> u64 {
        if self.cycle_ps == 0 {
            return 0;
        }
        ((ns as f64 * 1000.0) / (1.5 * self.cycle_ps as f64)).round() as u64
    }

    /// One restart time, nanoseconds: uniform in `[interrupt_min_ns, interrupt_max_ns]`, then
    /// (with a cycle time) as many instructions as fill it, each one or two cycles.
    pub fn restart_ns(&self, rng: &mut ChaCha8Rng) -> u64 {
        let (lo, hi) = (self.interrupt_min_ns, self.interrupt_max_ns);
        let ns = lo + below(rng, hi - lo + 1);
        let n = self.instructions_in(ns);
        if n == 0 {
            return ns;
        }
        // Binomial(n, 1/2) stalls, one random bit per instruction.
        let mut stalls = 0u64;
        let mut left = n;
        while left > 0 {
            let take = left.min(64);
            let word = rng.next_u64();
            let word = if take == 64 {
                word
            } else {
                word & ((1u64 << take) - 1)
            };
            stalls += u64::from(word.count_ones());
            left -= take;
        }
        ((n + stalls) * self.cycle_ps).div_ceil(1000)
    }
}

/// The Titan's cycle time, picoseconds (seed 000 §3.2: "The cycle time of a Titan is 45 nSec").
pub const TITAN_CYCLE_PS: u64 = 45_000;

/// The longest interrupt routine, in instructions, whose stalls are drawn one by one (a
/// thousand times the Titan's): bounds the work of each interrupt.
pub const MAX_ROUTINE_INSTRUCTIONS: u64 = 1_500_000;

/// Everything one simulated test needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// MAC timing (seed 003 Table 2 at 10 or 100 Mbit/s).
    pub mac: MacParams,
    /// The cable and where the hosts sit on it.
    pub cable: Cable,
    /// Number of transmitting hosts.
    pub hosts: usize,
    /// The generator hosts.
    pub host: HostModel,
    /// Packet lengths.
    pub lengths: LengthMix,
    /// Accept lengths over the standard's 1536 bytes (the seed went to 4000).
    pub allow_oversize: bool,
    /// Packet arrivals.
    pub arrivals: Arrivals,
    /// Simulated time before measuring starts, nanoseconds.
    pub warmup_ns: u64,
    /// Simulated time measured, nanoseconds (the seed measured the middle 10 s).
    pub measure_ns: u64,
    /// Seed of the random numbers: the same seed gives the same run, bit for bit.
    pub seed: u64,
}

impl Scenario {
    /// The seed's long-net test (§3.5): `hosts` Titans sending `bytes`-byte packets flat out on
    /// 3000 ft of coax in four clusters, 10 Mbit/s, measured for `measure` after a warm-up.
    pub fn seed_long_net(hosts: usize, bytes: u64) -> Scenario {
        Scenario {
            mac: MacParams::table_2(10),
            cable: Cable::seed_long_net(),
            hosts,
            host: HostModel::TITAN,
            lengths: LengthMix::Fixed { bytes },
            allow_oversize: true,
            arrivals: Arrivals::Saturated,
            warmup_ns: 200_000_000,
            measure_ns: 10_000_000_000,
            seed: 0,
        }
    }

    /// Checks that the scenario can run.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.hosts == 0 || self.hosts > usize::from(u16::MAX) {
            return Err(SimError::Hosts(self.hosts));
        }
        if self.host.buffers == 0 {
            return Err(SimError::Buffers);
        }
        if self.host.interrupt_min_ns > self.host.interrupt_max_ns {
            return Err(SimError::Interrupt);
        }
        if self.host.instructions_in(self.host.interrupt_max_ns) > MAX_ROUTINE_INSTRUCTIONS {
            return Err(SimError::Instructions);
        }
        if self.measure_ns == 0
            || self.measure_ns > crate::MAX_SIMULATED_NS
            || self.warmup_ns > crate::MAX_SIMULATED_NS
        {
            return Err(SimError::Duration);
        }
        let c = &self.cable;
        let cable_ok = c.length_m.is_finite()
            && c.length_m >= 0.0
            && c.velocity_factor > 0.0
            && c.velocity_factor <= 1.0
            && c.attach_delay_ns.is_finite()
            && c.attach_delay_ns >= 0.0
            && c.tap_delay_ns.is_finite()
            && c.tap_delay_ns >= 0.0;
        if !cable_ok {
            return Err(SimError::Cable);
        }
        self.lengths.validate(self.allow_oversize)?;
        self.arrivals.validate()
    }

    /// Bit times the seed charges a packet of `bytes`: `(bytes + 24) * 8`.
    pub fn charged_bits(bytes: u64) -> u64 {
        (bytes + CHARGED_OVERHEAD_BYTES) * 8
    }

    /// Bit times a packet of `bytes` holds the medium: preamble, packet, CRC.
    pub fn carrier_bits(bytes: u64) -> u64 {
        (bytes + CARRIER_OVERHEAD_BYTES) * 8
    }

    /// The delay each packet would see with no collisions: with the channel the bottleneck,
    /// a host waits while each of the others sends one packet (seed 000 §3.5: "the ideal time
    /// to send one packet and wait for each other host to send one packet") less the interrupt
    /// latency it spends before queueing its next one; with the host the bottleneck, the
    /// packet's own time on the medium. Seconds.
    pub fn ideal_delay_seconds(&self) -> f64 {
        let bit = self.mac.bit_time.seconds();
        let mean = self.lengths.mean_bytes();
        let own = (mean + CARRIER_OVERHEAD_BYTES as f64) * 8.0 * bit;
        match self.arrivals {
            Arrivals::Saturated => {
                let round = self.hosts as f64 * (mean + CHARGED_OVERHEAD_BYTES as f64) * 8.0 * bit;
                own.max(round - self.host.mean_interrupt_seconds())
            }
            Arrivals::Poisson { .. } | Arrivals::Bursty { .. } => own,
        }
    }
}

/// What happens in the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A signal edge of `source` reaches the stations of its propagation group `group`.
    Carrier { source: u16, group: u16, on: bool },
    /// The MAC timer of `station` fires.
    MacTimer { station: u16, generation: u32 },
    /// The transmit interrupt of `station` has been serviced.
    Interrupt { station: u16 },
    /// A packet (or burst) arrives at `station`'s generator.
    Arrival { station: u16 },
    /// The generators start (each at its own time, so that they do not start in lock step).
    Start { station: u16 },
}

#[derive(Debug, Clone, Copy)]
struct Packet {
    bytes: u64,
    /// When the transmitter first started on it.
    first_attempt: Option<SimTime>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transmitter {
    Idle,
    Busy,
    AwaitingInterrupt,
}

struct Host {
    free_buffers: u32,
    output_queue: VecDeque<Packet>,
    transmitter: Transmitter,
    in_flight: Option<Packet>,
    /// Whether the pending interrupt returns a buffer to the free list.
    frees_buffer: bool,
    lengths: LengthSource,
}

/// The shared Ethernet as a simulation model.
pub(crate) struct Network {
    scenario: Scenario,
    propagation: Propagation,
    macs: Vec<Mac>,
    hosts: Vec<Host>,
    counters: Vec<HostCounters>,
    /// `batches[b][host]`: the window cut into equal batches (empty unless asked for, by
    /// [`run_batched`]); counted beside `counters`, which stay as they were.
    batches: Vec<Vec<HostCounters>>,
    rng: ChaCha8Rng,
    window: (SimTime, SimTime),
    /// Mean time between arrivals (or bursts) at each host, seconds.
    arrival_mean_s: f64,
}

/// The MAC's view of the network, for one station.
struct StationIo<'a> {
    station: usize,
    queue: &'a mut EventQueue<Event>,
    propagation: &'a Propagation,
    rng: &'a mut ChaCha8Rng,
}

impl MacIo for StationIo<'_> {
    fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn set_timer(&mut self, at: SimTime, generation: u32) {
        self.queue.schedule(
            at,
            Event::MacTimer {
                station: self.station as u16,
                generation,
            },
        );
    }

    fn start_signal(&mut self) {
        self.broadcast(true);
    }

    fn end_signal(&mut self, _how: SignalEnd) {
        self.broadcast(false);
    }

    fn random_below(&mut self, n: u64) -> u64 {
        below(self.rng, n)
    }
}

impl StationIo<'_> {
    fn broadcast(&mut self, on: bool) {
        let now = self.queue.now();
        for (delay, group) in self.propagation.groups_of(self.station) {
            self.queue.schedule(
                now + delay,
                Event::Carrier {
                    source: self.station as u16,
                    group: group as u16,
                    on,
                },
            );
        }
    }
}

impl Network {
    pub(crate) fn new(scenario: &Scenario) -> Network {
        let n = scenario.hosts;
        let propagation = Propagation::new(&scenario.cable, n);
        let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
        rng.set_stream(0);
        let hosts = (0..n)
            .map(|_| Host {
                free_buffers: scenario.host.buffers,
                output_queue: VecDeque::with_capacity(scenario.host.buffers as usize),
                transmitter: Transmitter::Idle,
                in_flight: None,
                frees_buffer: false,
                lengths: LengthSource::new(&scenario.lengths),
            })
            .collect();
        let start = SimTime::ZERO + SimSpan::from_ns(scenario.warmup_ns);
        let end = start + SimSpan::from_ns(scenario.measure_ns);
        let mean_charged_s = (scenario.lengths.mean_bytes() + CHARGED_OVERHEAD_BYTES as f64)
            * 8.0
            * scenario.mac.bit_time.seconds();
        let arrival_mean_s = match scenario.arrivals {
            Arrivals::Saturated => f64::INFINITY,
            // Per host, G/n of the channel: one packet every mean_charged * n / G.
            Arrivals::Poisson { load } => mean_charged_s * n as f64 / load,
            Arrivals::Bursty { load, mean_burst } => mean_charged_s * n as f64 * mean_burst / load,
        };
        Network {
            scenario: scenario.clone(),
            propagation,
            macs: vec![Mac::new(scenario.mac, MacDuplex::Half); n],
            hosts,
            counters: vec![HostCounters::default(); n],
            batches: Vec::new(),
            rng,
            window: (start, end),
            arrival_mean_s,
        }
    }

    fn in_window(&self, t: SimTime) -> bool {
        t >= self.window.0 && t < self.window.1
    }

    /// The batch of the window that `t` (in the window) falls in.
    fn batch_of(&self, t: SimTime) -> Option<usize> {
        let b = self.batches.len();
        if b == 0 || !self.in_window(t) {
            return None;
        }
        let width = u128::from(self.window.1.since(self.window.0).ps());
        let at = u128::from(t.since(self.window.0).ps());
        Some(((at * b as u128 / width.max(1)) as usize).min(b - 1))
    }

    /// Hands the next queued packet to the MAC if the transmitter is free.
    fn start_transmitter(&mut self, station: usize, queue: &mut EventQueue<Event>) {
        let host = &mut self.hosts[station];
        if host.transmitter != Transmitter::Idle {
            return;
        }
        let Some(mut packet) = host.output_queue.pop_front() else {
            return;
        };
        packet.first_attempt.get_or_insert(queue.now());
        host.transmitter = Transmitter::Busy;
        host.in_flight = Some(packet);
        let mut io = StationIo {
            station,
            queue,
            propagation: &self.propagation,
            rng: &mut self.rng,
        };
        self.macs[station]
            .send(&mut io, Scenario::carrier_bits(packet.bytes))
            .expect("the transmitter was idle");
    }

    /// The user process fills every free buffer (saturating generator).
    fn refill(&mut self, station: usize) {
        let host = &mut self.hosts[station];
        while host.free_buffers > 0 {
            host.free_buffers -= 1;
            let bytes = host.lengths.next(&mut self.rng);
            host.output_queue.push_back(Packet {
                bytes,
                first_attempt: None,
            });
        }
    }

    fn arrival(&mut self, station: usize, queue: &mut EventQueue<Event>) {
        let now = queue.now();
        let burst = match self.scenario.arrivals {
            Arrivals::Bursty { mean_burst, .. } => {
                // Geometric on {1, 2, ...} with mean `mean_burst`.
                let p = 1.0 / mean_burst;
                let u = crate::traffic::unit(&mut self.rng);
                1 + ((1.0 - u).ln() / (1.0 - p).ln()).floor().max(0.0) as u64
            }
            _ => 1,
        };
        for _ in 0..burst {
            let host = &mut self.hosts[station];
            let bytes = host.lengths.next(&mut self.rng);
            if host.free_buffers > 0 {
                host.free_buffers -= 1;
                host.output_queue.push_back(Packet {
                    bytes,
                    first_attempt: None,
                });
            } else if self.in_window(now) {
                self.counters[station].discarded += 1;
            }
        }
        if self.in_window(now) {
            self.counters[station].generated += burst;
        }
        let gap = exponential(&mut self.rng, self.arrival_mean_s);
        queue.schedule(
            now + SimSpan::from_seconds(gap),
            Event::Arrival {
                station: station as u16,
            },
        );
        self.start_transmitter(station, queue);
    }

    fn completed(&mut self, station: usize, report: TxReport, queue: &mut EventQueue<Event>) {
        let host = &mut self.hosts[station];
        let packet = host.in_flight.take().expect("a report without a packet");
        host.transmitter = Transmitter::AwaitingInterrupt;
        let retry =
            report.outcome == TxOutcome::Dropped && self.scenario.host.retry_excessive_collisions;
        if retry {
            let mut again = packet;
            if self.scenario.host.delay_from_retry {
                again.first_attempt = None;
            }
            host.output_queue.push_front(again);
        }
        if self.in_window(report.finished) {
            let count = |c: &mut HostCounters| {
                c.collisions += u64::from(report.collisions);
                c.late_collisions += u64::from(report.late_collisions);
                match report.outcome {
                    TxOutcome::Sent => {
                        c.packets += 1;
                        c.charged_bits += Scenario::charged_bits(packet.bytes);
                        let first = packet.first_attempt.unwrap_or(report.first_attempt);
                        c.delay.add(report.finished.since(first).seconds());
                    }
                    TxOutcome::Dropped | TxOutcome::LateCollision => c.dropped += 1,
                }
            };
            count(&mut self.counters[station]);
            if let Some(b) = self.batch_of(report.finished) {
                count(&mut self.batches[b][station]);
            }
        }
        let latency = self.scenario.host.restart_ns(&mut self.rng);
        queue.schedule(
            report.finished + SimSpan::from_ns(latency),
            Event::Interrupt {
                station: station as u16,
            },
        );
        // A retried packet keeps its buffer: that interrupt frees none.
        self.hosts[station].frees_buffer = !retry;
    }
}

impl Model for Network {
    type Event = Event;

    fn handle(&mut self, event: Event, queue: &mut EventQueue<Event>) {
        match event {
            Event::Carrier { source, group, on } => {
                let members = self
                    .propagation
                    .group(usize::from(source), usize::from(group));
                for &station in members {
                    let s = usize::from(station);
                    let mut io = StationIo {
                        station: s,
                        queue,
                        propagation: &self.propagation,
                        rng: &mut self.rng,
                    };
                    if on {
                        self.macs[s].carrier_on(&mut io);
                    } else {
                        self.macs[s].carrier_off(&mut io);
                    }
                }
            }
            Event::MacTimer {
                station,
                generation,
            } => {
                let s = usize::from(station);
                let mut io = StationIo {
                    station: s,
                    queue,
                    propagation: &self.propagation,
                    rng: &mut self.rng,
                };
                if let Some(report) = self.macs[s].timer(&mut io, generation) {
                    self.completed(s, report, queue);
                }
            }
            Event::Interrupt { station } => {
                let s = usize::from(station);
                let host = &mut self.hosts[s];
                if host.frees_buffer {
                    host.free_buffers += 1;
                }
                host.transmitter = Transmitter::Idle;
                if self.scenario.arrivals == Arrivals::Saturated {
                    self.refill(s);
                }
                self.start_transmitter(s, queue);
            }
            Event::Arrival { station } => self.arrival(usize::from(station), queue),
            Event::Start { station } => {
                let s = usize::from(station);
                if self.scenario.arrivals == Arrivals::Saturated {
                    self.refill(s);
                    self.start_transmitter(s, queue);
                } else {
                    self.arrival(s, queue);
                }
            }
        }
    }
}

/// Runs one test and returns its statistics (deterministic in `scenario.seed`).
pub fn run(scenario: &Scenario) -> Result<RunStats, SimError> {
    Ok(run_stoppable(scenario, &|| false)?.expect("a run never asked to stop finishes"))
}

/// Simulated time between two looks at `stop` in [`run_stoppable`]: a few milliseconds of
/// wall time at most, so that Ctrl-C ends even an hour-long simulation at once.
const STOP_CHECK_NS: u64 = 10_000_000;

/// [`run`], asking `stop` every 10 ms of simulated time; `None` if it said stop. The figures
/// of a run that finishes are the same as [`run`]'s: the events are handled in the same order,
/// only in slices.
pub fn run_stoppable(
    scenario: &Scenario,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Option<RunStats>, SimError> {
    Ok(run_inner(scenario, stop, 0)?.map(|(stats, _)| stats))
}

/// The most batches [`run_batched`] cuts a window into.
pub const MAX_BATCHES: usize = 100;

/// [`run`], with the window also counted in `batches` equal parts (2 to [`MAX_BATCHES`]),
/// from which each figure's sampling error follows ([`Batches`]). The run's figures are the
/// same as [`run`]'s: the batches are counted beside the window's counters and draw nothing
/// from the random stream.
pub fn run_batched(scenario: &Scenario, batches: usize) -> Result<(RunStats, Batches), SimError> {
    if !(2..=MAX_BATCHES).contains(&batches) {
        return Err(SimError::Batches(batches));
    }
    let (stats, counters) =
        run_inner(scenario, &|| false, batches)?.expect("a run never asked to stop finishes");
    let batches = Batches {
        batch_seconds: scenario.measure_ns as f64 * 1e-9 / batches as f64,
        link_bits_per_second: scenario.mac.bits_per_second as f64,
        counters,
    };
    Ok((stats, batches))
}

type Counted = (RunStats, Vec<Vec<HostCounters>>);

fn run_inner(
    scenario: &Scenario,
    stop: &(dyn Fn() -> bool + Sync),
    batches: usize,
) -> Result<Option<Counted>, SimError> {
    scenario.validate()?;
    let mut network = Network::new(scenario);
    network.batches = vec![vec![HostCounters::default(); scenario.hosts]; batches];
    let mut sim = Simulation::new(NetworkShell(&mut network));
    // Generators start at random moments within the first millisecond, as machines that
    // heard the same broadcast control packet would.
    for station in 0..scenario.hosts {
        let offset = below(&mut sim.model.0.rng, 1_000_000);
        sim.schedule(
            SimTime::ZERO + SimSpan::from_ns(offset),
            Event::Start {
                station: station as u16,
            },
        );
    }
    let end = network_end(scenario);
    let mut reached = SimTime::ZERO;
    while reached < end {
        reached = (reached + SimSpan::from_ns(STOP_CHECK_NS)).min(end);
        sim.step_until(reached);
        if reached < end && stop() {
            return Ok(None);
        }
    }
    let events = sim.events_handled();
    drop(sim);
    let stats = RunStats::from_counters(
        scenario,
        &network.counters,
        events,
        network.propagation.max_delay(),
    );
    Ok(Some((stats, network.batches)))
}

fn network_end(scenario: &Scenario) -> SimTime {
    SimTime::ZERO + SimSpan::from_ns(scenario.warmup_ns) + SimSpan::from_ns(scenario.measure_ns)
}

/// Lets the engine borrow the network so that its counters can be read after the run.
struct NetworkShell<'a>(&'a mut Network);

impl Model for NetworkShell<'_> {
    type Event = Event;
    fn handle(&mut self, event: Event, queue: &mut EventQueue<Event>) {
        self.0.handle(event, queue);
    }
}
