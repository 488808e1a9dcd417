//! The schema of `wirespeed load` (`wirespeed.load.v1`) and of its results file
//! (`wirespeed.load-runs.v1`): the plan that fixes a series, each finished test as the file
//! keeps it, and the rows of the seed's seven statistics. A length mix is kept as the text
//! `--lengths` reads ("64", "6/2", "64:6+1536:2"), so that a reader can see it and every file
//! written so far still resumes; in memory it is a [`LengthMix`], so a resumed series matches
//! its finished tests to the plan by value. It imports nothing of its siblings.

use anyhow::bail;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use wirespeed_model::RateFormat;
use wirespeed_model::load::{ClockEstimate, DelaySource, Schedule};
use wirespeed_net::load::{LoadReport, RawEthernet};
use wirespeed_sim::LengthMix;

use crate::common::flags::parse_lengths;
use crate::common::runs_file::RunsPlan;

/// The schema of the results file's first line.
#[doc(hidden)]
pub const RUNS_SCHEMA: &str = "wirespeed.load-runs.v1";

/// Everything that fixes a series: the results file's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPlan {
    pub schema: String,
    /// The agents' addresses, or `loopback` for in-process ones.
    pub agents: Vec<String>,
    pub hosts: Vec<usize>,
    /// Each length mix (written in `--lengths` syntax).
    pub lengths: Vec<Lengths>,
    pub schedule: Schedule,
    pub rate_bits_per_second: Option<f64>,
    /// Host number (1-based) of the counting sink; `None`: each host's own.
    pub sink_host: Option<usize>,
    pub seed: u64,
    /// Raw Ethernet frames instead of UDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawEthernet>,
    /// The IP TOS byte of every datagram (`-S`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
}

/// One agent in one test, as the results file keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRecord {
    pub agent: String,
    pub clock: Option<ClockEstimate>,
    pub report: Option<LoadReport>,
    pub error: Option<String>,
}

/// One finished test: a line of the results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestRecord {
    pub hosts: usize,
    /// The length mix (written in `--lengths` syntax).
    pub lengths: Lengths,
    pub complete: bool,
    pub agents: Vec<HostRecord>,
}

/// A length mix in the syntax `--lengths` reads back.
#[doc(hidden)]
pub fn mix_spec(mix: &LengthMix) -> String {
    match mix {
        LengthMix::Weighted { lengths } => lengths
            .iter()
            .map(|(b, w)| format!("{b}:{w}"))
            .collect::<Vec<_>>()
            .join("+"),
        other => other.to_string(),
    }
}

#[doc(hidden)]
pub fn parse_mix(spec: &str) -> anyhow::Result<LengthMix> {
    let list = parse_lengths(spec).map_err(anyhow::Error::msg)?;
    match list.0.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!("{spec:?} is not one length mix"),
    }
}

impl RunsPlan for LoadPlan {
    const SCHEMA: &'static str = RUNS_SCHEMA;
    fn schema(&self) -> &str {
        &self.schema
    }
}

/// A length mix as a load plan and its records hold it; (de)serialized as `--lengths` text.
#[derive(Debug, Clone, PartialEq)]
pub struct Lengths(pub LengthMix);

impl From<LengthMix> for Lengths {
    fn from(mix: LengthMix) -> Lengths {
        Lengths(mix)
    }
}

impl std::fmt::Display for Lengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&mix_spec(&self.0))
    }
}

impl Serialize for Lengths {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&mix_spec(&self.0))
    }
}

impl<'de> Deserialize<'de> for Lengths {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lengths, D::Error> {
        // A results file is read before anything else is checked: the text is parsed by the
        // same bounded parser as `--lengths`, and one that is not a single mix is refused.
        let text = String::deserialize(d)?;
        parse_mix(&text)
            .map(Lengths)
            .map_err(|e| serde::de::Error::custom(format!("lengths {text:?}: {e:#}")))
    }
}

/// The seven statistics and what goes with them, for the measured hosts or the model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stats {
    pub bits_per_second: f64,
    pub bits_per_second_std_dev: f64,
    pub packets_per_second: f64,
    pub packets_per_second_std_dev: f64,
    pub delay_mean_seconds: f64,
    pub delay_std_dev_seconds: f64,
    pub ideal_delay_seconds: Option<f64>,
    pub excess_delay_seconds: Option<f64>,
    pub jain_fairness: f64,
    pub per_host_bits_per_second: Vec<f64>,
}

/// One host's part of a test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRow {
    pub host: usize,
    pub agent: String,
    pub packets: Option<u64>,
    pub send_errors: Option<u64>,
    /// Lost on the way to the sink, fraction of the in-window packets.
    pub loss_at_sink: Option<f64>,
    pub clock_offset_seconds: Option<f64>,
    pub control_rtt_seconds: Option<f64>,
    pub start_lateness_seconds: Option<f64>,
    /// The measured window's time whose frames this host's paced generator never offered
    /// (descheduled past its 10 ms catch-up), seconds, and that as a share of the window.
    pub skipped_in_window_seconds: Option<f64>,
    pub skipped_share_of_window: Option<f64>,
    /// Where this host's delays came from (hardware or software stamps, or the send call).
    pub delay_source: Option<DelaySource>,
    /// Why that source: the interface's stamping capability (raw tests).
    pub timestamping: Option<String>,
    pub error: Option<String>,
}

/// One test: measured, and the model of a shared 10 Mbit/s segment for the same parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub lengths: String,
    pub hosts: usize,
    pub reporting_hosts: usize,
    pub complete: bool,
    pub measured: Option<Stats>,
    pub delay_source: Option<DelaySource>,
    /// Loss at the counting sink over every reporting host.
    pub loss_at_sink: Option<f64>,
    /// The simulator's seed-000 long net (3000 ft, 4 clusters, 10 Mbit/s, Titan hosts): a
    /// shared segment, which loopback is not.
    pub model_shared_10mbit: Option<Stats>,
    pub per_host: Vec<HostRow>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LoadResult {
    pub results_file: Option<String>,
    pub rows: Vec<Row>,
    #[serde(skip)]
    pub rate_format: RateFormat,
}
