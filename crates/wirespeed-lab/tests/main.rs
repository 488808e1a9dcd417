//! wirespeed-lab's integration tests, compiled and linked as one test binary (each file below
//! was a binary of its own, linked and run one after another by cargo). The two root tests
//! that build a lab each name their own lab and count only their own lab's threads, so they
//! run side by side; they assert the emulator's frame accounting, never a rate.

mod common;
mod fq_codel_aim;
mod fq_codel_cost;
mod minimum_frames;
mod one_thread;
mod unsafe_confined;
