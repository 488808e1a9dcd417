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
//!
//! One run also carries its own sampling error ([`Batches`]): the window cut into equal
//! batches, each with every host's counters. A statistic of the whole window (a rate, a mean
//! delay, a ratio of spreads) is recomputed with each batch left out in turn, and the spread
//! of those values (the jackknife; for a plain rate it is exactly the classical batch-means
//! standard error) gives a 95% Student-t interval with one degree of freedom fewer than the
//! batches. It is what a run of that length can say: a 0.2 s window of 24 hosts sending
//! 1536-byte packets holds a few hundred packets whose delays have a tail of hundreds of
//! milliseconds, and its mean delay is judged with the interval that implies, not as if it
//! were the seed's 10 s (Law and Kelton, *Simulation Modeling and Analysis*, §9.5.3 batch
//! means; Efron and Stein 1981 for the jackknife's variance).

use serde::Serialize;
use wirespeed_model::moments::{Estimate, Moments, jain_fairness, mean, std_dev, student_t_975};

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

impl HostCounters {
    /// Adds another window's counts (the same host, a neighbouring window).
    pub fn merge(&mut self, other: &HostCounters) {
        self.packets += other.packets;
        self.charged_bits += other.charged_bits;
        self.delay.merge(&other.delay);
        self.collisions += other.collisions;
        self.late_collisions += other.late_collisions;
        self.dropped += other.dropped;
        self.generated += other.generated;
        self.discarded += other.discarded;
    }
}

/// The measurement window of one run cut into equal batches, each with every host's counters
/// (what [`crate::network::run_batched`] returns beside the run's figures).
#[derive(Debug, Clone, PartialEq)]
pub struct Batches {
    /// Length of one batch, seconds.
    pub batch_seconds: f64,
    /// The medium's bit rate, bits per second (for utilisation).
    pub link_bits_per_second: f64,
    /// `counters[batch][host]`: what each host counted in each batch (a packet belongs to the
    /// batch in which its transmission ended, as the window counts it).
    pub counters: Vec<Vec<HostCounters>>,
}

/// A figure of one run with the 95% half-width of its sampling error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sampled {
    /// The figure over the whole window.
    pub value: f64,
    /// Half-width of its 95% interval from the batches (jackknife, Student-t with
    /// batches - 1 degrees of freedom); NaN if a batch left out leaves nothing to compute.
    pub half_width_95: f64,
    /// Batches behind the interval.
    pub batches: usize,
}

impl Batches {
    /// Every host's counters pooled over the batches, leaving out batch `skip` if given.
    pub fn pooled(&self, skip: Option<usize>) -> Vec<HostCounters> {
        let hosts = self.counters.first().map_or(0, Vec::len);
        let mut out = vec![HostCounters::default(); hosts];
        for (b, batch) in self.counters.iter().enumerate() {
            if Some(b) == skip {
                continue;
            }
            for (o, c) in out.iter_mut().zip(batch) {
                o.merge(c);
            }
        }
        out
    }

    /// `stat(counters, seconds)` over the whole window, with its jackknife 95% half-width:
    /// `t(B-1) * sqrt((B-1)/B * sum (theta_i - mean theta_i)^2)`, theta_i the statistic with
    /// batch i left out.
    pub fn jackknife_95(&self, stat: impl Fn(&[HostCounters], f64) -> f64) -> Sampled {
        let b = self.counters.len();
        let whole = stat(&self.pooled(None), self.batch_seconds * b as f64);
        if b < 2 {
            return Sampled {
                value: whole,
                half_width_95: f64::NAN,
                batches: b,
            };
        }
        let seconds = self.batch_seconds * (b - 1) as f64;
        let leave_out: Vec<f64> = (0..b)
            .map(|i| stat(&self.pooled(Some(i)), seconds))
            .collect();
        let m = mean(&leave_out);
        let ss: f64 = leave_out.iter().map(|x| (x - m) * (x - m)).sum();
        let se = ((b - 1) as f64 / b as f64 * ss).sqrt();
        Sampled {
            value: whole,
            half_width_95: student_t_975(b - 1) * se,
            batches: b,
        }
    }

    /// Utilisation: charged bits over the window's capacity.
    pub fn utilization(&self) -> Sampled {
        let link = self.link_bits_per_second;
        self.jackknife_95(|c, s| c.iter().map(|h| h.charged_bits as f64).sum::<f64>() / s / link)
    }

    /// Mean transmission delay, seconds.
    pub fn delay_mean_seconds(&self) -> Sampled {
        self.jackknife_95(|c, _| pooled_delay(c).mean())
    }

    /// Standard deviation of the delay over its mean (seed 000 figure 3-8).
    pub fn delay_sd_over_mean(&self) -> Sampled {
        self.jackknife_95(|c, _| {
            let d = pooled_delay(c);
            d.std_dev() / d.mean()
        })
    }

    /// Standard deviation of the per-host bit rates over their mean (seed 000 figure 3-4).
    pub fn per_host_rate_spread(&self) -> Sampled {
        self.jackknife_95(|c, s| {
            let rates: Vec<f64> = c.iter().map(|h| h.charged_bits as f64 / s).collect();
            std_dev(&rates) / mean(&rates)
        })
    }
}

fn pooled_delay(c: &[HostCounters]) -> Moments {
    let mut d = Moments::default();
    for h in c {
        d.merge(&h.delay);
    }
    d
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
    #[serde(deserialize_with = "wirespeed_model::moments::null_as_nan")]
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
