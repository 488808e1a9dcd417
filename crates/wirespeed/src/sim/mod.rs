//! `wirespeed sim csma`: what a shared CSMA/CD Ethernet does with N hosts, these packet sizes,
//! this cable. Flags in, a sweep run on every core, the seed's statistics out.

pub(crate) mod html;
pub(crate) mod link;
mod metrics;
mod verdicts;

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};
use wirespeed_model::csma_theory::MetcalfeBoggs;
use wirespeed_model::units::{format_seconds, group_digits, parse_duration, significant};
use wirespeed_model::{BitRate, RateFormat};
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Document, Render, Table};
use wirespeed_sim::bus::METRES_PER_FOOT;
use wirespeed_sim::sweep::{Point, grid, run_sweep_stoppable};
use wirespeed_sim::traffic::{SEED_LENGTHS, STANDARD_MAX_LENGTH};
use wirespeed_sim::{
    Arrivals, Cable, HostModel, LengthMix, MacParams, Placement, PointSummary, Scenario,
};

use crate::common::flags::{HostList, LengthList, parse_hosts, parse_lengths};
use crate::common::output::{self, OutputArgs};
use crate::sim::link::LinkArgs;
use crate::sim::verdicts::SimFinding;

#[derive(Debug, Clone, Subcommand)]
pub(crate) enum SimCommand {
    /// A shared CSMA/CD Ethernet: N hosts sending flat out (or at an offered load) on one
    /// cable; the seven statistics of Boggs, Mogul and Kent for each host count and size.
    Csma(Box<CsmaArgs>),
    /// A point-to-point link, full or half duplex at each end: a bulk transfer with
    /// acknowledgements, both ways; a duplex mismatch shows seed 003's late collisions, FCS
    /// errors and runts.
    Link(Box<LinkArgs>),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct SimArgs {
    #[command(subcommand)]
    command: SimCommand,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CsmaArgs {
    /// Host counts: a list and ranges, such as 1-24 or 1,2,4,8,16-24.
    #[arg(long = "hosts", default_value = "1-24", value_name = "LIST",
          value_parser = parse_hosts)]
    hosts: HostList,

    #[arg(short = 'n', hide = true, value_name = "LIST",
          value_parser = crate::common::flags::moved_to(crate::common::flags::MOVED_N, "--hosts for host counts"))]
    moved_n: Option<String>,

    /// Packet lengths, comma-separated: "seed" (the nine of seed 000: 64 to 4000 bytes), a
    /// length in bytes (64..1536, more with --oversize), a 64/1536 ratio such as 6/2, or a
    /// weighted mix such as 64:6+576:1+1536:3.
    #[arg(long = "lengths", short = 'l', default_value = "seed", value_name = "LIST",
          value_parser = parse_lengths)]
    lengths: LengthList,

    /// Accept packets longer than the standard's 1536 bytes (the seed went to 4000).
    #[arg(long)]
    oversize: bool,

    /// Link rate: 10M or 100M (seed 003 Table 2 parameter sets).
    #[arg(long, short = 'r', default_value = "10M", value_name = "RATE")]
    rate: BitRate,

    /// Cable layout: long4 (3000 ft, 4 clusters, seed §3.5), long2 (3000 ft, half the hosts at
    /// each end, §3.7), short (20 ft, §3.6).
    #[arg(long, value_enum, default_value_t = Net::Long4)]
    net: Net,

    /// Cable length, overriding the net's (such as 3000ft, 910m, 200m).
    #[arg(long, value_name = "LENGTH", value_parser = parse_length)]
    cable: Option<f64>,

    /// Number of equal clusters, evenly spaced from end to end (overrides the net's layout).
    #[arg(long, value_name = "N", conflicts_with = "even")]
    clusters: Option<usize>,

    /// Spread the hosts evenly along the cable (overrides the net's layout).
    #[arg(long)]
    even: bool,

    /// Signal velocity as a fraction of the speed of light (0.77 for thick coax).
    #[arg(long, default_value_t = 0.77, value_name = "FRACTION", value_parser = crate::common::flags::non_negative)]
    velocity: f64,

    /// One-way delay of each station's attachment (transceiver cable, multiport repeater).
    #[arg(long, default_value = "0ns", value_name = "DURATION", value_parser = parse_duration)]
    attach_delay: Duration,

    /// One-way delay between a cluster's repeater and the coax (its transceiver cable and
    /// transceiver), crossed only by signals between clusters.
    #[arg(long, default_value = "0ns", value_name = "DURATION", value_parser = parse_duration)]
    tap_delay: Duration,

    /// Measured time of each test (the seed measured the middle 10 s of 20).
    #[arg(long = "time", short = 't', default_value = "10s", value_name = "DURATION",
          value_parser = parse_duration)]
    time: Duration,

    /// Simulated time before measuring starts.
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,

    /// Offered load G (fraction of the channel, all hosts together) instead of saturating
    /// generators; Poisson arrivals unless --burst is given.
    #[arg(long, value_name = "G", value_parser = crate::common::flags::non_negative)]
    load: Option<f64>,

    /// Mean packets per burst (bursty arrivals at the offered load).
    #[arg(long, value_name = "PACKETS", requires = "load", value_parser = crate::common::flags::non_negative)]
    burst: Option<f64>,

    /// Packet buffers per host (the Titans had 15).
    #[arg(long, default_value_t = 15, value_name = "N")]
    buffers: u32,

    /// Time from the end of a packet until the interrupt routine restarts the transmitter: one
    /// value or a uniform range (the Titans: 87us, from the seed's 2-host peak).
    #[arg(long, default_value = "87us", value_name = "RANGE",
          value_parser = parse_latency)]
    interrupt_latency: (Duration, Duration),

    /// The hosts' CPU cycle: the interrupt routine is that latency's worth of instructions of
    /// one or two cycles each (1.5 on average), which spreads the restart by their stalls
    /// (the Titan: 45ns, +-0.8 us); 0 for exactly the latency drawn.
    #[arg(long, default_value = "45ns", value_name = "DURATION", value_parser = parse_duration)]
    cycle_time: Duration,

    /// Discard a packet after 16 collisions instead of retrying it.
    #[arg(long)]
    discard_excessive: bool,

    /// Independent runs of each point (with 2 or more, 95% confidence intervals are shown).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    replications: u32,

    #[arg(short = 'R', hide = true, value_name = "N",
          value_parser = crate::common::flags::moved_to(crate::common::flags::MOVED_R, "--replications for independent runs"))]
    moved_r: Option<String>,

    /// Seed of the random numbers; the same seed gives the same figures.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    /// Worker threads, 1 to 256 (default: every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,

    /// Show the Metcalfe-Boggs (1976) efficiency beside each point, and where "1/e" comes from.
    #[arg(long)]
    theory: bool,

    /// Write SVG plots in the layout of seed 000's figures 3-3 to 3-9 (one curve per size,
    /// x = hosts) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
enum Net {
    Long4,
    Long2,
    Short,
}

/// `3000ft`, `910m`, `0.5km`, or a bare number of metres.
pub(crate) fn parse_length(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ft") {
        (n, METRES_PER_FOOT)
    } else if let Some(n) = t.strip_suffix("km") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(format!(
            "{text:?} is not a cable length (examples: 3000ft, 910m, 2.5km)"
        )),
    }
}

/// `100us` or `75us-100us`.
fn parse_latency(text: &str) -> Result<(Duration, Duration), String> {
    let one = |t: &str| parse_duration(t.trim()).map_err(|e| e.to_string());
    let (lo, hi) = match text.split_once('-') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => {
            let d = one(text)?;
            (d, d)
        }
    };
    if lo > hi {
        return Err(format!(
            "{text:?}: the range runs backwards (example: 75us-100us)"
        ));
    }
    Ok((lo, hi))
}

/// What was asked, as the document records it.
#[derive(Debug, Serialize)]
struct SimParams {
    model: &'static str,
    rate_bits_per_second: u64,
    mac: MacParams,
    net: Net,
    cable: Cable,
    host: HostModel,
    arrivals: Arrivals,
    hosts: Vec<usize>,
    lengths: Vec<String>,
    warmup_seconds: f64,
    measured_seconds: f64,
    replications: u32,
    seed: u64,
    threads: usize,
}

/// One point with its theory.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SimPoint {
    #[serde(flatten)]
    pub(crate) summary: PointSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    metcalfe_boggs: Option<MetcalfeBoggs>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SimReport {
    pub(crate) points: Vec<SimPoint>,
    events: u64,
    wall_seconds: f64,
    events_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    theory: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    plots: Vec<String>,
    #[serde(skip)]
    rate_format: RateFormat,
    #[serde(skip)]
    replications: u32,
}

pub(crate) fn run(args: SimArgs) -> anyhow::Result<()> {
    match args.command {
        SimCommand::Csma(args) => run_csma(*args),
        SimCommand::Link(args) => crate::sim::link::run(*args),
    }
}

impl CsmaArgs {
    fn scenario(&self) -> anyhow::Result<Scenario> {
        let mbps = match self.rate.bits_per_second() {
            10_000_000 => 10,
            100_000_000 => 100,
            other => bail!(
                "--rate {}: seed 003's Table 2 has parameter sets for 10M and 100M only",
                BitRate::from_bits_per_second(other)
            ),
        };
        let mut cable = match self.net {
            Net::Long4 => Cable::seed_long_net(),
            Net::Long2 => Cable::seed_two_clusters(),
            Net::Short => Cable::seed_short_net(),
        };
        if let Some(m) = self.cable {
            cable.length_m = m;
        }
        if let Some(c) = self.clusters {
            if c == 0 {
                bail!("--clusters 0: need at least one cluster (example: --clusters 4)");
            }
            cable.placement = Placement::Clusters { clusters: c };
        }
        if self.even {
            cable.placement = Placement::Even;
        }
        cable.velocity_factor = self.velocity;
        cable.attach_delay_ns = self.attach_delay.as_nanos() as f64;
        cable.tap_delay_ns = self.tap_delay.as_nanos() as f64;
        let arrivals = match (self.load, self.burst) {
            (None, _) => Arrivals::Saturated,
            (Some(load), None) => Arrivals::Poisson { load },
            (Some(load), Some(mean_burst)) => Arrivals::Bursty { load, mean_burst },
        };
        let oversize = self.oversize || self.lengths_from_seed_preset();
        for mix in &self.lengths.0 {
            mix.validate(true)?;
            if !oversize && mix_max(mix) > STANDARD_MAX_LENGTH {
                bail!(
                    "{}-byte packets exceed the standard's {STANDARD_MAX_LENGTH}: add --oversize \
                     (the seed tried up to 4000)",
                    mix_max(mix)
                );
            }
        }
        let scenario = Scenario {
            mac: MacParams::table_2(mbps),
            cable,
            hosts: self.hosts.0[0],
            host: HostModel {
                buffers: self.buffers,
                interrupt_min_ns: self.interrupt_latency.0.as_nanos() as u64,
                interrupt_max_ns: self.interrupt_latency.1.as_nanos() as u64,
                cycle_ps: u64::try_from(self.cycle_time.as_nanos() * 1000)
                    .context("--cycle-time: too long (example: --cycle-time 45ns)")?,
                retry_excessive_collisions: !self.discard_excessive,
                delay_from_retry: false,
            },
            lengths: self.lengths.0[0].clone(),
            allow_oversize: true,
            arrivals,
            warmup_ns: self.warmup.as_nanos() as u64,
            measure_ns: self.time.as_nanos() as u64,
            seed: self.seed,
        };
        scenario.validate()?;
        Ok(scenario)
    }

    fn lengths_from_seed_preset(&self) -> bool {
        let seed: Vec<LengthMix> = SEED_LENGTHS
            .iter()
            .map(|&bytes| LengthMix::Fixed { bytes })
            .collect();
        self.lengths.0.windows(seed.len()).any(|w| w == seed)
    }
}

fn mix_max(mix: &LengthMix) -> u64 {
    match mix {
        LengthMix::Fixed { bytes } => *bytes,
        LengthMix::Ratio { short, long, .. } => (*short).max(*long),
        LengthMix::Weighted { lengths } => lengths.iter().map(|l| l.0).max().unwrap_or(0),
    }
}

fn run_csma(args: CsmaArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.plot {
        crate::common::output::check_output_dir("--plot", dir)?;
    }
    let base = args.scenario()?;
    let points = grid(&args.lengths.0, &args.hosts.0);
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        usize::from,
    );
    let replications = args.replications as usize;
    // No estimate before the first point: a simulation's cost depends on its event count.
    let bar = crate::common::progress::Progress::start(
        "simulating",
        "tests",
        (points.len() * replications) as u64,
        None,
        false,
    );
    let started = Instant::now();
    let progress = |done: usize, _total: usize| bar.set_position(done as u64);
    crate::common::interrupt::watch();
    let summaries = run_sweep_stoppable(
        &base,
        &points,
        replications,
        threads,
        &progress,
        &crate::common::interrupt::requested,
    )?;
    bar.finish();
    let planned = points.len();
    // After Ctrl-C: the points whose every replication finished, in grid order.
    let (points, summaries): (Vec<Point>, Vec<_>) = points
        .into_iter()
        .zip(summaries)
        .filter_map(|(p, s)| s.map(|s| (p, s)))
        .unzip();
    let interrupted = points.len() < planned;
    let wall = started.elapsed().as_secs_f64();
    let events: u64 = summaries.iter().map(|s| s.events).sum();
    let slot = base.mac.slot_bits as f64;
    let sim_points: Vec<SimPoint> = summaries
        .into_iter()
        .zip(&points)
        .map(|(summary, point)| SimPoint {
            metcalfe_boggs: args.theory.then(|| {
                MetcalfeBoggs::new(point.lengths.mean_bytes() * 8.0, slot, point.hosts as f64)
            }),
            summary,
        })
        .collect();
    let plots = match &args.plot {
        Some(dir) => write_plots(dir, &sim_points)?,
        None => Vec::new(),
    };
    let warnings = warnings(&args, &sim_points);
    let verdicts = verdicts(&base, &points, &sim_points);
    let report = SimReport {
        points: sim_points,
        events,
        wall_seconds: wall,
        events_per_second: events as f64 / wall.max(1e-9),
        theory: args.theory.then(|| theory_lines(slot)),
        plots,
        rate_format: args.output.rate_format,
        replications: args.replications,
    };
    let params = SimParams {
        model: "csma",
        rate_bits_per_second: base.mac.bits_per_second,
        mac: base.mac,
        net: args.net,
        cable: base.cable.clone(),
        host: base.host,
        arrivals: base.arrivals,
        hosts: args.hosts.0.clone(),
        lengths: args.lengths.0.iter().map(ToString::to_string).collect(),
        warmup_seconds: base.warmup_ns as f64 * 1e-9,
        measured_seconds: base.measure_ns as f64 * 1e-9,
        replications: args.replications,
        seed: args.seed,
        threads,
    };
    let mut doc = Document::new("sim", params, report);
    for verdict in &verdicts {
        doc.verdict(verdict);
    }
    for warning in &warnings {
        doc.warning(warning);
    }
    if !interrupted {
        return output::print(&args.output, &doc).context("writing the result");
    }
    let finished = doc.result.points.len();
    let what = format!(
        "interrupted after {finished} of {planned} points; the rows below are the points whose every replication finished"
    );
    crate::common::interrupt::print_partial(&args.output, &doc, &what)
        .context("writing the result")?;
    Err(crate::common::interrupt::Interrupted {
        message: format!(
            "{finished} of {planned} points finished and are printed above (sim csma keeps no results file: use --json to save them; the same --seed gives the same figures)"
        ),
        resume: None,
    }
    .into())
}

/// The seed's figures 3-3 to 3-9: one plot per statistic, one curve per packet size.
fn write_plots(dir: &std::path::Path, points: &[SimPoint]) -> anyhow::Result<Vec<String>> {
    type Stat = fn(&PointSummary) -> f64;
    let figures: [(&str, &str, &str, Stat); 7] = [
        (
            "bit-rate",
            "Total bit rate (seed 000 fig. 3-3)",
            "Mbit/s",
            |s| s.bits_per_second.mean / 1e6,
        ),
        (
            "bit-rate-sd",
            "Std. dev. of bit rate (fig. 3-4)",
            "Mbit/s",
            |s| s.bits_per_second_std_dev.mean / 1e6,
        ),
        (
            "packet-rate",
            "Total packet rate (fig. 3-5)",
            "packets/s",
            |s| s.packets_per_second.mean,
        ),
        (
            "packet-rate-sd",
            "Std. dev. of packet rate (fig. 3-6)",
            "packets/s",
            |s| s.packets_per_second_std_dev.mean,
        ),
        (
            "delay",
            "Average transmission delay (fig. 3-7)",
            "ms",
            |s| s.delay_mean_seconds.mean * 1e3,
        ),
        (
            "delay-sd",
            "Std. dev. of transmission delay (fig. 3-8)",
            "ms",
            |s| s.delay_std_dev_seconds.mean * 1e3,
        ),
        (
            "excess-delay",
            "Excess transmission delay (fig. 3-9)",
            "ms",
            |s| s.excess_delay_seconds.mean * 1e3,
        ),
    ];
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut lengths: Vec<&str> = Vec::new();
    for p in points {
        if !lengths.contains(&p.summary.lengths.as_str()) {
            lengths.push(&p.summary.lengths);
        }
    }
    let mut written = Vec::new();
    for (file, title, unit, stat) in figures {
        let labels = Labels {
            title,
            x: "number of hosts",
            y: unit,
        };
        let plot = lengths.iter().fold(Plot::new(labels), |plot, name| {
            let points = points
                .iter()
                .filter(|p| p.summary.lengths == *name)
                .map(|p| (p.summary.hosts as f64, stat(&p.summary)))
                .collect();
            let series = Series {
                name: format!("{name} bytes"),
                points,
            };
            plot.curve(Curve::new(series, Mark::Line))
        });
        let path = dir.join(format!("{file}.svg"));
        std::fs::write(&path, plot.svg()?)
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

fn warnings(args: &CsmaArgs, points: &[SimPoint]) -> Vec<SimFinding> {
    let mut w = Vec::new();
    if points.iter().any(|p| p.summary.late_collisions > 0) {
        w.push(SimFinding::LateCollisions);
    }
    if args.replications == 1 {
        w.push(SimFinding::SingleReplication);
    }
    w
}

/// Compares the points the seed measured with what it reported.
fn verdicts(base: &Scenario, points: &[Point], sim: &[SimPoint]) -> Vec<SimFinding> {
    let mut v = Vec::new();
    if base.mac.bits_per_second != 10_000_000 || base.arrivals != Arrivals::Saturated {
        return v;
    }
    for (p, s) in points.iter().zip(sim) {
        let fixed = |b: u64| p.lengths == LengthMix::Fixed { bytes: b };
        if fixed(1536) && p.hosts == 24 && base.cable == Cable::seed_long_net() {
            v.push(SimFinding::LongNetUtilization {
                hosts: p.hosts,
                frame_bytes: 1536,
                utilization_share: s.summary.utilization.mean,
                delay_seconds: s.summary.delay_mean_seconds.mean,
            });
        }
        if fixed(64) && p.hosts == 2 {
            v.push(SimFinding::ShortPacketRate {
                hosts: p.hosts,
                frame_bytes: 64,
                packets_per_second: s.summary.packets_per_second.mean,
            });
        }
    }
    v
}

fn theory_lines(slot_bits: f64) -> Vec<String> {
    let e = std::f64::consts::E;
    let min = MetcalfeBoggs::new(512.0, slot_bits, 1e9);
    let big = MetcalfeBoggs::new(1536.0 * 8.0, slot_bits, 256.0);
    vec![
        "Metcalfe & Boggs (CACM 1976): Q stations always ready, slotted time (slot T = 512 bit \
         times), each transmitting in a slot with probability 1/Q."
            .to_string(),
        "  A = (1 - 1/Q)^(Q-1), the chance that a slot is won; W = (1 - A)/A, slots lost per \
         packet; E = P / (P + W T)."
            .to_string(),
        format!(
            "  As Q grows, A -> 1/e = {:.4} and W -> e - 1 = {:.4}; a 64-byte packet lasts one \
             slot (P = T), so E -> 1/(1 + e - 1) = 1/e = {:.1}%: the '37%' of the myth.",
            1.0 / e,
            e - 1.0,
            min.efficiency * 100.0
        ),
        format!(
            "  For 1536-byte packets the same formula gives {:.1}% even at Q = 256.",
            big.efficiency * 100.0
        ),
        "Why a real Ethernet does not sit at 1/e (seed 000 §2.5): it is unslotted and \
         1-persistent, a collision on a short cable costs the 64-bit preamble and a 32-bit jam \
         or a round trip and the jam (about 10 microseconds), not a whole slot; packets are mostly long; binary exponential \
         backoff adapts to Q; and Q is the number of hosts actually ready, seldom large."
            .to_string(),
        "The simulated columns run that real protocol; the M-B column is the 1976 formula for \
         the same packet size with Q = hosts."
            .to_string(),
    ]
}

impl Render for SimReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let ci = self.replications > 1;
        let mut labels: Vec<&str> = Vec::new();
        for p in &self.points {
            if labels.last() != Some(&p.summary.lengths.as_str()) {
                labels.push(&p.summary.lengths);
            }
        }
        let rate_unit = |bps: f64| {
            if self.rate_format == RateFormat::Adaptive {
                RateFormat::Megabits.value(bps)
            } else {
                self.rate_format.value(bps)
            }
        };
        let unit = if self.rate_format == RateFormat::Adaptive {
            "Mbit/s"
        } else {
            self.rate_format.unit(1e6)
        };
        for (i, label) in labels.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "packets: {}", describe(label))?;
            let mut header = vec![
                "hosts".to_string(),
                unit.to_string(),
                "sd".to_string(),
                "pkt/s".to_string(),
                "sd".to_string(),
                "delay".to_string(),
                "sd".to_string(),
                "excess".to_string(),
                "Jain".to_string(),
                "util".to_string(),
                "coll/pkt".to_string(),
            ];
            if ci {
                header.insert(2, "+-95%".to_string());
            }
            let theory = self.points.iter().any(|p| p.metcalfe_boggs.is_some());
            if theory {
                header.push("M-B".to_string());
            }
            let mut t = Table::new(header);
            for p in self.points.iter().filter(|p| p.summary.lengths == *label) {
                let s = &p.summary;
                let mut row = vec![
                    s.hosts.to_string(),
                    format!("{:.3}", rate_unit(s.bits_per_second.mean)),
                    format!("{:.3}", rate_unit(s.bits_per_second_std_dev.mean)),
                    group_digits(s.packets_per_second.mean.round() as u64),
                    group_digits(s.packets_per_second_std_dev.mean.round() as u64),
                    format_seconds(s.delay_mean_seconds.mean),
                    format_seconds(s.delay_std_dev_seconds.mean),
                    signed_seconds(s.excess_delay_seconds.mean),
                    format!("{:.3}", s.jain_fairness.mean),
                    format!("{:.1}%", s.utilization.mean * 100.0),
                    format!("{:.3}", s.collisions_per_packet.mean),
                ];
                if ci {
                    row.insert(
                        2,
                        format!("{:.3}", rate_unit(s.bits_per_second.ci_half_width)),
                    );
                }
                if let Some(mb) = &p.metcalfe_boggs {
                    row.push(format!("{:.1}%", mb.efficiency * 100.0));
                }
                t.row(row);
            }
            write!(out, "{t}")?;
        }
        writeln!(
            out,
            "bit rate charges 24 byte times per packet (seed 000 §3.3); sd = standard deviation \
             across hosts (rates) or packets (delay); delay = first attempt to end of success"
        )?;
        let late: u64 = self.points.iter().map(|p| p.summary.late_collisions).sum();
        let dropped: u64 = self.points.iter().map(|p| p.summary.dropped).sum();
        writeln!(
            out,
            "{} events simulated in {} ({} million events/s); {} frames hit 16 collisions; {} \
             late collisions",
            group_digits(self.events),
            format_seconds(self.wall_seconds),
            significant(self.events_per_second / 1e6, 3),
            group_digits(dropped),
            group_digits(late),
        )?;
        let discarded: u64 = self.points.iter().map(|p| p.summary.discarded).sum();
        if discarded > 0 {
            writeln!(
                out,
                "{} packets offered by the generators were discarded for want of a free buffer \
                 (seed 000 figure 2-1: G counts them, the throughput does not)",
                group_digits(discarded)
            )?;
        }
        if !self.plots.is_empty() {
            writeln!(out, "plots: {}", self.plots.join(", "))?;
        }
        if let Some(lines) = &self.theory {
            writeln!(out)?;
            for line in lines {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

fn describe(label: &str) -> String {
    if label.contains('/') && !label.contains('x') {
        format!("{label} (short 64-byte to long 1536-byte)")
    } else if label.contains(':') {
        format!("mix {label} (bytes:weight)")
    } else {
        format!("{label} bytes")
    }
}

fn signed_seconds(s: f64) -> String {
    if s.abs() < 1e-9 {
        "0".to_string()
    } else if s < 0.0 {
        format!("-{}", format_seconds(-s))
    } else {
        format_seconds(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CsmaArgs,
    }

    fn parse(argv: &[&str]) -> Result<CsmaArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("csma").chain(argv.iter().copied())).map(|w| w.args)
    }

    #[test]
    fn host_lists_and_ranges() {
        assert_eq!(parse_hosts("1-3,8").unwrap().0, [1, 2, 3, 8]);
        assert_eq!(parse_hosts("24").unwrap().0, [24]);
        assert!(parse_hosts("0-3").is_err());
        assert!(parse_hosts("5-2").is_err());
        assert!(parse_hosts("x").is_err());
    }

    #[test]
    fn length_lists() {
        assert_eq!(parse_lengths("seed").unwrap().0.len(), 9);
        let l = parse_lengths("64,6/2,64:3+1536:1").unwrap().0;
        assert_eq!(l[0], LengthMix::Fixed { bytes: 64 });
        assert_eq!(l[1], LengthMix::seed_ratio(6, 2));
        assert!(matches!(&l[2], LengthMix::Weighted { lengths } if lengths.len() == 2));
        assert!(parse_lengths("big").is_err());
    }

    #[test]
    fn cable_lengths_and_latencies() {
        assert!((parse_length("3000ft").unwrap() - 914.4).abs() < 1e-9);
        assert_eq!(parse_length("2.5km").unwrap(), 2500.0);
        assert!(parse_length("far").is_err());
        let (lo, hi) = parse_latency("75us-100us").unwrap();
        assert_eq!((lo.as_micros(), hi.as_micros()), (75, 100));
        assert_eq!(
            parse_latency("100us").unwrap().0,
            Duration::from_micros(100)
        );
        assert!(parse_latency("100us-75us").is_err());
    }

    #[test]
    fn flags_reach_the_scenario() {
        let s = parse(&[
            "--hosts",
            "4",
            "-l",
            "1536",
            "-r",
            "100M",
            "--net",
            "short",
            "--load",
            "0.5",
            "--burst",
            "4",
            "--buffers",
            "3",
            "--interrupt-latency",
            "10us",
            "--cycle-time",
            "0ns",
            "--tap-delay",
            "500ns",
            "--discard-excessive",
            "-t",
            "1s",
            "--seed",
            "9",
            "--clusters",
            "3",
            "--cable",
            "100m",
        ])
        .unwrap()
        .scenario()
        .unwrap();
        assert_eq!(s.mac.bits_per_second, 100_000_000);
        assert_eq!(s.cable.placement, Placement::Clusters { clusters: 3 });
        assert_eq!(s.cable.length_m, 100.0);
        assert_eq!(
            s.arrivals,
            Arrivals::Bursty {
                load: 0.5,
                mean_burst: 4.0
            }
        );
        assert_eq!(s.host.buffers, 3);
        assert_eq!(s.host.interrupt_min_ns, 10_000);
        assert_eq!(s.host.cycle_ps, 0);
        assert_eq!(s.cable.tap_delay_ns, 500.0);
        let titan = parse(&[]).unwrap().scenario().unwrap().host;
        assert_eq!(titan, HostModel::TITAN, "the defaults are the seed's Titan");
        assert!(!s.host.retry_excessive_collisions);
        assert_eq!(s.measure_ns, 1_000_000_000);
        assert_eq!(s.seed, 9);
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["-r", "1G"]).unwrap().scenario().is_err());
        assert!(
            parse(&["-l", "4000"]).unwrap().scenario().is_err(),
            "needs --oversize"
        );
        assert!(
            parse(&["-l", "4000", "--oversize"])
                .unwrap()
                .scenario()
                .is_ok()
        );
        assert!(parse(&["-l", "seed"]).unwrap().scenario().is_ok());
        assert!(parse(&["--burst", "3"]).is_err(), "--burst needs --load");
        assert!(parse(&["--velocity", "2"]).unwrap().scenario().is_err());
        assert!(parse(&["--replications", "0"]).is_err());
        assert!(
            parse(&["--interrupt-latency", "1s"])
                .unwrap()
                .scenario()
                .is_err(),
            "a routine of 15 million instructions"
        );
        assert!(
            parse(&["--interrupt-latency", "1s", "--cycle-time", "0ns"])
                .unwrap()
                .scenario()
                .is_ok()
        );
    }
}
