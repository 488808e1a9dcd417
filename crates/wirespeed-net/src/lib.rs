//! The real network: sockets, timestamps, the probe engine, and what Linux knows about its
//! interfaces ([`iface`]). Everything here measures and returns data; the science that turns the
//! data into numbers is in `wirespeed-model`.

#![warn(missing_docs, unreachable_pub)]

pub mod icmp;
pub mod iface;
pub mod probe;
pub mod socket;

pub use probe::{ProbeConfig, ProbeError, ProbeRun, ReplyKind, Sample};
pub use socket::{SocketChoice, SocketKind};
