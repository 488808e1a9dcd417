//! `latency --metrics-file`: round trips idle and loaded per probe kind and quantile, the delay
//! the load added, responsiveness, and the load's own rate; `latency --rr`: transactions and
//! their round trips.

use crate::common::metrics::{Exposition, Metrics};
use crate::latency::{LatencyResult, LatencyStats, ProbeKind, RrResult};

#[doc(hidden)]
pub const MS: f64 = 1e-3;

#[doc(hidden)]
pub fn kind_name(kind: ProbeKind) -> &'static str {
    match kind {
        ProbeKind::UdpEcho => "udp_echo",
        ProbeKind::TcpConnect => "tcp_connect",
        ProbeKind::RrNewConnection => "rr_new_connection",
        ProbeKind::RrKeptConnection => "rr_kept_connection",
    }
}

/// The round trips of `stats` as a summary under `name`, over the answered probes.
fn quantiles(
    m: &mut Exposition,
    name: &str,
    help: &'static str,
    labels: &[(&'static str, &str)],
    stats: &LatencyStats,
) {
    let answered = stats.probes.saturating_sub(stats.lost);
    if answered == 0 {
        return; // No round trip came back: no quantile to state.
    }
    m.summary(
        name,
        help,
        labels,
        &[
            ("0", stats.min_ms * MS),
            ("0.5", stats.p50_ms * MS),
            ("0.9", stats.p90_ms * MS),
            ("0.99", stats.p99_ms * MS),
            ("1", stats.max_ms * MS),
        ],
        answered as u64,
    );
}

impl Metrics for LatencyResult {
    fn metrics(&self, m: &mut Exposition) {
        for k in &self.kinds {
            let kind = kind_name(k.kind);
            for (phase, stats) in [("idle", &k.idle), ("loaded", &k.loaded)] {
                let labels = [("kind", kind), ("phase", phase)];
                quantiles(
                    m,
                    "round_trip_seconds",
                    "round trips as the client's kernel stamped them, per probe kind, phase and quantile",
                    &labels,
                    stats,
                );
                m.gauge(
                    "probes",
                    "probes sent, per kind and phase",
                    &labels,
                    stats.probes as f64,
                );
                m.gauge(
                    "lost_probes",
                    "probes without an answer, per kind and phase",
                    &labels,
                    stats.lost as f64,
                );
            }
            m.gauge(
                "added_delay_seconds",
                "loaded minus idle median round trip: the delay the load added, per kind",
                &[("kind", kind)],
                k.increase_p50_ms * MS,
            );
            if let Some(n) = &k.network_round_trip {
                for (phase, stats) in [("idle", &n.idle), ("loaded", &n.loaded)] {
                    quantiles(
                        m,
                        "network_round_trip_seconds",
                        "round trips less the agent's residence time, per kind, phase and quantile",
                        &[("kind", kind), ("phase", phase)],
                        stats,
                    );
                }
            }
        }
        for (phase, rpm) in [("idle", self.rpm_idle), ("loaded", self.rpm_loaded)] {
            m.gauge(
                "responsiveness_round_trips_per_minute",
                "round trips per minute (RPM, the responsiveness draft), per phase",
                &[("phase", phase)],
                rpm,
            );
        }
        for (direction, v) in [
            ("upload", self.upload_bits_per_second),
            ("download", self.download_bits_per_second),
        ] {
            m.maybe(
                "load_bits_per_second",
                "the load's goodput over the loaded window, per direction",
                &[("direction", direction)],
                v,
            );
        }
        m.gauge(
            "probe_load_bits_per_second",
            "the probes' own load on the wire during the loaded phase, both ways",
            &[],
            self.probe_bits_per_second,
        );
        m.flag(
            "partial",
            "1 when the test did not run whole",
            &[],
            self.partial,
        );
    }
}

impl Metrics for RrResult {
    fn metrics(&self, m: &mut Exposition) {
        m.gauge(
            "transactions",
            "request/response transactions completed",
            &[],
            self.transactions as f64,
        );
        m.gauge(
            "transactions_per_second",
            "transactions completed per second",
            &[],
            self.transactions_per_second,
        );
        quantiles(
            m,
            "round_trip_seconds",
            "from the request's first byte to the response's last, per quantile",
            &[],
            &self.round_trip,
        );
        if let Some(c) = &self.connect {
            quantiles(
                m,
                "connect_seconds",
                "the TCP handshake of each new connection, per quantile",
                &[],
                c,
            );
        }
        m.maybe(
            "agent_transactions",
            "transactions the agent counted",
            &[],
            self.agent_transactions.map(|t| t as f64),
        );
        m.flag(
            "partial",
            "1 when the test did not run whole",
            &[],
            self.partial,
        );
    }
}
