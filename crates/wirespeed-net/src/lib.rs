//! The real network: the wirespeed agent, its control protocol, the TCP and UDP stream engines
//! that measure what two tasks get over a path (seed 002's ttcp, done so that the tool is never
//! the bottleneck it claims to find), the probe engine (seed 001), and what Linux knows about its
//! interfaces. Everything here measures and returns data; the science that turns the data into
//! numbers is in `wirespeed-model`.
//!
//! Layout: [`control`] is the wire format and the session state machine (pure, fuzzed);
//! [`auth`] the pre-shared-key challenge/response; [`budget`] the agent's memory budget; [`sock`] socket options, granted buffer
//! sizes, `TCP_INFO` and per-thread CPU time; [`tcp`] and [`udp`] the data paths (blocking I/O,
//! one thread per stream, no allocation per call); [`agent`] the server that serves many clients
//! at once; [`client`] the side that asks for a test and collects both ends' views; [`probe`]
//! and [`icmp`] echo and TTL-limited probes; [`iface`] link settings and counters; [`load`] the
//! coordinated many-host load test of seed 000 (agent side, UDP generator, controller).

#![warn(missing_docs, unreachable_pub)]
#![deny(unsafe_code)]

pub mod address;
pub mod agent;
pub mod agent_config;
pub mod auth;
pub mod budget;
pub mod buffer;
pub mod client;
pub mod control;
pub mod daemon;
pub mod env;
#[doc(hidden)]
pub mod fuzzing;
pub mod icmp;
pub mod iface;
pub mod iperf3;
pub mod load;
pub mod localtime;
pub mod mesh;
pub mod metrics;
pub mod pmqos;
pub mod probe;
pub mod report;
pub mod rr;
pub mod service;
pub mod signal;
pub mod sock;
pub mod socket;
pub mod spec;
pub mod summary;
pub mod tcp;
pub mod udp;

mod counters;
mod engine;
mod session;
// The one place `unsafe` is allowed: see its module documentation.
#[allow(unsafe_code)]
mod sys;

pub use agent::{Agent, AgentConfig, Limits};
pub use client::{ClientConfig, ClientError, LocalOptions, Progress, TestOutcome};
pub use engine::Sample as IntervalSample;
pub use probe::{ProbeConfig, ProbeError, ProbeRun, ReplyKind, Sample};
pub use report::{CpuTime, SideReport, StreamReport};
pub use session::SessionError;
pub use socket::{SocketChoice, SocketKind};
pub use spec::{Amount, Direction, Protocol, TestSpec};
