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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::{KindReport, LatencyStats};

    fn stats(p50_ms: f64) -> LatencyStats {
        LatencyStats {
            probes: 100,
            p50_ms,
            ..LatencyStats::default()
        }
    }

    #[test]
    fn the_headline_is_the_delay_the_load_added() {
        let r: LatencyResult = serde_json::from_value(serde_json::json!({
            "idle_seconds": 2.0, "loaded_seconds": 4.0, "settle_seconds": 1.0,
            "kinds": [], "rpm_idle": 60000.0, "rpm_loaded": 5003.4,
            "upload_bits_per_second": 9.4e6, "download_bits_per_second": null,
            "probe_bits_per_second": 0.0, "probe_share_percent": 0.0,
            "link_rate": {"source": "unknown", "reason": "loopback"}, "queue": null,
            "intervals": [], "samples": [], "partial": false, "partial_reason": null
        }))
        .unwrap();
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            ["latency: no probe answered"]
        );
        let r = LatencyResult {
            kinds: vec![KindReport {
                kind: ProbeKind::UdpEcho,
                idle: stats(0.05),
                loaded: stats(11.66),
                increase_p50_ms: 11.6,
                network_round_trip: None,
            }],
            ..r
        };
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            [
                "latency: udp echo median 0.050 ms idle, 11.7 ms loaded (+11.6 ms); 5003 RPM loaded; load 9.4 Mbit/s up"
            ]
        );
    }

    #[test]
    fn rr_headline_is_transactions_and_their_round_trip() {
        let r = RrResult {
            request_bytes: 1,
            response_bytes: 1,
            new_connection: true,
            transactions: 1000,
            seconds: 1.0,
            transactions_per_second: 1000.4,
            round_trip: stats(0.9),
            connect: Some(stats(0.1)),
            agent_transactions: None,
            partial: false,
        };
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            [
                "latency --rr: 1000 transactions/s (a new connection each), median round trip 0.900 ms, handshake 0.100 ms"
            ]
        );
    }
}
