mod agent_runner;
mod brief;
mod html;
mod metrics;

use anyhow::bail;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wirespeed::common::progress::Progress;
use wirespeed::common::runs_file::RunsFile;
use wirespeed::sweep::measure::{PathProbe, PointRequest, PointRunner};
use wirespeed::sweep::measure::{Results, build_report, ethernet, execute, path_facts};
use wirespeed::sweep::result::RUNS_SCHEMA;
use wirespeed::sweep::result::SweepPlan;
use wirespeed::sweep::*;
use wirespeed_lab::inside::RoutePair;
use wirespeed_model::BitRate;
use wirespeed_model::IpVersion;
use wirespeed_model::sweep::{self, Axis};
use wirespeed_model::sweep::{BufferSize, PlannedRun, RunRecord};

fn parse(argv: &[&str]) -> Result<SweepArgs, clap::Error> {
    crate::unit::parse_flags("sweep", argv)
}

/// The command's glue without its agent: the flags checked, then the sweep on `runner`.
fn run(
    args: SweepArgs,
    runner: &mut dyn PointRunner,
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    wirespeed::sweep::run(&args, &config, runner, stop)
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    Config::try_from(&parse(argv)?)
}

/// Each setting is carried once, in its type: the receive axis defaults to the send
/// axis, -t replaces -n, and --resume leaves the plan to its file.
#[test]
fn the_config_holds_the_plan_the_flags_ask_for() {
    let c = config(&["--snd", "1,2,4", "-n", "1MiB", "-l", "64KiB", "--seed", "3"]).unwrap();
    assert_eq!(c.length_bytes, 65536);
    assert!(c.agent.is_none() && c.auth.is_none());
    let PlanSource::New(new) = &c.plan else {
        panic!("a new plan")
    };
    assert_eq!(new.rcv.0.len(), 3, "--rcv defaults to --snd");
    assert_eq!(new.transfer, Transfer::Bytes(1 << 20));
    assert_eq!(new.seed, Some(3));
    assert_eq!(new.budget, Duration::from_secs(3600));
    let PlanSource::New(new) = config(&["-t", "2s"]).unwrap().plan else {
        panic!("a new plan")
    };
    assert_eq!(new.transfer, Transfer::Time(Duration::from_secs(2)));
    let resumed = config(&["--resume", "f.jsonl"]).unwrap();
    assert!(matches!(&resumed.plan, PlanSource::Resume(p) if p == Path::new("f.jsonl")));
    let link = config(&["--link-rate", "10M", "--half-duplex", "--ack-every", "1"])
        .unwrap()
        .link;
    assert_eq!(
        link,
        LinkGiven {
            rate: Some(BitRate::from_bits_per_second(10_000_000)),
            half_duplex: true,
            ack_every: 1,
        }
    );
}

/// The refusals a flag needs, each before any run, in one line naming the fix.
#[test]
fn the_config_refuses_what_no_sweep_can_run() {
    let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
    assert!(refused(&["-n", "0"]).contains("-n 0 sends nothing"));
    assert!(refused(&["-l", "0"]).contains("-l must be between 1 byte and 4 GiB"));
    assert!(refused(&["-l", "5GiB"]).contains("-l must be between"));
    assert!(refused(&["--csv", "/nonexistent-dir/x.csv"]).contains("--csv"));
    assert!(refused(&["-6", "127.0.0.1"]).contains("-6 asks for IPv6"));
    assert!(refused(&["127.0.0.1:9", "-p", "10"]).contains("two ports"));
    // --resume sends what its plan says: -n is not asked about.
    assert!(config(&["--resume", "f", "-l", "1"]).is_ok());
    let c = config(&["127.0.0.1:7000"]).unwrap();
    assert_eq!(c.agent, Some("127.0.0.1:7000".parse().unwrap()));
}

/// Issue 31: on loopback the BDP verdict read "the lowest round trip the kernel saw,
/// 0.00 ms": a round trip under a millisecond is printed in microseconds.
#[test]
fn a_round_trip_under_a_millisecond_is_printed_in_microseconds() {
    assert_eq!(wirespeed::sweep::text::round_trip(22e-6), "22 us");
    assert_eq!(wirespeed::sweep::text::round_trip(4.5e-6), "4.5 us");
    assert_eq!(wirespeed::sweep::text::round_trip(999.4e-6), "999 us");
    assert_eq!(wirespeed::sweep::text::round_trip(34.85e-3), "34.85 ms");
    assert_eq!(wirespeed::sweep::text::round_trip(1e-3), "1.00 ms");
}

/// Issue 15 item 4: at the ceiling, the data direction's wire runs at the link rate, not
/// above it (full duplex: the ACKs go the other way; half duplex: they share the medium).
#[test]
fn the_wire_rate_at_the_ceiling_is_the_link_rate() {
    for duplex in [&[][..], &["--half-duplex"][..]] {
        let mut argv = vec!["--link-rate", "10M"];
        argv.extend_from_slice(duplex);
        let args = parse(&argv).unwrap();
        let config = Config::try_from(&args).unwrap();
        let (ceiling, factor) = ethernet(&config.link, args.link_rate.unwrap(), 1448);
        let wire_bits = ceiling.unwrap() * factor * 8.0;
        assert!((wire_bits - 10e6).abs() < 1.0, "{duplex:?}: {wire_bits}");
    }
}

/// A runner whose rate is window-limited: rate = min(snd, rcv) / 1 ms, capped at 100 MB/s.
struct WindowModel {
    calls: Vec<PointRequest>,
    fail_after: Option<usize>,
}

impl PointRunner for WindowModel {
    fn target(&self) -> String {
        "model".into()
    }
    fn probe(&mut self) -> anyhow::Result<PathProbe> {
        Ok(PathProbe {
            mss: 1000,
            lowest_rtt_seconds: Some(1e-3),
            bytes_per_second: Some(1e8),
        })
    }
    fn run(&mut self, point: &PointRequest) -> anyhow::Result<RunRecord> {
        if self.fail_after == Some(self.calls.len()) {
            bail!("peer went away");
        }
        self.calls.push(*point);
        let rate = (point.snd_bytes.min(point.rcv_bytes) as f64 / 1e-3).min(1e8);
        let bytes = point.transfer_bytes.unwrap_or(1_000_000);
        Ok(RunRecord {
            snd_index: 0,
            rcv_index: 0,
            rep: 0,
            snd_requested_bytes: point.snd_bytes,
            rcv_requested_bytes: point.rcv_bytes,
            snd_granted_bytes: 2 * point.snd_bytes,
            rcv_granted_bytes: 2 * point.rcv_bytes,
            bytes,
            seconds: bytes as f64 / rate,
            kernel: None,
            max_write_seconds: 0.0,
            sender_cpu_percent: 5.0,
            receiver_cpu_percent: 5.0,
        })
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ws-sweep-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    dir
}

/// Issue 30: a library caller runs a sweep with the constructor and `measure` alone (two
/// buffer sizes on loopback, one 64 KiB run each), gets the typed document back, and finds
/// every run in its results file; a config no sweep can run is refused before any run.
#[test]
fn a_library_caller_runs_a_loopback_sweep() {
    let path = temp("library");
    let config = wirespeed::sweep::Config::loopback("2,4".parse().unwrap(), &path)
        .with_reps(1)
        .with_bytes_per_run(64 * 1024)
        .with_seed(7);
    let measured = wirespeed::sweep::measure(&config).unwrap();
    assert!(measured.stopped.is_none());
    assert_eq!(measured.path, path);
    let report: &wirespeed::sweep::SweepReport = &measured.doc.result;
    assert!(report.complete);
    assert_eq!((report.runs.len(), report.plan.seed), (4, 7));
    assert!(
        report
            .runs
            .iter()
            .all(|r| r.bytes >= 64 * 1024 && r.seconds > 0.0),
        "{:?}",
        report.runs
    );
    let kept = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
    assert_eq!(kept.runs.len(), 4);
    drop(kept);
    let _ = std::fs::remove_file(&path);
    let refused = temp("library-refused");
    for (config, said) in [
        (
            wirespeed::sweep::Config::loopback("2".parse().unwrap(), &refused).with_reps(0),
            "--reps 0",
        ),
        (
            wirespeed::sweep::Config::loopback("2".parse().unwrap(), &refused)
                .with_bytes_per_run(0),
            "-n 0 sends nothing",
        ),
        (
            wirespeed::sweep::Config::loopback(Axis(vec![BufferSize::Packets(1); 1025]), &refused),
            "a buffer axis of 1025 sizes",
        ),
    ] {
        let err = wirespeed::sweep::measure(&config).unwrap_err();
        assert!(format!("{err:#}").contains(said), "{err:#}");
    }
    assert!(!refused.exists(), "a refused sweep leaves no file");
}

#[test]
fn flags_parse() {
    let a = parse(&[
        "--snd", "1..4", "--rcv", "2,4", "--reps", "2", "-n", "1MiB", "--seed", "7",
    ])
    .unwrap();
    assert_eq!(a.snd.0.len(), 4);
    assert_eq!(a.rcv.unwrap().0.len(), 2);
    assert_eq!(a.bytes.bytes(), 1 << 20);
    assert!(
        parse(&["--snd", "5..1"])
            .unwrap_err()
            .to_string()
            .contains("buffer axis")
    );
    assert!(parse(&["--reps", "0"]).is_err());
    assert!(parse(&["-n", "1MiB", "-t", "1s"]).is_err());
    assert!(parse(&["--half-duplex"]).is_err(), "needs --link-rate");
}

#[test]
fn every_point_runs_reps_times_and_resume_finishes_the_rest() {
    let path = temp("resume");
    let args = parse(&[
        "--snd",
        "1..3",
        "--reps",
        "2",
        "-n",
        "100kB",
        "--seed",
        "9",
        "--json",
        "--results",
        path.to_str().unwrap(),
    ])
    .unwrap();
    let mut failing = WindowModel {
        calls: Vec::new(),
        fail_after: Some(7),
    };
    let err = run(args.clone(), &mut failing, &|| false).unwrap_err();
    assert!(format!("{err:#}").contains("peer went away"));
    let kept = RunsFile::resume::<SweepPlan, RunRecord>(&path)
        .unwrap()
        .runs;
    assert_eq!(kept.len(), 7, "every finished run is kept");

    let resume = parse(&["--resume", path.to_str().unwrap(), "--json"]).unwrap();
    let mut rest = WindowModel {
        calls: Vec::new(),
        fail_after: None,
    };
    run(resume, &mut rest, &|| false).unwrap();
    assert_eq!(rest.calls.len(), 18 - 7, "resume runs only what is missing");
    let resumed = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
    let (plan, all) = (resumed.plan, resumed.runs);
    assert_eq!(plan.seed, 9);
    let mut seen: Vec<(usize, usize, u32)> = all
        .iter()
        .map(|r| (r.snd_index, r.rcv_index, r.rep))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 18, "3 x 3 points x 2 reps, each exactly once");
    let order: Vec<PlannedRun> = all
        .iter()
        .map(|r| PlannedRun {
            snd_index: r.snd_index,
            rcv_index: r.rcv_index,
            rep: r.rep,
        })
        .collect();
    assert_eq!(
        order,
        sweep::plan(3, 3, 2, 9),
        "the runs followed the seeded order"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn an_interrupt_keeps_the_finished_runs_and_names_the_command_that_resumes() {
    let path = temp("interrupt");
    let args = parse(&[
        "--snd",
        "1..3",
        "--reps",
        "2",
        "-n",
        "100kB",
        "--seed",
        "5",
        "-f",
        "K",
        "--results",
        path.to_str().unwrap(),
    ])
    .unwrap();
    let mut model = WindowModel {
        calls: Vec::new(),
        fail_after: None,
    };
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 5
    };
    let err = run(args, &mut model, &stop).unwrap_err();
    let stopped = err
        .downcast_ref::<wirespeed::common::interrupt::Interrupted>()
        .expect("an interrupt, not a failure");
    assert!(
        stopped.message.contains("5 of 18 runs"),
        "{}",
        stopped.message
    );
    let command = stopped.resume.clone().expect("sweep can resume");
    assert!(
        command.ends_with(&format!(
            "sweep -l 131072 --ack-every 2 -f K --resume {}",
            path.display()
        )),
        "{command}"
    );
    assert_eq!(model.calls.len(), 5, "no run starts after the interrupt");
    let resumed = RunsFile::resume::<SweepPlan, RunRecord>(&path).unwrap();
    assert_eq!(resumed.runs.len(), 5);
    drop(resumed);
    // The printed command, fed back, finishes the sweep.
    let words: Vec<&str> = command.split(' ').skip(2).collect();
    let mut rest = WindowModel {
        calls: Vec::new(),
        fail_after: None,
    };
    run(parse(&words).unwrap(), &mut rest, &|| false).unwrap();
    assert_eq!(rest.calls.len(), 13);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn resume_refuses_the_flags_its_plan_fixes() {
    for flag in [
        &["--snd", "1..4"][..],
        &["--rcv", "1,2"],
        &["--reps", "2"],
        &["-n", "1MiB"],
        &["-t", "1s"],
        &["-M", "1460"],
        &["--seed", "3"],
    ] {
        let mut argv = vec!["--resume", "f"];
        argv.extend_from_slice(flag);
        assert!(parse(&argv).is_err(), "{flag:?} with --resume");
    }
}

/// A runner on a T1-like path: its probe says what issue 31's path said, and any run
/// fails (the tests below only need to know whether one started).
struct SlowPath {
    runs: usize,
    route: Option<RoutePair>,
}

impl PointRunner for SlowPath {
    fn target(&self) -> String {
        "slow".into()
    }
    fn probe(&mut self) -> anyhow::Result<PathProbe> {
        Ok(PathProbe {
            mss: 1448,
            lowest_rtt_seconds: Some(0.026),
            bytes_per_second: Some(150_000.0),
        })
    }
    fn lab_route(&self) -> Option<RoutePair> {
        self.route.clone()
    }
    fn run(&mut self, _: &PointRequest) -> anyhow::Result<RunRecord> {
        self.runs += 1;
        bail!("the run started")
    }
}

/// Issue 31: the seed's default grid on a 1.544 Mbit/s path is most of a day. It is
/// refused before the first run, with the estimate and the flag that overrides it, and
/// nothing is written; with a longer --budget it starts.
#[test]
fn a_plan_longer_than_the_budget_is_refused_before_any_run() {
    let path = temp("budget");
    let results = path.to_str().unwrap();
    let mut slow = SlowPath {
        runs: 0,
        route: None,
    };
    let err = run(
        parse(&["--seed", "1", "--results", results]).unwrap(),
        &mut slow,
        &|| false,
    )
    .unwrap_err();
    let message = format!("{err:#}");
    assert!(
        message.contains("1156 runs would take about")
            && message.contains("more than --budget 1.0 h")
            && message.contains("or a longer budget, --budget "),
        "{message}"
    );
    let hours: f64 = message
        .split("about ")
        .nth(1)
        .and_then(|t| t.split(" h").next())
        .and_then(|t| t.parse().ok())
        .expect("the estimate in hours");
    assert!((12.0..30.0).contains(&hours), "{message}");
    assert_eq!(slow.runs, 0, "no run before the refusal");
    assert!(!path.exists(), "nothing written");
    let err = run(
        parse(&["--seed", "1", "--results", results, "--budget", "40h"]).unwrap(),
        &mut slow,
        &|| false,
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("the run started"), "{err:#}");
    assert_eq!(slow.runs, 1);
    assert!(!path.exists(), "a first run that fails leaves no file");
    // --budget is the plan's: with --resume it is refused.
    assert!(parse(&["--resume", "f", "--budget", "2h"]).is_err());
}

/// Issue 31: inside a lab the configured route gives the ceiling (the T1, not the 10 Mbit/s
/// link h1 leaves by) and a full segment's round trip; window / RTT divides by that round
/// trip and is capped by the ceiling, and the verdicts say where each figure comes from.
#[test]
fn inside_a_lab_the_route_gives_the_ceiling_and_the_round_trip() {
    let file = format!("{}/../../labs/t1-path.toml", env!("CARGO_MANIFEST_DIR"));
    let t = wirespeed_lab::Topology::load(Path::new(&file)).unwrap();
    let plan = wirespeed_lab::addressing::plan(&t);
    let h2 = t.node_index("h2").unwrap();
    let address = plan
        .interfaces
        .iter()
        .find(|i| i.node == h2)
        .unwrap()
        .ipv4
        .addr;
    let there =
        wirespeed_lab::truth::route(&t, &plan, "h1", std::net::IpAddr::V4(address)).unwrap();
    let rtt = there.segment_round_trip_seconds(IpVersion::V4_PLAIN);
    let pair = Some(RoutePair {
        lab: "t1-path".into(),
        there,
        back: None,
    });
    let args = parse(&["--snd", "1,2,8", "--reps", "1"]).unwrap();
    let config = Config::try_from(&args).unwrap();
    let known = path_facts(&config.link, &pair, 1448);
    let ceiling = known.facts.ceiling_bytes_per_second.unwrap();
    // The T1's envelope: 1448 payload bytes of every 1500 on a serial line.
    assert!(
        (ceiling - 1.544e6 / 8.0 * 1448.0 / 1500.0).abs() < 1.0,
        "{ceiling}"
    );
    assert!(
        known.source.as_deref().unwrap().contains("r1-r2"),
        "{:?}",
        known.source
    );
    assert_eq!(known.facts.segment_round_trip_seconds, Some(rtt));
    // --link-rate wins over the lab, as in `tcp`.
    let given = parse(&["--link-rate", "10M"]).unwrap();
    assert!(
        path_facts(&Config::try_from(&given).unwrap().link, &pair, 1448)
            .source
            .unwrap()
            .starts_with("--link-rate")
    );
    // Runs whose kernel saw a SYN's 16 ms and the window the buffer asked for.
    let runs: Vec<RunRecord> = (0..3)
        .map(|i| {
            let asked = [1u64, 2, 8][i] * 1448;
            RunRecord {
                snd_index: i,
                rcv_index: i,
                rep: 0,
                snd_requested_bytes: asked,
                rcv_requested_bytes: asked,
                snd_granted_bytes: 2 * asked,
                rcv_granted_bytes: 2 * asked,
                bytes: 65536,
                seconds: 65536.0 / (asked as f64 / rtt).min(ceiling),
                kernel: Some(sweep::KernelView {
                    rtt_us: 30_000,
                    min_rtt_us: 16_000,
                    snd_window_bytes: u32::try_from(asked).unwrap(),
                    snd_mss_bytes: 1448,
                    ..sweep::KernelView::default()
                }),
                max_write_seconds: 0.0,
                sender_cpu_percent: 1.0,
                receiver_cpu_percent: 1.0,
            }
        })
        .collect();
    let sweep_plan = SweepPlan {
        schema: RUNS_SCHEMA.into(),
        target: "lab".into(),
        snd: args.snd.clone(),
        rcv: args.snd.clone(),
        reps: 1,
        seed: 1,
        mss_bytes: 1448,
        set_mss: false,
        transfer_bytes: Some(65536),
        transfer_seconds: None,
    };
    let report = build_report(&config, &pair, sweep_plan, 3, runs, Path::new("x"));
    for (cell, asked) in report.analysis.cells.iter().zip([1.0, 2.0, 8.0]) {
        let want = (asked * 1448.0 / rtt).min(ceiling);
        let got = cell.predicted_bytes_per_second.unwrap();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        assert!(got <= ceiling);
    }
    let typed = verdicts::verdicts(&report);
    assert!(
        typed.iter().any(|v| matches!(
            v,
            wirespeed::sweep::verdicts::SweepVerdict::BandwidthDelayProduct {
                basis: wirespeed_model::sweep::RoundTripBasis::Path,
                rate_is_ceiling: true,
                ..
            }
        )),
        "{typed:?}"
    );
    let kinds: Vec<_> = typed
        .iter()
        .map(|v| serde_json::to_value(v).unwrap()["kind"].clone())
        .collect();
    assert!(
        kinds.contains(&"path_ceiling".into()) && kinds.contains(&"window_per_buffer".into()),
        "{kinds:?}"
    );
    let verdicts = typed
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        verdicts.contains("computed from the configured path"),
        "{verdicts}"
    );
    assert!(
        verdicts.contains("the window the sender saw was 1.00 x"),
        "{verdicts}"
    );
    assert!(
        verdicts.contains("ceiling is") && verdicts.contains("lab t1-path"),
        "{verdicts}"
    );
}

#[test]
fn the_report_comes_from_the_runs() {
    let path = temp("report");
    let args = parse(&[
        "--snd",
        "1..4",
        "--reps",
        "1",
        "-n",
        "1MB",
        "--seed",
        "1",
        "--results",
        path.to_str().unwrap(),
        "--link-rate",
        "1G",
    ])
    .unwrap();
    let mut model = WindowModel {
        calls: Vec::new(),
        fail_after: None,
    };
    let mut done = Vec::new();
    let plan = SweepPlan {
        schema: RUNS_SCHEMA.into(),
        target: "model".into(),
        snd: args.snd.clone(),
        rcv: args.snd.clone(),
        reps: 1,
        seed: 1,
        mss_bytes: 1000,
        set_mss: false,
        transfer_bytes: Some(1_000_000),
        transfer_seconds: None,
    };
    let mut file = Results::Open(RunsFile::create(&path, &plan).unwrap());
    let order = sweep::plan(4, 4, 1, 1);
    assert!(
        execute(
            &plan,
            &order,
            &mut model,
            &mut file,
            &mut done,
            &|| false,
            &Progress::start("sweep", "runs", 16, None, true)
        )
        .is_none()
    );
    let report = build_report(
        &Config::try_from(&args).unwrap(),
        &None,
        plan,
        16,
        done,
        &path,
    );
    assert!(report.complete);
    // Window-limited: 1 packet of 1000 bytes per ms = 1 MB/s, 4 packets = 4 MB/s.
    let d = &report.analysis.diagonal;
    assert_eq!(d.len(), 4);
    assert!((d[0].task_to_task_kib_per_second * 1024.0 - 1e6).abs() < 1.0);
    assert!((d[3].task_to_task_kib_per_second * 1024.0 - 4e6).abs() < 1.0);
    let csv = report.csv();
    assert_eq!(csv.lines().count(), 17);
    assert!(report.heatmap().unwrap().contains("<svg"));
    assert!(report.diagonal_plot().unwrap().contains("envelope ceiling"));
    let mut text = Vec::new();
    wirespeed_report::Render::render(&report, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("the seed's table"), "{text}");
    let _ = std::fs::remove_file(&path);
}
