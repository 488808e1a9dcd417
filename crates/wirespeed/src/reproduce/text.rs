//! The text view every reproduction shares: the ground truth configured, then each
//! comparison as a table (quantity, unit, configured, paper, ours, tolerance, verdict) with
//! each reason once under it, the notes and the count of verdicts; and `--list`'s catalogue.

use std::io::{self, Write};

use wirespeed_report::{Render, Table};

use super::Config;
use super::result::{List, Reproduction};

/// The line on stderr as a reproduction starts: what it runs, naming the path that will
/// really be measured.
pub(crate) fn progress(config: &Config) -> String {
    let name = config.name;
    let what = match &config.options.topology {
        Some(file) => name
            .entry()
            .what
            .replace("labs/seed-001-path.toml", &file.display().to_string()),
        None => name.entry().what.to_string(),
    };
    format!(
        "reproducing {} (seed {}): {what}",
        name.as_str(),
        name.entry().seeds,
    )
}

impl Render for List {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        for e in &self.reproductions {
            writeln!(out, "{:<16} seed {:<9} needs {}", e.name, e.seeds, e.needs)?;
            writeln!(out, "{:<16} {}", "", e.what)?;
        }
        Ok(())
    }
}

/// A figure for a text cell: up to 4 significant digits, thousands grouped.
pub(crate) fn figure(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(v) => {
            let digits = (4 - 1 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
            let s = format!("{v:.digits$}");
            let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
            let grouped = int
                .trim_start_matches('-')
                .parse::<u64>()
                .map_or_else(|_| int.to_string(), wirespeed_model::units::group_digits);
            let sign = if v < 0.0 { "-" } else { "" };
            if frac.is_empty() {
                format!("{sign}{grouped}")
            } else {
                format!("{sign}{grouped}.{frac}")
            }
        }
    }
}

impl Render for Reproduction {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "reproduce {} (seed {})",
            self.name.as_str(),
            self.seeds
        )?;
        writeln!(out, "ground truth configured:")?;
        for s in &self.ground_truth {
            writeln!(out, "  {:<34} {}", s.name, s.value)?;
        }
        for c in &self.comparisons {
            writeln!(out)?;
            writeln!(out, "{}  [{}]", c.title, c.source)?;
            writeln!(out, "  ours: {}", c.method)?;
            let mut t = Table::new([
                "quantity",
                "unit",
                "configured",
                "paper",
                "ours",
                "tolerance",
                "verdict",
            ]);
            for r in &c.rows {
                t.row([
                    r.quantity.clone(),
                    r.unit.clone(),
                    figure(r.configured),
                    figure(r.paper),
                    figure(r.ours),
                    r.tolerance.clone(),
                    r.verdict.label().to_string(),
                ]);
            }
            write!(out, "{t}")?;
            // Each reason once, after the first row it explains.
            let mut said: Vec<&str> = Vec::new();
            for r in c.rows.iter().filter(|r| !r.why.is_empty()) {
                if !said.contains(&r.why.as_str()) {
                    writeln!(out, "  {}: {}", r.quantity, r.why)?;
                    said.push(&r.why);
                }
            }
        }
        if !self.notes.is_empty() {
            writeln!(out)?;
            for n in &self.notes {
                writeln!(out, "note: {n}")?;
            }
        }
        let imprecise = if self.imprecise > 0 {
            format!(", {} not measured precisely enough", self.imprecise)
        } else {
            String::new()
        };
        writeln!(
            out,
            "\n{} rows: {} within tolerance, {} outside{imprecise}, {} not compared",
            self.rows,
            self.within,
            self.outside,
            self.rows - self.within - self.outside - self.imprecise
        )
    }
}
