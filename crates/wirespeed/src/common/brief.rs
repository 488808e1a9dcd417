//! `--brief`: the answer and nothing else, one headline line per test, for people who want the
//! figure at a glance (iperf3's two summary lines are what they compare with) and for scripts
//! that read a line rather than a document. Each measuring command's result type writes its
//! own headline from its typed figures ([`Headline`]), never from its text view.

use std::io::{self, Write};

use clap::Args;
use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_report::Document;

use crate::common::line_prefix::LinePrefix;
use crate::common::output::OutputArgs;

/// `--brief`, flattened into the measuring commands.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BriefArgs {
    /// Print one headline line per test (the figure, and the ceiling it is compared with)
    /// instead of the whole report.
    #[arg(long)]
    pub(crate) brief: bool,
}

impl BriefArgs {
    /// `--brief` with a JSON output is refused: a document is the whole answer.
    pub(crate) fn check(
        &self,
        output: &OutputArgs,
        other_json: &[(bool, &str)],
    ) -> anyhow::Result<()> {
        if !self.brief {
            return Ok(());
        }
        if output.json {
            anyhow::bail!(
                "--brief prints one line of text and --json a whole document: drop one of them"
            );
        }
        if let Some((_, flag)) = other_json.iter().find(|(on, _)| *on) {
            anyhow::bail!("--brief prints one line of text and {flag} JSON: drop one of them");
        }
        Ok(())
    }
}

/// A result's answer in one line per test, from its typed figures.
#[doc(hidden)]
pub trait Headline {
    /// The headline lines, rates written in `format` (`-f`).
    fn headline(&self, format: RateFormat) -> Vec<String>;
}

/// Prints `doc`'s headline (each line after `prefix`), and writes its metrics file as the full
/// output would.
pub(crate) fn print<P, R>(
    output: &OutputArgs,
    doc: &Document<P, R>,
    prefix: &LinePrefix,
) -> io::Result<()>
where
    P: Serialize,
    R: Serialize + Headline + crate::common::metrics::Metrics,
{
    let stdout = io::stdout();
    let mut out = prefix.wrap(stdout.lock());
    for line in doc.result.headline(output.rate_format) {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if let Some(path) = &output.metrics_file {
        crate::common::metrics::write_file(path, doc)
            .map_err(|e| io::Error::other(format!("{e:#}")))?;
    }
    Ok(())
}

/// The document as `--brief` asks: its headline, or the whole text or JSON without it.
pub(crate) fn show<P, R>(
    brief: &BriefArgs,
    output: &OutputArgs,
    doc: &Document<P, R>,
) -> anyhow::Result<()>
where
    P: Serialize,
    R: Serialize + Headline + wirespeed_report::Render + crate::common::metrics::Metrics,
{
    use anyhow::Context;
    let written = if brief.brief {
        print(output, doc, &LinePrefix::default())
    } else {
        crate::common::output::print(output, doc)
    };
    written.context("writing the result")
}

/// A run cut short (Ctrl-C) as `--brief` asks: `PARTIAL: what` and the headline of what was
/// finished, or the whole partial report.
pub(crate) fn show_partial<P, R>(
    brief: &BriefArgs,
    output: &OutputArgs,
    doc: &Document<P, R>,
    what: &str,
) -> anyhow::Result<()>
where
    P: Serialize,
    R: Serialize + Headline + wirespeed_report::Render + crate::common::metrics::Metrics,
{
    use anyhow::Context;
    // No metrics file, as the whole partial report writes none: a scraper would take a cut
    // run's figures for a finished one's.
    let written = if brief.brief {
        let mut out = io::stdout().lock();
        writeln!(out, "PARTIAL: {what}").and_then(|()| {
            for line in doc.result.headline(output.rate_format) {
                writeln!(out, "{line}")?;
            }
            out.flush()
        })
    } else {
        crate::common::interrupt::print_partial(output, doc, what)
    };
    written.context("writing the result")
}

/// `share` of `whole` as a percentage with one decimal, for "99.9% of the ceiling".
#[doc(hidden)]
pub fn percent(share: f64, whole: f64) -> String {
    if whole > 0.0 && share.is_finite() {
        format!("{:.1}%", share / whole * 100.0)
    } else {
        "n/a".into()
    }
}

/// Milliseconds with three significant figures at most three decimals: 0.0512 ms, 11.6 ms.
#[doc(hidden)]
pub fn ms(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".into();
    }
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else if value >= 1.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} ms")
}
