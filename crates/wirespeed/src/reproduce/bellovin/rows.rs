//! The rows of `reproduce bellovin`: each hop's own cost and the whole path against the
//! configured components (and Table 1 on the seed's path), what the lab itself adds, §4's
//! misconfigured board, and the ground truth the run configured.

use anyhow::Context;

use wirespeed_lab::truth::ChainHop;
use wirespeed_model::perhop::{self, OwnCost, RttLine};

use super::super::{Comparison, Row, Setting, Verdict, setting, tolerance};
use super::{
    ANSWER_TOLERANCE, DENSE_BELOW_MS, DENSE_PER_SIZE, FIXED_TOLERANCE_US, FamilyRun,
    LONGEST_BUDGET, MAX_ROUNDS, MIN_ROUNDS, OwnCostSpread, PER_BYTE_TOLERANCE, ProbeDocument,
    ProbedHop, ROUNDS, ROUNDS_BUDGET, SEED_PER_HOP, SIZES, SLOW_SIZES, SPARSE_PER_SIZE, one_way,
    own_cost_spread, path_spread, planes,
};

/// The tolerance column: the fixed tolerance, and this run's own 95% interval beside it.
pub(super) fn tolerance_beside(
    tolerance: &str,
    interval: f64,
    unit: &str,
    digits: usize,
) -> String {
    if interval.is_finite() {
        format!("{tolerance} (run +-{interval:.digits$}{unit})")
    } else {
        format!("{tolerance} (run: no interval)")
    }
}

/// A router's answer cost per returned byte against its configured one: the fixed
/// [`ANSWER_TOLERANCE`], with the run's own 95% interval (`spread`, ms) beside it.
#[doc(hidden)]
pub fn judge_answer(ours_ms: f64, truth_ms: f64, spread_ms: f64) -> (Verdict, String, String) {
    let r = ours_ms / truth_ms - 1.0;
    let hw = spread_ms / truth_ms.abs();
    let judged = tolerance::judge(r, ANSWER_TOLERANCE, hw);
    let tolerance = tolerance_beside(
        &format!("{:.0}%", ANSWER_TOLERANCE * 100.0),
        hw * 100.0,
        "%",
        1,
    );
    let why = format!(
        "{:+.2}%, this run's 95% interval +-{:.3} us/byte ({:.1}%: jackknife over its rounds); cost per returned byte minus cost per sent byte of this hop's plane{}",
        r * 100.0,
        spread_ms * 1e3,
        hw * 100.0,
        judged.said
    );
    (judged.verdict, tolerance, why)
}

/// One family's comparisons: each hop's own cost, and the whole path.
#[doc(hidden)]
pub fn family_comparisons(
    m: &FamilyRun,
    (configured, twin_configured): (&[ChainHop], &[ChainHop]),
    (from, to): (&str, &str),
    seed_path: bool,
    method: &str,
) -> anyhow::Result<(Vec<Comparison>, Vec<OwnCost>)> {
    let n = configured.len();
    let twin_probed = planes(&m.twin, |_| true)?;
    let real = planes(&m.real, |_| true)?;
    let machinery: Vec<RttLine> = twin_probed
        .iter()
        .zip(twin_configured)
        .map(|(m, c)| m.line - c.line)
        .collect();
    let corrected: Vec<RttLine> = real
        .iter()
        .zip(twin_probed.iter().zip(twin_configured))
        .map(|(r, (t, c))| perhop::calibrated(r.line, t.line, c.line))
        .collect();
    let raw: Vec<RttLine> = real.iter().map(|r| r.line).collect();
    let truth_lines: Vec<RttLine> = configured.iter().map(|h| h.line).collect();
    let own_ours = perhop::own_costs(&corrected);
    let own_raw = perhop::own_costs(&raw);
    let own_truth = perhop::own_costs(&truth_lines);
    let spread = own_cost_spread(&m.twin, &m.real, twin_configured, m.rounds)?;
    let path_hw = path_spread(&m.twin, &m.real, twin_configured, m.rounds)?;
    let per_hop = per_hop_rows(
        configured,
        &real,
        (&own_truth, &own_ours, &own_raw),
        &spread,
        seed_path,
    );
    let path = path_rows(
        (truth_lines[n - 1], corrected[n - 1], raw[n - 1]),
        path_hw,
        seed_path,
        to,
        from,
    );
    let family = m.family.name();
    let method = format!(
        "{method}; {family}: {} rounds ({}), {:.1} s",
        m.rounds, m.convergence, m.seconds
    );
    Ok((
        vec![
            Comparison {
                title: format!(
                    "Each hop's own cost, {from} -> {to} over {family}, calibrated (one way)"
                ),
                source: String::new(),
                method: method.clone(),
                rows: per_hop,
            },
            Comparison {
                title: format!("The whole path, {from} -> {to} over {family} (one way)"),
                source: "the sum of the configured components".into(),
                method,
                rows: path,
            },
        ],
        perhop::own_costs(&machinery),
    ))
}

/// The path probed, its routers' configured costs, how it was probed and the tolerances.
#[doc(hidden)]
pub fn ground_truth(
    file_name: &str,
    configured: &[ChainHop],
    topology: &wirespeed_lab::Topology,
    family_names: &[&str],
    asked: Option<std::time::Duration>,
) -> Vec<Setting> {
    let mut truth_settings = vec![setting(
        &format!("path ({file_name})"),
        configured
            .iter()
            .map(|h| format!("{} -> {}", h.previous, h.node))
            .collect::<Vec<_>>()
            .join(", "),
    )];
    for node in &topology.nodes {
        if let wirespeed_lab::topology::NodeKind::Router(r) = &node.kind {
            truth_settings.push(setting(
                &format!("{} forward / answer", node.name),
                format!(
                    "{} + {}/byte; {} + {}/byte",
                    wirespeed_model::units::format_seconds(r.forward.fixed.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.forward.per_byte.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.answer.fixed.as_secs_f64()),
                    wirespeed_model::units::format_seconds(r.answer.per_byte.as_secs_f64()),
                ),
            ));
        }
    }
    let rounds = match asked {
        None => format!(
            "behind a slow line as many as fit in {} s, {MIN_ROUNDS} to {MAX_ROUNDS}; else {MIN_ROUNDS} to {MAX_ROUNDS} until the even and odd rounds agree; budgets {} to {} s per family",
            ROUNDS_BUDGET.as_secs(),
            ROUNDS_BUDGET.as_secs(),
            LONGEST_BUDGET.as_secs()
        ),
        Some(budget) => format!(
            "behind a slow line as many as fit in the budget, at least {ROUNDS}; else up to {MAX_ROUNDS} until the even and odd rounds agree; budget {} s per family (-t)",
            budget.as_secs_f64()
        ),
    };
    truth_settings.push(setting(
        "probe",
        format!(
            "ICMP TTL-limited (time exceeded) and echo at the destination, over {}; hops with round trips under {DENSE_BELOW_MS} ms at 1500 bytes: sizes {SIZES} bytes x {DENSE_PER_SIZE} probes per round, the others sizes {SLOW_SIZES} x {SPARSE_PER_SIZE}; rounds planned from the configured round trips ({rounds}); rounds alternating between twin and chain; per size the lower half's mean of the rounds' minimums (fast hops) or of their single probes (slow), plane fit in bytes sent and returned",
            family_names.join(" and "),
        ),
    ));
    truth_settings.push(setting(
        "tolerances",
        format!(
            "fixed: {:.0}% per byte, {FIXED_TOLERANCE_US:.0} us fixed, {:.0}% per returned byte of a router's answer; a row whose 95% interval (jackknife over the rounds) is wider than its tolerance is not measured precisely enough",
            PER_BYTE_TOLERANCE * 100.0,
            ANSWER_TOLERANCE * 100.0
        ),
    ));
    truth_settings
}

pub(super) fn per_hop_rows(
    configured: &[ChainHop],
    real: &[ProbedHop],
    (truth, ours, raw): (&[OwnCost], &[OwnCost], &[OwnCost]),
    spread: &[OwnCostSpread],
    seed_path: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (k, hop) in configured.iter().enumerate() {
        let label = format!("hop {} ({} -> {})", hop.ttl, hop.previous, hop.node);
        let paper = seed_path.then(|| SEED_PER_HOP.get(k).copied()).flatten();
        let r = ours[k].per_byte_ms / truth[k].per_byte_ms - 1.0;
        let hw = spread[k].per_byte_ms / truth[k].per_byte_ms.abs();
        let judged = tolerance::judge(r, PER_BYTE_TOLERANCE, hw);
        rows.push(Row {
            quantity: format!("{label} per byte out"),
            unit: "us/byte".into(),
            configured: Some(truth[k].per_byte_ms * 1e3),
            paper: paper.map(|p| p.0),
            ours: Some(ours[k].per_byte_ms * 1e3),
            tolerance: tolerance_beside("2%", hw * 100.0, "%", 2),
            verdict: judged.verdict,
            why: format!(
                "{:+.2}% (this run's 95% interval +-{:.2}%); the link into {} plus {}'s forwarding per byte (one quantity seen from one end){}",
                r * 100.0,
                hw * 100.0,
                hop.node,
                hop.previous,
                judged.said
            ),
        });
        let d = (ours[k].fixed_ms - truth[k].fixed_ms) * 1e3;
        let hw_us = spread[k].fixed_ms * 1e3;
        let judged = tolerance::judge(d, FIXED_TOLERANCE_US, hw_us);
        rows.push(Row {
            quantity: format!("{label} fixed"),
            unit: "us".into(),
            configured: Some(truth[k].fixed_ms * 1e3),
            paper: None,
            ours: Some(ours[k].fixed_ms * 1e3),
            tolerance: tolerance_beside("20 us", hw_us, " us", 1),
            verdict: judged.verdict,
            why: format!(
                "{d:+.1} us (this run's 95% interval +-{hw_us:.1} us) after subtracting the lab's own cost (as measured: {:.1} us); configured = link + {}'s forwarding + half of ({}'s answer - {}'s answer){}",
                raw[k].fixed_ms * 1e3,
                hop.previous,
                hop.node,
                hop.previous,
                judged.said
            ),
        });
        if hop.router {
            let separated = real[k].separated;
            let (verdict, tolerance, why) = judge_answer(
                ours[k].answer_per_byte_ms,
                truth[k].answer_per_byte_ms,
                spread[k].answer_per_byte_ms,
            );
            rows.push(Row {
                quantity: format!("{} answer per byte", hop.node),
                unit: "us/byte".into(),
                configured: Some(truth[k].answer_per_byte_ms * 1e3),
                paper: paper.and_then(|p| p.1),
                ours: separated.then_some(ours[k].answer_per_byte_ms * 1e3),
                tolerance,
                verdict: if separated { verdict } else { Verdict::Outside },
                why: if separated {
                    why
                } else {
                    "not separated: the sizes did not straddle the quote limit".into()
                },
            });
        }
    }
    rows
}

/// The whole path's rows from its (configured, calibrated, as measured) round-trip lines and
/// the run's 95% half-widths of the one-way (per byte, fixed), ms.
pub(super) fn path_rows(
    (truth, ours, raw): (RttLine, RttLine, RttLine),
    (hw_per_byte, hw_fixed): (f64, f64),
    seed_path: bool,
    to: &str,
    from: &str,
) -> Vec<Row> {
    let ((truth_pb, truth_fixed), (ours_pb, ours_fixed)) = (one_way(truth), one_way(ours));
    let r = ours_pb / truth_pb - 1.0;
    let hw = hw_per_byte / truth_pb.abs();
    let per_byte = tolerance::judge(r, PER_BYTE_TOLERANCE, hw);
    let d = (ours_fixed - truth_fixed) * 1e3;
    let hw_us = hw_fixed * 1e3;
    let fixed = tolerance::judge(d, FIXED_TOLERANCE_US, hw_us);
    vec![
        Row {
            quantity: format!("one-way per byte, {from} -> {to}"),
            unit: "us/byte".into(),
            configured: Some(truth_pb * 1e3),
            // Table 1: DS0 142.857 + ciscoser 2.939 + ciscomci 0.04 + 2 Ethernets 1.6.
            paper: seed_path.then_some(142.857 + 2.939 + 0.04 + 1.6),
            ours: Some(ours_pb * 1e3),
            tolerance: tolerance_beside("2%", hw * 100.0, "%", 2),
            verdict: per_byte.verdict,
            why: format!(
                "{:+.2}% (this run's 95% interval +-{:.2}%){}",
                r * 100.0,
                hw * 100.0,
                per_byte.said
            ),
        },
        Row {
            quantity: format!("one-way fixed, {from} -> {to}"),
            unit: "us".into(),
            configured: Some(truth_fixed * 1e3),
            // ciscomci .525 + DS0 line 7.6 + ciscoser 1.695 (Table 1 has no Ethernet fixed cost).
            paper: seed_path.then_some((0.525 + 7.6 + 1.695) * 1e3),
            ours: Some(ours_fixed * 1e3),
            tolerance: tolerance_beside("20 us", hw_us, " us", 1),
            verdict: fixed.verdict,
            why: format!(
                "{d:+.1} us (this run's 95% interval +-{hw_us:.1} us) after subtracting the lab's own cost; as measured {:.1} us ({:+.1} us: the lab's own cost, below){}",
                raw.fixed_ms / 2.0 * 1e3,
                (raw.fixed_ms - truth.fixed_ms) / 2.0 * 1e3,
                fixed.said
            ),
        },
    ]
}

#[doc(hidden)]
pub fn lab_cost_rows(
    configured: &[ChainHop],
    machinery: &[OwnCost],
    host: &ProbeDocument,
    ports: &[wirespeed_lab::PortStatus],
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let host_fit = host
        .result
        .hops
        .first()
        .and_then(|h| h.analysis.fit.as_ref())
        .context("the loopback probe has no fit")?;
    rows.push(Row {
        quantity: "this host's own stack, loopback, one way".into(),
        unit: "us".into(),
        configured: None,
        paper: Some(696.0),
        ours: Some(host_fit.one_way.fixed_ms * 1e3),
        tolerance: "-".into(),
        verdict: Verdict::NotCompared,
        why: "kernel timestamps leave the host's system calls out; the paper's roc (.696 ms) timed them on a SPARCstation".into(),
    });
    for (hop, m) in configured.iter().zip(machinery) {
        rows.push(Row {
            quantity: format!("lab cost of hop {} ({} -> {}), one way", hop.ttl, hop.previous, hop.node),
            unit: "us".into(),
            configured: Some(0.0),
            paper: None,
            ours: Some(m.fixed_ms * 1e3),
            tolerance: "-".into(),
            verdict: Verdict::NotCompared,
            why: format!(
                "the twin's measured minus configured: the emulator's wake-up to read each frame, the write into the next namespace and its kernel, both ways, halved; per byte {:+.4} us",
                m.per_byte_ms * 1e3
            ),
        });
    }
    let worst = ports
        .iter()
        .max_by(|a, b| a.lateness.p50_us.total_cmp(&b.lateness.p50_us));
    if let Some(p) = worst {
        rows.push(Row {
            quantity: "emulator release lateness, p50 / p99 (worst port of the twin)".into(),
            unit: "us".into(),
            configured: Some(0.0),
            paper: None,
            ours: Some(p.lateness.p50_us),
            tolerance: "-".into(),
            verdict: Verdict::NotCompared,
            why: format!(
                "release instant minus schedule; p99 {:.0} us on {} -> {} ({} frames): the minimum filter keeps the punctual ones",
                p.lateness.p99_us, p.from, p.to, p.lateness.frames
            ),
        });
    }
    Ok(rows)
}

/// §4: the misconfigured board, from the seed's own measurements: `model compare` in process,
/// on the model and probe built into this binary.
#[doc(hidden)]
pub fn board_comparison() -> anyhow::Result<Comparison> {
    let model_file = crate::common::data::builtin("examples", "bellovin-1992.toml")?;
    let probe_file = crate::common::data::builtin("examples", "bellovin-1992-ih-probe.json")?;
    let model = wirespeed_model::delay::ModelFile::from_toml(model_file.text)
        .with_context(|| format!("model file {}", model_file.path))?;
    let measured = crate::model::parse_probe(probe_file.text, probe_file.path)?;
    let tolerance = wirespeed_model::delay::Tolerance::default();
    let (_, segments) =
        crate::model::compare(&model, "ih2", &measured, tolerance, probe_file.path)?;
    let mut rows = Vec::new();
    for s in &segments {
        let hypothesis = s.hypotheses.first().map_or("", String::as_str);
        // The seed's finding: the ciscomci hop is slower per byte than its class because
        // its ports sit on different boards; the first hop is the reference.
        let seed_says = s.hop == 2;
        rows.push(Row {
            quantity: format!("hop {} ({}) per byte", s.hop, s.elements.join(" + ")),
            unit: "us/byte".into(),
            configured: Some(s.expected.per_byte_ms * 1e3),
            paper: Some(s.measured.per_byte_ms * 1e3),
            ours: None,
            tolerance: if seed_says {
                "flagged, between-boards".into()
            } else {
                "not flagged".into()
            },
            verdict: Verdict::of(
                s.anomalous == seed_says && (!seed_says || hypothesis.contains("ciscobtw")),
            ),
            why: if s.anomalous {
                format!("flagged: {hypothesis}")
            } else {
                "agrees with the model".into()
            },
        });
    }
    Ok(Comparison {
        title: "The misconfigured board (seed §4): model compare flags it".into(),
        source: "seed 001 §4: the ih path's second hop measured .564 + .0014/byte against .525 + .00084 expected".into(),
        method: format!(
            "in process: wirespeed model compare {} ih2 {} (configured = the model's expectation, paper = the seed's measurement)",
            model_file.path, probe_file.path
        ),
        rows,
    })
}
