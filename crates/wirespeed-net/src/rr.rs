//! The client of the agent's request/response service: TCP_RR (many transactions on one
//! connection) and TCP_CRR (a new connection per transaction, its connect time measured
//! apart), the probes `wirespeed latency` runs beside its load. The protocol is in
//! [`crate::control::rr`].

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::auth::AuthKey;
use crate::control::rr::RrMessage;
use crate::control::{Cookie, Message};
use crate::session::{Control, SessionError};

/// Why a request/response session could not be opened or run.
pub type RrError = crate::service::ServiceError;

/// What the agent counted when the session closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RrTotals {
    /// Transactions answered.
    pub transactions: u64,
    /// Connections accepted.
    pub connections: u64,
    /// Connections refused (wrong cookie, too many).
    pub refused: u64,
}

/// One transaction's times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transaction {
    /// When it started, from the session's start.
    pub at: Duration,
    /// The TCP handshake, for a transaction on a new connection.
    pub connect: Option<Duration>,
    /// From the request's first byte written to the response's last byte read.
    pub round_trip: Duration,
}

/// A live request/response session.
pub struct RrSession {
    ctl: Control,
    agent: SocketAddr,
    cookie: Cookie,
    request: Vec<u8>,
    response_bytes: usize,
    timeout: Duration,
    started: Instant,
    kept: Option<TcpStream>,
    /// The TOS byte / traffic class of the transactions' connections, from their SYN on.
    tos: Option<u8>,
    /// Acknowledge each response at once instead of delaying the ACK.
    ack_at_once: bool,
}

impl std::fmt::Debug for RrSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RrSession")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl RrSession {
    /// Opens a control session to the agent at `agent` and asks for a service answering
    /// `request_bytes` with `response_bytes`, for `seconds`; `timeout` bounds every wait.
    pub fn open(
        agent: SocketAddr,
        auth: Option<&AuthKey>,
        request_bytes: u32,
        response_bytes: u32,
        seconds: f64,
        timeout: Duration,
    ) -> Result<RrSession, RrError> {
        if !crate::control::rr::open_is_valid(request_bytes, response_bytes, seconds) {
            return Err(RrError::Invalid(format!(
                "request/response of {request_bytes} and {response_bytes} bytes for {seconds} s: sizes run from 1 to {} bytes and the duration must be positive",
                crate::control::rr::MAX_RR_BYTES
            )));
        }
        let mut ctl = crate::service::open(agent, auth, timeout)?;
        ctl.send(&Message::Rr(RrMessage::Open {
            request_bytes,
            response_bytes,
            seconds,
        }))
        .map_err(SessionError::Io)?;
        let (agent_port, cookie) = match ctl.recv(timeout, "waiting for the agent's service")? {
            Message::Rr(RrMessage::Ready { agent_port, cookie }) => (agent_port, cookie),
            Message::Refused { reason } => return Err(RrError::Refused(reason)),
            Message::Error { message } => return Err(RrError::Refused(message)),
            other => return Err(RrError::Unexpected(other.kind())),
        };
        // The cookie travels in front of the first request, so a new connection costs its
        // handshake and one round trip, as netperf's TCP_CRR.
        let mut request = cookie.0.to_vec();
        request.resize(16 + request_bytes as usize, 0);
        Ok(RrSession {
            ctl,
            agent: crate::address::with_port(agent, agent_port),
            cookie,
            request,
            response_bytes: response_bytes as usize,
            timeout,
            started: Instant::now(),
            kept: None,
            tos: None,
            ack_at_once: false,
        })
    }

    fn exchange(&self, stream: &mut TcpStream, with_cookie: bool) -> io::Result<Duration> {
        let request = if with_cookie {
            &self.request[..]
        } else {
            &self.request[16..]
        };
        let t0 = Instant::now();
        stream.write_all(request)?;
        let mut left = self.response_bytes;
        let mut buf = [0u8; 4096];
        while left > 0 {
            let n = stream.read(&mut buf[..left.min(4096)])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the agent closed the connection mid-response",
                ));
            }
            left -= n;
        }
        let round_trip = t0.elapsed();
        if self.ack_at_once {
            // Sends the pending ACK now (TCP_QUICKACK on a socket with an ACK to send).
            let _ = socket2::SockRef::from(&*stream).set_tcp_quickack(true);
        }
        Ok(round_trip)
    }

    /// Acknowledges each response at once (`TCP_QUICKACK` after reading it) instead of
    /// leaving the ACK to the delayed-ACK timer or the next request. For probes sent every few
    /// tens of milliseconds, where that timer (40 ms at least on Linux) races the next probe,
    /// this makes what a transaction puts on the wire the same every time: request, response,
    /// ACK. Back-to-back tests (TCP_RR) leave it off, as netperf does.
    pub fn set_ack_at_once(&mut self, on: bool) {
        self.ack_at_once = on;
    }

    /// Marks every connection opened from now on (`latency -S`), its handshake included.
    pub fn set_tos(&mut self, tos: u8) {
        self.tos = Some(tos);
    }

    fn connect(&self) -> io::Result<(TcpStream, Duration)> {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(self.agent),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )?;
        if let Some(tos) = self.tos {
            crate::sockopt::set_tos(&socket, tos)?;
        }
        let t0 = Instant::now();
        socket.connect_timeout(&self.agent.into(), self.timeout)?;
        let took = t0.elapsed();
        let stream = TcpStream::from(socket);
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        Ok((stream, took))
    }

    /// One transaction on the session's kept connection (TCP_RR), opened on first use.
    pub fn transaction(&mut self) -> io::Result<Transaction> {
        let at = self.started.elapsed();
        let first = self.kept.is_none();
        if first {
            self.kept = Some(self.connect()?.0);
        }
        let mut stream = self.kept.take().expect("kept connection");
        match self.exchange(&mut stream, first) {
            Ok(round_trip) => {
                self.kept = Some(stream);
                Ok(Transaction {
                    at,
                    connect: None,
                    round_trip,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// One transaction on a new connection (TCP_CRR): its connect time and round trip.
    pub fn transaction_on_new_connection(&mut self) -> io::Result<Transaction> {
        let at = self.started.elapsed();
        let (mut stream, connect) = self.connect()?;
        let round_trip = self.exchange(&mut stream, true)?;
        Ok(Transaction {
            at,
            connect: Some(connect),
            round_trip,
        })
    }

    /// The agent's service address (for tests that knock without the cookie).
    pub fn service_addr(&self) -> SocketAddr {
        self.agent
    }

    /// The session's cookie.
    pub fn cookie(&self) -> Cookie {
        self.cookie
    }

    /// Ends the session and returns what the agent counted.
    pub fn close(mut self) -> Result<RrTotals, RrError> {
        drop(self.kept.take());
        self.ctl
            .send(&Message::Rr(RrMessage::Close))
            .map_err(SessionError::Io)?;
        match self
            .ctl
            .recv(self.timeout, "waiting for the agent's totals")?
        {
            Message::Rr(RrMessage::Closed {
                transactions,
                connections,
                refused,
            }) => Ok(RrTotals {
                transactions,
                connections,
                refused,
            }),
            Message::Error { message } => Err(RrError::Refused(message)),
            other => Err(RrError::Unexpected(other.kind())),
        }
    }
}
