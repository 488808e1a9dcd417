//! Networks on one machine: namespaces, TAP devices and the link emulator.
//!
//! Linux only, needs CAP_NET_ADMIN. Filled in by the lab issue.
