//! A fleet measured pair by pair (`wirespeed mesh`, issue 19): which tests run when, how long
//! the whole mesh takes, and which hosts and pairs stand out.
//!
//! **Schedule.** Every ordered pair of N agents gets one test. A test loads both of its ends, so
//! two tests that share an agent would measure each other; the mesh is therefore scheduled as a
//! round-robin tournament by the circle method (Kirkman's construction, as sports leagues draw
//! their fixtures): fix agent 0, place the others on a circle and rotate it one step per round;
//! agent 0 meets the one opposite it and every other agent the one mirrored across it. With N
//! even that gives N-1 rounds of N/2 disjoint pairs covering each unordered pair exactly once;
//! with N odd a "bye" joins (N rounds, one agent idle in each). Each unordered round is played
//! twice, once in each direction, so the ordered pairs take 2(N-1) (or 2N) rounds and no agent
//! is ever in two tests of one round. [`slots`] merges `K` consecutive rounds when the operator
//! allows an agent in `K` tests at once (`--concurrency K`).
//!
//! **Duration.** Rounds run one after the other, each as long as its longest test, so the mesh
//! lasts `slots x (tcp + latency + set-up)` ([`predicted_seconds`]) when every test lasts its
//! plan; [`critical_path`] takes each test's own length (its plan and the tail of its data
//! that it measured still arriving after `-t`) along the [`Dispatch`]'s chains.
//!
//! **Outliers.** Three signatures, each judged with robust statistics (the median and the
//! median absolute deviation, MAD, scaled by 1.4826 to estimate a standard deviation under a
//! normal law; Rousseeuw & Croux 1993), so that the outliers themselves do not move the yardstick:
//!
//! * a **slow host**: the median rate of all a host's tests, both directions, is far below the
//!   median of the hosts' medians (a host problem: CPU, NIC settings, its own port);
//! * a **bad pair**: a test far below what the other tests of its two hosts reach (the lower of
//!   the two hosts' medians, without this pair): a bad link or port between them. A test of a
//!   slow host is judged against that host's other tests, so a slow host does not make all its
//!   pairs "bad";
//! * an **asymmetric pair**: one direction far below the other: the signature of a duplex
//!   mismatch, whose half-duplex end sees late collisions with the other's traffic and loses
//!   frames in one direction more than the other (seed 003, §8.4, Table 7).
//!
//! Latency has the same two-level test (a host whose median round trip is far above the
//! fleet's; a pair far above its hosts'), with an absolute floor so that microsecond jitter
//! on a fast network is never an outlier. A pair's round trip is the best probe of both its
//! tests (the same links either way), and a round trip whose probes may have waited behind
//! another test's queue ([`PairMeasure::rtt_behind_queue`]) is not judged.

use serde::{Deserialize, Serialize};

use crate::stats::median;

pub mod faults;
pub use faults::{Fault, HostEvidence, Judgement, judge};
pub mod sample;
pub use sample::{covering_pairs, sampled_pairs_scale, sampled_rounds};

/// An ordered pair: (source, destination), as agent indexes.
pub type Pair = (usize, usize);

/// The unordered rounds of the circle method: each a list of `(a, b)` with `a < b`, every
/// unordered pair of `0..n` exactly once, no agent twice in a round.
pub fn circle_rounds(n: usize) -> Vec<Vec<Pair>> {
    if n < 2 {
        return Vec::new();
    }
    // An odd fleet gets a bye: slot `n` is nobody.
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    let mut rounds = Vec::with_capacity(m - 1);
    // `circle[0]` is fixed; the others rotate.
    let mut circle: Vec<usize> = (0..m).collect();
    for _ in 0..m - 1 {
        let mut round = Vec::with_capacity(m / 2);
        for i in 0..m / 2 {
            let (a, b) = (circle[i], circle[m - 1 - i]);
            if a < n && b < n {
                round.push((a.min(b), a.max(b)));
            }
        }
        rounds.push(round);
        // Rotate every position but the first by one.
        let last = circle.pop().expect("m >= 2");
        circle.insert(1, last);
    }
    rounds
}

/// The ordered rounds: each unordered round of [`circle_rounds`] once as drawn and once
/// reversed (alternating which end sends first, so that no agent sends in every first
/// leg). Every ordered pair appears exactly once and no agent twice in a round.
pub fn tournament(n: usize) -> Vec<Vec<Pair>> {
    let mut out = Vec::new();
    for (r, round) in circle_rounds(n).into_iter().enumerate() {
        let forward: Vec<Pair> = round
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| if (r + i) % 2 == 0 { (a, b) } else { (b, a) })
            .collect();
        let back: Vec<Pair> = forward.iter().map(|&(a, b)| (b, a)).collect();
        out.push(forward);
        out.push(back);
    }
    out
}

/// The rounds run together when every agent may be in `concurrency` tests at once: `K`
/// consecutive rounds per slot (`concurrency` 0 is taken as 1).
pub fn slots(rounds: &[Vec<Pair>], concurrency: usize) -> Vec<Vec<Pair>> {
    rounds
        .chunks(concurrency.max(1))
        .map(|c| c.concat())
        .collect()
}

/// What one test costs in time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TestTiming {
    /// The TCP test's `-t`.
    pub tcp_seconds: f64,
    /// The latency probes: count times the gap between them.
    pub latency_seconds: f64,
    /// Connections, handshakes, the destination's consent and the results exchange: what a
    /// test costs beyond its measuring time.
    pub overhead_seconds: f64,
}

impl TestTiming {
    /// One test, start to end.
    pub fn per_test_seconds(&self) -> f64 {
        self.tcp_seconds + self.latency_seconds + self.overhead_seconds
    }
}

/// How long a mesh of `slots` slots lasts: each slot as long as one test.
pub fn predicted_seconds(slots: usize, timing: &TestTiming) -> f64 {
    slots as f64 * timing.per_test_seconds()
}

/// The rounds of a full mesh of `n` agents ([`tournament`]) without building it: 2(N-1) for N
/// even, 2N for N odd (a bye in every round), none below 2.
pub fn full_mesh_rounds(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        n if n.is_multiple_of(2) => 2 * (n - 1),
        n => 2 * n,
    }
}

/// The mesh controller's resident memory as a line: what the process takes with no test, and
/// what each test it plans and keeps adds (the schedule's pair, the dispatcher's state, the
/// finished test's record kept for the matrices, the analysis and the document). Both are
/// measured (`bash bench/mesh.sh`, docs/deploy.md), not derived.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ControllerMemory {
    /// Resident bytes of the controller before any test.
    pub base_bytes: f64,
    /// Resident bytes each planned and finished test adds.
    pub per_test_bytes: f64,
}

/// What measuring a fleet costs: the tests, the slots they run in, how long that takes and the
/// controller's memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeshScale {
    /// Agents in the fleet.
    pub agents: usize,
    /// Tests run (ordered pairs measured).
    pub tests: u64,
    /// Slots (rounds run one after the other).
    pub slots: u64,
    /// The mesh's duration when every test lasts its plan.
    pub seconds: f64,
    /// The controller's resident memory at the end.
    pub controller_bytes: f64,
}

/// A full mesh of `n` agents, every ordered pair, at `concurrency` tests per agent at once:
/// closed forms of [`tournament`], [`slots`] and [`predicted_seconds`] (exact for N even;
/// with N odd the byes can only shorten it), so a fleet of 10,000 is priced without building
/// its 10^8 pairs.
pub fn full_mesh_scale(
    n: usize,
    concurrency: usize,
    timing: &TestTiming,
    memory: &ControllerMemory,
) -> MeshScale {
    let tests = (n as u64) * (n.saturating_sub(1) as u64);
    let slots = full_mesh_rounds(n).div_ceil(concurrency.max(1)) as u64;
    MeshScale {
        agents: n,
        tests,
        slots,
        seconds: slots as f64 * timing.per_test_seconds(),
        controller_bytes: memory.base_bytes + memory.per_test_bytes * tests as f64,
    }
}

/// A sampled mesh: the first `partners` rounds of the circle method, each played both ways
/// (the first 2 x `partners` rounds of [`tournament`]). Each round is a matching, so every agent
/// sends to and receives from up to `partners` others (all of them for N even; the agent with a
/// round's bye misses that one for N odd), never two tests at once, in 2 x `partners` slots
/// (divided by `concurrency`): the cost grows with the partners asked, not with N². `partners`
/// at or beyond the rounds there are (N-1, or N for N odd) is the full mesh.
pub fn sampled_mesh_scale(
    n: usize,
    partners: usize,
    concurrency: usize,
    timing: &TestTiming,
    memory: &ControllerMemory,
) -> MeshScale {
    let rounds = full_mesh_rounds(n) / 2;
    if partners >= rounds {
        return full_mesh_scale(n, concurrency, timing, memory);
    }
    let per_round = (n - n % 2) as u64;
    let tests = per_round * partners as u64;
    let slots = (2 * partners).div_ceil(concurrency.max(1)) as u64;
    MeshScale {
        agents: n,
        tests,
        slots,
        seconds: slots as f64 * timing.per_test_seconds(),
        controller_bytes: memory.base_bytes + memory.per_test_bytes * tests as f64,
    }
}

/// How long the slots take when every test lasts `per_test` seconds and [`Dispatch`] starts
/// each one as soon as both its agents are free: the longest chain of tests through which one
/// agent's next test waits for its last (the critical path). With every agent in every round
/// (N even) it is `slots x per_test`, [`predicted_seconds`]; a bye can only shorten it.
pub fn critical_path_seconds(slots: &[Vec<Pair>], per_test: f64) -> f64 {
    critical_path(slots, |_, _| per_test)
}

/// [`critical_path_seconds`] with each test's own length, `cost(slot, pair)`: the planned
/// length plus what a test measured of its own beyond it (the tail of its data still
/// arriving after `-t`, which the test waits for so that the next tests of its agents do not
/// measure behind its queue).
pub fn critical_path(slots: &[Vec<Pair>], cost: impl Fn(usize, Pair) -> f64) -> f64 {
    let agents = slots
        .iter()
        .flatten()
        .map(|&(s, d)| s.max(d) + 1)
        .max()
        .unwrap_or(0);
    // Per agent: when its tests of earlier slots have all ended, and the slot it is in now
    // with the latest end among that slot's tests.
    let mut free = vec![0.0f64; agents];
    let mut current: Vec<(Option<usize>, f64)> = vec![(None, 0.0); agents];
    let mut end = 0.0f64;
    for (k, slot) in slots.iter().enumerate() {
        for &(s, d) in slot {
            for a in [s, d] {
                if current[a].0 != Some(k) {
                    free[a] = free[a].max(current[a].1);
                    current[a] = (Some(k), free[a]);
                }
            }
            let finish = free[s].max(free[d]) + cost(k, (s, d));
            for a in [s, d] {
                current[a].1 = current[a].1.max(finish);
            }
            end = end.max(finish);
        }
    }
    end
}

/// Which tests may start, as tests end: a test of slot `k` starts once both its agents have
/// ended every test of theirs in slots before `k`, without waiting for the slot's other
/// tests. An agent's tests then never run beside a test of another slot, so it is in at most
/// as many tests at once as one slot gives it (one, at `--concurrency 1`), and a slot's slow
/// test delays only the tests that share its agents, not the whole next slot.
#[derive(Debug, Clone)]
pub struct Dispatch {
    tests: Vec<(usize, Pair)>,
    state: Vec<TestState>,
    /// Per agent, its tests in slot order.
    of_agent: Vec<Vec<usize>>,
    /// Per agent, the position in `of_agent` of its first test not ended.
    front: Vec<usize>,
    /// Agents whose tests may have become ready.
    dirty: Vec<usize>,
    ended: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TestState {
    Waiting,
    Running,
    Ended,
}

impl Dispatch {
    /// The tests of `slots` (as [`slots`] orders them), numbered in that order.
    pub fn new(slots: &[Vec<Pair>]) -> Dispatch {
        let tests: Vec<(usize, Pair)> = slots
            .iter()
            .enumerate()
            .flat_map(|(k, slot)| slot.iter().map(move |&p| (k, p)))
            .collect();
        let agents = tests
            .iter()
            .map(|&(_, (s, d))| s.max(d) + 1)
            .max()
            .unwrap_or(0);
        let mut of_agent = vec![Vec::new(); agents];
        for (i, &(_, (s, d))) in tests.iter().enumerate() {
            of_agent[s].push(i);
            if d != s {
                of_agent[d].push(i);
            }
        }
        Dispatch {
            state: vec![TestState::Waiting; tests.len()],
            tests,
            of_agent,
            front: vec![0; agents],
            dirty: (0..agents).collect(),
            ended: 0,
        }
    }

    /// Test `i`: its slot and its pair.
    pub fn test(&self, i: usize) -> (usize, Pair) {
        self.tests[i]
    }

    /// How many tests there are.
    pub fn len(&self) -> usize {
        self.tests.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// Whether every test has ended.
    pub fn all_ended(&self) -> bool {
        self.ended == self.tests.len()
    }

    /// The slot of agent `a`'s first test not ended (`None`: all ended).
    fn front_slot(&mut self, a: usize) -> Option<usize> {
        let list = &self.of_agent[a];
        let mut f = self.front[a];
        while f < list.len() && self.state[list[f]] == TestState::Ended {
            f += 1;
        }
        self.front[a] = f;
        list.get(f).map(|&i| self.tests[i].0)
    }

    /// The tests that may start now, in schedule order; each is marked running and returned
    /// once.
    pub fn ready(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for a in dirty {
            let Some(k) = self.front_slot(a) else {
                continue;
            };
            let mut f = self.front[a];
            while let Some(&i) = self.of_agent[a].get(f) {
                let (slot, (s, d)) = self.tests[i];
                if slot != k {
                    break;
                }
                let other = if s == a { d } else { s };
                if self.state[i] == TestState::Waiting && self.front_slot(other) == Some(k) {
                    self.state[i] = TestState::Running;
                    out.push(i);
                }
                f += 1;
            }
        }
        out.sort_unstable();
        out
    }

    /// Test `i` ended (with figures or not): its agents may take their next tests.
    pub fn end(&mut self, i: usize) {
        if self.state[i] != TestState::Ended {
            self.state[i] = TestState::Ended;
            self.ended += 1;
            let (_, (s, d)) = self.tests[i];
            self.dirty.extend([s, d]);
        }
    }
}

/// The median absolute deviation from the median, scaled by 1.4826 (a standard deviation's
/// estimate under a normal law); NaN for an empty slice.
pub fn mad(values: &[f64]) -> f64 {
    let m = median(values);
    let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    1.4826 * median(&dev)
}

/// One finished test as the analysis sees it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairMeasure {
    /// Source agent index.
    pub source: usize,
    /// Destination agent index.
    pub destination: usize,
    /// TCP goodput at the destination, bit/s; `None` if the test failed.
    pub rate_bits_per_second: Option<f64>,
    /// Median round trip of the latency probes, seconds; `None` if none came back.
    pub rtt_seconds: Option<f64>,
    /// The probes may have waited behind another test's data: the last test of one of its
    /// agents ended with its data still arriving (its tail reached the cap). Such a round
    /// trip is not judged: its evidence is the schedule's queue, not the path's.
    #[serde(default)]
    pub rtt_behind_queue: bool,
    /// Retransmitted segments over the segments of payload the source sent (its TCP's count
    /// over the payload at the path's 1448-byte segments); `None` where not read. A port that
    /// loses frames makes every test through it retransmit, however fast it still runs.
    #[serde(default)]
    pub retransmit_share: Option<f64>,
}

impl PairMeasure {
    /// The round trip the verdicts judge: none when the probes may have waited behind another
    /// test's queue.
    fn judged_rtt(&self) -> Option<f64> {
        self.rtt_seconds.filter(|_| !self.rtt_behind_queue)
    }
}

/// How far is "far".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// A rate below this share of its yardstick (host: the fleet's median; pair: its hosts')
    /// is low.
    pub low_ratio: f64,
    /// ... and it must also lie this many robust standard deviations below it.
    pub robust_z: f64,
    /// The smallest robust standard deviation used, as a share of the median (identical
    /// emulated links have a MAD of zero).
    pub mad_floor_ratio: f64,
    /// A pair whose slower direction is below this share of its faster one is asymmetric.
    pub asymmetry_ratio: f64,
    /// A round trip above this multiple of its yardstick is high ...
    pub rtt_ratio: f64,
    /// ... if it is also this much above it, seconds.
    pub rtt_floor_seconds: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            low_ratio: 0.5,
            robust_z: 3.0,
            mad_floor_ratio: 0.05,
            asymmetry_ratio: 0.5,
            rtt_ratio: 2.0,
            rtt_floor_seconds: 0.001,
        }
    }
}

/// One host's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFigures {
    /// Agent index.
    pub host: usize,
    /// Median rate of its tests, both directions, bit/s (NaN if none finished).
    pub median_rate_bits_per_second: f64,
    /// Median rate of the tests it sent.
    pub median_sent_bits_per_second: f64,
    /// Median rate of the tests it received.
    pub median_received_bits_per_second: f64,
    /// Median of its tests' round trips, seconds.
    pub median_rtt_seconds: f64,
}

/// An outlier and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// A host slow in every pair.
    SlowHost {
        /// Agent index.
        host: usize,
        /// Its median rate, bit/s.
        median_bits_per_second: f64,
        /// The median of all hosts' medians.
        fleet_bits_per_second: f64,
        /// Robust standard deviations below the fleet.
        robust_z: f64,
        /// Its tests that finished.
        tests: usize,
    },
    /// A test far below the other tests of its two hosts.
    BadPair {
        /// Source.
        source: usize,
        /// Destination.
        destination: usize,
        /// Its rate, bit/s.
        rate_bits_per_second: f64,
        /// The lower of the two hosts' medians without this pair, bit/s.
        expected_bits_per_second: f64,
        /// Robust standard deviations below it.
        robust_z: f64,
    },
    /// One direction far below the other.
    AsymmetricPair {
        /// The faster direction's source.
        fast_source: usize,
        /// The faster direction's destination.
        fast_destination: usize,
        /// The faster direction's rate.
        fast_bits_per_second: f64,
        /// The other direction's rate.
        slow_bits_per_second: f64,
    },
    /// A host whose round trips are far above the fleet's.
    SlowLatencyHost {
        /// Agent index.
        host: usize,
        /// Its median round trip, seconds.
        median_rtt_seconds: f64,
        /// The median of the hosts' medians.
        fleet_rtt_seconds: f64,
    },
    /// A pair whose round trip (the best probe of its tests, both directions) is far above
    /// its hosts' others.
    HighLatencyPair {
        /// Source of its first test.
        source: usize,
        /// Destination of its first test.
        destination: usize,
        /// Its best round trip, seconds.
        rtt_seconds: f64,
        /// The higher of the two hosts' medians without this pair.
        expected_rtt_seconds: f64,
    },
}

impl Finding {
    /// The agents the finding names.
    pub fn hosts(&self) -> Vec<usize> {
        match *self {
            Finding::SlowHost { host, .. } | Finding::SlowLatencyHost { host, .. } => vec![host],
            Finding::BadPair {
                source,
                destination,
                ..
            }
            | Finding::HighLatencyPair {
                source,
                destination,
                ..
            } => vec![source, destination],
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                ..
            } => vec![fast_source, fast_destination],
        }
    }

    /// Whether it names a pair (not a host).
    pub fn is_pair(&self) -> bool {
        self.hosts().len() == 2
    }
}

/// The hosts' figures and the outliers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// One per agent.
    pub hosts: Vec<HostFigures>,
    /// The outliers, hosts first.
    pub findings: Vec<Finding>,
}

fn finite(values: impl Iterator<Item = Option<f64>>) -> Vec<f64> {
    values.flatten().filter(|v| v.is_finite()).collect()
}

/// Judges a mesh of `n` agents from its finished tests.
pub fn analyse(n: usize, tests: &[PairMeasure], t: &Thresholds) -> Analysis {
    let involving = |h: usize, skip: Option<(usize, usize)>| {
        tests.iter().filter(move |m| {
            (m.source == h || m.destination == h)
                && skip.is_none_or(|(a, b)| {
                    !((m.source == a && m.destination == b)
                        || (m.source == b && m.destination == a))
                })
        })
    };
    let hosts: Vec<HostFigures> = (0..n)
        .map(|h| HostFigures {
            host: h,
            median_rate_bits_per_second: median(&finite(
                involving(h, None).map(|m| m.rate_bits_per_second),
            )),
            median_sent_bits_per_second: median(&finite(
                tests
                    .iter()
                    .filter(|m| m.source == h)
                    .map(|m| m.rate_bits_per_second),
            )),
            median_received_bits_per_second: median(&finite(
                tests
                    .iter()
                    .filter(|m| m.destination == h)
                    .map(|m| m.rate_bits_per_second),
            )),
            median_rtt_seconds: median(&finite(involving(h, None).map(PairMeasure::judged_rtt))),
        })
        .collect();
    let mut findings = Vec::new();
    let robust_sd = |values: &[f64], centre: f64| mad(values).max(t.mad_floor_ratio * centre.abs());

    // Slow hosts: each host's median against the median of the hosts' medians.
    let host_rates: Vec<f64> = hosts
        .iter()
        .map(|h| h.median_rate_bits_per_second)
        .filter(|v| v.is_finite())
        .collect();
    if host_rates.len() >= 3 {
        let fleet = median(&host_rates);
        let sd = robust_sd(&host_rates, fleet);
        for h in &hosts {
            let v = h.median_rate_bits_per_second;
            if !v.is_finite() || sd <= 0.0 {
                continue;
            }
            let z = (v - fleet) / sd;
            if v < t.low_ratio * fleet && z < -t.robust_z {
                findings.push(Finding::SlowHost {
                    host: h.host,
                    median_bits_per_second: v,
                    fleet_bits_per_second: fleet,
                    robust_z: z,
                    tests: finite(involving(h.host, None).map(|m| m.rate_bits_per_second)).len(),
                });
            }
        }
    }
    let host_rtts: Vec<f64> = hosts
        .iter()
        .map(|h| h.median_rtt_seconds)
        .filter(|v| v.is_finite())
        .collect();
    if host_rtts.len() >= 3 {
        let fleet = median(&host_rtts);
        for h in &hosts {
            let v = h.median_rtt_seconds;
            if v.is_finite() && v > t.rtt_ratio * fleet && v > fleet + t.rtt_floor_seconds {
                findings.push(Finding::SlowLatencyHost {
                    host: h.host,
                    median_rtt_seconds: v,
                    fleet_rtt_seconds: fleet,
                });
            }
        }
    }

    // Bad pairs: each test against the other tests of its two hosts.
    for m in tests {
        let skip = Some((m.source, m.destination));
        let Some(rate) = m.rate_bits_per_second.filter(|v| v.is_finite()) else {
            continue;
        };
        let mut expected = f64::INFINITY;
        let mut sd = 0.0;
        for h in [m.source, m.destination] {
            let others = finite(involving(h, skip).map(|o| o.rate_bits_per_second));
            if others.len() < 2 {
                continue;
            }
            let med = median(&others);
            if med < expected {
                expected = med;
                sd = robust_sd(&others, med);
            }
        }
        if expected.is_finite() && sd > 0.0 {
            let z = (rate - expected) / sd;
            if rate < t.low_ratio * expected && z < -t.robust_z {
                findings.push(Finding::BadPair {
                    source: m.source,
                    destination: m.destination,
                    rate_bits_per_second: rate,
                    expected_bits_per_second: expected,
                    robust_z: z,
                });
            }
        }
        // A round trip crosses the same links whichever end sends the probes: the pair's is
        // the best of both directions' tests, judged once per pair. A passing queue or a busy
        // core delays the probes of one test, rarely those of both; a slow path delays all.
        let same = |o: &PairMeasure| {
            (o.source, o.destination) == (m.source, m.destination)
                || (o.source, o.destination) == (m.destination, m.source)
        };
        let first = tests
            .iter()
            .position(same)
            .is_some_and(|i| std::ptr::eq(&tests[i], m));
        let best = finite(
            tests
                .iter()
                .filter(|o| same(o))
                .map(PairMeasure::judged_rtt),
        )
        .into_iter()
        .reduce(f64::min);
        if let Some(rtt) = best.filter(|_| first) {
            let mut expected_rtt = f64::NEG_INFINITY;
            for h in [m.source, m.destination] {
                let others = finite(involving(h, skip).map(PairMeasure::judged_rtt));
                if others.len() >= 2 {
                    expected_rtt = expected_rtt.max(median(&others));
                }
            }
            if expected_rtt.is_finite()
                && rtt > t.rtt_ratio * expected_rtt
                && rtt > expected_rtt + t.rtt_floor_seconds
            {
                findings.push(Finding::HighLatencyPair {
                    source: m.source,
                    destination: m.destination,
                    rtt_seconds: rtt,
                    expected_rtt_seconds: expected_rtt,
                });
            }
        }
    }

    // Asymmetric pairs: each unordered pair's two directions.
    for m in tests.iter().filter(|m| m.source < m.destination) {
        let back = tests
            .iter()
            .find(|o| o.source == m.destination && o.destination == m.source);
        let (Some(ab), Some(ba)) = (
            m.rate_bits_per_second
                .filter(|v| v.is_finite() && *v >= 0.0),
            back.and_then(|b| b.rate_bits_per_second)
                .filter(|v| v.is_finite() && *v >= 0.0),
        ) else {
            continue;
        };
        let (fast, slow, fs, fd) = if ab >= ba {
            (ab, ba, m.source, m.destination)
        } else {
            (ba, ab, m.destination, m.source)
        };
        if fast > 0.0 && slow < t.asymmetry_ratio * fast {
            findings.push(Finding::AsymmetricPair {
                fast_source: fs,
                fast_destination: fd,
                fast_bits_per_second: fast,
                slow_bits_per_second: slow,
            });
        }
    }
    Analysis { hosts, findings }
}

/// Per-pair asymmetry: `(slower - faster) / faster` of the two directions, from -1 (one way
/// carried nothing) to 0 (equal); `None` unless both directions finished.
pub fn asymmetry(ab: Option<f64>, ba: Option<f64>) -> Option<f64> {
    let (ab, ba) = (ab?, ba?);
    let fast = ab.max(ba);
    (fast > 0.0 && ab.is_finite() && ba.is_finite()).then(|| (ab.min(ba) - fast) / fast)
}
