//! The schema of `wirespeed tcp` and `wirespeed udp` (`wirespeed.tcp.v1`, `wirespeed.udp.v1`):
//! what was asked and what was measured, in iperf3's layout, with the link rate the verdicts
//! compare with and what an iperf3 server said. It imports nothing of its siblings, so that a
//! reader of saved documents (`report`, `reproduce`) needs nothing that measures or prints.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use wirespeed_lab::inside::RoutePair;
use wirespeed_model::{LinkLayer, RateFormat, resample};
use wirespeed_net::TestSpec;
use wirespeed_net::env::Environment;
use wirespeed_net::iperf3::Results;
use wirespeed_net::report::Interval;
use wirespeed_net::summary::End;

/// What was asked, as the JSON `parameters`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Parameters {
    pub(crate) agent: String,
    pub(crate) in_process_agent: bool,
    pub test: TestSpec,
    /// `-i`; zero for none. Seconds in the document.
    #[serde(rename = "interval_seconds", with = "wirespeed_net::spec::seconds")]
    pub(crate) interval: Duration,
    pub(crate) link_rate_bits_per_second: Option<u64>,
    pub(crate) client_cpu: Option<usize>,
    /// `-T`: the run's label (iperf3's `title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
}

/// The result in iperf3's layout.
#[derive(Debug, Serialize, Deserialize)]
pub struct ThroughputResult {
    pub start: Start,
    pub intervals: Vec<Interval>,
    /// The agent's own totals on the same ticks (`sum_sent` = what the agent sent), so that a
    /// rate the two ends disagree on in one interval shows where the bytes waited.
    // Fields added after the first documents were written read as absent from those.
    #[serde(default)]
    pub agent_intervals: Vec<Interval>,
    pub end: End,
    #[serde(default)]
    pub error: Option<String>,
    /// True when the test did not run whole (interrupted, a stream failed, the agent's view is
    /// missing): its figures are what was counted before that, and no verdict is given.
    #[serde(default)]
    pub partial: bool,
    /// Why it is partial.
    #[serde(default)]
    pub partial_reason: Option<String>,
    /// The link rate the verdict compares with, and where it comes from.
    #[serde(default)]
    pub link_rate: LinkRate,
    /// `--repeat`: the received rate (bit/s) of every run, summarised.
    #[serde(default)]
    pub repeat: Option<resample::Summary>,
    /// How long the test waited for another to end on a `serve --exclusive` agent.
    #[serde(default)]
    pub queued_seconds: f64,
    /// `--iperf3`: the iperf3 server's own results and what it cannot report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iperf3: Option<Iperf3Peer>,
    #[serde(skip)]
    pub rate_format: RateFormat,
    #[serde(skip)]
    pub spec: TestSpec,
}

#[derive(Debug, Serialize, Deserialize)]
#[doc(hidden)]
pub struct Start {
    pub local: String,
    pub agent: String,
    pub in_process_agent: bool,
    pub agent_software: Option<String>,
    pub client_environment: Option<Environment>,
    pub agent_environment: Option<Environment>,
    pub timestamp_source: String,
}

/// Where the verdict's link rate comes from. An interface's own speed is believed only for a
/// NIC with a physical layer (`iface::Reader::trusted_speed`); inside a wirespeed lab the lab's
/// configuration is the truth (`wirespeed_lab::inside`): the whole route to the agent and back
/// when the lab records it, else the link the test leaves by.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum LinkRate {
    /// `--link-rate`.
    Given { bits_per_second: u64 },
    /// The configuration of the wirespeed lab this end runs in.
    Lab {
        /// Frames leaving by the interface.
        bits_per_second: u64,
        /// Frames arriving by it.
        receive_bits_per_second: u64,
        lab: String,
        link: String,
        interface: String,
        layer: LinkLayer,
        mtu: u32,
        half_duplex: bool,
        /// The whole route both ways as the lab configured it: its slowest element, not the
        /// first link, bounds the transfer (issue 31's 10 Mbit/s link in front of a T1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<Box<RoutePair>>,
    },
    /// The speed a NIC with a physical layer reports.
    Nic {
        bits_per_second: u64,
        interface: String,
        kind: String,
    },
    /// Not known, and why.
    Unknown { reason: String },
}

/// What a document written before the link rate was recorded says of it.
impl Default for LinkRate {
    fn default() -> Self {
        LinkRate::Unknown {
            reason: "not recorded in this document".into(),
        }
    }
}

/// What the iperf3 server said of the test, beside the figures folded into the summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Iperf3Peer {
    /// True when the test was not asked for with `--iperf3` but switched to iperf3's protocol
    /// because the far end answered wirespeed's hello as an iperf3 server does.
    #[serde(default)]
    pub detected: bool,
    /// Why iperf3's protocol was spoken, as a sentence.
    #[serde(default)]
    pub reason: String,
    /// The server's results as it sent them (iperf3's EXCHANGE_RESULTS JSON): its CPU, and
    /// each stream's bytes, retransmits, datagrams, loss and jitter at its end.
    pub server_results: Results,
    /// What an iperf3 server cannot report that a wirespeed agent does.
    pub missing: Vec<String>,
}
