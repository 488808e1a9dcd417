use wirespeed_net::iface::nlwire;
use wirespeed_net::iface::nlwire::Request;
use wirespeed_net::iface::qdisc::*;

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
    let lo = wirespeed_net::sys::netdevice::index("lo").unwrap() as i32;
    let kind = describe(&all, lo).expect("lo has a root qdisc");
    assert!(!kind.is_empty());
}
