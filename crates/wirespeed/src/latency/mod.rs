//! `wirespeed latency [HOST]`: latency under load. An idle phase, then a loaded phase with bulk
//! TCP flows, while probes on flows of their own measure round trips the whole time: UDP echo
//! (kernel timestamps where the socket gives them, as `probe --udp`), the TCP handshake and a
//! request/response on a new connection (the responsiveness draft's foreign-flow probes), and
//! a request/response on a kept connection. It reports idle and loaded latency per probe kind,
//! the increase (bufferbloat), RPM, the throughput meanwhile, and where the extra delay waits.
//!
//! `--rr` is the request/response test alone (netperf's TCP_RR; `--connect`: TCP_CRR):
//! transactions per second and their latency for fixed sizes.
//!
//! The command's shape (issue 30): the flags and their [`Config`] here, the schema in
//! `result.rs`, the run in `measure.rs` ([`measure`]), its figures in `analysis.rs`, the
//! verdicts in `verdicts.rs`, the queues it measures in `queues.rs`, and the views in `text.rs`,
//! `html.rs`, `brief.rs` and `metrics.rs`.

#[doc(hidden)]
pub mod analysis;
#[doc(hidden)]
pub mod brief;
#[doc(hidden)]
pub mod html;
#[doc(hidden)]
pub mod measure;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod queues;
#[doc(hidden)]
pub mod result;
#[doc(hidden)]
pub mod text;
#[doc(hidden)]
pub mod verdicts;

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_model::units::{ByteSize, parse_duration};

pub use measure::{Config, Measured, Measurement, measure};
pub use result::*;
pub use text::LiveLines;

use crate::common::output::OutputArgs;
use measure::RrTest;

/// The longest idle or loaded phase, and the longest `--rr` run.
const MAX_PHASE: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Args)]
pub(crate) struct LatencyArgs {
    /// The agent (`wirespeed serve`), HOST or HOST:PORT; none = an agent in this process on
    /// loopback.
    #[arg(value_name = "HOST")]
    host: Option<String>,

    /// The agent's port.
    #[arg(long, short = 'p', value_name = "PORT")]
    port: Option<u16>,

    /// The idle phase before the load starts.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    idle: Duration,

    /// The loaded phase (with --rr: the whole test).
    #[arg(long, short = 't', default_value = "8s", value_name = "DURATION",
          value_parser = parse_duration)]
    time: Duration,

    /// Bulk TCP flows of the load (per direction).
    #[arg(long, short = 'P', default_value_t = 4, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=128))]
    parallel: u32,

    /// Which way the load flows.
    #[arg(long, value_enum, default_value = "both")]
    direction: LoadDirection,

    /// The load's TCP congestion control at both ends (e.g. cubic, reno, bbr); default: the
    /// system's. Loss-based ones (cubic, reno) fill drop-tail queues, bbr mostly does not.
    #[arg(long, short = 'C', value_name = "ALGO")]
    congestion: Option<String>,

    /// Mark the probes this end sends (UDP echoes, connects, requests) with this IP TOS byte
    /// or DSCP name (ef, af41, cs1: see tcp -S); the load stays unmarked, so a class-aware
    /// queue shows as lower loaded latency for the marked probes.
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// Time between probes of each kind (the TCP handshake probes: five times this).
    #[arg(long, default_value = "40ms", value_name = "DURATION", value_parser = parse_duration)]
    probe_interval: Duration,

    /// The load is UDP at this rate per flow (e.g. 12M) instead of TCP: a rate above the path's
    /// holds its queue full, the drop-tail ground truth.
    #[arg(long, value_name = "RATE", conflicts_with = "congestion")]
    udp_load: Option<wirespeed_model::BitRate>,

    /// Print one JSON object per second of the run as it ends (`{"interval": ...}`), then the
    /// document.
    #[arg(long, conflicts_with = "rr")]
    json_stream: bool,

    /// Write the round trips over time and their CDF, idle against loaded, as SVG files in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "rr")]
    plot: Option<std::path::PathBuf>,

    /// The request/response test alone (netperf's TCP_RR): transactions per second and their
    /// latency, for -t.
    #[arg(long)]
    rr: bool,

    /// With --rr: a new TCP connection for every transaction (netperf's TCP_CRR).
    #[arg(long, requires = "rr")]
    connect: bool,

    /// With --rr: bytes per request.
    #[arg(long, default_value = "1", value_name = "BYTES", requires = "rr")]
    request: ByteSize,

    /// With --rr: bytes per response.
    #[arg(long, default_value = "1", value_name = "BYTES", requires = "rr")]
    response: ByteSize,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    #[command(flatten)]
    schedule: crate::common::schedule::ScheduleArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

impl LatencyArgs {
    /// The flags as one validated [`Config`]: every range, the key file and the agent's
    /// address, checked before any test (and before a schedule's first run).
    pub(crate) fn config(&self) -> anyhow::Result<Config> {
        for (flag, d) in [("--idle", self.idle), ("-t", self.time)] {
            if d > MAX_PHASE {
                bail!("{flag} {d:?} is too long: at most 1h (for example {flag} 10s)");
            }
        }
        self.brief
            .check(&self.output, &[(self.json_stream, "--json-stream")])?;
        if self.time < Duration::from_millis(500) {
            bail!(
                "-t must be at least 500ms (for example -t 8s): the load needs time to fill the path"
            );
        }
        if self.probe_interval < Duration::from_millis(1)
            || self.probe_interval > Duration::from_secs(10)
        {
            bail!(
                "--probe-interval must be between 1ms and 10s (for example --probe-interval 20ms)"
            );
        }
        if let Some(dir) = &self.plot {
            crate::common::output::check_output_dir("--plot", dir)?;
        }
        if let Some(r) = self.udp_load
            && r.bits_per_second() == 0
        {
            bail!("--udp-load 0: give a rate such as --udp-load 12M");
        }
        let key = self.key.load().context("--auth-key-file")?;
        let agent = match &self.host {
            Some(h) => Some(crate::throughput::resolve_agent(
                h, self.port, false, false,
            )?),
            None => None,
        };
        let rr = if self.rr {
            Some(RrTest {
                new_connection: self.connect,
                request_bytes: rr_size("--request", self.request)?,
                response_bytes: rr_size("--response", self.response)?,
            })
        } else {
            None
        };
        Ok(Config {
            agent,
            key,
            idle: self.idle,
            time: self.time,
            parallel: self.parallel,
            direction: self.direction,
            congestion: self.congestion.clone(),
            tos: self.tos,
            probe_interval: self.probe_interval,
            udp_load: self.udp_load,
            rr,
            rate_format: self.output.rate_format,
        })
    }
}

/// A request's or response's size for `--rr`, within what the agent serves.
fn rr_size(flag: &str, b: ByteSize) -> anyhow::Result<u32> {
    let max = wirespeed_net::control::rr::MAX_RR_BYTES;
    u32::try_from(b.bytes())
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| anyhow::anyhow!("{flag} {b}: give 1 to {max} bytes (for example {flag} 1)"))
}

pub(crate) fn run(args: LatencyArgs) -> anyhow::Result<()> {
    args.schedule.check_unused("--count")?;
    let config = args.config()?;
    if args.schedule.active() {
        return run_scheduled(&args, &config);
    }
    let brief = args.brief.brief;
    let human = !brief && !args.output.json && !args.json_stream;
    let mut live = LiveLines::new(human, !brief && args.json_stream);
    match measure(&config, &mut live)? {
        Measured::UnderLoad(m) => {
            if let Some(dir) = &args.plot {
                html::write_plots(dir, &m.doc.result)?;
            }
            if args.json_stream {
                writeln!(
                    std::io::stdout().lock(),
                    "{}",
                    serde_json::to_string(&m.doc)?
                )?;
            } else {
                crate::common::brief::show(&args.brief, &args.output, &m.doc)?;
            }
            if let Some(why) = m.partial_reason {
                return Err(crate::common::exit_status::Exit::cut_short(format!(
                    "partial result: {why}"
                ))
                .into());
            }
        }
        Measured::RequestResponse(m) => {
            crate::common::brief::show(&args.brief, &args.output, &m.doc)?;
            if let Some(why) = m.partial_reason {
                return Err(crate::common::exit_status::Exit::cut_short(why).into());
            }
        }
    }
    Ok(())
}

/// `--every`: the test on a schedule; the headline is the loaded median round trip of the UDP
/// echo (with --rr, the transactions' median round trip).
fn run_scheduled(args: &LatencyArgs, config: &Config) -> anyhow::Result<()> {
    if args.json_stream || args.plot.is_some() || args.brief.brief {
        bail!(
            "--every prints one line per run and a summary: drop --json-stream/--plot/--brief (each run's whole document is in the results file)"
        );
    }
    let mut one = || {
        Ok(match measure(config, &mut LiveLines::silent())? {
            Measured::UnderLoad(m) => crate::common::schedule::RunOutput {
                headline: m
                    .doc
                    .result
                    .kinds
                    .iter()
                    .find(|k| k.kind == ProbeKind::UdpEcho)
                    .map(|k| k.loaded.p50_ms)
                    .filter(|v| v.is_finite()),
                document: serde_json::to_value(&m.doc)?,
                failure: m.partial_reason,
            },
            Measured::RequestResponse(m) => crate::common::schedule::RunOutput {
                headline: Some(m.doc.result.round_trip.p50_ms).filter(|v| v.is_finite()),
                document: serde_json::to_value(&m.doc)?,
                failure: m.partial_reason,
            },
        })
    };
    crate::common::schedule::run(
        &args.schedule,
        crate::common::schedule::Job {
            command: "latency",
            count_flag: "--count",
            seed: None,
            headline: if args.rr {
                "request/response median round trip"
            } else {
                "loaded UDP echo median round trip"
            },
            unit: crate::common::schedule::Unit::Milliseconds,
            output: &args.output,
            run: &mut one,
        },
    )
}
