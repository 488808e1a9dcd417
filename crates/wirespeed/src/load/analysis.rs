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
pub(crate) fn rows(
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
    pub(crate) fn warnings(&self, loopback: bool) -> Vec<LoadFinding> {
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
pub(crate) fn sink_loss_warnings(rows: &[Row]) -> Vec<LoadFinding> {
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
pub(crate) fn generators_behind(rows: &[Row]) -> Vec<LoadFinding> {
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
pub(crate) fn unmarked(tos: Option<u8>, done: &[TestRecord]) -> Vec<LoadFinding> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::RUNS_SCHEMA;
    use crate::load::result::HostRecord;
    use wirespeed_model::RateFormat;
    use wirespeed_model::load::DelaySource;
    use wirespeed_model::load::{LoadCounters, Schedule};
    use wirespeed_net::load::{LoadReport, SinkCounts};
    use wirespeed_report::Render;

    const SECOND: u64 = 1_000_000_000;

    fn plan(hosts: Vec<usize>) -> LoadPlan {
        LoadPlan {
            schema: RUNS_SCHEMA.into(),
            agents: vec!["loopback".into(); 3],
            hosts,
            lengths: vec![LengthMix::Fixed { bytes: 1536 }.into()],
            schedule: Schedule {
                measure_ns: 2 * SECOND,
                ..Schedule::SEED
            },
            rate_bits_per_second: None,
            sink_host: Some(1),
            seed: 1,
            raw: None,
            tos: None,
        }
    }

    /// A host that sent `packets` 1536-byte packets in the window, each delayed `delay` s.
    fn host(packets: u64, delay: f64, sink: Option<Vec<u64>>) -> HostRecord {
        let mut c = LoadCounters::default();
        for _ in 0..packets {
            c.add_packet(1536);
            c.add_delay(delay);
        }
        HostRecord {
            agent: "127.0.0.1:1".into(),
            clock: None,
            report: Some(LoadReport {
                counters: c,
                delay_source: DelaySource::AroundSendCall,
                clock: "CLOCK_MONOTONIC".into(),
                start_lateness_s: 0.0,
                skipped_in_window_s: 0.0,
                sink: sink.map(|received| SinkCounts {
                    received,
                    strays: 0,
                    foreign: 0,
                }),
                timestamping: None,
                interface: None,
                tos: None,
            }),
            error: None,
        }
    }

    #[test]
    fn the_seven_statistics_from_synthetic_reports() {
        let mix = LengthMix::Fixed { bytes: 1536 };
        let tests = vec![
            TestRecord {
                hosts: 1,
                lengths: mix.clone().into(),
                complete: true,
                agents: vec![host(1000, 0.001, Some(vec![1000]))],
            },
            TestRecord {
                hosts: 3,
                lengths: mix.clone().into(),
                complete: false,
                agents: vec![
                    host(600, 0.004, Some(vec![600, 300])),
                    host(400, 0.002, None),
                    HostRecord {
                        agent: "127.0.0.1:3".into(),
                        clock: None,
                        report: None,
                        error: Some("the agent closed the connection mid-test".into()),
                    },
                ],
            },
        ];
        let rows = rows(&plan(vec![1, 3]), &tests, None).unwrap();
        assert_eq!(rows.len(), 2);
        let one = rows[0].measured.as_ref().unwrap();
        // 1000 packets of (1536 + 24) * 8 bits in 2 s.
        assert!((one.bits_per_second - 1000.0 * 12_480.0 / 2.0).abs() < 1e-6);
        assert_eq!(one.excess_delay_seconds, Some(0.0));
        assert_eq!(rows[0].loss_at_sink, Some(0.0));

        let three = &rows[1];
        assert!(!three.complete);
        assert_eq!(three.reporting_hosts, 2);
        let m = three.measured.as_ref().unwrap();
        // Per-host packet rates 300/s and 200/s: sum 500, population sd 50.
        assert!((m.packets_per_second - 500.0).abs() < 1e-9);
        assert!((m.packets_per_second_std_dev - 50.0).abs() < 1e-9);
        // Jain of 3:2 = 25 / (2 * 13).
        assert!((m.jain_fairness - 25.0 / 26.0).abs() < 1e-12);
        // Delays pooled per packet: (600 * 4 ms + 400 * 2 ms) / 1000 = 3.2 ms, sd 0.98 ms.
        assert!((m.delay_mean_seconds - 0.0032).abs() < 1e-12);
        assert!((m.delay_std_dev_seconds - 0.24f64.sqrt() * 0.002).abs() < 1e-9);
        // Ideal for the 2 hosts that reported: 2 x the 1-host delay of 1 ms.
        assert!((m.excess_delay_seconds.unwrap() - 0.0012).abs() < 1e-12);
        // The sink (host 1) got all 600 of its own and 300 of host 2's 400.
        assert_eq!(three.per_host[1].loss_at_sink, Some(0.25));
        assert_eq!(three.loss_at_sink, Some(0.1));
        assert!(three.per_host[2].error.is_some());
        let result = LoadResult {
            results_file: None,
            rows,
            rate_format: RateFormat::default(),
        };
        let warnings: Vec<String> = result
            .warnings(false)
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert!(warnings[0].contains("incomplete test (3 hosts x 1536): host 3"));
        // 10% lost at the sink is within what a counting sink may lose.
        assert!(
            !warnings.iter().any(|w| w.contains("the sink lost")),
            "{warnings:?}"
        );
        let mut text = Vec::new();
        result.render(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("INCOMPLETE 2/3"), "{text}");
    }

    /// A sink that lost more than the stated share is named with the share and the reason;
    /// one within it is not.
    #[test]
    fn a_sink_that_lost_more_than_a_tenth_is_warned_of() {
        let mix = LengthMix::Fixed { bytes: 1536 };
        let tests = vec![
            TestRecord {
                hosts: 1,
                lengths: mix.clone().into(),
                complete: true,
                agents: vec![host(1000, 0.001, Some(vec![950]))],
            },
            TestRecord {
                hosts: 2,
                lengths: mix.clone().into(),
                complete: true,
                agents: vec![
                    host(1000, 0.001, Some(vec![600, 200])),
                    host(1000, 0.001, None),
                ],
            },
        ];
        let rows = rows(&plan(vec![1, 2]), &tests, None).unwrap();
        let typed = sink_loss_warnings(&rows);
        assert_eq!(
            typed,
            [LoadFinding::SinkOverrun {
                hosts: 2,
                lengths: "1536".into(),
                loss_share: rows[1].loss_at_sink.unwrap(),
                limit_share: 0.1,
            }]
        );
        let w: Vec<String> = typed.iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("2 hosts x 1536: the sink lost 60%"),
            "{w:?}"
        );
        assert!(w[0].contains("more than the 10% a counting sink"), "{w:?}");
        assert!(w[0].contains("overrun") && !w[0].contains("  "), "{w:?}");
        let result = LoadResult {
            results_file: None,
            rows,
            rate_format: RateFormat::default(),
        };
        assert!(result.warnings(false).contains(&typed[0]));
    }

    /// A generator that gave up more than 1% of the window behind its schedule is named with
    /// the time and share it skipped (the window is 2 s here); one at 1% or under is not.
    #[test]
    fn a_generator_that_fell_behind_its_schedule_is_warned_of() {
        let mix = LengthMix::Fixed { bytes: 1536 };
        let behind = |skipped: f64| {
            let mut h = host(1000, 0.001, None);
            h.report.as_mut().unwrap().skipped_in_window_s = skipped;
            h
        };
        let tests = vec![
            TestRecord {
                hosts: 1,
                lengths: mix.clone().into(),
                complete: true,
                agents: vec![behind(0.02)],
            },
            TestRecord {
                hosts: 2,
                lengths: mix.clone().into(),
                complete: true,
                agents: vec![behind(0.0), behind(0.1)],
            },
        ];
        let rows = rows(&plan(vec![1, 2]), &tests, None).unwrap();
        assert_eq!(rows[1].per_host[1].skipped_share_of_window, Some(0.05));
        // A hostile or broken agent's figure: NaN is not believed, a year is the window.
        let odd = vec![TestRecord {
            hosts: 2,
            lengths: mix.clone().into(),
            complete: true,
            agents: vec![behind(f64::NAN), behind(3e7)],
        }];
        let odd = super::rows(&plan(vec![2]), &odd, None).unwrap();
        assert_eq!(odd[0].per_host[0].skipped_share_of_window, None);
        assert_eq!(odd[0].per_host[1].skipped_share_of_window, Some(1.0));
        let typed = generators_behind(&rows);
        assert_eq!(
            typed,
            [LoadFinding::GeneratorBehind {
                hosts: 2,
                lengths: "1536".into(),
                host: 2,
                agent: "127.0.0.1:1".into(),
                skipped_seconds: 0.1,
                share_of_window: 0.05,
            }]
        );
        let w = typed[0].to_string();
        assert!(
            w.starts_with("2 hosts x 1536: host 2's generator (127.0.0.1:1) fell more than 10 ms"),
            "{w}"
        );
        assert!(
            w.contains("gave up 100.0 ms of the measured window (5.0%)"),
            "{w}"
        );
        assert!(!w.contains("  "), "{w}");
        let result = LoadResult {
            results_file: None,
            rows,
            rate_format: RateFormat::default(),
        };
        assert!(result.warnings(false).contains(&typed[0]));
    }
}
