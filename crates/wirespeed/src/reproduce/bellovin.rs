//! `reproduce bellovin` (seed 001, Bellovin, "A Best-Case Network Performance Model"): a path
//! built in the lab from Table 1's components (labs/seed-001-path.toml: Ethernet, ciscomci,
//! a 56 kbit/s DS0 with 7.6 ms of line, ciscoser, Ethernet), probed hop by hop; each hop's own
//! cost beside the configured components; then the seed's §4 finding, a router board
//! configured with the wrong per-byte cost, flagged by `model compare`.
//!
//! The lab adds a cost of its own to every link crossing (the emulator's thread wakes up to read
//! each frame, the next namespace's kernel takes it), about 50 us per crossing on a loaded
//! machine and no part of Table 1. As the seed subtracts its host's own loopback line (roc), this
//! subtracts a run over a twin of the path with the same links and routers at no cost
//! (`wirespeed_lab::truth::calibration_twin`): per hop, measured twin minus configured twin is
//! that machinery. The twin runs first, with the same sizes and counts.
//!
//! What each row compares, and what cannot be separated from one end, is
//! `wirespeed_model::perhop`'s identification argument: per hop the per-byte cost going out (the
//! link into the hop plus the previous router's forwarding), the answering router's cost per
//! returned byte, and the one-way fixed cost (link, previous router's forwarding, and half the
//! change of answer cost between the two hops).
//!
//! Probing runs this executable as a subprocess (`probe ... --hops --json` inside the lab's
//! first host), because its logic lives in the binary.

use std::time::Duration;

use anyhow::Context;
use wirespeed_lab::Topology;
use wirespeed_lab::truth::{self, ChainHop};
use wirespeed_model::perhop::{self, OwnCost, RttLine};

use super::{Comparison, LabGuard, Name, Options, Reproduction, Row, Verdict, setting};
use crate::probe::{HopReport, ProbeReport};

/// A `probe --json` document, decoded into the types the command wrote it from.
type ProbeDocument = wirespeed_report::Document<serde::de::IgnoredAny, ProbeReport>;

/// Probe budgets. Sizes on both sides of the 548-byte quote limit, so that a router's cost per
/// returned byte is told apart from the path's (`perhop`). The lab's own jitter (a thread
/// wake-up per crossing, 10 to 40 us on a loaded machine) has a sharp floor: the minimum of n
/// probes comes within about 80 us / n of it, so a few sizes with many probes each pin a line
/// down better than many sizes with few. Hops whose round trips are short get 8 probes per
/// size per round; hops behind a slow line (the seed's DS0 holds a 1500-byte probe for 0.2 s
/// each way) get one per size per round, at [`SLOW_SIZES`], in as many rounds as the budget
/// holds ([`rounds_behind_slow_line`]).
const SIZES: &str = "64,300,548,800,1150,1500";
/// Behind a slow line each probe costs its bytes at the line's rate, so the sizes are the ends
/// of the plane's two pieces (it bends at the 548-byte quote limit): for a straight line the
/// least-variance design puts the points at its ends. The middle sizes of [`SIZES`] cost about
/// half of a round's time behind the seed's DS0 (3,730 of 7,086 bytes through it for the
/// router, 4,500 of 8,724 for the echo) for a quarter of the spread of the sizes sent (the
/// sum of squared deviations, 367k of 1,436k bytes squared): per second of the slow line
/// these three give 1.5 times the leverage of the six. Three sizes that are not collinear in
/// (sent, returned) still separate the router's answer per byte.
const SLOW_SIZES: &str = "64,548,1500";
/// Fewest rounds behind a slow line (the jackknife needs a few rounds to say anything).
const ROUNDS: usize = 5;
/// A path of fast hops only: at least this many rounds, then more until the even and the odd
/// rounds agree, up to [`MAX_ROUNDS`] and [`ROUNDS_BUDGET`].
const MIN_ROUNDS: usize = 10;
const MAX_ROUNDS: usize = 16;
/// No round starts that would end after this much probing (both labs up included).
const ROUNDS_BUDGET: Duration = Duration::from_secs(40);
const DENSE_PER_SIZE: &str = "8";
const SPARSE_PER_SIZE: &str = "1";
/// A hop whose configured round trip at 1500 bytes is shorter than this is probed densely.
const DENSE_BELOW_MS: f64 = 50.0;
/// Tolerances of issue 6: 2% per byte, 20 us fixed.
const PER_BYTE_TOLERANCE: f64 = 0.02;
const FIXED_TOLERANCE_US: f64 = 20.0;

/// Table 1 per hop of labs/seed-001-path.toml, us and us per byte: (per byte out, answer per
/// byte of the node answering, or None for the host).
const SEED_PER_HOP: [(f64, Option<f64>); 3] = [
    // ether .0008; ciscoping .00131
    (0.8, Some(1.31)),
    // ds0 .14285 + ciscomci .00004; ciscoping
    (142.85 + 0.04, Some(1.31)),
    // ciscoser .002939 + ether .0008; the 3B2 answers in its kernel, which the lab does not cost
    (2.939 + 0.8, None),
];

/// One hop's minimum round trip per size in every round so far: `sent -> [(returned, ms)]`,
/// one entry per round that answered the size.
#[derive(Default, Clone)]
struct HopMinimums {
    responder: String,
    destination: bool,
    rounds: std::collections::BTreeMap<u64, Vec<(u64, f64)>>,
}

impl HopMinimums {
    /// The points a plane is fitted through, `(sent, returned, ms)` per size.
    ///
    /// Probed densely, the minimum of each round sits above the lab's floor by a wake-up
    /// lateness that depends on what else the machine did during that round: measured over
    /// 16 alternating rounds on this 2-core machine under its colleagues' load, one round in
    /// three ran 40-100 us above the quietest (tests/reproduce.rs,
    /// `per_hop_costs_of_a_lab_chain_are_recovered`). The overall minimum then rests on the
    /// single quietest round, which is a different round for each size and for the twin and
    /// the chain, so slopes and intercepts inherit an extreme value's spread. The mean of the
    /// lower half of the rounds' minimums drops the load-disturbed rounds and averages the
    /// rest, the same estimator for the twin and the chain, so that the lab's floor cancels in
    /// the calibration. Probed sparsely (one probe per round, behind a slow line), the same
    /// estimator over the rounds' single probes (issue 21): the minimum of a few rounds there
    /// rested on one probe per size, and the jackknife of a minimum (the run's own interval)
    /// is not a consistent estimate of its spread: over 5 rounds it said about twice the
    /// run-to-run spread. The mean of the lower half is a smooth statistic whose jackknife
    /// is. Only the rounds `keep` accepts (by index) count.
    fn points_of(&self, keep: impl Fn(usize) -> bool) -> Vec<(f64, f64, f64)> {
        self.rounds
            .iter()
            .filter_map(|(&s, list)| {
                let mut kept: Vec<(u64, f64)> = list
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .map(|(_, &p)| p)
                    .collect();
                kept.sort_by(|a, b| a.1.total_cmp(&b.1));
                let (q, _) = *kept.first()?;
                let half = kept.len().div_ceil(2);
                let y = kept[..half].iter().map(|p| p.1).sum::<f64>() / half as f64;
                Some((s as f64, q as f64, y))
            })
            .collect()
    }
}

/// A hop's plane fitted through its minimums.
struct ProbedHop {
    line: RttLine,
    separated: bool,
}

/// One round: probes TTLs `1..=max_ttl` towards `to` (the destination is hop `hops`) and lowers
/// `into`'s minimums (hop k at index k - 1).
fn probe_round(
    lab: &LabGuard,
    (from, to): (&str, &str),
    max_ttl: usize,
    hops: usize,
    dense: bool,
    into: &mut [HopMinimums],
) -> anyhow::Result<()> {
    let target = lab.ipv4(to)?;
    let args: Vec<String> = probe_args(&target, max_ttl, dense);
    let doc: ProbeDocument =
        super::run_json(&lab.namespace(from)?, &args, Duration::from_secs(180))?;
    let list = &doc.result.hops;
    let responder = |h: &HopReport| {
        h.responder
            .map_or_else(|| "*".to_string(), |a| a.to_string())
    };
    let last_is_destination = list.last().is_some_and(|h| h.destination);
    if list.len() != max_ttl || (max_ttl == hops) != last_is_destination {
        anyhow::bail!(
            "the probe to {target} found {} hop(s) ending {}, the topology has {hops}: a router did not answer",
            list.len(),
            list.last().map_or_else(|| "nowhere".to_string(), responder)
        );
    }
    for (h, acc) in list.iter().zip(into.iter_mut()) {
        acc.responder = responder(h);
        acc.destination = h.destination;
        for row in &h.analysis.sizes {
            if !row.min_rtt_ms.is_finite() {
                continue;
            }
            let (sent, returned, min) = (
                row.sent_bytes as u64,
                row.returned_bytes as u64,
                row.min_rtt_ms,
            );
            acc.rounds.entry(sent).or_default().push((returned, min));
        }
    }
    Ok(())
}

/// Each hop's plane through its points (`perhop::fit_rtt_line`); only the rounds `keep`
/// accepts count.
fn planes(
    hops: &[HopMinimums],
    keep: impl Fn(usize) -> bool + Copy,
) -> anyhow::Result<Vec<ProbedHop>> {
    hops.iter()
        .enumerate()
        .map(|(k, h)| {
            let points = h.points_of(keep);
            let (line, how) = perhop::fit_rtt_line(&points).with_context(|| {
                format!(
                    "hop {} ({}) answered fewer than two sizes: no line to fit",
                    k + 1,
                    h.responder
                )
            })?;
            Ok(ProbedHop {
                line,
                separated: how == perhop::Separation::Separated,
            })
        })
        .collect()
}

/// Each hop's calibrated own cost from the rounds `keep` accepts.
fn calibrated_costs(
    twin: &[HopMinimums],
    real: &[HopMinimums],
    twin_configured: &[ChainHop],
    keep: impl Fn(usize) -> bool + Copy,
) -> anyhow::Result<Vec<OwnCost>> {
    let (t, r) = (planes(twin, keep)?, planes(real, keep)?);
    let corrected: Vec<RttLine> = r
        .iter()
        .zip(t.iter().zip(twin_configured))
        .map(|(r, (t, c))| perhop::calibrated(r.line, t.line, c.line))
        .collect();
    Ok(perhop::own_costs(&corrected))
}

/// Whether the estimate is settled: the even rounds and the odd rounds, each estimated alone,
/// agree on every densely probed hop's rows to within the tolerances (their difference has
/// twice the spread of the whole estimate's, so agreement within a tolerance puts the
/// estimate within half of one, about). The rows a slow line's hops give are not checked:
/// one probe per round does not make a spread.
fn settled(
    twin: &[HopMinimums],
    real: &[HopMinimums],
    twin_configured: &[ChainHop],
    dense: usize,
) -> anyhow::Result<bool> {
    let even = calibrated_costs(twin, real, twin_configured, |i| i % 2 == 0)?;
    let odd = calibrated_costs(twin, real, twin_configured, |i| i % 2 == 1)?;
    let all = calibrated_costs(twin, real, twin_configured, |_| true)?;
    let relative = |a: f64, b: f64, whole: f64| (a - b).abs() <= PER_BYTE_TOLERANCE * whole.abs();
    Ok(even
        .iter()
        .zip(&odd)
        .zip(&all)
        .take(dense)
        .enumerate()
        .all(|(k, ((e, o), a))| {
            let answers = real[k].destination
                || relative(
                    e.answer_per_byte_ms,
                    o.answer_per_byte_ms,
                    a.answer_per_byte_ms,
                );
            relative(e.per_byte_ms, o.per_byte_ms, a.per_byte_ms)
                && (e.fixed_ms - o.fixed_ms).abs() * 1e3 <= FIXED_TOLERANCE_US
                && answers
        }))
}

/// 95% half-widths of one hop's own costs from the run's rounds, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OwnCostSpread {
    fixed_ms: f64,
    per_byte_ms: f64,
    answer_per_byte_ms: f64,
}

/// The run's own sampling error of each hop's calibrated costs (issue 21 item 9): the whole
/// estimate (twin and chain, lower half or minimum, plane, calibration) recomputed with each
/// round left out in turn; the jackknife's standard error, times Student's t with rounds - 1
/// degrees of freedom. A row off by more than its tolerance but within this interval is the
/// estimator's spread on this machine at this moment; off by more than both, a bias. NaN
/// with fewer than three rounds.
fn own_cost_spread(
    twin: &[HopMinimums],
    real: &[HopMinimums],
    twin_configured: &[ChainHop],
    rounds: usize,
) -> anyhow::Result<Vec<OwnCostSpread>> {
    let nan = OwnCostSpread {
        fixed_ms: f64::NAN,
        per_byte_ms: f64::NAN,
        answer_per_byte_ms: f64::NAN,
    };
    if rounds < 3 {
        return Ok(vec![nan; real.len()]);
    }
    let leave_out: Vec<Vec<OwnCost>> = (0..rounds)
        .map(|j| calibrated_costs(twin, real, twin_configured, |i| i != j))
        .collect::<anyhow::Result<_>>()?;
    let t = wirespeed_model::sample_stats::student_t_975(rounds - 1);
    let half_width = |f: &dyn Fn(&OwnCost) -> f64, k: usize| {
        let xs: Vec<f64> = leave_out.iter().map(|c| f(&c[k])).collect();
        let m = xs.iter().sum::<f64>() / rounds as f64;
        let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
        t * ((rounds - 1) as f64 / rounds as f64 * ss).sqrt()
    };
    Ok((0..real.len())
        .map(|k| OwnCostSpread {
            fixed_ms: half_width(&|c| c.fixed_ms, k),
            per_byte_ms: half_width(&|c| c.per_byte_ms, k),
            answer_per_byte_ms: half_width(&|c| c.answer_per_byte_ms, k),
        })
        .collect())
}

/// A row off by `off` from its configured value, against its tolerance `tol` and the run's own
/// 95% half-width `hw` (same unit; NaN counts as none): within the tolerance; outside it only
/// by the estimator's spread in this run (within, and said so); or beyond both (a bias of
/// this run, outside).
fn judge_spread(off: f64, tol: f64, hw: f64) -> (Verdict, &'static str) {
    let hw = if hw.is_finite() { hw } else { 0.0 };
    let off = off.abs();
    if off <= tol {
        (Verdict::Within, "")
    } else if off <= tol + hw {
        (
            Verdict::Within,
            "; outside the tolerance only by the estimator's spread in this run (the rounds' minimums move the slopes it subtracts)",
        )
    } else {
        (
            Verdict::Outside,
            "; beyond the run's own interval: a bias, not the rounds' spread",
        )
    }
}

/// A router's answer cost per returned byte against its configured one: within 2%, or within
/// 2% plus the run's own 95% interval (`spread`, ms), which the reason then names as the
/// estimator's spread; beyond both it is a bias of this run.
fn judge_answer(ours_ms: f64, truth_ms: f64, spread_ms: f64) -> (Verdict, String, String) {
    let r = ours_ms / truth_ms - 1.0;
    let hw = if spread_ms.is_finite() {
        spread_ms
    } else {
        0.0
    };
    let (verdict, said) = judge_spread(ours_ms - truth_ms, PER_BYTE_TOLERANCE * truth_ms.abs(), hw);
    let tolerance = format!("2% + this run's +-{:.3} us/byte", hw * 1e3);
    let why = format!(
        "{:+.2}%, this run's 95% interval +-{:.3} us/byte ({:.1}%: jackknife over its rounds); cost per returned byte minus cost per sent byte of this hop's plane{said}",
        r * 100.0,
        hw * 1e3,
        hw / truth_ms.abs() * 100.0
    );
    (verdict, tolerance, why)
}

/// The sizes of a list such as [`SIZES`], IP bytes.
fn sizes_of(list: &str) -> Vec<f64> {
    list.split(',').filter_map(|s| s.parse().ok()).collect()
}

/// The configured time of one probe pass, seconds: every hop `..hops` of `chain` probed
/// `per_size` times at each of `sizes`, stop and wait (`wirespeed_net::probe`): the sum of
/// their configured round trips (a router answers a time exceeded quoting at most 548 bytes,
/// the destination an echo of the same size).
fn pass_seconds(chain: &[ChainHop], hops: usize, sizes: &[f64], per_size: f64) -> f64 {
    let ms: f64 = chain[..hops]
        .iter()
        .map(|h| {
            sizes
                .iter()
                .map(|&s| {
                    let returned = if h.router { s.min(548.0) + 28.0 } else { s };
                    h.line.at(s, returned)
                })
                .sum::<f64>()
        })
        .sum();
    ms * per_size / 1e3
}

/// Rounds for a path with hops behind a slow line (issue 21): as many as fit in `left` of the
/// budget, each round's time being what the configured lines say one round of the real chain
/// and one of its twin take (the hops `..dense` densely at [`SIZES`], then every hop once at
/// [`SLOW_SIZES`]), at least [`ROUNDS`] and at most [`MAX_ROUNDS`]. A slow line's rate, not
/// a constant, sets it: the seed's 56 kbit/s DS0 leaves room for about twelve rounds in
/// 40 s, a line half as fast for half as many. The loop still stops when a round it has
/// measured says the next would overrun the budget (a loaded machine).
fn rounds_behind_slow_line(
    chain: &[ChainHop],
    twin: &[ChainHop],
    dense: usize,
    left: Duration,
) -> usize {
    let per_size = |n: &str| n.parse::<f64>().unwrap_or(1.0);
    let round = |c: &[ChainHop]| {
        pass_seconds(c, dense, &sizes_of(SIZES), per_size(DENSE_PER_SIZE))
            + pass_seconds(c, c.len(), &sizes_of(SLOW_SIZES), per_size(SPARSE_PER_SIZE))
    };
    let seconds = round(chain) + round(twin);
    if seconds.is_nan() || seconds <= 0.0 {
        return MAX_ROUNDS;
    }
    ((left.as_secs_f64() / seconds).floor() as usize).clamp(ROUNDS, MAX_ROUNDS)
}

fn probe_args(target: &str, max_ttl: usize, dense: bool) -> Vec<String> {
    let max_ttl = max_ttl.to_string();
    let (n, sizes) = if dense {
        (DENSE_PER_SIZE, SIZES)
    } else {
        (SPARSE_PER_SIZE, SLOW_SIZES)
    };
    [
        "probe",
        target,
        "--hops",
        "--max-ttl",
        &max_ttl,
        "-c",
        n,
        "--sizes",
        sizes,
        "--gap",
        "0",
        "--timeout",
        "2s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The two ends: the topology's first two hosts.
fn ends(t: &Topology) -> anyhow::Result<(String, String)> {
    let hosts: Vec<&str> = t
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, wirespeed_lab::topology::NodeKind::Host(_)))
        .map(|n| n.name.as_str())
        .collect();
    match hosts[..] {
        [a, b, ..] => Ok((a.to_string(), b.to_string())),
        _ => anyhow::bail!(
            "the topology has {} host(s): bellovin probes from its first [[host]] to its second, give two",
            hosts.len()
        ),
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

fn within_per_byte(ours: f64, configured: f64) -> (Verdict, f64) {
    let r = ours / configured - 1.0;
    (Verdict::of(r.abs() <= PER_BYTE_TOLERANCE), r)
}

fn within_fixed(ours_us: f64, configured_us: f64) -> (Verdict, f64) {
    let d = ours_us - configured_us;
    (Verdict::of(d.abs() <= FIXED_TOLERANCE_US), d)
}

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let file = match &options.topology {
        Some(path) => crate::common::data::LabFile::read(path)?,
        None => super::lab_file("seed-001-path.toml")?,
    };
    let seed_path = options.topology.is_none();
    let topology = file.topology()?;
    let (from, to) = ends(&topology)?;
    let configured = truth::chain(&topology, &from, &to)?;
    let twin = truth::calibration_twin(&topology);
    let twin_configured = truth::chain(&twin, &from, &to)?;
    let n = configured.len();
    // Hops 1..=dense are probed densely, the rest (behind a slow line) sparsely.
    let dense = configured
        .iter()
        .take_while(|h| h.line.at(1500.0, 1500.0) < DENSE_BELOW_MS)
        .count();
    // Rounds alternate between the twin and the real chain, so that both see the same moments
    // of a loaded machine (the lab's own cost drifts with the load by tens of microseconds over
    // seconds); each hop's points come from every round (`HopMinimums::points`).
    let round = |lab: &LabGuard, acc: &mut Vec<HopMinimums>| -> anyhow::Result<()> {
        if dense > 0 {
            probe_round(lab, (&from, &to), dense, n, true, &mut acc[..dense])?;
        }
        if dense < n {
            let mut sparse: Vec<HopMinimums> = (0..n).map(|_| HopMinimums::default()).collect();
            probe_round(lab, (&from, &to), n, n, false, &mut sparse)?;
            for (a, s) in acc.iter_mut().zip(sparse).skip(dense) {
                a.responder = s.responder;
                a.destination = s.destination;
                for (size, list) in s.rounds {
                    a.rounds.entry(size).or_default().extend(list);
                }
            }
        }
        Ok(())
    };
    let started = std::time::Instant::now();
    let twin_lab = LabGuard::up_topology(twin.clone(), file.path())?;
    let real_lab = LabGuard::up(&file)?;
    let fresh = || (0..n).map(|_| HopMinimums::default()).collect::<Vec<_>>();
    let (mut twin_acc, mut real_acc) = (fresh(), fresh());
    // A path of fast hops gets rounds until the even and the odd rounds agree (`settled`),
    // within a budget of rounds and of time; a path behind a slow line its fixed rounds.
    let (least, most) = if dense == n {
        (MIN_ROUNDS, MAX_ROUNDS)
    } else {
        let planned = rounds_behind_slow_line(
            &configured,
            &twin_configured,
            dense,
            ROUNDS_BUDGET.saturating_sub(started.elapsed()),
        );
        (planned, planned)
    };
    let mut rounds = 0;
    let mut settled_after = None;
    while rounds < most {
        let round_started = std::time::Instant::now();
        round(&twin_lab, &mut twin_acc)?;
        round(&real_lab, &mut real_acc)?;
        rounds += 1;
        if rounds >= least && settled(&twin_acc, &real_acc, &twin_configured, dense)? {
            settled_after = Some(rounds);
            break;
        }
        // Another round must fit in the budget.
        if started.elapsed() + round_started.elapsed() > ROUNDS_BUDGET {
            break;
        }
    }
    // This host's own stack, on its loopback (the seed's roc), and the emulator's punctuality.
    let host_stack: ProbeDocument = super::run_json(
        &twin_lab.namespace(&from)?,
        &[
            "probe",
            "127.0.0.1",
            "-c",
            DENSE_PER_SIZE,
            "--sizes",
            SIZES,
            "--gap",
            "0",
        ]
        .map(String::from),
        Duration::from_secs(60),
    )?;
    let lateness = twin_lab.ports()?;
    drop(real_lab);
    drop(twin_lab);
    let twin_probed = planes(&twin_acc, |_| true)?;
    let real = planes(&real_acc, |_| true)?;
    let elapsed = started.elapsed().as_secs_f64();

    let machinery: Vec<RttLine> = twin_probed
        .iter()
        .zip(&twin_configured)
        .map(|(m, c)| m.line - c.line)
        .collect();
    let corrected: Vec<RttLine> = real
        .iter()
        .zip(twin_probed.iter().zip(&twin_configured))
        .map(|(r, (t, c))| perhop::calibrated(r.line, t.line, c.line))
        .collect();
    let raw: Vec<RttLine> = real.iter().map(|r| r.line).collect();
    let truth_lines: Vec<RttLine> = configured.iter().map(|h| h.line).collect();
    let own_ours = perhop::own_costs(&corrected);
    let own_raw = perhop::own_costs(&raw);
    let own_truth = perhop::own_costs(&truth_lines);
    let own_machinery = perhop::own_costs(&machinery);

    let spread = own_cost_spread(&twin_acc, &real_acc, &twin_configured, rounds)?;
    let per_hop = per_hop_rows(
        &configured,
        &real,
        (&own_truth, &own_ours, &own_raw),
        &spread,
        seed_path,
    );
    let path = path_rows(
        truth_lines[n - 1],
        corrected[n - 1],
        raw[n - 1],
        seed_path,
        &to,
        &from,
    );
    let lab_cost = lab_cost_rows(&configured, &own_machinery, &host_stack, &lateness)?;
    let file_name = file.path().display().to_string();
    let runs = match dense {
        0 => probe_args("<addr>", n, false).join(" "),
        d if d == n => probe_args("<addr>", n, true).join(" "),
        d => format!(
            "{} (hops 1..{d}) and {} (the rest)",
            probe_args("<addr>", d, true).join(" "),
            probe_args("<addr>", n, false).join(" ")
        ),
    };
    let convergence = match settled_after {
        Some(_) if dense == n => {
            "the even and the odd rounds agreed within the tolerances".to_string()
        }
        Some(_) | None if dense < n => format!(
            "hops behind a slow line: {most} planned from the configured lines to fit the {} s budget",
            ROUNDS_BUDGET.as_secs()
        ),
        _ => format!(
            "the even and the odd rounds still disagreed after {rounds} rounds: the machine was too loaded, the rows carry that spread"
        ),
    };
    let method = format!(
        "library: lifecycle::up({file_name}) and of its calibration twin (the same links, routers at no cost); subprocess, alternating between the two: ip netns exec <{from}> wirespeed {runs} --json; {rounds} rounds ({convergence}); per size the mean of the lower half of the rounds' minimums (fast hops) or of the rounds' single probes (behind a slow line), plane fitted here; {elapsed:.1} s in all",
    );
    let mut comparisons = vec![
        Comparison {
            title: format!("Each hop's own cost, {from} -> {to}, calibrated (one way)"),
            source: if seed_path {
                "seed 001 Table 1: ether .0008/byte, ciscomci .525 + .00004/byte, ds0 .14285/byte, ciscoser 1.695 + .002939/byte, ciscoping .751 + .00131/byte".into()
            } else {
                format!("{file_name}: the configured links and router costs")
            },
            method: method.clone(),
            rows: per_hop,
        },
        Comparison {
            title: format!("The whole path, {from} -> {to} (one way)"),
            source: "the sum of the configured components".into(),
            method: method.clone(),
            rows: path,
        },
        Comparison {
            title: "What the lab itself adds (measured, not in any table)".into(),
            source: "the calibration twin: measured minus configured, per hop; this host's loopback; the emulator's release lateness".into(),
            method,
            rows: lab_cost,
        },
    ];
    if seed_path {
        comparisons.push(board_comparison()?);
    }
    let mut truth_settings = vec![setting(
        &format!("path ({file_name})"),
        configured
            .iter()
            .map(|h| format!("{} -> {}", h.previous, h.node))
            .collect::<Vec<_>>()
            .join(", "),
    )];
    for node in &topology.nodes {
        if let wirespeed_lab::topology::NodeKind::Router(r) = &node.kind {
            truth_settings.push(setting(
                &format!("{} forward / answer", node.name),
                format!(
                    "{} + {}/byte; {} + {}/byte",
                    wirespeed_model::units::format_seconds(r.forward.fixed.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.forward.per_byte.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.answer.fixed.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.answer.per_byte.as_secs_f64()),
                ),
            ));
        }
    }
    truth_settings.push(setting(
        "probe",
        format!(
            "ICMP TTL-limited (time exceeded) and echo at the destination; hops with round trips under {DENSE_BELOW_MS} ms at 1500 bytes: sizes {SIZES} bytes x {DENSE_PER_SIZE} probes per round, the others sizes {SLOW_SIZES} x {SPARSE_PER_SIZE}; behind a slow line as many rounds as the configured round trips fit in {} s ({ROUNDS} to {MAX_ROUNDS}), else {MIN_ROUNDS} to {MAX_ROUNDS} until the even and odd rounds agree; rounds alternating between twin and chain; per size the lower half's mean of the rounds' minimums (fast hops) or of their single probes (slow), plane fit in bytes sent and returned",
            ROUNDS_BUDGET.as_secs()
        ),
    ));
    let notes = vec![
        "not separable from one end (wirespeed_model::perhop): a router's forwarding per byte from the serialization of the link after it (both act on every byte going out: the per-byte rows hold their sum), and a router's fixed answer cost from the fixed costs before it (each hop's fixed row holds half the change of answer cost, and the configured column computes the same combination)".into(),
    ];
    Ok(Reproduction::new(
        Name::Bellovin,
        truth_settings,
        comparisons,
        notes,
    ))
}

fn per_hop_rows(
    configured: &[ChainHop],
    real: &[ProbedHop],
    (truth, ours, raw): (&[OwnCost], &[OwnCost], &[OwnCost]),
    spread: &[OwnCostSpread],
    seed_path: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (k, hop) in configured.iter().enumerate() {
        let label = format!("hop {} ({} -> {})", hop.ttl, hop.previous, hop.node);
        let paper = seed_path.then(|| SEED_PER_HOP.get(k).copied()).flatten();
        let r = ours[k].per_byte_ms / truth[k].per_byte_ms - 1.0;
        let hw = spread[k].per_byte_ms / truth[k].per_byte_ms.abs();
        let (verdict, said) = judge_spread(r, PER_BYTE_TOLERANCE, hw);
        rows.push(Row {
            quantity: format!("{label} per byte out"),
            unit: "us/byte".into(),
            configured: Some(truth[k].per_byte_ms * 1e3),
            paper: paper.map(|p| p.0),
            ours: Some(ours[k].per_byte_ms * 1e3),
            tolerance: format!("2% + this run's +-{:.2}%", finite_or_zero(hw) * 100.0),
            verdict,
            why: format!(
                "{:+.2}% (this run's 95% interval +-{:.2}%); the link into {} plus {}'s forwarding per byte (one quantity seen from one end){said}",
                r * 100.0,
                hw * 100.0,
                hop.node,
                hop.previous
            ),
        });
        let d = (ours[k].fixed_ms - truth[k].fixed_ms) * 1e3;
        let hw_us = spread[k].fixed_ms * 1e3;
        let (verdict, said) = judge_spread(d, FIXED_TOLERANCE_US, hw_us);
        rows.push(Row {
            quantity: format!("{label} fixed"),
            unit: "us".into(),
            configured: Some(truth[k].fixed_ms * 1e3),
            paper: None,
            ours: Some(ours[k].fixed_ms * 1e3),
            tolerance: format!("20 us + this run's +-{:.1} us", finite_or_zero(hw_us)),
            verdict,
            why: format!(
                "{d:+.1} us (this run's 95% interval +-{hw_us:.1} us) after subtracting the lab's own cost (as measured: {:.1} us); configured = link + {}'s forwarding + half of ({}'s answer - {}'s answer){said}",
                raw[k].fixed_ms * 1e3,
                hop.previous,
                hop.node,
                hop.previous
            ),
        });
        if hop.router {
            let separated = real[k].separated;
            let (verdict, tolerance, why) = judge_answer(
                ours[k].answer_per_byte_ms,
                truth[k].answer_per_byte_ms,
                spread[k].answer_per_byte_ms,
            );
            rows.push(Row {
                quantity: format!("{} answer per byte", hop.node),
                unit: "us/byte".into(),
                configured: Some(truth[k].answer_per_byte_ms * 1e3),
                paper: paper.and_then(|p| p.1),
                ours: separated.then_some(ours[k].answer_per_byte_ms * 1e3),
                tolerance,
                verdict: if separated { verdict } else { Verdict::Outside },
                why: if separated {
                    why
                } else {
                    "not separated: the sizes did not straddle the 548-byte quote limit".into()
                },
            });
        }
    }
    rows
}

fn path_rows(
    truth: RttLine,
    ours: RttLine,
    raw: RttLine,
    seed_path: bool,
    to: &str,
    from: &str,
) -> Vec<Row> {
    // An echo: the one-way per byte is the mean of out and back.
    let per_byte = |l: RttLine| (l.per_sent_byte_ms + l.per_returned_byte_ms) / 2.0;
    let (verdict, r) = within_per_byte(per_byte(ours), per_byte(truth));
    let (fixed_verdict, d) = within_fixed(ours.fixed_ms / 2.0 * 1e3, truth.fixed_ms / 2.0 * 1e3);
    vec![
        Row {
            quantity: format!("one-way per byte, {from} -> {to}"),
            unit: "us/byte".into(),
            configured: Some(per_byte(truth) * 1e3),
            // Table 1: DS0 142.857 + ciscoser 2.939 + ciscomci 0.04 + 2 Ethernets 1.6.
            paper: seed_path.then_some(142.857 + 2.939 + 0.04 + 1.6),
            ours: Some(per_byte(ours) * 1e3),
            tolerance: "2%".into(),
            verdict,
            why: format!("{:+.2}%", r * 100.0),
        },
        Row {
            quantity: format!("one-way fixed, {from} -> {to}"),
            unit: "us".into(),
            configured: Some(truth.fixed_ms / 2.0 * 1e3),
            // ciscomci .525 + DS0 line 7.6 + ciscoser 1.695 (Table 1 has no Ethernet fixed cost).
            paper: seed_path.then_some((0.525 + 7.6 + 1.695) * 1e3),
            ours: Some(ours.fixed_ms / 2.0 * 1e3),
            tolerance: "20 us".into(),
            verdict: fixed_verdict,
            why: format!(
                "{d:+.1} us after subtracting the lab's own cost; as measured {:.1} us ({:+.1} us: the lab's own cost, next table)",
                raw.fixed_ms / 2.0 * 1e3,
                (raw.fixed_ms - truth.fixed_ms) / 2.0 * 1e3
            ),
        },
    ]
}

fn lab_cost_rows(
    configured: &[ChainHop],
    machinery: &[OwnCost],
    host: &ProbeDocument,
    ports: &[wirespeed_lab::PortStatus],
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let host_fit = host
        .result
        .hops
        .first()
        .and_then(|h| h.analysis.fit.as_ref())
        .context("the loopback probe has no fit")?;
    rows.push(Row {
        quantity: "this host's own stack, loopback, one way".into(),
        unit: "us".into(),
        configured: None,
        paper: Some(696.0),
        ours: Some(host_fit.one_way.fixed_ms * 1e3),
        tolerance: "-".into(),
        verdict: Verdict::NotCompared,
        why: "kernel timestamps leave the host's system calls out; the paper's roc (.696 ms) timed them on a SPARCstation".into(),
    });
    for (hop, m) in configured.iter().zip(machinery) {
        rows.push(Row {
            quantity: format!("lab cost of hop {} ({} -> {}), one way", hop.ttl, hop.previous, hop.node),
            unit: "us".into(),
            configured: Some(0.0),
            paper: None,
            ours: Some(m.fixed_ms * 1e3),
            tolerance: "-".into(),
            verdict: Verdict::NotCompared,
            why: format!(
                "the twin's measured minus configured: the emulator's wake-up to read each frame, the write into the next namespace and its kernel, both ways, halved; per byte {:+.4} us",
                m.per_byte_ms * 1e3
            ),
        });
    }
    let worst = ports
        .iter()
        .max_by(|a, b| a.lateness.p50_us.total_cmp(&b.lateness.p50_us));
    if let Some(p) = worst {
        rows.push(Row {
            quantity: "emulator release lateness, p50 / p99 (worst port of the twin)".into(),
            unit: "us".into(),
            configured: Some(0.0),
            paper: None,
            ours: Some(p.lateness.p50_us),
            tolerance: "-".into(),
            verdict: Verdict::NotCompared,
            why: format!(
                "release instant minus schedule; p99 {:.0} us on {} -> {} ({} frames): the minimum filter keeps the punctual ones",
                p.lateness.p99_us, p.from, p.to, p.lateness.frames
            ),
        });
    }
    Ok(rows)
}

/// §4: the misconfigured board, from the seed's own measurements: `model compare` in process,
/// on the model and probe built into this binary.
fn board_comparison() -> anyhow::Result<Comparison> {
    let model_file = crate::common::data::builtin("examples", "bellovin-1992.toml")?;
    let probe_file = crate::common::data::builtin("examples", "bellovin-1992-ih-probe.json")?;
    let model = wirespeed_model::delay::ModelFile::from_toml(model_file.text)
        .with_context(|| format!("model file {}", model_file.path))?;
    let measured = crate::model::parse_probe(probe_file.text, probe_file.path)?;
    let tolerance = wirespeed_model::delay::Tolerance::default();
    let (_, segments) =
        crate::model::compare(&model, "ih2", &measured, tolerance, probe_file.path)?;
    let mut rows = Vec::new();
    for s in &segments {
        let hypothesis = s.hypotheses.first().map_or("", String::as_str);
        // The seed's finding: the ciscomci hop is slower per byte than its class because
        // its ports sit on different boards; the first hop is the reference.
        let seed_says = s.hop == 2;
        rows.push(Row {
            quantity: format!("hop {} ({}) per byte", s.hop, s.elements.join(" + ")),
            unit: "us/byte".into(),
            configured: Some(s.expected.per_byte_ms * 1e3),
            paper: Some(s.measured.per_byte_ms * 1e3),
            ours: None,
            tolerance: if seed_says {
                "flagged, between-boards".into()
            } else {
                "not flagged".into()
            },
            verdict: Verdict::of(
                s.anomalous == seed_says && (!seed_says || hypothesis.contains("ciscobtw")),
            ),
            why: if s.anomalous {
                format!("flagged: {hypothesis}")
            } else {
                "agrees with the model".into()
            },
        });
    }
    Ok(Comparison {
        title: "The misconfigured board (seed §4): model compare flags it".into(),
        source: "seed 001 §4: the ih path's second hop measured .564 + .0014/byte against .525 + .00084 expected".into(),
        method: format!(
            "in process: wirespeed model compare {} ih2 {} (configured = the model's expectation, paper = the seed's measurement)",
            model_file.path, probe_file.path
        ),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_001_board_is_flagged_by_model_compare_in_process() {
        let c = board_comparison().unwrap();
        let board = c
            .rows
            .iter()
            .find(|r| r.quantity.starts_with("hop 2"))
            .expect("hop 2 row");
        assert!(matches!(board.verdict, Verdict::Within), "{:?}", board.why);
        assert!(board.why.contains("ciscobtw"), "{}", board.why);
        // The seed's figures, read through the typed segments: .00084 expected, .0014 measured.
        assert!((board.configured.unwrap() - 0.84).abs() < 1e-9);
        assert!((board.paper.unwrap() - 1.4).abs() < 1e-9);
    }

    /// Rounds of minimums as a loaded machine gives them: a floor, a few microseconds of
    /// spread, and one round in three disturbed by tens of microseconds.
    fn hop(floor: impl Fn(u64) -> f64, lucky: Option<(u64, usize)>) -> HopMinimums {
        let mut h = HopMinimums::default();
        for s in [64u64, 300, 548, 800, 1150, 1500] {
            let q = s.min(548) + 28;
            let list = (0..12)
                .map(|i| {
                    let jitter = [0.0, 0.004, 0.002, 0.06, 0.003, 0.001][i % 6];
                    let disturbed = if i % 3 == 2 { 0.05 } else { 0.0 };
                    // A round far below every other for one size only: a lucky extreme.
                    let luck = match lucky {
                        Some((size, round)) if size == s && round == i => -0.03,
                        _ => 0.0,
                    };
                    (q, floor(s) + jitter + disturbed + luck)
                })
                .collect();
            h.rounds.insert(s, list);
        }
        h
    }

    /// The estimator before issue 21's change behind a slow line: per size the minimum of the
    /// rounds `keep` accepts.
    fn minimum_points(h: &HopMinimums, keep: impl Fn(usize) -> bool) -> Vec<(f64, f64, f64)> {
        h.rounds
            .iter()
            .filter_map(|(&s, list)| {
                let (q, y) = list
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .map(|(_, &p)| p)
                    .min_by(|a, b| a.1.total_cmp(&b.1))?;
                Some((s as f64, q as f64, y))
            })
            .collect()
    }

    #[test]
    fn the_lower_half_of_the_rounds_is_averaged_and_disturbed_rounds_are_dropped() {
        let h = hop(|_| 1.0, None);
        let dense = h.points_of(|_| true);
        // Twelve rounds: +0, 4, 52, 60, 3, 51 us, twice; the six lowest are 0, 0, 3, 3, 4, 4 us,
        // every disturbed round (+50 us) and the worst jitter (60 us) left out.
        let expected = 0.014 / 6.0;
        for &(_, _, y) in &dense {
            assert!((y - 1.0 - expected).abs() < 1e-12, "{y} {expected}");
        }
        // Only the rounds kept count.
        let even = h.points_of(|i| i % 2 == 0);
        assert!(even.iter().all(|p| p.2 > 1.0));
    }

    #[test]
    fn a_lucky_round_at_one_size_does_not_tilt_the_plane() {
        // The plane 1 ms + 5 us/byte sent + 7 us/byte returned; one size's minimum 30 us low in
        // one round. The overall minimum follows the lucky round and tilts the returned-byte
        // slope by several percent; the lower half's mean moves it by a fraction of that.
        let line = |s: u64| 1.0 + 0.005 * s as f64 + 0.007 * (s.min(548) + 28) as f64;
        let h = hop(line, Some((64, 0)));
        let fit = |points: Vec<(f64, f64, f64)>| perhop::fit_rtt_line(&points).unwrap().0;
        let clean = fit(hop(line, None).points_of(|_| true));
        let lower_half = fit(h.points_of(|_| true));
        let minimum = fit(minimum_points(&h, |_| true));
        let tilt = |l: RttLine| (l.per_returned_byte_ms - clean.per_returned_byte_ms).abs();
        assert!(
            tilt(minimum) > 3.0 * tilt(lower_half),
            "{minimum:?} {lower_half:?}"
        );
    }

    /// Uniform draws in [0, 1) from `seed` (a 64-bit LCG: the same numbers on every machine).
    fn uniform_from(seed: u64) -> impl FnMut() -> f64 {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Rounds of minimums with the scatter of a loaded machine, drawn from `seed`: each size
    /// in each round up to `amp` ms above the line (uniform), one round in three 50 us high.
    fn noisy(line: impl Fn(u64) -> f64, seed: u64, amp: f64, rounds: usize) -> HopMinimums {
        let mut unit = uniform_from(seed);
        let mut h = HopMinimums::default();
        for s in [64u64, 300, 548, 800, 1150, 1500] {
            let q = s.min(548) + 28;
            let list = (0..rounds)
                .map(|i| {
                    let disturbed = if i % 3 == 2 { 0.05 } else { 0.0 };
                    (q, line(s) + amp * unit() + disturbed)
                })
                .collect();
            h.rounds.insert(s, list);
        }
        h
    }

    /// Issue 21 item 9: the answer-per-byte row judged with the run's own interval. A
    /// one-router chain (the router answers at 1.31 us per returned byte, as ciscoping),
    /// 12 rounds whose minimums scatter by up to 60 us, drawn 40 times: some estimates land
    /// outside 2% on their own; the jackknife over the rounds covers the truth in at least
    /// 32 of the 40 and names the spread. The same rounds with the router's answer costing
    /// 30% more than configured (a bias, which no round's leaving out removes) are outside,
    /// named a bias, in at least 36 of 40.
    #[test]
    fn the_answer_per_byte_row_tells_spread_from_bias() {
        let returned = |s: u64| (s.min(548) + 28) as f64;
        let twin_line = |s: u64| 0.4 + 0.0016 * s as f64 + 0.0016 * returned(s);
        let real_line = |s: u64| twin_line(s) + 0.3 + 0.00131 * returned(s);
        let biased_line = |s: u64| real_line(s) + 0.3 * 0.00131 * returned(s);
        let configured = |answer_per_byte_ms: f64| ChainHop {
            ttl: 1,
            previous: "a".into(),
            node: "r".into(),
            router: true,
            line: RttLine {
                fixed_ms: 0.4,
                per_sent_byte_ms: 0.0016,
                per_returned_byte_ms: 0.0016 + answer_per_byte_ms,
            },
        };
        let twin_cfg = vec![configured(0.0)];
        let truth = perhop::own_costs(&[configured(0.00131).line])[0].answer_per_byte_ms;
        assert!((truth - 0.00131).abs() < 1e-12);
        let (mut outside_alone, mut covered, mut bias_found) = (0, 0, 0);
        for seed in 0..40u64 {
            let twin = vec![noisy(twin_line, 2 * seed, 0.06, 12)];
            let judge = |real: &HopMinimums| {
                let real = vec![real.clone()];
                let ours = calibrated_costs(&twin, &real, &twin_cfg, |_| true).unwrap()[0];
                let spread = own_cost_spread(&twin, &real, &twin_cfg, 12).unwrap()[0];
                (
                    ours.answer_per_byte_ms,
                    judge_answer(ours.answer_per_byte_ms, truth, spread.answer_per_byte_ms),
                )
            };
            let (ours, (v, _, why)) = judge(&noisy(real_line, 2 * seed + 1, 0.06, 12));
            if (ours / truth - 1.0).abs() > PER_BYTE_TOLERANCE {
                outside_alone += 1;
                assert_eq!(judge_answer(ours, truth, f64::NAN).0, Verdict::Outside);
                if v == Verdict::Within {
                    assert!(why.contains("the estimator's spread"), "{why}");
                }
            }
            covered += usize::from(v == Verdict::Within);
            let (_, (v, _, why)) = judge(&noisy(biased_line, 2 * seed + 1, 0.06, 12));
            if v == Verdict::Outside {
                assert!(why.contains("a bias"), "{why}");
                bias_found += 1;
            }
        }
        eprintln!(
            "outside 2% alone {outside_alone}, covered {covered}, bias found {bias_found} of 40"
        );
        assert!(
            outside_alone >= 4,
            "{outside_alone}: rounds too quiet to test anything"
        );
        assert!(covered >= 32, "{covered} of 40");
        assert!(bias_found >= 36, "{bias_found} of 40");
        let twin = vec![noisy(twin_line, 0, 0.06, 2)];
        let real = vec![noisy(real_line, 1, 0.06, 2)];
        assert!(
            own_cost_spread(&twin, &real, &twin_cfg, 2).unwrap()[0]
                .fixed_ms
                .is_nan()
        );
    }

    fn seed_chain() -> (Vec<ChainHop>, Vec<ChainHop>, usize) {
        let t = super::super::lab_file("seed-001-path.toml")
            .unwrap()
            .topology()
            .unwrap();
        let (a, b) = ends(&t).unwrap();
        let chain = truth::chain(&t, &a, &b).unwrap();
        let twin = truth::chain(&truth::calibration_twin(&t), &a, &b).unwrap();
        let dense = chain
            .iter()
            .take_while(|h| h.line.at(1500.0, 1500.0) < DENSE_BELOW_MS)
            .count();
        (chain, twin, dense)
    }

    /// Issue 21: behind a slow line the rounds come from the line's rate and the budget, not
    /// a constant. The seed's DS0 (56 kbit/s) leaves room for more than twice the 5 rounds
    /// it had; a line half as fast for about half as many; a budget too short for the fewest
    /// still gets them, a very long one no more than the most.
    #[test]
    fn rounds_behind_a_slow_line_come_from_its_rate_and_the_budget() {
        let (chain, twin, dense) = seed_chain();
        assert_eq!(dense, 1, "only the hop before the DS0 is fast");
        let left = ROUNDS_BUDGET - Duration::from_secs(4);
        let seed = rounds_behind_slow_line(&chain, &twin, dense, left);
        // One round of both labs by their configured lines, seconds.
        let round = |c: &[ChainHop]| {
            pass_seconds(c, dense, &sizes_of(SIZES), 8.0)
                + pass_seconds(c, c.len(), &sizes_of(SLOW_SIZES), 1.0)
        };
        let seconds = round(&chain) + round(&twin);
        eprintln!("seed path: one round {seconds:.2} s, {seed} rounds in {left:?}");
        assert!((2.0..3.5).contains(&seconds), "{seconds}");
        assert!(seed >= 2 * ROUNDS, "{seed} rounds behind the DS0");
        assert_eq!(seed, (left.as_secs_f64() / seconds) as usize);
        // The DS0 at half its rate (every per-byte cost behind hop 1 doubled).
        let slower = |c: &[ChainHop]| {
            let mut c = c.to_vec();
            let first = c[0].line;
            for h in c.iter_mut().skip(1) {
                h.line.per_sent_byte_ms = 2.0 * h.line.per_sent_byte_ms - first.per_sent_byte_ms;
                h.line.per_returned_byte_ms =
                    2.0 * h.line.per_returned_byte_ms - first.per_returned_byte_ms;
            }
            c
        };
        let half_rate = rounds_behind_slow_line(&slower(&chain), &slower(&twin), dense, left);
        assert!(
            half_rate < seed && half_rate * 2 <= seed + 2,
            "{half_rate} against {seed}"
        );
        assert_eq!(
            rounds_behind_slow_line(&chain, &twin, dense, Duration::from_secs(1)),
            ROUNDS
        );
        assert_eq!(
            rounds_behind_slow_line(&chain, &twin, dense, Duration::from_secs(3600)),
            MAX_ROUNDS
        );
    }

    /// One probe's lateness above its floor on a loaded machine, ms: 0-40 us of wake-up
    /// jitter, and one probe in three disturbed by a further 40-100 us (bench/RESULTS.md,
    /// "probe: per-hop accuracy": rounds 40-100 us above the quietest one time in three,
    /// sizes scattered by 10-40 us within a round). Behind a slow line each probe is its
    /// own round, 0.4 s from the next, so each draws its own.
    fn single_probes(
        line: impl Fn(f64, f64) -> f64,
        sizes: &str,
        rounds: usize,
        seed: u64,
    ) -> HopMinimums {
        let mut unit = uniform_from(seed);
        let mut h = HopMinimums::default();
        for s in sizes_of(sizes) {
            let q = s.min(548.0) + 28.0;
            let list = (0..rounds)
                .map(|_| {
                    let jitter = 0.04 * unit();
                    let disturbed = if unit() < 1.0 / 3.0 {
                        0.04 + 0.06 * unit()
                    } else {
                        0.0
                    };
                    (q as u64, line(s, q) + jitter + disturbed)
                })
                .collect();
            h.rounds.insert(s as u64, list);
        }
        h
    }

    /// Issue 21: behind the DS0 the run's own interval (the jackknife over its rounds) must be
    /// honest and tight: about the run-to-run spread, not twice it. A router behind a 56
    /// kbit/s line answering at 1.31 us per returned byte (ciscoser), its twin without the
    /// cost, 200 runs of independent single probes with a loaded machine's lateness. Before
    /// (6 sizes, 5 rounds, the minimum per size) the median interval was 1.4 times the 95%
    /// spread of the estimates across runs in this model (in the lab, about twice: five runs,
    /// bench/RESULTS.md); now (the rounds the seed's DS0 and the budget give, [`SLOW_SIZES`],
    /// the lower half's mean) it is within 0.8..1.2 of it for the answer per byte and the
    /// fixed cost, covers the truth in at least 90% of the runs, and the spread itself is
    /// smaller than before. The old design, computed here too, fails those bounds.
    #[test]
    fn behind_a_slow_line_the_runs_interval_is_the_run_to_run_spread() {
        let ds0 = 0.142_857 + 0.000_8;
        let twin_line = RttLine {
            fixed_ms: 16.3,
            per_sent_byte_ms: ds0,
            per_returned_byte_ms: ds0,
        };
        let real_line = RttLine {
            fixed_ms: 16.3 + 0.3,
            per_returned_byte_ms: ds0 + 0.00131,
            ..twin_line
        };
        let cfg = vec![ChainHop {
            ttl: 1,
            previous: "a".into(),
            node: "r".into(),
            router: true,
            line: twin_line,
        }];
        let truth = perhop::own_costs(&[real_line])[0];
        let (chain, twin, dense) = seed_chain();
        let planned =
            rounds_behind_slow_line(&chain, &twin, dense, ROUNDS_BUDGET - Duration::from_secs(4));
        // (estimate, 95% half-width) of the answer per byte and the fixed cost, per run.
        type Draw = ((f64, f64), (f64, f64));
        let now = |seed: u64| -> Draw {
            let t = vec![single_probes(
                |s, q| twin_line.at(s, q),
                SLOW_SIZES,
                planned,
                2 * seed,
            )];
            let r = vec![single_probes(
                |s, q| real_line.at(s, q),
                SLOW_SIZES,
                planned,
                2 * seed + 1,
            )];
            let c = calibrated_costs(&t, &r, &cfg, |_| true).unwrap()[0];
            let w = own_cost_spread(&t, &r, &cfg, planned).unwrap()[0];
            (
                (c.answer_per_byte_ms, w.answer_per_byte_ms),
                (c.fixed_ms, w.fixed_ms),
            )
        };
        let before = |seed: u64| -> Draw {
            let rounds = ROUNDS;
            let t = single_probes(|s, q| twin_line.at(s, q), SIZES, rounds, 2 * seed);
            let r = single_probes(|s, q| real_line.at(s, q), SIZES, rounds, 2 * seed + 1);
            let costs = |keep: &dyn Fn(usize) -> bool| {
                let fit =
                    |h: &HopMinimums| perhop::fit_rtt_line(&minimum_points(h, keep)).unwrap().0;
                perhop::own_costs(&[perhop::calibrated(fit(&r), fit(&t), twin_line)])[0]
            };
            let whole = costs(&|_| true);
            let out: Vec<OwnCost> = (0..rounds).map(|j| costs(&|i| i != j)).collect();
            let t975 = wirespeed_model::sample_stats::student_t_975(rounds - 1);
            let hw = |f: &dyn Fn(&OwnCost) -> f64| {
                let m = out.iter().map(f).sum::<f64>() / rounds as f64;
                let ss: f64 = out.iter().map(|c| (f(c) - m).powi(2)).sum();
                t975 * ((rounds - 1) as f64 / rounds as f64 * ss).sqrt()
            };
            (
                (whole.answer_per_byte_ms, hw(&|c| c.answer_per_byte_ms)),
                (whole.fixed_ms, hw(&|c| c.fixed_ms)),
            )
        };
        let summary = |draws: &[(f64, f64)], truth: f64| {
            let n = draws.len() as f64;
            let mean = draws.iter().map(|d| d.0).sum::<f64>() / n;
            let sd = (draws.iter().map(|d| (d.0 - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let mut hw: Vec<f64> = draws.iter().map(|d| d.1).collect();
            hw.sort_by(f64::total_cmp);
            let median = hw[hw.len() / 2];
            let covered = draws.iter().filter(|d| (d.0 - truth).abs() <= d.1).count() as f64 / n;
            // (95% spread across runs, median interval / that spread, coverage)
            (1.96 * sd, median / (1.96 * sd), covered)
        };
        let runs = 200u64;
        let (new, old): (Vec<Draw>, Vec<Draw>) = (0..runs).map(|s| (now(s), before(s))).unzip();
        let answer = |d: &[Draw]| {
            summary(
                &d.iter().map(|x| x.0).collect::<Vec<_>>(),
                truth.answer_per_byte_ms,
            )
        };
        let fixed =
            |d: &[Draw]| summary(&d.iter().map(|x| x.1).collect::<Vec<_>>(), truth.fixed_ms);
        let (a_new, a_old, f_new, f_old) = (answer(&new), answer(&old), fixed(&new), fixed(&old));
        eprintln!(
            "{planned} rounds: answer per byte spread +-{:.4} us/byte, interval/spread {:.2}, coverage {:.2}; fixed +-{:.1} us, {:.2}, {:.2}",
            a_new.0 * 1e3,
            a_new.1,
            a_new.2,
            f_new.0 * 1e3,
            f_new.1,
            f_new.2
        );
        eprintln!(
            "before ({ROUNDS} rounds, minimum): answer per byte spread +-{:.4} us/byte, interval/spread {:.2}, coverage {:.2}; fixed +-{:.1} us, {:.2}, {:.2}",
            a_old.0 * 1e3,
            a_old.1,
            a_old.2,
            f_old.0 * 1e3,
            f_old.1,
            f_old.2
        );
        // Before: the interval said more than the spread.
        assert!(a_old.1 > 1.25 && f_old.1 > 1.25, "{a_old:?} {f_old:?}");
        for (name, (spread, ratio, coverage), old_spread) in [
            ("answer per byte", a_new, a_old.0),
            ("fixed", f_new, f_old.0),
        ] {
            assert!(
                (0.8..=1.2).contains(&ratio),
                "{name}: interval / spread {ratio}"
            );
            assert!(coverage >= 0.9, "{name}: coverage {coverage}");
            assert!(
                spread < old_spread,
                "{name}: spread {spread} against {old_spread} before"
            );
        }
    }

    #[test]
    fn the_seed_path_has_two_ends_and_three_hops() {
        let t = super::super::lab_file("seed-001-path.toml")
            .unwrap()
            .topology()
            .unwrap();
        let (a, b) = ends(&t).unwrap();
        assert_eq!((a.as_str(), b.as_str()), ("roc", "cbnewsa"));
        let hops = truth::chain(&t, &a, &b).unwrap();
        assert_eq!(hops.len(), SEED_PER_HOP.len());
        // The paper's per-hop figures are the configured ones to the paper's digits.
        let own = perhop::own_costs(&hops.iter().map(|h| h.line).collect::<Vec<_>>());
        for (o, (paper, _)) in own.iter().zip(SEED_PER_HOP) {
            assert!(
                (o.per_byte_ms * 1e3 / paper - 1.0).abs() < 0.001,
                "{o:?} {paper}"
            );
        }
    }
}
