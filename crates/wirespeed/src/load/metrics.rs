//! `load --metrics-file`: each test's aggregate figures, measured and as the model of a shared
//! 10 Mbit/s segment predicts them, labelled by the test's host count and length mix (`source`
//! tells measured from model), and each host's packets and loss.

use crate::common::metrics::{Exposition, Metrics};
use crate::load::{LoadResult, Stats};

fn stats(m: &mut Exposition, labels: &[(&'static str, &str)], s: &Stats) {
    m.gauge(
        "throughput_bits_per_second",
        "aggregate rate of the test's hosts",
        labels,
        s.bits_per_second,
    );
    m.gauge(
        "packets_per_second",
        "aggregate packets per second of the test's hosts",
        labels,
        s.packets_per_second,
    );
    m.gauge(
        "delay_mean_seconds",
        "mean transmission delay",
        labels,
        s.delay_mean_seconds,
    );
    m.maybe(
        "excess_delay_seconds",
        "mean delay beyond the ideal for the frame sizes",
        labels,
        s.excess_delay_seconds,
    );
    m.gauge(
        "jain_fairness_index",
        "Jain's fairness index of the hosts' rates (1 = equal shares)",
        labels,
        s.jain_fairness,
    );
}

impl Metrics for LoadResult {
    fn metrics(&self, m: &mut Exposition) {
        for row in &self.rows {
            let hosts = row.hosts.to_string();
            let test = [("hosts", hosts.as_str()), ("lengths", row.lengths.as_str())];
            for (source, s) in [
                ("measured", &row.measured),
                ("model_shared_10mbit", &row.model_shared_10mbit),
            ] {
                if let Some(s) = s {
                    stats(m, &[test[0], test[1], ("source", source)], s);
                }
            }
            m.gauge(
                "reporting_hosts",
                "hosts whose agent reported, per test",
                &test,
                row.reporting_hosts as f64,
            );
            m.maybe(
                "loss_at_sink_ratio",
                "packets lost on the way to the sink, fraction of those in the window",
                &test,
                row.loss_at_sink,
            );
            for h in &row.per_host {
                let host = h.host.to_string();
                let labels = [test[0], test[1], ("host", host.as_str())];
                m.maybe(
                    "host_packets",
                    "packets one host sent in the window",
                    &labels,
                    h.packets.map(|p| p as f64),
                );
                m.maybe(
                    "host_send_errors",
                    "send calls that failed at one host",
                    &labels,
                    h.send_errors.map(|p| p as f64),
                );
            }
        }
    }
}
