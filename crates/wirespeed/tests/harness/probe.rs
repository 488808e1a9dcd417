//! The probe half of the harness: random full-duplex chains probed with `wirespeed probe
//! --hops`, each hop's own costs judged against `wirespeed_lab::truth::chain`, the intervals'
//! coverage, every step named (none configured), and the replay of a saved corpus
//! (`bench/harness-probe.sh`, `bench/harness-probe-replay.sh`).

mod card;

use super::*;
use card::{blocks_meet_lab_band, probe_scorecard_text, rows_tsv};
use wirespeed_lab::truth::{Crossing, chain_links, chain_with_crossings, crossing_costs_cover};
/// The probe labs' draws: full-duplex chains (the per-hop truth, `wirespeed_lab::truth::chain`,
/// needs point-to-point links), 2 Mbit/s to 1 Gbit/s and up to 2 ms of delay a link, so that a
/// default run of `probe --hops` (16 sizes x 32 probes a hop) takes seconds, not minutes.
fn probe_limits() -> Limits {
    Limits {
        min_rate_bits_per_second: 2e6,
        max_rate_bits_per_second: 1e9,
        max_delay_us: 2_000,
        duplex_chance: 0.0,
        ..Limits::default()
    }
}

/// The tolerances of issue 31: a hop's own fixed cost within 30 us, its per byte within 2%, a
/// router's answer per returned byte within 5%.
const FIXED_US: f64 = 30.0;
const PER_BYTE_SHARE: f64 = 0.02;
const ANSWER_SHARE: f64 = 0.05;

/// One figure of one hop, measured and configured.
struct HopFigure {
    seed: u64,
    ttl: u8,
    /// "fixed", "per byte", "answer per byte" (own costs, one way, as `probe` prints them), or
    /// "line fixed", "line per byte" (the hop's whole one-way line, which the intervals are of).
    what: &'static str,
    /// us for fixed costs, ns per byte for the others.
    truth: f64,
    /// The figure's truth with the lab's own cost per crossing added (fixed and per byte), as
    /// the lab measured it when it came up (`wirespeed_lab::crossing`; none in a corpus saved
    /// without it, and no per byte in one saved before the lab measured two sizes).
    lab_truth: Option<f64>,
    /// For a hop's own fixed cost: how far a typical crossing of its own link sat above the
    /// best one when the lab measured it (`spread_us`), us; the lab's truth is a best case too.
    lab_spread: Option<f64>,
    measured: f64,
    /// Within the tolerance (own costs only).
    within: Option<bool>,
    /// Whether the printed 95% bootstrap and the split-half intervals hold the truth (the
    /// whole line only: own costs print no interval).
    bootstrap_covers: Option<bool>,
    split_half_covers: Option<bool>,
    /// The interval over independent time blocks `probe` prints for the figure (issue 31), in
    /// the units of `truth`.
    blocks: Option<(f64, f64)>,
    /// The run's span of bytes the figure's slope is read over (sent bytes for per byte,
    /// returned bytes for answer per byte): the resolution floor's denominator.
    span_bytes: f64,
    /// The tolerance of an own cost in the units of `truth` (30 us, 2% or 5% of the
    /// truth); 0 for the whole line, which has none.
    tolerance: f64,
    /// False where `probe` said the figure is not separable from one end (an echo behind a
    /// path that returns bytes at another cost than it sends them).
    separable: bool,
}

impl HopFigure {
    /// Relative error of a per-byte figure, absolute (us) of a fixed one.
    fn error(&self) -> f64 {
        if self.what.contains("fixed") {
            self.measured - self.truth
        } else {
            self.measured / self.truth - 1.0
        }
    }
}

/// One probe lab's outcome.
struct ProbeRow {
    seed: u64,
    routers: u64,
    family: &'static str,
    figures: Vec<HopFigure>,
    /// (ttl, between bytes, F) of every step `probe` named.
    steps: Vec<(u8, [f64; 2], f64)>,
    seconds: f64,
    error: Option<String>,
    file: Option<String>,
    /// The lab's own cost of one crossing of each link, us, as the lab measured it.
    crossings_us: Vec<f64>,
    /// ... and per byte, ns (links measured at two sizes only).
    crossings_per_byte_ns: Vec<f64>,
    /// Rounds the probe sent and what stopped them (`--until-stable`; none in older runs).
    rounds: Option<u64>,
    stopped_by: Option<String>,
    /// Whether the destination's per byte came from the agent's echoes and short replies
    /// (`probe --hops --udp`).
    agent_per_byte: bool,
}

/// The straight line `probe` fits to a hop's minimums (round trip against bytes sent +
/// returned, least squares, one point per size) drawn through the configured plane at the
/// run's own sizes: what its one-way line and that line's intervals estimate. `points`: (bytes
/// sent, bytes returned) of every size answered. Returns the one-way (fixed ms, ms per byte).
fn configured_one_way_line(line: &RttLine, points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = points.iter().map(|(s, q)| s + q).collect();
    let ys: Vec<f64> = points
        .iter()
        .map(|(s, q)| line.fixed_ms + line.per_sent_byte_ms * s + line.per_returned_byte_ms * q)
        .collect();
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = sxy / sxx;
    Some(((my - slope * mx) / 2.0, slope))
}

/// Each hop's figures from `probe --hops --json`'s hops against the configured chain, and
/// the fixed costs also against `lab`, the chain with the lab's measured cost per crossing.
fn score_hops(
    seed: u64,
    hops: &[HopAnalysis],
    truth: &[ChainHop],
    lab: Option<&LabTruth>,
) -> Vec<HopFigure> {
    let line_in = |chain: &[ChainHop], ttl: u8| {
        if ttl == 0 {
            Some(RttLine::default())
        } else {
            chain.iter().find(|h| h.ttl == ttl).map(|h| h.line)
        }
    };
    let line_of = |ttl: u8| line_in(truth, ttl);
    let lab_line = |ttl: u8| lab.and_then(|l| line_in(&l.chain, ttl));
    let lab_spread = |ttl: u8| {
        lab.and_then(|l| l.own.get(usize::from(ttl).checked_sub(1)?))
            .map(|c| c.spread_us)
    };
    let mut out = Vec::new();
    for h in hops {
        let (Some(fit), Some(now)) = (&h.fit, line_of(h.ttl)) else {
            continue;
        };
        let points: Vec<(f64, f64)> = h
            .sizes
            .iter()
            .filter(|r| r.lost < r.sent)
            .map(|r| (r.sent_bytes as f64, r.returned_bytes as f64))
            .collect();
        let span = |v: Vec<f64>| {
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                - v.iter().copied().fold(f64::INFINITY, f64::min)
        };
        let sent_span = span(points.iter().map(|p| p.0).collect());
        let returned_span = span(points.iter().map(|p| p.1).collect());
        let lab_fixed = lab_line(h.ttl)
            .and_then(|l| configured_one_way_line(&l, &points))
            .map(|(fixed, _)| fixed * 1e3);
        if let Some((fixed, per_byte)) = configured_one_way_line(&now, &points) {
            let covers = |iv: Option<&wirespeed_model::stats::LineIntervals>, fixed_side: bool| {
                iv.map(|iv| {
                    if fixed_side {
                        iv.intercept.contains(fixed)
                    } else {
                        iv.slope.contains(per_byte)
                    }
                })
            };
            out.push(HopFigure {
                seed,
                ttl: h.ttl,
                what: "line fixed",
                truth: fixed * 1e3,
                lab_truth: lab_fixed,
                lab_spread: None,
                measured: fit.one_way.fixed_ms * 1e3,
                within: None,
                bootstrap_covers: covers(fit.bootstrap.as_ref(), true),
                split_half_covers: covers(fit.split_half.as_ref(), true),
                blocks: fit
                    .time_blocks
                    .map(|b| (b.fixed_ms.low * 1e3, b.fixed_ms.high * 1e3)),
                span_bytes: sent_span,
                tolerance: 0.0,
                separable: true,
            });
            out.push(HopFigure {
                seed,
                ttl: h.ttl,
                what: "line per byte",
                truth: per_byte * 1e6,
                lab_truth: None,
                lab_spread: None,
                measured: fit.one_way.per_byte_ms * 1e6,
                within: None,
                bootstrap_covers: covers(fit.bootstrap.as_ref(), false),
                split_half_covers: covers(fit.split_half.as_ref(), false),
                blocks: fit
                    .time_blocks
                    .map(|b| (b.per_byte_ms.low * 1e6, b.per_byte_ms.high * 1e6)),
                span_bytes: sent_span,
                tolerance: 0.0,
                separable: true,
            });
        }
        let Some(inc) = &h.increment else { continue };
        let Some(before) = line_of(inc.from_ttl) else {
            continue;
        };
        let own_fixed_us = (now.fixed_ms - before.fixed_ms) / 2.0 * 1e3;
        let lab_own_fixed_us = lab_line(h.ttl)
            .zip(lab_line(inc.from_ttl))
            .map(|(now, before)| (now.fixed_ms - before.fixed_ms) / 2.0 * 1e3);
        let own_byte_ns = (now.per_sent_byte_ms - before.per_sent_byte_ms) * 1e6;
        let lab_own_byte_ns = lab_line(h.ttl)
            .zip(lab_line(inc.from_ttl))
            .map(|(now, before)| (now.per_sent_byte_ms - before.per_sent_byte_ms) * 1e6);
        let fixed_us = inc.cost.fixed_ms * 1e3;
        let byte_ns = inc.cost.per_byte_ms * 1e6;
        let iv = inc.intervals;
        let pick =
            |f: fn(&wirespeed_model::bestcase::OwnCostIntervals) -> (f64, f64)| iv.map(|i| f(&i));
        out.push(HopFigure {
            seed,
            ttl: h.ttl,
            what: "fixed",
            truth: own_fixed_us,
            lab_truth: lab_own_fixed_us,
            lab_spread: lab_spread(h.ttl),
            measured: fixed_us,
            within: Some((fixed_us - own_fixed_us).abs() <= FIXED_US),
            bootstrap_covers: None,
            split_half_covers: None,
            blocks: pick(|i| (i.fixed_ms.low * 1e3, i.fixed_ms.high * 1e3)),
            span_bytes: sent_span,
            tolerance: FIXED_US,
            separable: true,
        });
        out.push(HopFigure {
            seed,
            ttl: h.ttl,
            what: "per byte",
            truth: own_byte_ns,
            lab_truth: lab_own_byte_ns,
            lab_spread: None,
            measured: byte_ns,
            within: Some((byte_ns / own_byte_ns - 1.0).abs() <= PER_BYTE_SHARE),
            bootstrap_covers: None,
            split_half_covers: None,
            blocks: pick(|i| (i.per_byte_ms.low * 1e6, i.per_byte_ms.high * 1e6)),
            span_bytes: sent_span,
            tolerance: PER_BYTE_SHARE * own_byte_ns.abs(),
            separable: !inc.per_byte_mixes_directions,
        });
        // A router's answer per returned byte, where the sizes separated it (an echo's is 0 by
        // construction). A router configured with none is judged against 5% of the hop's per
        // byte out, the scale the figure is read at.
        if fit.separation == Separation::Separated {
            let truth_ns = (now.per_returned_byte_ms - now.per_sent_byte_ms) * 1e6;
            let lab_truth_ns =
                lab_line(h.ttl).map(|l| (l.per_returned_byte_ms - l.per_sent_byte_ms) * 1e6);
            let ours_ns = inc.answer_per_byte_ms * 1e6;
            let tolerance = if truth_ns.abs() > 1e-9 {
                ANSWER_SHARE * truth_ns.abs()
            } else {
                ANSWER_SHARE * own_byte_ns.abs()
            };
            let within = (ours_ns - truth_ns).abs() <= tolerance;
            out.push(HopFigure {
                seed,
                ttl: h.ttl,
                what: "answer per byte",
                truth: truth_ns,
                lab_truth: lab_truth_ns,
                lab_spread: None,
                measured: ours_ns,
                within: Some(within),
                bootstrap_covers: None,
                split_half_covers: None,
                blocks: pick(|i| {
                    (
                        i.answer_per_byte_ms.low * 1e6,
                        i.answer_per_byte_ms.high * 1e6,
                    )
                }),
                span_bytes: returned_span,
                tolerance,
                separable: true,
            });
        }
    }
    out
}

/// `wirespeed serve` in a lab namespace, bound to one address, for `probe --hops --udp`; killed
/// (by its own PID: `ip netns exec` execs it) and reaped when dropped.
struct LabAgent(std::process::Child);

impl LabAgent {
    /// Starts the agent in `ns` on `address` port 5210 and waits (at most 10 s) until it
    /// listens.
    fn start(ns: &str, address: IpAddr) -> Result<LabAgent, String> {
        let bind = address.to_string();
        let child = std::process::Command::new("ip")
            .args(["netns", "exec", ns, &measuring_binary()])
            .args(["serve", "-B", &bind, "-p", "5210", "--max-duration", "1h"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the agent in {ns}: {e}"))?;
        let mut agent = LabAgent(child);
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(Some(status)) = agent.0.try_wait() {
                return Err(format!("the agent in {ns} exited at once ({status})"));
            }
            let listening = std::process::Command::new("ip")
                .args(["netns", "exec", ns, "ss", "-Hltn", "sport", "=", ":5210"])
                .output()
                .is_ok_and(|o| !o.stdout.is_empty());
            if listening {
                return Ok(agent);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        agent.stop();
        Err(format!("the agent in {ns} did not listen within 10 s"))
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for LabAgent {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether h2 runs an agent and the probe times the destination with it (`probe --hops
/// --udp`): `WIRESPEED_HARNESS_PROBE_AGENT` unset or 1; 0 probes with ICMP alone, as before.
fn probe_agent() -> bool {
    std::env::var("WIRESPEED_HARNESS_PROBE_AGENT").map_or(true, |v| v != "0")
}

fn probe_row(
    seed: u64,
    limits: &Limits,
    count: u32,
    budget: Option<&str>,
    keep: &Path,
) -> ProbeRow {
    let started = Instant::now();
    let draw = path_lab(seed, limits);
    let mut row = ProbeRow {
        seed,
        routers: draw.routers,
        family: "IPv4",
        figures: Vec::new(),
        steps: Vec::new(),
        seconds: 0.0,
        error: None,
        file: None,
        crossings_us: Vec::new(),
        crossings_per_byte_ns: Vec::new(),
        rounds: None,
        stopped_by: None,
        agent_per_byte: false,
    };
    let t = match Topology::parse(&draw.toml, "drawn.toml") {
        Ok(t) => t,
        Err(e) => {
            row.error = Some(format!("the draw does not parse: {e}"));
            return row;
        }
    };
    let truth = match chain(&t, "h1", "h2") {
        Ok(c) => c,
        Err(e) => {
            row.error = Some(format!("no per-hop truth: {e}"));
            return row;
        }
    };
    let plan = addressing::plan(&t);
    let address = h2_address(&t, &plan, seed ^ 0xbb67_ae85_84ca_a73b);
    row.family = if address.is_ipv6() { "IPv6" } else { "IPv4" };
    // Named apart from the tcp harness's lab of the same seed ("pp..." for "rp..."), so that
    // both scorecards can run at once.
    let name = format!("p{}", &draw.name[1..]);
    // The routers answer every probe: with the kernel's ICMP rate limit kept (the lab's
    // default) about 18% of time-exceeded answers were dropped by its 1/s bucket and each cost
    // the probe's 1 s timeout, 350-420 s a run instead of 20-47 s. What `probe` does against a
    // rate-limiting router is tested apart (tests/probe.rs); this scorecard judges the figures.
    let toml = draw
        .toml
        .replacen(
            &format!("name = \"{}\"", draw.name),
            &format!("name = \"{name}\""),
            1,
        )
        .replace("[[router]]\n", "[[router]]\nicmp_ratelimit = false\n");
    // Every lab is kept, as seed-NNN.toml beside its probe's whole document seed-NNN.json (every
    // sample is in it), so that `probe_replay` can judge a changed analysis without labs.
    let lab = match Lab::keep_and_up(
        keep,
        &format!("seed-{seed:03}.toml"),
        &toml,
        &mut row.file,
        true,
    ) {
        Ok(lab) => lab,
        Err(e) => {
            row.error = Some(e);
            return row;
        }
    };
    // The lab's own cost per crossing, measured as it came up, kept beside the run.
    let crossings = lab.crossings.clone();
    let crossings_file = keep.join(format!("seed-{seed:03}-crossings.json"));
    if let Err(e) = write_atomically(&crossings_file, crossings.to_string().as_bytes()) {
        row.error = Some(format!("cannot write {}: {e}", crossings_file.display()));
        return row;
    }
    let lab_truth = lab_chain(&t, &crossings, &mut row);
    let max_ttl = truth.len().to_string();
    let (address, count, seed_text) = (address.to_string(), count.to_string(), seed.to_string());
    let mut args = vec![
        "probe",
        &address,
        "--hops",
        "--max-ttl",
        &max_ttl,
        "-c",
        &count,
        "--seed",
        &seed_text,
        "--json",
    ];
    if let Some(budget) = budget {
        args.extend(["--until-stable", budget]);
    }
    let agent = if probe_agent() {
        match LabAgent::start(&lab.namespace("h2"), address.parse().expect("an address")) {
            Ok(agent) => Some(agent),
            Err(e) => {
                row.error = Some(e);
                return row;
            }
        }
    } else {
        None
    };
    if agent.is_some() {
        args.push("--udp");
    }
    let (code, stdout, stderr) =
        in_namespace(&lab.namespace("h1"), &args, Duration::from_secs(600));
    drop(agent);
    drop(lab);
    row.seconds = started.elapsed().as_secs_f64();
    if !stdout.trim().is_empty() {
        let json = keep.join(format!("seed-{seed:03}.json"));
        if let Err(e) = write_atomically(&json, stdout.as_bytes()) {
            row.error = Some(format!("cannot write {}: {e}", json.display()));
            return row;
        }
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    judge_document(
        &mut row,
        &doc,
        &truth,
        lab_truth.as_ref(),
        Reading::AsPrinted,
    )
    .map_err(|e| format!("probe exit {code}: {e}; {}", stderr.trim()))
    .unwrap_or_else(|e| row.error = Some(e));
    row
}

/// The chain h1 to h2 with the lab's own cost per crossing (`lab status --json`'s
/// `lab.crossings`: link, `cost_us`, `spread_us` and `per_byte_ns` of each; a link measured at
/// one size counts no per byte), if the lab measured every link of it, and each hop's own
/// link's record; the costs go into `row` for the scorecard.
fn lab_chain(t: &Topology, crossings: &serde_json::Value, row: &mut ProbeRow) -> Option<LabTruth> {
    let costs: Vec<LinkCrossing> = crossings
        .as_array()?
        .iter()
        .filter_map(|c| {
            let finite = |v: &serde_json::Value| v.as_f64().filter(|v| v.is_finite());
            Some(LinkCrossing {
                link: usize::try_from(c["link"].as_u64()?).ok()?,
                cost_us: finite(&c["cost_us"])?,
                // Records of labs brought up before the spread was kept have none.
                spread_us: finite(&c["spread_us"]).unwrap_or(0.0).max(0.0),
                per_byte_ns: finite(&c["per_byte_ns"]),
            })
        })
        .collect();
    row.crossings_us = costs.iter().map(|c| c.cost_us).collect();
    row.crossings_per_byte_ns = costs.iter().filter_map(|c| c.per_byte_ns).collect();
    let links: Vec<usize> = costs.iter().map(|c| c.link).collect();
    if !crossing_costs_cover(t, "h1", "h2", &links) {
        return None;
    }
    let find = |link: usize| costs.iter().find(|c| c.link == link).copied();
    let cost = |link: usize| {
        find(link).map_or(Crossing::default(), |c| Crossing {
            fixed_ms: c.cost_us / 1e3,
            per_byte_ms: c.per_byte_ns.unwrap_or(0.0) / 1e6,
        })
    };
    let chain = chain_with_crossings(t, "h1", "h2", cost).ok()?;
    let own = chain_links(t, "h1", "h2")
        .ok()?
        .into_iter()
        .map(find)
        .collect::<Option<Vec<_>>>()?;
    Some(LabTruth { chain, own })
}

/// One link's crossing as the lab measured it when it came up (`wirespeed_lab::crossing`).
#[derive(Clone, Copy)]
struct LinkCrossing {
    link: usize,
    /// One crossing's cost beyond the configured, from the best round trip, us.
    cost_us: f64,
    /// How much a typical crossing costs more than the best (half the round trips' median less
    /// their minimum), us.
    spread_us: f64,
    per_byte_ns: Option<f64>,
}

/// What a probe across the running lab should find: the configured chain with the lab's
/// measured crossings added, and the record of each hop's own link (hop k's at k - 1).
struct LabTruth {
    chain: Vec<ChainHop>,
    own: Vec<LinkCrossing>,
}

/// Which hops of a saved probe document are judged.
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    /// The hops the run printed, with the analysis of the binary that ran it.
    AsPrinted,
    /// The hops the current analysis (`bestcase::analyze`) makes of the run's samples.
    Reanalysed,
}

/// Judges one probe document against the configured chain: its step verdicts and each hop's
/// figures (`score_hops`), into `row`.
fn judge_document(
    row: &mut ProbeRow,
    doc: &serde_json::Value,
    truth: &[ChainHop],
    lab: Option<&LabTruth>,
    reading: Reading,
) -> Result<(), String> {
    let hops = match reading {
        Reading::AsPrinted => printed_hops(doc)?,
        Reading::Reanalysed => reanalysed_hops(doc)?,
    };
    row.steps = hops
        .iter()
        .filter_map(|h| {
            let s = h.fit.as_ref()?.step.as_ref()?;
            Some((h.ttl, s.between_bytes, s.f_statistic))
        })
        .collect();
    row.figures = score_hops(row.seed, &hops, truth, lab);
    row.agent_per_byte = hops.iter().any(|h| {
        h.increment.as_ref().is_some_and(|i| {
            i.per_byte_from == wirespeed_model::destination::PerByteSeries::AgentShortReplies
        })
    });
    // A replay cut to each run's first probes judges one round, whatever the run did next.
    if !(reading == Reading::Reanalysed && first_probes().is_some()) {
        row.rounds = doc["result"]["rounds"].as_u64();
        row.stopped_by = doc["result"]["stopped_by"].as_str().map(str::to_string);
    }
    Ok(())
}

/// The hops as `probe --json` printed them.
fn printed_hops(doc: &serde_json::Value) -> Result<Vec<HopAnalysis>, String> {
    let mut hops = doc["result"]["hops"].clone();
    let hops = hops
        .as_array_mut()
        .filter(|h| !h.is_empty())
        .ok_or("no hops in the document")?;
    hops.iter_mut()
        .map(|h| {
            without_nulls(h);
            serde_json::from_value(h.clone())
        })
        .collect::<Result<Vec<HopAnalysis>, _>>()
        .map_err(|e| format!("probe's hops do not decode: {e}"))
}

/// The hops the current analysis makes of the document's samples, read with the clock the run
/// chose and its bootstrap settings, as `probe` does (its `observations`: an unreachable, a too
/// big or a lost probe has no round trip). The step floor is 1 us, `probe`'s own wherever the
/// timer ticks finer than 250 ns (the document does not record the tick).
fn reanalysed_hops(doc: &serde_json::Value) -> Result<Vec<HopAnalysis>, String> {
    use wirespeed_model::bestcase::{AnalysisParams, Observation};
    use wirespeed_net::probe::{ReplyKind, Sample};
    let mut samples: Vec<Sample> = serde_json::from_value(doc["result"]["samples"].clone())
        .map_err(|e| format!("the samples do not decode: {e}"))?;
    if samples.is_empty() {
        return Err("no samples in the document".into());
    }
    if let Some(keep) = first_probes() {
        samples = first_of_each_size(samples, keep);
    }
    let kernel = match doc["result"]["timestamps"].as_str() {
        Some("kernel_software") => true,
        Some("monotonic") => false,
        other => return Err(format!("unknown clock {other:?}")),
    };
    // The agent's two series at the destination (`probe --hops --udp`), unless the replay is
    // asked to judge the run as ICMP alone would have measured it.
    let use_agent = std::env::var("WIRESPEED_HARNESS_REPLAY_AGENT").map_or(true, |v| v != "0");
    let observation = |s: &Sample| Observation {
        ttl: s.ttl,
        sent_bytes: s.sent_bytes,
        returned_bytes: s.returned_bytes,
        // The agent's series without its residence (its wake-up), where it stamped one.
        rtt_ms: match s.reply {
            ReplyKind::Unreachable | ReplyKind::TooBig | ReplyKind::Lost => None,
            _ => s.rtt_ns(kernel),
        }
        .map(|ns| ns as f64 / 1e6),
        sent_at_seconds: s.sent_at_ns as f64 / 1e9,
    };
    let observations: Vec<Observation> = samples
        .iter()
        .filter(|s| !s.series.is_agent())
        .map(observation)
        .collect();
    let agent: Vec<Observation> = samples
        .iter()
        .filter(|s| use_agent && s.series.is_agent())
        .map(observation)
        .collect();
    let parameters = &doc["parameters"];
    let params = AnalysisParams {
        bootstrap_replicates: parameters["bootstrap_replicates"]
            .as_u64()
            .ok_or("no bootstrap_replicates in the parameters")?
            .min(100_000) as usize,
        confidence: 0.95,
        seed: parameters["seed"]
            .as_u64()
            .ok_or("no seed in the parameters")?,
        min_step_ms: 0.001,
    };
    Ok(wirespeed_model::destination::analyze_with_agent(
        &observations,
        &agent,
        &params,
        None,
    ))
}

/// `WIRESPEED_HARNESS_REPLAY_PROBES=N`: the replay keeps only the first N probes of each size
/// at each hop, in the order they were sent: with N = the run's `-c`, its first round alone,
/// the run as a probe without `--until-stable` would have ended it (the "before" of an
/// adaptive corpus, on the same labs).
fn first_probes() -> Option<usize> {
    std::env::var("WIRESPEED_HARNESS_REPLAY_PROBES")
        .ok()?
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
}

/// The first `keep` samples of each (TTL, size, series), by the time they were sent.
fn first_of_each_size(
    mut samples: Vec<wirespeed_net::probe::Sample>,
    keep: usize,
) -> Vec<wirespeed_net::probe::Sample> {
    samples.sort_by_key(|s| s.sent_at_ns);
    let mut seen: std::collections::HashMap<(u8, usize, wirespeed_net::probe::Series), usize> =
        Default::default();
    samples.retain(|s| {
        let n = seen.entry((s.ttl, s.sent_bytes, s.series)).or_insert(0);
        *n += 1;
        *n <= keep
    });
    samples
}

/// Writes `bytes` to `path` whole or not at all: another reader of the corpus sees the old file
/// or the new one, never a half-written one (a rename within one directory is atomic).
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

/// A hop of `probe --json` made decodable again: JSON has no NaN, so a figure that was NaN
/// (a size with no answer, a residual without a fit) reads as null. Null keys are dropped (an
/// `Option` then reads as `None`, a figure added later as its default), sizes with no answer
/// are dropped (they are not fitted), and a missing residual reads as 0 (not scored).
fn without_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            for x in m.values_mut() {
                without_nulls(x);
            }
            if let Some(serde_json::Value::Array(rows)) = m.get_mut("sizes") {
                rows.retain(|r| r.get("min_rtt_ms").is_some());
                for r in rows.iter_mut().filter_map(|r| r.as_object_mut()) {
                    for key in ["median_rtt_ms", "residual_ms"] {
                        r.entry(key).or_insert(serde_json::json!(0.0));
                    }
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// Per-hop figures of `probe --hops` against the configured chain, on
/// `WIRESPEED_HARNESS_PROBE_LABS` random multi-hop labs (default 50) from seed
/// `WIRESPEED_HARNESS_SEED` (default 31), `-c WIRESPEED_HARNESS_PROBE_COUNT` (default 32, the
/// probe's own): each hop's own fixed cost, per byte and answer per byte against 30 us / 2% /
/// 5%, whether the printed intervals cover the configured line, and every step named on
/// these labs, none of which configures one (issue 31). The scorecard goes to
/// `WIRESPEED_HARNESS_OUT/probe-scorecard.md`, every lab's file and its probe's document beside
/// it (`seed-NNN.toml`, `seed-NNN.json`: the corpus `probe_replay` re-analyses).
/// `bench/harness-probe.sh` runs it.
#[test]
#[ignore = "minutes of labs: run by bench/harness-probe.sh"]
fn probe_scorecard() {
    if !crate::lab::can_build_labs("harness") {
        return;
    }
    let first = env_u64("WIRESPEED_HARNESS_SEED", 31);
    let labs = env_u64("WIRESPEED_HARNESS_PROBE_LABS", 50).min(10_000);
    let count = env_u64("WIRESPEED_HARNESS_PROBE_COUNT", 32).clamp(2, 1_000) as u32;
    // `--until-stable`'s budget ("0" or unset: one round, as before).
    let budget = std::env::var("WIRESPEED_HARNESS_PROBE_BUDGET")
        .ok()
        .filter(|b| !b.is_empty() && b != "0");
    let keep = out_dir();
    let limits = probe_limits();
    let mut rows = Vec::new();
    for seed in first..first + labs {
        let _guard = crate::lab::LAB_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let row = probe_row(seed, &limits, count, budget.as_deref(), &keep);
        let off = row
            .figures
            .iter()
            .filter(|f| f.within == Some(false))
            .count();
        eprintln!(
            "probe seed {seed}: {} routers {}, {:.1} s, rounds {:?} stopped by {:?}, {} figures ({off} outside), steps {:?} {}",
            row.routers,
            row.family,
            row.seconds,
            row.rounds,
            row.stopped_by,
            row.figures.len(),
            row.steps,
            row.error.as_deref().unwrap_or("")
        );
        rows.push(row);
    }
    let card = probe_scorecard_text(&rows, first, count);
    std::fs::write(keep.join("probe-scorecard.md"), &card).expect("the scorecard is written");
    std::fs::write(keep.join("probe-rows.tsv"), rows_tsv(&rows)).expect("the rows are written");
    println!("{card}");
    println!("scorecard and lab files in {}", keep.display());
}

/// The largest probe document or lab file the replay reads (a default run of four hops is
/// about 2 MB).
const CORPUS_FILE_MAX_BYTES: u64 = 64 << 20;

/// Reads a corpus file, refusing one larger than [`CORPUS_FILE_MAX_BYTES`].
fn read_bounded(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if size > CORPUS_FILE_MAX_BYTES {
        return Err(format!(
            "{} is {size} bytes, more than the {CORPUS_FILE_MAX_BYTES} a probe run makes",
            path.display()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// One saved run judged as `probe_row` judges a live one: the lab file's chain is the truth.
fn replay_row(seed: u64, dir: &Path, reading: Reading) -> ProbeRow {
    let file = dir.join(format!("seed-{seed:03}.toml"));
    let mut row = ProbeRow {
        seed,
        routers: 0,
        family: "IPv4",
        figures: Vec::new(),
        steps: Vec::new(),
        seconds: 0.0,
        error: None,
        file: Some(file.display().to_string()),
        crossings_us: Vec::new(),
        crossings_per_byte_ns: Vec::new(),
        rounds: None,
        stopped_by: None,
        agent_per_byte: false,
    };
    let judged = (|| -> Result<(), String> {
        let toml = read_bounded(&file)?;
        let t = Topology::parse(&toml, &file.display().to_string()).map_err(|e| e.to_string())?;
        let truth = chain(&t, "h1", "h2").map_err(|e| format!("no per-hop truth: {e}"))?;
        row.routers = truth.len().saturating_sub(1) as u64;
        let json = read_bounded(&dir.join(format!("seed-{seed:03}.json")))?;
        let doc: serde_json::Value =
            serde_json::from_str(&json).map_err(|e| format!("the document does not parse: {e}"))?;
        if doc["parameters"]["target"]
            .as_str()
            .is_some_and(|a| a.contains(':'))
        {
            row.family = "IPv6";
        }
        row.seconds = doc["result"]["elapsed_seconds"]
            .as_f64()
            .unwrap_or(f64::NAN);
        // Runs saved before the lab measured its crossings have no such file.
        let crossings = read_bounded(&dir.join(format!("seed-{seed:03}-crossings.json")))
            .ok()
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default();
        let lab = lab_chain(&t, &crossings, &mut row);
        judge_document(&mut row, &doc, &truth, lab.as_ref(), reading)
    })();
    if let Err(e) = judged {
        row.error = Some(e);
    }
    row
}

/// The seeds of a corpus directory: every `seed-NNN.json` (written whole, then renamed, so a
/// run still going shows only the labs it finished).
fn corpus_seeds(dir: &Path) -> Result<Vec<u64>, String> {
    let mut seeds: Vec<u64> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("seed-")?
                .strip_suffix(".json")?
                .parse()
                .ok()
        })
        .collect();
    seeds.sort_unstable();
    Ok(seeds)
}

/// The probe scorecard again, without labs: every run saved by `probe_scorecard` in
/// `WIRESPEED_HARNESS_CORPUS` (`seed-NNN.json` and `seed-NNN.toml`) re-analysed from its samples
/// with the current analysis, and judged as the live harness judges (the same `score_hops` and
/// `probe_scorecard_text`). The step verdicts the runs printed are counted beside the current
/// ones. `bench/harness-probe-replay.sh` runs it.
#[test]
#[ignore = "reads a saved corpus: run by bench/harness-probe-replay.sh"]
fn probe_replay() {
    let dir = PathBuf::from(std::env::var_os("WIRESPEED_HARNESS_CORPUS").expect(
        "WIRESPEED_HARNESS_CORPUS=DIR names a corpus of bench/harness-probe.sh (seed-NNN.json and .toml)",
    ));
    let seeds = corpus_seeds(&dir).unwrap_or_else(|e| panic!("the corpus: {e}"));
    assert!(!seeds.is_empty(), "no seed-NNN.json in {}", dir.display());
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut printed_with_step = 0;
    let mut printed_measured = 0;
    for &seed in &seeds {
        let printed = replay_row(seed, &dir, Reading::AsPrinted);
        if printed.error.is_none() {
            printed_measured += 1;
            printed_with_step += usize::from(!printed.steps.is_empty());
        }
        let row = replay_row(seed, &dir, Reading::Reanalysed);
        eprintln!(
            "replay seed {seed}: steps as printed {:?}, now {:?} {}",
            printed.steps,
            row.steps,
            row.error.as_deref().unwrap_or("")
        );
        rows.push(row);
    }
    let count = seeds
        .first()
        .and_then(|s| read_bounded(&dir.join(format!("seed-{s:03}.json"))).ok())
        .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok())
        .and_then(|d| d["parameters"]["probes_per_size"].as_u64())
        .unwrap_or(0) as u32;
    let card = probe_scorecard_text(&rows, seeds[0], count);
    println!(
        "Replay of {} saved runs in {} (seeds {} to {}), re-analysed from their samples in {:.1} s; seconds below are each probe's own. Step verdicts as the runs printed them: {printed_with_step} of {printed_measured} runs.\n",
        seeds.len(),
        dir.display(),
        seeds[0],
        seeds[seeds.len() - 1],
        started.elapsed().as_secs_f64()
    );
    println!("{card}");
    if let Some(out) = std::env::var_os("WIRESPEED_HARNESS_OUT") {
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).expect("the replay's directory");
        write_atomically(&out.join("probe-replay.md"), card.as_bytes())
            .expect("the replay's scorecard is written");
        write_atomically(&out.join("probe-rows.tsv"), rows_tsv(&rows).as_bytes())
            .expect("the replay's rows are written");
    }
}

/// The configured line through the plane at a probe's sizes: an echo's plane (u = v) is a line
/// in bytes crossed and comes back whole; a router's answer per byte bends it at the quote limit
/// and the straight line lies between the two slopes.
#[test]
fn the_configured_line_of_a_hop_is_its_plane_at_the_run_sizes() {
    let echo = RttLine {
        fixed_ms: 2.0,
        per_sent_byte_ms: 0.001,
        per_returned_byte_ms: 0.001,
    };
    let points: Vec<(f64, f64)> = [46.0, 500.0, 1000.0, 1500.0]
        .iter()
        .map(|&s| (s, s))
        .collect();
    let (fixed, per_byte) = configured_one_way_line(&echo, &points).expect("a line");
    assert!((fixed - 1.0).abs() < 1e-12 && (per_byte - 0.001).abs() < 1e-12);
    let router = RttLine {
        per_returned_byte_ms: 0.003,
        ..echo
    };
    // Time exceeded: at most 548 bytes of the probe quoted, plus 28.
    let quoted: Vec<(f64, f64)> = [46.0, 300.0, 548.0, 1000.0, 1500.0]
        .iter()
        .map(|&s: &f64| (s, s.min(548.0) + 28.0))
        .collect();
    let (_, slope) = configured_one_way_line(&router, &quoted).expect("a line");
    assert!(slope > 0.001 && slope < 0.003, "{slope}");
    assert!(configured_one_way_line(&echo, &points[..1]).is_none());
}

/// The lab's truth of a hop's own fixed cost: the configured one plus the lab's best crossing of
/// the hop's own link (and no other), met by an interval anywhere from that best crossing up to
/// its typical one (`spread_us` more), never beyond; a lab that did not measure every link of
/// the chain gives none.
#[test]
fn the_labs_truth_of_a_fixed_cost_is_its_links_best_crossing_up_to_its_typical_one() {
    let draw = path_lab(501, &probe_limits());
    let t = Topology::parse(&draw.toml, "drawn.toml").expect("the draw parses");
    let links = chain_links(&t, "h1", "h2").expect("a chain");
    // Link i: a crossing of 10 + i us, typical 2 + i us above it.
    let record: Vec<serde_json::Value> = links
        .iter()
        .map(|&l| serde_json::json!({"link": l, "cost_us": 10.0 + l as f64, "spread_us": 2.0 + l as f64}))
        .collect();
    let mut row = replay_row(0, Path::new("/nonexistent"), Reading::AsPrinted);
    let lab = lab_chain(&t, &serde_json::Value::from(record.clone()), &mut row)
        .expect("every link measured");
    let configured = chain(&t, "h1", "h2").expect("a chain");
    for (k, hop) in configured.iter().enumerate() {
        let own = |c: &[ChainHop]| {
            let before = k.checked_sub(1).map_or(0.0, |b| c[b].line.fixed_ms);
            (c[k].line.fixed_ms - before) / 2.0 * 1e3
        };
        let added = own(&lab.chain) - own(&configured);
        let link = links[k] as f64;
        assert!(
            (added - (10.0 + link)).abs() < 1e-9,
            "hop {}: {added}",
            hop.ttl
        );
        assert_eq!(lab.own[k].spread_us, 2.0 + link);
    }
    let fixed = |blocks: (f64, f64)| HopFigure {
        seed: 0,
        ttl: 1,
        what: "fixed",
        truth: 100.0,
        lab_truth: Some(110.0),
        lab_spread: Some(5.0),
        measured: 112.0,
        within: Some(true),
        bootstrap_covers: None,
        split_half_covers: None,
        blocks: Some(blocks),
        span_bytes: 1000.0,
        tolerance: FIXED_US,
        separable: true,
    };
    assert_eq!(blocks_meet_lab_band(&fixed((111.0, 120.0))), Some(true));
    assert_eq!(blocks_meet_lab_band(&fixed((100.0, 110.0))), Some(true));
    assert_eq!(blocks_meet_lab_band(&fixed((115.5, 120.0))), Some(false));
    assert_eq!(blocks_meet_lab_band(&fixed((100.0, 109.5))), Some(false));
    // One link missing from the record: no lab truth at all.
    let partial = serde_json::Value::from(record[1..].to_vec());
    assert!(lab_chain(&t, &partial, &mut row).is_none());
}
