//! `wirespeed autoneg`: what two link partners settle on, and the link code words they send.

pub(crate) mod html;
mod metrics;

use std::io::{self, Write};

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_model::autoneg::codeword::FieldRow;
use wirespeed_model::autoneg::{
    Abilities, BasePage, Config, LinkCodeWord, Partner, Resolution, resolve,
};
use wirespeed_report::{Document, Render};

use crate::common::output::{self, OutputArgs};

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

/// What was asked, for the document.
#[derive(Debug, Serialize)]
#[serde(tag = "job", rename_all = "snake_case")]
enum Params {
    Resolve {
        a: Partner,
        b: Partner,
    },
    Decode {
        word: LinkCodeWord,
    },
    Encode {
        modes: Abilities,
        pause: bool,
        asym_pause: bool,
        remote_fault: bool,
        ack: bool,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum AutonegReport {
    Resolve(ResolveReport),
    Word(WordReport),
}

#[derive(Debug, Serialize)]
struct ResolveReport {
    a: Partner,
    b: Partner,
    /// The base page each negotiating end sends; `None` for a forced end (it sends none).
    a_base_page: Option<LinkCodeWord>,
    b_base_page: Option<LinkCodeWord>,
    #[serde(flatten)]
    resolution: Resolution,
}

#[derive(Debug, Serialize)]
struct WordReport {
    word: LinkCodeWord,
    binary: String,
    base_page: BasePage,
    advertised: Option<Abilities>,
    summary: String,
    fields: Vec<FieldRow>,
}

pub(crate) fn run(args: AutonegArgs) -> anyhow::Result<()> {
    let (params, report, verdicts) = if let Some(word) = args.decode {
        (
            Params::Decode { word },
            word_report(BasePage::parse(word)),
            Vec::new(),
        )
    } else if let Some(modes) = args.encode {
        let mut page = BasePage::advertising(modes, args.pause, args.asym_pause);
        page.remote_fault = args.remote_fault;
        page.acknowledge = args.ack;
        let params = Params::Encode {
            modes,
            pause: args.pause,
            asym_pause: args.asym_pause,
            remote_fault: args.remote_fault,
            ack: args.ack,
        };
        (params, word_report(page), Vec::new())
    } else {
        let (mut a, mut b) = (args.partners[0], args.partners[1]);
        if let Some(c) = args.capable_a {
            a = a.capable_of(c);
        }
        if let Some(c) = args.capable_b {
            b = b.capable_of(c);
        }
        let resolution = resolve(a, b);
        let verdicts = vec![wirespeed_model::autoneg::verdict(&resolution)];
        let report = ResolveReport {
            a,
            b,
            a_base_page: base_page(a),
            b_base_page: base_page(b),
            resolution,
        };
        (
            Params::Resolve { a, b },
            AutonegReport::Resolve(report),
            verdicts,
        )
    };
    let mut doc = Document::new("autoneg", params, report);
    for v in &verdicts {
        doc.verdict(v);
    }
    let out = OutputArgs {
        json: args.json,
        rate_format: RateFormat::Adaptive,
        metrics_file: args.metrics_file,
    };
    output::print(&out, &doc).context("writing the result")
}

fn base_page(p: Partner) -> Option<LinkCodeWord> {
    match p.config {
        Config::Auto { advertised } => Some(BasePage::advertising(advertised, false, false).emit()),
        Config::Forced { .. } => None,
    }
}

fn word_report(page: BasePage) -> AutonegReport {
    let word = page.emit();
    let bits = format!("{:016b}", word.bits());
    let binary = bits
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).expect("ASCII digits"))
        .collect::<Vec<_>>()
        .join(" ");
    AutonegReport::Word(WordReport {
        word,
        binary,
        base_page: page,
        advertised: page.abilities(),
        summary: page.summary(),
        fields: page.fields(),
    })
}

impl Render for AutonegReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        match self {
            AutonegReport::Resolve(r) => render_resolve(r, out),
            AutonegReport::Word(w) => render_word(w, out),
        }
    }
}

fn render_resolve(r: &ResolveReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "autoneg: two link partners (IEEE 802.3 Clause 28)")?;
    let res = &r.resolution;
    for (name, partner, state, page) in [
        ("A", &r.a, &res.a, r.a_base_page),
        ("B", &r.b, &res.b, r.b_base_page),
    ] {
        let sends = match page {
            Some(word) => format!("sends base page {word}"),
            None => "sends no link code word".to_string(),
        };
        writeln!(out, "  {name}: {}; {sends}", partner.describe())?;
        let how = match state.how {
            wirespeed_model::autoneg::HowResolved::Negotiated => "negotiated",
            wirespeed_model::autoneg::HowResolved::ParallelDetection => "parallel detection",
            wirespeed_model::autoneg::HowResolved::Forced => "forced",
            wirespeed_model::autoneg::HowResolved::NoLink => "no link",
        };
        if state.technology.is_some() {
            writeln!(out, "     runs {} ({how})", state.describe())?;
        } else {
            writeln!(out, "     {how}")?;
        }
    }
    if let Some(best) = res.best_possible {
        writeln!(out, "  best both could run: {}", best.name())?;
    }
    for note in &res.notes {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

fn render_word(w: &WordReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "link code word {} = {} (D15..D0)", w.word, w.binary)?;
    for row in &w.fields {
        writeln!(
            out,
            "  {:<7} {:<6} {:>5}  {}",
            row.field, row.bits, row.value, row.meaning
        )?;
    }
    writeln!(out, "summary: {}", w.summary)
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
