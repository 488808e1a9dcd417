//! Every `unsafe` of the crate, one file per kernel facility that neither `socket2` nor `rustix`
//! offers as a safe call: socket options they do not name ([`socket_options`]), `recvmsg` with
//! control messages (timestamps, `IP_RECVERR`, `UDP_GRO`; [`cmsg`]), `sendmmsg`/`recvmmsg`
//! batches ([`mmsg`]), `AF_PACKET` ([`packet`]), the ethtool and hardware-stamping ioctls
//! ([`ethtool`]), interface addresses, indexes and `SIOCGIF*` ([`netdevice`]), the thread's resource usage
//! ([`rusage`]), the local wall clock in a user's format ([`localtime`]), the signal handler ([`signal`]), page-aligned buffers ([`alloc`]) and `fork` ([`process`]).
//!
//! Each function here is safe to call: what the kernel reads or writes is described by Rust
//! references and lengths the function builds itself, and each file states the invariants its
//! types keep. The rest of the crate is `#![deny(unsafe_code)]`, and `tests/layers.rs` checks
//! that no `unsafe` appears outside this directory. Nothing here imports the rest of the crate.

// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
pub mod alloc;
#[doc(hidden)]
pub mod cmsg;
pub mod ethtool;
pub(crate) mod localtime;
pub(crate) mod mmsg;
#[doc(hidden)]
pub mod netdevice;
pub(crate) mod packet;
pub(crate) mod process;
pub(crate) mod rusage;
pub(crate) mod signal;
pub mod socket_options;
