//! End-to-end tests of the `wirespeed` binary, compiled as one test binary.

mod envelope;
mod lab;
mod util;
