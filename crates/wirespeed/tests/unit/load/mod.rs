mod analysis;
mod brief;
mod metrics;
mod result;
mod verdicts;

use clap::Parser;
use std::net::SocketAddr;
use std::time::Duration;
use wirespeed::common::runs_file::RunsFile;
use wirespeed::load::analysis::unmarked;
use wirespeed::load::measure::{agent_address, deck, to_do, validate};
use wirespeed::load::result::{HostRecord, Lengths, LoadPlan, TestRecord};
use wirespeed::load::result::{mix_spec, parse_mix};
use wirespeed::load::verdicts::LoadFinding;
use wirespeed::load::*;
use wirespeed_model::load::Schedule;
use wirespeed_net::load::LoadReport;
use wirespeed_net::load::RawEthernet;
use wirespeed_sim::LengthMix;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: LoadArgs,
}

fn parse(argv: &[&str]) -> Result<LoadArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("load").chain(argv.iter().copied())).map(|c| c.args)
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    Config::try_from(&parse(argv)?)
}

/// Issue 30: a library caller runs a series with the constructor and `measure` alone (two
/// in-process agents, 512-byte packets, tests of 0.4 s) and gets one row per host count
/// with what each host sent; a schedule no test can keep is refused before any agent.
#[test]
fn a_library_caller_runs_a_loopback_series() {
    let short = Schedule {
        settle_ns: 50_000_000,
        transmit_ns: 300_000_000,
        measure_ns: 150_000_000,
        cooldown_ns: 50_000_000,
    };
    let config = wirespeed::load::Config::loopback(2, vec![LengthMix::Fixed { bytes: 512 }])
        .with_schedule(short)
        .without_model();
    let measured = wirespeed::load::measure(&config).unwrap();
    assert!(!measured.interrupted);
    assert_eq!(measured.finished, 2);
    let rows: &[wirespeed::load::Row] = &measured.doc.result.rows;
    assert_eq!(rows.iter().map(|r| r.hosts).collect::<Vec<_>>(), [1, 2]);
    for row in rows {
        assert!(row.complete && row.model_shared_10mbit.is_none(), "{row:?}");
        let sent = row.per_host.iter().map(|h| h.packets.unwrap_or(0));
        assert!(sent.clone().all(|p| p > 0), "{row:?}");
    }
    let empty_window = Schedule {
        measure_ns: 0,
        ..short
    };
    let err = wirespeed::load::measure(
        &wirespeed::load::Config::loopback(1, vec![LengthMix::Fixed { bytes: 64 }])
            .with_schedule(empty_window),
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("--measure"), "{err:#}");
    let err =
        wirespeed::load::measure(&wirespeed::load::Config::loopback(0, Vec::new())).unwrap_err();
    assert!(format!("{err:#}").contains("--local 0"), "{err:#}");
    let err =
        wirespeed::load::measure(&wirespeed::load::Config::loopback(1, Vec::new())).unwrap_err();
    assert!(format!("{err:#}").contains("no packet lengths"), "{err:#}");
}

/// A new series' plan is the flags', for the agents given: hosts 1 to N by default,
/// agents named by address (or "loopback"), the model's time carried as a duration.
#[test]
fn the_config_holds_the_plan_for_the_agents_given() {
    let c = config(&["--local", "3", "--seed", "9", "-b", "2M"]).unwrap();
    assert_eq!(c.agents, AgentSource::Local(3));
    let PlanSource::New { plan, results } = &c.plan else {
        panic!("a new plan")
    };
    assert_eq!(plan.hosts, [1, 2, 3]);
    assert_eq!(plan.agents, ["loopback"; 3]);
    assert_eq!((plan.seed, plan.rate_bits_per_second), (9, Some(2e6)));
    assert!(results.is_none());
    assert_eq!(c.model_time, Some(Duration::from_secs(2)));
    assert_eq!(config(&["--no-model"]).unwrap().model_time, None);
    let err = config(&["--model-time", "2h"]).unwrap_err().to_string();
    assert!(err.contains("--model-time 2h"), "{err}");
    assert!(config(&["--model-time", "2h", "--no-model"]).is_ok());
    let c = config(&["--agent", "127.0.0.1:7", "--agent", "::1"]).unwrap();
    let addrs: Vec<SocketAddr> = vec![
        "127.0.0.1:7".parse().unwrap(),
        "[::1]:5210".parse().unwrap(),
    ];
    assert_eq!(c.agents, AgentSource::Remote(addrs));
    let PlanSource::New { plan, .. } = &c.plan else {
        panic!("a new plan")
    };
    assert_eq!(plan.agents, ["127.0.0.1:7", "[::1]:5210"]);
    assert!(matches!(
        config(&["--resume", "r.jsonl"]).unwrap().plan,
        PlanSource::Resume(_)
    ));
}

/// What no agent could run is refused by the config, before any agent starts or any file
/// is made.
#[test]
fn the_config_refuses_a_plan_the_agents_cannot_run() {
    let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
    assert!(refused(&["--local", "2", "--hosts", "1-3"]).contains("--hosts goes up to 3"));
    assert!(refused(&["--hosts", "2,3", "--sink", "3"]).contains("--sink 3"));
    assert!(refused(&["--raw", "--sink", "1"]).contains("leave out --sink"));
    assert!(refused(&["--measure", "3s", "-t", "1s"]).contains("--settle/--transmit"));
    assert!(refused(&["--agent", "[fe80::1%lo]:5210"]).contains("a zone names a link"));
    assert!(refused(&["--plot", "/nonexistent-dir/plots"]).contains("--plot"));
    let results = std::env::temp_dir().join(format!("ws-load-config-{}", std::process::id()));
    let path = results.to_str().unwrap();
    assert!(refused(&["--local", "1", "--hosts", "2", "--results", path]).contains("--hosts"));
    assert!(!results.exists(), "a refused series leaves no results file");
}

/// A plain `wirespeed load` (4 local agents: hosts 1 to 4, four lengths, 16 tests) ends
/// within a minute; the seed's 30 s tests are one flag away, and a part given overrides it.
#[test]
fn the_default_series_fits_in_a_minute_and_the_seeds_is_one_flag_away() {
    let a = parse(&[]).unwrap();
    assert_eq!(a.sink, SinkArg::Own);
    assert_eq!(a.local, 4);
    let tests = a.local as usize * a.lengths.0.len();
    assert_eq!(tests, 16);
    let series = test_length(&a.schedule()) * tests as u32;
    assert!(series <= Duration::from_secs(45), "{series:?}");
    a.schedule().validate().unwrap();
    let seed = parse(&["--seed-schedule"]).unwrap().schedule();
    assert_eq!(seed, Schedule::SEED);
    assert_eq!(test_length(&seed), Duration::from_secs(30));
    let mixed = parse(&["--seed-schedule", "-t", "4s"]).unwrap().schedule();
    assert_eq!(
        (mixed.settle_ns, mixed.transmit_ns, mixed.measure_ns),
        (5_000_000_000, 4_000_000_000, 2_000_000_000)
    );
    let window = parse(&["--measure", "0.5s"]).unwrap().schedule();
    assert_eq!(window.measure_ns, 500_000_000);
    assert!(parse(&["--resume", "f", "--seed-schedule"]).is_err());
}

/// The time left, counted down from the schedule over a whole series in which every test
/// runs a little past its schedule (connections, clock reading, reports): it never rises,
/// not while a test runs nor when one ends, and it reaches zero at the end.
#[test]
fn the_time_left_counts_down_over_a_series() {
    use wirespeed::common::progress::scheduled_remaining;
    let a = parse(&["--hosts", "1-3", "--lengths", "64,1536"]).unwrap();
    let per_test = test_length(&a.schedule());
    let total = 6u64;
    let overrun = Duration::from_millis(300);
    let mut previous = scheduled_remaining(per_test, 0, total, Duration::ZERO);
    assert_eq!(previous, per_test * 6);
    for done in 0..total {
        let mut into = Duration::ZERO;
        while into <= per_test + overrun {
            let left = scheduled_remaining(per_test, done, total, into);
            assert!(
                left <= previous,
                "{done} done, {into:?} in: {left:?} after {previous:?}"
            );
            previous = left;
            into += Duration::from_millis(100);
        }
    }
    assert_eq!(
        scheduled_remaining(per_test, total, total, Duration::ZERO),
        Duration::ZERO
    );
}

#[test]
fn agents_that_did_not_mark_are_named_once() {
    let report = |tos: Option<u8>| LoadReport {
        counters: Default::default(),
        delay_source: wirespeed_model::load::DelaySource::AroundSendCall,
        clock: "CLOCK_MONOTONIC".into(),
        start_lateness_s: 0.0,
        skipped_in_window_s: 0.0,
        sink: None,
        timestamping: None,
        interface: None,
        tos,
    };
    let host = |agent: &str, tos: Option<u8>| HostRecord {
        agent: agent.into(),
        clock: None,
        report: Some(report(tos)),
        error: None,
    };
    let test = TestRecord {
        hosts: 3,
        lengths: LengthMix::Fixed { bytes: 64 }.into(),
        complete: true,
        agents: vec![host("a", Some(0xb8)), host("b", None), host("c", Some(0))],
    };
    let done = vec![test.clone(), test];
    assert!(unmarked(None, &done).is_empty());
    let typed = unmarked(Some(0xb8), &done);
    assert_eq!(
        typed[1],
        LoadFinding::TosNotMarked {
            agent: "c".into(),
            asked_tos: 0xb8,
            sent_tos: Some(0),
        }
    );
    let w: Vec<String> = typed.iter().map(ToString::to_string).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("agent b") && w[0].contains("older than -S"),
        "{w:?}"
    );
    assert!(w[1].contains("agent c") && w[1].contains("0x00"), "{w:?}");
}

/// A results file as `load` wrote it before its plan was typed (mixes as text) resumes: its
/// mixes read back typed, its finished test is matched to the plan by value and not run
/// again, and the plan writes back to the same line.
#[test]
fn a_results_file_written_with_text_mixes_resumes() {
    let plan_line = r#"{"schema":"wirespeed.load-runs.v1","agents":["loopback","loopback"],"hosts":[1,2],"lengths":["64","6/2","64:6+1536:2"],"schedule":{"settle_ns":0,"transmit_ns":300000000,"measure_ns":100000000,"cooldown_ns":100000000},"rate_bits_per_second":1000000.0,"sink_host":null,"seed":7}"#;
    let test_line = r#"{"hosts":2,"lengths":"6/2","complete":true,"agents":[{"agent":"127.0.0.1:1","clock":null,"report":null,"error":null}]}"#;
    let dir = std::env::temp_dir().join(format!("ws-load-old-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("old.jsonl");
    std::fs::write(&path, format!("{plan_line}\n{test_line}\n")).unwrap();
    let resumed = RunsFile::resume::<LoadPlan, TestRecord>(&path);
    let _ = std::fs::remove_dir_all(&dir);
    let resumed = resumed.unwrap();
    let plan = resumed.plan;
    assert_eq!(
        plan.lengths,
        [
            LengthMix::Fixed { bytes: 64 }.into(),
            LengthMix::seed_ratio(6, 2).into(),
            Lengths(LengthMix::Weighted {
                lengths: vec![(64, 6.0), (1536, 2.0)]
            }),
        ]
    );
    assert!(validate(&plan, 2).is_ok());
    let todo: Vec<String> = to_do(&plan, &resumed.runs)
        .iter()
        .map(|(h, m)| format!("{h}x{m}"))
        .collect();
    assert_eq!(
        todo,
        ["1x64", "2x64", "1x6/2", "1x64:6+1536:2", "2x64:6+1536:2"]
    );
    assert_eq!(serde_json::to_string(&plan).unwrap(), plan_line);
    assert_eq!(serde_json::to_string(&resumed.runs[0]).unwrap(), test_line);
}

#[test]
fn sinks_agents_and_mixes_parse() {
    assert_eq!(parse_sink("2"), Ok(SinkArg::Host(2)));
    assert!(parse_sink("0").is_err() && parse_sink("here").is_err());
    assert!(parse(&["--lengths", "64,huge"]).is_err());
    // The plan of a resumed series is the file's; flags that would change it are refused.
    assert!(parse(&["--resume", "f", "--local", "2", "--no-model"]).is_ok());
    assert!(parse(&["--resume", "f", "--lengths", "64"]).is_err());
    assert!(parse(&["--resume", "f", "--transmit", "1s"]).is_err());
    assert!(parse(&["--agent", "::1", "--local", "2"]).is_err());
    assert!(parse(&["--agent", "::1"]).is_ok());
    assert_eq!(
        parse(&["--raw"]).unwrap().raw,
        Some(RawEthernet { interface: None })
    );
    assert_eq!(
        parse(&["--raw", "eth0"]).unwrap().raw,
        Some(RawEthernet {
            interface: Some("eth0".into())
        })
    );
    assert!(parse(&["--raw", "a/b"]).is_err());
    assert!(parse(&["--resume", "f", "--raw"]).is_err());
    assert!(parse(&["--resume", "f", "-S", "ef"]).is_err());
    assert_eq!(parse(&[]).unwrap().raw, None);
    assert_eq!(
        agent_address("127.0.0.1").unwrap(),
        "127.0.0.1:5210".parse().unwrap()
    );
    assert_eq!(
        agent_address("[::1]:7").unwrap(),
        "[::1]:7".parse().unwrap()
    );
    let mix = LengthMix::Weighted {
        lengths: vec![(64, 6.0), (1536, 2.0)],
    };
    assert_eq!(mix_spec(&mix), "64:6+1536:2");
    assert_eq!(parse_mix(&mix_spec(&mix)).unwrap(), mix);
    assert_eq!(deck(&LengthMix::seed_ratio(6, 2)).unwrap().cards.len(), 8);
}
