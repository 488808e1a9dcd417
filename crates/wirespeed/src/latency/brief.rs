//! `latency --brief`: the delay the load added, in one line; `--rr --brief`: transactions per
//! second and their round trip.

use wirespeed_model::RateFormat;

use super::{LatencyResult, ProbeKind, RrResult};
use crate::common::brief::{Headline, ms};

impl Headline for LatencyResult {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        // The UDP echo is the kind the draft's responsiveness and the verdicts are led by.
        let Some(k) = self
            .kinds
            .iter()
            .find(|k| k.kind == ProbeKind::UdpEcho)
            .or_else(|| self.kinds.first())
        else {
            return vec!["latency: no probe answered".into()];
        };
        let kind = match k.kind {
            ProbeKind::UdpEcho => "udp echo",
            ProbeKind::TcpConnect => "tcp connect",
            ProbeKind::RrNewConnection => "request/response, new connection",
            ProbeKind::RrKeptConnection => "request/response",
        };
        let mut line = format!(
            "latency: {kind} median {} idle, {} loaded ({}{}); {:.0} RPM loaded",
            ms(k.idle.p50_ms),
            ms(k.loaded.p50_ms),
            if k.increase_p50_ms >= 0.0 { "+" } else { "" },
            ms(k.increase_p50_ms),
            self.rpm_loaded
        );
        let load: Vec<String> = [
            (self.upload_bits_per_second, "up"),
            (self.download_bits_per_second, "down"),
        ]
        .into_iter()
        .filter_map(|(rate, way)| rate.map(|r| format!("{} {way}", format.format(r))))
        .collect();
        if !load.is_empty() {
            line.push_str(&format!("; load {}", load.join(", ")));
        }
        if let Some(why) = &self.partial_reason {
            line.push_str(&format!(" (partial: {why})"));
        }
        vec![line]
    }
}

impl Headline for RrResult {
    fn headline(&self, _format: RateFormat) -> Vec<String> {
        let mut line = format!(
            "latency --rr: {:.0} transactions/s{}, median round trip {}",
            self.transactions_per_second,
            if self.new_connection {
                " (a new connection each)"
            } else {
                ""
            },
            ms(self.round_trip.p50_ms)
        );
        if let Some(c) = &self.connect {
            line.push_str(&format!(", handshake {}", ms(c.p50_ms)));
        }
        if self.partial {
            line.push_str(" (partial)");
        }
        vec![line]
    }
}
