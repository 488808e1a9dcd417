//! The text view of a probe: per hop the table of minimums, the fitted line of the seed's
//! best-case delay with its intervals, and the hop's own cost; and the SVG plot of `--plot`
//! (the seed's figures 2-4).

use std::io::{self, Write};
use wirespeed_model::destination::PerByteSeries;

use wirespeed_model::BitRate;
use wirespeed_model::bestcase::{HopFit, Increment};
use wirespeed_model::delay::Cost;
use wirespeed_model::perhop::Separation;
use wirespeed_model::stats::Interval;
use wirespeed_model::units::format_seconds;
use wirespeed_net::SocketKind;
use wirespeed_report::plot::{Curve, Labels, Mark, Plot, Series};
use wirespeed_report::{Render, Table};

use super::result::{HopReport, ProbeReport, Timestamps};

/// Minimum RTT against bytes crossed (sent + returned), one series per hop, with its line.
pub(crate) fn plot(report: &ProbeReport) -> anyhow::Result<String> {
    let title = format!("wirespeed probe {}: minimum round trip", report.target);
    let labels = Labels {
        title: &title,
        x: "bytes crossed (sent + returned)",
        y: "minimum RTT, ms",
    };
    let plot = report.hops.iter().fold(Plot::new(labels), |plot, h| {
        let who = h.responder.map_or("*".to_string(), |r| r.to_string());
        let series = Series {
            name: if report.per_hop {
                format!("hop {} {who}", h.analysis.ttl)
            } else {
                who
            },
            points: h
                .analysis
                .sizes
                .iter()
                .map(|r| ((r.sent_bytes + r.returned_bytes) as f64, r.min_rtt_ms))
                .collect(),
        };
        let curve = Curve::new(series, Mark::Points);
        plot.curve(match &h.analysis.fit {
            Some(f) => curve.with_fit(f.rtt_intercept_ms, f.rtt_slope_ms_per_byte),
            None => curve,
        })
    });
    Ok(plot.x_from_zero().svg()?)
}

/// The unit a time of `ms` milliseconds reads best in, and its size in milliseconds.
fn time_unit(ms: f64) -> (&'static str, f64) {
    match ms.abs() {
        m if m >= 1000.0 => ("s", 1000.0),
        m if m >= 1.0 => ("ms", 1.0),
        m if m >= 1e-3 => ("us", 1e-3),
        _ => ("ns", 1e-6),
    }
}

/// A time given in milliseconds, scaled to s, ms, us or ns with three significant digits
/// (a per-byte cost of 0.000000349 ms is "0.349 ns").
#[doc(hidden)]
pub fn time_text(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".into();
    }
    let (unit, size) = time_unit(ms);
    format!(
        "{} {unit}",
        wirespeed_model::units::significant(ms / size, 3)
    )
}

/// An interval of times in one unit, chosen by its larger end.
#[doc(hidden)]
pub fn interval_text(low_ms: f64, high_ms: f64) -> String {
    let (unit, size) = time_unit(low_ms.abs().max(high_ms.abs()));
    let v = |x: f64| wirespeed_model::units::significant(x / size, 3);
    format!("[{}, {}] {unit}", v(low_ms), v(high_ms))
}

/// `fixed + per_byte/byte x size` with the sign of the per-byte part folded in.
/// The line of a fit's or an own cost's intervals over time blocks; `tail` adds a figure.
fn time_blocks(
    out: &mut dyn Write,
    (confidence, blocks): (f64, usize),
    fixed_ms: Interval,
    per_byte_ms: Interval,
    tail: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "    {:.0}% over {blocks} time blocks: fixed {}, per byte {}{tail}",
        confidence * 100.0,
        interval_text(fixed_ms.low, fixed_ms.high),
        interval_text(per_byte_ms.low, per_byte_ms.high)
    )
}

#[doc(hidden)]
pub fn line(c: Cost) -> String {
    let sign = if c.per_byte_ms < 0.0 { '-' } else { '+' };
    format!(
        "{} {sign} {}/byte x size",
        time_text(c.fixed_ms),
        time_text(c.per_byte_ms.abs())
    )
}

fn ms(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "-".into()
    }
}

impl Render for ProbeReport {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        self.header(out)?;
        for h in &self.hops {
            writeln!(out)?;
            self.hop(h, out)?;
        }
        Ok(())
    }
}

impl ProbeReport {
    /// What was sent and answered, with which socket and clock, and what bounds the timing.
    fn header(&self, out: &mut dyn Write) -> io::Result<()> {
        let clock = match self.timestamps {
            Timestamps::KernelSoftware => "kernel software timestamps (SO_TIMESTAMPING)",
            Timestamps::Monotonic => "CLOCK_MONOTONIC around the syscalls",
        };
        let socket = match self.socket {
            SocketKind::Datagram => "ICMP datagram socket",
            SocketKind::Raw => "raw ICMP socket",
            SocketKind::UdpEcho => "UDP echo to the wirespeed agent",
        };
        let agent = if self.samples.iter().any(|s| s.series.is_agent()) {
            " (the destination also by the wirespeed agent's whole echoes and short replies)"
        } else {
            ""
        };
        writeln!(
            out,
            "probe {}: {} answers of {} probes, {socket}{agent}, {clock}",
            self.target,
            self.answers,
            self.samples.len()
        )?;
        writeln!(
            out,
            "timer floor {} (CLOCK_MONOTONIC resolution {}), {}, path MTU {}, {:.2} s",
            format_seconds(self.timer_floor_seconds),
            format_seconds(self.clock_resolution_seconds),
            self.cpu_wakeup,
            self.path_mtu_bytes
                .map_or("unknown".to_string(), |m| format!("{m} bytes")),
            self.elapsed_seconds
        )?;
        if let Some(b) = &self.host_baseline {
            writeln!(
                out,
                "this host (loopback baseline, the seed's roc): one-way {} ms, subtracted from hop 1",
                line(b.one_way)
            )?;
        }
        Ok(())
    }

    /// One hop: its minimums per size, its fitted line and its own cost.
    fn hop(&self, h: &HopReport, out: &mut dyn Write) -> io::Result<()> {
        let a = &h.analysis;
        let who = h.responder.map_or("*".to_string(), |r| r.to_string());
        let role = if h.destination {
            " (destination, echo)"
        } else {
            " (time exceeded)"
        };
        if self.per_hop {
            writeln!(
                out,
                "hop {} {who}{role}, loss {:.1}%",
                a.ttl,
                a.loss_fraction * 100.0
            )?;
        } else {
            writeln!(out, "{who}, loss {:.1}%", a.loss_fraction * 100.0)?;
        }
        let mut t = Table::new([
            "  sent B",
            "returned B",
            "probes",
            "lost",
            "min RTT ms",
            "median ms",
            "resid us",
        ]);
        for r in &a.sizes {
            t.row([
                format!("  {}", r.sent_bytes),
                r.returned_bytes.to_string(),
                r.sent.to_string(),
                r.lost.to_string(),
                ms(r.min_rtt_ms),
                ms(r.median_rtt_ms),
                if r.residual_ms.is_finite() {
                    format!("{:+.1}", r.residual_ms * 1e3)
                } else {
                    "-".into()
                },
            ]);
        }
        write!(out, "{t}")?;
        match &a.fit {
            None => writeln!(
                out,
                "  {}",
                a.no_fit_reason.as_deref().unwrap_or("not fitted")
            )?,
            Some(f) => fit(f, out)?,
        }
        if let Some(inc) = &a.increment {
            self.own_cost(h, inc, out)?;
        }
        Ok(())
    }

    /// The hop's own cost: its line less the previous hop's, and with --wire its transit.
    fn own_cost(&self, h: &HopReport, inc: &Increment, out: &mut dyn Write) -> io::Result<()> {
        let rate = inc
            .implied_bits_per_second
            .map_or("none (per-byte cost not above 0)".to_string(), |b| {
                self.rate_format.format(b)
            });
        let from = if inc.from_ttl == 0 {
            "this host".to_string()
        } else {
            format!("hop {}", inc.from_ttl)
        };
        match &inc.intervals {
            // An echo behind a path that returns bytes at another cost than it sends them:
            // its slope mixes the two directions (the note says why), so no figure is given.
            _ if inc.per_byte_mixes_directions => writeln!(
                out,
                "  own cost (from {from}): {} fixed, per byte not separable from one end",
                time_text(inc.cost.fixed_ms)
            )?,
            // A per-byte cost whose interval reaches zero is not a figure this run resolves (a
            // fast link's few ns a byte over the sizes' span is less than the noise of a
            // minimum): said so instead of printed, with no link rate implied by it.
            Some(iv) if iv.per_byte_unresolved() => writeln!(
                out,
                "  own cost (from {from}): {} fixed, per byte below what this run resolves",
                time_text(inc.cost.fixed_ms)
            )?,
            _ => writeln!(
                out,
                "  own cost (from {from}): {}, implied link rate {rate}",
                line(inc.cost)
            )?,
        }
        if inc.per_byte_from == PerByteSeries::AgentShortReplies {
            writeln!(
                out,
                "    per byte sent and returned from the agent's whole echoes and short replies (--udp); fixed cost from the ICMP echo"
            )?;
        }
        if inc.answer_per_byte_ms != 0.0 {
            let what = if inc.per_byte_from == PerByteSeries::AgentShortReplies {
                "returned at another cost than sent, per byte (the path back, less the path out)"
            } else {
                "answer per returned byte at this hop"
            };
            writeln!(out, "    {what}: {}", time_text(inc.answer_per_byte_ms))?;
        }
        if let Some(iv) = &inc.intervals {
            let answer = if inc.answer_per_byte_ms != 0.0 {
                format!(
                    ", answer per byte {}",
                    interval_text(iv.answer_per_byte_ms.low, iv.answer_per_byte_ms.high)
                )
            } else {
                String::new()
            };
            time_blocks(
                out,
                (iv.confidence, iv.blocks),
                iv.fixed_ms,
                iv.per_byte_ms,
                &answer,
            )?;
        }
        if let Some(c) = &inc.caveat {
            writeln!(out, "    note: {c}")?;
        }
        if let Some(t) = &h.transit {
            writeln!(
                out,
                "  transit (own cost - {}/byte wire at {}): {}",
                time_text(t.wire.per_byte_ms),
                BitRate::from_bits_per_second(t.wire_rate_bits_per_second),
                line(t.node)
            )?;
        }
        Ok(())
    }
}

/// The fitted line of a hop's minimums, the one-way best case, its plane and its intervals.
fn fit(f: &HopFit, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "  fit of the minimums: RTT = {}, R^2 {:.4}, residual sd {:.1} us",
        line(Cost::new(f.rtt_intercept_ms, f.rtt_slope_ms_per_byte))
            .replace(" x size", " x (bytes sent + returned)"),
        f.r_squared,
        f.residual_std_ms * 1e3
    )?;
    writeln!(out, "  one-way best case: {}", line(f.one_way))?;
    let l = &f.rtt_line;
    writeln!(
        out,
        "  plane: RTT = {} + {}/byte x sent + {}/byte x returned ({})",
        time_text(l.fixed_ms),
        time_text(l.per_sent_byte_ms),
        time_text(l.per_returned_byte_ms),
        match f.separation {
            Separation::Separated => "sent and returned bytes separated",
            Separation::Echo => "an echo: one slope both ways",
            Separation::Collinear =>
                "one slope: the sizes lie on one side of the quote limit (548 bytes)",
        }
    )?;
    if let Some(b) = &f.bootstrap {
        writeln!(
            out,
            "    95% bootstrap: fixed {}, per byte {}",
            interval_text(b.intercept.low, b.intercept.high),
            interval_text(b.slope.low, b.slope.high)
        )?;
    }
    if let Some(b) = &f.time_blocks {
        time_blocks(out, (b.confidence, b.blocks), b.fixed_ms, b.per_byte_ms, "")?;
    }
    if let Some(s) = &f.split_half {
        writeln!(
            out,
            "    split-half (even/odd): fixed {}, per byte {}",
            interval_text(s.intercept.low, s.intercept.high),
            interval_text(s.slope.low, s.slope.high)
        )?;
    }
    if let (Some(ts), Some(l)) = (&f.theil_sen, &f.least_median_of_squares) {
        writeln!(
            out,
            "    robust: Theil-Sen {}; least median of squares {}",
            line(*ts),
            line(*l)
        )?;
    }
    Ok(())
}
