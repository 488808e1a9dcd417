//! From an interface's settings and counters to the fault that fits them.
//!
//! The evidence is what Linux shows of a NIC: speed, duplex, auto-negotiation and the two
//! advertisements (ethtool), and the error counters, read twice over an interval so that a
//! counter that grows now is told from one that grew last month. The rules are the seed's
//! (Erickson, seed 003, §8.2-8.4 and Appendix B), in the form NDT and Shalunov & Carlson
//! ("Detecting Duplex Mismatch on Ethernet", PAM 2005) use them:
//!
//! * the half-duplex end of a duplex mismatch records *late* collisions (Table 7: 6,088 late
//!   collisions for 6,087 collisions on DUT01);
//! * the full-duplex end records FCS (CRC) errors and runts and no collisions at all, because a
//!   full-duplex MAC ignores collisions (Table 7: 3,022 CRC errors on DUT02);
//! * collisions on a full-duplex link mean the MAC is not running the duplex it reports;
//! * a link below the best mode both advertisements share has been downshifted (a cable fault);
//! * errors that grow with traffic over the sampling interval are happening now (Appendix B's
//!   Xmit-Err and Rcv-Err: buffers that overflow under load).
//!
//! Healthy half duplex has collisions but no late ones (Table 6: 12,967 collisions, no other
//! errors), and its runts and alignment errors are collision fragments (Table 9 test 6). An
//! interface without a physical layer (loopback, veth, tap, bridge) has no duplex to be wrong:
//! it is reported as such, never as a fault.
//!
//! Every finding carries its evidence (the counters and settings it rests on), the likely cause
//! (Appendix B), the fix and a confidence.

pub mod peer;
pub mod rules;

use serde::Serialize;

use crate::autoneg::{Abilities, Duplex};

pub use rules::diagnose;

/// What kind of interface, as far as the physical layer goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "driver")]
pub enum InterfaceKind {
    /// The loopback interface.
    Loopback,
    /// One end of a virtual Ethernet pair.
    Veth,
    /// A TUN device (layer 3).
    Tun,
    /// A TAP device (layer 2).
    Tap,
    /// A software bridge.
    Bridge,
    /// A bond of other interfaces.
    Bond,
    /// An 802.1Q VLAN on top of another interface.
    Vlan,
    /// A dummy interface.
    Dummy,
    /// A wireless interface (802.11 has no duplex in the Ethernet sense).
    Wireless,
    /// A paravirtual NIC of a virtual machine (virtio_net, vmxnet3, ...): the host's switch,
    /// not a PHY, is on the other side.
    Paravirtual(String),
    /// Another software interface (no device behind it).
    Virtual(String),
    /// A NIC with a physical layer.
    Physical(String),
    /// A TAP device whose MAC a wirespeed lab's emulator runs (CSMA/CD on a half-duplex or
    /// mismatched link), named with the lab and its medium: the emulator counts what a NIC's
    /// MAC would (collisions, late collisions, FCS errors, runts), so the PHY rules read those
    /// counters as a NIC driver's 802.3 statistics.
    EmulatedMac(String),
}

impl InterfaceKind {
    /// Whether speed, duplex and collisions mean anything here.
    pub fn has_phy(&self) -> bool {
        matches!(
            self,
            InterfaceKind::Physical(_) | InterfaceKind::EmulatedMac(_)
        )
    }

    /// A phrase for people: "loopback", "veth pair end", "NIC (e1000e)".
    pub fn describe(&self) -> String {
        match self {
            InterfaceKind::Loopback => "loopback".into(),
            InterfaceKind::Veth => "veth (virtual Ethernet pair)".into(),
            InterfaceKind::Tun => "TUN device".into(),
            InterfaceKind::Tap => "TAP device".into(),
            InterfaceKind::Bridge => "bridge".into(),
            InterfaceKind::Bond => "bond".into(),
            InterfaceKind::Vlan => "VLAN".into(),
            InterfaceKind::Dummy => "dummy".into(),
            InterfaceKind::Wireless => "wireless".into(),
            InterfaceKind::Paravirtual(d) => format!("paravirtual NIC ({d})"),
            InterfaceKind::Virtual(d) => format!("virtual interface ({d})"),
            InterfaceKind::Physical(d) => format!("NIC ({d})"),
            InterfaceKind::EmulatedMac(d) => format!("TAP device, MAC emulated by {d}"),
        }
    }
}

/// Link settings as the driver reports them; `None` where it reports nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinkSettings {
    /// Carrier present.
    pub carrier: Option<bool>,
    /// Speed in Mbit/s.
    pub speed_mbps: Option<u32>,
    /// Duplex.
    pub duplex: Option<Duplex>,
    /// Auto-negotiation enabled.
    pub autoneg: Option<bool>,
    /// Modes the hardware supports (of the seed's Table 1).
    pub supported: Option<Abilities>,
    /// Modes this end advertises.
    pub advertised: Option<Abilities>,
    /// Modes the link partner advertised; empty when the partner did not negotiate.
    pub partner_advertised: Option<Abilities>,
    /// Where the settings came from: "ethtool netlink", "ethtool ioctl", "sysfs".
    pub source: String,
}

/// Interface counters at one instant. Standard Linux counters (`/sys/class/net/*/statistics`)
/// are always present; the IEEE 802.3 MAC counters (ethtool's standard statistics) only when
/// the driver has them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Frames received.
    pub rx_packets: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Collisions (Linux `collisions`).
    pub collisions: u64,
    /// FCS (CRC) errors (`rx_crc_errors`, or 802.3 FrameCheckSequenceErrors).
    pub fcs_errors: u64,
    /// Alignment / frame errors (`rx_frame_errors`, or 802.3 AlignmentErrors).
    pub alignment_errors: u64,
    /// Length errors: runts and giants (`rx_length_errors`).
    pub length_errors: u64,
    /// Late collisions as Linux counts them: `tx_window_errors`.
    pub tx_window_errors: u64,
    /// Frames aborted after too many collisions (`tx_aborted_errors`).
    pub tx_aborted_errors: u64,
    /// Carrier sense errors (`tx_carrier_errors`).
    pub tx_carrier_errors: u64,
    /// Receive FIFO overruns (`rx_fifo_errors`): Appendix B's Rcv-Err.
    pub rx_fifo_errors: u64,
    /// Transmit FIFO underruns (`tx_fifo_errors`): Appendix B's Xmit-Err.
    pub tx_fifo_errors: u64,
    /// Frames missed for lack of buffers (`rx_missed_errors`).
    pub rx_missed_errors: u64,
    /// Receive ring overflows (`rx_over_errors`).
    pub rx_over_errors: u64,
    /// Received frames dropped (`rx_dropped`).
    pub rx_dropped: u64,
    /// Frames dropped before sending (`tx_dropped`).
    pub tx_dropped: u64,
    /// 802.3 aLateCollisions, when the driver reports it.
    pub late_collisions: Option<u64>,
    /// 802.3 aSingleCollisionFrames.
    pub single_collision_frames: Option<u64>,
    /// 802.3 aMultipleCollisionFrames.
    pub multiple_collision_frames: Option<u64>,
    /// 802.3 aFramesAbortedDueToXSColls.
    pub excessive_collisions: Option<u64>,
    /// RMON etherStatsUndersizePkts (runts with a good FCS).
    pub undersize: Option<u64>,
    /// RMON etherStatsFragments (runts with a bad FCS: collision fragments).
    pub fragments: Option<u64>,
}

impl Counters {
    /// Late collisions: the 802.3 counter when there is one, else `tx_window_errors`.
    pub fn late(&self) -> u64 {
        self.late_collisions.unwrap_or(self.tx_window_errors)
    }

    /// Runts: RMON undersize + fragments when reported, else Linux length errors.
    pub fn runts(&self) -> u64 {
        match (self.undersize, self.fragments) {
            (None, None) => self.length_errors,
            (u, f) => u.unwrap_or(0) + f.unwrap_or(0),
        }
    }

    /// Collisions: Linux's count, or the 802.3 single + multiple collision frames if larger.
    pub fn all_collisions(&self) -> u64 {
        let ieee =
            self.single_collision_frames.unwrap_or(0) + self.multiple_collision_frames.unwrap_or(0);
        self.collisions.max(ieee)
    }

    /// Receive-side damage: FCS, alignment and runts.
    pub fn damaged(&self) -> u64 {
        self.fcs_errors + self.alignment_errors + self.runts()
    }

    /// Buffer overflows and drops (Appendix B's Xmit-Err and Rcv-Err).
    pub fn overflows(&self) -> u64 {
        self.rx_fifo_errors
            + self.tx_fifo_errors
            + self.rx_missed_errors
            + self.rx_over_errors
            + self.rx_dropped
            + self.tx_dropped
    }

    /// Every error of the physical and MAC layers.
    pub fn errors(&self) -> u64 {
        self.damaged() + self.late() + self.tx_aborted_errors + self.tx_carrier_errors
    }

    /// How much each counter grew since `before` (a counter that went backwards, as after a
    /// driver reset, counts from zero).
    pub fn since(&self, before: &Counters) -> Counters {
        let d = |now: u64, then: u64| now.checked_sub(then).unwrap_or(now);
        let o = |now: Option<u64>, then: Option<u64>| match (now, then) {
            (Some(n), Some(t)) => Some(d(n, t)),
            (n, _) => n,
        };
        Counters {
            rx_packets: d(self.rx_packets, before.rx_packets),
            tx_packets: d(self.tx_packets, before.tx_packets),
            rx_bytes: d(self.rx_bytes, before.rx_bytes),
            tx_bytes: d(self.tx_bytes, before.tx_bytes),
            collisions: d(self.collisions, before.collisions),
            fcs_errors: d(self.fcs_errors, before.fcs_errors),
            alignment_errors: d(self.alignment_errors, before.alignment_errors),
            length_errors: d(self.length_errors, before.length_errors),
            tx_window_errors: d(self.tx_window_errors, before.tx_window_errors),
            tx_aborted_errors: d(self.tx_aborted_errors, before.tx_aborted_errors),
            tx_carrier_errors: d(self.tx_carrier_errors, before.tx_carrier_errors),
            rx_fifo_errors: d(self.rx_fifo_errors, before.rx_fifo_errors),
            tx_fifo_errors: d(self.tx_fifo_errors, before.tx_fifo_errors),
            rx_missed_errors: d(self.rx_missed_errors, before.rx_missed_errors),
            rx_over_errors: d(self.rx_over_errors, before.rx_over_errors),
            rx_dropped: d(self.rx_dropped, before.rx_dropped),
            tx_dropped: d(self.tx_dropped, before.tx_dropped),
            late_collisions: o(self.late_collisions, before.late_collisions),
            single_collision_frames: o(
                self.single_collision_frames,
                before.single_collision_frames,
            ),
            multiple_collision_frames: o(
                self.multiple_collision_frames,
                before.multiple_collision_frames,
            ),
            excessive_collisions: o(self.excessive_collisions, before.excessive_collisions),
            undersize: o(self.undersize, before.undersize),
            fragments: o(self.fragments, before.fragments),
        }
    }
}

/// Everything known about one interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// Interface name.
    pub name: String,
    /// What kind of interface.
    pub kind: InterfaceKind,
    /// Link settings.
    pub link: LinkSettings,
    /// Counters at the first reading.
    pub first: Counters,
    /// Counters at the second reading.
    pub second: Counters,
    /// Seconds between the readings.
    pub interval_seconds: f64,
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// One of several explanations.
    Low,
    /// The likely explanation.
    Medium,
    /// The signature fits and little else does.
    High,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// A risk or a configuration to check.
    Warning,
    /// Something is wrong now.
    Fault,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// No physical layer: nothing to diagnose at the PHY.
    NoPhysicalLayer,
    /// No carrier.
    NoLink,
    /// Duplex mismatch, seen from the half-duplex end.
    DuplexMismatchHalfSide,
    /// Duplex mismatch, seen from the full-duplex end.
    DuplexMismatchFullSide,
    /// Collisions recorded on a link that reports full duplex.
    CollisionsOnFullDuplex,
    /// Frame damage (FCS, alignment, runts) without a duplex explanation.
    DamagedFrames,
    /// The link runs below the best mode both advertisements share.
    BelowAdvertised,
    /// The partner did not negotiate; this end is half duplex by parallel detection.
    ParallelDetection,
    /// Auto-negotiation is off with full duplex forced.
    ForcedFullDuplex,
    /// Half duplex, with the collisions that are normal there.
    HalfDuplex,
    /// Errors grew during the sampling interval while traffic flowed.
    ErrorsGrowing,
    /// Drops and buffer overruns grew during the interval.
    OverflowsGrowing,
    /// `diagnose --peer`: one direction of a transfer several times slower than the other.
    AsymmetricTransfer,
}

/// One conclusion, with what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// How bad.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// The counters and settings it rests on.
    pub evidence: Vec<String>,
    /// The likely cause (the seed's Appendix B).
    pub cause: String,
    /// What to do.
    pub fix: String,
    /// How sure.
    pub confidence: Confidence,
}

/// Per-second rates over the interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rates {
    /// Frames received per second.
    pub rx_packets_per_second: f64,
    /// Frames sent per second.
    pub tx_packets_per_second: f64,
    /// Receive rate in bits per second.
    pub rx_bits_per_second: f64,
    /// Send rate in bits per second.
    pub tx_bits_per_second: f64,
    /// PHY and MAC errors per second.
    pub errors_per_second: f64,
    /// Drops and overruns per second.
    pub overflows_per_second: f64,
}

/// The diagnosis of one interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// Whether any finding is a fault.
    pub healthy: bool,
    /// Rates over the interval.
    pub rates: Rates,
    /// How the counters grew over the interval.
    pub delta: Counters,
    /// The findings, worst first.
    pub findings: Vec<Finding>,
}
