//! `wirespeed envelope`: the ceiling of a link, and the arithmetic behind it.

use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use wirespeed_model::units::parse_duration;
use wirespeed_model::{
    BitRate, Duplex, EnvelopeParams, IpVersion, LinkLayer, RateFormat, Transport,
};
use wirespeed_report::Document;

use crate::common::output::{self, OutputArgs};
pub use result::EnvelopeReport;

pub(crate) mod html;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod result;
mod text;

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct EnvelopeArgs {
    /// Link rate: 10M, 100Mbit, 1G, 56k, 1.544M (k/M/G are powers of 1000).
    #[arg(long, short = 'r', value_name = "RATE")]
    pub rate: BitRate,

    /// Largest IP packet, in bytes (1500 on Ethernet; up to 9216 for jumbo frames).
    #[arg(long, default_value_t = 1500, value_name = "BYTES")]
    mtu: u64,

    /// Link type: ethernet (preamble, header, FCS, pad, gap) or serial (the packet's bytes
    /// only, as on a DS0 or DS1 line).
    #[arg(long, value_enum, default_value_t = LinkKind::Ethernet)]
    link: LinkKind,

    /// Number of 802.1Q VLAN tags (0, 1, or 2 for Q-in-Q).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2), value_name = "N")]
    vlan: u8,

    /// Compute for UDP instead of TCP.
    #[arg(long, short = 'u')]
    udp: bool,

    /// IPv6 instead of IPv4.
    #[arg(long, short = '6')]
    ipv6: bool,

    /// IPv4 option bytes (a multiple of 4, at most 40).
    #[arg(
        long,
        default_value_t = 0,
        value_name = "BYTES",
        conflicts_with = "ipv6"
    )]
    ipv4_options: u8,

    /// TCP segments without the 12-byte timestamp option (Linux sends it by default).
    #[arg(long, conflicts_with = "udp")]
    no_timestamps: bool,

    /// TCP data segments per ACK (2 = delayed ACK; 0 leaves ACKs out).
    #[arg(long, default_value_t = DEFAULT_ACK_EVERY, value_name = "N", conflicts_with = "udp")]
    ack_every: u32,

    /// full: each direction has the whole rate; half: one shared medium, so ACKs take wire
    /// time from the data.
    #[arg(long, value_enum, default_value_t = DuplexArg::Full)]
    duplex: DuplexArg,

    /// UDP payload per datagram (default: the largest that fits one packet; larger ones are
    /// counted as IP fragments).
    #[arg(
        long = "len",
        short = 'l',
        visible_alias = "length",
        value_name = "BYTES",
        requires = "udp"
    )]
    length: Option<wirespeed_model::ByteSize>,

    /// Round-trip time, for the bandwidth-delay product and the socket buffer to fill it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    rtt: Option<Duration>,

    /// Show the arithmetic line by line.
    #[arg(long)]
    explain: bool,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LinkKind {
    Ethernet,
    Serial,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DuplexArg {
    Full,
    Half,
}

impl EnvelopeArgs {
    /// Flags that parse but describe no link: refused rather than silently dropped. (VLAN
    /// tags on a serial line cannot be written as a link; the rest is [`check_link`].)
    fn check(&self) -> anyhow::Result<()> {
        if matches!(self.link, LinkKind::Serial) && self.vlan > 0 {
            anyhow::bail!(
                "--vlan {}: VLAN tags are an Ethernet header's; a serial line carries none \
                 (drop --vlan, or use --link ethernet)",
                self.vlan
            );
        }
        Ok(())
    }

    /// The link the flags describe, for the model's envelope (whose own rules refuse an MTU
    /// or option length no link has).
    #[doc(hidden)]
    pub fn params(&self) -> EnvelopeParams {
        EnvelopeParams {
            rate: self.rate,
            link: match self.link {
                LinkKind::Ethernet => LinkLayer::Ethernet {
                    vlan_tags: self.vlan,
                },
                LinkKind::Serial => LinkLayer::Serial,
            },
            mtu: self.mtu,
            ip: if self.ipv6 {
                IpVersion::V6
            } else {
                IpVersion::V4 {
                    options_bytes: self.ipv4_options,
                }
            },
            transport: if self.udp {
                Transport::Udp
            } else {
                Transport::Tcp {
                    timestamps: !self.no_timestamps,
                }
            },
            duplex: match self.duplex {
                DuplexArg::Full => Duplex::Full,
                DuplexArg::Half => Duplex::Half,
            },
            ack_every: self.ack_every,
            udp_payload: self.length.map(|l| l.bytes()),
            rtt: self.rtt,
        }
    }
}

/// What the flags refuse in a link that parses, for a link built in code as for one from the
/// flags: a combination the flags cannot be given together (a datagram length on TCP, an ACK
/// ratio on UDP, more than two VLAN tags), or a datagram that carries nothing. The model's own
/// rules (an MTU or option length no standard allows) are the envelope's, refused by
/// [`measure`].
fn check_link(params: &EnvelopeParams) -> anyhow::Result<()> {
    if let LinkLayer::Ethernet { vlan_tags } = params.link
        && vlan_tags > 2
    {
        anyhow::bail!("--vlan {vlan_tags}: give 0, 1 or 2 tags (2 for Q-in-Q)");
    }
    match (params.transport, params.udp_payload) {
        (Transport::Udp, Some(0)) => anyhow::bail!(
            "-l 0: a datagram with no payload carries nothing to compute a ceiling for \
             (give 1 byte or more, such as -l 1472)"
        ),
        (Transport::Tcp { .. }, Some(bytes)) => anyhow::bail!(
            "-l {bytes}: a datagram's payload is UDP's; give -u, or leave -l out for TCP"
        ),
        _ => {}
    }
    if params.transport == Transport::Udp && params.ack_every != DEFAULT_ACK_EVERY {
        anyhow::bail!(
            "--ack-every {}: UDP sends no acknowledgements; leave --ack-every out with -u",
            params.ack_every
        );
    }
    Ok(())
}

/// `--ack-every`'s default: RFC 9293's delayed ACK, one per two segments.
const DEFAULT_ACK_EVERY: u32 = 2;

/// A validated `envelope`: the link as the model takes it, and what to show.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) params: EnvelopeParams,
    /// `--explain`: the arithmetic line by line.
    pub(crate) explain: bool,
    pub(crate) rate_format: RateFormat,
}

impl Config {
    /// An Ethernet link at `rate` with the command's defaults: no VLAN tag, a 1500-byte MTU,
    /// IPv4 without options, TCP with timestamps, an ACK every 2 segments, full duplex, no
    /// round-trip time, as `wirespeed envelope --rate RATE` computes it.
    pub fn ethernet(rate: BitRate) -> Config {
        Config {
            params: EnvelopeParams::ethernet_tcp(rate),
            explain: false,
            rate_format: RateFormat::Adaptive,
        }
    }

    /// Any link the flags can describe (`--link`, `--mtu`, `-u`, `-6`, `--duplex`, ...), refused
    /// here as the flags refuse it.
    pub fn link(params: EnvelopeParams) -> anyhow::Result<Config> {
        check_link(&params)?;
        Ok(Config {
            params,
            ..Config::ethernet(params.rate)
        })
    }

    /// `--explain`: the arithmetic line by line, in [`EnvelopeReport::explain`].
    pub fn with_explain(mut self) -> Config {
        self.explain = true;
        self
    }

    /// The link the envelope is computed for.
    pub fn params(&self) -> &EnvelopeParams {
        &self.params
    }

    /// Whether the arithmetic is shown line by line (`--explain`, [`Config::with_explain`]).
    pub fn explain(&self) -> bool {
        self.explain
    }

    /// How rates are written (`-f`): a test seam, the view's and not the measurement's.
    #[doc(hidden)]
    pub fn rate_format(&self) -> RateFormat {
        self.rate_format
    }
}

impl TryFrom<&EnvelopeArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &EnvelopeArgs) -> anyhow::Result<Config> {
        args.check()?;
        Ok(Config {
            explain: args.explain,
            rate_format: args.output.rate_format,
            ..Config::link(args.params())?
        })
    }
}

/// The envelope of the config's link (the model refuses a link no standard has), as the
/// typed document; prints nothing.
pub fn measure(config: &Config) -> anyhow::Result<Document<EnvelopeParams, EnvelopeReport>> {
    let envelope = config.params.compute()?;
    let explain = config.explain.then(|| envelope.explain());
    let report = EnvelopeReport {
        envelope,
        explain,
        rate_format: config.rate_format,
    };
    Ok(Document::new("envelope", config.params, report))
}

/// `wirespeed envelope`: flags -> config -> the envelope -> the document out.
pub(crate) fn run(args: EnvelopeArgs) -> anyhow::Result<()> {
    let doc = measure(&Config::try_from(&args)?)?;
    output::print(&args.output, &doc).context("writing the result")
}
