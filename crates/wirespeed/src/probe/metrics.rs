//! `probe --metrics-file`: each hop's best-case round trips and fitted line, labelled by the
//! hop's TTL and responder, in seconds (the seed's tables speak milliseconds).

use crate::common::metrics::{Exposition, Metrics};
use crate::probe::ProbeReport;

const MS: f64 = 1e-3;

impl Metrics for ProbeReport {
    fn metrics(&self, m: &mut Exposition) {
        for hop in &self.hops {
            let a = &hop.analysis;
            let ttl = a.ttl.to_string();
            let responder = hop
                .responder
                .map_or_else(|| "*".to_string(), |r| r.to_string());
            let labels = [("ttl", ttl.as_str()), ("responder", responder.as_str())];
            m.gauge(
                "loss_ratio",
                "probes without an answer, fraction of those sent to the hop",
                &labels,
                a.loss_fraction,
            );
            for size in &a.sizes {
                if size.sent > size.lost {
                    let bytes = size.sent_bytes.to_string();
                    m.gauge(
                        "min_round_trip_seconds",
                        "the smallest round trip of the hop's probes of one size (the best case)",
                        &[labels[0], labels[1], ("size_bytes", bytes.as_str())],
                        size.min_rtt_ms * MS,
                    );
                }
            }
            if let Some(fit) = &a.fit {
                m.gauge(
                    "one_way_fixed_delay_seconds",
                    "the fitted line's size-independent one-way delay to the hop",
                    &labels,
                    fit.one_way.fixed_ms * MS,
                );
                m.gauge(
                    "one_way_delay_seconds_per_byte",
                    "the fitted line's one-way delay per byte to the hop",
                    &labels,
                    fit.one_way.per_byte_ms * MS,
                );
                m.gauge(
                    "fit_r_squared",
                    "how much of the round trips' spread the line explains",
                    &labels,
                    fit.r_squared,
                );
            }
            if let Some(inc) = &a.increment {
                m.maybe(
                    "implied_link_rate_bits_per_second",
                    "the hop's own per-byte cost read as a serialization rate",
                    &labels,
                    inc.implied_bits_per_second,
                );
            }
        }
        m.gauge("answers", "probes answered", &[], self.answers as f64);
        m.maybe(
            "path_mtu_bytes",
            "the path MTU the kernel found",
            &[],
            self.path_mtu_bytes.map(|b| b as f64),
        );
        m.gauge(
            "elapsed_seconds",
            "how long the probing took",
            &[],
            self.elapsed_seconds,
        );
    }
}
