//! The statistics of seed 000 §3.3, computed the way the seed computed them, plus fairness,
//! utilisation and confidence intervals over replications.
//!
//! Each generator host counted, during the middle of the test, the bits and packets it sent
//! successfully and the sum and sum of squares of the transmission delays. From those:
//!
//! 1. bit rate: useful bits per second summed over the network, each packet charged 24 byte
//!    times of overhead (so back-to-back packets make exactly 10.0 Mbit/s);
//! 2. the standard deviation of the per-host bit rates (unfairness);
//! 3. packet rate, summed over the network;
//! 4. the standard deviation of the per-host packet rates;
//! 5. mean transmission delay, first attempt to the end of the successful transmission;
//! 6. the standard deviation of the per-packet delays;
//! 7. excess delay: the mean delay less the collision-free ideal.
//!
//! Jain's index of the per-host bit rates, the utilisation (bit rate over the link rate) and
//! collisions per packet are added. A point of a sweep is run several times with independent
//! seeds; each statistic is then the mean over the replications with a 95% Student-t interval.

use serde::Serialize;
use wirespeed_model::sample_stats::{Estimate, Moments, jain_fairness, mean, std_dev};

use crate::network::Scenario;
use crate::time::SimSpan;

/// What one host counted in the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HostCounters {
    /// Packets sent successfully.
    pub packets: u64,
    /// Bits charged for them: `(length + 24) * 8` each.
    pub charged_bits: u64,
    /// Transmission delays of the packets sent, seconds.
    pub delay: Moments,
    /// Collisions of frames finished in the window.
    pub collisions: u64,
    /// Of which late.
    pub late_collisions: u64,
    /// Frames dropped after 16 attempts.
    pub dropped: u64,
    /// Packets offered by the generator (offered-load mode).
    pub generated: u64,
    /// Packets the generator discarded for want of a buffer (offered-load mode).
    pub discarded: u64,
}

/// The statistics of one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunStats {
    /// Transmitting hosts.
    pub hosts: usize,
    /// Seconds measured.
    pub measured_seconds: f64,
    /// (1) Bit rate of the whole network, 24 byte times charged per packet.
    pub bits_per_second: f64,
    /// (2) Standard deviation of the per-host bit rates.
    pub bits_per_second_std_dev: f64,
    /// (3) Packets per second, whole network.
    pub packets_per_second: f64,
    /// (4) Standard deviation of the per-host packet rates.
    pub packets_per_second_std_dev: f64,
    /// (5) Mean transmission delay, seconds.
    pub delay_mean_seconds: f64,
    /// (6) Standard deviation of the per-packet delays, seconds.
    pub delay_std_dev_seconds: f64,
    /// The collision-free delay it is compared with, seconds.
    pub ideal_delay_seconds: f64,
    /// (7) Mean delay less the ideal, seconds.
    pub excess_delay_seconds: f64,
    /// Jain's fairness index of the per-host bit rates.
    pub jain_fairness: f64,
    /// Bit rate over the link rate.
    pub utilization: f64,
    /// Collisions per packet sent.
    pub collisions_per_packet: f64,
    /// Collisions in the window.
    pub collisions: u64,
    /// Late collisions in the window.
    pub late_collisions: u64,
    /// Frames dropped after the attempt limit.
    pub dropped: u64,
    /// Packets the generators discarded for want of a buffer (offered load only).
    pub discarded: u64,
    /// Bit rate of each host.
    pub per_host_bits_per_second: Vec<f64>,
    /// Simulation events handled (warm-up included).
    pub events: u64,
    /// Longest one-way propagation between two stations, seconds.
    pub max_propagation_seconds: f64,
}

impl RunStats {
    /// The seed's statistics from the hosts' counters.
    pub fn from_counters(
        scenario: &Scenario,
        counters: &[HostCounters],
        events: u64,
        max_propagation: SimSpan,
    ) -> RunStats {
        let seconds = scenario.measure_ns as f64 * 1e-9;
        let bit_rates: Vec<f64> = counters
            .iter()
            .map(|c| c.charged_bits as f64 / seconds)
            .collect();
        let packet_rates: Vec<f64> = counters
            .iter()
            .map(|c| c.packets as f64 / seconds)
            .collect();
        let mut delay = Moments::default();
        for c in counters {
            delay.merge(&c.delay);
        }
        let sum = |f: fn(&HostCounters) -> u64| counters.iter().map(f).sum::<u64>();
        let packets = sum(|c| c.packets);
        let collisions = sum(|c| c.collisions);
        let bits_per_second: f64 = bit_rates.iter().sum();
        let ideal = scenario.ideal_delay_seconds();
        RunStats {
            hosts: counters.len(),
            measured_seconds: seconds,
            bits_per_second,
            bits_per_second_std_dev: std_dev(&bit_rates),
            packets_per_second: packet_rates.iter().sum(),
            packets_per_second_std_dev: std_dev(&packet_rates),
            delay_mean_seconds: delay.mean(),
            delay_std_dev_seconds: delay.std_dev(),
            ideal_delay_seconds: ideal,
            excess_delay_seconds: delay.mean() - ideal,
            jain_fairness: jain_fairness(&bit_rates),
            utilization: bits_per_second / scenario.mac.bits_per_second as f64,
            collisions_per_packet: if packets == 0 {
                f64::NAN
            } else {
                collisions as f64 / packets as f64
            },
            collisions,
            late_collisions: sum(|c| c.late_collisions),
            dropped: sum(|c| c.dropped),
            discarded: sum(|c| c.discarded),
            per_host_bits_per_second: bit_rates,
            events,
            max_propagation_seconds: max_propagation.seconds(),
        }
    }
}

/// One point of a sweep (a length mix and a host count), over its replications.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PointSummary {
    /// The length mix, as labelled in the seed's figures (`64`, `6/2`).
    pub lengths: String,
    /// Transmitting hosts.
    pub hosts: usize,
    /// Independent runs behind the figures.
    pub replications: usize,
    /// (1) Bit rate, bits per second.
    pub bits_per_second: Estimate,
    /// (2) Standard deviation of per-host bit rates.
    pub bits_per_second_std_dev: Estimate,
    /// (3) Packet rate, packets per second.
    pub packets_per_second: Estimate,
    /// (4) Standard deviation of per-host packet rates.
    pub packets_per_second_std_dev: Estimate,
    /// (5) Mean delay, seconds.
    pub delay_mean_seconds: Estimate,
    /// (6) Standard deviation of delay, seconds.
    pub delay_std_dev_seconds: Estimate,
    /// The collision-free ideal delay, seconds.
    #[serde(deserialize_with = "wirespeed_model::sample_stats::null_as_nan")]
    pub ideal_delay_seconds: f64,
    /// (7) Excess delay, seconds.
    pub excess_delay_seconds: Estimate,
    /// Jain's fairness index.
    pub jain_fairness: Estimate,
    /// Utilisation of the link.
    pub utilization: Estimate,
    /// Collisions per packet.
    pub collisions_per_packet: Estimate,
    /// Late collisions, summed over replications.
    pub late_collisions: u64,
    /// Frames dropped, summed over replications.
    pub dropped: u64,
    /// Generator discards, summed over replications.
    pub discarded: u64,
    /// Events handled, summed over replications.
    pub events: u64,
}

impl PointSummary {
    /// Summarises the replications of one point.
    pub fn new(lengths: String, runs: &[RunStats]) -> PointSummary {
        let est = |f: fn(&RunStats) -> f64| {
            let xs: Vec<f64> = runs.iter().map(f).collect();
            Estimate::from_samples_95(&xs)
        };
        let total = |f: fn(&RunStats) -> u64| runs.iter().map(f).sum::<u64>();
        PointSummary {
            lengths,
            hosts: runs.first().map_or(0, |r| r.hosts),
            replications: runs.len(),
            bits_per_second: est(|r| r.bits_per_second),
            bits_per_second_std_dev: est(|r| r.bits_per_second_std_dev),
            packets_per_second: est(|r| r.packets_per_second),
            packets_per_second_std_dev: est(|r| r.packets_per_second_std_dev),
            delay_mean_seconds: est(|r| r.delay_mean_seconds),
            delay_std_dev_seconds: est(|r| r.delay_std_dev_seconds),
            ideal_delay_seconds: mean(
                &runs
                    .iter()
                    .map(|r| r.ideal_delay_seconds)
                    .collect::<Vec<_>>(),
            ),
            excess_delay_seconds: est(|r| r.excess_delay_seconds),
            jain_fairness: est(|r| r.jain_fairness),
            utilization: est(|r| r.utilization),
            collisions_per_packet: est(|r| r.collisions_per_packet),
            late_collisions: total(|r| r.late_collisions),
            dropped: total(|r| r.dropped),
            discarded: total(|r| r.discarded),
            events: total(|r| r.events),
        }
    }
}
