//! The `wirespeed.reproduce.v1` schema every reproduction shares: the catalogue of names,
//! a reproduction's ground truth, its comparisons (the seed's table beside ours, a row per
//! quantity with its tolerance and verdict) and its counts; and `--list`'s catalogue.

use std::path::PathBuf;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Name {
    /// Seeds 002/004: loopback ceiling, envelope figures, a 10 Mbit/s lab link.
    Envelope,
    /// Seed 000: bit and packet rate vs N on a simulated 10 Mbit/s Ethernet.
    Boggs,
    /// Seed 003: TCP each way across a duplex-mismatched and a matched 10 Mbit/s link.
    DuplexMismatch,
    /// Seed 001: probe a path built from Table 1, then flag a misconfigured board.
    Bellovin,
    /// Seed 004: the socket-buffer sweep over 1..12 packets on an emulated 10 Mbit/s link.
    VjBuffers,
}

/// A reproduction in the catalogue: its seeds, what it needs and what it runs.
pub(crate) struct Entry {
    pub(crate) name: Name,
    pub(crate) seeds: &'static str,
    pub(crate) needs: &'static str,
    pub(crate) what: &'static str,
}

pub(crate) const ENTRIES: [Entry; 5] = [
    Entry {
        name: Name::Envelope,
        seeds: "002, 004",
        needs: "loopback; lab (root) for the 10 Mbit/s link",
        what: "loopback TCP ceiling, envelope figures for 10M/100M/1G, TCP across labs/two-host-10m.toml vs 9.415 Mbit/s",
    },
    Entry {
        name: Name::Boggs,
        seeds: "000",
        needs: "simulator; --lab: lab (root)",
        what: "bit rate, packet rate, utilisation and delay vs N and packet length beside the seed's figures; --lab: load --raw on labs/boggs-24.toml beside the simulator",
    },
    Entry {
        name: Name::DuplexMismatch,
        seeds: "003",
        needs: "lab (root)",
        what: "TCP each way across labs/duplex-mismatch.toml (this host's TCP, the 1990s profile, labs/duplex-mismatch-1990s.toml, and the seed's hosts, labs/duplex-mismatch-1990s-hosts.toml) and labs/duplex-matched.toml, rates and counters vs Tables 6 and 7",
    },
    Entry {
        name: Name::Bellovin,
        seeds: "001",
        needs: "lab (root)",
        what: "probe across labs/seed-001-path.toml, fitted costs vs Table 1, then the misconfigured board with model compare",
    },
    Entry {
        name: Name::VjBuffers,
        seeds: "004",
        needs: "lab (root)",
        what: "sweep send = receive buffer 1..12 packets across labs/seed-004-sun3.toml (3/60 host costs) and labs/two-host-10m.toml vs the LANCE column and the 1,104 KB/s ceiling",
    },
];

impl Name {
    pub(crate) fn entry(self) -> &'static Entry {
        ENTRIES
            .iter()
            .find(|e| e.name == self)
            .expect("every name has an entry")
    }
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Name::Envelope => "envelope",
            Name::Boggs => "boggs",
            Name::DuplexMismatch => "duplex-mismatch",
            Name::Bellovin => "bellovin",
            Name::VjBuffers => "vj-buffers",
        }
    }
}

/// Whether a row's figure is within its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the stated tolerance.
    Within,
    /// Outside it (the `why` says by how much and what we think the reason is).
    Outside,
    /// No tolerance applies (the seed gives no figure, or it is a different machine).
    NotCompared,
    /// The run's own interval is wider than the tolerance: it cannot say within or outside
    /// (`tolerance::judge`).
    Imprecise,
}

impl Verdict {
    pub(crate) fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Within
        } else {
            Verdict::Outside
        }
    }
    /// The word the text view prints in the verdict column.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Verdict::Within => "ok",
            Verdict::Outside => "OUTSIDE",
            Verdict::NotCompared => "-",
            Verdict::Imprecise => "imprecise",
        }
    }
}

/// One compared quantity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// What is compared.
    pub quantity: String,
    /// Unit of `configured`, `paper` and `ours`.
    pub unit: String,
    /// The ground truth this run configured (or the model's figure for it), if any.
    pub configured: Option<f64>,
    /// The seed's figure, if it states one.
    pub paper: Option<f64>,
    /// What we measured or simulated.
    pub ours: Option<f64>,
    /// The tolerance applied, in words.
    pub tolerance: String,
    pub verdict: Verdict,
    /// Why the verdict is what it is.
    pub why: String,
}

/// One of the seed's tables (or figures) beside ours.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub title: String,
    /// Where in the seed the figures come from.
    pub source: String,
    /// How our column was produced (library call or subprocess, and its command line).
    pub method: String,
    pub rows: Vec<Row>,
}

/// A configured setting of the experiment (the ground truth).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setting {
    pub name: String,
    pub value: String,
}

#[doc(hidden)]
pub fn setting(name: &str, value: impl Into<String>) -> Setting {
    Setting {
        name: name.to_string(),
        value: value.into(),
    }
}

/// A finished reproduction.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reproduction {
    pub name: Name,
    pub seeds: std::borrow::Cow<'static, str>,
    pub ground_truth: Vec<Setting>,
    pub comparisons: Vec<Comparison>,
    pub notes: Vec<String>,
    pub rows: usize,
    pub within: usize,
    pub outside: usize,
    /// Rows whose interval was wider than their tolerance (issue 31); left out when none, so
    /// that reproductions which judge no interval keep their documents.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub imprecise: usize,
}

impl Reproduction {
    pub(crate) fn new(
        name: Name,
        ground_truth: Vec<Setting>,
        comparisons: Vec<Comparison>,
        notes: Vec<String>,
    ) -> Reproduction {
        let all = comparisons.iter().flat_map(|c| &c.rows);
        let count = |v: Verdict| all.clone().filter(|r| r.verdict == v).count();
        Reproduction {
            name,
            seeds: name.entry().seeds.into(),
            rows: all.clone().count(),
            within: count(Verdict::Within),
            outside: count(Verdict::Outside),
            imprecise: count(Verdict::Imprecise),
            ground_truth,
            comparisons,
            notes,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The document's parameters: the flags a reproduction (or the list) was run with.
#[derive(Debug, Serialize)]
pub struct Params {
    pub name: Option<Name>,
    pub time_seconds: Option<f64>,
    pub size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    pub lab: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<PathBuf>,
}

/// A reproduction as `--list` shows it.
#[derive(Debug, Serialize)]
pub(crate) struct ListEntry {
    pub(crate) name: &'static str,
    pub(crate) seeds: &'static str,
    pub(crate) needs: &'static str,
    pub(crate) what: &'static str,
}

/// `reproduce --list`: the catalogue.
#[derive(Debug, Serialize)]
#[doc(hidden)]
pub struct List {
    pub(crate) reproductions: Vec<ListEntry>,
}

impl List {
    pub(crate) fn all() -> List {
        List {
            reproductions: ENTRIES
                .iter()
                .map(|e| ListEntry {
                    name: e.name.as_str(),
                    seeds: e.seeds,
                    needs: e.needs,
                    what: e.what,
                })
                .collect(),
        }
    }
}
