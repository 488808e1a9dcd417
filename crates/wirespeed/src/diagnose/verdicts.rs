//! The diagnosis's verdicts and warnings as typed values (issue 30).
//!
//! A verdict on an interface or on the peer test takes the `kind` of the model's rule that
//! concluded it (`wirespeed_model::diagnose::FindingKind`: `duplex_mismatch_half_side`,
//! `asymmetric_transfer`, ...), so a script reads the same word in `findings` as in the
//! interface's diagnosis; `healthy` and `symmetric_transfer` are the verdicts no rule fired for.

use std::fmt;
use std::net::SocketAddr;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use wirespeed_model::diagnose::peer::Transfer;
use wirespeed_model::diagnose::{Confidence, Finding, FindingKind, Severity};

use super::result::{InterfaceReport, PeerReport};

/// The verdict on one interface or on the peer test.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum DiagnoseVerdict {
    /// A rule found a fault on the interface.
    Fault {
        interface: String,
        rule: FindingKind,
        title: String,
        confidence: Confidence,
    },
    /// No physical layer (loopback, veth, a bridge): nothing to diagnose at the PHY.
    NoPhysicalLayer {
        interface: String,
        /// What the interface is instead.
        interface_kind: String,
    },
    /// Healthy, but a rule found something to check.
    HealthyBut {
        interface: String,
        rule: FindingKind,
        title: String,
    },
    /// No rule fired.
    Healthy { interface: String },
    /// A rule of the peer test fired.
    Peer {
        peer: SocketAddr,
        rule: FindingKind,
        title: String,
        confidence: Confidence,
        to_peer_bits_per_second: f64,
        from_peer_bits_per_second: f64,
    },
    /// Both directions of the peer test within the asymmetry ratio of each other.
    SymmetricTransfer {
        peer: SocketAddr,
        /// The ratio a duplex mismatch's slow direction must reach without counters behind it.
        asymmetry_ratio: f64,
        to_peer_bits_per_second: f64,
        from_peer_bits_per_second: f64,
    },
}

impl Serialize for DiagnoseVerdict {
    // The kind is the rule's own where a rule fired, so it cannot come from a serde tag.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        match self {
            DiagnoseVerdict::Fault {
                interface,
                rule,
                confidence,
                ..
            } => {
                m.serialize_entry("kind", rule)?;
                m.serialize_entry("interface", interface)?;
                m.serialize_entry("level", &Severity::Fault)?;
                m.serialize_entry("confidence", confidence)?;
            }
            DiagnoseVerdict::NoPhysicalLayer {
                interface,
                interface_kind,
            } => {
                m.serialize_entry("kind", &FindingKind::NoPhysicalLayer)?;
                m.serialize_entry("interface", interface)?;
                m.serialize_entry("interface_kind", interface_kind)?;
            }
            DiagnoseVerdict::HealthyBut {
                interface, rule, ..
            } => {
                m.serialize_entry("kind", rule)?;
                m.serialize_entry("interface", interface)?;
                m.serialize_entry("level", &Severity::Warning)?;
            }
            DiagnoseVerdict::Healthy { interface } => {
                m.serialize_entry("kind", "healthy")?;
                m.serialize_entry("interface", interface)?;
            }
            DiagnoseVerdict::Peer {
                peer,
                rule,
                confidence,
                to_peer_bits_per_second,
                from_peer_bits_per_second,
                ..
            } => {
                m.serialize_entry("kind", rule)?;
                m.serialize_entry("peer", peer)?;
                m.serialize_entry("confidence", confidence)?;
                m.serialize_entry("to_peer_bits_per_second", to_peer_bits_per_second)?;
                m.serialize_entry("from_peer_bits_per_second", from_peer_bits_per_second)?;
            }
            DiagnoseVerdict::SymmetricTransfer {
                peer,
                asymmetry_ratio,
                to_peer_bits_per_second,
                from_peer_bits_per_second,
            } => {
                m.serialize_entry("kind", "symmetric_transfer")?;
                m.serialize_entry("peer", peer)?;
                m.serialize_entry("asymmetry_ratio", asymmetry_ratio)?;
                m.serialize_entry("to_peer_bits_per_second", to_peer_bits_per_second)?;
                m.serialize_entry("from_peer_bits_per_second", from_peer_bits_per_second)?;
            }
        }
        m.end()
    }
}

pub(super) fn confidence_word(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "high",
        Confidence::Medium => "medium",
        Confidence::Low => "low",
    }
}

impl fmt::Display for DiagnoseVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnoseVerdict::Fault {
                interface,
                title,
                confidence,
                ..
            } => write!(
                f,
                "{interface}: {title} ({} confidence)",
                confidence_word(*confidence)
            ),
            DiagnoseVerdict::NoPhysicalLayer {
                interface,
                interface_kind,
            } => write!(
                f,
                "{interface}: no physical layer ({interface_kind}); nothing to diagnose at the PHY"
            ),
            DiagnoseVerdict::HealthyBut {
                interface, title, ..
            } => write!(f, "{interface}: healthy, but {title}"),
            DiagnoseVerdict::Healthy { interface } => write!(f, "{interface}: healthy"),
            DiagnoseVerdict::Peer {
                peer,
                title,
                confidence,
                ..
            } => write!(
                f,
                "peer {peer}: {title} ({} confidence)",
                confidence_word(*confidence)
            ),
            DiagnoseVerdict::SymmetricTransfer {
                peer,
                asymmetry_ratio,
                ..
            } => write!(
                f,
                "peer {peer}: both directions within {asymmetry_ratio}x of each other: no duplex-mismatch signature end to end"
            ),
        }
    }
}

/// The verdict on one interface: its first fault, else no PHY, else its first warning, else
/// healthy.
#[doc(hidden)]
pub fn interface_verdict(r: &InterfaceReport) -> DiagnoseVerdict {
    let interface = r.evidence.name.clone();
    match r.diagnosis.findings.first() {
        Some(f) if f.severity == Severity::Fault => DiagnoseVerdict::Fault {
            interface,
            rule: f.kind,
            title: f.title.clone(),
            confidence: f.confidence,
        },
        _ if !r.evidence.kind.has_phy() => DiagnoseVerdict::NoPhysicalLayer {
            interface,
            interface_kind: r.evidence.kind.describe(),
        },
        Some(f) if f.severity == Severity::Warning => DiagnoseVerdict::HealthyBut {
            interface,
            rule: f.kind,
            title: f.title.clone(),
        },
        _ => DiagnoseVerdict::Healthy { interface },
    }
}

/// The verdicts of the peer test: one per finding, or one saying the directions agree.
#[doc(hidden)]
pub fn peer_verdicts(p: &PeerReport, asymmetry_ratio: f64) -> Vec<DiagnoseVerdict> {
    let rates = |t: &Transfer| t.bits_per_second;
    let mut out: Vec<DiagnoseVerdict> = p
        .findings
        .iter()
        .map(|f: &Finding| DiagnoseVerdict::Peer {
            peer: p.agent,
            rule: f.kind,
            title: f.title.clone(),
            confidence: f.confidence,
            to_peer_bits_per_second: rates(&p.to_peer),
            from_peer_bits_per_second: rates(&p.from_peer),
        })
        .collect();
    if out.is_empty() {
        out.push(DiagnoseVerdict::SymmetricTransfer {
            peer: p.agent,
            asymmetry_ratio,
            to_peer_bits_per_second: rates(&p.to_peer),
            from_peer_bits_per_second: rates(&p.from_peer),
        });
    }
    out
}

/// What may make the diagnosis less trustworthy, from the peer test.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum DiagnoseWarning {
    /// A transfer of `--peer` stalled or failed part way: its rate is what was counted before.
    TransferEndedEarly {
        /// "to the peer" or "from the peer".
        direction: String,
        error: String,
        /// Whose count the rate is: "receiver", or "sender" when the agent's view is missing.
        counted_by: String,
    },
}

impl fmt::Display for DiagnoseWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnoseWarning::TransferEndedEarly {
                direction,
                error,
                counted_by,
            } => write!(
                f,
                "--peer: the transfer {direction} ended early ({error}); its rate is what the {counted_by} counted before"
            ),
        }
    }
}

/// The kind of the interface reader's warnings: the one it gives is that ethtool could not be
/// read, so the link settings come from sysfs alone.
#[doc(hidden)]
pub const READER_WARNING_KIND: &str = "link_settings_from_sysfs_only";
