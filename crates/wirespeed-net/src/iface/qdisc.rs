//! The queueing discipline actually attached to an interface, read the way `tc qdisc show`
//! reads it (rtnetlink `RTM_GETQDISC`, linux/rtnetlink.h and linux/pkt_sched.h).
//!
//! `net.core.default_qdisc` says only what a *new* multiqueue device gets; the device under a
//! test may carry anything (loopback and veth have `noqueue`, a NIC `mq` with `fq_codel` or `fq`
//! per queue, a lab link `tbf`). Which one matters: BBR without `fq` paces by timers, and a
//! verdict that names the wrong qdisc sends the reader after the wrong setting.

use super::netlink::{NlError, NlSocket};
use super::nlwire::{Malformed, Message, NLM_F_DUMP, NLM_F_REQUEST, Request};

pub const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
/// `struct tcmsg`: family, two pads, ifindex, handle, parent, info.
pub const TCMSG_LEN: usize = 20;
pub const TCA_KIND: u16 = 1;
/// `struct tc_stats` (the old statistics: bytes, packets, drops, overlimits, bps, pps, qlen,
/// backlog).
const TCA_STATS: u16 = 3;
/// The nested statistics, of which `TCA_STATS_QUEUE` is a `struct gnet_stats_queue` (qlen,
/// backlog, drops, requeues, overlimits).
pub const TCA_STATS2: u16 = 7;
pub const TCA_STATS_QUEUE: u16 = 3;
/// The parent of a root qdisc.
pub const TC_H_ROOT: u32 = 0xFFFF_FFFF;

/// One qdisc of the dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qdisc {
    pub ifindex: i32,
    pub handle: u32,
    pub parent: u32,
    pub kind: String,
    /// Packets and bytes queued in it now (`None`: the kernel gave no statistics).
    pub backlog: Option<(u32, u32)>,
}

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// One `RTM_NEWQDISC` message; other kinds are skipped.
pub fn parse(msg: &Message<'_>) -> Result<Option<Qdisc>, Malformed> {
    if msg.kind != RTM_NEWQDISC {
        return Ok(None);
    }
    let (head, attrs) = msg.split_header(TCMSG_LEN)?;
    let kind = attrs
        .find(TCA_KIND)
        .map(|a| {
            let text = a.data.split(|&b| b == 0).next().unwrap_or(&[]);
            String::from_utf8_lossy(text).into_owned()
        })
        .ok_or(Malformed("qdisc without a kind"))?;
    let queue = attrs
        .find(TCA_STATS2)
        .and_then(|a| a.nested().find(TCA_STATS_QUEUE))
        .filter(|a| a.data.len() >= 8)
        .map(|a| (word(a.data, 0), word(a.data, 4)))
        .or_else(|| {
            attrs
                .find(TCA_STATS)
                .filter(|a| a.data.len() >= 36)
                .map(|a| (word(a.data, 28), word(a.data, 32)))
        });
    Ok(Some(Qdisc {
        ifindex: word(head, 4) as i32,
        handle: word(head, 8),
        parent: word(head, 12),
        kind,
        backlog: queue,
    }))
}

/// Every qdisc of every interface in this network namespace.
pub fn dump() -> Result<Vec<Qdisc>, NlError> {
    let mut socket = NlSocket::open(libc::NETLINK_ROUTE)?;
    let seq = socket.next_seq();
    // AF_UNSPEC and ifindex 0: all of them; older kernels ignore an ifindex filter anyway.
    let req = Request::route(
        RTM_GETQDISC,
        NLM_F_REQUEST | NLM_F_DUMP,
        seq,
        &[0; TCMSG_LEN],
    )
    .finish();
    let mut all = Vec::new();
    socket.transact(&req, seq, |msg| {
        all.extend(parse(&msg)?);
        Ok(())
    })?;
    Ok(all)
}

/// The root qdisc of interface `ifindex` and what it holds queued now (packets, bytes). A
/// multiqueue root (`mq`) reports the sum of its queues, as `tc -s` shows it.
pub(crate) fn root_backlog(all: &[Qdisc], ifindex: i32) -> Option<(u32, u32)> {
    all.iter()
        .find(|q| q.ifindex == ifindex && q.parent == TC_H_ROOT)?
        .backlog
}

/// What `tc` would call the interface's discipline: the root's kind, and for a multiqueue root
/// (`mq`, `mqprio`) the kinds under it, since those do the queueing.
pub fn describe(all: &[Qdisc], ifindex: i32) -> Option<String> {
    let root = all
        .iter()
        .find(|q| q.ifindex == ifindex && q.parent == TC_H_ROOT)?;
    let major = root.handle & 0xFFFF_0000;
    let mut children: Vec<&str> = all
        .iter()
        .filter(|q| q.ifindex == ifindex && q.parent != TC_H_ROOT)
        .filter(|q| major != 0 && q.parent & 0xFFFF_0000 == major)
        .map(|q| q.kind.as_str())
        .collect();
    let queues = children.len();
    children.sort_unstable();
    children.dedup();
    Some(if children.is_empty() {
        root.kind.clone()
    } else {
        format!("{} ({} on {queues} queues)", root.kind, children.join(", "))
    })
}
