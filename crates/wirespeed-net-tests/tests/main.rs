//! The unit tests of wirespeed-net, compiled against the built library as one test binary: see
//! this package's Cargo.toml for why they live here.

mod unit;
