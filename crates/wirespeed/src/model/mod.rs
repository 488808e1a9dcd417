//! `wirespeed model`: Bellovin's component table (seed 001, Table 1) predicting a path (Table 2),
//! compared with a probe, and fitted from one.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use wirespeed_model::delay::{ModelFile, Tolerance};

use crate::common::output::{self, OutputArgs};
use crate::probe::{Sizes, parse_sizes};
use measure::{Measured, ProbedHop};
pub(crate) use measure::{compare, parse_probe};
pub(crate) use result::{CompareReport, FitReport, PredictReport};

mod measure;
mod metrics;
pub(crate) mod result;
mod text;
mod verdicts;

#[derive(Debug, Clone, Args)]
pub(crate) struct ModelArgs {
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
        #[arg(long, default_value_t = 0.2, value_name = "MS", value_parser = crate::common::flags::non_negative)]
        fixed_tolerance_ms: f64,
        /// Allowed relative error of a per-byte cost, percent.
        #[arg(long, default_value_t = 25.0, value_name = "PERCENT", value_parser = crate::common::flags::non_negative)]
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
/// job itself is pure.
#[derive(Debug)]
pub(crate) enum Config {
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

impl TryFrom<&ModelArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &ModelArgs) -> anyhow::Result<Config> {
        // `model` prints delays, not rates: a rate unit would be parsed and ignored.
        if args.output().rate_format != wirespeed_model::RateFormat::Adaptive {
            anyhow::bail!(
                "-f sets the unit of rates, and `model` prints delays (ms, us per byte): leave -f out"
            );
        }
        Ok(match &args.command {
            ModelCommand::Predict {
                file, path, sizes, ..
            } => Config::Predict {
                model: measure::load(file)?,
                file: file.clone(),
                path: path.clone(),
                sizes: sizes.0.clone(),
            },
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
                Config::Compare {
                    model: measure::load(file)?,
                    file: file.clone(),
                    path: path.clone(),
                    probe: measure::read_probe(probe)?,
                    probe_file: probe.clone(),
                    tolerance: Tolerance {
                        per_byte_relative: per_byte_tolerance / 100.0,
                        fixed_ms: *fixed_tolerance_ms,
                        ..Tolerance::default()
                    },
                    plot: plot.clone(),
                }
            }
            ModelCommand::Fit { probe, .. } => Config::Fit {
                probe: measure::read_probe(probe)?,
                probe_file: probe.clone(),
            },
        })
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
    match measure::measure(&config)? {
        Measured::Predict(doc) => output::print(output, &doc).context("writing the result"),
        Measured::Compare(compared) => {
            if let Config::Compare {
                plot: Some(file), ..
            } = &config
            {
                std::fs::write(file, text::figure_4(&compared.path, &compared.measured)?)
                    .with_context(|| format!("cannot write the plot to {}", file.display()))?;
            }
            output::print(output, &compared.doc).context("writing the result")
        }
        Measured::Fit(doc) => output::print(output, &doc).context("writing the result"),
    }
}

#[cfg(test)]
mod tests {
    use super::measure::{ProbedHop, hop_label};
    use super::{Config, ModelArgs};
    use clap::Parser;
    use wirespeed_model::delay::{Cost, MeasuredHop};

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: ModelArgs,
    }

    fn config(argv: &[&str]) -> anyhow::Result<Config> {
        let args =
            Wrapper::try_parse_from(std::iter::once("model").chain(argv.iter().copied()))?.args;
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
        let Config::Predict { sizes, path, .. } = &c else {
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
}
