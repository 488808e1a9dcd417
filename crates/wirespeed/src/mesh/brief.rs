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
