//! The tests of wirespeed-sim, compiled against the built library as one test binary: see this
//! package's Cargo.toml for why they live here.

mod invariants;
mod seed_000;
mod unit;
