//! `wirespeed load`'s analysis: the seed's seven statistics of each test (computed by the
//! simulator's own `RunStats::from_counters`, so that measurement and model are the same
//! arithmetic), Jain's index, loss at the sink, the shared-segment model beside each row, and
//! the warnings and verdicts judged from them.
//!
//! The excess delay (seed 000 §3.5: "the ideal time to send one packet and wait for each other
//! host to send one packet is subtracted from the measured time") needs the time to send one
//! packet; on a measured host that is the mean delay of the 1-host test of the same lengths, so
//! the ideal for N hosts is N times it, and the excess is left out when the series has no 1-host
//! test.

use anyhow::Context;
use wirespeed_model::load::loss_fraction;
use wirespeed_model::moments::Moments;
use wirespeed_sim::run_stats::HostCounters;
use wirespeed_sim::time::SimSpan;
use wirespeed_sim::{Arrivals, LengthMix, RunStats, Scenario};

use super::result::{HostRow, LoadPlan, LoadResult, Row, Stats, TestRecord};
use super::verdicts::LoadFinding;

impl Stats {
    fn from_run(r: &RunStats, ideal: Option<f64>) -> Stats {
        Stats {
            bits_per_second: r.bits_per_second,
            bits_per_second_std_dev: r.bits_per_second_std_dev,
            packets_per_second: r.packets_per_second,
            packets_per_second_std_dev: r.packets_per_second_std_dev,
            delay_mean_seconds: r.delay_mean_seconds,
            delay_std_dev_seconds: r.delay_std_dev_seconds,
            ideal_delay_seconds: ideal,
            excess_delay_seconds: ideal.map(|i| r.delay_mean_seconds - i),
            jain_fairness: r.jain_fairness,
            per_host_bits_per_second: r.per_host_bits_per_second.clone(),
        }
    }
}

fn scenario(plan: &LoadPlan, hosts: usize, mix: &LengthMix, measure_ns: u64) -> Scenario {
    let mut s = Scenario::seed_long_net(hosts, 64);
    s.lengths = mix.clone();
    s.measure_ns = measure_ns;
    s.seed = plan.seed;
    s.arrivals = match plan.rate_bits_per_second {
        None => Arrivals::Saturated,
        Some(r) => Arrivals::Poisson {
            load: r * hosts as f64 / s.mac.bits_per_second as f64,
        },
    };
    s
}

fn counters(t: &TestRecord) -> Vec<HostCounters> {
    t.agents
        .iter()
        .filter_map(|a| a.report.as_ref())
        .map(|r| HostCounters {
            packets: r.counters.packets,
            charged_bits: r.counters.charged_bits,
            delay: Moments {
                count: r.counters.delay_count,
                sum: r.counters.delay_sum_s,
                sum_of_squares: r.counters.delay_sum_sq_s2,
            },
            ..HostCounters::default()
        })
        .collect()
}

/// The rows of every finished test, in plan order, with the model beside each when
/// `model_ns` is given.
#[doc(hidden)]
pub fn rows(
    plan: &LoadPlan,
    tests: &[TestRecord],
    model_ns: Option<u64>,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for lengths in &plan.lengths {
        let mix = &lengths.0;
        let of_mix: Vec<&TestRecord> = tests.iter().filter(|t| t.lengths == *lengths).collect();
        let measured_run = |t: &TestRecord| {
            let c = counters(t);
            (!c.is_empty()).then(|| {
                let s = scenario(plan, c.len(), mix, plan.schedule.measure_ns);
                RunStats::from_counters(&s, &c, 0, SimSpan::ZERO)
            })
        };
        let single = of_mix
            .iter()
            .find(|t| t.hosts == 1 && t.complete)
            .and_then(|t| measured_run(t))
            .map(|r| r.delay_mean_seconds)
            .filter(|d| d.is_finite());
        for &hosts in &plan.hosts {
            let Some(t) = of_mix.iter().find(|t| t.hosts == hosts) else {
                continue;
            };
            let measured =
                measured_run(t).map(|r| Stats::from_run(&r, single.map(|d| d * r.hosts as f64)));
            let model = model_ns
                .map(|ns| {
                    let s = scenario(plan, hosts, mix, ns);
                    wirespeed_sim::run(&s)
                        .map(|r| Stats::from_run(&r, Some(r.ideal_delay_seconds)))
                        .with_context(|| format!("the model of {hosts} hosts x {lengths}"))
                })
                .transpose()?;
            rows.push(row(plan, t, measured, model));
        }
    }
    Ok(rows)
}

/// The window time an agent says its generator gave up: a peer's figure, so one that is not a
/// time within the window (NaN, negative) is not believed, and more than the window is the
/// window.
fn skipped(r: &wirespeed_net::load::LoadReport, window_s: f64) -> Option<f64> {
    let s = r.skipped_in_window_s;
    (s.is_finite() && s >= 0.0).then(|| s.min(window_s))
}

fn row(plan: &LoadPlan, t: &TestRecord, measured: Option<Stats>, model: Option<Stats>) -> Row {
    let sink = plan
        .sink_host
        .and_then(|h| t.agents.get(h - 1)?.report.as_ref()?.sink.clone());
    let mut sent_total = 0;
    let mut received_total = 0;
    let window_s = plan.schedule.measure_ns as f64 * 1e-9;
    let per_host: Vec<HostRow> = t
        .agents
        .iter()
        .enumerate()
        .map(|(h, a)| {
            let r = a.report.as_ref();
            let loss = match (&sink, r) {
                (Some(s), Some(r)) => {
                    let got = s.received.get(h).copied().unwrap_or(0);
                    sent_total += r.counters.packets;
                    received_total += got.min(r.counters.packets);
                    loss_fraction(r.counters.packets, got)
                }
                _ => None,
            };
            HostRow {
                host: h + 1,
                agent: a.agent.clone(),
                packets: r.map(|r| r.counters.packets),
                send_errors: r.map(|r| r.counters.send_errors),
                loss_at_sink: loss,
                clock_offset_seconds: a.clock.map(|c| c.offset_ns as f64 * 1e-9),
                control_rtt_seconds: a.clock.map(|c| c.rtt_ns as f64 * 1e-9),
                start_lateness_seconds: r.map(|r| r.start_lateness_s),
                skipped_in_window_seconds: r.and_then(|r| skipped(r, window_s)),
                skipped_share_of_window: r.and_then(|r| skipped(r, window_s)).map(|s| s / window_s),
                delay_source: r.map(|r| r.delay_source),
                timestamping: r.and_then(|r| r.timestamping.clone()),
                error: a.error.clone(),
            }
        })
        .collect();
    Row {
        lengths: t.lengths.to_string(),
        hosts: t.hosts,
        reporting_hosts: t.agents.iter().filter(|a| a.report.is_some()).count(),
        complete: t.complete,
        measured,
        delay_source: t
            .agents
            .iter()
            .find_map(|a| a.report.as_ref().map(|r| r.delay_source)),
        loss_at_sink: sink.and_then(|_| loss_fraction(sent_total, received_total)),
        model_shared_10mbit: model,
        per_host,
    }
}

impl LoadResult {
    /// What makes the rows less trustworthy: hosts that did not report, loopback, an
    /// overrun sink, failed sends.
    #[doc(hidden)]
    pub fn warnings(&self, loopback: bool) -> Vec<LoadFinding> {
        let mut w = Vec::new();
        for r in self.rows.iter().filter(|r| !r.complete) {
            for h in r.per_host.iter().filter(|h| h.error.is_some()) {
                w.push(LoadFinding::IncompleteTest {
                    hosts: r.hosts,
                    lengths: r.lengths.clone(),
                    host: h.host,
                    agent: h.agent.clone(),
                    error: h.error.clone().unwrap_or_default(),
                });
            }
        }
        if loopback {
            w.push(LoadFinding::LoopbackNotAMedium);
        }
        w.extend(sink_loss_warnings(&self.rows));
        w.extend(generators_behind(&self.rows));
        let errors: u64 = self
            .rows
            .iter()
            .flat_map(|r| &r.per_host)
            .filter_map(|h| h.send_errors)
            .sum();
        if errors > 0 {
            w.push(LoadFinding::SendErrors {
                send_errors: errors,
            });
        }
        w
    }

    /// The tests of three hosts or more whose hosts shared the medium unfairly.
    pub(crate) fn verdicts(&self) -> Vec<LoadFinding> {
        let mut v = Vec::new();
        for r in &self.rows {
            let Some(j) = r.measured.as_ref().map(|m| m.jain_fairness) else {
                continue;
            };
            if r.hosts >= 3 && j.is_finite() && j < 0.9 {
                v.push(LoadFinding::Unfair {
                    hosts: r.hosts,
                    lengths: r.lengths.clone(),
                    jain_index: j,
                });
            }
        }
        v
    }
}

/// Loss at the sink above this share of a test's in-window packets earns a warning. A counting
/// sink is one thread reading every host's packets; on a path that loses nothing of its own (a
/// LAN, loopback, the lab's segment) a sink that loses more than this is overrun (its socket
/// buffer or its CPU), so the row says what the sink could read, not what the network carried.
pub(crate) const SINK_LOSS_WARNING: f64 = 0.10;

/// One warning per test whose sink lost more than [`SINK_LOSS_WARNING`], saying the share, why
/// it matters and what avoids it.
#[doc(hidden)]
pub fn sink_loss_warnings(rows: &[Row]) -> Vec<LoadFinding> {
    rows.iter()
        .filter_map(|r| {
            let loss = r.loss_at_sink.filter(|l| *l > SINK_LOSS_WARNING)?;
            Some(LoadFinding::SinkOverrun {
                hosts: r.hosts,
                lengths: r.lengths.clone(),
                loss_share: loss,
                limit_share: SINK_LOSS_WARNING,
            })
        })
        .collect()
}

/// A paced generator that gave up more than this share of the measured window's frames earns a
/// warning: its host was too busy to offer the load, and its row's rate falls short by about
/// that share for a reason that is not the network's.
pub(crate) const GENERATOR_BEHIND_WARNING: f64 = 0.01;

/// One warning per host and test whose generator skipped more than [`GENERATOR_BEHIND_WARNING`]
/// of the window, with the time skipped.
#[doc(hidden)]
pub fn generators_behind(rows: &[Row]) -> Vec<LoadFinding> {
    rows.iter()
        .flat_map(|r| {
            r.per_host.iter().filter_map(move |h| {
                let share = h
                    .skipped_share_of_window
                    .filter(|s| *s > GENERATOR_BEHIND_WARNING)?;
                Some(LoadFinding::GeneratorBehind {
                    hosts: r.hosts,
                    lengths: r.lengths.clone(),
                    host: h.host,
                    agent: h.agent.clone(),
                    skipped_seconds: h.skipped_in_window_seconds.unwrap_or(0.0),
                    share_of_window: share,
                })
            })
        })
        .collect()
}

/// Agents whose datagrams did not carry the TOS byte asked for: the report of each agent holds
/// the value its socket read back, and an agent that predates `-S` reports none.
#[doc(hidden)]
pub fn unmarked(tos: Option<u8>, done: &[TestRecord]) -> Vec<LoadFinding> {
    let Some(tos) = tos else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for h in done.iter().flat_map(|t| &t.agents) {
        let Some(r) = &h.report else { continue };
        if r.tos == Some(tos) {
            continue;
        }
        let finding = LoadFinding::TosNotMarked {
            agent: h.agent.clone(),
            asked_tos: tos,
            sent_tos: r.tos,
        };
        if !out.contains(&finding) {
            out.push(finding);
        }
    }
    out
}
