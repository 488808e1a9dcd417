//! The real network: agent, control protocol, stream and probe engines.
//!
//! Filled in by the throughput and probe issues.
