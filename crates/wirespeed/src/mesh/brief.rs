//! `mesh --brief`: the fleet's answer in one line: how many tests, and which hosts or pairs
//! are at fault with the figure that convicts each beside what it is held to.

use wirespeed_model::RateFormat;
use wirespeed_model::mesh::Finding;
use wirespeed_model::mesh::faults::{Fault, SlowDirection};
use wirespeed_model::units::format_seconds;

use super::{MeshResult, PairRecord};
use crate::common::brief::Headline;

impl Headline for MeshResult {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        let mut line = format!(
            "mesh: {} of {} tests between {} hosts",
            self.tests.len(),
            self.tests_planned,
            self.agents.len()
        );
        if self.tests_failed > 0 {
            line.push_str(&format!(" ({} failed)", self.tests_failed));
        }
        let faults: Vec<String> = self
            .faults
            .iter()
            .map(|f| self.fault_brief(f, format))
            .collect();
        match faults.len() {
            0 => {
                let rates: Vec<f64> = self.tests.iter().filter_map(PairRecord::rate).collect();
                line.push_str(", no fault");
                if let (Some(lo), Some(hi)) = (
                    rates.iter().copied().reduce(f64::min),
                    rates.iter().copied().reduce(f64::max),
                ) {
                    line.push_str(&format!(
                        " (rates {} to {})",
                        format.format(lo),
                        format.format(hi)
                    ));
                }
            }
            1 => line.push_str(&format!(", 1 fault: {}", faults[0])),
            n => line.push_str(&format!(", {n} faults: {}", faults.join("; "))),
        }
        vec![line]
    }
}

impl MeshResult {
    /// A fault as a few words and its figure against its yardstick; the verdict has the rest.
    fn fault_brief(&self, f: &Fault, format: RateFormat) -> String {
        match f {
            Fault::SlowHost {
                host,
                reach_bits_per_second,
                yardstick_bits_per_second,
                slow_link_bits_per_second,
                ..
            } => format!(
                "{} slow ({} against {}{})",
                self.name(*host),
                format.format(*reach_bits_per_second),
                format.format(*yardstick_bits_per_second),
                slow_link_bits_per_second.map_or(String::new(), |l| format!(
                    "; its link carries {}",
                    format.format(l)
                ))
            ),
            Fault::DuplexMismatch {
                host,
                slow,
                median_ratio,
                ..
            } => format!(
                "{} duplex mismatch ({} at {:.0}% of the other way)",
                self.name(*host),
                match slow {
                    SlowDirection::Sending => "sends",
                    SlowDirection::Receiving => "receives",
                },
                median_ratio * 100.0
            ),
            Fault::AsymmetricHost {
                host,
                slow,
                median_ratio,
                ..
            } => format!(
                "{} asymmetric, counters not readable ({} at {:.0}% of the other way)",
                self.name(*host),
                match slow {
                    SlowDirection::Sending => "sends",
                    SlowDirection::Receiving => "receives",
                },
                median_ratio * 100.0
            ),
            Fault::LossyHost {
                host,
                median_retransmit_share,
                ..
            } => format!(
                "{} loses frames (every test retransmitted, median {:.1}% of segments)",
                self.name(*host),
                median_retransmit_share * 100.0
            ),
            Fault::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
            } => format!(
                "pair {} -> {} slow ({} against {})",
                self.name(*source),
                self.name(*destination),
                format.format(*rate_bits_per_second),
                format.format(*expected_bits_per_second)
            ),
            Fault::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => self.asymmetric(
                (*fast_source, *fast_destination),
                (*fast_bits_per_second, *slow_bits_per_second),
                format,
            ),
            Fault::Latency { finding } => self.finding_brief(finding, format),
        }
    }

    fn asymmetric(
        &self,
        (fast_source, fast_destination): (usize, usize),
        (fast, slow): (f64, f64),
        format: RateFormat,
    ) -> String {
        format!(
            "{} -> {} asymmetric ({} that way, {} back)",
            self.name(fast_source),
            self.name(fast_destination),
            format.format(fast),
            format.format(slow)
        )
    }

    fn finding_brief(&self, f: &Finding, format: RateFormat) -> String {
        match *f {
            Finding::SlowHost {
                host,
                median_bits_per_second,
                fleet_bits_per_second,
                ..
            } => format!(
                "{} slow ({} against {})",
                self.name(host),
                format.format(median_bits_per_second),
                format.format(fleet_bits_per_second)
            ),
            Finding::BadPair {
                source,
                destination,
                rate_bits_per_second,
                expected_bits_per_second,
                ..
            } => format!(
                "pair {} -> {} slow ({} against {})",
                self.name(source),
                self.name(destination),
                format.format(rate_bits_per_second),
                format.format(expected_bits_per_second)
            ),
            Finding::AsymmetricPair {
                fast_source,
                fast_destination,
                fast_bits_per_second,
                slow_bits_per_second,
            } => self.asymmetric(
                (fast_source, fast_destination),
                (fast_bits_per_second, slow_bits_per_second),
                format,
            ),
            Finding::SlowLatencyHost {
                host,
                median_rtt_seconds,
                fleet_rtt_seconds,
            } => format!(
                "{} slow to answer (round trip {} against {})",
                self.name(host),
                format_seconds(median_rtt_seconds),
                format_seconds(fleet_rtt_seconds)
            ),
            Finding::HighLatencyPair {
                source,
                destination,
                rtt_seconds,
                expected_rtt_seconds,
            } => format!(
                "pair {} <-> {} high round trip ({} against {})",
                self.name(source),
                self.name(destination),
                format_seconds(rtt_seconds),
                format_seconds(expected_rtt_seconds)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(faults: Vec<Fault>, rates: &[f64]) -> MeshResult {
        let r: MeshResult = serde_json::from_value(serde_json::json!({
            "agents": [
                {"name": "h1", "address": "198.19.0.1:5210"},
                {"name": "h2", "address": "198.19.0.2:5210"},
                {"name": "h3", "address": "198.19.0.3:5210"}
            ],
            "tests_planned": 6, "tests_failed": 0, "slots": 3, "predicted_seconds": 3.0,
            "elapsed_seconds": 3.0, "rate_matrix_bits_per_second": [], "rtt_matrix_seconds": [],
            "pairs": [],
            "analysis": {"hosts": [], "findings": []},
            "tests": rates.iter().map(|r| serde_json::json!({
                "source": 0, "destination": 1, "slot": 0, "planned_start_seconds": 0.0,
                "planned_end_seconds": 1.0, "start_seconds": 0.0, "end_seconds": 1.0,
                "start_unix_seconds": 0.0, "end_unix_seconds": 1.0,
                "result": {"tcp_bits_per_second": r, "started_unix_seconds": 0.0,
                           "ended_unix_seconds": 1.0},
                "error": null
            })).collect::<Vec<_>>(),
            "results_file": null
        }))
        .unwrap();
        MeshResult { faults, ..r }
    }

    #[test]
    fn the_headline_names_each_fault_with_its_figure() {
        let slow = Fault::SlowHost {
            host: 2,
            reach_bits_per_second: 9.38e6,
            yardstick_bits_per_second: 92.7e6,
            slow_link_bits_per_second: None,
            tests: 4,
            steady: true,
        };
        let r = result(vec![slow.clone()], &[9.38e6, 92.7e6]);
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            [
                "mesh: 2 of 6 tests between 3 hosts, 1 fault: h3 slow (9.38 Mbit/s against 92.7 Mbit/s)"
            ]
        );
        let pair = Fault::BadPair {
            source: 0,
            destination: 1,
            rate_bits_per_second: 1e6,
            expected_bits_per_second: 9e6,
        };
        let r = result(vec![slow, pair], &[]);
        let line = &r.headline(RateFormat::Megabits)[0];
        assert!(
            line.ends_with("2 faults: h3 slow (9.38 Mbit/s against 92.7 Mbit/s); pair h1 -> h2 slow (1 Mbit/s against 9 Mbit/s)"),
            "{line}"
        );
    }

    #[test]
    fn a_clean_fleet_says_no_fault_and_its_range() {
        let r = result(Vec::new(), &[9.1e6, 9.4e6]);
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            ["mesh: 2 of 6 tests between 3 hosts, no fault (rates 9.1 Mbit/s to 9.4 Mbit/s)"]
        );
    }
}
