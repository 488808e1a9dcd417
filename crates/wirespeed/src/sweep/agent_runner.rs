//! Runs one sweep point as a TCP test against a wirespeed agent (remote, or in this process on
//! loopback), with the sender's SO_SNDBUF and the receiver's SO_RCVBUF + TCP_WINDOW_CLAMP set
//! before the data connection is made.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use wirespeed_model::sweep::{KernelView, RunRecord};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::report::{Interval, Role, StreamReport};
use wirespeed_net::{Amount, ClientConfig, Direction, Protocol, TestSpec, client};

use super::{PathProbe, PointRequest, PointRunner};

/// A runner bound to one agent.
pub(crate) struct AgentRunner {
    agent: SocketAddr,
    local: Option<crate::throughput::AgentThread>,
    auth: Option<AuthKey>,
    length_bytes: u32,
    congestion: Option<String>,
    /// `-S`: the class of every run's data.
    tos: Option<u8>,
    /// Ctrl-C: ends the run in flight within the client's 20 ms poll.
    interrupt: Option<Arc<AtomicBool>>,
}

impl AgentRunner {
    /// An agent at `remote`, or a new one in this process on loopback.
    pub(crate) fn new(
        remote: Option<SocketAddr>,
        ipv6: bool,
        auth: Option<AuthKey>,
        length_bytes: u32,
        congestion: Option<String>,
        tos: Option<u8>,
        interrupt: Option<Arc<AtomicBool>>,
    ) -> anyhow::Result<AgentRunner> {
        let mut local = None;
        let agent = match remote {
            Some(a) => a,
            None => {
                let (addr, agent) = crate::throughput::start_local_agent(ipv6, auth.clone())?;
                local = Some(agent);
                addr
            }
        };
        Ok(AgentRunner {
            agent,
            local,
            auth,
            length_bytes,
            congestion,
            tos,
            interrupt,
        })
    }

    fn test(&self, spec: TestSpec) -> anyhow::Result<wirespeed_net::TestOutcome> {
        let config = ClientConfig {
            agent: self.agent,
            bind: None,
            spec,
            auth: self.auth.clone(),
            cpu: None,
            idle_timeout: Duration::from_secs(30),
            interrupt: self.interrupt.clone(),
            source: None,
        };
        let outcome = client::run(&config, &mut |_: &Interval| {})?;
        if let Some(err) = &outcome.error {
            anyhow::bail!("the test ended early: {err}");
        }
        Ok(outcome)
    }

    fn spec(&self, amount: Amount) -> TestSpec {
        TestSpec {
            protocol: Protocol::Tcp,
            direction: Direction::Send,
            streams: 1,
            amount,
            length_bytes: self.length_bytes,
            congestion: self.congestion.clone(),
            tos: self.tos,
            ..TestSpec::default()
        }
    }
}

impl Drop for AgentRunner {
    fn drop(&mut self) {
        if let Some((handle, thread)) = self.local.take() {
            handle.stop();
            let _ = thread.join();
        }
    }
}

/// TCP payload of the largest packet loopback carries: its MTU (65536 on Linux) capped at the
/// 65535 bytes an IP length field can say, less the IP header, the TCP header and the 12-byte
/// timestamp option (65483 over IPv4, as the kernel reports when it is not lowered).
#[doc(hidden)]
pub fn loopback_packet_bytes(ipv6: bool) -> u64 {
    let mtu = std::fs::read_to_string("/sys/class/net/lo/mtu")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(65536);
    let ip_header = if ipv6 { 40 } else { 20 };
    mtu.min(65535) - ip_header - 20 - 12
}

fn stream(streams: &[StreamReport], role: Role) -> Option<&StreamReport> {
    streams.iter().find(|s| s.role == role)
}

impl PointRunner for AgentRunner {
    fn target(&self) -> String {
        if self.local.is_some() {
            format!("loopback (in-process agent at {})", self.agent)
        } else {
            self.agent.to_string()
        }
    }

    /// A short default transfer (64 KiB: a third of a second on a T1, so that every sweep,
    /// one point or many, can afford it): the MSS the kernel picks for this path, the lowest
    /// round trip it saw (its SYN's) and the rate reached, from TCP_INFO and the agent's
    /// count; a rate from so short a transfer is slow start's, a floor of the path's. On loopback the
    /// kernel's MSS moves between runs (32768 to 65483 bytes), which would make "1 packet" mean
    /// another size in each sweep; there the packet is fixed instead at the TCP payload of the
    /// largest IP packet loopback carries.
    fn probe(&mut self) -> anyhow::Result<PathProbe> {
        let outcome = self.test(self.spec(Amount::Bytes(64 * 1024)))?;
        let info = stream(&outcome.client.streams, Role::Sender).and_then(|s| s.tcp_info.as_ref());
        let mss = if self.agent.ip().is_loopback() {
            loopback_packet_bytes(self.agent.ip().is_ipv6())
        } else {
            info.map(|t| u64::from(t.mss_bytes))
                .filter(|&m| m > 0)
                .context("the kernel did not report an MSS; give one with -M")?
        };
        let received = outcome
            .agent
            .as_ref()
            .and_then(|a| stream(&a.streams, Role::Receiver));
        Ok(PathProbe {
            mss,
            lowest_rtt_seconds: info
                .and_then(|t| t.min_rtt_seconds.or(Some(t.rtt_seconds)))
                .filter(|s| s.is_finite() && *s > 0.0),
            bytes_per_second: received
                .filter(|r| r.seconds > 0.0 && r.bytes > 0)
                .map(|r| r.bytes as f64 / r.seconds),
        })
    }

    /// The route to the agent and back as the lab configured it, when this process runs in a
    /// wirespeed lab that holds the agent's address (`tcp` reads the same).
    fn lab_route(&self) -> Option<wirespeed_lab::inside::RoutePair> {
        if self.local.is_some() || self.agent.ip().is_loopback() {
            return None;
        }
        // The address this host leaves by towards the agent: a connected UDP socket sends
        // nothing, the kernel only picks the route.
        let bind: SocketAddr = if self.agent.is_ipv6() {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        };
        let socket = std::net::UdpSocket::bind(bind).ok()?;
        socket.connect(self.agent).ok()?;
        let local = socket.local_addr().ok()?;
        wirespeed_lab::inside::routes_between(local.ip(), self.agent.ip())
    }

    fn run(&mut self, point: &PointRequest) -> anyhow::Result<RunRecord> {
        let amount = match (point.transfer_bytes, point.transfer_time) {
            (_, Some(t)) => Amount::Seconds(t.as_secs_f64()),
            (Some(b), None) => Amount::Bytes(b),
            (None, None) => Amount::Bytes(8 << 20),
        };
        let spec = TestSpec {
            send_buffer_bytes: Some(point.snd_bytes),
            receive_buffer_bytes: Some(point.rcv_bytes),
            mss_bytes: point.mss,
            ..self.spec(amount)
        };
        let outcome = self.test(spec)?;
        let sender = stream(&outcome.client.streams, Role::Sender)
            .context("the client reported no sending stream")?;
        let agent = outcome.agent.as_ref().context("the agent sent no report")?;
        let receiver = stream(&agent.streams, Role::Receiver)
            .context("the agent reported no receiving stream")?;
        let kernel = sender.tcp_info.as_ref().map(|t| KernelView {
            rtt_us: (t.rtt_seconds * 1e6) as u32,
            min_rtt_us: t.min_rtt_seconds.map_or(0, |s| (s * 1e6) as u32),
            snd_cwnd_segments: t.cwnd_segments,
            total_retransmits: t.retransmits,
            snd_window_bytes: t.peer_window_bytes.unwrap_or(0),
            snd_mss_bytes: t.mss_bytes,
            empty_seconds: t.busy_seconds.map(|busy| (sender.seconds - busy).max(0.0)),
        });
        let percent = |cpu: f64, wall: f64| if wall > 0.0 { 100.0 * cpu / wall } else { 0.0 };
        Ok(RunRecord {
            snd_index: 0,
            rcv_index: 0,
            rep: 0,
            snd_requested_bytes: point.snd_bytes,
            rcv_requested_bytes: point.rcv_bytes,
            snd_granted_bytes: sender.socket.send_buffer_granted_bytes,
            rcv_granted_bytes: receiver.socket.receive_buffer_granted_bytes,
            bytes: receiver.bytes,
            seconds: receiver.seconds,
            kernel,
            max_write_seconds: sender.longest_call_seconds.unwrap_or(0.0),
            sender_cpu_percent: percent(sender.cpu.total_seconds(), sender.seconds),
            receiver_cpu_percent: percent(receiver.cpu.total_seconds(), receiver.seconds),
        })
    }
}
