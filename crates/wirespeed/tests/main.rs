//! End-to-end tests of the `wirespeed` binary, compiled as one test binary.

mod autoneg;
mod diagnose;
mod envelope;
mod lab;
mod load;
mod probe;
mod report;
mod reproduce;
mod sim;
mod sweep;
mod throughput;
mod util;
mod verdicts;
