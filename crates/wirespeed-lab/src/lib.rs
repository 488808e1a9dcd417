//! Networks on one machine with exactly known links: network namespaces joined by TAP devices
//! and a user-space link emulator.
//!
//! The kernel's own shapers (tbf, htb) cannot give a link a propagation delay, a per-hop
//! processing cost or a collision, and netem is not available everywhere, so every frame
//! between two namespaces passes through [`emulator`], which holds it exactly as long as the
//! configured link would. The emulator's logic is pure and runs in virtual time in tests; the
//! lab runs it on the real clock over TAP devices. Linux only; building a lab needs
//! CAP_NET_ADMIN.
//!
//! Modules: [`topology`] (the TOML files, checked), [`addressing`] (addresses and routes nobody
//! has to write), [`truth`] (what a measurement across a topology should find), [`crossing`]
//! (every link's neighbours resolved as the lab comes up, and when asked its own cost per
//! link crossing), [`lifecycle`]
//! (up, found by name, down, never left behind), [`runtime`] (namespaces and TAP devices built,
//! and the emulator's threads on the real clock), `shared_port` (the thread that drives a shared
//! medium), [`emulator`], [`ingress_stamp`] (when the sending kernel sent each frame),
//! [`device`] (what each namespace counted on its TAP device), [`inside`] (the ground truth, read
//! from inside a namespace), [`cleanup`] (ending every process of a lab), [`sys`] (the operating
//! system side, and the crate's only unsafe code).

#![warn(missing_docs, unreachable_pub)]
#![deny(unsafe_code)]

pub mod addressing;
pub mod cleanup;
pub mod crossing;
pub mod device;
pub mod emulator;
pub mod ingress_stamp;
pub mod inside;
pub mod lifecycle;
pub mod runtime;
// Public only as a test seam, hidden from the documentation: its unit tests
// (crates/wirespeed-lab-tests) check which station a frame is for.
#[doc(hidden)]
pub mod shared_port;
// The one place `unsafe` is allowed: see its module documentation.
#[allow(unsafe_code)]
pub mod sys;
pub mod topology;
pub mod truth;

pub use addressing::{Ipv4Net, Plan};
pub use lifecycle::LabError;
pub use runtime::{Emulator, EmulatorCost, Lab, LabBottleneck, PortStatus, lab_bottleneck};
pub use topology::{Topology, TopologyError};
