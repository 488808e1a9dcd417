//! The unit tests of wirespeed-sim, one module per module of the library (`mac` here tests
//! `wirespeed_sim::mac`).

mod bus;
mod engine;
mod link;
mod mac;
mod run_stats;
mod segment;
mod slotted;
mod sweep;
mod time;
mod traffic;
