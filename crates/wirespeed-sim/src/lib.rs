//! Discrete-event simulation of shared Ethernet (CSMA/CD), faithful enough to reproduce Boggs,
//! Mogul and Kent's measurements (seed 000) with the 802.3 parameters of seed 003's Table 2.
//!
//! Pure: no I/O and no wall clock. Time is integer picoseconds ([`time`]); the engine
//! ([`engine`]) orders events by `(time, sequence)` and takes a [`engine::Clock`], so a run is
//! bit-for-bit reproducible from its seed, and the [`mac`] state machine only talks to a
//! [`mac::MacIo`] driver, so the lab can run the same MAC in real time. [`network`] puts the
//! seed's hosts on a [`bus`] and measures the seed's seven statistics ([`run_stats`]); [`sweep`]
//! runs many points and replications on all cores; [`link`] is a point-to-point link
//! with full duplex, half duplex or a duplex mismatch (seed 003); [`slotted`] is the Metcalfe-Boggs model of
//! 1976 run on the same engine, the one place where "1/e" is true.
//!
//! Modules: [`time`], [`engine`], [`mac`], [`bus`], [`network`], [`run_stats`], [`sweep`],
//! [`link`], [`slotted`], as above; [`segment`] a shared medium fed from outside (the lab's
//! hubs and half-duplex links run it in real time); [`traffic`] what each host sends.

#![warn(missing_docs, unreachable_pub)]

pub mod bus;
pub mod engine;
pub mod link;
pub mod mac;
pub mod network;
pub mod run_stats;
pub mod segment;
pub mod slotted;
pub mod sweep;
pub mod time;
pub mod traffic;

pub use bus::{Cable, Placement};
pub use mac::{MacDuplex, MacParams};
pub use network::{HostModel, Scenario, run, run_batched};
pub use run_stats::{Batches, PointSummary, RunStats, Sampled};
pub use traffic::{Arrivals, LengthMix};

/// Why a scenario cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Host count out of range.
    #[error("{0} hosts: need 1 to 65535 (example: --hosts 1-24)")]
    Hosts(usize),
    /// A packet length out of range.
    #[error("{bytes}-byte packets: lengths must be {min} to {max} bytes")]
    Length {
        /// The length asked for.
        bytes: u64,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
    /// A length mix that makes no sense.
    #[error("length mix: {0}")]
    Mix(String),
    /// A transfer (window, acknowledgement, timeout) that could never move data.
    #[error("{0}")]
    Transfer(&'static str),
    /// An offered load that is not a positive number.
    #[error("offered load {0}: must be a positive fraction of the channel (example: --load 0.5)")]
    Load(f64),
    /// A burst size below one packet.
    #[error("mean burst {0}: must be at least 1 packet (example: --burst 8)")]
    Burst(f64),
    /// No buffers.
    #[error("hosts need at least one packet buffer (example: --buffers 15)")]
    Buffers,
    /// An interrupt latency range upside down.
    #[error("the interrupt latency range runs backwards (example: --interrupt-latency 75us-100us)")]
    Interrupt,
    /// An interrupt routine of too many instructions for its stalls to be drawn.
    #[error(
        "the interrupt latency is more than 1,500,000 instructions of the CPU cycle: give a shorter latency or a longer cycle (example: --interrupt-latency 87us --cycle-time 45ns)"
    )]
    Instructions,
    /// Nothing to measure.
    #[error(
        "the measured duration must be longer than zero and at most 1 h of simulated time, whose events would take hours of real time (example: -t 10s)"
    )]
    Duration,
    /// A retransmission timeout that fires before any acknowledgement could arrive.
    #[error(
        "--rto {}: shorter than the quickest acknowledgement on this link ({}: a data frame, an ack, the ack delay and the cable both ways); give at least that (example: --rto 200ms)",
        wirespeed_model::units::format_seconds(*rto_ns as f64 / 1e9),
        wirespeed_model::units::format_seconds(*floor_ns as f64 / 1e9)
    )]
    Rto {
        /// The timeout asked for, ns.
        rto_ns: u64,
        /// The shortest round trip on an idle link, ns.
        floor_ns: u64,
    },
    /// A batch count out of range.
    #[error("{0} batches: cut the window into 2 to 100 batches (example: 10)")]
    Batches(usize),
    /// A cable that cannot carry a signal.
    #[error("the cable needs a length >= 0, a velocity factor in (0, 1] and a delay >= 0")]
    Cable,
}

/// The longest simulated time a test may measure (or warm up for): an hour of a busy segment
/// is about a billion events.
pub const MAX_SIMULATED_NS: u64 = 3_600_000_000_000;
