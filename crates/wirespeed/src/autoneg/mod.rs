//! `wirespeed autoneg`: what two link partners settle on, and the link code words they send.

pub(crate) mod html;
#[doc(hidden)]
pub mod measure;
mod metrics;
#[doc(hidden)]
pub mod result;
mod text;

use anyhow::Context;
use clap::Args;
use wirespeed_model::RateFormat;
use wirespeed_model::autoneg::Config as PartnerConfig;
use wirespeed_model::autoneg::{Abilities, LinkCodeWord, Partner};

use crate::common::output::{self, OutputArgs};
pub use measure::measure;
pub use result::{AutonegReport, Params, ResolveReport, WordReport};

#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("job").required(true).args(["partners", "decode", "encode"]))]
#[doc(hidden)]
pub struct AutonegArgs {
    /// The two link partners, A then B: auto (10/100, half and full), auto:10/100/1000,
    /// auto:10-half,100-full, auto:0x01E1 (a link code word), or a forced mode such as
    /// 100-full or 10-half.
    #[arg(value_name = "PARTNER", num_args = 2)]
    pub partners: Vec<Partner>,

    /// What A's hardware can do beyond its configuration (modes as for auto:), to tell a link
    /// that is slower than it could be.
    #[arg(long, value_name = "MODES", requires = "partners", conflicts_with_all = ["decode", "encode"])]
    capable_a: Option<Abilities>,

    /// What B's hardware can do beyond its configuration.
    #[arg(long, value_name = "MODES", requires = "partners", conflicts_with_all = ["decode", "encode"])]
    pub capable_b: Option<Abilities>,

    /// Decode a base-page link code word given in hex (0x01E1) or binary (0b...).
    #[arg(long, value_name = "WORD")]
    decode: Option<LinkCodeWord>,

    /// Encode the base page that advertises these modes (10/100, or 10-half,100-full, ...).
    #[arg(long, value_name = "MODES")]
    encode: Option<Abilities>,

    /// With --encode: advertise symmetric PAUSE (A5).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    pub pause: bool,

    /// With --encode: advertise asymmetric PAUSE (A6).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    pub asym_pause: bool,

    /// With --encode: set Remote Fault (D13).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    remote_fault: bool,

    /// With --encode: set Acknowledge (D14).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    pub ack: bool,

    /// Print one JSON document (schema "wirespeed.autoneg.v1") instead of text.
    #[arg(long, short = 'J')]
    json: bool,

    /// Also write the result's figures as Prometheus text to FILE (replaced whole, for
    /// node_exporter's textfile collector): each end's speed and duplex, the outcome.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    metrics_file: Option<std::path::PathBuf>,
}

/// A validated `autoneg` job: a word to decode, abilities to encode, or two partners (each
/// already limited to what it is capable of) to resolve. The flags' parser makes the checks
/// (one job, the words and modes parsed); [`Config::new`] makes the same ones on a job built
/// in code, which the flags' conversion goes through too.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) job: Params,
}

impl Config {
    /// Any job, refused where the flags could not describe it: a negotiating partner that
    /// advertises nothing, hardware that cannot do what its end is configured to, or no
    /// mode to encode.
    pub fn new(job: Params) -> anyhow::Result<Config> {
        match job {
            Params::Resolve { a, b } => {
                check_partner("A", a)?;
                check_partner("B", b)?;
            }
            Params::Encode { modes, .. } if modes.is_empty() => anyhow::bail!(
                "--encode: no mode to advertise; give at least one, such as --encode 10/100"
            ),
            Params::Encode { .. } | Params::Decode { .. } => {}
        }
        Ok(Config { job })
    }

    /// Two link partners, A then B, as `wirespeed autoneg A B` resolves them (a partner's
    /// hardware widened with [`Partner::capable_of`], as `--capable-a` does).
    pub fn resolve(a: Partner, b: Partner) -> anyhow::Result<Config> {
        Config::new(Params::Resolve { a, b })
    }

    /// A base-page link code word to decode (`--decode WORD`): every 16-bit word is one.
    pub fn decode(word: LinkCodeWord) -> Config {
        Config {
            job: Params::Decode { word },
        }
    }

    /// The job.
    pub fn job(&self) -> &Params {
        &self.job
    }
}

/// What the flags' parser refuses in a partner: `auto:` with no mode, and (since `--capable-a`
/// widens a parsed partner) hardware short of its own configuration.
fn check_partner(end: &str, p: Partner) -> anyhow::Result<()> {
    let configured = match p.config {
        PartnerConfig::Auto { advertised } => {
            if advertised.is_empty() {
                anyhow::bail!(
                    "partner {end}: a negotiating end that advertises no mode cannot link; give one, such as auto:10/100"
                );
            }
            advertised
        }
        PartnerConfig::Forced { technology } => Abilities::NONE.with(technology),
    };
    if p.capable.union(configured) != p.capable {
        anyhow::bail!(
            "partner {end}: its hardware cannot do the modes it is configured to; widen it with Partner::capable_of"
        );
    }
    Ok(())
}

impl TryFrom<&AutonegArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &AutonegArgs) -> anyhow::Result<Config> {
        Config::new(args.params())
    }
}

/// `wirespeed autoneg`: flags -> config -> the job -> the document out.
pub(crate) fn run(args: AutonegArgs) -> anyhow::Result<()> {
    let doc = measure(&Config::try_from(&args)?);
    let out = OutputArgs {
        json: args.json,
        rate_format: RateFormat::Adaptive,
        metrics_file: args.metrics_file,
    };
    output::print(&out, &doc).context("writing the result")
}

impl AutonegArgs {
    /// The job the flags ask for: a word to decode, abilities to encode, or two partners (each
    /// limited to what it is capable of) to resolve.
    fn params(&self) -> Params {
        if let Some(word) = self.decode {
            Params::Decode { word }
        } else if let Some(modes) = self.encode {
            Params::Encode {
                modes,
                pause: self.pause,
                asym_pause: self.asym_pause,
                remote_fault: self.remote_fault,
                ack: self.ack,
            }
        } else {
            let (mut a, mut b) = (self.partners[0], self.partners[1]);
            if let Some(c) = self.capable_a {
                a = a.capable_of(c);
            }
            if let Some(c) = self.capable_b {
                b = b.capable_of(c);
            }
            Params::Resolve { a, b }
        }
    }
}
