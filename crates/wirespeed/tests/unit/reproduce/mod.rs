mod bellovin;
mod boggs;
mod duplex;
mod lab_run;
mod metrics;
mod tolerance;
mod vj;

use std::time::Duration;
use wirespeed::reproduce::result::Name;
use wirespeed::reproduce::*;

/// Issue 30: a library caller runs envelope's reproduction without its lab part (a 0.1 s
/// loopback transfer and the envelope arithmetic) with the constructor and `measure`
/// alone, and gets its rows with verdicts; what the flags refuse is refused.
#[test]
fn a_library_caller_runs_a_reproduction() {
    let config = Config::new(Name::Envelope)
        .without_lab()
        .and_then(|c| c.with_time(Duration::from_millis(100)))
        .unwrap();
    let doc = measure(&config).unwrap();
    assert_eq!(doc.parameters.name, Some(Name::Envelope));
    assert!(!doc.parameters.lab);
    let r = &doc.result;
    let listed: usize = r.comparisons.iter().map(|c| c.rows.len()).sum();
    assert!(r.rows > 0 && r.rows == listed);
    assert!(r.within > 0, "{r:?}");
    let refused = |c: anyhow::Result<Config>| format!("{:#}", c.unwrap_err());
    assert!(refused(Config::new(Name::Bellovin).without_lab()).contains("--no-lab"));
    let vj = Config::new(Name::VjBuffers).with_time(Duration::from_secs(1));
    assert!(refused(vj).contains("--time applies"));
    let long = Config::new(Name::Boggs).with_time(Duration::from_secs(120));
    assert!(refused(long).contains("between 100ms and 60s"));
}
