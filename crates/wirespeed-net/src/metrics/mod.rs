//! The agent's metrics listener (`serve --metrics`): a bounded HTTP/1.x request reader
//! ([`http`]), a listener that no slow peer can hold up ([`listener`]), the Prometheus
//! probe endpoint that runs a bounded test from this agent to another ([`probe`]), and the
//! agent's page and routes ([`agent_page`]).

pub mod agent_page;
pub mod http;
pub mod listener;
pub mod probe;

pub use agent_page::{AgentRoutes, SessionTotals};
pub use listener::{
    Answer, BearerToken, ListenerConfig, ListenerStats, MetricsListener, Response, Routes,
};
pub use probe::{Module, ProbeKind, ProbeSettings, Prober};
