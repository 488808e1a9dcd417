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
pub(crate) use result::EnvelopeReport;

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
    #[arg(long, default_value_t = 2, value_name = "N", conflicts_with = "udp")]
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
    /// Flags that parse but describe no link: refused rather than silently dropped.
    fn check(&self) -> anyhow::Result<()> {
        if matches!(self.link, LinkKind::Serial) && self.vlan > 0 {
            anyhow::bail!(
                "--vlan {}: VLAN tags are an Ethernet header's; a serial line carries none \
                 (drop --vlan, or use --link ethernet)",
                self.vlan
            );
        }
        if self.length.is_some_and(|l| l.bytes() == 0) {
            anyhow::bail!(
                "-l 0: a datagram with no payload carries nothing to compute a ceiling for \
                 (give 1 byte or more, such as -l 1472)"
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

/// A validated `envelope`: the link as the model takes it, and what to show.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) params: EnvelopeParams,
    /// `--explain`: the arithmetic line by line.
    pub(crate) explain: bool,
    pub(crate) rate_format: RateFormat,
}

impl TryFrom<&EnvelopeArgs> for Config {
    type Error = anyhow::Error;

    fn try_from(args: &EnvelopeArgs) -> anyhow::Result<Config> {
        args.check()?;
        Ok(Config {
            params: args.params(),
            explain: args.explain,
            rate_format: args.output.rate_format,
        })
    }
}

/// The envelope of the config's link (the model refuses a link no standard has), as the
/// typed document; prints nothing.
pub(crate) fn measure(config: &Config) -> anyhow::Result<Document<EnvelopeParams, EnvelopeReport>> {
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

    #[test]
    fn contradictory_flags_are_refused() {
        assert!(parse(&["-r", "10M", "-l", "100"]).is_err(), "-l needs -u");
        assert!(parse(&["-r", "10M", "-u", "--no-timestamps"]).is_err());
        assert!(parse(&["-r", "10M", "--vlan", "3"]).is_err());
        assert!(parse(&["-r", "10M", "-f", "x"]).is_err());
    }
}
