//! The science of wirespeed, with no I/O: units, framing overheads, the envelope (ceiling) of a
//! link, and, as later issues add them, statistics, delay models and auto-negotiation.
//!
//! Everything here is a pure function of its inputs so that it can be tested exhaustively
//! without a network, and reused unchanged by the simulator, the lab and the measuring
//! commands.

#![warn(missing_docs, unreachable_pub)]

pub mod autoneg;
pub mod bottleneck;
pub mod csma_theory;
pub mod diagnose;
pub mod envelope;
pub mod framing;
pub mod load;
pub mod resample;
pub mod sample_stats;
pub mod sequence;
pub mod sockbuf;
pub mod sweep;
pub mod units;

pub use envelope::{Duplex, Envelope, EnvelopeError, EnvelopeParams};
pub use framing::{IpVersion, LinkLayer, Transport};
pub use units::{BitRate, ByteSize, ParseUnitError, RateFormat};
