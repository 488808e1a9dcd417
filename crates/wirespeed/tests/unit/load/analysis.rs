use wirespeed::load::RUNS_SCHEMA;
use wirespeed::load::analysis::*;
use wirespeed::load::result::HostRecord;
use wirespeed::load::result::{LoadPlan, LoadResult, TestRecord};
use wirespeed::load::verdicts::LoadFinding;
use wirespeed_model::RateFormat;
use wirespeed_model::load::DelaySource;
use wirespeed_model::load::{LoadCounters, Schedule};
use wirespeed_net::load::{LoadReport, SinkCounts};
use wirespeed_report::Render;
use wirespeed_sim::LengthMix;

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
    let odd = wirespeed::load::analysis::rows(&plan(vec![2]), &odd, None).unwrap();
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
