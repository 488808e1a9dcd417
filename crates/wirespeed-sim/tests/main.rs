//! wirespeed-sim's integration tests, compiled and linked as one test binary (the two files
//! below were a binary each). Pure simulations: no wall clock, so they run side by side.

mod invariants;
mod seed_000;
