//! `wirespeed model`: Bellovin's component table (seed 001, Table 1) predicting a path (Table 2),
//! compared with a probe, and fitted from one.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use wirespeed_model::delay::{
    self, Component, Cost, MeasuredHop, ModelFile, Prediction, SegmentComparison, Tolerance,
};
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Document, Render, Table};

use crate::common::output::{self, OutputArgs};

mod metrics;
mod verdicts;
use crate::probe::{Sizes, parse_sizes};

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

pub(crate) fn run(args: ModelArgs) -> anyhow::Result<()> {
    // `model` prints delays, not rates: a rate unit would be parsed and ignored.
    let output = match &args.command {
        ModelCommand::Predict { output, .. }
        | ModelCommand::Fit { output, .. }
        | ModelCommand::Compare { output, .. } => output,
    };
    if output.rate_format != wirespeed_model::RateFormat::Adaptive {
        anyhow::bail!(
            "-f sets the unit of rates, and `model` prints delays (ms, us per byte): leave -f out"
        );
    }
    match args.command {
        ModelCommand::Predict {
            file,
            path,
            sizes,
            output,
        } => {
            let model = load(&file)?;
            let p = model.path(&path)?;
            let report = PredictReport {
                file: file.display().to_string(),
                path: path.clone(),
                description: p.description.clone(),
                velocity_factor: p.velocity_factor,
                prediction: p.predict(&sizes.0.iter().map(|&s| s as u64).collect::<Vec<_>>()),
            };
            let params = ModelParameters {
                action: "predict",
                model_file: Some(file),
                path: Some(path),
                probe_file: None,
            };
            let doc = Document::new("model", params, report);
            output::print(&output, &doc).context("writing the result")
        }
        ModelCommand::Compare {
            file,
            path,
            probe,
            fixed_tolerance_ms,
            per_byte_tolerance,
            plot,
            output,
        } => {
            if let Some(plot) = &plot {
                crate::common::output::check_output_file("--plot", plot)?;
            }
            let model = load(&file)?;
            let measured = read_probe(&probe)?;
            let tol = Tolerance {
                per_byte_relative: per_byte_tolerance / 100.0,
                fixed_ms: fixed_tolerance_ms,
                ..Tolerance::default()
            };
            let probe_name = probe.display().to_string();
            let (p, segments) = compare(&model, &path, &measured, tol, &probe_name)?;
            if let Some(file) = &plot {
                std::fs::write(file, figure_4(&p, &measured)?)
                    .with_context(|| format!("cannot write the plot to {}", file.display()))?;
            }
            let anomalies = segments.iter().filter(|s| s.anomalous).count();
            let total = segments.len();
            let report = CompareReport {
                path: path.clone(),
                tolerance: tol,
                segments: segments
                    .into_iter()
                    .map(|segment| NamedSegment {
                        to: hop_label(&measured, segment.hop),
                        segment,
                    })
                    .collect(),
            };
            let params = ModelParameters {
                action: "compare",
                model_file: Some(file),
                path: Some(path),
                probe_file: Some(probe),
            };
            let mut doc = Document::new("model", params, report);
            doc.verdict(&verdicts::compare_verdict(anomalies, total));
            output::print(&output, &doc).context("writing the result")
        }
        ModelCommand::Fit { probe, output } => {
            let measured = read_probe(&probe)?;
            let report = fit_table(&measured);
            let params = ModelParameters {
                action: "fit",
                model_file: None,
                path: None,
                probe_file: Some(probe),
            };
            let doc = Document::new("model", params, report);
            output::print(&output, &doc).context("writing the result")
        }
    }
}

/// Measured against calculated one-way delay to the destination, as the seed's figure 4.
fn figure_4(path: &delay::Path, measured: &[ProbedHop]) -> anyhow::Result<String> {
    let dest = measured
        .iter()
        .find(|m| m.destination)
        .or_else(|| measured.last());
    let points: Vec<(f64, f64)> = dest
        .map(|d| {
            d.echoed_minimums
                .iter()
                .map(|&(x, rtt)| (x, rtt / 2.0))
                .collect()
        })
        .unwrap_or_default();
    let expected = dest
        .and_then(|d| path.hop_marks().into_iter().find(|m| m.0 == d.hop.hop))
        .map_or_else(|| path.total(), |m| m.1);
    let measured = Curve::new(
        Series {
            name: "measured (min RTT / 2)".into(),
            points: points.clone(),
        },
        Mark::Points,
    );
    let measured = match dest {
        Some(d) => measured.with_fit(d.hop.cost.fixed_ms, d.hop.cost.per_byte_ms),
        None => measured,
    };
    let model = Curve::new(
        Series {
            name: format!("model '{}'", path.name),
            points: points.iter().map(|&(x, _)| (x, expected.at(x))).collect(),
        },
        Mark::Points,
    )
    .with_fit(expected.fixed_ms, expected.per_byte_ms);
    let title = format!("path {}: measured versus calculated", path.name);
    let labels = Labels {
        title: &title,
        x: "packet size, bytes",
        y: "one-way delay, ms",
    };
    Ok(Plot::new(labels)
        .x_from_zero()
        .curve(measured)
        .curve(model)
        .svg()?)
}

/// What `model` was asked to do.
#[derive(Debug, Serialize)]
struct ModelParameters {
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe_file: Option<PathBuf>,
}

fn load(file: &std::path::Path) -> anyhow::Result<ModelFile> {
    let text = crate::common::data::read_user_file(
        file,
        crate::common::data::MAX_TOML_BYTES,
        "model file",
    )?;
    ModelFile::from_toml(&text).with_context(|| format!("model file {}", file.display()))
}

/// The path `path_name` of `model` against per-hop probe fits, segment by segment: the path
/// as compared (a path with no hop marks ends at the probed destination) and its segments.
/// `probe_name` names the probe in errors.
pub(crate) fn compare(
    model: &ModelFile,
    path_name: &str,
    measured: &[ProbedHop],
    tol: Tolerance,
    probe_name: &str,
) -> anyhow::Result<(delay::Path, Vec<SegmentComparison>)> {
    let mut p = model.path(path_name)?.clone();
    if p.elements.iter().all(|e| e.hop.is_none()) {
        // No hop marks: the whole path ends at the probed destination.
        let dest = measured
            .iter()
            .find(|m| m.destination)
            .with_context(|| format!("{probe_name}: the probe has no fitted destination"))?;
        if let Some(last) = p.elements.last_mut() {
            last.hop = Some(dest.hop.hop);
        }
    }
    let hops: Vec<MeasuredHop> = measured.iter().map(|m| m.hop.clone()).collect();
    let segments = delay::compare(&p, &model.components, &hops, tol);
    if segments.is_empty() {
        bail!(
            "{probe_name}: none of the path's marked hops ({}) was fitted in the probe (hops {}); mark elements with hop = TTL",
            p.hop_marks()
                .iter()
                .map(|m| m.0.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            hops.iter()
                .map(|h| h.hop.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok((p, segments))
}

/// One hop of a saved probe result, as the model reads it.
pub(crate) struct ProbedHop {
    hop: MeasuredHop,
    responder: Option<String>,
    destination: bool,
    increment: Option<Cost>,
    /// (bytes sent, minimum RTT ms) of sizes whose answer echoed the whole probe.
    echoed_minimums: Vec<(f64, f64)>,
}

fn read_probe(file: &std::path::Path) -> anyhow::Result<Vec<ProbedHop>> {
    // A probe document keeps every probe: 100,000 of them make about 20 MiB.
    let text = crate::common::data::read_user_file(file, 64 << 20, "probe result")?;
    parse_probe(&text, &file.display().to_string())
}

/// The hops of a probe result (`wirespeed probe --json`); `name` names it in errors.
pub(crate) fn parse_probe(text: &str, name: &str) -> anyhow::Result<Vec<ProbedHop>> {
    // The schema first, so that another command's document is named as such rather than as
    // a probe document missing its fields.
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: Option<String>,
    }
    let head: Schema = serde_json::from_str(text).with_context(|| {
        format!("{name} is not JSON: save a probe with `wirespeed probe HOST --json > FILE`")
    })?;
    let schema = head.schema.unwrap_or_default();
    if schema != "wirespeed.probe.v1" {
        bail!("{name} is not a probe result (schema {schema:?}, expected wirespeed.probe.v1)");
    }
    let doc: ProbeHops = serde_json::from_str(text).with_context(|| {
        format!("{name}: a probe document this version cannot read (save it again with `wirespeed probe HOST --json > FILE`)")
    })?;
    Ok(doc
        .result
        .hops
        .into_iter()
        .filter_map(|h| {
            Some(ProbedHop {
                hop: MeasuredHop {
                    hop: u32::from(h.ttl),
                    cost: h.fit?.one_way,
                },
                responder: h.responder,
                destination: h.destination,
                increment: h.increment.map(|i| i.cost),
                // A size whose answer was cut short (an ICMP quote) is not an echo of it.
                echoed_minimums: h
                    .sizes
                    .iter()
                    .filter(|r| r.sent_bytes == r.returned_bytes)
                    .map(|r| (r.sent_bytes as f64, r.min_rtt_ms))
                    .collect(),
            })
        })
        .collect())
}

/// What `model compare` reads of a probe document: the hops' one-way fits, increments and
/// per-size minimums. Not `probe::ProbeReport` whole: a document written by hand from a
/// paper's figures (examples/bellovin-1992-ih-probe.json) names its responders by host name
/// and carries only the fits.
#[derive(serde::Deserialize)]
struct ProbeHops {
    result: ProbeHopList,
}

#[derive(serde::Deserialize)]
struct ProbeHopList {
    #[serde(default)]
    hops: Vec<ProbeHop>,
}

#[derive(serde::Deserialize)]
struct ProbeHop {
    ttl: u8,
    responder: Option<String>,
    #[serde(default)]
    destination: bool,
    fit: Option<OneWayFit>,
    increment: Option<IncrementCost>,
    #[serde(default)]
    sizes: Vec<SizeMinimum>,
}

#[derive(serde::Deserialize)]
struct OneWayFit {
    one_way: Cost,
}

#[derive(serde::Deserialize)]
struct IncrementCost {
    cost: Cost,
}

#[derive(serde::Deserialize)]
struct SizeMinimum {
    sent_bytes: usize,
    returned_bytes: usize,
    min_rtt_ms: f64,
}

#[derive(Debug, Serialize)]
struct PredictReport {
    file: String,
    path: String,
    description: String,
    velocity_factor: f64,
    prediction: Prediction,
}

impl Render for PredictReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "model {} path {}: {} (one-way, ms; cable at {}c)",
            self.file, self.path, self.description, self.velocity_factor
        )?;
        let p = &self.prediction;
        let mut header = vec!["component".to_string(), "fixed".into(), "per byte".into()];
        header.extend(p.sizes.iter().map(|s| format!("{s} bytes")));
        let mut t = Table::new(header);
        for r in p.rows.iter().chain([&p.total]) {
            let mut row = vec![
                r.group.clone(),
                format!("{:.4}", r.cost.fixed_ms),
                format!("{:.6}", r.cost.per_byte_ms),
            ];
            row.extend(r.at_sizes_ms.iter().map(|v| format!("{v:.4}")));
            t.row(row);
        }
        write!(out, "{t}")
    }
}

#[derive(Debug, Serialize)]
struct CompareReport {
    path: String,
    tolerance: Tolerance,
    segments: Vec<NamedSegment>,
}

/// A segment with the probe's name for where it ends.
#[derive(Debug, Serialize)]
struct NamedSegment {
    /// "hop 1 (ih1)", "hop 2 (ih2, destination)", or "HOST (destination)" for a probe of the
    /// destination alone.
    to: String,
    #[serde(flatten)]
    segment: SegmentComparison,
}

/// Where a segment ends, named from the probe's hops: the hop and its responder; the
/// destination as such. A probe of the destination alone (no `--hops`) sends at TTL 64, which
/// counts no hops, so its one hop is named by its responder only, never "hop 64".
fn hop_label(probe: &[ProbedHop], hop: u32) -> String {
    let Some(found) = probe.iter().find(|p| p.hop.hop == hop) else {
        return format!("hop {hop}");
    };
    let traced = probe.len() > 1;
    match (found.responder.as_deref(), found.destination) {
        (Some(who), true) if traced => format!("hop {hop} ({who}, destination)"),
        (Some(who), true) => format!("{who} (destination)"),
        (None, true) if traced => format!("hop {hop} (destination)"),
        (None, true) => "the destination".to_string(),
        (Some(who), false) => format!("hop {hop} ({who})"),
        (None, false) => format!("hop {hop}"),
    }
}

impl Render for CompareReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "path {} against the probe (one-way, ms; tolerance {} ms fixed, {:.0}% per byte)",
            self.path,
            self.tolerance.fixed_ms,
            self.tolerance.per_byte_relative * 100.0
        )?;
        let mut t = Table::new([
            "to",
            "components",
            "expected fixed",
            "measured",
            "expected per byte",
            "measured",
            "",
        ]);
        for named in &self.segments {
            let s = &named.segment;
            t.row([
                named.to.clone(),
                s.elements.join(" + "),
                format!("{:.4}", s.expected.fixed_ms),
                format!("{:.4}", s.measured.fixed_ms),
                format!("{:.6}", s.expected.per_byte_ms),
                format!("{:.6}", s.measured.per_byte_ms),
                if s.anomalous { "ANOMALY" } else { "ok" }.to_string(),
            ]);
        }
        write!(out, "{t}")?;
        for named in self.segments.iter().filter(|s| s.segment.anomalous) {
            for h in &named.segment.hypotheses {
                writeln!(out, "{}: hypothesis: {h}", named.to)?;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Serialize)]
struct FitReport {
    components: BTreeMap<String, Component>,
    path: Vec<(String, u32)>,
    toml: String,
}

fn fit_table(hops: &[ProbedHop]) -> FitReport {
    let mut components = BTreeMap::new();
    let mut path = Vec::new();
    for h in hops {
        let Some(inc) = h.increment else { continue };
        let tag = format!("hop{}", h.hop.hop);
        let who = h.responder.clone().unwrap_or_else(|| "*".into());
        let description = match inc.implied_bits_per_second() {
            Some(bps) => format!(
                "hop {} ({who}): own cost, implied link rate {}",
                h.hop.hop,
                wirespeed_model::RateFormat::Adaptive.format(bps)
            ),
            None => format!("hop {} ({who}): own cost", h.hop.hop),
        };
        // A hop's own cost is a difference of two fits, so a cost near zero can come out a
        // little below it; a model file holds no negative cost, so such a figure is written as
        // 0 and the description keeps what was measured.
        let mut description = description;
        for (name, value) in [("fixed", inc.fixed_ms), ("per byte", inc.per_byte_ms)] {
            if value < 0.0 {
                description.push_str(&format!("; {name} measured {value:.9} ms, written as 0"));
            }
        }
        components.insert(
            tag.clone(),
            Component {
                fixed_ms: inc.fixed_ms.max(0.0),
                per_byte_ms: inc.per_byte_ms.max(0.0),
                description,
            },
        );
        path.push((tag, h.hop.hop));
    }
    let mut toml =
        String::from("# wirespeed model fit: each hop's own cost from a probe\n[components]\n");
    for (tag, c) in &components {
        toml.push_str(&format!(
            "{tag} = {{ fixed_ms = {:.6}, per_byte_ms = {:.9}, description = {:?} }}\n",
            c.fixed_ms, c.per_byte_ms, c.description
        ));
    }
    toml.push_str("\n[paths.probed]\nelements = [\n");
    for (tag, hop) in &path {
        toml.push_str(&format!("  {{ component = \"{tag}\", hop = {hop} }},\n"));
    }
    toml.push_str("]\n");
    FitReport {
        components,
        path,
        toml,
    }
}

impl Render for FitReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.toml.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
