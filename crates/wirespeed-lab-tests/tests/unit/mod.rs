//! The unit tests of wirespeed-lab, one module per module of the library (`addressing` here
//! tests `wirespeed_lab::addressing`, `emulator::aqm` tests `wirespeed_lab::emulator::aqm`).

mod addressing;
mod cleanup;
mod crossing;
mod device;
mod emulator;
mod ingress_stamp;
mod inside;
mod runtime;
mod shared_port;
mod topology;
mod truth;
