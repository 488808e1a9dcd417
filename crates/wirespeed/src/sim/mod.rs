//! `wirespeed sim csma`: what a shared CSMA/CD Ethernet does with N hosts, these packet sizes,
//! this cable. Flags in (here), a sweep run on every core (`measure.rs`), the seed's statistics
//! out (`text.rs`, `html.rs`); `sim link` is `link.rs`.

mod analysis;
pub(crate) mod html;
pub mod link;
mod measure;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod result;
pub(crate) mod text;
#[doc(hidden)]
pub mod verdicts;

use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use wirespeed_model::BitRate;
use wirespeed_model::units::parse_duration;
use wirespeed_sim::bus::METRES_PER_FOOT;
use wirespeed_sim::sweep::grid;
use wirespeed_sim::traffic::{SEED_LENGTHS, STANDARD_MAX_LENGTH};
use wirespeed_sim::{Arrivals, Cable, HostModel, LengthMix, MacParams, Placement, Scenario};

use crate::common::flags::{HostList, LengthList, parse_hosts, parse_lengths};
use crate::common::output::{self, OutputArgs};
use crate::sim::link::LinkArgs;
pub use result::{Net, SimParams, SimPoint, SimReport};

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
#[doc(hidden)]
pub struct SimArgs {
    #[command(subcommand)]
    command: SimCommand,
}

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct CsmaArgs {
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

/// `3000ft`, `910m`, `0.5km`, or a bare number of metres.
#[doc(hidden)]
pub fn parse_length(text: &str) -> Result<f64, String> {
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
#[doc(hidden)]
pub fn parse_latency(text: &str) -> Result<(Duration, Duration), String> {
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

pub(crate) fn run(args: SimArgs) -> anyhow::Result<()> {
    match args.command {
        SimCommand::Csma(args) => run_csma(*args),
        SimCommand::Link(args) => crate::sim::link::run(*args),
    }
}

/// Seed 003's Table 2 parameter set for `rate` (`--rate`): 10M and 100M have one.
fn table_2(rate: BitRate) -> anyhow::Result<MacParams> {
    let mbps = match rate.bits_per_second() {
        10_000_000 => 10,
        100_000_000 => 100,
        other => bail!(
            "--rate {}: seed 003's Table 2 has parameter sets for 10M and 100M only",
            BitRate::from_bits_per_second(other)
        ),
    };
    Ok(MacParams::table_2(mbps))
}

/// The cable of each of the seed's nets (`--net`).
fn net_cable(net: Net) -> Cable {
    match net {
        Net::Long4 => Cable::seed_long_net(),
        Net::Long2 => Cable::seed_two_clusters(),
        Net::Short => Cable::seed_short_net(),
    }
}

/// `--lengths` against the simulator's bounds, and against the standard's 1536 bytes unless
/// `oversize` (`--oversize`, or the seed's own nine lengths).
fn check_lengths(lengths: &[LengthMix], oversize: bool) -> anyhow::Result<()> {
    for mix in lengths {
        mix.validate(true)?;
        if !oversize && mix_max(mix) > STANDARD_MAX_LENGTH {
            bail!(
                "{}-byte packets exceed the standard's {STANDARD_MAX_LENGTH}: add --oversize \
                 (the seed tried up to 4000)",
                mix_max(mix)
            );
        }
    }
    Ok(())
}

/// Whether `lengths` holds the seed's nine (`--lengths seed`), which go past the standard.
fn has_seed_preset(lengths: &[LengthMix]) -> bool {
    let seed: Vec<LengthMix> = SEED_LENGTHS
        .iter()
        .map(|&bytes| LengthMix::Fixed { bytes })
        .collect();
    lengths.windows(seed.len()).any(|w| w == seed)
}

impl CsmaArgs {
    #[doc(hidden)]
    pub fn scenario(&self) -> anyhow::Result<Scenario> {
        let mac = table_2(self.rate)?;
        let mut cable = net_cable(self.net);
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
        check_lengths(&self.lengths.0, self.oversize())?;
        let scenario = Scenario {
            mac,
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

    fn oversize(&self) -> bool {
        self.oversize || has_seed_preset(&self.lengths.0)
    }
}

/// A validated `sim csma`: the scenario every point varies (its MAC, cable, hosts' model and
/// arrivals checked by the simulator's own rules), the grid of host counts and length mixes,
/// and how often each point runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The first point's scenario; the grid varies its hosts and lengths.
    #[doc(hidden)]
    pub base: Scenario,
    #[doc(hidden)]
    pub hosts: Vec<usize>,
    #[doc(hidden)]
    pub lengths: Vec<LengthMix>,
    /// Lengths past the standard's 1536 bytes accepted (`--oversize`, or the seed's preset).
    pub(crate) oversize: bool,
    /// `--net`, as the document records it.
    pub(crate) net: Net,
    #[doc(hidden)]
    pub replications: u32,
    /// Worker threads; None: every core.
    #[doc(hidden)]
    pub threads: Option<usize>,
    /// `--theory`: Metcalfe-Boggs beside each point.
    pub(crate) theory: bool,
    /// `--plot DIR`, checked writable.
    pub(crate) plot: Option<std::path::PathBuf>,
    pub(crate) rate_format: wirespeed_model::RateFormat,
}

/// `--hosts`' bounds: 1 to 1024 hosts, at most 1024 counts.
const MAX_HOSTS: usize = 1024;
/// `--replications`' bounds.
const MAX_REPLICATIONS: u32 = 1000;
/// `--threads`' bounds.
const MAX_THREADS: usize = 256;

impl Config {
    /// Seed 000's experiment on its long net (`wirespeed sim csma --hosts H -l L`): every host
    /// count of `hosts` (1 to 1024) with every length mix of `lengths`, each point simulated
    /// once. The rest is the command's defaults: 10 Mbit/s (seed 003's Table 2), 3000 ft of
    /// coax in four clusters at 0.77 c, the Titan hosts of the seed (15 buffers, 87 us
    /// interrupt latency, 45 ns cycle) sending flat out, 10 s measured after 200 ms, random
    /// numbers from seed 1, every core, and lengths up to the standard's 1536 bytes (the
    /// seed's nine, which go to 4000, accepted as the flags accept them).
    pub fn seed_long_net(mut hosts: Vec<usize>, lengths: Vec<LengthMix>) -> anyhow::Result<Config> {
        // The flags' list is sorted and without repeats; a list built in code is made so.
        hosts.sort_unstable();
        hosts.dedup();
        let mut base = Scenario::seed_long_net(hosts.first().copied().unwrap_or(0), 0);
        base.seed = 1;
        if let Some(first) = lengths.first() {
            base.lengths = first.clone();
        }
        let config = Config {
            base,
            oversize: has_seed_preset(&lengths),
            hosts,
            lengths,
            net: Net::Long4,
            replications: 1,
            threads: None,
            theory: false,
            plot: None,
            rate_format: wirespeed_model::RateFormat::Adaptive,
        };
        config.check()?;
        Ok(config)
    }

    /// `-r`: 10M or 100M, seed 003's Table 2 parameter sets.
    pub fn with_rate(mut self, rate: BitRate) -> anyhow::Result<Config> {
        self.base.mac = table_2(rate)?;
        Ok(self)
    }

    /// `--net`: another of the seed's cables (its length, layout and velocity).
    pub fn with_net(mut self, net: Net) -> Config {
        self.base.cable = net_cable(net);
        self.net = net;
        self
    }

    /// `-t`: the simulated time each point measures (the seed's 10 s; at most 1 h).
    pub fn with_time(mut self, time: Duration) -> anyhow::Result<Config> {
        self.base.measure_ns = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.check()?;
        Ok(self)
    }

    /// `--seed`: the random numbers; the same seed gives the same figures.
    pub fn with_seed(mut self, seed: u64) -> Config {
        self.base.seed = seed;
        self
    }

    /// `--replications`: independent runs of each point, 1 to 1000 (with 2 or more, each
    /// figure has its 95% confidence interval).
    pub fn with_replications(mut self, replications: u32) -> anyhow::Result<Config> {
        self.replications = replications;
        self.check()?;
        Ok(self)
    }

    /// `--threads`: worker threads, 1 to 256 (without it, every core).
    pub fn with_threads(mut self, threads: usize) -> anyhow::Result<Config> {
        self.threads = Some(threads);
        self.check()?;
        Ok(self)
    }

    /// What the flags hold a simulation to, for a config built in code as for one from the
    /// flags (whose parser has made the first of these checks already).
    fn check(&self) -> anyhow::Result<()> {
        if self.hosts.is_empty()
            || self.hosts.len() > MAX_HOSTS
            || self.hosts.iter().any(|&h| !(1..=MAX_HOSTS).contains(&h))
        {
            bail!(
                "host counts: give 1 to {MAX_HOSTS} counts, each 1 to {MAX_HOSTS} (as --hosts 1-24)"
            );
        }
        if self.lengths.is_empty() {
            bail!("no packet lengths: give at least one (as --lengths 64 would)");
        }
        check_lengths(&self.lengths, self.oversize)?;
        if !(1..=MAX_REPLICATIONS).contains(&self.replications) {
            bail!(
                "--replications {}: give 1 to {MAX_REPLICATIONS} runs of each point",
                self.replications
            );
        }
        if let Some(t) = self.threads
            && !(1..=MAX_THREADS).contains(&t)
        {
            bail!("--threads {t}: give 1 to {MAX_THREADS} worker threads");
        }
        self.base.validate()?;
        Ok(())
    }
}

impl TryFrom<&CsmaArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &CsmaArgs) -> anyhow::Result<Config> {
        if let Some(dir) = &args.plot {
            crate::common::output::check_output_dir("--plot", dir)?;
        }
        let config = Config {
            base: args.scenario()?,
            hosts: args.hosts.0.clone(),
            lengths: args.lengths.0.clone(),
            oversize: args.oversize(),
            net: args.net,
            replications: args.replications,
            threads: args.threads.map(usize::from),
            theory: args.theory,
            plot: args.plot.clone(),
            rate_format: args.output.rate_format,
        };
        config.check()?;
        Ok(config)
    }
}

/// Simulates every point of the config's grid (on every core unless
/// [`Config::with_threads`]) and returns the typed document, printing nothing (no progress
/// bar, no plots: `--plot` is the command's). A caller that watches Ctrl-C
/// (`common::interrupt`) gets the points whose every replication finished.
pub fn measure(
    config: &Config,
) -> anyhow::Result<wirespeed_report::Document<SimParams, SimReport>> {
    config.check()?;
    let points = grid(&config.lengths, &config.hosts).len() * config.replications as usize;
    let quiet =
        crate::common::progress::Progress::start("simulating", "tests", points as u64, None, true);
    measure::simulate(config, &quiet)
}

fn mix_max(mix: &LengthMix) -> u64 {
    match mix {
        LengthMix::Fixed { bytes } => *bytes,
        LengthMix::Ratio { short, long, .. } => (*short).max(*long),
        LengthMix::Weighted { lengths } => lengths.iter().map(|l| l.0).max().unwrap_or(0),
    }
}

/// `wirespeed sim csma`: flags -> config -> the simulated grid -> plots and the document out.
fn run_csma(args: CsmaArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    let planned = grid(&config.lengths, &config.hosts).len();
    // No estimate before the first point: a simulation's cost depends on its event count.
    let bar = crate::common::progress::Progress::start(
        "simulating",
        "tests",
        (planned * config.replications as usize) as u64,
        None,
        false,
    );
    crate::common::interrupt::watch();
    let mut doc = measure::simulate(&config, &bar)?;
    if let Some(dir) = &config.plot {
        doc.result.plots = text::write_plots(dir, &doc.result.points)?;
    }
    let finished = doc.result.points.len();
    if finished == planned {
        return output::print(&args.output, &doc).context("writing the result");
    }
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
