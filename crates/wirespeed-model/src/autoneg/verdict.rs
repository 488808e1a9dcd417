//! The verdict on two link partners: whether the link they resolve to works at the best both
//! could run, and if not, what a person sees and does about it (seed 003: Table 7 for the
//! mismatch's cost, Appendix A for its cause).

use std::fmt;

use serde::Serialize;

use super::resolve::{End, Outcome, Resolution, duplex_word};
use super::{Duplex, Technology};

/// One resolution's verdict, with the figures it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AutonegVerdict {
    /// Both ends run the same mode, the best both can do.
    Ok {
        /// The link's speed, `None` if the ends report none.
        speed_bits_per_second: Option<u64>,
        /// Its duplex, likewise.
        duplex: Option<Duplex>,
    },
    /// One end half duplex, the other full: late collisions on the half end, FCS errors and
    /// runts on the full one, one direction several times slower.
    DuplexMismatch {
        /// The end that runs half duplex.
        half_duplex_end: End,
        /// The end that runs full duplex.
        full_duplex_end: End,
    },
    /// The ends share no mode (or neither signals one).
    NoLink {
        /// Why, in words.
        reason: String,
    },
    /// A working link below the best mode both ends could run.
    SlowerThanPossible {
        /// The mode in use.
        running: Technology,
        /// The best mode both could run.
        possible: Technology,
    },
}

/// The verdict on a resolution (end A's mode stands for the link when both agree).
pub fn verdict(r: &Resolution) -> AutonegVerdict {
    match &r.outcome {
        Outcome::Ok => AutonegVerdict::Ok {
            speed_bits_per_second: r.a.speed_mbps.map(|m| u64::from(m) * 1_000_000),
            duplex: r.a.duplex,
        },
        Outcome::DuplexMismatch { half_duplex_end } => AutonegVerdict::DuplexMismatch {
            half_duplex_end: *half_duplex_end,
            full_duplex_end: match half_duplex_end {
                End::A => End::B,
                End::B => End::A,
            },
        },
        Outcome::NoLink { reason } => AutonegVerdict::NoLink {
            reason: reason.clone(),
        },
        Outcome::SlowerThanPossible { running, possible } => AutonegVerdict::SlowerThanPossible {
            running: *running,
            possible: *possible,
        },
    }
}

fn end_name(end: End) -> &'static str {
    match end {
        End::A => "A",
        End::B => "B",
    }
}

impl fmt::Display for AutonegVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AutonegVerdict::Ok {
                speed_bits_per_second,
                duplex,
            } => match (speed_bits_per_second, duplex) {
                (Some(bps), Some(duplex)) => write!(
                    f,
                    "ok: both ends run {} Mbit/s {}",
                    bps / 1_000_000,
                    duplex_word(*duplex)
                ),
                _ => write!(f, "ok: both ends run no link"),
            },
            AutonegVerdict::DuplexMismatch {
                half_duplex_end,
                full_duplex_end,
            } => {
                let (half, full) = (end_name(*half_duplex_end), end_name(*full_duplex_end));
                write!(
                    f,
                    "DUPLEX MISMATCH: {half} runs half duplex, {full} full duplex. Expect late collisions on {half} and FCS errors and runts on {full}, and one direction several times slower than the other (seed 003 Table 7: 15 against 67 KB/s on 10 Mbit/s). Fix: configure both ends the same way, preferably both auto"
                )
            }
            AutonegVerdict::NoLink { reason } => write!(f, "NO LINK: {reason}"),
            AutonegVerdict::SlowerThanPossible { running, possible } => write!(
                f,
                "SLOWER THAN POSSIBLE: the link runs {} but both ends could run {}; let both ends auto-negotiate their full abilities",
                running.name(),
                possible.name()
            ),
        }
    }
}
