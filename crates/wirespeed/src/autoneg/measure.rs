//! The work of `wirespeed autoneg`, pure (Clause 28's arithmetic in `wirespeed_model::autoneg`):
//! the job in, the typed document out, nothing printed.

use wirespeed_model::autoneg::{BasePage, Config, LinkCodeWord, Partner, resolve};
use wirespeed_report::Document;

use super::result::{AutonegReport, Params, ResolveReport, WordReport};

/// Resolves two partners, decodes a word or encodes one, as the config asks, with the verdict
/// of a resolution.
pub fn measure(config: &super::Config) -> Document<Params, AutonegReport> {
    let params = config.job;
    let (report, verdicts) = match &params {
        Params::Decode { word } => (word_report(BasePage::parse(*word)), Vec::new()),
        Params::Encode {
            modes,
            pause,
            asym_pause,
            remote_fault,
            ack,
        } => {
            let mut page = BasePage::advertising(*modes, *pause, *asym_pause);
            page.remote_fault = *remote_fault;
            page.acknowledge = *ack;
            (word_report(page), Vec::new())
        }
        Params::Resolve { a, b } => {
            let (a, b) = (*a, *b);
            let resolution = resolve(a, b);
            let verdicts = vec![wirespeed_model::autoneg::verdict(&resolution)];
            let report = ResolveReport {
                a,
                b,
                a_base_page: base_page(a),
                b_base_page: base_page(b),
                resolution,
            };
            (AutonegReport::Resolve(report), verdicts)
        }
    };
    let mut doc = Document::new("autoneg", params, report);
    for v in &verdicts {
        doc.verdict(v);
    }
    doc
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
