mod verdicts;

use clap::Parser;
use wirespeed::model::measure::{ProbedHop, hop_label};
use wirespeed::model::{Config, Job, Measured, ModelArgs, measure};
use wirespeed_model::delay::{Cost, MeasuredHop};

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: ModelArgs,
}

fn config(argv: &[&str]) -> anyhow::Result<Config> {
    let args = Wrapper::try_parse_from(std::iter::once("model").chain(argv.iter().copied()))?.args;
    Config::try_from(&args)
}

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The config reads the model file (bounded) and checks the flags before any job: the
/// job then works on what was read.
#[test]
fn the_config_reads_the_files_and_checks_the_flags() {
    let model = example("bellovin-1992.toml");
    let c = config(&["predict", &model, "ih2", "--sizes", "40,1500"]).unwrap();
    let Job::Predict { sizes, path, .. } = c.job() else {
        panic!("predict: {c:?}")
    };
    assert_eq!((sizes.as_slice(), path.as_str()), (&[40, 1500][..], "ih2"));
    let refused = |argv: &[&str]| format!("{:#}", config(argv).unwrap_err());
    assert!(refused(&["predict", &model, "ih2", "-f", "K"]).contains("leave -f out"));
    assert!(refused(&["predict", "/nonexistent/model.toml", "ih2"]).contains("model.toml"));
    assert!(refused(&["fit", "/nonexistent/probe.json"]).contains("probe.json"));
    assert!(
        refused(&[
            "compare",
            &model,
            "ih2",
            "/nonexistent/p.json",
            "--plot",
            "/nonexistent-dir/f.svg"
        ])
        .contains("--plot")
    );
}

/// Issue 30: a library caller predicts seed 001's Table 2 path and compares the seed's §4
/// probe with the constructors and `measure` alone, and is refused what the flags refuse.
#[test]
fn a_library_caller_runs_the_model() {
    let model = example("bellovin-1992.toml");
    let Measured::Predict(doc) =
        measure(&Config::predict(&model, "cbnewsa", vec![40, 1024]).unwrap()).unwrap()
    else {
        panic!("a prediction")
    };
    let total = &doc.result.prediction.total.at_sizes_ms;
    assert!((total[0] - 32.7373).abs() < 1e-3, "{total:?}");
    assert!((total[1] - 328.0370).abs() < 1e-3, "{total:?}");
    let probe = example("bellovin-1992-ih-probe.json");
    let Measured::Compare(compared) =
        measure(&Config::compare(&model, "ih2", &probe).unwrap()).unwrap()
    else {
        panic!("a comparison")
    };
    let anomalous: Vec<&str> = compared
        .doc
        .result
        .segments
        .iter()
        .filter(|s| s.segment.anomalous)
        .map(|s| s.to.as_str())
        .collect();
    assert_eq!(anomalous, ["hop 2 (ih2, destination)"], "seed 001 §4");
    // A tolerance wide enough to take the misconfigured board in flags nothing.
    let loose = Config::compare(&model, "ih2", &probe)
        .and_then(|c| c.with_tolerance(1.0, 100.0))
        .unwrap();
    let Measured::Compare(loose) = measure(&loose).unwrap() else {
        panic!("a comparison")
    };
    assert!(
        loose
            .doc
            .result
            .segments
            .iter()
            .all(|s| !s.segment.anomalous)
    );
    let refused = |c: anyhow::Result<Config>| format!("{:#}", c.unwrap_err());
    assert!(refused(Config::predict(&model, "ih2", vec![])).contains("--sizes"));
    assert!(refused(Config::predict(&model, "ih2", vec![70_000])).contains("--sizes"));
    let compare = || Config::compare(&model, "ih2", &probe).unwrap();
    assert!(refused(compare().with_tolerance(-1.0, 25.0)).contains("--fixed-tolerance-ms"));
    assert!(refused(compare().with_tolerance(0.2, f64::NAN)).contains("--per-byte"));
    assert!(refused(Config::fit("/nonexistent/probe.json")).contains("probe.json"));
}

fn hop(ttl: u32, responder: Option<&str>, destination: bool) -> ProbedHop {
    ProbedHop {
        hop: MeasuredHop {
            hop: ttl,
            cost: Cost::new(1.0, 0.001),
        },
        responder: responder.map(str::to_string),
        destination,
        increment: None,
        echoed_minimums: Vec::new(),
    }
}

/// Segments are named from the probe's hops: a traced path by hop and responder, a probe of
/// the destination alone by its address, never by the TTL 64 it was sent with.
#[test]
fn segments_are_named_from_the_probes_hops() {
    let traced = [hop(1, Some("ih1"), false), hop(2, Some("ih2"), true)];
    assert_eq!(hop_label(&traced, 1), "hop 1 (ih1)");
    assert_eq!(hop_label(&traced, 2), "hop 2 (ih2, destination)");
    assert_eq!(hop_label(&traced, 3), "hop 3");
    let alone = [hop(64, Some("127.0.0.1"), true)];
    assert_eq!(hop_label(&alone, 64), "127.0.0.1 (destination)");
    let silent = [hop(1, None, false), hop(2, None, true)];
    assert_eq!(hop_label(&silent, 1), "hop 1");
    assert_eq!(hop_label(&silent, 2), "hop 2 (destination)");
    assert_eq!(hop_label(&[hop(64, None, true)], 64), "the destination");
}
