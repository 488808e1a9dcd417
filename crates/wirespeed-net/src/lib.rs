//! The real network: agent, control protocol, stream and probe engines, and what Linux knows
//! about its interfaces ([`iface`]).

#![warn(missing_docs, unreachable_pub)]

pub mod iface;
