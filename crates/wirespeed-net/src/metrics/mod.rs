//! The agent's metrics listener (`serve --metrics`): a bounded HTTP/1.x request reader
//! ([`http`]), a listener that no slow peer can hold up ([`listener`]), and the Prometheus
//! probe endpoint that runs a bounded test from this agent to another ([`probe`]).

pub mod http;
pub mod listener;
pub mod probe;

pub use listener::{Answer, BearerToken, ListenerConfig, MetricsListener, Response, Routes};
pub use probe::{Module, ProbeKind, ProbeSettings, Prober};
