use std::net::SocketAddr;
use std::net::TcpListener;
use std::time::{Duration, Instant};
use wirespeed::mesh::wait::*;

#[test]
fn returns_as_soon_as_every_agent_answers() {
    let a: SocketAddr = "198.19.211.1:5210".parse().unwrap();
    let b: SocketAddr = "198.19.211.2:5210".parse().unwrap();
    // b starts answering on the third attempt.
    let mut tries_b = 0;
    let up = wait_for(&[a, b], Duration::from_secs(30), |addr, _| {
        if addr == b {
            tries_b += 1;
            tries_b >= 3
        } else {
            true
        }
    });
    assert_eq!(up, vec![true, true]);
    assert_eq!(tries_b, 3, "an agent that answered is not tried again");
}

#[test]
fn an_agent_that_never_answers_is_named_when_the_wait_ends() {
    let a: SocketAddr = "198.19.211.1:5210".parse().unwrap();
    let b: SocketAddr = "198.19.211.2:5210".parse().unwrap();
    let started = Instant::now();
    let up = wait_for(&[a, b], Duration::from_millis(300), |addr, t| {
        assert!(t <= CONNECT_TIMEOUT, "each attempt is bounded");
        addr == a
    });
    assert_eq!(up, vec![true, false]);
    // Bounded by the wait, with a wide margin for a busy machine.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_zero_wait_tries_nothing() {
    let a: SocketAddr = "198.19.211.1:5210".parse().unwrap();
    let up = wait_for(&[a], Duration::ZERO, |_, _| {
        panic!("no attempt with no time")
    });
    assert_eq!(up, vec![false]);
}

#[test]
fn accepts_sees_a_listening_port_and_not_a_closed_one() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = l.local_addr().unwrap();
    assert!(accepts(open, Duration::from_secs(5)));
    drop(l);
    // The port just closed: refused at once on loopback.
    assert!(!accepts(open, Duration::from_secs(5)));
}
