//! End-to-end tests of the `wirespeed` binary, compiled as one test binary.

mod attack;
mod attack_load;
mod autoneg;
mod diagnose;
mod docs;
mod envelope;
mod install_aids;
mod iperf3_json;
mod json_golden;
mod lab;
mod latency;
mod load;
mod metrics;
mod probe;
mod refusals;
mod report;
mod reproduce;
mod results_safety;
mod schedule;
mod sim;
mod sweep;
mod throughput;
mod util;
mod verdicts;
