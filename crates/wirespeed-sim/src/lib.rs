//! Discrete-event simulation of shared and point-to-point Ethernet (CSMA/CD).
//!
//! Pure: no I/O, no wall clock. Filled in by the simulator issue.
