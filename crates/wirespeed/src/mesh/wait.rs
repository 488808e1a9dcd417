//! `mesh --wait-for-agents`: a mesh started beside its agents (a Kubernetes Job created with
//! the DaemonSet) waits until each agent's control port accepts a connection, instead of
//! failing every test of an agent whose container is still starting.
//!
//! The check is a bare TCP connect, closed at once: an agent drops a connection that sends
//! nothing before its hello without a session record or a refusal counted (the kubelet's
//! tcpSocket probe is the same), so waiting leaves no trace in the agents' logs or metrics.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The longest `--wait-for-agents` accepted: an agent that takes longer to start is not coming.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(3600);

/// One connect attempt's bound: a black-holed address costs no more than this per round.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The pause between rounds of attempts at the agents not yet answering.
const ROUND_GAP: Duration = Duration::from_millis(500);

/// Which of `agents` accepted a connection before `wait` ran out; `connect` is the attempt
/// (a TCP connect in use, a fake in tests). Every agent that answered once counts as up: an
/// agent's port does not close again while it serves.
pub(crate) fn wait_for(
    agents: &[SocketAddr],
    wait: Duration,
    mut connect: impl FnMut(SocketAddr, Duration) -> bool,
) -> Vec<bool> {
    let deadline = Instant::now() + wait;
    let mut up = vec![false; agents.len()];
    loop {
        for (i, a) in agents.iter().enumerate() {
            if up[i] {
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return up;
            }
            up[i] = connect(*a, left.min(CONNECT_TIMEOUT));
        }
        if up.iter().all(|&u| u) {
            return up;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return up;
        }
        std::thread::sleep(left.min(ROUND_GAP));
    }
}

/// A TCP connect to `address` within `timeout`, closed at once.
pub(crate) fn accepts(address: SocketAddr, timeout: Duration) -> bool {
    TcpStream::connect_timeout(&address, timeout).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

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
}
