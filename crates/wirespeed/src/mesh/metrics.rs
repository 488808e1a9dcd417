//! `mesh --metrics-file`: every ordered pair's rate and round trip labelled by the agents'
//! names (`{source="h1",destination="h2"}`), each host's reach, and the run's counts.

use crate::common::metrics::{Exposition, Metrics};
use crate::mesh::MeshResult;

impl Metrics for MeshResult {
    fn metrics(&self, m: &mut Exposition) {
        let name = |i: usize| self.agents.get(i).map_or("?", |a| a.name.as_str());
        for (matrix, metric, help) in [
            (
                &self.rate_matrix_bits_per_second,
                "rate_bits_per_second",
                "the TCP test's received rate from source to destination",
            ),
            (
                &self.rtt_matrix_seconds,
                "round_trip_seconds",
                "the probes' best round trip from source to destination",
            ),
        ] {
            for (s, row) in matrix.iter().enumerate() {
                for (d, v) in row.iter().enumerate() {
                    if s != d {
                        m.maybe(
                            metric,
                            help,
                            &[("source", name(s)), ("destination", name(d))],
                            *v,
                        );
                    }
                }
            }
        }
        for (i, reach) in self.reach_bits_per_second.iter().enumerate() {
            m.maybe(
                "reach_bits_per_second",
                "each host's best test",
                &[("host", name(i))],
                *reach,
            );
        }
        m.maybe(
            "yardstick_bits_per_second",
            "the upper quartile of the hosts' reaches, the fleet's yardstick",
            &[],
            self.yardstick_bits_per_second,
        );
        m.gauge(
            "tests_planned",
            "tests planned (N(N-1))",
            &[],
            self.tests_planned as f64,
        );
        m.gauge(
            "tests_failed",
            "tests that finished without figures",
            &[],
            self.tests_failed as f64,
        );
        m.gauge(
            "faults",
            "faults the fleet's judgement found",
            &[],
            self.faults.len() as f64,
        );
        m.gauge(
            "elapsed_seconds",
            "how long the run took",
            &[],
            self.elapsed_seconds,
        );
        m.gauge(
            "predicted_seconds",
            "how long the schedule says the run takes",
            &[],
            self.predicted_seconds,
        );
    }
}
