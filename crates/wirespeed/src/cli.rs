//! The command-line map: one subcommand per question wirespeed answers.

use clap::{Parser, Subcommand};

use crate::autoneg::AutonegArgs;
use crate::diagnose::DiagnoseArgs;
use crate::envelope::EnvelopeArgs;
use crate::load::LoadArgs;
use crate::model::ModelArgs;
use crate::probe::ProbeArgs;
use crate::serve::ServeArgs;
use crate::sim::SimArgs;
use crate::throughput::ThroughputArgs;

/// wirespeed: measure what a network path delivers, compute what it should deliver, and
/// explain the difference.
#[derive(Debug, Parser)]
#[command(name = "wirespeed", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The agent: the far end of `tcp` and `udp` tests (serves many clients at once).
    Serve(ServeArgs),
    /// TCP throughput to an agent; without HOST, this host's own loopback ceiling.
    #[command(after_help = crate::exit_status::THROUGHPUT_HELP)]
    Tcp(ThroughputArgs),
    /// UDP throughput, loss, reordering and jitter to an agent; without HOST, on loopback.
    #[command(after_help = crate::exit_status::THROUGHPUT_HELP)]
    Udp(ThroughputArgs),
    /// How does throughput depend on the send and receive socket buffers? Van Jacobson's
    /// experiment: a grid of buffer sizes, repeated runs in a seeded random order.
    Sweep(crate::sweep::SweepArgs),
    /// The most a link can carry after every header, gap and ACK (the back-of-the-envelope
    /// ceiling).
    Envelope(EnvelopeArgs),
    /// Best-case delay of a path and of every hop: fixed + per-byte cost from the minimum
    /// round trip of echo probes of many sizes (Bellovin 1992).
    Probe(ProbeArgs),
    /// Predict a path's best-case delay from a component table, compare it with a probe, and
    /// flag the components that disagree.
    Model(ModelArgs),
    /// N agents transmit at once on a common schedule (Boggs, Mogul and Kent's load test):
    /// aggregate rate, fairness, delay and excess delay for each host count and packet length.
    Load(LoadArgs),
    /// Simulations: what would a shared CSMA/CD Ethernet do with N hosts, these sizes, this
    /// cable?
    Sim(SimArgs),
    /// What two link partners settle on (auto-negotiation, parallel detection, forced modes),
    /// and the link code words they send.
    Autoneg(AutonegArgs),
    /// Are these interfaces' link settings and error counters healthy? If not, which fault
    /// (duplex mismatch, bad cable, overruns) fits the evidence?
    Diagnose(DiagnoseArgs),
    /// Build a network of namespaces joined by emulated links (exact rate, delay, queue, loss,
    /// router costs), run commands in it, and take it down.
    Lab(crate::lab::LabArgs),
    /// Run a seed's experiment end to end (lab or simulator) and print the paper's table
    /// beside ours with a verdict per row; `--list` names them.
    Reproduce(crate::reproduce::ReproduceArgs),
    /// Turn saved results (--json, --json-stream, --results files; files or directories) into
    /// one self-contained HTML page with tables and plots.
    Report(crate::report::ReportArgs),
}

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sweep(args) => crate::sweep::command(args),
        Command::Envelope(args) => crate::envelope::run(args),
        Command::Autoneg(args) => crate::autoneg::run(args),
        Command::Diagnose(args) => crate::diagnose::run(args),
        Command::Sim(args) => crate::sim::run(args),
        Command::Lab(args) => crate::lab::run(args),
        Command::Probe(args) => crate::probe::run(args),
        Command::Model(args) => crate::model::run(args),
        Command::Serve(args) => crate::serve::run(args),
        Command::Tcp(args) => crate::throughput::run(args, wirespeed_net::Protocol::Tcp),
        Command::Udp(args) => crate::throughput::run(args, wirespeed_net::Protocol::Udp),
        Command::Load(args) => crate::load::run(args),
        Command::Reproduce(args) => crate::reproduce::run(args),
        Command::Report(args) => crate::report::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
