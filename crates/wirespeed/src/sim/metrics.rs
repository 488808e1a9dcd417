//! `sim csma` and `sim link --metrics-file`: each simulated point's figures, labelled by the
//! point (hosts and length mix) or the direction, never by its place in the grid.

use wirespeed_model::moments::Estimate;
use wirespeed_sim::link::EndCounters;

use crate::common::metrics::{Exposition, Metrics};
use crate::sim::SimReport;
use crate::sim::link::LinkReport;

impl Metrics for SimReport {
    fn metrics(&self, m: &mut Exposition) {
        for point in &self.points {
            let s = &point.summary;
            let hosts = s.hosts.to_string();
            let labels = [("hosts", hosts.as_str()), ("lengths", s.lengths.as_str())];
            let mut mean = |name: &str, help: &'static str, e: &Estimate| {
                m.gauge(name, help, &labels, e.mean);
            };
            mean(
                "throughput_bits_per_second",
                "delivered bits per second, mean over the replications",
                &s.bits_per_second,
            );
            mean(
                "packets_per_second",
                "delivered packets per second, mean over the replications",
                &s.packets_per_second,
            );
            mean(
                "delay_mean_seconds",
                "mean transmission delay from queueing to delivery",
                &s.delay_mean_seconds,
            );
            mean(
                "excess_delay_seconds",
                "mean delay beyond the ideal (contention and queueing)",
                &s.excess_delay_seconds,
            );
            mean(
                "utilization_ratio",
                "fraction of the medium's time carrying good frames",
                &s.utilization,
            );
            mean(
                "collisions_per_packet",
                "collisions per delivered packet",
                &s.collisions_per_packet,
            );
            mean(
                "jain_fairness_index",
                "Jain's fairness index of the hosts' throughputs (1 = equal shares)",
                &s.jain_fairness,
            );
            m.gauge(
                "throughput_ci_half_width_bits_per_second",
                "half the confidence interval's width of the throughput",
                &labels,
                s.bits_per_second.ci_half_width,
            );
            m.gauge(
                "dropped_packets",
                "packets dropped after too many collisions",
                &labels,
                s.dropped as f64,
            );
            m.gauge(
                "late_collisions",
                "collisions after the slot time",
                &labels,
                s.late_collisions as f64,
            );
            m.maybe(
                "metcalfe_boggs_efficiency_ratio",
                "the efficiency Metcalfe and Boggs' formula predicts for the point",
                &labels,
                point.metcalfe_boggs.as_ref().map(|t| t.efficiency),
            );
        }
        m.gauge(
            "events_per_second",
            "simulated events per wall-clock second (the simulator's speed)",
            &[],
            self.events_per_second,
        );
    }
}

fn end(m: &mut Exposition, labels: &[(&'static str, &str)], c: &EndCounters) {
    for (name, help, v) in [
        ("frames_sent", "frames the end transmitted", c.frames_sent),
        (
            "frames_received",
            "frames the end received whole",
            c.frames_received,
        ),
        (
            "collisions",
            "collisions the end saw while sending",
            c.collisions,
        ),
        (
            "late_collisions",
            "collisions after the slot time",
            c.late_collisions,
        ),
        (
            "fcs_errors",
            "frames received with a bad checksum",
            c.fcs_errors,
        ),
        ("runts", "fragments shorter than a minimum frame", c.runts),
    ] {
        m.gauge(name, help, labels, v as f64);
    }
}

impl Metrics for LinkReport {
    fn metrics(&self, m: &mut Exposition) {
        for d in &self.directions {
            let transfer = [("from", d.from), ("to", d.to)];
            m.gauge(
                "goodput_bits_per_second",
                "application bytes delivered per second, per transfer direction",
                &transfer,
                d.stats.goodput_bytes_per_second * 8.0,
            );
            m.gauge(
                "goodput_ratio",
                "goodput over the link rate, per transfer direction",
                &transfer,
                d.stats.goodput_fraction,
            );
            m.gauge(
                "retransmission_timeouts",
                "the transport's retransmission timeouts, per transfer direction",
                &transfer,
                d.stats.timeouts as f64,
            );
            for (role, counters) in [("sender", &d.stats.sender), ("receiver", &d.stats.receiver)] {
                end(
                    m,
                    &[("from", d.from), ("to", d.to), ("end", role)],
                    counters,
                );
            }
        }
    }
}
