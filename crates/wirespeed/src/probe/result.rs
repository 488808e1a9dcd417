//! The schema of `wirespeed.probe.v1`: the run's parameters and, per hop, the fitted line of
//! the seed's best-case delay (Bellovin 1992) with its own cost. Types only: the run is in
//! `measure`, the views in `text`, `html`, `brief` and `metrics`.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use wirespeed_model::bestcase::{HopAnalysis, HopFit};
use wirespeed_model::delay::Cost;
use wirespeed_model::stability::{StopReason, Unsettled};
use wirespeed_net::SocketKind;
use wirespeed_net::probe::Sample;

/// Which clock the fits used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timestamps {
    /// SO_TIMESTAMPING software stamps: transmit (driver) to receive (stack).
    KernelSoftware,
    /// CLOCK_MONOTONIC before sendto and after recvmsg.
    Monotonic,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Parameters {
    pub host: String,
    pub target: IpAddr,
    pub sizes_bytes: Vec<usize>,
    pub probes_per_size: u32,
    pub per_hop: bool,
    pub max_ttl: Option<u8>,
    pub gap_seconds: f64,
    pub hop_interval_seconds: f64,
    pub timeout_seconds: f64,
    pub seed: u64,
    pub bootstrap_replicates: usize,
    pub until_width_seconds: Option<f64>,
    /// `--until-stable`'s budget (older documents: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable_budget_seconds: Option<f64>,
    pub host_baseline: bool,
    /// (TTL, bit/s) of --wire.
    pub wire: Vec<(u8, u64)>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct HopReport {
    pub responder: Option<IpAddr>,
    pub destination: bool,
    /// With --wire: own cost minus the wire's serialization (the seed's transit formula).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transit: Option<Transit>,
    #[serde(flatten)]
    pub analysis: HopAnalysis,
}

/// `through - to - wire` for one hop.
#[derive(Debug, Serialize, Deserialize)]
pub struct Transit {
    pub wire_rate_bits_per_second: u64,
    pub wire: Cost,
    pub node: Cost,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ProbeReport {
    pub socket: SocketKind,
    /// With --udp: what the agent's echo counted (answered, dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<wirespeed_net::control::echo::EchoTotals>,
    pub timestamps: Timestamps,
    pub kernel_stamped_answers: usize,
    pub answers: usize,
    pub timer_floor_seconds: f64,
    pub clock_resolution_seconds: f64,
    /// Whether CPUs were kept from halting during the run (PM QoS), and if not, why.
    #[serde(default)]
    pub cpu_wakeup: String,
    pub path_mtu_bytes: Option<usize>,
    pub elapsed_seconds: f64,
    pub stopped_early: bool,
    /// Whether every hop was probed (else the destination alone, at TTL 64).
    pub per_hop: bool,
    /// This host's own line from --host-baseline (the seed's roc), subtracted from hop 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_baseline: Option<HopFit>,
    /// Rounds of probes sent (more than 1 with --until-width or --until-stable).
    pub rounds: u32,
    /// With --until-stable: what ended the rounds (older documents: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StopReason>,
    /// With --until-stable: the own costs still wider than their tolerance when it stopped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsettled: Vec<Unsettled>,
    /// With --until-stable: how the last round was planned from the path (the hops it probes,
    /// its expected seconds, the rounds and seconds settling would take).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_plan: Option<wirespeed_model::stability::RoundPlan>,
    /// With --until-stable: the budget, the flag's or planned from the path after the first
    /// round, with what the path asked for (older documents: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<wirespeed_model::stability::Budget>,
    /// With --until-width: whether the intervals got narrow enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converged: Option<bool>,
    /// Each hop; `fit.one_way` is the seed's `fixed + per_byte x size`, in ms.
    pub hops: Vec<HopReport>,
    /// Every probe, as sent.
    pub samples: Vec<Sample>,
    #[serde(skip, default = "unspecified")]
    pub target: IpAddr,
    /// `-f`: the unit of implied link rates in the text.
    #[serde(skip)]
    pub rate_format: wirespeed_model::RateFormat,
}

/// The target of a decoded document, which keeps it in its parameters instead.
pub(crate) fn unspecified() -> IpAddr {
    IpAddr::from([0, 0, 0, 0])
}
