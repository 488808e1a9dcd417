//! The work of `wirespeed model`: the model file and the saved probe read (both bounded), and
//! each job's typed document (`predict`, `compare_probe`, `fit`). It prints nothing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use wirespeed_model::delay::{
    self, Component, Cost, MeasuredHop, ModelFile, SegmentComparison, Tolerance,
};
use wirespeed_report::Document;

use super::result::{CompareReport, FitReport, ModelParameters, NamedSegment, PredictReport};
use super::{Config, Job, verdicts};

/// What a `model` job made: the document of each, and for `compare` the path and probe hops
/// it compared (for the seed's figure 4).
pub enum Measured {
    Predict(Document<ModelParameters, PredictReport>),
    Compare(Compared),
    Fit(Document<ModelParameters, FitReport>),
}

/// The job the config holds, on the files it read: pure from here on (a path the model file
/// does not have is refused here). It prints nothing and writes no plot.
pub fn measure(config: &Config) -> anyhow::Result<Measured> {
    Ok(match &config.job {
        Job::Predict {
            model,
            file,
            path,
            sizes,
        } => Measured::Predict(predict(model, file, path, sizes)?),
        Job::Compare {
            model,
            file,
            path,
            probe,
            probe_file,
            tolerance,
            ..
        } => Measured::Compare(compare_probe(
            model, file, path, probe, probe_file, *tolerance,
        )?),
        Job::Fit { probe, probe_file } => Measured::Fit(fit(probe, probe_file)),
    })
}

/// `model predict`: a path's one-way delay for these sizes, group by group.
fn predict(
    model: &ModelFile,
    file: &Path,
    path: &str,
    sizes: &[usize],
) -> anyhow::Result<Document<ModelParameters, PredictReport>> {
    let p = model.path(path)?;
    let report = PredictReport {
        file: file.display().to_string(),
        path: path.to_string(),
        description: p.description.clone(),
        velocity_factor: p.velocity_factor,
        prediction: p.predict(&sizes.iter().map(|&s| s as u64).collect::<Vec<_>>()),
    };
    let params = ModelParameters {
        action: "predict",
        model_file: Some(file.to_path_buf()),
        path: Some(path.to_string()),
        probe_file: None,
    };
    Ok(Document::new("model", params, report))
}

/// What `model compare` found: its document, and the path and probe hops it compared (for the
/// seed's figure 4).
pub struct Compared {
    pub doc: Document<ModelParameters, CompareReport>,
    pub(crate) path: delay::Path,
    pub(crate) measured: Vec<ProbedHop>,
}

/// `model compare`: a saved probe against a path's prediction, segment by segment, with the
/// verdict on its anomalies.
fn compare_probe(
    model: &ModelFile,
    file: &Path,
    path: &str,
    measured: &[ProbedHop],
    probe: &Path,
    tol: Tolerance,
) -> anyhow::Result<Compared> {
    let probe_name = probe.display().to_string();
    let (p, segments) = compare(model, path, measured, tol, &probe_name)?;
    let anomalies = segments.iter().filter(|s| s.anomalous).count();
    let total = segments.len();
    let report = CompareReport {
        path: path.to_string(),
        tolerance: tol,
        segments: segments
            .into_iter()
            .map(|segment| NamedSegment {
                to: hop_label(measured, segment.hop),
                segment,
            })
            .collect(),
    };
    let params = ModelParameters {
        action: "compare",
        model_file: Some(file.to_path_buf()),
        path: Some(path.to_string()),
        probe_file: Some(probe.to_path_buf()),
    };
    let mut doc = Document::new("model", params, report);
    doc.verdict(&verdicts::compare_verdict(anomalies, total));
    Ok(Compared {
        doc,
        path: p,
        measured: measured.to_vec(),
    })
}

/// `model fit`: a per-hop probe as a component table and a path through it.
fn fit(measured: &[ProbedHop], probe: &Path) -> Document<ModelParameters, FitReport> {
    let report = fit_table(measured);
    let params = ModelParameters {
        action: "fit",
        model_file: None,
        path: None,
        probe_file: Some(probe.to_path_buf()),
    };
    Document::new("model", params, report)
}

pub(super) fn load(file: &Path) -> anyhow::Result<ModelFile> {
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
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct ProbedHop {
    pub hop: MeasuredHop,
    pub responder: Option<String>,
    pub destination: bool,
    pub increment: Option<Cost>,
    /// (bytes sent, minimum RTT ms) of sizes whose answer echoed the whole probe.
    pub echoed_minimums: Vec<(f64, f64)>,
}

pub(super) fn read_probe(file: &Path) -> anyhow::Result<Vec<ProbedHop>> {
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

/// Where a segment ends, named from the probe's hops: the hop and its responder; the
/// destination as such. A probe of the destination alone (no `--hops`) sends at TTL 64, which
/// counts no hops, so its one hop is named by its responder only, never "hop 64".
#[doc(hidden)]
pub fn hop_label(probe: &[ProbedHop], hop: u32) -> String {
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

/// Each hop's own cost as a component, and the path through them, as TOML.
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
