//! One probe of a path: the probes (in rounds with `--until-width` or `--until-stable`), the fits of each hop's
//! minimums, and the findings, as a typed document. Prints nothing, so that `reproduce`,
//! another command or a test can call it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use wirespeed_model::bestcase::{self, AnalysisParams, HopAnalysis, HopFit, Observation};
use wirespeed_model::delay::Cost;
use wirespeed_model::stability::{self, Budget, RoundPlan, StopReason, Tolerances, Unsettled};
use wirespeed_net::probe::{self, Hop, ProbeConfig, ProbeRun, ReplyKind, Sample};
use wirespeed_report::{Document, Severity};

use super::result::{HopReport, Parameters, ProbeReport, Timestamps, Transit};
use super::verdicts::{self, ProbeFinding};
use super::{ClockArg, Config};

/// The destination and, for a link-local one, its link (`fe80::1%eth0`).
fn resolve(host: &str) -> anyhow::Result<(IpAddr, u32)> {
    let parsed = crate::common::host::Host::parse(host, "probe")?;
    if parsed.port().is_some() {
        bail!("{host}: probe takes a host, not a port; give the agent's port with -p");
    }
    let addr = parsed.addresses(0, "probe")?.remove(0);
    let scope = match addr {
        std::net::SocketAddr::V6(v6) => v6.scope_id(),
        std::net::SocketAddr::V4(_) => 0,
    };
    Ok((addr.ip(), scope))
}

/// header and FCS: 46 bytes). Smaller probes all cost one minimum frame on every Ethernet hop,
/// so they sit above the line of the others and bend the fit (86-245 us above it on a
/// three-hop lab path, per-byte costs 13-30% low).
#[doc(hidden)]
pub fn unpadded_packet_bytes() -> usize {
    let ethernet = wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 };
    (ethernet.min_frame() - ethernet.frame_overhead()) as usize
}

/// 16 sizes from the smallest probe that no Ethernet hop pads up to the path MTU (at most 1500).
#[doc(hidden)]
pub fn default_sizes(smallest_echo: usize, mtu: Option<usize>) -> Vec<usize> {
    let min = smallest_echo.max(unpadded_packet_bytes());
    let max = mtu.unwrap_or(1500).clamp(min + 15, 1500);
    (0..16).map(|i| min + (max - min) * i / 15).collect()
}

/// The most a router's time exceeded quotes of the probe, IP bytes: the answer is kept within
/// 576 bytes on IPv4 (less 20 of IP and 8 of ICMP header) and within IPv6's minimum MTU, 1280
/// (less 40 and 8), so from this size up the bytes returned stop growing with the bytes sent.
#[doc(hidden)]
pub fn quote_limit(target: IpAddr) -> usize {
    if target.is_ipv4() { 548 } else { 1232 }
}

/// Sizes within a cluster of [`hop_sizes`] lie this far apart, bytes.
const CLUSTER_STEP: usize = 8;

/// The default sizes of `probe --hops`: 16 sizes in three clusters, where the slopes of a hop's
/// plane are read best, instead of spread evenly: five at the smallest size, five at the routers'
/// quote limit (`knee`, where the bytes returned stop growing) and six at the largest. A router's
/// per byte sent is the rise from the knee to the largest size, whose bytes returned are the
/// same; its per byte sent and returned together, from the smallest to the knee. Spread evenly,
/// an IPv6 hop had three of its 16 sizes above its 1232-byte knee, so its per byte sent was read
/// over 194 bytes from a quarter of the probes (issue 31: 45 of 59 IPv6 hops "not measured
/// precisely enough"). A destination's echo has no knee: it gets a line over the same span.
/// Falls back to [`default_sizes`] when the span leaves no room for the clusters (a path MTU
/// near the knee).
#[doc(hidden)]
pub fn hop_sizes(smallest: usize, mtu: Option<usize>, knee: usize) -> Vec<usize> {
    let min = smallest.max(unpadded_packet_bytes());
    let max = mtu.unwrap_or(1500).min(1500);
    // Each cluster spans 5 steps; keep them apart by more than that again.
    let room = 16 * CLUSTER_STEP;
    if knee < min + room || max < knee + room {
        return default_sizes(smallest, mtu);
    }
    let low = (0..5).map(|i| min + i * CLUSTER_STEP);
    let at_knee = (0..5).map(|i| knee + i * CLUSTER_STEP);
    let top = (0..6).map(|i| max - (5 - i) * CLUSTER_STEP);
    low.chain(at_knee).chain(top).collect()
}

/// The sizes a run probes: `--sizes`, or the defaults of its mode ([`hop_sizes`] with `--hops`,
/// else [`default_sizes`]) from the smallest probe to the path MTU.
fn probe_sizes(config: &Config, target: IpAddr) -> Vec<usize> {
    // With --hops the sizes are the ICMP probes'; the agent answers those it can.
    let min = if config.udp.is_some() && !config.hops {
        wirespeed_net::probe::echo::min_size(target)
    } else {
        probe::min_size(target)
    };
    let mtu = wirespeed_net::icmp_socket::path_mtu(target).ok();
    match &config.sizes {
        Some(s) => s.clone(),
        // The agent's short replies time the destination's bytes sent at every size that can
        // ask for one: the smallest cluster starts there.
        None if config.hops && config.udp.is_some() => hop_sizes(
            min.max(
                wirespeed_net::probe::echo::min_size(target)
                    + wirespeed_net::control::echo::ECHO_SHORT_LEN
                    - wirespeed_net::control::echo::ECHO_HEADER_LEN,
            ),
            mtu,
            quote_limit(target),
        ),
        None if config.hops => hop_sizes(min, mtu, quote_limit(target)),
        None => default_sizes(min, mtu),
    }
}

/// How a sentence names a hop: "the destination" when only the destination was probed (its
/// TTL, 64, is no hop number), else its hop number.
#[doc(hidden)]
pub fn hop_name(h: &HopReport, per_hop: bool) -> String {
    match (h.destination, per_hop) {
        (true, false) => "the destination".to_string(),
        (true, true) => format!("hop {} (the destination)", h.analysis.ttl),
        (false, _) => format!("hop {}", h.analysis.ttl),
    }
}

/// Rounds of `--until-width` or `--until-stable` at most (each round is `-c` probes per size
/// per hop).
const MAX_ROUNDS: u32 = 20;

/// Kernel stamps when every answer has one (or when asked), else the monotonic clock.
fn choose_clock(samples: &[Sample], clock: ClockArg) -> anyhow::Result<(Timestamps, usize, usize)> {
    let answered: Vec<&Sample> = samples.iter().filter(|s| s.rtt_user_ns.is_some()).collect();
    let stamped = answered
        .iter()
        .filter(|s| s.rtt_kernel_ns.is_some())
        .count();
    let timestamps = match clock {
        ClockArg::User => Timestamps::Monotonic,
        ClockArg::Kernel if stamped < answered.len() => bail!(
            "--clock kernel: only {stamped} of {} answers carried kernel timestamps on this socket; use --clock auto or user",
            answered.len()
        ),
        ClockArg::Kernel => Timestamps::KernelSoftware,
        ClockArg::Auto if stamped == answered.len() && stamped > 0 => Timestamps::KernelSoftware,
        ClockArg::Auto => Timestamps::Monotonic,
    };
    Ok((timestamps, stamped, answered.len()))
}

/// The observations of the run's own probes (`agent: false`) or of the agent's two series at
/// the destination (`agent: true`, with `--hops --udp`).
fn observations_of(samples: &[Sample], timestamps: Timestamps, agent: bool) -> Vec<Observation> {
    let these: Vec<Sample> = samples
        .iter()
        .filter(|s| s.series.is_agent() == agent)
        .cloned()
        .collect();
    observations(&these, timestamps)
}

fn observations(samples: &[Sample], timestamps: Timestamps) -> Vec<Observation> {
    samples
        .iter()
        .map(|s| Observation {
            ttl: s.ttl,
            sent_bytes: s.sent_bytes,
            returned_bytes: s.returned_bytes,
            // A destination unreachable (a filter that woke up mid-run) times a different
            // path from the echo or time exceeded being fitted: count it as lost.
            // The agent's series without its residence (its wake-up), where it stamped one.
            rtt_ms: match s.reply {
                ReplyKind::Unreachable | ReplyKind::TooBig | ReplyKind::Lost => None,
                _ => s.rtt_ns(timestamps == Timestamps::KernelSoftware),
            }
            .map(|ns| ns as f64 / 1e6),
            sent_at_seconds: s.sent_at_ns as f64 / 1e9,
        })
        .collect()
}

/// Echoes to this host's own loopback with the same sizes and count: the seed's roc.
fn host_baseline(config: &ProbeConfig) -> anyhow::Result<Vec<Sample>> {
    let lo: IpAddr = match config.target {
        IpAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
        IpAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
    };
    let mut c = config.clone();
    c.target = lo;
    c.max_ttl = None;
    // The host's own line is the kernel's, as the path's ICMP probes are.
    c.udp = None;
    Ok(probe::run(&c)
        .context("--host-baseline: probing this host's loopback")?
        .samples)
}

/// The host's line from its loopback samples, read with the same clock as the path.
fn host_fit(
    samples: &[Sample],
    timestamps: Timestamps,
    params: &AnalysisParams,
) -> anyhow::Result<HopFit> {
    bestcase::analyze(&observations(samples, timestamps), params, None)
        .into_iter()
        .next()
        .and_then(|h| h.fit)
        .context("--host-baseline: the loopback probes gave no fit")
}

/// Whether every hop has a fit whose interval over independent time blocks of the one-way
/// delay at the largest size (fixed width + per-byte width x size) is narrower than
/// `width_ms`: the figures agree across stretches of the run, not merely the bootstrap of one
/// set of minimums (which resamples the minimums, not the run, and reads zero width when they
/// repeat).
fn converged(hops: &[HopAnalysis], width_ms: f64, largest: f64) -> bool {
    !hops.is_empty()
        && hops.iter().all(|h| {
            h.fit.as_ref().and_then(|f| f.time_blocks).is_some_and(|b| {
                let width = b.fixed_ms.width() + b.per_byte_ms.width() * largest;
                width > 0.0 && width < width_ms
            })
        })
}

/// What the rounds of probes gave: the fits, the clock they were read with, and how many
/// rounds it took.
struct Analysed {
    timestamps: Timestamps,
    stamped: usize,
    answers: usize,
    analyses: Vec<HopAnalysis>,
    converged: Option<bool>,
    host_line: Option<HopFit>,
    rounds: u32,
    /// With --until-stable: what ended the rounds, and what was still unsettled.
    stopped_by: Option<StopReason>,
    unsettled: Vec<Unsettled>,
    /// With --until-stable: the last round's plan from the path (the round it stopped before,
    /// or the one it would have sent).
    plan: Option<RoundPlan>,
    /// With --until-stable: the budget, planned after the first round.
    budget: Option<Budget>,
}

/// One probe of the path: the document, and what was measured if Ctrl-C cut it short (`None`
/// when it ran to its end). Prints nothing unless the flags asked for the progress line.
pub fn measure(
    config: &Config,
) -> anyhow::Result<(Document<Parameters, ProbeReport>, Option<String>)> {
    let (target, scope_id) = resolve(&config.host)?;
    let sizes = probe_sizes(config, target);
    let mut probe_config = ProbeConfig {
        target,
        scope_id,
        tos: config.tos,
        sizes: sizes.clone(),
        per_size: config.count,
        max_ttl: config.hops.then_some(config.max_ttl),
        gap: config.gap,
        hop_interval: config.hop_interval,
        timeout: config.timeout,
        seed: config.seed,
        max_duration: config.max_time,
        socket: config.socket,
        udp: config.udp.clone(),
        only_ttls: None,
        interrupt: Some(crate::common::interrupt::watch()),
        progress: None,
    };
    // Probes take the time of their round trips, gaps and per-hop spacing: no estimate before
    // the first ones are answered.
    let progress = Arc::new(crate::common::progress::Progress::start(
        "probe",
        "probes",
        0,
        None,
        !config.show_progress,
    ));
    let hook = Arc::clone(&progress);
    probe_config.progress = Some(probe::ProgressHook(Arc::new(move |sent, planned| {
        hook.set_total(planned);
        hook.set_position(sent);
    })));
    // Held until the analysis is done: the host baseline and every adaptive round run under it.
    let (_cpu_hold, cpu_wakeup) = hold_cpus(config.allow_cpu_idle);
    let host_samples = if config.host_baseline {
        Some(host_baseline(&probe_config).map_err(or_interrupted)?)
    } else {
        None
    };
    let mut run = probe::run(&probe_config)?;
    if run.interrupted && run.samples.is_empty() {
        return Err(crate::common::interrupt::Interrupted {
            message: "stopped before any probe of the path was measured: nothing to print".into(),
            resume: None,
        }
        .into());
    }
    let (floor, resolution) = wirespeed_net::icmp_socket::timer_floor();
    let params = AnalysisParams {
        bootstrap_replicates: config.bootstrap,
        confidence: 0.95,
        seed: config.seed,
        // A step must exceed a few timer floors (and 1 us) to be told apart from clock noise.
        min_step_ms: (4.0 * floor.as_secs_f64() * 1e3).max(0.001),
    };
    let mut analysed = analyse_rounds(
        config,
        &mut probe_config,
        &mut run,
        host_samples.as_deref(),
        &params,
    )?;
    progress.finish();
    let hops = hop_reports(config, &run, std::mem::take(&mut analysed.analyses));
    let (warnings, verdicts) = findings(config, target, &run, &hops, &analysed);
    let run_interrupted = run.interrupted;
    let rounds = analysed.rounds;
    // Every round plans the whole schedule again.
    let planned = run.hops.iter().filter(|h| h.responder.is_some()).count()
        * sizes.len()
        * config.count as usize
        * rounds as usize;
    let report = ProbeReport {
        socket: run.socket,
        echo: run.echo,
        timestamps: analysed.timestamps,
        kernel_stamped_answers: analysed.stamped,
        answers: analysed.answers,
        timer_floor_seconds: floor.as_secs_f64(),
        clock_resolution_seconds: resolution.as_secs_f64(),
        cpu_wakeup,
        path_mtu_bytes: run.path_mtu_bytes,
        elapsed_seconds: run.elapsed_seconds,
        stopped_early: run.stopped_early,
        per_hop: config.hops,
        rounds,
        stopped_by: analysed.stopped_by,
        unsettled: std::mem::take(&mut analysed.unsettled),
        round_plan: analysed.plan.take(),
        budget: analysed.budget.take(),
        converged: analysed.converged,
        host_baseline: analysed.host_line,
        hops,
        samples: run.samples,
        target,
        rate_format: config.rate_format,
    };
    let mut doc = Document::new("probe", parameters(config, target, sizes), report);
    let mut warnings = warnings;
    if doc.result.converged == Some(false) {
        warnings.push(ProbeFinding::IntervalsNotConverged {
            rounds: doc.result.rounds,
        });
    }
    if let (Some(stopped_by), Some(cap)) = (doc.result.stopped_by, config.until_stable) {
        let budget = doc.result.budget.clone().map(Box::new);
        warnings.push(ProbeFinding::RoundsStopped {
            rounds: doc.result.rounds,
            elapsed_seconds: doc.result.elapsed_seconds,
            budget_seconds: doc
                .result
                .budget
                .as_ref()
                .map_or(cap.as_secs_f64(), |b| b.seconds),
            stopped_by,
            unsettled: doc.result.unsettled.clone(),
            plan: doc.result.round_plan.clone(),
            budget,
        });
    }
    for finding in warnings.iter().chain(&verdicts) {
        match finding.severity() {
            Severity::Verdict => doc.verdict(finding),
            Severity::Warning => doc.warning(finding),
        }
    }
    let what = run_interrupted.then(|| {
        format!(
            "interrupted after {} probes of the {planned} planned ({rounds} round(s)); the fits below are from those",
            doc.result.samples.len()
        )
    });
    Ok((doc, what))
}

/// Keeps CPUs from halting (as root) unless allowed to, and says which.
fn hold_cpus(allow_idle: bool) -> (Option<wirespeed_net::pmqos::CpuLatencyHold>, String) {
    if allow_idle {
        return (None, "CPUs allowed to halt (--allow-cpu-idle)".to_string());
    }
    match wirespeed_net::pmqos::hold(0) {
        Ok(h) => (
            Some(h),
            "CPUs kept from halting (/dev/cpu_dma_latency 0 us)".to_string(),
        ),
        Err(e) => (
            None,
            format!("CPUs may halt: /dev/cpu_dma_latency: {e} (root keeps them awake)"),
        ),
    }
}

/// Fits the probes, and with `--until-width` or `--until-stable` sends further rounds (each
/// added to `run`) until the intervals are narrow enough, the rounds run out or the time does.
fn analyse_rounds(
    config: &Config,
    probe_config: &mut ProbeConfig,
    run: &mut ProbeRun,
    host_samples: Option<&[Sample]>,
    params: &AnalysisParams,
) -> anyhow::Result<Analysed> {
    let largest = probe_config.sizes.iter().copied().max().unwrap_or(0) as f64;
    let mut rounds = 1u32;
    // With --until-stable: planned after the first round.
    let mut budget: Option<Budget> = None;
    // (seconds, probes) of the last round: the first includes the path's discovery.
    let mut last_round = (run.elapsed_seconds, run.samples.len());
    loop {
        let (timestamps, stamped, answers) =
            choose_clock(&run.samples, config.clock).map_err(or_interrupted)?;
        let host_line = match host_samples {
            Some(samples) => Some(host_fit(samples, timestamps, params).map_err(or_interrupted)?),
            None => None,
        };
        let analyses = wirespeed_model::destination::analyze_with_agent(
            &observations_of(&run.samples, timestamps, false),
            &observations_of(&run.samples, timestamps, true),
            params,
            host_line.as_ref().map(|h| h.one_way),
        );
        let mut analysed = Analysed {
            timestamps,
            stamped,
            answers,
            analyses,
            converged: None,
            host_line,
            rounds,
            stopped_by: None,
            unsettled: Vec::new(),
            plan: None,
            budget: None,
        };
        let left = config
            .max_time
            .saturating_sub(Duration::from_secs_f64(run.elapsed_seconds));
        let cut = run.stopped_early || run.interrupted || left.is_zero();
        if let Some(width) = config.until_width {
            let done = converged(&analysed.analyses, width.as_secs_f64() * 1e3, largest);
            if done || rounds >= MAX_ROUNDS || cut {
                analysed.converged = Some(done);
                return Ok(analysed);
            }
        } else if let Some(cap) = config.until_stable {
            let stop = plan_stable_round(
                config,
                probe_config,
                run,
                &mut analysed,
                last_round,
                cap.as_secs_f64(),
                &mut budget,
            );
            // As before the budget was planned: settled first, then a cut run, the rounds.
            let stop = match stop {
                Some(StopReason::Settled) => stop,
                _ if cut => Some(StopReason::Cut),
                _ if rounds >= MAX_ROUNDS => Some(StopReason::Rounds),
                other => other,
            };
            analysed.budget = budget.clone();
            if stop.is_some() {
                analysed.stopped_by = stop;
                return Ok(analysed);
            }
        } else {
            return Ok(analysed);
        }
        probe_config.seed = config.seed.wrapping_add(u64::from(rounds));
        probe_config.max_duration = left;
        let more = probe::run(probe_config)?;
        let offset = (run.elapsed_seconds * 1e9) as u64;
        let probes = more.samples.len();
        run.samples.extend(more.samples.into_iter().map(|mut s| {
            s.sent_at_ns += offset;
            s
        }));
        for h in more.hops {
            if !run.hops.iter().any(|x| x.ttl == h.ttl) {
                run.hops.push(h);
            }
        }
        last_round = (more.elapsed_seconds, probes);
        run.elapsed_seconds += more.elapsed_seconds;
        run.stopped_early |= more.stopped_early;
        run.interrupted |= more.interrupted;
        if let (Some(total), Some(round)) = (&mut run.echo, more.echo) {
            total.answered += round.answered;
            total.dropped += round.dropped;
        }
        rounds += 1;
    }
}

/// Plans the next round of `--until-stable` and sets `probe_config` for it; Some when the
/// rounds stop here (settled, or another round as long as the last would not end within the
/// budget). After the first round the budget is planned (`budget`): `cap_s` (the flag's), or
/// with the bare flag what the path asks for, at most `cap_s` (then `--max-time`).
fn plan_stable_round(
    config: &Config,
    probe_config: &mut ProbeConfig,
    run: &ProbeRun,
    analysed: &mut Analysed,
    last_round: (f64, usize),
    cap_s: f64,
    budget: &mut Option<Budget>,
) -> Option<StopReason> {
    analysed.unsettled = stability::unsettled(&analysed.analyses, &Tolerances::ISSUE_31);
    let plan = next_round(config, run, analysed, last_round);
    let planned = budget.get_or_insert_with(|| {
        stability::plan_budget(
            run.elapsed_seconds,
            Some(&plan),
            cap_s,
            config.budget_from_path,
        )
    });
    let fits =
        stability::another_round_fits(run.elapsed_seconds, plan.round_seconds, planned.seconds);
    probe_config.only_ttls = Some(plan.ttls.clone());
    analysed.plan = Some(plan);
    if analysed.unsettled.is_empty() {
        Some(StopReason::Settled)
    } else if !fits {
        Some(StopReason::Budget)
    } else {
        None
    }
}

/// The next round of `--until-stable`, planned from the path: the hops still unsettled (and
/// those they are differenced from), at the last round's seconds a probe; the destination's
/// agent series go with the destination.
fn next_round(
    config: &Config,
    run: &ProbeRun,
    analysed: &Analysed,
    (seconds, probes): (f64, usize),
) -> RoundPlan {
    let per_hop = run.samples.first().map_or(0, |_| {
        let sizes = config.sizes.as_ref().map_or(16, Vec::len);
        sizes * config.count as usize
    }) as f64;
    let destination = run
        .hops
        .iter()
        .find(|h| h.destination)
        .filter(|_| config.udp.is_some())
        .map(|h| (h.ttl, 2.0 * per_hop));
    stability::plan_round(
        &analysed.analyses,
        &analysed.unsettled,
        analysed.rounds,
        seconds / probes.max(1) as f64,
        per_hop,
        destination,
    )
}

/// Each hop's analysis with who answered for it and, with `--wire`, its transit cost.
fn hop_reports(config: &Config, run: &ProbeRun, analyses: Vec<HopAnalysis>) -> Vec<HopReport> {
    analyses
        .into_iter()
        .map(|analysis| {
            let hop: Option<&Hop> = run.hops.iter().find(|h| h.ttl == analysis.ttl);
            let transit = config
                .wire
                .iter()
                .find(|(ttl, _)| *ttl == analysis.ttl)
                .zip(analysis.increment.as_ref())
                .map(|((_, rate), inc)| {
                    let wire = Cost::serialization(*rate);
                    Transit {
                        wire_rate_bits_per_second: rate.bits_per_second(),
                        wire,
                        node: inc.cost - wire,
                    }
                });
            HopReport {
                responder: hop.and_then(|h| h.responder),
                destination: hop.is_some_and(|h| h.destination),
                transit,
                analysis,
            }
        })
        .collect()
}

/// The warnings (what to trust less) and verdicts (steps) of a run.
fn findings(
    config: &Config,
    target: IpAddr,
    run: &ProbeRun,
    hops: &[HopReport],
    analysed: &Analysed,
) -> (Vec<ProbeFinding>, Vec<ProbeFinding>) {
    let mut warnings = Vec::new();
    for h in &run.hops {
        if h.responder.is_none() {
            warnings.push(ProbeFinding::HopSilent { ttl: h.ttl });
        }
    }
    if config.hops && !run.hops.iter().any(|h| h.destination) {
        warnings.push(ProbeFinding::TargetNotReached {
            target,
            max_ttl: config.max_ttl,
        });
    }
    warnings.extend(verdicts::too_big(&run.samples));
    for h in hops {
        let hop = hop_name(h, config.hops);
        warnings.extend(verdicts::mixed_responders(
            &run.samples,
            h.analysis.ttl,
            &hop,
        ));
        if let Some(r) = &h.analysis.rate_limit {
            warnings.push(ProbeFinding::HopRateLimited {
                hop: hop.clone(),
                reason: r.clone(),
            });
        }
        if let Some(r) = &h.analysis.no_fit_reason {
            warnings.push(ProbeFinding::HopNotFitted {
                hop,
                reason: r.clone(),
            });
        }
    }
    if run.stopped_early && !run.interrupted {
        warnings.push(ProbeFinding::StoppedAtMaxTime {
            max_time_seconds: config.max_time.as_secs_f64(),
        });
    }
    if analysed.timestamps == Timestamps::Monotonic && config.clock == ClockArg::Auto {
        warnings.push(ProbeFinding::UserSpaceTimestamps {
            kernel_stamped_answers: analysed.stamped,
            answers: analysed.answers,
        });
    }
    let mut steps = Vec::new();
    for h in hops {
        if let Some(step) = h.analysis.fit.as_ref().and_then(|f| f.step.as_ref()) {
            steps.push(ProbeFinding::BufferingStep {
                hop: hop_name(h, config.hops),
                jump_seconds: step.jump_ms / 1e3,
                between_bytes: step.between_bytes,
                f_statistic: step.f_statistic,
            });
        }
    }
    (warnings, steps)
}

/// The parameters a document records: what was asked, with the sizes as probed.
fn parameters(config: &Config, target: IpAddr, sizes: Vec<usize>) -> Parameters {
    Parameters {
        host: config.host.clone(),
        target,
        sizes_bytes: sizes,
        probes_per_size: config.count,
        per_hop: config.hops,
        max_ttl: config.hops.then_some(config.max_ttl),
        gap_seconds: config.gap.as_secs_f64(),
        hop_interval_seconds: config.hop_interval.as_secs_f64(),
        timeout_seconds: config.timeout.as_secs_f64(),
        seed: config.seed,
        bootstrap_replicates: config.bootstrap,
        until_width_seconds: config.until_width.map(|d| d.as_secs_f64()),
        until_stable_budget_seconds: config.until_stable.map(|d| d.as_secs_f64()),
        host_baseline: config.host_baseline,
        wire: config
            .wire
            .iter()
            .map(|(t, r)| (*t, r.bits_per_second()))
            .collect(),
    }
}

/// An analysis that failed because Ctrl-C left too few probes is an interrupt, not an error.
fn or_interrupted(err: anyhow::Error) -> anyhow::Error {
    if crate::common::interrupt::requested() {
        crate::common::interrupt::Interrupted {
            message: format!("stopped before enough was measured for a fit ({err:#})"),
            resume: None,
        }
        .into()
    } else {
        err
    }
}
