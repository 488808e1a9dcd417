//! End-to-end tests of the `wirespeed` binary, compiled as one test binary.

mod attack_load;
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
