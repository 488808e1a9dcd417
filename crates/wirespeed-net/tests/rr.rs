//! The request/response service end to end on loopback: TCP_RR and TCP_CRR transactions are
//! counted the same at both ends, a connection without the cookie gets nothing, and requests
//! outside the protocol's bounds are refused with the limit.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use wirespeed_net::agent::{Agent, AgentConfig, AgentHandle};
use wirespeed_net::control::rr::MAX_RR_BYTES;
use wirespeed_net::rr::{RrError, RrSession};

fn agent() -> (SocketAddr, AgentHandle) {
    let a = Agent::bind("127.0.0.1:0".parse().unwrap(), AgentConfig::default()).unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    (addr, h)
}

const WAIT: Duration = Duration::from_secs(5);

#[test]
fn rr_and_crr_transactions_are_counted_at_both_ends() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent();
    let mut s = RrSession::open(addr, None, 1, 100, 30.0, WAIT).unwrap();
    for _ in 0..50 {
        let t = s.transaction().unwrap();
        assert!(t.connect.is_none());
        assert!(t.round_trip < WAIT);
    }
    for _ in 0..10 {
        let t = s.transaction_on_new_connection().unwrap();
        assert!(t.connect.is_some_and(|c| c < WAIT));
    }
    let totals = s.close().unwrap();
    assert_eq!(totals.transactions, 60);
    assert_eq!(
        totals.connections, 11,
        "one kept connection and ten new ones"
    );
    h.stop();
}

#[test]
fn a_wrong_cookie_is_refused_and_answered_with_nothing() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent();
    let s = RrSession::open(addr, None, 8, 8, 30.0, WAIT).unwrap();
    let service = s.service_addr();
    let mut foreign = TcpStream::connect_timeout(&service, WAIT).unwrap();
    foreign.set_read_timeout(Some(WAIT)).unwrap();
    foreign.write_all(&[0xEE; 16 + 8]).unwrap();
    let mut buf = [0u8; 8];
    let got = foreign.read(&mut buf).unwrap_or(0);
    assert_eq!(got, 0, "the agent closes without answering");
    let totals = s.close().unwrap();
    assert_eq!((totals.transactions, totals.refused), (0, 1));
    h.stop();
}

#[test]
fn sizes_and_durations_outside_the_limits_are_refused() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent();
    // The client does not send what no agent takes.
    for (req, resp, secs) in [(0, 1, 1.0), (1, MAX_RR_BYTES + 1, 1.0), (1, 1, f64::NAN)] {
        let r = RrSession::open(addr, None, req, resp, secs, WAIT);
        assert!(matches!(r, Err(RrError::Invalid(_))), "{r:?}");
    }
    // The agent refuses a duration over its --max-duration (default 1 h) with the limit.
    match RrSession::open(addr, None, 1, 1, 1e9, WAIT) {
        Err(RrError::Refused(reason)) => {
            assert!(reason.contains("--max-duration"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    h.stop();
}
