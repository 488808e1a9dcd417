//! The real network: the wirespeed agent, its control protocol, the TCP and UDP stream engines
//! that measure what two tasks get over a path (seed 002's ttcp, done so that the tool is never
//! the bottleneck it claims to find), the probe engine (seed 001), and what Linux knows about its
//! interfaces. Everything here measures and returns data; the science that turns the data into
//! numbers is in `wirespeed-model`.
//!
//! Modules: [`control`] is the wire format and the session state machine (pure, fuzzed),
//! `session` one end of it with its deadlines; [`spec`] what a test asks for; [`auth`] the
//! pre-shared-key challenge/response; [`agent_config`] what the operator allows; [`budget`] the
//! agent's memory budget; [`agent`] the server that serves many clients at once, with
//! [`service`] (opening its side services), [`rr`] (the request/response client), [`daemon`]
//! (`serve --daemon`) and [`signal`] (SIGINT/SIGTERM as a flag); [`client`] the side that asks
//! for a test and collects both ends' views; [`tcp`] and [`udp`] the data paths (blocking I/O,
//! one thread per stream, no allocation per call), run by `engine`, counted in `counters`, on
//! [`buffer`]s that start on a page; [`sockopt`] socket options, granted buffer sizes, `TCP_INFO`
//! and per-thread CPU time; [`report`] what each end measured and [`summary`] both ends' views
//! in iperf3's layout; [`env`] the environment record; [`address`] addresses as users write
//! them; [`probe`], [`icmp_socket`] (the ICMP socket) and [`icmp`] echo and TTL-limited probes;
//! [`iface`] link settings and counters; [`load`] the coordinated many-host load test of seed
//! 000; [`mesh`] agent-to-agent tests; [`iperf3`] iperf3's protocol both ways; [`metrics`] the
//! agent's metrics listener; [`localtime`] a checked strftime format; [`pmqos`] a CPU wake-up
//! latency request; `fuzzing` the checks behind the fuzz targets; `sys` every unsafe block of the
//! crate.

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
pub mod icmp_socket;
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
pub mod sockopt;
pub mod spec;
pub mod summary;
pub mod tcp;
pub mod udp;

// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
#[doc(hidden)]
pub mod counters;
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod session;
// The one place `unsafe` is allowed: see its module documentation.
#[allow(unsafe_code)]
#[doc(hidden)]
pub mod sys;

pub use agent::{Agent, AgentConfig, Limits};
pub use client::{ClientConfig, ClientError, LocalOptions, Progress, TestOutcome};
pub use engine::Sample as IntervalSample;
pub use icmp_socket::{SocketChoice, SocketKind};
pub use probe::{ProbeConfig, ProbeError, ProbeRun, ReplyKind, Sample};
pub use report::{CpuTime, SideReport, StreamReport};
pub use session::SessionError;
pub use spec::{Amount, Direction, Protocol, TestSpec};
