//! `wirespeed diagnose [IFACE...]`: are these interfaces' settings and counters healthy, and if
//! not, which fault fits?
//!
//! Setting `WIRESPEED_SYSFS_NET=DIR` reads a directory laid out like /sys/class/net instead of
//! the kernel (files only, no ethtool): counters saved from another machine can be replayed,
//! and the tests use it to show the diagnosis of a NIC this machine does not have.
//!
//! Inside a wirespeed lab (`wirespeed lab exec` sets `WIRESPEED_LAB`), the interfaces are TAP
//! devices without a physical layer: the lab's emulator runs their MAC (CSMA/CD on a half-duplex
//! or mismatched link) and counts what a NIC's PHY and MAC would (collisions, late collisions,
//! FCS errors, runts). Those counters are read from the emulator's status and added to the
//! interface's, as a NIC driver's 802.3 statistics are, so that `diagnose --peer` in the lab has
//! the evidence the seed's half-duplex end had (seed 003 Table 7).
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use wirespeed_model::RateFormat;
use wirespeed_model::units::parse_duration;
use wirespeed_net::auth::AuthKey;

use crate::common::output::{self, OutputArgs};
pub use measure::measure;
pub use result::{DiagnoseReport, InterfaceReport, Params, PeerReport};

#[doc(hidden)]
pub mod measure;
mod metrics;
#[doc(hidden)]
pub mod result;
mod text;
#[doc(hidden)]
pub mod verdicts;

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct DiagnoseArgs {
    /// Interfaces to diagnose (default: every interface of this network namespace).
    #[arg(value_name = "IFACE")]
    pub interfaces: Vec<String>,

    /// Time between the two readings of the counters, for rates (250ms, 2s).
    #[arg(long, short = 'i', default_value = "1s", value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Duration,

    /// Also run a TCP transfer each way (back to back) against a wirespeed agent on HOST
    /// (`wirespeed serve`), sampling the counters across both: a duplex mismatch shows as one
    /// direction several times slower with late collisions or FCS errors growing meanwhile
    /// (seed 003 Table 7). The counters are then sampled over the transfers, not --interval.
    #[arg(long, value_name = "HOST", conflicts_with = "interval")]
    peer: Option<String>,

    /// The agent's control port with --peer.
    #[arg(
        long,
        short = 'p',
        default_value_t = wirespeed_net::control::DEFAULT_PORT,
        requires = "peer",
        value_name = "PORT"
    )]
    port: u16,

    /// Length of each direction's transfer with --peer.
    #[arg(long, short = 't', default_value = "3s", requires = "peer", value_name = "DURATION", value_parser = parse_interval)]
    time: Duration,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    /// Print one JSON document (schema "wirespeed.diagnose.v1") instead of text.
    #[arg(long, short = 'J')]
    pub json: bool,

    /// Also write the result's figures as Prometheus text to FILE (replaced whole, for
    /// node_exporter's textfile collector): each interface's rates, errors and link settings.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    metrics_file: Option<std::path::PathBuf>,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text).map_err(|e| e.to_string())?;
    if !interval_in_range(d) {
        return Err(format!(
            "{text:?} is out of range; expected an interval from 1ms to 1h, such as 2s"
        ));
    }
    Ok(d)
}

/// `-i` and `-t`: a sampling interval or transfer of more than nothing and at most an hour.
fn interval_in_range(d: Duration) -> bool {
    !d.is_zero() && d <= Duration::from_secs(3600)
}

/// [`interval_in_range`] for a duration given in code, as one line naming the flag.
fn check_interval(flag: &str, d: Duration) -> anyhow::Result<()> {
    if !interval_in_range(d) {
        anyhow::bail!(
            "{flag} {}: out of range; give an interval from 1ms to 1h, such as 2s",
            humantime::format_duration(d)
        );
    }
    Ok(())
}

/// A validated diagnosis: the interfaces, and how their counters are sampled (over an
/// interval, or across a transfer each way against an agent whose address and key are
/// checked before any counter is read).
#[derive(Debug, Clone)]
pub struct Config {
    /// Interfaces to diagnose; empty: every interface of this network namespace.
    #[doc(hidden)]
    pub interfaces: Vec<String>,
    /// Time between the two readings of the counters (without a peer).
    #[doc(hidden)]
    pub interval: Duration,
    /// `--peer`: the counters sampled across the transfers instead.
    #[doc(hidden)]
    pub peer: Option<Peer>,
    /// A directory laid out like /sys/class/net to read instead of the kernel
    /// (`WIRESPEED_SYSFS_NET`); None: this network namespace's interfaces.
    pub(crate) sysfs: Option<PathBuf>,
}

impl Config {
    /// `wirespeed diagnose IFACE... -i INTERVAL`: `interfaces` of this network namespace
    /// (empty: every one) read twice, `interval` apart (1 ms to 1 h; the command's default
    /// is 1 s), and judged.
    pub fn interfaces(interfaces: Vec<String>, interval: Duration) -> anyhow::Result<Config> {
        check_interval("-i", interval)?;
        Ok(Config {
            interfaces,
            interval,
            peer: None,
            sysfs: None,
        })
    }

    /// Reads a saved tree laid out like /sys/class/net (files only, no ethtool) instead of the
    /// kernel, as `WIRESPEED_SYSFS_NET=DIR` makes the command do: counters from another
    /// machine replayed, such as `examples/sysfs-seed-003/net`.
    pub fn with_sysfs(mut self, dir: impl Into<PathBuf>) -> Config {
        self.sysfs = Some(dir.into());
        self
    }

    /// `--peer`: the counters sampled across a TCP transfer of `time` (1 ms to 1 h; the
    /// command's default is 3 s) to the `wirespeed serve` agent at `agent` and one back,
    /// instead of over the interval.
    pub fn with_peer(
        mut self,
        agent: SocketAddr,
        time: Duration,
        auth: Option<AuthKey>,
    ) -> anyhow::Result<Config> {
        check_interval("-t", time)?;
        self.peer = Some(Peer { agent, auth, time });
        Ok(self)
    }
}

/// `--peer`: the agent to transfer to and from, and each direction's length.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct Peer {
    pub agent: SocketAddr,
    pub auth: Option<AuthKey>,
    pub time: Duration,
}

impl TryFrom<&DiagnoseArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &DiagnoseArgs) -> anyhow::Result<Config> {
        let mut config = Config::interfaces(args.interfaces.clone(), args.interval)?;
        if let Some(host) = &args.peer {
            let agent = crate::common::host::resolve_one(host, args.port, "--peer")?;
            config = config.with_peer(agent, args.time, args.key.load()?)?;
        }
        if let Some(root) = std::env::var_os("WIRESPEED_SYSFS_NET") {
            config = config.with_sysfs(root);
        }
        Ok(config)
    }
}

/// `wirespeed diagnose`: flags -> config -> the counters (and transfers) read and judged ->
/// the document out.
pub(crate) fn run(args: DiagnoseArgs) -> anyhow::Result<()> {
    let config = Config::try_from(&args)?;
    let doc = measure(&config)?;
    let out = OutputArgs {
        json: args.json,
        rate_format: RateFormat::Adaptive,
        metrics_file: args.metrics_file,
    };
    output::print(&out, &doc).context("writing the result")
}
