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
mod metrics;
pub(crate) mod result;
mod text;

#[derive(Debug, Clone, Args)]
pub(crate) struct EnvelopeArgs {
    /// Link rate: 10M, 100Mbit, 1G, 56k, 1.544M (k/M/G are powers of 1000).
    #[arg(long, short = 'r', value_name = "RATE")]
    rate: BitRate,

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
    fn params(&self) -> EnvelopeParams {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: EnvelopeArgs,
    }

    fn parse(argv: &[&str]) -> Result<EnvelopeArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("envelope").chain(argv.iter().copied()))
            .map(|w| w.args)
    }

    #[test]
    fn rate_is_required_and_parsed() {
        assert!(parse(&[]).is_err());
        let args = parse(&["--rate", "1.544M"]).unwrap();
        assert_eq!(args.rate.bits_per_second(), 1_544_000);
        assert!(
            parse(&["--rate", "fast"])
                .unwrap_err()
                .to_string()
                .contains("is not a bit rate")
        );
    }

    #[test]
    fn flags_reach_the_model() {
        let p = parse(&[
            "-r", "10M", "-u", "-6", "-l", "1000", "--vlan", "1", "--duplex", "half",
        ])
        .unwrap()
        .params();
        assert_eq!(p.transport, Transport::Udp);
        assert_eq!(p.ip, IpVersion::V6);
        assert_eq!(p.udp_payload, Some(1000));
        assert_eq!(p.link, LinkLayer::Ethernet { vlan_tags: 1 });
        assert_eq!(p.duplex, Duplex::Half);
        let p = parse(&[
            "-r",
            "10M",
            "--no-timestamps",
            "--ack-every",
            "1",
            "--rtt",
            "20ms",
        ])
        .unwrap()
        .params();
        assert_eq!(p.transport, Transport::Tcp { timestamps: false });
        assert_eq!(p.ack_every, 1);
        assert_eq!(p.rtt, Some(Duration::from_millis(20)));
    }

    /// The config holds the link once; a flag that describes no link is refused by it, one
    /// the model's rules refuse by the measure, each before anything is printed.
    #[test]
    fn the_config_is_the_link_and_what_to_show() {
        let config = |argv: &[&str]| Config::try_from(&parse(argv).unwrap());
        let c = config(&["-r", "10M", "--explain", "-f", "K"]).unwrap();
        assert_eq!(c.params.mtu, 1500);
        assert!(c.explain);
        assert_ne!(c.rate_format, RateFormat::Adaptive, "-f K");
        let doc = measure(&c).unwrap();
        assert!(doc.result.explain.is_some());
        let e = config(&["-r", "10M", "--link", "serial", "--vlan", "1"]).unwrap_err();
        assert!(e.to_string().contains("--vlan 1"), "{e}");
        let e = config(&["-r", "10M", "-u", "-l", "0"]).unwrap_err();
        assert!(e.to_string().starts_with("-l 0"), "{e}");
        let odd = config(&["-r", "10M", "--ipv4-options", "3"]).unwrap();
        assert!(measure(&odd).is_err(), "the model refuses 3 option bytes");
    }

    /// Issue 30: a library caller computes seed 004's ceiling (10 Mbit/s half duplex, an ACK
    /// per segment, no timestamps: about 1,104 KiB/s of goodput) with the constructors and
    /// `measure` alone, and a link the flags could not be given is refused as they refuse it.
    #[test]
    fn a_library_caller_runs_an_envelope() {
        let rate = BitRate::from_bits_per_second(10_000_000);
        let plain = measure(&Config::ethernet(rate)).unwrap();
        assert!(plain.result.explain.is_none());
        let seed_004 = EnvelopeParams {
            duplex: Duplex::Half,
            ack_every: 1,
            transport: Transport::Tcp { timestamps: false },
            ..*Config::ethernet(rate).params()
        };
        let doc = measure(&Config::link(seed_004).unwrap().with_explain()).unwrap();
        let kib = doc.result.envelope.goodput_bytes_per_second / 1024.0;
        assert!((kib / 1104.0 - 1.0).abs() < 0.01, "{kib}");
        assert!(doc.result.explain.is_some_and(|lines| lines.len() > 5));
        assert!(kib < plain.result.envelope.goodput_bytes_per_second / 1024.0);
        let refused = |params: EnvelopeParams| format!("{:#}", Config::link(params).unwrap_err());
        let base = *Config::ethernet(rate).params();
        let udp = EnvelopeParams {
            transport: Transport::Udp,
            ..base
        };
        assert!(
            refused(EnvelopeParams {
                udp_payload: Some(0),
                ..udp
            })
            .starts_with("-l 0")
        );
        assert!(
            refused(EnvelopeParams {
                ack_every: 1,
                ..udp
            })
            .contains("--ack-every 1")
        );
        assert!(
            refused(EnvelopeParams {
                udp_payload: Some(100),
                ..base
            })
            .contains("give -u")
        );
        let q_in_q_in_q = LinkLayer::Ethernet { vlan_tags: 3 };
        assert!(
            refused(EnvelopeParams {
                link: q_in_q_in_q,
                ..base
            })
            .contains("--vlan 3")
        );
        // The model's own rule stays the measure's, as for the flags.
        let tiny = Config::link(EnvelopeParams { mtu: 20, ..base }).unwrap();
        assert!(measure(&tiny).is_err());
    }

    #[test]
    fn contradictory_flags_are_refused() {
        assert!(parse(&["-r", "10M", "-l", "100"]).is_err(), "-l needs -u");
        assert!(parse(&["-r", "10M", "-u", "--no-timestamps"]).is_err());
        assert!(parse(&["-r", "10M", "--vlan", "3"]).is_err());
        assert!(parse(&["-r", "10M", "-f", "x"]).is_err());
    }
}
