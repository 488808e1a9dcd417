//! `wirespeed autoneg`: what two link partners settle on, and the link code words they send.

pub(crate) mod html;
mod measure;
mod metrics;
pub(crate) mod result;
mod text;

use anyhow::Context;
use clap::Args;
use wirespeed_model::RateFormat;
use wirespeed_model::autoneg::{Abilities, LinkCodeWord, Partner};

use crate::common::output::{self, OutputArgs};
pub(crate) use result::AutonegReport;
use result::Params;

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
/// already limited to what it is capable of) to resolve. Every check is clap's (one job, the
/// words and modes parsed), so the conversion cannot fail.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) job: Params,
}

impl From<&AutonegArgs> for Config {
    fn from(args: &AutonegArgs) -> Config {
        Config { job: args.params() }
    }
}

/// `wirespeed autoneg`: flags -> config -> the job -> the document out.
pub(crate) fn run(args: AutonegArgs) -> anyhow::Result<()> {
    let doc = measure::measure(&Config::from(&args));
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
        let config = |argv: &[&str]| Config::from(&parse(argv).unwrap());
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
