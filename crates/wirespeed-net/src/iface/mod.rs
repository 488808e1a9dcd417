//! What Linux knows about a network interface: its link settings and its error counters, read
//! the way ethtool reads them, for `wirespeed diagnose`.
//!
//! Link settings come from ethtool netlink where the kernel has it (ETHTOOL_MSG_LINKMODES_GET),
//! else from the SIOCETHTOOL ioctl (ETHTOOL_GLINKSETTINGS), else from sysfs `speed` and
//! `duplex`; the result names its source. Counters are the standard ones of
//! `/sys/class/net/IFACE/statistics` (each file must be readable: a missing one is an error,
//! not a zero), plus the IEEE 802.3 MAC and RMON statistics (late collisions, FCS and alignment
//! errors, undersize frames and fragments) where the driver reports them through ethtool
//! netlink (ETHTOOL_MSG_STATS_GET).
//!
//! [`Reader::sample`] reads every interface twice, an interval apart, so that the diagnosis
//! sees what grows now. A [`Reader`] over another sysfs root (a directory tree laid out like
//! /sys/class/net) reads only files: that is how tests and `WIRESPEED_SYSFS_NET` replay
//! counters of a NIC this machine does not have.

// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
#[doc(hidden)]
pub mod ioctl;
#[doc(hidden)]
pub mod netlink;
#[doc(hidden)]
pub mod nlwire;
#[doc(hidden)]
pub mod qdisc;
#[doc(hidden)]
pub mod sockdiag;
mod sysfs;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wirespeed_model::autoneg::{Abilities, Duplex, Technology};
use wirespeed_model::diagnose::{Counters, Evidence, InterfaceKind, LinkSettings};

/// Why an interface could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IfaceError {
    /// No interface of that name in this network namespace.
    #[error("no such interface: {name} (the interfaces here are: {known}; see `ip link`)")]
    NoSuchInterface {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// A counter file is missing or unreadable.
    #[error(
        "cannot read the counter {path}: {source} (is sysfs mounted, and is this a network interface?)"
    )]
    Counter {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A counter file holds something else than a number.
    #[error("the counter {path} holds {text:?}, not a number")]
    CounterNotANumber {
        /// The file.
        path: String,
        /// What it holds.
        text: String,
    },
    /// The interface directory cannot be listed.
    #[error("cannot list interfaces in {path}: {source}")]
    List {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The kernel's index of interface `name` in this network namespace, `None` if it has none.
pub fn index(name: &str) -> Option<u32> {
    crate::sys::netdevice::index(name)
}

/// The queueing discipline attached to `ifname` as `tc qdisc show` names it (`noqueue`, `fq`,
/// `mq (fq_codel on 4 queues)`), or `None` where rtnetlink cannot tell.
pub fn root_qdisc(ifname: &str) -> Option<String> {
    let index = crate::sys::netdevice::index(ifname)?;
    qdisc::describe(&qdisc::dump().ok()?, index as i32)
}

pub use sockdiag::TcpQueue;

/// What the queueing discipline of `ifname` holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QdiscBacklog {
    /// The discipline, as [`root_qdisc`] names it.
    pub kind: String,
    /// Packets queued in it.
    pub packets: u64,
    /// Bytes queued in it.
    pub bytes: u64,
}

/// The qdisc of `ifname` and its backlog now (`tc -s qdisc show dev IFNAME`), or `None` where
/// rtnetlink cannot tell. `noqueue` holds nothing and reports zeros.
pub fn qdisc_backlog(ifname: &str) -> Option<QdiscBacklog> {
    let index = crate::sys::netdevice::index(ifname)? as i32;
    let all = qdisc::dump().ok()?;
    let kind = qdisc::describe(&all, index)?;
    let (packets, bytes) = qdisc::root_backlog(&all, index).unwrap_or((0, 0));
    Some(QdiscBacklog {
        kind,
        packets: u64::from(packets),
        bytes: u64::from(bytes),
    })
}

/// Bytes handed to `ifname`'s driver and not yet completed, summed over its transmit queues
/// (BQL's `byte_queue_limits/inflight`): the NIC ring's share of a standing queue. `None` when
/// the device has no BQL (loopback, TAP, veth).
pub fn bql_inflight(ifname: &str) -> Option<u64> {
    if ifname.is_empty() || ifname.contains('/') || ifname.starts_with('.') {
        return None;
    }
    let dir = Path::new("/sys/class/net").join(ifname).join("queues");
    let mut total = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten().take(4096) {
        if !entry.file_name().to_string_lossy().starts_with("tx-") {
            continue;
        }
        let file = entry.path().join("byte_queue_limits/inflight");
        if let Some(v) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
        {
            *total.get_or_insert(0) += v;
        }
    }
    total
}

/// Every established TCP socket of this network namespace and what it holds queued (sock_diag
/// netlink, as `ss -tin`), or `None` where the kernel does not answer.
pub fn tcp_queues() -> Option<Vec<TcpQueue>> {
    sockdiag::dump().ok()
}

/// ethtool link-mode bits of the seed's technologies (enum ethtool_link_mode_bit_indices).
const LINK_MODE_BITS: [(usize, Technology); 6] = [
    (0, Technology::Base10THalf),
    (1, Technology::Base10TFull),
    (2, Technology::Base100TxHalf),
    (3, Technology::Base100TxFull),
    (4, Technology::Base1000THalf),
    (5, Technology::Base1000TFull),
];

/// The technologies of a kernel link-mode bitmap.
#[doc(hidden)]
pub fn abilities(words: &[u32]) -> Abilities {
    LINK_MODE_BITS
        .iter()
        .filter(|&&(bit, _)| {
            words
                .get(bit / 32)
                .is_some_and(|w| w & (1 << (bit % 32)) != 0)
        })
        .map(|&(_, t)| t)
        .collect()
}

#[doc(hidden)]
pub fn duplex_of(code: u8) -> Option<Duplex> {
    match code {
        0 => Some(Duplex::Half),
        1 => Some(Duplex::Full),
        _ => None,
    }
}

#[doc(hidden)]
pub fn speed_of(speed: u32) -> Option<u32> {
    (speed != 0 && speed != u32::MAX).then_some(speed)
}

/// Standard-statistics indices (ETHTOOL_A_STATS_ETH_MAC_*, ETHTOOL_A_STATS_RMON_*).
mod std_stat {
    pub(super) const ETH_MAC: u32 = 1;
    pub(super) const RMON: u32 = 3;
    pub(super) const SINGLE_COL: u16 = 1;
    pub(super) const MULTI_COL: u16 = 2;
    pub(super) const FCS_ERR: u16 = 4;
    pub(super) const ALIGN_ERR: u16 = 5;
    pub(super) const LATE_COL: u16 = 8;
    pub(super) const XS_COL: u16 = 9;
    pub(super) const UNDERSIZE: u16 = 0;
    pub(super) const FRAG: u16 = 2;
}

/// An interface's speed as far as it can be believed ([`Reader::trusted_speed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedSpeed {
    /// What the interface is.
    pub kind: InterfaceKind,
    /// Mbit/s, only for a NIC with a physical layer that reports a speed.
    pub mbps: Option<u32>,
}

impl TrustedSpeed {
    /// Bit/s, when known.
    pub fn bits_per_second(&self) -> Option<u64> {
        self.mbps.map(|m| u64::from(m) * 1_000_000)
    }
}

/// Reads interfaces of this network namespace (or of a sysfs-like tree).
#[derive(Debug, Clone)]
pub struct Reader {
    root: PathBuf,
    kernel: bool,
}

impl Default for Reader {
    fn default() -> Reader {
        Reader::system()
    }
}

impl Reader {
    /// The running system: /sys/class/net, ethtool netlink and ioctls.
    pub fn system() -> Reader {
        Reader {
            root: PathBuf::from("/sys/class/net"),
            kernel: true,
        }
    }

    /// Files only, under `root` laid out like /sys/class/net (for replaying counters).
    pub fn files(root: impl Into<PathBuf>) -> Reader {
        Reader {
            root: root.into(),
            kernel: false,
        }
    }

    /// The interface names, sorted.
    pub fn interfaces(&self) -> Result<Vec<String>, IfaceError> {
        let list = std::fs::read_dir(&self.root).map_err(|source| IfaceError::List {
            path: self.root.display().to_string(),
            source,
        })?;
        let mut names: Vec<String> = list
            .filter_map(Result::ok)
            .filter(|e| e.path().join("statistics").is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    fn dir(&self, name: &str) -> Result<PathBuf, IfaceError> {
        let dir = self.root.join(name);
        if name.is_empty() || name.contains('/') || !dir.join("statistics").is_dir() {
            let known = self.interfaces().map(|n| n.join(", ")).unwrap_or_default();
            return Err(IfaceError::NoSuchInterface {
                name: name.to_string(),
                known,
            });
        }
        Ok(dir)
    }

    /// The speed a link-rate ceiling may rest on, with the interface's kind: the driver's
    /// figure for a NIC with a physical layer, and `None` for every other kind (loopback, veth,
    /// TAP, TUN, bridges, bonds, VLANs, paravirtual NICs such as virtio_net): their speed is a
    /// constant of the driver, not of any wire (a TAP reports 10 Gbit/s whatever the emulator
    /// behind it serializes at). This is the one rule every command that turns an interface
    /// speed into a ceiling uses; `diagnose` reports the same kinds as having no physical layer.
    pub fn trusted_speed(&self, name: &str) -> Result<TrustedSpeed, IfaceError> {
        let dir = self.dir(name)?;
        let driver = self.kernel.then(|| ioctl::driver(name).ok()).flatten();
        let kind = sysfs::kind(&dir, driver.as_deref());
        let mbps = if kind.has_phy() {
            sysfs::speed(&dir)
        } else {
            None
        };
        Ok(TrustedSpeed { kind, mbps })
    }

    /// The interface's kind and link settings; `warnings` gets what could not be read.
    pub fn link(
        &self,
        name: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(InterfaceKind, LinkSettings), IfaceError> {
        let dir = self.dir(name)?;
        let driver = self.kernel.then(|| ioctl::driver(name).ok()).flatten();
        let kind = sysfs::kind(&dir, driver.as_deref());
        let mut link = LinkSettings {
            carrier: sysfs::carrier(&dir),
            ..LinkSettings::default()
        };
        if self.kernel && kind != InterfaceKind::Loopback {
            match netlink::Ethtool::open().and_then(|mut e| e.link_modes(name)) {
                Ok(m) => {
                    link.source = "ethtool netlink".into();
                    link.speed_mbps = m.speed.and_then(speed_of);
                    link.duplex = m.duplex.and_then(duplex_of);
                    link.autoneg = m.autoneg.map(|a| a != 0);
                    link.supported = m.supported.as_deref().map(abilities);
                    link.advertised = m.advertised.as_deref().map(abilities);
                    // The kernel leaves the peer set out when it is empty: with
                    // auto-negotiation on, that is a partner that advertised nothing.
                    link.partner_advertised = match (m.partner.as_deref(), link.autoneg) {
                        (Some(words), _) => Some(abilities(words)),
                        (None, Some(true)) => Some(Abilities::NONE),
                        (None, _) => None,
                    };
                }
                Err(nl) => match ioctl::link_settings(name) {
                    Ok(s) => {
                        link.source = "ethtool ioctl".into();
                        link.speed_mbps = speed_of(s.speed);
                        link.duplex = duplex_of(s.duplex);
                        link.autoneg = Some(s.autoneg != 0);
                        link.supported = Some(abilities(&s.supported));
                        link.advertised = Some(abilities(&s.advertising));
                        link.partner_advertised = Some(abilities(&s.lp_advertising));
                    }
                    Err(io) => {
                        if kind.has_phy() {
                            warnings.push(format!("{name}: link settings from sysfs only (ethtool netlink: {nl}; ioctl: {io})"));
                        }
                    }
                },
            }
        }
        if link.source.is_empty() {
            link.source = "sysfs".into();
            link.speed_mbps = sysfs::speed(&dir);
            link.duplex = sysfs::duplex(&dir);
        }
        Ok((kind, link))
    }

    /// The counters now: sysfs statistics, plus the 802.3 and RMON ones the driver reports.
    pub fn counters(&self, name: &str) -> Result<Counters, IfaceError> {
        let dir = self.dir(name)?;
        let mut c = sysfs::counters(&dir)?;
        if self.kernel
            && let Ok(stats) = netlink::Ethtool::open().and_then(|mut e| e.std_stats(name))
        {
            use std_stat::*;
            c.single_collision_frames = stats.get(ETH_MAC, SINGLE_COL);
            c.multiple_collision_frames = stats.get(ETH_MAC, MULTI_COL);
            c.late_collisions = stats.get(ETH_MAC, LATE_COL);
            c.excessive_collisions = stats.get(ETH_MAC, XS_COL);
            if let Some(fcs) = stats.get(ETH_MAC, FCS_ERR) {
                c.fcs_errors = c.fcs_errors.max(fcs);
            }
            if let Some(align) = stats.get(ETH_MAC, ALIGN_ERR) {
                c.alignment_errors = c.alignment_errors.max(align);
            }
            c.undersize = stats.get(RMON, UNDERSIZE);
            c.fragments = stats.get(RMON, FRAG);
        }
        Ok(c)
    }

    /// Reads `names` (all interfaces if empty), waits `interval`, reads the counters again.
    pub fn sample(
        &self,
        names: &[String],
        interval: Duration,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<Evidence>, IfaceError> {
        self.sample_while(names, warnings, || std::thread::sleep(interval))
            .map(|(evidence, ())| evidence)
    }

    /// Reads `names` (all interfaces if empty), runs `during` (a transfer, for counters under
    /// load), reads the counters again.
    pub fn sample_while<T>(
        &self,
        names: &[String],
        warnings: &mut Vec<String>,
        during: impl FnOnce() -> T,
    ) -> Result<(Vec<Evidence>, T), IfaceError> {
        let names = if names.is_empty() {
            self.interfaces()?
        } else {
            names.to_vec()
        };
        let mut first = Vec::with_capacity(names.len());
        for name in &names {
            let (kind, link) = self.link(name, warnings)?;
            first.push((name.clone(), kind, link, self.counters(name)?));
        }
        let start = Instant::now();
        let value = during();
        let mut out = Vec::with_capacity(first.len());
        for (name, kind, link, before) in first {
            let after = self.counters(&name)?;
            out.push(Evidence {
                name,
                kind,
                link,
                first: before,
                second: after,
                interval_seconds: start.elapsed().as_secs_f64(),
            });
        }
        Ok((out, value))
    }

    /// The sysfs root this reader uses.
    pub fn root(&self) -> &Path {
        &self.root
    }
}
