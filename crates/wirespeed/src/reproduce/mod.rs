//! `wirespeed reproduce NAME`: a seed's experiment end to end, in the lab or the simulator,
//! with the paper's figures beside ours and a verdict per row.
//!
//! Why a command and not a script: a reproduction is only worth something if the ground truth
//! it configured (link rates, costs, station counts) is written beside what was measured, and
//! if every comparison states its tolerance and the reason for its verdict. Each reproduction
//! reuses the library (envelope arithmetic, the CSMA/CD simulator, the lab's lifecycle) where
//! the logic is public (this crate's own library included: `throughput::measure` for a loopback
//! TCP test, `model::compare`), and runs this same executable as a subprocess with `--json`
//! where a run needs its own process or namespace (`serve`, `tcp` and `probe` inside a lab);
//! each row's `method` says which.
//!
//! The shape is the one of every command, with one measurement per experiment: each
//! experiment's `run(&Options)` computes a typed [`Reproduction`] and prints nothing, and one
//! schema and one set of views serve them all, since every reproduction is the same kind of
//! result (the seed's tables beside ours, a verdict per row).
//!
//! Modules: the shared parts: `result` (the schema: rows, comparisons, the catalogue of
//! names), `text` (the text view), `html` (the report view), `metrics` (`--metrics-file`),
//! `tolerance` (a figure judged against its tolerance) and `lab_run` (a reproduction's lab and
//! the commands run in its namespaces); then one per experiment: `boggs/` (seed 000 in the
//! simulator, and `boggs/lab` on an emulated segment), `bellovin/` (seed 001), `envelope`
//! (seeds 002 and 004), `duplex/` (seed 003's duplex mismatch), `vj` (seed 004's socket
//! buffers). This file holds the flags, their checked [`Config`] and the dispatch to the
//! experiment.

pub(crate) mod html;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_model::units::parse_duration;
use wirespeed_report::Document;

use crate::common::output::{self, OutputArgs};

#[doc(hidden)]
pub mod bellovin;
#[doc(hidden)]
pub mod boggs;
#[doc(hidden)]
pub mod duplex;
mod envelope;
#[doc(hidden)]
pub mod lab_run;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod result;
mod text;
#[doc(hidden)]
pub mod tolerance;
#[doc(hidden)]
pub mod vj;

#[doc(hidden)]
pub use lab_run::{LabGuard, exe, lab_file, run_json, run_json_watching};
pub use result::{Comparison, Name, Params, Reproduction, Row, Setting, Verdict};
#[doc(hidden)]
pub use result::{List, setting};

/// Runs a seed's experiment end to end and prints the paper's table beside ours.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Each row: the ground truth this run configured, the seed's figure, ours, \
the tolerance applied, and a verdict (ok = within it, OUTSIDE = not, imprecise = the run's own \
interval is wider than the tolerance, - = the seed gives no figure or measured another machine), \
then the reason. A lab reproduction needs root and brings up and \
takes down only its own lab. bench/reproduce.sh runs them all."
)]
pub(crate) struct ReproduceArgs {
    /// The reproduction (see --list).
    #[arg(value_enum, required_unless_present = "list", value_name = "NAME")]
    name: Option<Name>,

    /// List the reproductions, their seeds and what they need (lab: root; sim: nothing).
    #[arg(long, conflicts_with = "name")]
    list: bool,

    /// envelope: length of the loopback and of the lab TCP transfer (default 2 s);
    /// boggs: simulated time per point (default 10 s, the seed's window);
    /// duplex-mismatch: the cap on each transfer (default 30 s): a transfer that stalls is
    /// stopped there and reported with the bytes that arrived in that time;
    /// bellovin: the probing budget per address family, 5 s to 300 s (default: planned from
    /// the path's configured round trips, at least 40 s; a shorter one gives fewer rounds and
    /// wider intervals).
    #[arg(long, short = 't', value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,

    /// duplex-mismatch: bytes of each TCP transfer (default 2 MB; the seed moved 50 MB);
    /// vj-buffers: bytes per point (default 1 MB; the seed: four of 8 MB).
    #[arg(
        long = "bytes",
        short = 'n',
        visible_alias = "num",
        alias = "size",
        value_name = "BYTES"
    )]
    size: Option<wirespeed_model::ByteSize>,

    /// duplex-mismatch: transfers each way per TCP (default 1), to show the run-to-run spread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10))]
    runs: Option<u32>,

    /// envelope: skip the lab part (the lab needs root and takes a few seconds).
    #[arg(long, conflicts_with = "lab")]
    no_lab: bool,

    /// boggs: also run the lab form (root): `wirespeed load --raw` on labs/boggs-24.toml, one
    /// agent per station, each row beside the simulator's for the same segment (about 6 s per
    /// test; with -t the measured window per test, default 2 s).
    #[arg(long)]
    lab: bool,

    /// boggs --lab: host counts of the lab series (default 1,2,4,8,16,24).
    #[arg(long, value_name = "LIST", value_parser = crate::common::flags::parse_hosts, requires = "lab")]
    lab_hosts: Option<crate::common::flags::HostList>,

    /// bellovin: probe this chain instead of labs/seed-001-path.toml (its first two
    /// [[host]]s are the ends; every hop is checked against its configured costs).
    #[arg(long, value_name = "FILE")]
    topology: Option<PathBuf>,

    /// Print one JSON document (schema "wirespeed.reproduce.v1") instead of text.
    #[arg(long, short = 'J')]
    json: bool,

    /// Also write the figures as Prometheus text to FILE (replaced whole, for node_exporter's
    /// textfile collector): ours beside the paper's, in base units, and the rows' verdicts.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    metrics_file: Option<PathBuf>,
}

/// Shared options handed to each reproduction.
#[derive(Debug)]
#[doc(hidden)]
pub struct Options {
    pub(crate) time: Option<Duration>,
    pub(crate) size: Option<u64>,
    pub(crate) runs: Option<u32>,
    pub(crate) lab: bool,
    /// boggs --lab: host counts.
    pub(crate) lab_hosts: Vec<usize>,
    pub(crate) topology: Option<PathBuf>,
}

/// A reproduction to run, its flags checked against it.
#[derive(Debug)]
pub struct Config {
    pub(crate) name: Name,
    pub(crate) options: Options,
}

impl ReproduceArgs {
    /// `--json` and `--metrics-file` as every command's output flags.
    fn output(&self) -> OutputArgs {
        OutputArgs {
            json: self.json,
            rate_format: wirespeed_model::RateFormat::Adaptive,
            metrics_file: self.metrics_file.clone(),
        }
    }

    /// The flags as the document records them.
    fn params(&self) -> Params {
        Params {
            name: self.name,
            time_seconds: self.time.map(|t| t.as_secs_f64()),
            size_bytes: self.size.map(|s| s.bytes()),
            lab: self.lab_part(self.name),
            topology: self.topology.clone(),
            runs: self.runs,
        }
    }

    /// Whether the lab part runs: boggs's is asked for with --lab, envelope's left out with
    /// --no-lab.
    fn lab_part(&self, name: Option<Name>) -> bool {
        if name == Some(Name::Boggs) {
            self.lab
        } else {
            !self.no_lab
        }
    }

    /// The reproduction asked for, every flag checked against it; `None` for `--list`.
    pub(crate) fn config(self) -> anyhow::Result<Option<Config>> {
        let Some(name) = self.name else {
            return Ok(None);
        };
        if self.time.is_some() {
            check_time_applies(name)?;
        }
        if self.size.is_some() && !matches!(name, Name::DuplexMismatch | Name::VjBuffers) {
            bail!(
                "-n/--bytes applies to duplex-mismatch and vj-buffers, not {}; leave it out",
                name.as_str()
            );
        }
        if self.runs.is_some() && name != Name::DuplexMismatch {
            bail!(
                "--runs applies to duplex-mismatch, not {}; leave it out",
                name.as_str()
            );
        }
        if let Some(size) = self.size
            && !(10_000..=50_000_000).contains(&size.bytes())
        {
            bail!("-n/--bytes must be between 10kB and 50MB (the seed's file)");
        }
        if self.no_lab {
            check_no_lab(name)?;
        }
        if self.topology.is_some() && name != Name::Bellovin {
            bail!(
                "--topology applies to bellovin, not {}; leave it out",
                name.as_str()
            );
        }
        if self.lab && name != Name::Boggs {
            bail!(
                "--lab applies to boggs (the others run in the lab already or have --no-lab), not {}; leave it out",
                name.as_str()
            );
        }
        if let Some(t) = self.time {
            check_time_range(name, t)?;
        }
        Ok(Some(Config {
            name,
            options: Options {
                time: self.time,
                size: self.size.map(|s| s.bytes()),
                lab: self.lab_part(Some(name)),
                lab_hosts: self
                    .lab_hosts
                    .map_or_else(|| boggs::lab::HOSTS.to_vec(), |h| h.0),
                topology: self.topology,
                runs: self.runs,
            },
        }))
    }
}

/// `--time`: only envelope, boggs, duplex-mismatch and bellovin take one ...
fn check_time_applies(name: Name) -> anyhow::Result<()> {
    if !matches!(
        name,
        Name::Envelope | Name::Boggs | Name::DuplexMismatch | Name::Bellovin
    ) {
        bail!(
            "--time applies to envelope, boggs, duplex-mismatch and bellovin, not {}; leave it out",
            name.as_str()
        );
    }
    Ok(())
}

/// ... from 100 ms to 60 s; bellovin's, a probing budget per address family, 5 s to 300 s.
fn check_time_range(name: Name, time: Duration) -> anyhow::Result<()> {
    if name == Name::Bellovin {
        if time < Duration::from_secs(5) || time > Duration::from_secs(300) {
            bail!("--time for bellovin is the probing budget per address family: give 5s to 300s");
        }
    } else if time < Duration::from_millis(100) || time > Duration::from_secs(60) {
        bail!("--time must be between 100ms and 60s");
    }
    Ok(())
}

/// `--no-lab`: only envelope has an optional lab part.
fn check_no_lab(name: Name) -> anyhow::Result<()> {
    if name != Name::Envelope {
        bail!(
            "--no-lab applies to envelope (the only one with an optional lab part), not {}; leave it out",
            name.as_str()
        );
    }
    Ok(())
}

impl Config {
    /// `wirespeed reproduce NAME` with the command's defaults: each experiment's own time and
    /// sizes, in its lab where it has one (envelope's lab part, duplex-mismatch, bellovin and
    /// vj-buffers bring up a lab, as root), boggs in the simulator alone.
    pub fn new(name: Name) -> Config {
        Config {
            name,
            options: Options {
                time: None,
                size: None,
                runs: None,
                lab: name != Name::Boggs,
                lab_hosts: boggs::lab::HOSTS.to_vec(),
                topology: None,
            },
        }
    }

    /// `--no-lab`: envelope without its 10 Mbit/s lab link (no root needed).
    pub fn without_lab(mut self) -> anyhow::Result<Config> {
        check_no_lab(self.name)?;
        self.options.lab = false;
        Ok(self)
    }

    /// `--time`: envelope's loopback transfer, boggs' simulated time or duplex-mismatch's
    /// transfers, 100 ms to 60 s; bellovin's probing budget per address family, 5 s to 300 s.
    pub fn with_time(mut self, time: Duration) -> anyhow::Result<Config> {
        check_time_applies(self.name)?;
        check_time_range(self.name, time)?;
        self.options.time = Some(time);
        Ok(self)
    }

    /// What the document records as asked.
    fn params(&self) -> Params {
        let o = &self.options;
        Params {
            name: Some(self.name),
            time_seconds: o.time.map(|t| t.as_secs_f64()),
            size_bytes: o.size,
            lab: o.lab,
            topology: o.topology.clone(),
            runs: o.runs,
        }
    }
}

/// Runs the experiment `config` names and returns its document (the ground truth, the
/// paper's figures beside ours, a verdict per row), printing nothing.
pub fn measure(config: &Config) -> anyhow::Result<Document<Params, Reproduction>> {
    Ok(Document::new(
        "reproduce",
        config.params(),
        reproduce(config)?,
    ))
}

/// Runs the experiment `config` names: its typed result, nothing printed.
pub(crate) fn reproduce(config: &Config) -> anyhow::Result<Reproduction> {
    let options = &config.options;
    match config.name {
        Name::Envelope => envelope::run(options),
        Name::Boggs => boggs::run(options),
        Name::DuplexMismatch => duplex::run(options),
        Name::Bellovin => bellovin::run(options),
        Name::VjBuffers => vj::run(options),
    }
}

pub(crate) fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let output = args.output();
    let params = args.params();
    let Some(config) = args.config()? else {
        let doc = Document::new("reproduce", params, List::all());
        return output::print(&output, &doc).context("writing the result");
    };
    if !output.json {
        eprintln!("{}", text::progress(&config));
    }
    output::print(&output, &measure(&config)?).context("writing the result")
}

/// Relative difference a/b - 1.
pub(crate) fn rel(a: f64, b: f64) -> f64 {
    a / b - 1.0
}
