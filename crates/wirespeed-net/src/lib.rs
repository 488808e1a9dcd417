//! The real network: sockets, timestamps and the probe engine. Everything here measures and
//! returns data; the science that turns the data into numbers is in `wirespeed-model`.

#![warn(missing_docs, unreachable_pub)]

pub mod icmp;
pub mod probe;
pub mod socket;

pub use probe::{ProbeConfig, ProbeError, ProbeRun, ReplyKind, Sample};
pub use socket::{SocketChoice, SocketKind};
