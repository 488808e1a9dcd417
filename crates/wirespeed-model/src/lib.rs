//! The science of wirespeed, with no I/O: units, framing overheads, the envelope (ceiling) of a
//! link, statistics for best-case delay (min filter, line fits, intervals), Bellovin's delay-component
//! algebra, auto-negotiation (IEEE 802.3 Clause 28), the diagnosis rules, and the analyses of
//! the sweep and load experiments.
//!
//! Everything here is a pure function of its inputs so that it can be tested exhaustively
//! without a network, and reused unchanged by the simulator, the lab and the measuring
//! commands.
//!
//! Modules: [`units`] (rates, sizes, durations), [`framing`] (what a packet costs on the wire),
//! [`envelope`] (a link's ceiling), [`sockbuf`] (what Linux grants a buffer request), [`dscp`];
//! for best-case delay (seed 001) [`stats`] (minimum per size, line fits, bootstrap, step
//! detection), [`bestcase`], [`delay`] (Bellovin's algebra), [`perhop`], [`destination`] (the
//! destination's per byte each way from an agent's short replies) and [`stability`] (when a
//! per-hop probe has probed enough); for repeated and
//! replicated runs [`resample`] (the median and its bootstrap interval) and [`moments`]
//! (moments, Jain's fairness, Student-t intervals); [`sequence`] (loss, reordering, jitter);
//! [`bottleneck`] (what bounded a throughput test); [`autoneg`] (IEEE 802.3 Clause 28);
//! [`diagnose`] (an interface's fault from its counters); [`csma_theory`] (Metcalfe and
//! Boggs); [`load`] (seed 000's load test); [`sweep`] (seed 004's buffer grid); [`mesh`] (a
//! fleet pair by pair); [`peer`] (what a peer says, made safe to show).

#![warn(missing_docs, unreachable_pub)]

pub mod autoneg;
pub mod bestcase;
pub mod bottleneck;
pub mod csma_theory;
pub mod delay;
pub mod destination;
pub mod diagnose;
pub mod dscp;
pub mod envelope;
pub mod framing;
pub mod load;
pub mod mesh;
pub mod moments;
pub mod peer;
pub mod perhop;
pub mod resample;
pub mod sequence;
pub mod sockbuf;
pub mod stability;
pub mod stats;
pub mod sweep;
pub mod units;

pub use envelope::{Duplex, Envelope, EnvelopeError, EnvelopeParams};
pub use framing::{IpVersion, LinkLayer, Transport};
pub use units::{BitRate, ByteSize, ParseUnitError, RateFormat};
