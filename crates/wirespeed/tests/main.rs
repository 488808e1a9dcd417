//! End-to-end tests of the `wirespeed` binary, compiled as one test binary.

mod envelope;
mod throughput;
mod util;
