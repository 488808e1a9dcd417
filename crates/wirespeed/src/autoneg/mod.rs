//! `wirespeed autoneg`: what two link partners settle on, and the link code words they send.

pub(crate) mod html;
mod measure;
mod metrics;
pub(crate) mod result;
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
pub(crate) struct AutonegArgs {
    /// The two link partners, A then B: auto (10/100, half and full), auto:10/100/1000,
    /// auto:10-half,100-full, auto:0x01E1 (a link code word), or a forced mode such as
    /// 100-full or 10-half.
    #[arg(value_name = "PARTNER", num_args = 2)]
    partners: Vec<Partner>,

    /// What A's hardware can do beyond its configuration (modes as for auto:), to tell a link
    /// that is slower than it could be.
    #[arg(long, value_name = "MODES", requires = "partners", conflicts_with_all = ["decode", "encode"])]
    capable_a: Option<Abilities>,

    /// What B's hardware can do beyond its configuration.
    #[arg(long, value_name = "MODES", requires = "partners", conflicts_with_all = ["decode", "encode"])]
    capable_b: Option<Abilities>,

    /// Decode a base-page link code word given in hex (0x01E1) or binary (0b...).
    #[arg(long, value_name = "WORD")]
    decode: Option<LinkCodeWord>,

    /// Encode the base page that advertises these modes (10/100, or 10-half,100-full, ...).
    #[arg(long, value_name = "MODES")]
    encode: Option<Abilities>,

    /// With --encode: advertise symmetric PAUSE (A5).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    pause: bool,

    /// With --encode: advertise asymmetric PAUSE (A6).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    asym_pause: bool,

    /// With --encode: set Remote Fault (D13).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    remote_fault: bool,

    /// With --encode: set Acknowledge (D14).
    #[arg(long, requires = "encode", conflicts_with_all = ["partners", "decode"])]
    ack: bool,

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: AutonegArgs,
    }

    fn parse(argv: &[&str]) -> Result<AutonegArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("autoneg").chain(argv.iter().copied()))
            .map(|w| w.args)
    }

    #[test]
    fn one_job_at_a_time() {
        assert!(parse(&[]).is_err(), "a job is required");
        assert!(parse(&["auto"]).is_err(), "two partners");
        assert!(parse(&["auto", "100-full"]).is_ok());
        assert!(parse(&["--decode", "0x01E1"]).is_ok());
        assert!(parse(&["--decode", "0x01E1", "--encode", "10/100"]).is_err());
        assert!(parse(&["auto", "auto", "--decode", "0x1"]).is_err());
        assert!(
            parse(&["--pause", "--decode", "0x1"]).is_err(),
            "--pause needs --encode"
        );
        assert!(parse(&["--capable-a", "10/100", "--decode", "0x1"]).is_err());
    }

    /// Each job's config: --capable-a widens what A's hardware could do beyond what it
    /// advertises (B keeps its own), and the encode flags reach the page.
    #[test]
    fn the_config_is_the_job() {
        let config = |argv: &[&str]| Config::try_from(&parse(argv).unwrap()).unwrap();
        let Params::Resolve { a, b } =
            config(&["auto:10-half", "auto", "--capable-a", "10/100/1000"]).job
        else {
            panic!("a resolution")
        };
        let modes = |m: &str| m.parse::<Abilities>().unwrap();
        assert_eq!(a.config, "auto:10-half".parse::<Partner>().unwrap().config);
        assert_eq!(a.capable, modes("10/100/1000").union(modes("10-half")));
        assert_ne!(
            a.capable,
            modes("10-half"),
            "A could do more than it advertises"
        );
        assert_eq!(b, "auto".parse::<Partner>().unwrap());
        assert!(matches!(
            config(&["--encode", "10/100", "--pause"]).job,
            Params::Encode {
                pause: true,
                ack: false,
                ..
            }
        ));
        assert!(matches!(
            config(&["--decode", "0x01E1"]).job,
            Params::Decode { .. }
        ));
    }

    /// Issue 30: a library caller resolves seed 003's Appendix A row 3 (a NIC negotiating, the
    /// switch forced to 100 full: a duplex mismatch, A at half) and is refused what the flags
    /// cannot say. tests/autoneg.rs encodes and decodes pages this way.
    #[test]
    fn a_library_caller_runs_autoneg() {
        use wirespeed_model::autoneg::Technology;
        let partner = |p: &str| p.parse::<Partner>().unwrap();
        let doc = measure(&Config::resolve(partner("auto"), partner("100-full")).unwrap());
        let AutonegReport::Resolve(r) = &doc.result else {
            panic!("a resolution: {:?}", doc.result)
        };
        assert_eq!(r.a_base_page.map(|w| w.bits()), Some(0x01E1));
        assert!(r.b_base_page.is_none(), "a forced end sends no page");
        assert_eq!(doc.verdicts.len(), 1);
        assert!(
            doc.verdicts[0].starts_with("DUPLEX MISMATCH"),
            "{:?}",
            doc.verdicts
        );
        let refused = |job: Params| format!("{:#}", Config::new(job).unwrap_err());
        let mute = Partner::auto(Abilities::NONE);
        assert!(
            refused(Params::Resolve {
                a: mute,
                b: partner("auto")
            })
            .contains("partner A")
        );
        let short = Partner {
            capable: Abilities::NONE.with(Technology::Base10THalf),
            ..partner("auto")
        };
        assert!(
            refused(Params::Resolve {
                a: partner("auto"),
                b: short
            })
            .contains("partner B")
        );
        let nothing = Params::Encode {
            modes: Abilities::NONE,
            pause: false,
            asym_pause: false,
            remote_fault: false,
            ack: false,
        };
        assert!(refused(nothing).contains("--encode"));
    }

    #[test]
    fn values_reach_the_model() {
        let a = parse(&["auto", "10-half", "--capable-b", "10/100"]).unwrap();
        assert_eq!(a.partners.len(), 2);
        assert_eq!(a.capable_b, Some(Abilities::fast_ethernet()));
        let a = parse(&["--encode", "10/100", "--pause", "--ack"]).unwrap();
        assert!(a.pause && a.ack && !a.asym_pause);
        assert!(parse(&["--decode", "0x10000"]).is_err());
        assert!(parse(&["fast", "auto"]).is_err());
    }
}
