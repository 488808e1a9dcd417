//! `wirespeed sim link`: a point-to-point link whose ends may disagree about duplex (seed 003
//! §8.4), with a bulk transfer each way.

use std::io::{self, Write};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde::Serialize;
use wirespeed_model::units::{group_digits, parse_duration, significant};
use wirespeed_model::{BitRate, RateFormat};
use wirespeed_report::{Document, Render, Table};
use wirespeed_sim::MacDuplex;
use wirespeed_sim::link::{LinkScenario, LinkStats, run_link};

use crate::common::output::{self, OutputArgs};
use crate::sim::verdicts::SimFinding;

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct LinkArgs {
    /// Duplex of end A.
    #[arg(long = "a", value_enum, default_value_t = DuplexArg::Half, value_name = "DUPLEX")]
    a: DuplexArg,

    /// Duplex of end B.
    #[arg(long = "b", value_enum, default_value_t = DuplexArg::Full, value_name = "DUPLEX")]
    b: DuplexArg,

    /// Link rate: 10M or 100M.
    #[arg(long, short = 'r', default_value = "10M", value_name = "RATE")]
    rate: BitRate,

    /// Cable length (such as 100m, 330ft, 0.2km; a bare number is metres), as `sim csma` takes it.
    #[arg(long, default_value = "100m", value_name = "LENGTH", value_parser = crate::sim::parse_length)]
    cable: f64,

    /// Data frame length in bytes (header and data, without the CRC).
    #[arg(
        long = "len",
        short = 'l',
        visible_alias = "length",
        default_value_t = 1514,
        value_name = "BYTES"
    )]
    length: u64,

    /// Data frames in flight at most.
    #[arg(long, default_value_t = 16, value_name = "FRAMES")]
    window: u32,

    /// Data frames per acknowledgement.
    #[arg(long, default_value_t = 2, value_name = "N")]
    ack_every: u32,

    /// Time the receiver takes to send an acknowledgement.
    #[arg(long, default_value = "100us", value_name = "DURATION", value_parser = parse_duration)]
    ack_delay: Duration,

    /// Retransmission timeout (go back to the oldest unacknowledged frame).
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = parse_duration)]
    rto: Duration,

    /// Measured time of each transfer.
    #[arg(long = "time", short = 't', default_value = "10s", value_name = "DURATION",
          value_parser = parse_duration)]
    time: Duration,

    /// Seed of the random numbers.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
enum DuplexArg {
    Half,
    Full,
}

impl From<DuplexArg> for MacDuplex {
    fn from(d: DuplexArg) -> MacDuplex {
        match d {
            DuplexArg::Half => MacDuplex::Half,
            DuplexArg::Full => MacDuplex::Full,
        }
    }
}

/// One direction's transfer.
#[derive(Debug, Serialize)]
pub struct Direction {
    /// "A" or "B".
    pub from: &'static str,
    pub to: &'static str,
    pub from_duplex: MacDuplex,
    pub to_duplex: MacDuplex,
    #[serde(flatten)]
    pub stats: LinkStats,
}

/// What was asked: the scenario of the A-to-B transfer (B to A swaps the duplexes).
#[derive(Debug, Serialize)]
pub struct LinkParams {
    pub model: &'static str,
    #[serde(flatten)]
    pub scenario: LinkScenario,
}

/// The schema of `wirespeed sim link` (`wirespeed.sim.v1`, model "link"): A to B, then B to A.
#[derive(Debug, Serialize)]
pub struct LinkReport {
    pub directions: Vec<Direction>,
    /// `-f`: the unit of the text's rate column (the JSON keeps bytes per second).
    #[serde(skip)]
    rate_format: RateFormat,
}

/// A validated `sim link`: the A-to-B transfer's scenario (B to A swaps its ends' duplexes),
/// with the rate checked against seed 003's parameter sets.
#[derive(Debug, Clone)]
pub struct Config {
    /// End A is the scenario's sender, end B its receiver.
    #[doc(hidden)]
    pub scenario: LinkScenario,
    pub(crate) rate_format: RateFormat,
}

impl Config {
    /// Seed 003 §8.4's link (`wirespeed sim link --a A --b B`): end A at duplex `a`, end B
    /// at `b`, a bulk transfer each way. The rest is the command's defaults: 10 Mbit/s, 100 m
    /// of cable, 1514-byte frames, a 16-frame window, an acknowledgement per 2 frames sent
    /// 100 us after, a 200 ms timeout, 10 s measured, random numbers from seed 1. The
    /// simulator's own rules (a timeout no acknowledgement can beat, a frame no Ethernet
    /// carries) are [`measure`]'s, as for the flags.
    pub fn duplex(a: MacDuplex, b: MacDuplex) -> Config {
        Config {
            scenario: LinkScenario::new(a, b),
            rate_format: RateFormat::Adaptive,
        }
    }

    /// `-r`: 10M or 100M, seed 003's Table 2 parameter sets.
    pub fn with_rate(mut self, rate: BitRate) -> anyhow::Result<Config> {
        self.scenario.mac = super::table_2(rate)?;
        Ok(self)
    }

    /// `-t`: the simulated time each transfer measures.
    pub fn with_time(mut self, time: Duration) -> Config {
        self.scenario.measure_ns = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self
    }
}

impl TryFrom<&LinkArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &LinkArgs) -> anyhow::Result<Config> {
        let config = Config::duplex(args.a.into(), args.b.into()).with_rate(args.rate)?;
        let scenario = LinkScenario {
            cable_m: args.cable,
            frame_bytes: args.length,
            window: args.window,
            ack_every: args.ack_every,
            rto_ns: args.rto.as_nanos() as u64,
            ack_delay_ns: args.ack_delay.as_nanos() as u64,
            measure_ns: args.time.as_nanos() as u64,
            seed: args.seed,
            ..config.scenario
        };
        Ok(Config {
            scenario,
            rate_format: args.output.rate_format,
        })
    }
}

/// `wirespeed sim link`: flags -> config -> both transfers -> the document out.
pub(crate) fn run(args: LinkArgs) -> anyhow::Result<()> {
    let doc = measure(&Config::try_from(&args)?)?;
    output::print(&args.output, &doc).context("writing the result")
}

/// Both transfers, A to B and B to A, with the duplex-mismatch verdict; prints nothing.
pub fn measure(config: &Config) -> anyhow::Result<Document<LinkParams, LinkReport>> {
    let base = config.scenario.clone();
    let (a, b) = (base.sender, base.receiver);
    let ab = run_link(&base)?;
    let ba = run_link(&LinkScenario {
        sender: b,
        receiver: a,
        ..base.clone()
    })?;
    let report = LinkReport {
        rate_format: config.rate_format,
        directions: vec![
            Direction {
                from: "A",
                to: "B",
                from_duplex: a,
                to_duplex: b,
                stats: ab,
            },
            Direction {
                from: "B",
                to: "A",
                from_duplex: b,
                to_duplex: a,
                stats: ba,
            },
        ],
    };
    let params = LinkParams {
        model: "link",
        scenario: base,
    };
    let verdict = mismatch_verdict(a, b, &report);
    let mut doc = Document::new("sim", params, report);
    if let Some(verdict) = &verdict {
        doc.verdict(verdict);
    }
    Ok(doc)
}

/// The duplex-mismatch verdict, said only when this run's counters show its signature: late
/// collisions counted at the half-duplex end, FCS errors or runts at the full-duplex end.
fn mismatch_verdict(a: MacDuplex, b: MacDuplex, report: &LinkReport) -> Option<SimFinding> {
    if a == b {
        return None;
    }
    let (mut late_at_half, mut errors_at_full) = (0, 0);
    for d in &report.directions {
        for (end, duplex) in [
            (&d.stats.sender, d.from_duplex),
            (&d.stats.receiver, d.to_duplex),
        ] {
            match duplex {
                MacDuplex::Half => late_at_half += end.late_collisions,
                MacDuplex::Full => errors_at_full += end.fcs_errors + end.runts,
            }
        }
    }
    Some(if late_at_half > 0 && errors_at_full > 0 {
        SimFinding::DuplexMismatch {
            late_collisions_at_half: late_at_half,
            errors_and_runts_at_full: errors_at_full,
        }
    } else {
        SimFinding::DuplexMismatchUnseen {
            late_collisions_at_half: late_at_half,
            errors_and_runts_at_full: errors_at_full,
        }
    })
}

impl Render for LinkReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let duplex = |d: MacDuplex| match d {
            MacDuplex::Half => "half",
            MacDuplex::Full => "full",
        };
        // The seed's unit (KB/s of 1024 bytes) unless -f asks for another.
        let (unit, rate): (&str, Box<dyn Fn(f64) -> String>) = match self.rate_format {
            RateFormat::Adaptive => ("KiB/s", Box::new(|b: f64| format!("{:.1}", b / 1024.0))),
            f => (
                f.unit(1.0),
                Box::new(move |b: f64| significant(f.value(b * 8.0), 4)),
            ),
        };
        let mut t = Table::new([
            "data", unit, "line", "timeouts", "coll", "late", "aborted", "lost rx", "FCS err",
            "runts",
        ]);
        for d in &self.directions {
            let s = &d.stats;
            // Collisions happen at the sender's MAC (data) and the receiver's (acks); errors
            // are counted where frames are received.
            let both = |f: fn(&wirespeed_sim::link::EndCounters) -> u64| {
                group_digits(f(&s.sender) + f(&s.receiver))
            };
            t.row([
                format!(
                    "{} ({}) -> {} ({})",
                    d.from,
                    duplex(d.from_duplex),
                    d.to,
                    duplex(d.to_duplex)
                ),
                rate(s.goodput_bytes_per_second),
                format!("{:.1}%", s.goodput_fraction * 100.0),
                group_digits(s.timeouts),
                both(|c| c.collisions),
                both(|c| c.late_collisions),
                both(|c| c.aborted_late),
                both(|c| c.lost_to_collision),
                both(|c| c.fcs_errors),
                both(|c| c.runts),
            ]);
        }
        write!(out, "{t}")?;
        writeln!(
            out,
            "{unit} of data delivered in order; coll/late/aborted: collisions at either MAC; lost \
             rx: frames a half-duplex end was receiving when it transmitted"
        )
    }
}
