//! The text view of `wirespeed envelope`: the link and stack in one line, the envelope's
//! figures as a table, and the arithmetic behind them (`--explain`).

use std::io::{self, Write};

use wirespeed_model::envelope::Envelope;
use wirespeed_model::units::{format_seconds, group_digits, significant};
use wirespeed_model::{Duplex, EnvelopeParams, IpVersion, LinkLayer, RateFormat, Transport};
use wirespeed_report::Render;

use super::result::EnvelopeReport;

impl Render for EnvelopeReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let p = &self.envelope.params;
        let duplex = match p.duplex {
            Duplex::Full => "full duplex",
            Duplex::Half => "half duplex",
        };
        writeln!(
            out,
            "envelope: {} {}, MTU {}, {duplex}",
            p.rate,
            stack_name(p),
            p.mtu
        )?;
        let t = self.figures();
        let width = t.iter().map(|[label, _]| label.len()).max().unwrap_or(0);
        for [label, value] in &t {
            writeln!(out, "  {label:<width$}  {value}")?;
        }
        writeln!(out, "units: k, M, G = powers of 1000; KiB = 1024 bytes")?;
        if let Some(lines) = &self.explain {
            writeln!(out)?;
            writeln!(out, "the arithmetic:")?;
            let width = lines.iter().map(|l| l.label.len()).max().unwrap_or(0);
            for (i, l) in lines.iter().enumerate() {
                writeln!(out, "{:>2}. {:<width$}  {}", i + 1, l.label, l.work)?;
            }
        }
        Ok(())
    }
}

impl EnvelopeReport {
    /// The envelope's figures, one (label, value) row each: per frame, the ceilings, and the
    /// pipe when a round trip was given.
    fn figures(&self) -> Vec<[String; 2]> {
        let e = &self.envelope;
        let p = &e.params;
        let rate_fmt = |bps: f64| {
            let auto = self.rate_format == RateFormat::Adaptive;
            let shown = self.rate_format.format(bps);
            if auto {
                shown
            } else {
                format!("{shown} ({})", RateFormat::Adaptive.format(bps))
            }
        };
        let mut t: Vec<[String; 2]> = Vec::new();
        let frames: Vec<String> = e
            .data_frames
            .iter()
            .map(|s| {
                let n = if s.count > 1 {
                    format!("{} x ", s.count)
                } else {
                    String::new()
                };
                format!("{n}{} (frame {})", s.bytes.wire, s.bytes.frame)
            })
            .collect();
        t.push([
            "bytes on the wire per frame".to_string(),
            frames.join(" + "),
        ]);
        t.push(["payload per frame".to_string(), payload_line(e)]);
        if let Some(a) = &e.acks {
            let cost = if a.shares_medium {
                "shares the medium"
            } else {
                "reverse direction"
            };
            t.push([
                "ACK stream".to_string(),
                format!(
                    "1 per {} segment(s), {} wire bytes each, {} ({cost})",
                    a.every,
                    a.frame.wire,
                    RateFormat::Adaptive.format(a.wire_bits_per_second)
                ),
            ]);
        }
        t.push([
            "efficiency".to_string(),
            format!("{:.2}%", e.efficiency * 100.0),
        ]);
        t.push([
            "goodput ceiling".to_string(),
            format!(
                "{} bytes/s = {}",
                group_digits(e.goodput_bytes_per_second.round() as u64),
                rate_fmt(e.goodput_bits_per_second)
            ),
        ]);
        t.push([
            "frames/s at this size".to_string(),
            significant(e.frames_per_second, 6),
        ]);
        t.push([
            format!("frames/s at the minimum ({} wire bytes)", p.min_wire()),
            significant(e.min_frames_per_second, 6),
        ]);
        t.push([
            "serialization per byte".to_string(),
            format_seconds(e.seconds_per_byte),
        ]);
        t.push([
            "serialization per frame".to_string(),
            format_seconds(e.seconds_per_frame),
        ]);
        if let Some(pipe) = &e.pipe {
            t.push([
                format!(
                    "bandwidth-delay product (RTT {})",
                    format_seconds(pipe.rtt_seconds)
                ),
                format!(
                    "{} payload bytes ({} on the wire)",
                    group_digits(pipe.bdp_payload_bytes.round() as u64),
                    group_digits(pipe.bdp_wire_bytes.round() as u64)
                ),
            ]);
            t.push([
                "socket buffer to fill the pipe".to_string(),
                format!(
                    "-w {} (Linux grants {}: it doubles requests)",
                    pipe.socket_buffer_bytes, pipe.socket_buffer_granted_bytes
                ),
            ]);
        }
        t
    }
}

fn payload_line(e: &Envelope) -> String {
    match e.params.transport {
        Transport::Tcp { .. } => format!("{} bytes (MSS)", e.payload_bytes),
        Transport::Udp => format!("{} bytes per datagram", e.payload_bytes),
    }
}

fn stack_name(p: &EnvelopeParams) -> String {
    let link = match p.link {
        LinkLayer::Ethernet { vlan_tags: 0 } => "Ethernet".to_string(),
        LinkLayer::Ethernet { vlan_tags } => format!("Ethernet + {vlan_tags} VLAN tag(s)"),
        LinkLayer::Serial => "serial line".to_string(),
    };
    let ip = match p.ip {
        IpVersion::V4 { .. } => "IPv4",
        IpVersion::V6 => "IPv6",
    };
    let transport = match p.transport {
        Transport::Tcp { timestamps: true } => "TCP (timestamps)",
        Transport::Tcp { timestamps: false } => "TCP (no options)",
        Transport::Udp => "UDP",
    };
    format!("{link} / {ip} / {transport}")
}
