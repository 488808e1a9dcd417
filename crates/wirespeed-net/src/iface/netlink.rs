//! A small generic netlink client for the kernel's ethtool family (Documentation/networking/
//! ethtool-netlink.rst): link modes (speed, duplex, auto-negotiation, our and the partner's
//! advertisement) and the standard IEEE 802.3 / RMON statistics.
//!
//! Hand-written on purpose: three requests do not justify an async netlink stack, and the bytes
//! are checked by [`super::nlwire`].

use std::io;
use std::io::Read;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use super::nlwire::{self, Attrs, NLM_F_ACK, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, Request};

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

const ETHTOOL_GENL_VERSION: u8 = 1;
const ETHTOOL_MSG_LINKMODES_GET: u8 = 4;
const ETHTOOL_MSG_STATS_GET: u8 = 32;
pub const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;
const ETHTOOL_A_HEADER_FLAGS: u16 = 3;
const ETHTOOL_FLAG_COMPACT_BITSETS: u32 = 1;

pub const ETHTOOL_A_LINKMODES_HEADER: u16 = 1;
pub const ETHTOOL_A_LINKMODES_AUTONEG: u16 = 2;
pub const ETHTOOL_A_LINKMODES_OURS: u16 = 3;
pub const ETHTOOL_A_LINKMODES_PEER: u16 = 4;
pub const ETHTOOL_A_LINKMODES_SPEED: u16 = 5;
pub const ETHTOOL_A_LINKMODES_DUPLEX: u16 = 6;

pub const ETHTOOL_A_BITSET_NOMASK: u16 = 1;
pub const ETHTOOL_A_BITSET_SIZE: u16 = 2;
pub const ETHTOOL_A_BITSET_VALUE: u16 = 4;
pub const ETHTOOL_A_BITSET_MASK: u16 = 5;

const ETHTOOL_A_STATS_HEADER: u16 = 2;
const ETHTOOL_A_STATS_GROUPS: u16 = 3;
pub const ETHTOOL_A_STATS_GRP: u16 = 4;
pub const ETHTOOL_A_STATS_GRP_ID: u16 = 2;
pub const ETHTOOL_A_STATS_GRP_STAT: u16 = 4;
/// Stats groups: eth-phy (0), eth-mac (1), eth-ctrl (2), rmon (3).
pub const STATS_GROUP_ETH_MAC: u32 = 1;
const STATS_GROUP_RMON: u32 = 3;

/// What went wrong talking to the kernel.
#[derive(Debug)]
pub enum NlError {
    Io(io::Error),
    /// The kernel answered with this errno.
    Kernel(i32),
    Malformed(&'static str),
}

impl From<io::Error> for NlError {
    fn from(e: io::Error) -> NlError {
        NlError::Io(e)
    }
}

impl From<nlwire::Malformed> for NlError {
    fn from(e: nlwire::Malformed) -> NlError {
        NlError::Malformed(e.0)
    }
}

impl std::fmt::Display for NlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NlError::Io(e) => write!(f, "netlink socket: {e}"),
            NlError::Kernel(errno) => {
                write!(f, "kernel: {}", io::Error::from_raw_os_error(*errno))
            }
            NlError::Malformed(what) => write!(f, "malformed netlink reply: {what}"),
        }
    }
}

/// The link-mode reply, with bitmaps as the kernel's `u32` words (bit = ethtool link mode).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkModes {
    pub autoneg: Option<u8>,
    pub speed: Option<u32>,
    pub duplex: Option<u8>,
    pub supported: Option<Vec<u32>>,
    pub advertised: Option<Vec<u32>>,
    pub partner: Option<Vec<u32>>,
}

/// Standard statistics by (group, index), as the kernel numbers them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdStats {
    pub values: Vec<(u32, u16, u64)>,
}

impl StdStats {
    pub fn get(&self, group: u32, index: u16) -> Option<u64> {
        self.values
            .iter()
            .find(|&&(g, i, _)| g == group && i == index)
            .map(|&(_, _, v)| v)
    }
}

/// A netlink socket of one protocol, talking to the kernel (port 0) request by request.
pub struct NlSocket {
    fd: Socket,
    seq: u32,
}

impl NlSocket {
    /// `protocol` is `NETLINK_GENERIC` or `NETLINK_ROUTE`; replies time out after 2 s so that a
    /// kernel that never answers cannot hang a test.
    pub(crate) fn open(protocol: i32) -> Result<NlSocket, NlError> {
        let fd = Socket::new(
            Domain::from(libc::AF_NETLINK),
            Type::RAW,
            Some(Protocol::from(protocol)),
        )?;
        let _ = fd.set_read_timeout(Some(Duration::from_secs(2)));
        Ok(NlSocket { fd, seq: 0 })
    }

    pub(crate) fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Sends `req` and hands each reply of sequence `seq` to `each`, until the acknowledgement
    /// or the end of a dump.
    pub(crate) fn transact(
        &mut self,
        req: &[u8],
        seq: u32,
        mut each: impl FnMut(nlwire::Message<'_>) -> Result<(), nlwire::Malformed>,
    ) -> Result<(), NlError> {
        // An unconnected netlink socket sends to the kernel (port 0) without an address.
        self.fd.send(req)?;
        let mut buf = vec![0u8; 64 * 1024];
        // A dump of every qdisc on a host with many interfaces spans several datagrams; 256 of
        // 64 KiB bounds the loop without cutting any real reply short.
        for _ in 0..256 {
            let n = (&self.fd).read(&mut buf)?;
            for msg in nlwire::messages(&buf[..n]) {
                let msg = msg?;
                if msg.seq != seq {
                    continue;
                }
                match msg.kind {
                    NLMSG_ERROR => {
                        let code = msg.error_code()?;
                        return if code == 0 {
                            Ok(())
                        } else {
                            Err(NlError::Kernel(-code))
                        };
                    }
                    NLMSG_DONE => return Ok(()),
                    _ => each(msg)?,
                }
            }
        }
        Err(NlError::Malformed("no acknowledgement after 256 datagrams"))
    }
}

/// A generic netlink socket bound to the ethtool family.
pub struct Ethtool {
    socket: NlSocket,
    family: u16,
}

impl Ethtool {
    /// Opens the socket and resolves the family; fails where the kernel has no ethtool netlink.
    pub fn open() -> Result<Ethtool, NlError> {
        let mut this = Ethtool {
            socket: NlSocket::open(libc::NETLINK_GENERIC)?,
            family: GENL_ID_CTRL,
        };
        let seq = this.socket.next_seq();
        let req = Request::genl(
            GENL_ID_CTRL,
            NLM_F_REQUEST | NLM_F_ACK,
            seq,
            CTRL_CMD_GETFAMILY,
            1,
        )
        .string(CTRL_ATTR_FAMILY_NAME, "ethtool")
        .finish();
        let mut family = None;
        this.transact(&req, seq, |attrs| {
            family = attrs.find(CTRL_ATTR_FAMILY_ID).and_then(|a| a.u16());
        })?;
        this.family = family.ok_or(NlError::Malformed("no family id for ethtool"))?;
        Ok(this)
    }

    /// Sends `req` and hands each reply's attributes to `each` until the acknowledgement.
    fn transact(
        &mut self,
        req: &[u8],
        seq: u32,
        mut each: impl FnMut(Attrs<'_>),
    ) -> Result<(), NlError> {
        self.socket.transact(req, seq, |msg| {
            each(msg.genl_attrs()?);
            Ok(())
        })
    }

    fn request(
        &mut self,
        cmd: u8,
        header_attr: u16,
        ifname: &str,
        compact: bool,
    ) -> (u32, Request) {
        let seq = self.socket.next_seq();
        let mut req = Request::genl(
            self.family,
            NLM_F_REQUEST | NLM_F_ACK,
            seq,
            cmd,
            ETHTOOL_GENL_VERSION,
        );
        req.begin(header_attr)
            .string(ETHTOOL_A_HEADER_DEV_NAME, ifname);
        if compact {
            req.u32(ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_COMPACT_BITSETS);
        }
        req.end();
        (seq, req)
    }

    /// ETHTOOL_MSG_LINKMODES_GET.
    pub fn link_modes(&mut self, ifname: &str) -> Result<LinkModes, NlError> {
        let (seq, mut req) = self.request(
            ETHTOOL_MSG_LINKMODES_GET,
            ETHTOOL_A_LINKMODES_HEADER,
            ifname,
            true,
        );
        let req = req.finish();
        let mut modes = LinkModes::default();
        self.transact(&req, seq, |attrs| modes = parse_link_modes(attrs))?;
        Ok(modes)
    }

    /// ETHTOOL_MSG_STATS_GET for the eth-mac and rmon groups.
    pub fn std_stats(&mut self, ifname: &str) -> Result<StdStats, NlError> {
        let (seq, mut req) =
            self.request(ETHTOOL_MSG_STATS_GET, ETHTOOL_A_STATS_HEADER, ifname, true);
        let groups = (1u32 << STATS_GROUP_ETH_MAC) | (1u32 << STATS_GROUP_RMON);
        let req = req
            .begin(ETHTOOL_A_STATS_GROUPS)
            .flag(ETHTOOL_A_BITSET_NOMASK)
            .u32(ETHTOOL_A_BITSET_SIZE, STATS_GROUP_RMON + 1)
            .bytes(ETHTOOL_A_BITSET_VALUE, &groups.to_ne_bytes())
            .end()
            .finish();
        let mut stats = StdStats::default();
        self.transact(&req, seq, |attrs| stats = parse_stats(attrs))?;
        Ok(stats)
    }
}

/// Reads a compact bitset: (value, mask); without a mask (NOMASK) only the value.
fn bitset(attrs: Attrs<'_>) -> (Option<Vec<u32>>, Option<Vec<u32>>) {
    let value = attrs.find(ETHTOOL_A_BITSET_VALUE).map(|a| a.u32s());
    let nomask = attrs.find(ETHTOOL_A_BITSET_NOMASK).is_some();
    let mask = if nomask {
        None
    } else {
        attrs.find(ETHTOOL_A_BITSET_MASK).map(|a| a.u32s())
    };
    (value, mask)
}

pub fn parse_link_modes(attrs: Attrs<'_>) -> LinkModes {
    let (advertised, supported) = attrs
        .find(ETHTOOL_A_LINKMODES_OURS)
        .map(|a| bitset(a.nested()))
        .unwrap_or((None, None));
    let partner = attrs
        .find(ETHTOOL_A_LINKMODES_PEER)
        .and_then(|a| bitset(a.nested()).0);
    LinkModes {
        autoneg: attrs.find(ETHTOOL_A_LINKMODES_AUTONEG).and_then(|a| a.u8()),
        speed: attrs.find(ETHTOOL_A_LINKMODES_SPEED).and_then(|a| a.u32()),
        duplex: attrs.find(ETHTOOL_A_LINKMODES_DUPLEX).and_then(|a| a.u8()),
        supported,
        advertised,
        partner,
    }
}

pub fn parse_stats(attrs: Attrs<'_>) -> StdStats {
    let mut values = Vec::new();
    for grp in attrs.into_iter().map_while(Result::ok) {
        if grp.kind != ETHTOOL_A_STATS_GRP {
            continue;
        }
        let grp = grp.nested();
        let Some(id) = grp.find(ETHTOOL_A_STATS_GRP_ID).and_then(|a| a.u32()) else {
            continue;
        };
        for stat in grp.into_iter().map_while(Result::ok) {
            if stat.kind != ETHTOOL_A_STATS_GRP_STAT {
                continue;
            }
            for v in stat.nested().into_iter().map_while(Result::ok) {
                if let Some(x) = v.u64() {
                    values.push((id, v.kind, x));
                }
            }
        }
    }
    StdStats { values }
}
