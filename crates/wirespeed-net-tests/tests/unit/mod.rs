//! The unit tests of wirespeed-net, one module per module of the library (`address` here
//! tests `wirespeed_net::address`, `control::frame` tests `wirespeed_net::control::frame`).

mod address;
mod agent;
mod auth;
mod budget;
mod buffer;
mod client;
mod control;
mod daemon;
mod engine;
mod env;
mod fuzzing;
mod icmp;
mod iface;
mod iperf3;
mod load;
mod localtime;
mod mesh;
mod metrics;
mod pmqos;
mod probe;
mod report;
mod sockopt;
mod spec;
mod summary;
mod sys;
mod tcp;
mod udp;
