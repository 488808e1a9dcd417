//! The probe scorecard's text: each figure against the configured truth, the calibrated one and
//! the lab's (its measured crossings and their spread), the intervals' coverage, the classes of
//! the per-byte rows, and every failing row; and the rows as TSV.

use super::*;

/// The quantiles of `errors`, scaled to `unit`.
fn error_spread(errors: &[f64], unit: &str, scale: f64) -> String {
    if errors.is_empty() {
        return "none".into();
    }
    let mut v: Vec<f64> = errors.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize] * scale;
    format!(
        "min {:+.1}{unit}, p10 {:+.1}{unit}, median {:+.1}{unit}, p90 {:+.1}{unit}, max {:+.1}{unit} (n = {})",
        q(0.0),
        q(0.1),
        q(0.5),
        q(0.9),
        q(1.0),
        v.len()
    )
}

/// The lab's own cost per link crossing, one way, in us: the emulator's wake-up to read each
/// frame, the write into the next namespace and that kernel's forwarding, which no topology
/// file states and every measured fixed cost carries once per link crossed (issue 31: median
/// +18 us a hop). Calibrated out the same way for every hop, as the median error of the own
/// fixed costs of the *other* labs of the scorecard, so that no lab is judged by its own run.
fn lab_cost_us(rows: &[&ProbeRow], except: u64) -> f64 {
    let mut errors: Vec<f64> = rows
        .iter()
        .filter(|r| r.seed != except)
        .flat_map(|r| r.figures.iter())
        .filter(|f| f.what == "fixed")
        .map(HopFigure::error)
        .collect();
    if errors.is_empty() {
        return 0.0;
    }
    errors.sort_by(f64::total_cmp);
    errors[errors.len() / 2]
}

/// The configured truth of a figure with the lab's own cost added where it acts: once per
/// link crossed for a fixed cost (a hop's own: one link; its whole line: `ttl` links).
fn calibrated_truth(f: &HopFigure, lab_us: f64) -> f64 {
    match f.what {
        "fixed" => f.truth + lab_us,
        "line fixed" => f.truth + lab_us * f64::from(f.ttl),
        _ => f.truth,
    }
}

/// Within the tolerance against the calibrated truth, and for a per-byte figure within
/// 2% (5% for an answer) *or* within the resolution floor: an error that over the run's span
/// of sizes adds up to no more than the fixed cost's 30 us (a 1 Gbit/s link's 8 ns a byte is
/// 11.6 us over 46-1500 bytes, less than the noise of a minimum).
fn within_floored(f: &HopFigure, lab_us: f64) -> Option<bool> {
    f.within?;
    let truth = calibrated_truth(f, lab_us);
    Some(match f.what {
        "fixed" => (f.measured - truth).abs() <= FIXED_US,
        _ => f.within == Some(true) || (f.measured - truth).abs() * f.span_bytes <= FIXED_US * 1e3,
    })
}

/// The floored tolerance of an own per-byte figure: the share of `truth` (the
/// configured one or the lab's), or the fixed cost's 30 us spread over the run's span of sizes,
/// whichever is larger. A per-byte error that adds up to less than the fixed cost's tolerance
/// over every size the run sent is below what the run resolves (docs/probe.md); the floor is
/// set by the sizes, never by the run's own noise.
fn floored_tolerance_at(f: &HopFigure, truth: f64) -> f64 {
    let share = match f.what {
        "per byte" => PER_BYTE_SHARE * truth.abs(),
        // A router configured with no answer cost keeps the hop's per-byte scale.
        "answer per byte" if truth.abs() > 1e-9 => ANSWER_SHARE * truth.abs(),
        _ => f.tolerance,
    };
    if f.span_bytes > 0.0 {
        share.max(FIXED_US * 1e3 / f.span_bytes)
    } else {
        share
    }
}

/// How an own per byte or answer per byte fares, checked in this order: "not separable" where
/// `probe` said its per byte mixes the two directions; "not measured precisely enough" where
/// its interval's half width is over the floored tolerance (or it has none), since such a run
/// cannot show the tolerance held whatever its error; "within" the floored tolerance; else
/// "outside". The tolerance is never widened by the run's interval (issue 31). None for the
/// other figures.
fn per_byte_class(f: &HopFigure) -> Option<&'static str> {
    per_byte_class_at(f, f.truth)
}

/// [`per_byte_class`] against `truth` (the configured one or the lab's).
fn per_byte_class_at(f: &HopFigure, truth: f64) -> Option<&'static str> {
    if f.within.is_none() || f.what == "fixed" {
        return None;
    }
    let tolerance = floored_tolerance_at(f, truth);
    Some(if !f.separable {
        "not separable"
    } else if f
        .blocks
        .is_none_or(|(low, high)| (high - low) / 2.0 > tolerance)
    {
        "not measured precisely enough"
    } else if (f.measured - truth).abs() <= tolerance {
        "within"
    } else {
        "outside"
    })
}

/// Whether an own-cost row holds against `truth`, as the issue counts rows: a fixed cost within
/// 30 us, a per byte or answer per byte in the class "within" (a row not measured precisely
/// enough, or not separable, fails).
fn row_holds(f: &HopFigure, truth: f64) -> Option<bool> {
    f.within?;
    Some(if f.what == "fixed" {
        (f.measured - truth).abs() <= FIXED_US
    } else {
        per_byte_class_at(f, truth) == Some("within")
    })
}

/// The per-byte figures by class (`per_byte_class`) beside the strict and floored counts, and
/// the intervals' coverage over every hop and over the hops `probe` can separate; each figure
/// over all runs, then over the IPv4 and the IPv6 runs apart (an IPv6 time exceeded quotes up
/// to 1280 bytes, which leaves fewer sizes to tell bytes sent from bytes returned).
fn class_text(s: &mut String, measured: &[&ProbeRow]) {
    let _ = writeln!(
        s,
        "\n| figure | within, strict | within, floored | within, interval inside the floored tolerance | not measured precisely enough | not separable from one end | outside | interval covers the truth | of the hops probe separates | within, interval inside, against the lab's truth | interval covers the lab's truth, of the hops probe separates |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for what in ["per byte", "answer per byte"] {
        for family in [None, Some("IPv4"), Some("IPv6")] {
            let these: Vec<&HopFigure> = measured
                .iter()
                .filter(|r| family.is_none_or(|f| r.family == f))
                .flat_map(|r| r.figures.iter())
                .filter(|f| f.what == what)
                .collect();
            let n = these.len();
            if n == 0 {
                continue;
            }
            let class = |c: &str| {
                share(
                    these
                        .iter()
                        .filter(|f| per_byte_class(f) == Some(c))
                        .count(),
                    n,
                )
            };
            let covers = |pick: &dyn Fn(&HopFigure) -> bool| {
                let had: Vec<bool> = these
                    .iter()
                    .filter(|f| pick(f))
                    .filter_map(|f| blocks_cover(f, f.truth))
                    .collect();
                share(had.iter().filter(|c| **c).count(), had.len())
            };
            let label = family.map_or(what.to_string(), |f| format!("{what}, {f} runs"));
            let with_lab: Vec<(&HopFigure, f64)> = these
                .iter()
                .filter_map(|f| Some((*f, f.lab_truth?)))
                .collect();
            let lab_within = share(
                with_lab
                    .iter()
                    .filter(|(f, t)| per_byte_class_at(f, *t) == Some("within"))
                    .count(),
                with_lab.len(),
            );
            let lab_covered: Vec<bool> = with_lab
                .iter()
                .filter(|(f, _)| f.separable)
                .filter_map(|(f, t)| blocks_cover(f, *t))
                .collect();
            let lab_covers = share(
                lab_covered.iter().filter(|c| **c).count(),
                lab_covered.len(),
            );
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {lab_within} | {lab_covers} |",
                share(these.iter().filter(|f| f.within == Some(true)).count(), n),
                share(
                    these
                        .iter()
                        .filter(|f| within_floored(f, 0.0) == Some(true))
                        .count(),
                    n
                ),
                class("within"),
                class("not measured precisely enough"),
                class("not separable"),
                class("outside"),
                covers(&|_| true),
                covers(&|f| f.separable),
            );
        }
    }
}

/// Whether a hop's own fixed cost's time-block interval meets the lab's truth with its own
/// spread: the configured cost plus the lab's best crossing of the hop's link, up to its typical
/// crossing (`spread_us` more). The lab's figure is a minimum of 32 echoes, as the probe's are
/// minimums, and a minimum of another series lands anywhere in that band; the row itself is
/// still judged against the best crossing, within 30 us. None for the other figures and where
/// the lab did not measure the link.
pub(super) fn blocks_meet_lab_band(f: &HopFigure) -> Option<bool> {
    let (low, high) = f.blocks?;
    let (truth, spread) = (f.lab_truth?, f.lab_spread?);
    Some(low <= truth + spread && truth <= high)
}

/// The own fixed cost's error against the lab's truth (its best crossings), by where the hop
/// sits: hop 1 (the sender's own link: nothing forwarded), a router beyond it (its probe and
/// answer forwarded by the routers before it, whose kernels' forwarding no crossing measures:
/// the lab pings each link from one of its ends), the destination (an echo after a router's
/// time exceeded); and the lab's crossing cost against the configured truth beside it.
fn lab_residual_text(s: &mut String, measured: &[&ProbeRow]) {
    let _ = writeln!(
        s,
        "\n| own fixed cost, by hop | hops | measured - configured | measured - the lab's truth | the lab's crossing of the hop's link | its spread |\n|---|---|---|---|---|---|"
    );
    for (label, pick) in [
        ("hop 1", 0u8),
        ("a router beyond hop 1", 1),
        ("the destination", 2),
    ] {
        let these: Vec<&HopFigure> = measured
            .iter()
            .flat_map(|r| {
                let last = r.figures.iter().map(|f| f.ttl).max().unwrap_or(0);
                r.figures.iter().filter(move |f| {
                    let at = if f.ttl == last {
                        2
                    } else {
                        u8::from(f.ttl > 1)
                    };
                    f.what == "fixed" && at == pick
                })
            })
            .collect();
        let spread = |v: Vec<f64>| error_spread(&v, " us", 1.0);
        let with_lab: Vec<&&HopFigure> = these.iter().filter(|f| f.lab_truth.is_some()).collect();
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {} | {} | {} |",
            these.len(),
            spread(these.iter().map(|f| f.measured - f.truth).collect()),
            spread(
                with_lab
                    .iter()
                    .filter_map(|f| Some(f.measured - f.lab_truth?))
                    .collect()
            ),
            spread(
                with_lab
                    .iter()
                    .filter_map(|f| Some(f.lab_truth? - f.truth))
                    .collect()
            ),
            spread(with_lab.iter().filter_map(|f| f.lab_spread).collect()),
        );
    }
}

/// Whether the figure's time-block interval holds the truth, raw or calibrated.
fn blocks_cover(f: &HopFigure, truth: f64) -> Option<bool> {
    f.blocks.map(|(low, high)| low <= truth && truth <= high)
}

/// The coverage table of the time-block intervals (issue 31: at least 90% of runs).
fn coverage_text(s: &mut String, measured: &[&ProbeRow]) {
    let _ = writeln!(
        s,
        "\nThe lab's own cost per link crossing, calibrated out the same way for every hop (the median own fixed-cost error of the other labs): {}.\n",
        error_spread(
            &measured
                .iter()
                .map(|r| lab_cost_us(measured, r.seed))
                .collect::<Vec<_>>(),
            " us",
            1.0
        )
    );
    let _ = writeln!(
        s,
        "The lab's own cost of one link crossing as each lab measured it when it came up (`wirespeed_lab::crossing`; its truth: the configured one plus that, once a crossing): {}.\n",
        error_spread(
            &measured
                .iter()
                .flat_map(|r| r.crossings_us.iter().copied())
                .collect::<Vec<_>>(),
            " us",
            1.0
        )
    );
    let _ = writeln!(
        s,
        "Its cost per byte, where it measured two sizes (`per_byte_ns`; added to each hop's own per byte in the lab's truth): {}.\n",
        error_spread(
            &measured
                .iter()
                .flat_map(|r| r.crossings_per_byte_ns.iter().copied())
                .collect::<Vec<_>>(),
            " ns/B",
            1.0
        )
    );
    let _ = writeln!(
        s,
        "| figure | within, strict and raw | within, calibrated (fixed) or floored (per byte: 30 us over the run's span) | time-block interval covers the raw truth | covers the calibrated truth | covers the lab's truth (its measured crossings, the best one) | meets the lab's truth with its spread (best to typical crossing of the hop's link) | interval width, median |\n|---|---|---|---|---|---|---|---|"
    );
    for what in [
        "fixed",
        "per byte",
        "answer per byte",
        "line fixed",
        "line per byte",
    ] {
        let these: Vec<(&HopFigure, f64)> = measured
            .iter()
            .flat_map(|r| {
                let lab = lab_cost_us(measured, r.seed);
                r.figures.iter().map(move |f| (f, lab))
            })
            .filter(|(f, _)| f.what == what)
            .collect();
        let count = |pick: &dyn Fn(&HopFigure, f64) -> Option<bool>| {
            let had: Vec<bool> = these.iter().filter_map(|(f, l)| pick(f, *l)).collect();
            share(had.iter().filter(|c| **c).count(), had.len())
        };
        let mut widths: Vec<f64> = these
            .iter()
            .filter_map(|(f, _)| f.blocks.map(|(l, h)| h - l))
            .collect();
        widths.sort_by(f64::total_cmp);
        let unit = if what.contains("fixed") { "us" } else { "ns/B" };
        let _ = writeln!(
            s,
            "| {what} | {} | {} | {} | {} | {} | {} | {} |",
            count(&|f, _| f.within),
            count(&|f, l| within_floored(f, l)),
            count(&|f, _| blocks_cover(f, f.truth)),
            count(&|f, l| blocks_cover(f, calibrated_truth(f, l))),
            count(&|f, _| f.lab_truth.and_then(|t| blocks_cover(f, t))),
            count(&|f, _| blocks_meet_lab_band(f)),
            widths
                .get(widths.len() / 2)
                .map_or("-".to_string(), |w| format!("{w:.3} {unit}"))
        );
    }
}

/// Every figure of every run, a line each, tab-separated, for analyses the scorecard does not
/// make (`probe-rows.tsv` beside the scorecard): seed, family, hop, figure, configured truth,
/// the lab's truth and its spread, measured, the time-block interval, the span of bytes and the
/// issue's tolerance, in the units of `HopFigure` ("-" where a figure has none).
pub(super) fn rows_tsv(rows: &[ProbeRow]) -> String {
    let mut s = String::from(
        "seed\tfamily\tttl\tfigure\ttruth\tlab_truth\tlab_spread\tmeasured\tlow\thigh\tspan_bytes\ttolerance\n",
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    for r in rows.iter().filter(|r| r.error.is_none()) {
        for f in &r.figures {
            let _ = writeln!(
                s,
                "{}\t{}\t{}\t{}\t{:.4}\t{}\t{}\t{:.4}\t{}\t{}\t{:.0}\t{:.4}",
                f.seed,
                r.family,
                f.ttl,
                f.what,
                f.truth,
                opt(f.lab_truth),
                opt(f.lab_spread),
                f.measured,
                opt(f.blocks.map(|b| b.0)),
                opt(f.blocks.map(|b| b.1)),
                f.span_bytes,
                f.tolerance
            );
        }
    }
    s
}

pub(super) fn probe_scorecard_text(rows: &[ProbeRow], first_seed: u64, count: u32) -> String {
    let mut s = String::new();
    let measured: Vec<&ProbeRow> = rows.iter().filter(|r| r.error.is_none()).collect();
    let seconds: Vec<f64> = measured.iter().map(|r| r.seconds).collect();
    let _ = writeln!(
        s,
        "Probe labs: {} drawn from seed {first_seed} (full-duplex chains, 2 Mbit/s to 1 Gbit/s, delays up to 2 ms), `probe --hops -c {count}` from h1 to h2, {} measured ({} not: listed below); seconds a lab (up, probe, down): {}.\n",
        rows.len(),
        measured.len(),
        rows.len() - measured.len(),
        quantiles(seconds)
    );
    let _ = writeln!(
        s,
        "The destination's per byte from the agent's whole echoes and short replies (`probe --hops --udp`, h2 running `wirespeed serve`): {} of {} measured labs.\n",
        measured.iter().filter(|r| r.agent_per_byte).count(),
        measured.len()
    );
    let figures: Vec<&HopFigure> = measured.iter().flat_map(|r| r.figures.iter()).collect();
    let rounds: Vec<f64> = measured
        .iter()
        .filter_map(|r| r.rounds.map(|n| n as f64))
        .collect();
    if !rounds.is_empty() {
        let stopped = |why: &str| {
            measured
                .iter()
                .filter(|r| r.stopped_by.as_deref() == Some(why))
                .count()
        };
        let by_family = |family: &str, why: &str| {
            measured
                .iter()
                .filter(|r| r.family == family && r.stopped_by.as_deref() == Some(why))
                .count()
        };
        let _ = writeln!(
            s,
            "Rounds of `--until-stable`: {}; stopped because every separable own cost was within its tolerance: {} runs (IPv4 {}, IPv6 {}), by the budget: {} (IPv4 {}, IPv6 {}), by the most rounds: {}, cut: {}, not adaptive: {}.\n",
            quantiles(rounds),
            stopped("settled"),
            by_family("IPv4", "settled"),
            by_family("IPv6", "settled"),
            stopped("budget"),
            by_family("IPv4", "budget"),
            by_family("IPv6", "budget"),
            stopped("rounds"),
            stopped("cut"),
            measured.iter().filter(|r| r.stopped_by.is_none()).count()
        );
    }
    let own_rows: Vec<&&HopFigure> = figures.iter().filter(|f| f.within.is_some()).collect();
    let holds_configured = own_rows
        .iter()
        .filter(|f| row_holds(f, f.truth) == Some(true))
        .count();
    let with_lab: Vec<&&&HopFigure> = own_rows.iter().filter(|f| f.lab_truth.is_some()).collect();
    let holds_lab = with_lab
        .iter()
        .filter(|f| f.lab_truth.and_then(|t| row_holds(f, t)) == Some(true))
        .count();
    let _ = writeln!(
        s,
        "Own-cost rows that hold (issue 31's count: fixed within 30 us; per byte and answer per byte within the floored tolerance with an interval inside it, so a row not measured precisely enough or not separable fails): {} against the configured truth; {} against the lab's truth (its measured crossings, fixed and per byte, where the lab measured them).\n",
        share(holds_configured, own_rows.len()),
        share(holds_lab, with_lab.len())
    );
    let _ = writeln!(
        s,
        "| figure (one way, own cost of each hop) | tolerance | within | error distribution |\n|---|---|---|---|"
    );
    for (what, tolerance, unit, scale) in [
        ("fixed", "30 us", " us", 1.0),
        ("per byte", "2%", "%", 100.0),
        ("answer per byte", "5%", "%", 100.0),
    ] {
        let these: Vec<&&HopFigure> = figures.iter().filter(|f| f.what == what).collect();
        let within = these.iter().filter(|f| f.within == Some(true)).count();
        let errors: Vec<f64> = these
            .iter()
            .filter(|f| what == "fixed" || f.truth.abs() > 1e-9)
            .map(|f| f.error())
            .collect();
        let _ = writeln!(
            s,
            "| {what} | {tolerance} | {} | {} |",
            share(within, these.len()),
            error_spread(&errors, unit, scale)
        );
    }
    let rows_scored: Vec<&&HopFigure> = figures.iter().filter(|f| f.within.is_some()).collect();
    let _ = writeln!(
        s,
        "\nAll own-cost rows within tolerance: {}. The whole one-way line of each hop carries the older `95% bootstrap` and `split-half` intervals, whose configured value is the straight line through the configured plane at the run's sizes (the time-block intervals of each hop's own costs follow in the table after):\n",
        share(
            rows_scored
                .iter()
                .filter(|f| f.within == Some(true))
                .count(),
            rows_scored.len()
        )
    );
    let _ = writeln!(
        s,
        "| whole line, one way | 95% bootstrap covers | split-half covers | error distribution |\n|---|---|---|---|"
    );
    for (what, unit, scale) in [("line fixed", " us", 1.0), ("line per byte", "%", 100.0)] {
        let these: Vec<&&HopFigure> = figures.iter().filter(|f| f.what == what).collect();
        let cover = |pick: &dyn Fn(&HopFigure) -> Option<bool>| {
            let had: Vec<bool> = these.iter().filter_map(|f| pick(f)).collect();
            share(had.iter().filter(|c| **c).count(), had.len())
        };
        let errors: Vec<f64> = these.iter().map(|f| f.error()).collect();
        let _ = writeln!(
            s,
            "| {what} | {} | {} | {} |",
            cover(&|f| f.bootstrap_covers),
            cover(&|f| f.split_half_covers),
            error_spread(&errors, unit, scale)
        );
    }
    coverage_text(&mut s, &measured);
    lab_residual_text(&mut s, &measured);
    class_text(&mut s, &measured);
    let with_step = measured.iter().filter(|r| !r.steps.is_empty()).count();
    let hops_fitted: usize = figures.iter().filter(|f| f.what == "line fixed").count();
    let steps: usize = measured.iter().map(|r| r.steps.len()).sum();
    let _ = writeln!(
        s,
        "\nStep verdicts on labs with no step configured (false positives): {} runs ({} of {} fitted hops).\n",
        share(with_step, measured.len()),
        steps,
        hops_fitted
    );
    let _ = writeln!(
        s,
        "| seed | routers | family | hop | figure | configured | measured | error | within | bootstrap / split-half cover | class | time-block interval | lab's truth (class) | lab file |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let file = r.file.as_deref().unwrap_or("-");
        if let Some(e) = &r.error {
            let _ = writeln!(
                s,
                "| {} | {} | {} | - | error | {} |  |  |  |  |  |  |  | {file} |",
                r.seed,
                r.routers,
                r.family,
                e.replace('|', "/").chars().take(200).collect::<String>()
            );
            continue;
        }
        for (ttl, between, f) in &r.steps {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {ttl} | **step** between {:.0} and {:.0} bytes crossed, F = {f:.1} |  |  |  |  |  |  |  |  | {file} |",
                r.seed, r.routers, r.family, between[0], between[1]
            );
        }
        for f in &r.figures {
            let class = per_byte_class(f);
            let covers = blocks_cover(f, f.truth);
            if f.within != Some(false)
                && f.bootstrap_covers != Some(false)
                && class.is_none_or(|c| c == "within")
                && covers != Some(false)
            {
                continue;
            }
            let (unit, error) = if f.what.contains("fixed") {
                ("us", format!("{:+.1} us", f.error()))
            } else if f.truth.abs() <= 1e-9 {
                // Configured as none: no relative error to give.
                ("ns/B", format!("{:+.1} ns/B", f.measured - f.truth))
            } else {
                ("ns/B", format!("{:+.1}%", f.error() * 100.0))
            };
            let cover = |c: Option<bool>| c.map_or("-", |c| if c { "yes" } else { "**no**" });
            let lab = f.lab_truth.map_or("-".to_string(), |t| {
                let holds = row_holds(f, t);
                let how = match per_byte_class_at(f, t) {
                    Some(c) => c.to_string(),
                    None => if holds == Some(true) {
                        "within 30 us"
                    } else {
                        "outside 30 us"
                    }
                    .to_string(),
                };
                let misses = if blocks_cover(f, t) == Some(false) {
                    ", **misses**"
                } else {
                    ""
                };
                format!("{t:.3} {unit} ({how}{misses})")
            });
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.3} {unit} | {:.3} {unit} | {error} | {} | {} / {} | {} | {} | {lab} | {file} |",
                f.seed,
                r.routers,
                r.family,
                f.ttl,
                f.what,
                f.truth,
                f.measured,
                f.within.map_or("-", |w| if w { "yes" } else { "**no**" }),
                cover(f.bootstrap_covers),
                cover(f.split_half_covers),
                class.unwrap_or("-"),
                f.blocks.map_or("-".to_string(), |(low, high)| format!(
                    "[{low:.2}, {high:.2}]{}",
                    if covers == Some(false) {
                        " **misses**"
                    } else {
                        ""
                    }
                )),
            );
        }
    }
    s
}
