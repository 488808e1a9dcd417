//! The queueing discipline actually attached to an interface, read the way `tc qdisc show`
//! reads it (rtnetlink `RTM_GETQDISC`, linux/rtnetlink.h and linux/pkt_sched.h).
//!
//! `net.core.default_qdisc` says only what a *new* multiqueue device gets; the device under a
//! test may carry anything (loopback and veth have `noqueue`, a NIC `mq` with `fq_codel` or `fq`
//! per queue, a lab link `tbf`). Which one matters: BBR without `fq` paces by timers, and a
//! verdict that names the wrong qdisc sends the reader after the wrong setting.

use super::netlink::{NlError, NlSocket};
use super::nlwire::{Malformed, Message, NLM_F_DUMP, NLM_F_REQUEST, Request};

const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
/// `struct tcmsg`: family, two pads, ifindex, handle, parent, info.
const TCMSG_LEN: usize = 20;
const TCA_KIND: u16 = 1;
/// `struct tc_stats` (the old statistics: bytes, packets, drops, overlimits, bps, pps, qlen,
/// backlog).
const TCA_STATS: u16 = 3;
/// The nested statistics, of which `TCA_STATS_QUEUE` is a `struct gnet_stats_queue` (qlen,
/// backlog, drops, requeues, overlimits).
const TCA_STATS2: u16 = 7;
const TCA_STATS_QUEUE: u16 = 3;
/// The parent of a root qdisc.
const TC_H_ROOT: u32 = 0xFFFF_FFFF;

/// One qdisc of the dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Qdisc {
    pub(crate) ifindex: i32,
    pub(crate) handle: u32,
    pub(crate) parent: u32,
    pub(crate) kind: String,
    /// Packets and bytes queued in it now (`None`: the kernel gave no statistics).
    pub(crate) backlog: Option<(u32, u32)>,
}

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// One `RTM_NEWQDISC` message; other kinds are skipped.
pub(crate) fn parse(msg: &Message<'_>) -> Result<Option<Qdisc>, Malformed> {
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
pub(crate) fn dump() -> Result<Vec<Qdisc>, NlError> {
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
pub(crate) fn describe(all: &[Qdisc], ifindex: i32) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::super::nlwire;
    use super::*;

    fn q(ifindex: i32, handle: u32, parent: u32, kind: &str) -> Qdisc {
        Qdisc {
            ifindex,
            handle,
            parent,
            kind: kind.into(),
            backlog: None,
        }
    }

    #[test]
    fn a_single_root_is_named_as_it_is() {
        let all = [
            q(1, 0, TC_H_ROOT, "noqueue"),
            q(2, 0x8001_0000, TC_H_ROOT, "fq"),
        ];
        assert_eq!(describe(&all, 1).as_deref(), Some("noqueue"));
        assert_eq!(describe(&all, 2).as_deref(), Some("fq"));
        assert_eq!(describe(&all, 3), None);
    }

    #[test]
    fn a_multiqueue_root_names_what_queues_under_it() {
        let all = [
            q(2, 0x0001_0000, TC_H_ROOT, "mq"),
            q(2, 0, 0x0001_0001, "fq_codel"),
            q(2, 0, 0x0001_0002, "fq_codel"),
            q(3, 0, 0x0001_0001, "pfifo_fast"),
        ];
        assert_eq!(
            describe(&all, 2).as_deref(),
            Some("mq (fq_codel on 2 queues)")
        );
    }

    #[test]
    fn a_reply_message_parses() {
        let mut head = vec![0u8; TCMSG_LEN];
        head[4..8].copy_from_slice(&7i32.to_ne_bytes());
        head[12..16].copy_from_slice(&TC_H_ROOT.to_ne_bytes());
        let bytes = Request::route(RTM_NEWQDISC, 0, 5, &head)
            .string(TCA_KIND, "tbf")
            .finish();
        let msg = nlwire::messages(&bytes).next().unwrap().unwrap();
        let parsed = parse(&msg).unwrap().unwrap();
        assert_eq!(parsed, q(7, 0, TC_H_ROOT, "tbf"));
        // With statistics: the queue's packets and bytes from TCA_STATS2's TCA_STATS_QUEUE.
        let mut queue = Vec::new();
        for v in [12u32, 18_000, 3, 0, 0] {
            queue.extend_from_slice(&v.to_ne_bytes());
        }
        let bytes = Request::route(RTM_NEWQDISC, 0, 5, &head)
            .string(TCA_KIND, "fq_codel")
            .begin(TCA_STATS2)
            .bytes(TCA_STATS_QUEUE, &queue)
            .end()
            .finish();
        let msg = nlwire::messages(&bytes).next().unwrap().unwrap();
        assert_eq!(parse(&msg).unwrap().unwrap().backlog, Some((12, 18_000)));
        let short = Request::route(RTM_NEWQDISC, 0, 5, &[0; 8]).finish();
        let msg = nlwire::messages(&short).next().unwrap().unwrap();
        assert!(parse(&msg).is_err());
    }

    #[test]
    fn loopback_has_a_root_qdisc() {
        let all = dump().expect("rtnetlink qdisc dump");
        let lo = crate::sys::netdevice::index("lo").unwrap() as i32;
        let kind = describe(&all, lo).expect("lo has a root qdisc");
        assert!(!kind.is_empty());
    }
}
