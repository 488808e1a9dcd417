//! What `load` concludes, typed: a test that lost a host, a sink that was overrun, agents on
//! loopback that share no medium, failed sends, datagrams not marked as `-S` asked, a results
//! file repaired on resume, and the verdict of unfairness between hosts (seed 000, section 3.5).
//! A script acts on the kind and its figures; the sentence is the `Display`.

use std::fmt;

use serde::Serialize;

/// One finding of a load run. Kinds are stable once released.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum LoadFinding {
    /// Warning: a host of a test did not report, so its row counts fewer hosts.
    IncompleteTest {
        hosts: usize,
        lengths: String,
        host: usize,
        agent: String,
        error: String,
    },
    /// Warning: the agents run on this host's loopback, so the measured columns are its
    /// generators, not a shared medium.
    LoopbackNotAMedium,
    /// Warning: the counting sink lost more than it may (`limit_share`) of a test's packets.
    SinkOverrun {
        hosts: usize,
        lengths: String,
        loss_share: f64,
        limit_share: f64,
    },
    /// Warning: a host's paced generator was descheduled past its catch-up limit and never
    /// offered `share_of_window` of the window's frames, so the row's rate is short for a
    /// reason of this machine, not of the network.
    GeneratorBehind {
        hosts: usize,
        lengths: String,
        host: usize,
        agent: String,
        skipped_seconds: f64,
        share_of_window: f64,
    },
    /// Warning: send calls failed during the tests.
    SendErrors { send_errors: u64 },
    /// Warning: an agent's datagrams carried another TOS than `-S` asked (`sent_tos` none:
    /// an agent older than `-S` that reports none).
    TosNotMarked {
        agent: String,
        asked_tos: u8,
        sent_tos: Option<u8>,
    },
    /// The hosts of one test shared the medium unfairly (Jain's index below 0.9, three hosts
    /// or more).
    Unfair {
        hosts: usize,
        lengths: String,
        jain_index: f64,
    },
}

impl fmt::Display for LoadFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadFinding::IncompleteTest {
                hosts,
                lengths,
                host,
                agent,
                error,
            } => write!(
                f,
                "incomplete test ({hosts} hosts x {lengths}): host {host} ({agent}) {error}"
            ),
            LoadFinding::LoopbackNotAMedium => f.write_str(
                "the agents share this host's loopback and CPUs, not a medium: the measured \
                 columns are this host's generators; the model columns are a shared 10 Mbit/s \
                 segment (seed 000's long net)",
            ),
            LoadFinding::SinkOverrun {
                hosts,
                lengths,
                loss_share,
                limit_share,
            } => write!(
                f,
                "{hosts} hosts x {lengths}: the sink lost {:.0}% of the in-window packets, more than the {:.0}% \
                 a counting sink may lose: one thread reads every host's packets, so it was \
                 overrun (socket buffer or CPU) and this row measures the sink, not the network; \
                 fewer hosts, a lower --rate or --sink self avoid it",
                loss_share * 100.0,
                limit_share * 100.0
            ),
            LoadFinding::GeneratorBehind {
                hosts,
                lengths,
                host,
                agent,
                skipped_seconds,
                share_of_window,
            } => write!(
                f,
                "{hosts} hosts x {lengths}: host {host}'s generator ({agent}) fell more than 10 ms \
                 behind its schedule and gave up {:.1} ms of the measured window ({:.1}%): its \
                 host was too busy to offer the load, so this row's rate is short by about that \
                 share for a reason of the machine, not the network; fewer hosts per machine or a \
                 lower --rate avoid it",
                skipped_seconds * 1e3,
                share_of_window * 100.0
            ),
            LoadFinding::SendErrors { send_errors } => {
                write!(f, "{send_errors} send calls failed during the tests")
            }
            LoadFinding::TosNotMarked {
                agent,
                asked_tos,
                sent_tos: Some(other),
            } => write!(
                f,
                "agent {agent} sent with TOS {other:#04x}, not the {asked_tos:#04x} asked (-S): its kernel set another value"
            ),
            LoadFinding::TosNotMarked {
                agent,
                asked_tos,
                sent_tos: None,
            } => write!(
                f,
                "agent {agent} did not mark its datagrams with TOS {asked_tos:#04x} (-S): it reports no TOS, as an agent older than -S does; upgrade it"
            ),
            LoadFinding::Unfair {
                hosts,
                lengths,
                jain_index,
            } => write!(
                f,
                "{hosts} hosts x {lengths}: unfair (Jain {jain_index:.2}); the seed saw its backoff's unfairness at small N shrink as N grew (§3.5)"
            ),
        }
    }
}
