//! The unit tests of wirespeed-lab, compiled against the built library as one test binary: see
//! this package's Cargo.toml for why they live here.

mod counting_alloc;
mod unit;
