//! The text views of a latency run and of a request/response run, and the lines a run prints
//! while it goes (one a second, as text or as a JSON stream).

use std::io::{self, Write};
use std::net::SocketAddr;

use wirespeed_report::Render;

use super::measure::Config;
use super::result::{LatencyInterval, LatencyResult, Phase, ProbeKind, RrResult};
use crate::common::exit_status::NOT_MEASURED;

/// A round trip in the unit that reads best.
#[doc(hidden)]
pub fn time_ms(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 1.0 {
        format!("{:.0} us", v * 1e3)
    } else if v < 100.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.0} ms")
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Idle => "idle",
        Phase::Settling => "settling",
        Phase::Loaded => "loaded",
        Phase::After => "after",
    }
}

/// Where a latency run's seconds go as they end: a header and a line each as text, one JSON
/// object each (`--json-stream`), or nowhere (a library caller, `--json`, `--brief`).
pub struct LiveLines {
    human: bool,
    stream: bool,
    /// The seconds shown so far.
    shown: usize,
}

impl LiveLines {
    /// Nothing is printed while the run goes.
    pub fn silent() -> LiveLines {
        LiveLines::new(false, false)
    }

    pub(crate) fn new(human: bool, stream: bool) -> LiveLines {
        LiveLines {
            human,
            stream,
            shown: 0,
        }
    }

    /// Whether any second is shown: the seconds need not be computed otherwise.
    pub(crate) fn wants_seconds(&self) -> bool {
        self.human || self.stream
    }

    /// The seconds that have ended by `upto` (seconds from the run's start) and are not yet
    /// shown, from the first: `[a, a + 1)` for each.
    pub(crate) fn due(&mut self, upto: f64) -> impl Iterator<Item = f64> + use<> {
        let from = self.shown;
        while (self.shown as f64 + 1.0) <= upto {
            self.shown += 1;
        }
        (from..self.shown).map(|s| s as f64)
    }

    /// The run's first lines, as text: what it measures and the columns that follow.
    pub(crate) fn header(&self, agent: SocketAddr, in_process: bool, config: &Config) {
        if !self.human {
            return;
        }
        let _ = writeln!(
            io::stdout().lock(),
            "latency to {} ({}): {} idle, then {} with {}; probes every {}",
            agent,
            if in_process {
                "in-process agent"
            } else {
                "agent"
            },
            humantime::format_duration(config.idle),
            humantime::format_duration(config.time),
            super::verdicts::load_words(
                config.parallel,
                config.udp_load.map(|r| r.bits_per_second()),
                config.direction
            ),
            humantime::format_duration(config.probe_interval),
        );
        let _ = writeln!(
            io::stdout().lock(),
            "{:>11}  {:<8}  {:>11}  {:>11}  {:>11}",
            "interval",
            "phase",
            "UDP echo",
            "kept RR",
            "connect"
        );
    }

    /// One second as it ends: its phase and the medians of the UDP echo, the kept connection's
    /// request and the handshake.
    pub(crate) fn second(&self, interval: &LatencyInterval) {
        if self.stream {
            let text = serde_json::json!({ "interval": interval });
            let _ = writeln!(io::stdout().lock(), "{text}");
            return;
        }
        if !self.human {
            return;
        }
        let median = |k: ProbeKind| {
            interval
                .p50_ms
                .iter()
                .find(|(x, _)| *x == k)
                .map_or_else(|| "-".to_string(), |(_, v)| time_ms(*v))
        };
        let _ = writeln!(
            io::stdout().lock(),
            "{:>4.1}-{:<4.1} s  {:<8}  {:>11}  {:>11}  {:>11}",
            interval.start_seconds,
            interval.end_seconds,
            phase_name(interval.phase),
            median(ProbeKind::UdpEcho),
            median(ProbeKind::RrKeptConnection),
            median(ProbeKind::TcpConnect),
        );
    }
}

impl Render for LatencyResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out)?;
        writeln!(
            out,
            "{:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "round trip (ms)", "idle p50", "p50", "p90", "p99", "max", "+p50", "lost"
        )?;
        for k in &self.kinds {
            let f = |v: f64| {
                if v.is_finite() {
                    format!("{v:.3}")
                } else {
                    "-".into()
                }
            };
            writeln!(
                out,
                "{:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                k.kind.label(),
                f(k.idle.p50_ms),
                f(k.loaded.p50_ms),
                f(k.loaded.p90_ms),
                f(k.loaded.p99_ms),
                f(k.loaded.max_ms),
                f(k.increase_p50_ms),
                format!("{}/{}", k.loaded.lost, k.loaded.probes),
            )?;
            if let Some(n) = &k.network_round_trip {
                writeln!(
                    out,
                    "{:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                    "  less the agent's residence",
                    f(n.idle.p50_ms),
                    f(n.loaded.p50_ms),
                    f(n.loaded.p90_ms),
                    f(n.loaded.p99_ms),
                    f(n.loaded.max_ms),
                    f(n.loaded.p50_ms - n.idle.p50_ms),
                    "",
                )?;
            }
        }
        // A run cut short before its loaded window has no figure here: the text says so
        // rather than print NaN (docs/exit-status.md).
        let measured = |b: f64| {
            if b.is_finite() {
                self.rate_format.format(b)
            } else {
                NOT_MEASURED.into()
            }
        };
        let rate = |v: Option<f64>| v.map_or_else(|| "-".into(), measured);
        let whole = |v: f64| {
            if v.is_finite() {
                format!("{v:.0}")
            } else {
                NOT_MEASURED.into()
            }
        };
        let share = |v: f64, of: &str| {
            if v.is_finite() {
                format!("{v:.2}% of {of}")
            } else {
                format!("share of {of} {NOT_MEASURED}")
            }
        };
        writeln!(
            out,
            "load: {} up, {} down over {:.1} s (first {:.1} s of load left out); probes {} out, {} back on the wire ({}); RPM {} idle, {} loaded",
            rate(self.upload_bits_per_second),
            rate(self.download_bits_per_second),
            self.loaded_seconds,
            self.settle_seconds,
            measured(self.probe_out_bits_per_second),
            measured(self.probe_back_bits_per_second),
            match self.probe_share_of_link_percent {
                Some(v) => share(v, "the link, the busier way"),
                None => share(self.probe_share_percent, "the load's rate"),
            },
            whole(self.rpm_idle),
            whole(self.rpm_loaded),
        )?;
        if let Some(c) = &self.probe_load_on_link {
            writeln!(
                out,
                "probes on the lab's link while idle, as the lab counted every frame: {} out ({:.2}% of the link), {} back ({:.2}%); estimated here {} and {}",
                self.rate_format.format(c.out_bits_per_second),
                c.out_share_percent,
                self.rate_format.format(c.back_bits_per_second),
                c.back_share_percent,
                self.rate_format.format(c.estimate_out_bits_per_second),
                self.rate_format.format(c.estimate_back_bits_per_second),
            )?;
        }
        Ok(())
    }
}

impl Render for RrResult {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        let s = &self.round_trip;
        writeln!(
            out,
            "{} {} B request / {} B response: {} transactions in {:.2} s = {:.0} per second",
            if self.new_connection {
                "TCP_CRR"
            } else {
                "TCP_RR"
            },
            self.request_bytes,
            self.response_bytes,
            self.transactions,
            self.seconds,
            self.transactions_per_second
        )?;
        writeln!(
            out,
            "round trip: min {}  p50 {}  p90 {}  p99 {}  max {}",
            time_ms(s.min_ms),
            time_ms(s.p50_ms),
            time_ms(s.p90_ms),
            time_ms(s.p99_ms),
            time_ms(s.max_ms)
        )?;
        if let Some(c) = &self.connect {
            writeln!(
                out,
                "connect:    min {}  p50 {}  p90 {}  p99 {}  max {}",
                time_ms(c.min_ms),
                time_ms(c.p50_ms),
                time_ms(c.p90_ms),
                time_ms(c.p99_ms),
                time_ms(c.max_ms)
            )?;
        }
        Ok(())
    }
}
