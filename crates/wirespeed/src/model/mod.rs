//! `wirespeed model`: Bellovin's component table (seed 001, Table 1) predicting a path (Table 2),
//! compared with a probe, and fitted from one.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use wirespeed_model::delay::{ModelFile, Tolerance};

use crate::common::output::{self, OutputArgs};
use crate::probe::{Sizes, parse_sizes};
use measure::ProbedHop;
pub use measure::{Compared, Measured, measure};
pub(crate) use measure::{compare, parse_probe};
pub use result::{CompareReport, FitReport, ModelParameters, NamedSegment, PredictReport};

#[doc(hidden)]
pub mod measure;
mod metrics;
pub(crate) mod result;
mod text;
#[doc(hidden)]
pub mod verdicts;

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Debug, Clone, Subcommand)]
enum ModelCommand {
    /// The one-way delay of a path for given sizes, group by group (the seed's Table 2).
    Predict {
        /// The model file (TOML: [components.TAG] and [paths.NAME]); examples/bellovin-1992.toml
        /// is the seed's.
        file: PathBuf,
        /// The path in it.
        path: String,
        /// Sizes in bytes: a list (40,1024) or a range (40..1500:100).
        #[arg(long, default_value = "40,1024", value_parser = parse_sizes)]
        sizes: Sizes,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// A saved `wirespeed probe --json` result against a path's prediction: per segment between
    /// marked hops (or the whole path), measured versus expected, with anomalies flagged.
    Compare {
        /// The model file.
        file: PathBuf,
        /// The path in it.
        path: String,
        /// The probe result (`wirespeed probe HOST --json > probe.json`).
        probe: PathBuf,
        /// Allowed error of a fixed cost, ms.
        #[arg(long, default_value_t = DEFAULT_FIXED_TOLERANCE_MS, value_name = "MS", value_parser = crate::common::flags::non_negative)]
        fixed_tolerance_ms: f64,
        /// Allowed relative error of a per-byte cost, percent.
        #[arg(long, default_value_t = DEFAULT_PER_BYTE_TOLERANCE_PERCENT, value_name = "PERCENT", value_parser = crate::common::flags::non_negative)]
        per_byte_tolerance: f64,
        /// Also write an SVG of measured against predicted one-way delay at the destination
        /// (the seed's figure 4): probe minimums / 2 and the model's line.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Turns a per-hop probe result into a component table (one component per hop's own
    /// cost) and a path through them, as TOML.
    Fit {
        /// The probe result (`wirespeed probe HOST --hops --json > probe.json`).
        probe: PathBuf,
        #[command(flatten)]
        output: OutputArgs,
    },
}

/// A validated `model` job: its flags checked and its files read (each bounded), so that the
/// job itself is pure. Built by [`Config::predict`], [`Config::compare`] or [`Config::fit`],
/// which the flags' conversion goes through too.
#[derive(Debug)]
pub struct Config {
    pub(crate) job: Job,
}

/// The job and what it read.
#[derive(Debug)]
#[doc(hidden)]
pub enum Job {
    Predict {
        model: ModelFile,
        file: PathBuf,
        path: String,
        sizes: Vec<usize>,
    },
    Compare {
        model: ModelFile,
        file: PathBuf,
        path: String,
        probe: Vec<ProbedHop>,
        probe_file: PathBuf,
        tolerance: Tolerance,
        /// `--plot FILE.svg`, checked writable.
        plot: Option<PathBuf>,
    },
    Fit {
        probe: Vec<ProbedHop>,
        probe_file: PathBuf,
    },
}

/// `--sizes`' bounds: 1 to 65535 bytes, at most 1000 sizes (as `probe --sizes`).
const MAX_SIZE: usize = 65535;
const MAX_SIZES: usize = 1000;

/// `--fixed-tolerance-ms` and `--per-byte-tolerance`' defaults.
const DEFAULT_FIXED_TOLERANCE_MS: f64 = 0.2;
const DEFAULT_PER_BYTE_TOLERANCE_PERCENT: f64 = 25.0;

impl Config {
    /// `model predict FILE PATH --sizes S`: the one-way delay of `path` in the model file
    /// `file` (read here, bounded) at each of `sizes` (1 to 65535 bytes, at most 1000; the
    /// command's default is 40 and 1024), group by group.
    pub fn predict(
        file: impl Into<PathBuf>,
        path: impl Into<String>,
        sizes: Vec<usize>,
    ) -> anyhow::Result<Config> {
        if sizes.is_empty()
            || sizes.len() > MAX_SIZES
            || sizes.iter().any(|&s| !(1..=MAX_SIZE).contains(&s))
        {
            anyhow::bail!(
                "--sizes: give 1 to {MAX_SIZES} sizes, each 1 to {MAX_SIZE} bytes (such as 40,1024)"
            );
        }
        let file = file.into();
        Ok(Config {
            job: Job::Predict {
                model: measure::load(&file)?,
                file,
                path: path.into(),
                sizes,
            },
        })
    }

    /// `model compare FILE PATH PROBE`: a saved `wirespeed probe --json` result (read here,
    /// bounded) against `path`'s prediction, segment by segment, with the command's
    /// tolerances (0.2 ms fixed, 25% per byte).
    pub fn compare(
        file: impl Into<PathBuf>,
        path: impl Into<String>,
        probe: impl Into<PathBuf>,
    ) -> anyhow::Result<Config> {
        let (file, probe_file) = (file.into(), probe.into());
        Ok(Config {
            job: Job::Compare {
                model: measure::load(&file)?,
                file,
                path: path.into(),
                probe: measure::read_probe(&probe_file)?,
                probe_file,
                tolerance: Tolerance {
                    per_byte_relative: DEFAULT_PER_BYTE_TOLERANCE_PERCENT / 100.0,
                    fixed_ms: DEFAULT_FIXED_TOLERANCE_MS,
                    ..Tolerance::default()
                },
                plot: None,
            },
        })
    }

    /// `--fixed-tolerance-ms` and `--per-byte-tolerance` of a comparison: the allowed error of
    /// a fixed cost (ms) and of a per-byte cost (percent), each 0 or more.
    pub fn with_tolerance(
        mut self,
        fixed_ms: f64,
        per_byte_percent: f64,
    ) -> anyhow::Result<Config> {
        for (flag, value) in [
            ("--fixed-tolerance-ms", fixed_ms),
            ("--per-byte-tolerance", per_byte_percent),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                anyhow::bail!("{flag} {value}: give a finite number, 0 or more (such as 0.5)");
            }
        }
        match &mut self.job {
            Job::Compare { tolerance, .. } => {
                tolerance.per_byte_relative = per_byte_percent / 100.0;
                tolerance.fixed_ms = fixed_ms;
            }
            Job::Predict { .. } | Job::Fit { .. } => {
                anyhow::bail!("tolerances apply to a comparison (Config::compare)")
            }
        }
        Ok(self)
    }

    /// `model fit PROBE`: a per-hop probe result (`wirespeed probe HOST --hops --json`, read
    /// here, bounded) as a component table and a path through it.
    pub fn fit(probe: impl Into<PathBuf>) -> anyhow::Result<Config> {
        let probe_file = probe.into();
        Ok(Config {
            job: Job::Fit {
                probe: measure::read_probe(&probe_file)?,
                probe_file,
            },
        })
    }

    /// What the command is asked to do (predict, compare or fit), as checked.
    pub fn job(&self) -> &Job {
        &self.job
    }
}

impl TryFrom<&ModelArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &ModelArgs) -> anyhow::Result<Config> {
        // `model` prints delays, not rates: a rate unit would be parsed and ignored.
        if args.output().rate_format != wirespeed_model::RateFormat::Adaptive {
            anyhow::bail!(
                "-f sets the unit of rates, and `model` prints delays (ms, us per byte): leave -f out"
            );
        }
        match &args.command {
            ModelCommand::Predict {
                file, path, sizes, ..
            } => Config::predict(file, path.as_str(), sizes.0.clone()),
            ModelCommand::Compare {
                file,
                path,
                probe,
                fixed_tolerance_ms,
                per_byte_tolerance,
                plot,
                ..
            } => {
                if let Some(plot) = plot {
                    crate::common::output::check_output_file("--plot", plot)?;
                }
                let mut config = Config::compare(file, path.as_str(), probe)?
                    .with_tolerance(*fixed_tolerance_ms, *per_byte_tolerance)?;
                if let Job::Compare { plot: p, .. } = &mut config.job {
                    p.clone_from(plot);
                }
                Ok(config)
            }
            ModelCommand::Fit { probe, .. } => Config::fit(probe),
        }
    }
}

impl ModelArgs {
    fn output(&self) -> &OutputArgs {
        match &self.command {
            ModelCommand::Predict { output, .. }
            | ModelCommand::Fit { output, .. }
            | ModelCommand::Compare { output, .. } => output,
        }
    }
}

/// `wirespeed model`: flags -> config (files read) -> the job -> the document (and the plot).
pub(crate) fn run(args: ModelArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    let output = args.output();
    match measure(&config)? {
        Measured::Predict(doc) => output::print(output, &doc).context("writing the result"),
        Measured::Compare(compared) => {
            if let Job::Compare {
                plot: Some(file), ..
            } = &config.job
            {
                std::fs::write(file, text::figure_4(&compared.path, &compared.measured)?)
                    .with_context(|| format!("cannot write the plot to {}", file.display()))?;
            }
            output::print(output, &compared.doc).context("writing the result")
        }
        Measured::Fit(doc) => output::print(output, &doc).context("writing the result"),
    }
}
