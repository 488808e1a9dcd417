//! UDP echo against the agent, the client's half: the probe transport for `wirespeed probe HOST --udp` (seed 001's
//! echo, where ICMP is filtered or where the far end should be a known program).
//!
//! The design's rule is that an agent "never answers a packet it did not expect: an echo reply is
//! never larger than its request and goes only to a peer with a live control session". So the
//! echo lives inside a control session, carried by one [`Message::Echo`] variant:
//!
//! ```text
//! client                                agent
//!   open{client_port, seconds}   ->              (binds a UDP socket connected to the client's
//!                                <-  ready{agent_port, cookie}   address and port alone)
//!   datagrams [cookie | seq | padding]  <->  the same bytes back, rate-limited
//!   close                        ->
//!                                <-  closed{answered, dropped}
//! ```
//!
//! The agent's socket is connected to the client's control-session IP and its announced port, so
//! the kernel drops datagrams from anyone else; of the rest, only those that start with the
//! session's 16-byte cookie are answered, with exactly the bytes received (a reply can never be
//! larger than its request), at most [`MAX_ECHO_PER_SECOND`] a second. The service stops when
//! the control session ends, by `close`, by the connection closing, at the announced duration
//! (capped by the agent's `--max-duration`), or when the agent shuts down.
//!
//! The client side ([`UdpEcho`]) stamps each probe with `SO_TIMESTAMPING` software stamps:
//! transmit as the probe enters the device's queue (where the agent stamps its reply too, and
//! never after the frame's time on a link has begun), receive as the ICMP prober does; and
//! `CLOCK_MONOTONIC` around the syscalls.
//!
//! Residence time (RFC 8762's T3 - T2, as TWAMP and STAMP reflectors report it): when both
//! ends name [`RESIDENCE_FEATURE`] in their hello and welcome, [`UdpEcho::pipelined`] sends
//! probes 8 bytes longer whose last field asks the agent for it, and the agent writes there
//! the time from its kernel's receive stamp to its reply's `sendmsg`. The client checks it
//! against the round trip that contains it ([`check_residence`]: negative or longer than the
//! round trip is rejected and counted) and reports both the raw round trip and the network's
//! (raw less residence). Against an agent without the feature nothing changes.
//!
//! Follow-ups: when both ends also name [`FOLLOW_UP_FEATURE`], probes are 16 bytes longer
//! again and each reply carries the agent's send path of an earlier reply (from just before
//! its `sendmsg` to its kernel transmit stamp). [`UdpEcho::pipelined`] holds each answered
//! probe until its follow-up arrives (normally with the next reply) and then hands it on with
//! the residence carried to the agent's transmit stamp ([`Residence::ToTransmit`]), so that
//! both ends' stamps are the kernel's at the device; a probe whose follow-up does not come
//! within [`FOLLOW_UP_WAIT`] (the last one, or when the next reply is lost) keeps the
//! residence to the `sendmsg`.

use crate::address::with_port;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::net::sockopt::{
    Ipv4PathMtuDiscovery, Ipv6PathMtuDiscovery, set_ip_mtu_discover, set_ipv6_mtu_discover,
};

use crate::auth::AuthKey;
use crate::control::echo::{
    ECHO_FOLLOW_UP_LEN, ECHO_HEADER_LEN, ECHO_SHORT_LEN, ECHO_STAMPED_LEN, EchoMessage, EchoTotals,
    FOLLOW_UP_ASKED, MAX_ECHO_PER_SECOND, RESIDENCE_ASKED, Residence, SHORT_REPLY_ASKED,
    check_residence, echo_follow_up, echo_residence, echo_sequence, follow_up,
};
use crate::control::{
    Cookie, FOLLOW_UP_FEATURE, Message, RESIDENCE_FEATURE, SHORT_REPLY_FEATURE, names_feature,
};
use crate::icmp_socket::software_stamp_ns;
use crate::session::{Control, SessionError};
use crate::sys::{cmsg, socket_options};

use super::{ReplyKind, Sample};

/// Bytes of UDP header.
#[doc(hidden)]
pub const UDP_HEADER_LEN: usize = 8;

/// How long an answered probe waits for its follow-up before it is handed on without one.
pub const FOLLOW_UP_WAIT: Duration = Duration::from_millis(200);

/// Answered probes held for their follow-ups, at most (older ones are handed on without).
const MAX_HELD: usize = 64;

/// Why an echo session could not be opened or run.
pub type EchoError = crate::service::ServiceError;

/// The client side: a live echo session and its stamped UDP socket.
pub struct UdpEcho {
    #[doc(hidden)]
    pub ctl: Control,
    #[doc(hidden)]
    pub sock: UdpSocket,
    cookie: Cookie,
    seq: u64,
    sent: u32,
    ip_header: usize,
    target: IpAddr,
    buf: Vec<u8>,
    rbuf: Vec<u8>,
    last_send: Option<Instant>,
    /// Both ends stamp residence times ([`RESIDENCE_FEATURE`]).
    residence: bool,
    /// The agent also sends follow-ups of its replies' send paths ([`FOLLOW_UP_FEATURE`]).
    follow_ups: bool,
    /// The agent answers short when asked ([`SHORT_REPLY_FEATURE`]).
    short_replies: bool,
}

impl std::fmt::Debug for UdpEcho {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpEcho")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// The smallest UDP echo probe to `target`, IP bytes: IP and UDP headers, cookie and sequence.
pub fn min_size(target: IpAddr) -> usize {
    ip_header_len(target) + UDP_HEADER_LEN + ECHO_HEADER_LEN
}

fn ip_header_len(target: IpAddr) -> usize {
    match target {
        IpAddr::V4(_) => 20,
        IpAddr::V6(_) => 40,
    }
}

impl UdpEcho {
    /// Opens a control session to the agent at `agent` and asks for an echo lasting `seconds`.
    pub fn open(
        agent: SocketAddr,
        auth: Option<&AuthKey>,
        seconds: f64,
        idle: Duration,
    ) -> Result<UdpEcho, EchoError> {
        UdpEcho::open_naming(
            agent,
            auth,
            seconds,
            idle,
            &[RESIDENCE_FEATURE, FOLLOW_UP_FEATURE, SHORT_REPLY_FEATURE],
        )
    }

    /// [`UdpEcho::open`] naming only `features` in the hello (a test plays an older client).
    #[doc(hidden)]
    pub fn open_naming(
        agent: SocketAddr,
        auth: Option<&AuthKey>,
        seconds: f64,
        idle: Duration,
        features: &[&str],
    ) -> Result<UdpEcho, EchoError> {
        let (mut ctl, welcome) = crate::service::open_with(agent, auth, idle, features)?;
        let residence = names_feature(&welcome.software, RESIDENCE_FEATURE);
        let follow_ups = residence && names_feature(&welcome.software, FOLLOW_UP_FEATURE);
        let short_replies = names_feature(&welcome.software, SHORT_REPLY_FEATURE);
        let local = ctl.stream.local_addr().map_err(SessionError::Io)?;
        let sock = UdpSocket::bind(with_port(local, 0)).map_err(SessionError::Io)?;
        ctl.send(&Message::Echo(EchoMessage::Open {
            client_port: sock.local_addr().map_err(SessionError::Io)?.port(),
            seconds,
        }))
        .map_err(SessionError::Io)?;
        let (agent_port, cookie) = match ctl.recv(idle, "waiting for the agent's echo")? {
            Message::Echo(EchoMessage::Ready { agent_port, cookie }) => (agent_port, cookie),
            Message::Refused { reason } => return Err(EchoError::Refused(reason)),
            Message::Error { message } => return Err(EchoError::Refused(message)),
            other => return Err(EchoError::Unexpected(other.kind())),
        };
        sock.connect(with_port(agent, agent_port))
            .map_err(SessionError::Io)?;
        // The transmit stamp as the probe enters the device's queue (`TX_SCHED`, as the
        // agent stamps its reply), not at the driver (`TX_SOFTWARE`): between the two the
        // kernel hands a copy to every packet socket on the device and wakes its reader, and
        // a link emulator (the lab's, or a capture) stamps the frame there, so a driver stamp
        // can come after the frame's time on the link has begun. Measured across a 10 Mbit/s
        // lab link: the driver stamp came 2-52 us (median 9) after the device's packet
        // sockets saw the probe, and one probe in a few hundred came back faster than
        // 2D + serialization allows, by up to 139 us.
        let flags: libc::c_uint = libc::SOF_TIMESTAMPING_TX_SCHED
            | libc::SOF_TIMESTAMPING_RX_SOFTWARE
            | libc::SOF_TIMESTAMPING_SOFTWARE
            | libc::SOF_TIMESTAMPING_OPT_ID
            | libc::SOF_TIMESTAMPING_OPT_TSONLY;
        socket_options::set_timestamping(&sock, flags).map_err(SessionError::Io)?;
        // Don't fragment, as the ICMP probes: a probe too big for the path fails to send.
        match agent.ip() {
            IpAddr::V4(_) => set_ip_mtu_discover(&sock, Ipv4PathMtuDiscovery::PROBE),
            IpAddr::V6(_) => set_ipv6_mtu_discover(&sock, Ipv6PathMtuDiscovery::PROBE),
        }
        .map_err(|e| SessionError::Io(e.into()))?;
        Ok(UdpEcho {
            ctl,
            sock,
            cookie,
            seq: 0,
            sent: 0,
            ip_header: ip_header_len(agent.ip()),
            target: agent.ip(),
            buf: Vec::with_capacity(65536),
            rbuf: vec![0; 65536],
            last_send: None,
            residence,
            follow_ups,
            short_replies,
        })
    }

    /// Whether the agent answers short replies ([`UdpEcho::one_short`]).
    pub fn answers_short(&self) -> bool {
        self.short_replies
    }

    /// The smallest probe that can ask for a short reply, IP bytes (a short reply is never
    /// larger than its request).
    pub fn short_min_size(&self) -> usize {
        self.ip_header + UDP_HEADER_LEN + ECHO_SHORT_LEN
    }

    /// Whether the agent reports its residence time in the replies of [`UdpEcho::pipelined`].
    pub fn reports_residence(&self) -> bool {
        self.residence
    }

    /// Whether the agent sends follow-ups of its replies' send paths.
    pub fn sends_follow_ups(&self) -> bool {
        self.follow_ups
    }

    /// The smallest probe [`UdpEcho::pipelined`] sends, IP bytes: [`min_size`], plus the
    /// residence field when the agent stamps it, and the follow-up's when it sends them.
    pub fn pipelined_min_size(&self) -> usize {
        let payload = if self.follow_ups {
            ECHO_FOLLOW_UP_LEN
        } else if self.residence {
            ECHO_STAMPED_LEN
        } else {
            ECHO_HEADER_LEN
        };
        self.ip_header + UDP_HEADER_LEN + payload
    }

    /// The agent's UDP address (for tests that send it foreign datagrams).
    pub fn agent_udp_addr(&self) -> io::Result<SocketAddr> {
        self.sock.peer_addr()
    }

    /// The session's cookie.
    pub fn cookie(&self) -> Cookie {
        self.cookie
    }

    /// One probe of `ip_size` IP bytes; waits at most `timeout` for its echo.
    pub fn one(&mut self, ip_size: usize, start: Instant, timeout: Duration) -> io::Result<Sample> {
        self.one_as(ip_size, Reply::Echo, start, timeout)
    }

    /// [`UdpEcho::one`] asking the agent for its residence time (receive stamp to `sendmsg`,
    /// where it names [`RESIDENCE_FEATURE`]), kept in the sample's `agent_residence_ns` when
    /// it is possible against the round trip: the agent's wake-up, which a user-space program
    /// pays and a kernel's ICMP echo does not, taken out by the analysis. At least
    /// [`UdpEcho::short_min_size`] bytes (room for the field).
    pub fn one_stamped(
        &mut self,
        ip_size: usize,
        start: Instant,
        timeout: Duration,
    ) -> io::Result<Sample> {
        self.one_as(ip_size, Reply::StampedEcho, start, timeout)
    }

    /// One probe of `ip_size` IP bytes (at least [`UdpEcho::short_min_size`]) answered with a
    /// short reply of [`ECHO_SHORT_LEN`] payload bytes, whatever its size: the bytes returned
    /// stay constant, so its round trip's slope is the path's per byte sent alone. Refused
    /// (`Unsupported`) when the agent did not name [`SHORT_REPLY_FEATURE`].
    pub fn one_short(
        &mut self,
        ip_size: usize,
        start: Instant,
        timeout: Duration,
    ) -> io::Result<Sample> {
        if !self.short_replies {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the agent does not send short replies (its welcome does not name +shortreply): run the same wirespeed release on it",
            ));
        }
        if ip_size < self.short_min_size() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a probe of {ip_size} bytes cannot ask for a short reply: the smallest is {} (IP and UDP headers, cookie, sequence, the request)",
                    self.short_min_size()
                ),
            ));
        }
        let mut sample = self.one_as(ip_size, Reply::Short, start, timeout)?;
        sample.series = super::Series::AgentShortReply;
        Ok(sample)
    }

    fn one_as(
        &mut self,
        ip_size: usize,
        reply: Reply,
        start: Instant,
        timeout: Duration,
    ) -> io::Result<Sample> {
        self.seq += 1;
        let payload = ip_size.saturating_sub(self.ip_header + UDP_HEADER_LEN);
        let payload = payload.max(ECHO_HEADER_LEN);
        self.buf.clear();
        self.buf.extend_from_slice(&self.cookie.0);
        self.buf.extend_from_slice(&self.seq.to_be_bytes());
        let stamped = reply != Reply::Echo && self.residence;
        if reply != Reply::Echo {
            let field = if stamped { RESIDENCE_ASKED } else { 0 };
            self.buf.extend_from_slice(&field.to_be_bytes());
        }
        if reply == Reply::Short {
            self.buf.extend_from_slice(&SHORT_REPLY_ASKED.to_be_bytes());
        }
        self.buf.resize(payload.max(self.buf.len()), 0);
        // Stay under the agent's rate limit, so that no probe is dropped for it.
        if let Some(last) = self.last_send {
            let next = last + Duration::from_secs_f64(1.0 / MAX_ECHO_PER_SECOND);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let t0 = Instant::now();
        self.last_send = Some(t0);
        self.sock.send(&self.buf)?;
        let tx_id = self.sent;
        self.sent = self.sent.wrapping_add(1);
        let mut sample = Sample {
            ttl: 64,
            sent_bytes: ip_size,
            returned_bytes: 0,
            rtt_kernel_ns: None,
            rtt_user_ns: None,
            sent_at_ns: (t0 - start).as_nanos() as u64,
            responder: None,
            reply: ReplyKind::Lost,
            unreachable_code: None,
            too_big_mtu: None,
            series: super::Series::Probe,
            agent_residence_ns: None,
        };
        let deadline = t0 + timeout;
        let mut tx_ns = None;
        let mut rx_ns = None;
        let mut residence_field = None;
        loop {
            match self.recv_one(true)? {
                Some(Got::TxStamp { id, ns }) if id == tx_id => tx_ns = Some(ns),
                Some(_) => continue,
                None => {}
            }
            match self.recv_one(false)? {
                Some(Got::Data { len, rx_kernel_ns }) => {
                    let d = &self.rbuf[..len];
                    if echo_sequence(d, &self.cookie) == Some(self.seq) {
                        sample.rtt_user_ns = Some(t0.elapsed().as_nanos() as u64);
                        sample.reply = ReplyKind::EchoReply;
                        sample.responder = Some(self.target);
                        sample.returned_bytes = self.ip_header + UDP_HEADER_LEN + len;
                        residence_field = echo_residence(d);
                        rx_ns = rx_kernel_ns;
                        break;
                    }
                    continue;
                }
                Some(_) => continue,
                None => {}
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let mut pfd = [PollFd::new(&self.sock, PollFlags::IN | PollFlags::ERR)];
            let ms = (deadline - now).as_millis().clamp(1, 1000) as i64;
            let timeout = Timespec {
                tv_sec: ms / 1000,
                tv_nsec: (ms % 1000) * 1_000_000,
            };
            let _ = poll(&mut pfd, Some(&timeout));
        }
        // The transmit stamp can follow the reply on the error queue.
        if sample.reply == ReplyKind::EchoReply && tx_ns.is_none() {
            let until = Instant::now() + Duration::from_micros(200);
            while tx_ns.is_none() && Instant::now() < until {
                if let Some(Got::TxStamp { id, ns }) = self.recv_one(true)?
                    && id == tx_id
                {
                    tx_ns = Some(ns);
                }
            }
        }
        if let (Some(tx), Some(rx)) = (tx_ns, rx_ns)
            && rx >= tx
        {
            sample.rtt_kernel_ns = Some((rx - tx) as u64);
        }
        if stamped
            && sample.reply == ReplyKind::EchoReply
            && let Some(rtt) = sample.rtt_kernel_ns.or(sample.rtt_user_ns)
            && let Residence::Accepted(r) = check_residence(residence_field, rtt)
        {
            sample.agent_residence_ns = Some(r);
        }
        Ok(sample)
    }

    /// Marks the probes this end sends (`latency -S`): the TOS byte or IPv6 traffic class.
    pub fn set_tos(&self, tos: u8) -> io::Result<()> {
        crate::sockopt::set_tos(&self.sock, tos)
    }

    /// Probes every `gap` until `stop`, without waiting for one answer before the
    /// next probe: behind a full queue most probes are lost, and a probe that waited for each
    /// would send one a `timeout`. Each probe's outcome goes to `on_sample` once it is known:
    /// answered (user-clock round trip, and the kernel's where both stamps arrived), or lost
    /// after `timeout`. At most 4096 probes are outstanding; older ones are given up as lost.
    /// With an agent that stamps residence times, each probe asks for one and its outcome
    /// comes with the reply's [`Residence`], checked against the round trip (kernel stamps
    /// where both arrived, else the user clock's); [`Residence::Absent`] otherwise.
    pub fn pipelined(
        &mut self,
        ip_size: usize,
        gap: Duration,
        start: Instant,
        timeout: Duration,
        stop: &std::sync::atomic::AtomicBool,
        mut on_sample: impl FnMut(Sample, Residence),
    ) -> io::Result<()> {
        use std::collections::VecDeque;
        use std::sync::atomic::Ordering;
        const MAX_OUTSTANDING: usize = 4096;
        let gap = gap.max(Duration::from_secs_f64(1.0 / MAX_ECHO_PER_SECOND));
        // (sequence, tx stamp id, sent at, kernel tx stamp, the sample so far)
        let mut outstanding: VecDeque<(u64, u32, Instant, Option<i128>, Sample)> = VecDeque::new();
        // Answered probes awaiting their follow-ups: (sequence, answered at, round trip, the
        // sample, its residence to the agent's sendmsg).
        let mut held: VecDeque<(u64, Instant, u64, Sample, Residence)> = VecDeque::new();
        let mut next_send = Instant::now();
        loop {
            let now = Instant::now();
            let sending = !stop.load(Ordering::Acquire);
            if !sending && outstanding.is_empty() {
                for (_, _, _, sample, residence) in held.drain(..) {
                    on_sample(sample, residence);
                }
                return Ok(());
            }
            if sending && now >= next_send {
                self.seq += 1;
                let payload = ip_size
                    .saturating_sub(self.ip_header + UDP_HEADER_LEN)
                    .max(ECHO_HEADER_LEN);
                self.buf.clear();
                self.buf.extend_from_slice(&self.cookie.0);
                self.buf.extend_from_slice(&self.seq.to_be_bytes());
                if self.residence {
                    self.buf.extend_from_slice(&RESIDENCE_ASKED.to_be_bytes());
                }
                if self.follow_ups {
                    self.buf.extend_from_slice(&0u64.to_be_bytes());
                    self.buf.extend_from_slice(&FOLLOW_UP_ASKED.to_be_bytes());
                }
                self.buf.resize(payload.max(self.buf.len()), 0);
                let t0 = Instant::now();
                self.sock.send(&self.buf)?;
                let tx_id = self.sent;
                self.sent = self.sent.wrapping_add(1);
                let sample = Sample {
                    ttl: 64,
                    sent_bytes: ip_size,
                    returned_bytes: 0,
                    rtt_kernel_ns: None,
                    rtt_user_ns: None,
                    sent_at_ns: (t0 - start).as_nanos() as u64,
                    responder: None,
                    reply: ReplyKind::Lost,
                    unreachable_code: None,
                    too_big_mtu: None,
                    series: super::Series::Probe,
                    agent_residence_ns: None,
                };
                if outstanding.len() >= MAX_OUTSTANDING
                    && let Some((.., lost)) = outstanding.pop_front()
                {
                    on_sample(lost, Residence::Absent);
                }
                outstanding.push_back((self.seq, tx_id, t0, None, sample));
                next_send += gap;
                if next_send < t0 {
                    next_send = t0 + gap;
                }
            }
            while let Some(got) = self.recv_one(true)? {
                if let Got::TxStamp { id, ns } = got
                    && let Some(o) = outstanding.iter_mut().find(|o| o.1 == id)
                {
                    o.3 = Some(ns);
                }
            }
            while let Some(got) = self.recv_one(false)? {
                let Got::Data { len, rx_kernel_ns } = got else {
                    continue;
                };
                let Some(seq) = echo_sequence(&self.rbuf[..len], &self.cookie) else {
                    continue;
                };
                let Some(i) = outstanding.iter().position(|o| o.0 == seq) else {
                    continue;
                };
                let (_, _, t0, tx_ns, mut sample) = outstanding.remove(i).expect("found");
                sample.rtt_user_ns = Some(t0.elapsed().as_nanos() as u64);
                sample.reply = ReplyKind::EchoReply;
                sample.responder = Some(self.target);
                sample.returned_bytes = self.ip_header + UDP_HEADER_LEN + len;
                if let (Some(tx), Some(rx)) = (tx_ns, rx_kernel_ns)
                    && rx >= tx
                {
                    sample.rtt_kernel_ns = Some((rx - tx) as u64);
                }
                let rtt = sample.rtt_kernel_ns.or(sample.rtt_user_ns);
                let residence = match rtt {
                    Some(rtt) if self.residence => {
                        check_residence(echo_residence(&self.rbuf[..len]), rtt)
                    }
                    _ => Residence::Absent,
                };
                if !self.follow_ups {
                    on_sample(sample, residence);
                    continue;
                }
                // This reply's follow-up completes an earlier one; this one waits for its own.
                if let Some((about, path)) = echo_follow_up(&self.rbuf[..len])
                    && let Some(i) = held.iter().position(|h| h.0 == about)
                {
                    let (_, _, rtt, earlier, r) = held.remove(i).expect("found");
                    on_sample(earlier, follow_up(r, path, rtt));
                }
                match (residence, rtt) {
                    (Residence::Accepted(_), Some(rtt)) => {
                        if held.len() >= MAX_HELD
                            && let Some((.., s, r)) = held.pop_front()
                        {
                            on_sample(s, r);
                        }
                        held.push_back((seq, Instant::now(), rtt, sample, residence));
                    }
                    _ => on_sample(sample, residence),
                }
            }
            let now = Instant::now();
            while held
                .front()
                .is_some_and(|h| now.duration_since(h.1) >= FOLLOW_UP_WAIT)
            {
                let (.., s, r) = held.pop_front().expect("front");
                on_sample(s, r);
            }
            while outstanding.front().is_some_and(|o| now >= o.2 + timeout) {
                let (.., lost) = outstanding.pop_front().expect("front");
                on_sample(lost, Residence::Absent);
            }
            // Sleep until the next send, an answer, or 10 ms, whichever comes first.
            let wake = if sending {
                next_send
            } else {
                now + Duration::from_millis(10)
            };
            let wait = wake
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(10));
            let mut pfd = [PollFd::new(&self.sock, PollFlags::IN | PollFlags::ERR)];
            let timeout = Timespec {
                tv_sec: 0,
                tv_nsec: wait.as_nanos().max(1_000_000) as i64,
            };
            let _ = poll(&mut pfd, Some(&timeout));
        }
    }

    /// Ends the session; returns what the agent's echo counted.
    pub fn close(mut self, idle: Duration) -> Result<EchoTotals, EchoError> {
        self.ctl
            .send(&Message::Echo(EchoMessage::Close))
            .map_err(SessionError::Io)?;
        match self.ctl.recv(idle, "waiting for the end of the echo")? {
            Message::Echo(EchoMessage::Closed { answered, dropped }) => {
                Ok(EchoTotals { answered, dropped })
            }
            other => Err(EchoError::Unexpected(other.kind())),
        }
    }

    /// One non-blocking recvmsg: `None` when the queue is empty.
    fn recv_one(&mut self, errqueue: bool) -> io::Result<Option<Got>> {
        let mut control = [0u8; 512];
        let flags = libc::MSG_DONTWAIT | if errqueue { libc::MSG_ERRQUEUE } else { 0 };
        let got = match cmsg::recvmsg(&self.sock, &mut self.rbuf, &mut control, flags) {
            Ok(got) => got,
            Err(e) => {
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    // ECONNREFUSED and the like (no agent socket any more): nothing to read.
                    _ if !errqueue => Ok(Some(Got::Other)),
                    _ => Err(e),
                };
            }
        };
        let n = got.len;
        let mut stamp = None;
        let mut is_tx_stamp = None;
        for c in cmsg::messages(&control[..got.control_len]) {
            if c.level == libc::SOL_SOCKET && c.kind == libc::SO_TIMESTAMPING {
                if let Some(ns) = software_stamp_ns(c.data) {
                    stamp = Some(ns);
                }
            } else if ((c.level == libc::SOL_IP && c.kind == libc::IP_RECVERR)
                || (c.level == libc::SOL_IPV6 && c.kind == libc::IPV6_RECVERR))
                && let Some((serr, _)) = cmsg::extended_err(c.data)
                && serr.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
            {
                is_tx_stamp = Some(serr.ee_data);
            }
        }
        if errqueue {
            return Ok(Some(match (is_tx_stamp, stamp) {
                (Some(id), Some(ns)) => Got::TxStamp { id, ns },
                _ => Got::Other,
            }));
        }
        Ok(Some(Got::Data {
            len: n,
            rx_kernel_ns: stamp,
        }))
    }
}

/// What a probe of [`UdpEcho::one_as`] asks of the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    /// The whole echo, nothing stamped (`probe --udp`).
    Echo,
    /// The whole echo with the agent's residence.
    StampedEcho,
    /// A short reply with the agent's residence.
    Short,
}

enum Got {
    TxStamp {
        id: u32,
        ns: i128,
    },
    Data {
        len: usize,
        rx_kernel_ns: Option<i128>,
    },
    Other,
}
