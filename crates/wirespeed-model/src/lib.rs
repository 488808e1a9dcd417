//! The science of wirespeed, with no I/O: units, framing overheads, the envelope (ceiling) of a
//! link, statistics for best-case delay (min filter, line fits, intervals), Bellovin's delay-component
//! algebra, auto-negotiation (IEEE 802.3 Clause 28), the diagnosis rules, and the analyses of
//! the sweep and load experiments.
//!
//! Everything here is a pure function of its inputs so that it can be tested exhaustively
//! without a network, and reused unchanged by the simulator, the lab and the measuring
//! commands.

#![warn(missing_docs, unreachable_pub)]

pub mod autoneg;
pub mod bestcase;
pub mod bottleneck;
pub mod csma_theory;
pub mod delay;
pub mod diagnose;
pub mod dscp;
pub mod envelope;
pub mod framing;
pub mod load;
pub mod mesh;
pub mod peer;
pub mod perhop;
pub mod resample;
pub mod sample_stats;
pub mod sequence;
pub mod sockbuf;
pub mod stats;
pub mod sweep;
pub mod units;

pub use envelope::{Duplex, Envelope, EnvelopeError, EnvelopeParams};
pub use framing::{IpVersion, LinkLayer, Transport};
pub use units::{BitRate, ByteSize, ParseUnitError, RateFormat};
