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
#[doc(hidden)]
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The pause between rounds of attempts at the agents not yet answering.
const ROUND_GAP: Duration = Duration::from_millis(500);

/// Which of `agents` accepted a connection before `wait` ran out; `connect` is the attempt
/// (a TCP connect in use, a fake in tests). Every agent that answered once counts as up: an
/// agent's port does not close again while it serves.
#[doc(hidden)]
pub fn wait_for(
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
#[doc(hidden)]
pub fn accepts(address: SocketAddr, timeout: Duration) -> bool {
    TcpStream::connect_timeout(&address, timeout).is_ok()
}
